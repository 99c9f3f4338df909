# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Wait for rdma_verify's async schedule as async_status would, printing one line per
finished round on the reporting host (see modules/verify_wait.py)."""

from __future__ import annotations

import json
import shlex
import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible_collections.rdma.fabric.plugins.module_utils.verify_progress import progress_line

display = Display()

SPEC = {
    "jid": {"type": "str", "required": True},
    "timeout": {"type": "int", "required": True},
    "delay": {"type": "int", "default": 2},
    "report": {"type": "bool", "default": False},
    "progress_file": {"type": "path"},
    "interval": {"type": "int", "default": 10},
    "rounds_total": {"type": "int", "default": 0},
    "phase": {"type": "str", "default": "main"},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def _status(self, jid, async_dir, task_vars):
        status = self._execute_module(
            module_name="ansible.legacy.async_status",
            module_args={"jid": jid, "mode": "status", "_async_dir": async_dir},
            task_vars=task_vars,
        )
        for key in ("started", "finished"):
            status[key] = bool(status.get(key))
        return status

    def _progress(self, path):
        """The progress file's state, or None (not written yet, or unreadable)."""
        read = self._low_level_execute_command(f"cat {shlex.quote(path)}", sudoable=True)
        if read.get("rc") != 0:
            return None
        try:
            state = json.loads(read.get("stdout") or "")
        except ValueError:
            return None
        return state if isinstance(state, dict) and "last_round" in state else None

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _valid, args = self.validate_argument_spec(argument_spec=SPEC)
        async_dir = self._remote_expand_user(
            self.get_shell_option("async_dir", default="~/.ansible_async")
        )
        result.update(self._wait(args, async_dir, task_vars))
        return result

    def _wait(self, args, async_dir, task_vars):
        """Poll the async job until it ends; on the reporting host, show each round the
        progress file records, including the rounds that ended between the last read and
        the job's end (a short schedule may end before the first read sees a round)."""
        host = task_vars.get("inventory_hostname", "")
        report = args["report"] and args["progress_file"]
        shown, read_at = 0, 0.0
        deadline = time.monotonic() + args["timeout"]
        while True:
            status = self._status(args["jid"], async_dir, task_vars)
            ended = status["finished"] or status.get("failed")
            now = time.monotonic()
            if report and (ended or now - read_at >= args["interval"]):
                read_at = now
                state = self._progress(args["progress_file"])
                if state and int(state.get("rounds_done") or 0) > shown:
                    shown = int(state["rounds_done"])
                    display.display(progress_line(args["phase"], host, state, args["rounds_total"]))
            if ended:
                return status
            if now > deadline:
                raise AnsibleActionFail(
                    f"verify_wait: the {args['phase']} schedule did not finish within "
                    f"{args['timeout']} s (async job {args['jid']})"
                )
            time.sleep(max(1, args["delay"]))
