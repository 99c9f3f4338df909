# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.ibstat import parse_ibstat

DOCUMENTATION = r"""
---
name: ibstat
short_description: Parse C(ibstat) output into port records
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - One record per port with ca, ca_type, node_guid, port, state, physical_state, rate, lid,
    lmc, sm_lid, port_guid and link_layer (C(InfiniBand) or C(Ethernet); ibsim's C(IB) is reported
    as C(InfiniBand)).
positional: _input
options:
  _input:
    description: The stdout of C(ibstat).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: InfiniBand ports of this host
  ansible.builtin.set_fact:
    ib_ports: >-
      {{ ibstat.stdout | rdma.fabric.ibstat
         | selectattr('link_layer', 'equalto', 'InfiniBand') }}
"""

RETURN = r"""
_value:
  description: One record per port, in the order ibstat printed them.
  type: list
"""


class FilterModule:
    def filters(self):
        return {"ibstat": parse_ibstat}
