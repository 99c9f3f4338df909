# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The leaf side of L3 rails (each host's /31 on a rail ends at a leaf port, which takes the
even address and the rail's MTU): the planner and the three renderers."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.leaf_ports import (
    for_switch,
    leaf_plan,
    switch_ports,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rails import fabric_rails
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import switch_policy
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    json_patch,
    merge_diff,
    render,
)

RAILS = [
    {
        "name": "rail0",
        "device": "mlx5_0",
        "subnet": "10.0.0.0/24",
        "prefix_length": 31,
        "gateway": "peer",
        "leaf": "leaf0",
    },
    {
        "name": "rail1",
        "device": "mlx5_1",
        "subnet": "10.0.1.0/24",
        "prefix_length": 31,
        "mtu": 4200,
        "leaf": "leaf1",
    },
]
PORTS = {"leaf0": {1: "swp1", 2: "swp2"}, "leaf1": {1: "swp11", 2: "swp12"}}
HOSTS = {"gpu1": {"rdma_rail_host_index": 1}, "gpu2": {"rdma_rail_host_index": 2}}


def _port(address, mtu, host, rail):
    return {"address": address, "address6": None, "mtu": mtu, "host": host, "rail": rail}


def test_each_leaf_port_gets_the_even_end_of_its_hosts_31_and_the_rail_mtu():
    plan, errors, notes = leaf_plan(RAILS, HOSTS, PORTS, policy_mtu=9000)
    assert errors == [] and notes == []
    assert plan == {
        "leaf0": {
            "swp1": _port("10.0.0.2/31", 9000, "gpu1", "rail0"),
            "swp2": _port("10.0.0.4/31", 9000, "gpu2", "rail0"),
        },
        "leaf1": {
            "swp11": _port("10.0.1.2/31", 4200, "gpu1", "rail1"),
            "swp12": _port("10.0.1.4/31", 4200, "gpu2", "rail1"),
        },
    }


def test_the_leaf_address_is_the_hosts_gateway_from_the_same_computation():
    plan, _e, _n = leaf_plan(RAILS, HOSTS, PORTS)
    hosts, _ = fabric_rails(RAILS, HOSTS)
    gateway = next(e for e in hosts["gpu2"] if e["name"] == "rail0")["gateway"]
    assert plan["leaf0"]["swp2"]["address"] == f"{gateway}/31"


def test_explicit_host_address_and_30_blocks():
    rails = [dict(RAILS[0], prefix_length=30, gateway=None)]
    hosts = {"gpu1": {"rdma_rail_host_index": 1, "rdma_rail_addresses": {"rail0": "10.0.0.10"}}}
    plan, errors, _ = leaf_plan(rails, hosts, {"leaf0": {1: "swp1"}})
    assert errors == []
    assert plan["leaf0"]["swp1"]["address"] == "10.0.0.9/30"


def test_only_managed_leaves_are_planned():
    plan, errors, _ = leaf_plan(RAILS, HOSTS, PORTS, switches=["leaf1.example.net"])
    assert errors == [] and list(plan) == ["leaf1"]


def test_a_shared_l2_rail_gives_no_leaf_port():
    rails = [dict(RAILS[0], prefix_length=None, gateway=None)]
    assert leaf_plan(rails, HOSTS, {"leaf0": {1: "swp1", 2: "swp2"}}) == ({}, [], [])


def test_a_managed_l3_leaf_without_a_port_map_is_refused_naming_the_variable():
    plan, errors, _ = leaf_plan(
        RAILS, HOSTS, {"leaf0": PORTS["leaf0"]}, switches=["leaf0", "leaf1"]
    )
    assert plan is None
    assert len(errors) == 1 and errors[0].startswith("rdma_cabling_ports.leaf1 is missing")
    assert "roce_switch_qos_l3_ports" in errors[0]
    # leaf1 unmanaged: nothing to configure there, nothing refused
    plan, errors, _ = leaf_plan(RAILS, HOSTS, {"leaf0": PORTS["leaf0"]}, switches=["leaf0"])
    assert errors == [] and list(plan) == ["leaf0"]


