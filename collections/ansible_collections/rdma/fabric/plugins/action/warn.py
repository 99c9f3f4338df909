# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of rdma.fabric.warn: the message as the task's warning.

ansible-core turns a result's ``warnings`` into its own warnings (shown as
``[WARNING]`` by the default callback, kept in the JSON callbacks' results), the
channel a reader and a CI log scan for; nothing is sent to a host.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils.controller_action import (
    ControllerAction,
)


class ActionModule(ControllerAction):
    ARGS = {"msg": {"type": "str", "required": True}}

    def outcome(self, args, task_vars):
        return {"msg": args["msg"], "warnings": [args["msg"]]}
