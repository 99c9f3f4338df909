# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    PORT_PATTERNS,
    switch_ports,
)

DOCUMENTATION = r"""
---
name: roce_switch_ports
short_description: Every front-panel port in a switch's own interface listing
version_added: 0.3.0
author: rdma-fabric contributors
description:
  - What C(roce_switch_qos_ports=all) resolves to when applied - the names in the listing
    that are front-panel ports of the switch OS (C(swpN), C(swpNsM) on Cumulus; C(EthernetN)
    on SONiC; C(EthernetN), C(EthernetN/M) on EOS), uplinks included, in port order.
  - Management, loopback, bond/port-channel and VLAN interfaces are left out.
positional: _input, switch_os
options:
  _input:
    description:
      - The switch's listing keyed by interface name (a list of names also works) - NVUE's
        C(GET /nvue_v1/interface), CONFIG_DB's PORT table, or EOS facts'
        C(ansible_net_interfaces).
    type: raw
    required: true
  switch_os:
    description: C(rdma_switch_os).
    type: str
    required: true
    choices: [cumulus, sonic, eos]
"""

EXAMPLES = r"""
- name: Every port of a SONiC switch (Ethernet0, Ethernet4)
  ansible.builtin.debug:
    msg: "{{ port_table | rdma.fabric.roce_switch_ports('sonic') }}"
  vars:
    port_table: {Ethernet0: {}, Ethernet4: {}, PortChannel1: {}}
"""

RETURN = r"""
_value:
  description: The port names, in port order (Ethernet2 before Ethernet10).
  type: list
  elements: str
"""


def roce_switch_ports(listing, switch_os):
    if switch_os not in PORT_PATTERNS:
        raise AnsibleFilterError(
            f"rdma_switch_os must be one of {', '.join(PORT_PATTERNS)}; got {switch_os!r}"
        )
    return switch_ports(switch_os, listing or {})


class FilterModule:
    def filters(self):
        return {"roce_switch_ports": roce_switch_ports}
