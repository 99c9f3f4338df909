#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rdma_devices_info
short_description: Gather the RDMA devices of a host from sysfs
description:
  - Reads C(/sys/class/infiniband) and returns every RDMA device with its ports, port
    state, physical state, rate, link layer (InfiniBand or Ethernet) and the netdev
    behind each port.
  - Reads only; never changes the host. Runs in check mode.
  - A host without RDMA devices returns an empty list, not an error.
  - Also returns the host's bond masters with their members (RoCE LAG, where the RDMA port's
    netdev is the bond, DCB lives on the members).
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.sysfs
  - rdma.fabric.sysfs.read_only
"""

EXAMPLES = r"""
- name: Gather RDMA devices
  rdma.fabric.rdma_devices_info:
  register: rdma

- name: Show the netdev of every RoCE port
  ansible.builtin.debug:
    msg: "{{ rdma.by_link_layer.Ethernet | default([]) | map(attribute='netdev') }}"
"""

RETURN = r"""
devices:
  description: One entry per RDMA device, sorted by name.
  returned: always
  type: list
  elements: dict
  sample:
    - name: mlx5_0
      node_type: CA
      node_guid: "b8ce:f603:00a1:2b3c"
      fw_ver: "28.39.1002"
      hca_type: MT4129
      pci_address: "0000:0c:00.0"
      driver: mlx5_core
      netdevs: [ibp12s0]
      ports:
        - port: 1
          state: ACTIVE
          state_num: 4
          phys_state: LinkUp
          phys_state_num: 5
          rate: "400 Gb/sec (4X NDR)"
          rate_gbps: 400.0
          link_layer: InfiniBand
          lid: "0x12"
          sm_lid: "0x1"
          netdev: ibp12s0
ports:
  description: Every port of every device, flat, each with its C(device) name added.
  returned: always
  type: list
  elements: dict
  sample:
    - {"device": "rxe0", "port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "netdev": "eth1"}
by_link_layer:
  description: Device/port/netdev records grouped by link layer.
  returned: always
  type: dict
  sample: {"Ethernet": [{"device": "rxe0", "port": 1, "netdev": "ens4"}]}
bonds:
  description: Every bond master netdev of the host with its members (empty when none).
  returned: always
  type: dict
  sample: {"bond0": ["enp1s0f0np0", "enp1s0f1np1"]}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    flat_ports,
    netdevs_by_link_layer,
    read_bonds,
    read_devices,
)


def main():
    module = AnsibleModule(
        argument_spec={"sysfs_root": {"type": "path", "default": "/"}},
        supports_check_mode=True,
    )
    devices = read_devices(module.params["sysfs_root"])
    module.exit_json(
        changed=False,
        devices=devices,
        ports=flat_ports(devices),
        by_link_layer=netdevs_by_link_layer(devices),
        bonds=read_bonds(module.params["sysfs_root"]),
    )


if __name__ == "__main__":
    main()
