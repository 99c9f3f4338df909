# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
author: rdma-fabric contributors (@rdma-fabric)
name: mlnxos
short_description: network_cli for MLNX-OS on NVIDIA Quantum InfiniBand switches
description:
  - Sends CLI commands to MLNX-OS over SSH (ansible.netcommon.network_cli). Reads the
    configuration with C(show running-config) and the release with C(show version);
    edits it in C(configure terminal) mode, one command a line, then C(exit). Commands
    as NVIDIA's MLNX-OS User Manual documents them.
version_added: 0.3.0
"""

import json
import re

from ansible.module_utils.common.text.converters import to_text
from ansible_collections.ansible.netcommon.plugins.module_utils.network.common.utils import to_list
from ansible_collections.ansible.netcommon.plugins.plugin_utils.cliconf_base import CliconfBase

_RELEASE_RE = re.compile(r"^Product release:\s*(\S+)", re.MULTILINE)
_MODEL_RE = re.compile(r"^Chassis system type:\s*(\S+)", re.MULTILINE)


class Cliconf(CliconfBase):
    def get_device_info(self):
        reply = to_text(self.get("show version"), errors="surrogate_or_strict")
        info = {"network_os": "mlnxos"}
        for key, regex in (("network_os_version", _RELEASE_RE), ("network_os_model", _MODEL_RE)):
            match = regex.search(reply)
            if match:
                info[key] = match.group(1)
        return info

    def get_config(self, source="running", flags=None, format=None):
        if source != "running":
            raise ValueError(f"MLNX-OS: only the running configuration is read, not {source}")
        return self.send_command("show running-config")

    def edit_config(self, candidate=None, commit=True, replace=None, comment=None, **kwargs):
        """Send the candidate lines in configuration mode; commit=False (check mode) sends
        nothing. MLNX-OS applies each line as it is entered (no commit): the lines sent
        are the change, returned as `diff` (what cli_config reports as changed)."""
        operations = self.get_device_operations()
        self.check_edit_config_capability(operations, candidate, commit, replace, comment)
        lines = [
            (line["command"] if isinstance(line, dict) else line).strip()
            for line in to_list(candidate)
        ]
        lines = [line for line in lines if line]
        requests, responses = [], []
        if commit and lines:
            self.send_command("configure terminal")
            try:
                for command in lines:
                    responses.append(self.send_command(command))
                    requests.append(command)
            finally:
                self.send_command("exit")
        result = {"request": requests, "response": responses}
        if lines:
            result["diff"] = "\n".join(lines)
        return result

    def get(self, command=None, prompt=None, answer=None, sendonly=False, newline=True, **kwargs):
        if not command:
            raise ValueError("must provide value of command to execute")
        return self.send_command(
            command=command, prompt=prompt, answer=answer, sendonly=sendonly, newline=newline
        )

    def get_device_operations(self):
        return {
            "supports_diff_replace": False,
            "supports_commit": False,
            "supports_rollback": False,
            "supports_defaults": False,
            # The role compares with show running-config and sends only what is missing;
            # cli_config then hands the lines to edit_config, which reports them as diff.
            "supports_onbox_diff": True,
            "supports_commit_comment": False,
            "supports_multiline_delimiter": False,
            "supports_diff_match": False,
            "supports_diff_ignore_lines": False,
            "supports_generate_diff": False,
            "supports_replace": False,
        }

    def get_option_values(self):
        return {"format": ["text"], "diff_match": [], "diff_replace": [], "output": []}

    def get_capabilities(self):
        result = super().get_capabilities()
        result["device_operations"] = self.get_device_operations()
        result.update(self.get_option_values())
        return json.dumps(result)

    def set_cli_prompt_context(self):
        if self._connection.connected:
            self._update_cli_prompt_context(config_context="(config", exit_command="exit")