def test_a_port_twice_on_one_leaf_is_refused():
    _p, errors, _ = leaf_plan(
        RAILS, HOSTS, {"leaf0": {1: "swp1", 2: "SWP1"}, "leaf1": PORTS["leaf1"]}
    )
    assert any("rdma_cabling_ports.leaf0: port SWP1 is mapped twice" in e for e in errors)
    # two rails on one leaf: host index 1 is swp1 for both
    rails = [RAILS[0], dict(RAILS[1], leaf="leaf0")]
    _p, errors, _ = leaf_plan(rails, HOSTS, {"leaf0": PORTS["leaf0"]})
    assert errors and "rdma_cabling_ports.leaf0: port swp1 is given twice" in errors[0]
    assert "gpu1 on rail rail0" in errors[0] and "rail1" in errors[0]


def test_a_host_index_missing_from_the_map_is_refused_naming_the_host():
    _p, errors, _ = leaf_plan(RAILS, HOSTS, {"leaf0": {1: "swp1"}, "leaf1": PORTS["leaf1"]})
    assert errors == [
        "gpu2: rdma_rail_host_index 2 is missing from rdma_cabling_ports.leaf0 (rail rail0)"
    ]


def test_leaf_group_picks_the_leaf_by_the_hosts_index():
    rails = [dict(RAILS[0], leaf=None, leaf_group="rail0_leaves")]
    groups = {"rail0_leaves": ["leaf0a", "leaf0b"]}
    plan, errors, _ = leaf_plan(
        rails, HOSTS, {"leaf0a": {1: "swp1"}, "leaf0b": {2: "swp1"}}, groups
    )
    assert errors == []
    assert plan["leaf0a"]["swp1"]["host"] == "gpu1" and plan["leaf0b"]["swp1"]["host"] == "gpu2"


def test_ipv6_on_an_l3_rail_gives_each_port_the_first_end_of_its_hosts_127():
    rails = [dict(RAILS[0], subnet6="2001:db8:0:10::/64")]
    plan, errors, notes = leaf_plan(rails, HOSTS, {"leaf0": PORTS["leaf0"]})
    assert errors == [] and notes == []
    assert plan["leaf0"]["swp1"]["address6"] == "2001:db8:0:10::2/127"
    assert plan["leaf0"]["swp2"]["address6"] == "2001:db8:0:10::4/127"
    hosts, _ = fabric_rails(rails, HOSTS)
    gpu2 = hosts["gpu2"][0]
    assert (gpu2["address6"], gpu2["gateway6"]) == ("2001:db8:0:10::5", "2001:db8:0:10::4")
    # without subnet6 the port has no IPv6 address
    plan, _e, _n = leaf_plan(RAILS, HOSTS, PORTS)
    assert plan["leaf0"]["swp1"]["address6"] is None


def test_for_switch_reads_hostvars_and_raises_every_error():
    got = for_switch(RAILS, HOSTS, list(HOSTS), "leaf1", ["leaf0", "leaf1"], PORTS)
    assert sorted(got["ports"]) == ["swp11", "swp12"] and got["notes"] == []
    assert switch_ports({"leaf0": {"swp1": {}}}, "LEAF0.lab") == {"swp1": {}}
    with pytest.raises(ValueError, match="rdma_cabling_ports.leaf1 is missing"):
        for_switch(
            RAILS, HOSTS, list(HOSTS), "leaf0", ["leaf0", "leaf1"], {"leaf0": PORTS["leaf0"]}
        )


# ---------------------------------------------------------------------- renderers

L3 = {"Ethernet0": {"address": "10.0.0.2/31", "mtu": 4200, "host": "gpu1", "rail": "rail0"}}
V6 = "2001:db8:0:10::2/127"
DUAL = {"Ethernet0": dict(L3["Ethernet0"], address6=V6)}


def _policy(switch_os):
    filled, errors = switch_policy({}, switch_os)
    assert errors == []
    return filled


