# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of rdma_verify's cabling check (module_utils/cabling.py holds the logic).

cabling_plan(rails, hostvars, hosts, port_maps, groups, mode) -> {host: {rail: leaf, port}}
cabling_judge(health, plan, host, lldp, ib_text, node_guids, switch_reads, index) -> health
    with the check
cabling_index(switch_reads, plan) -> {host key: {planned, switch}}: the leaves' tables by
    host, once for the play (each host's judgement then costs its own entries)
switch_lldp(reading, switch_os, switch) -> {port: [{host, port}]} of one leaf
cabling_leaves(rails, groups, mode) -> the leaves the rails name (none when mode is off)
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import cabling


def cabling_plan(rails, hostvars, hosts, port_maps=None, groups=None, mode="auto"):
    try:
        return cabling.plan_for_play(rails, hostvars, hosts, port_maps, groups, mode)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


def cabling_judge(
    health, plan, host, lldp=None, ib_text=None, node_guids=None, switch_reads=None, index=None
):
    try:
        return cabling.judge_into_health(
            health, plan, host, lldp, ib_text, node_guids, switch_reads, index
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"cabling_judge: {exc}") from exc


def cabling_index(switch_reads, plan=None):
    try:
        return cabling.cabling_index(switch_reads, plan)
    except (AttributeError, TypeError) as exc:
        raise AnsibleFilterError(f"cabling_index: {exc}") from exc


def switch_lldp(reading, switch_os, switch=None):
    try:
        return cabling.parse_switch_lldp(switch_os, reading, switch)
    except (AttributeError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"switch_lldp ({switch}): {exc}") from exc


def cabling_leaves(rails, groups=None, mode="auto"):
    return cabling.rail_leaves(rails, groups, mode)


class FilterModule:
    def filters(self):
        return {
            "cabling_plan": cabling_plan,
            "cabling_judge": cabling_judge,
            "cabling_index": cabling_index,
            "switch_lldp": switch_lldp,
            "cabling_leaves": cabling_leaves,
        }
