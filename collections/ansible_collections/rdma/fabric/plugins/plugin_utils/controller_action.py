# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The shape of an action that runs on the controller only: no connection to the host,
no file sent, the same in check mode, its arguments checked against ``ARGS``, nothing
changed. A subclass gives ``ARGS`` and ``outcome(args, task_vars)``, the keys it adds to
the task's result (``failed``, ``msg``, ``warnings``, its returns)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    ARGS: dict = {}

    def outcome(self, args, task_vars):
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=self.ARGS)
        result["changed"] = False
        result.update(self.outcome(args, task_vars))
        return result