def test_nvue_renders_the_port_address_and_mtu():
    l3 = {"swp1": dict(L3["Ethernet0"])}
    tree = render(_policy("cumulus"), "cumulus", ["swp1", "swp2"], 5, {"l3_ports": l3})
    assert tree["interface"]["swp1"]["ip"] == {"address": {"10.0.0.2/31": {}}}
    assert tree["interface"]["swp1"]["link"]["mtu"] == 4200
    assert (
        tree["interface"]["swp2"]["link"]["mtu"] == 9000 and "ip" not in tree["interface"]["swp2"]
    )
    # applied twice: nothing left to PATCH (the address is a set member, present)
    assert merge_diff(tree, tree) == {}


def test_sonic_renders_the_interface_table_and_port_mtu():
    tables = render(_policy("sonic"), "sonic", ["Ethernet0"], 5, {"l3_ports": L3})
    assert tables["INTERFACE"] == {"Ethernet0": {}, "Ethernet0|10.0.0.2/31": {}}
    assert tables["PORT"]["Ethernet0"] == {"mtu": "4200"}
    # second run: CONFIG_DB already holds the rows (fieldless keys), nothing to patch
    ops = json_patch(
        {"INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.2/31": {}}},
        {"INTERFACE": tables["INTERFACE"]},
    )
    assert ops == []
    ops = json_patch({"INTERFACE": {"Ethernet4": {}}}, {"INTERFACE": tables["INTERFACE"]})
    assert [o["path"] for o in ops] == ["/INTERFACE/Ethernet0", "/INTERFACE/Ethernet0|10.0.0.2~131"]


def test_eos_renders_a_routed_port_in_the_ports_own_block():
    text = render(
        _policy("eos"),
        "eos",
        ["Ethernet1", "Ethernet2"],
        5,
        {"l3_ports": {"Ethernet1": L3["Ethernet0"], "Ethernet9": L3["Ethernet0"]}},
    )
    block = text.split("interface Ethernet1\n")[1].split("!")[0]
    assert block.splitlines() == [
        "   no switchport",
        "   ip address 10.0.0.2/31",
        "   mtu 4200",
        "   service-profile RDMA_FABRIC_ROCE",
    ]
    assert text.count("interface Ethernet1\n") == 1
    assert "interface Ethernet9\n   no switchport\n   ip address 10.0.0.2/31\n   mtu 4200\n" in text
    assert "ip address" not in text.split("interface Ethernet2\n")[1].split("!")[0]


def test_eos_refuses_an_l3_port_listed_as_switchport():
    with pytest.raises(ValueError, match="roce_switch_qos_eos_switchports lists Ethernet1"):
        render(
            _policy("eos"),
            "eos",
            ["Ethernet1"],
            5,
            {"l3_ports": {"Ethernet1": L3["Ethernet0"]}, "eos_switchports": ["Ethernet1"]},
        )


def test_nvue_renders_both_prefixes_of_a_dual_stack_port():
    tree = render(
        _policy("cumulus"), "cumulus", ["swp1"], 5, {"l3_ports": {"swp1": DUAL["Ethernet0"]}}
    )
    assert tree["interface"]["swp1"]["ip"] == {"address": {"10.0.0.2/31": {}, V6: {}}}


def test_sonic_renders_an_interface_row_per_prefix():
    tables = render(_policy("sonic"), "sonic", ["Ethernet0"], 5, {"l3_ports": DUAL})
    assert tables["INTERFACE"] == {
        "Ethernet0": {},
        "Ethernet0|10.0.0.2/31": {},
        f"Ethernet0|{V6}": {},
    }
    ops = json_patch({"INTERFACE": {"Ethernet0": {}}}, {"INTERFACE": tables["INTERFACE"]})
    assert f"/INTERFACE/Ethernet0|{V6.replace('/', '~1')}" in [o["path"] for o in ops]


def test_eos_renders_the_ipv6_address_in_the_ports_block():
    text = render(
        _policy("eos"), "eos", ["Ethernet1"], 5, {"l3_ports": {"Ethernet1": DUAL["Ethernet0"]}}
    )
    block = text.split("interface Ethernet1\n")[1].split("!")[0]
    assert block.splitlines()[:4] == [
        "   no switchport",
        "   ip address 10.0.0.2/31",
        f"   ipv6 address {V6}",
        "   mtu 4200",
    ]
