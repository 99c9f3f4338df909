# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of rdma.fabric.warn: the message as the task's warning.

ansible-core turns a result's ``warnings`` into its own warnings (shown as
``[WARNING]`` by the default callback, kept in the JSON callbacks' results), the
channel a reader and a CI log scan for; nothing is sent to a host.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase

ARGS = {"msg": {"type": "str", "required": True}}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGS)
        result.update(changed=False, msg=args["msg"], warnings=[args["msg"]])
        return result
