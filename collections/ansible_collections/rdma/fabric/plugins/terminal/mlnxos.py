# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""network_cli terminal for MLNX-OS (NVIDIA Quantum InfiniBand switches).

Prompts as NVIDIA's MLNX-OS User Manual shows them: "switch [standalone: master] >"
(user), "... #" (enable), "... (config) #" (configuration). Errors start with "% "
(`% Unrecognized command "..."`). Paging is turned off with `no cli session paging
enable`; `enable` (become_method enable) enters enable mode.
"""

from __future__ import annotations

import re

from ansible.errors import AnsibleConnectionFailure
from ansible_collections.ansible.netcommon.plugins.plugin_utils.terminal_base import TerminalBase


class TerminalModule(TerminalBase):
    terminal_stdout_re = [
        re.compile(rb"[\r\n]?[\w.\-]+ \[[^\]\r\n]*\] (?:\([\w\- ]+\) )?[>#] ?$"),
        re.compile(rb"[\r\n]?[\w.\-]+ (?:\([\w\- ]+\) )?[>#] ?$"),
    ]

    # Every MLNX-OS CLI error is a line starting with "%" (Unrecognized command,
    # Incomplete command, Invalid input, Ambiguous command, Error: ...); four of them by
    # name let the others (an ambiguous abbreviation, a refused partition change) pass
    # as success. A "%" elsewhere in a line (a utilisation "5%") is no error.
    terminal_stderr_re = [
        re.compile(rb"(?m)^[ \t]*%"),
    ]

    terminal_config_prompt = re.compile(r"\(config[^\)]*\) ?#")

    def on_open_shell(self):
        try:
            self._exec_cli_command(b"no cli session paging enable")
        except AnsibleConnectionFailure as exc:
            raise AnsibleConnectionFailure("unable to turn off MLNX-OS paging") from exc

    def on_become(self, passwd=None):
        prompt = self._get_prompt()
        if prompt and prompt.strip().endswith(b"#"):
            return
        try:
            self._exec_cli_command(b"enable")
        except AnsibleConnectionFailure as exc:
            raise AnsibleConnectionFailure("unable to enter MLNX-OS enable mode") from exc
