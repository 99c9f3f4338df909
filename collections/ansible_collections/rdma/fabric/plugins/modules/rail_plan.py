#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rail_plan
short_description: Check the fabric's rail plan (rdma_rails) for every host at once
description:
  - Runs on the controller (an action plugin; nothing runs on a host). Fills the
    defaults of C(rdma_rails), reads each listed host's C(rdma_rail_host_index),
    C(rdma_rail_addresses) and C(rdma_rail_devices) from hostvars and returns every
    host's addresses on every rail.
  - Fails, before anything changes, with every error, each naming the variable and
    the host(s) - for example the same address on two hosts (both named), an address
    outside its rail's subnet, a host without C(rdma_rail_host_index) or explicit
    addresses, or a P_Key partition that C(ib_subnet_manager_partitions) does not define.
  - Also refused - two rails (or P_Key children) whose subnets overlap, the same IPv6
    subnet on two rails, a network or broadcast address as a host's address or a
    gateway, a fixed gateway on a /31 or /30 rail (each host has its own block - use
    C(peer) as the gateway), a P_Key child MTU outside its parent's IPoIB mode range, and a
    rail subnet that overlaps a host's management network (the network of its
    default route, from the gathered facts of the hosts that have them; the hosts named).
  - Also refused - a host address equal to the rail's gateway (or C(gateway6)), a
    C(gateway6) outside C(subnet6) that is not link-local (fe80::/10), on a rail without
    subnet6 or on an L3 rail (there the leaf's end of each /127 is the gateway -
    C(gateway=peer)), a C(gateway6), C(subnet6) or explicit IPv6 address with a zone ID
    (C(%ens1)), a /127 end or C(gateway6) with a reserved interface identifier (all
    zeros, RFC 2526's C(fdff:ffff:ffff:ff80) to C(fdff:ffff:ffff:ffff), and on a /127
    RFC 6164 5.1 (b)'s C(ffff:ffff:ffff:ff7f) to C(ffff:ffff:ffff:ffff)), an explicit /30 address
    that is its block's network, leaf or broadcast address, an IPv6 address outside
    C(subnet6) (or not an IPv6 address), subnet6 + index 0 (the subnet-router anycast
    address), loopback, link-local, multicast and 0.0.0.0/8 subnets.
  - Meant for C(run_once), so the fabric-wide check costs one pass over the hosts.
version_added: 0.3.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  rails:
    description: The fabric-wide rail plan, C(rdma_rails) (see module_utils/rails.py).
    type: list
    elements: dict
    required: true
  policy_mtu:
    description:
      - C(rdma_roce_policy.mtu), the default MTU of Ethernet (RoCE) rails.
      - An integer 1280-9216 (the RoCE policy's range); anything else fails naming
        C(rdma_roce_policy.mtu) and the hosts, whether or not a rail takes it.
    type: raw
  hosts:
    description: The hosts whose addresses are planned and checked against each other.
    type: list
    elements: str
    required: true
  partitions:
    description:
      - C(ib_subnet_manager_partitions) (each with C(name) and C(pkey)); the rails'
        C(pkeys) name these partitions.
    type: list
    elements: dict
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
"""

EXAMPLES = r"""
- name: Check the rail plan of the whole fabric once
  rdma.fabric.rail_plan:
    rails: "{{ rdma_rails }}"
    policy_mtu: "{{ rdma_roce_policy.mtu | default(omit) }}"
    hosts: "{{ groups['rdma_hosts'] }}"
    partitions: "{{ ib_subnet_manager_partitions | default([]) }}"
  run_once: true
  register: rail_plan

- name: This host's rails
  ansible.builtin.debug:
    msg: "{{ rail_plan.plan[inventory_hostname] }}"
"""

RETURN = r"""
plan:
  description:
    - Per host, its rails in rail order, each with C(name), C(selector), C(port),
      C(link_layer), C(address), C(prefix_length), C(gateway), C(address6),
      C(prefix_length6) (127 on an L3 rail, else subnet6's), C(gateway6) (the leaf's end
      of the /127 with C(gateway=peer), a shared rail's C(gateway6)), C(mtu), C(table),
      C(ipoib_mode), C(pkeys) (with C(pkey), C(netdev_suffix), C(address)).
  returned: success
  type: dict
  sample: {"gpu01": [{"name": "rail0", "address": "10.0.0.1", "mtu": 9000, "table": 100}]}
hosts:
  description: How many hosts were planned.
  returned: success
  type: int
rails:
  description: How many rails the plan has.
  returned: success
  type: int
errors:
  description: Every error, one a line, each naming the variable and host(s).
  returned: failure
  type: list
  elements: str
"""
