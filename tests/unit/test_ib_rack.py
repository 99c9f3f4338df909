"""tests/support/ib_rack.py: the rack's inventory and its ibsim net file name the same
HCA ports, and the net file cables every switch port once within its port count."""

from __future__ import annotations

import re
from collections import Counter

from ib_rack import LEAF_PORTS, hca_ports, host_port_guids, ibsim_net, inventory, sm_port


def test_the_inventory_lists_every_hca_port_the_fabric_has():
    net = ibsim_net()
    # ibsim gives a CA's port 1 its node GUID + 1.
    fabric_ports = {f"0x{int(g, 16) + 1:016x}" for g in re.findall(r"caguid=(0x\w+)", net)}
    hosts = inventory({})["all"]["children"]["gpu_hosts"]["hosts"]
    listed = {g for host in hosts.values() for g in host["hca_port_guids"]}
    assert len(listed) == 512
    assert fabric_ports == listed | {sm_port()["port_guid"]}


def test_rails_are_in_order_and_tenants_split_the_hosts():
    guids = host_port_guids(hca_ports())
    assert guids["gpu-002"][3] == "0x0002c90100000231"
    groups = inventory({})["all"]["children"]
    tenants = [set(groups[f"tenant_{t}"]["hosts"]) for t in range(1, 5)]
    assert [len(t) for t in tenants] == [16] * 4
    assert set().union(*tenants) == set(guids)


def test_every_switch_port_is_cabled_once_within_the_switch():
    net = ibsim_net()
    for block in net.split("\n\n"):
        if "\nSwitch\t" not in block:
            continue
        ports = [int(p) for p in re.findall(r"^\[(\d+)\]", block, re.M)]
        assert max(ports) <= LEAF_PORTS and max(Counter(ports).values()) == 1, block[:80]
