# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for the MLNX-OS embedded subnet manager (module_utils/mlnxos_sm.py)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.mlnxos_partitions import switch_errors
from ansible_collections.rdma.fabric.plugins.module_utils.mlnxos_sm import (
    commands,
    node_name_ok,
    parse_running,
    release_supported,
    wanted_lines,
)

DOCUMENTATION = r"""
---
name: mlnxos_sm_commands
short_description: MLNX-OS CLI commands that bring a switch's subnet manager to what is wanted
version_added: 0.3.0
author: rdma-fabric contributors
description:
  - Compares the wanted SM state of an MLNX-OS switch (enabled, priority) with its
    C(show running-config) and returns the config-mode commands still needed
    (C(ib smnode NODE enable), C(ib smnode NODE sm-priority N), C(no ib smnode NODE enable),
    from NVIDIA's MLNX-OS User Manual, Subnet Manager chapter), then the C(ib partition)
    commands of the partitions (module_utils/mlnxos_partitions.py names their documents).
    Also in this file - C(mlnxos_sm_lines) (the wanted running-config lines),
    C(mlnxos_sm_running) (the parsed state), C(mlnxos_partition_errors) (what a switch SM
    cannot take of the partitions), C(mlnxos_release_supported), C(mlnxos_node_name_ok) and
    C(mlnxos_cluster_commands) (running-config, list of members as dicts node, enabled,
    priority, partitions - the commands of every SM node of an HA cluster, sent once to
    its virtual IP; the partitions once, with the first member whose SM runs).
positional: _input, node, enabled, priority, partitions
options:
  _input:
    description: The output of C(show running-config).
    type: str
    required: true
  node:
    description: The SM node name (the switch's hostname).
    type: str
    required: true
  enabled:
    description: Whether the SM runs on this switch.
    type: bool
    required: true
  priority:
    description: SM priority 0-15.
    type: int
    required: true
  partitions:
    description:
      - Partition records (the C(rdma.fabric.opensm_partitions) filter's output, the same
        ib_subnet_manager writes partitions.conf from). Omitted - partitions untouched.
    type: list
    elements: dict
    required: false
"""

EXAMPLES = r"""
- name: Commands still needed
  ansible.builtin.debug:
    msg: "{{ running.stdout[0] | rdma.fabric.mlnxos_sm_commands('ib-spine-1', true, 14) }}"
"""

RETURN = r"""
_value:
  description: Config-mode commands; empty when the running configuration already matches.
  type: list
"""


def _commands(running_text, node, enabled, priority, partitions=None):
    return commands(node, enabled, priority, running_text, partitions)


def _cluster_commands(running_text, members):
    out, partitions_sent = [], False
    for member in members:
        enabled = bool(member["enabled"])
        partitions = member.get("partitions") if enabled and not partitions_sent else None
        partitions_sent = partitions_sent or enabled
        out += commands(member["node"], enabled, member["priority"], running_text, partitions)
    return out


def _running(running_text, node):
    return parse_running(running_text, node)


class FilterModule:
    def filters(self):
        return {
            "mlnxos_sm_commands": _commands,
            "mlnxos_cluster_commands": _cluster_commands,
            "mlnxos_sm_lines": wanted_lines,
            "mlnxos_sm_running": _running,
            "mlnxos_partition_errors": switch_errors,
            "mlnxos_release_supported": release_supported,
            "mlnxos_node_name_ok": node_name_ok,
        }
