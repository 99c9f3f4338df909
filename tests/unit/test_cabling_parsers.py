"""The cabling check's parsers, one per tool (module_utils/cabling.py), and the
rail_neighbors_info module.

Fixtures are written for these tests in the shape of the tools' published outputs:
- lldpcli "json", "json0" and "keyvalue": lldpd's tests/integration/test_lldpcli.py (the
  chassis keyed by SysName, the port id with its type; "json" writes one interface as an
  object and several as a list of one-key objects; "json0" wraps every value in a list).
- ibnetdiscover with spaces for tabs (how a copied capture often looks; the real tools'
  tab form is exercised on ibsim in test_cabling_ibsim.py).
- NVUE /interface: each swp's lldp.neighbor (Cumulus Linux 5 NVUE API reference);
  SONiC APPL_DB LLDP_ENTRY_TABLE fields (sonic-buildimage docker-lldp lldp_syncd);
  EOS `show lldp neighbors | json` (lldpNeighbors rows: port, neighborDevice,
  neighborPort, ttl).
"""

from __future__ import annotations

import json

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.cabling import (
    cabling_index,
    expected_cabling,
    judge_host,
    judge_into_health,
    observed_from_lldp,
    observed_from_switches,
    parse_eos_lldp,
    parse_ibnetdiscover,
    parse_lldpcli_json,
    parse_lldpcli_keyvalue,
    parse_nvue_lldp,
    parse_sonic_lldp,
    parse_switch_lldp,
    rail_leaves,
)
from ansible_collections.rdma.fabric.plugins.modules import rail_neighbors_info


def chassis(name):
    return {
        name: {
            "id": {"type": "mac", "value": "1c:34:da:00:00:01"},
            "descr": "Cumulus Linux version 5.9.1 running on Nvidia SN5600",
            "mgmt-ip": "192.0.2.11",
            "capability": [{"type": "Bridge", "enabled": True}],
        }
    }


def iface(switch, port, kind="ifname"):
    return {
        "via": "LLDP",
        "rid": "1",
        "age": "0 day, 00:01:12",
        "chassis": chassis(switch),
        "port": {"id": {"type": kind, "value": port}, "descr": port, "ttl": "120"},
    }


def test_lldpcli_json_one_interface_is_an_object():
    text = json.dumps({"lldp": {"interface": {"ens1f0np0": iface("leaf-rail0", "swp7")}}})
    assert parse_lldpcli_json(text) == {
        "ens1f0np0": [{"switch": "leaf-rail0", "port": "swp7", "port_descr": "swp7"}]
    }


def test_lldpcli_json_several_interfaces_are_a_list():
    text = json.dumps(
        {
            "lldp": {
                "interface": [
                    {"ens1f0np0": iface("leaf-rail1", "swp7")},
                    {"ens2f0np0": iface("leaf-rail0", "swp7")},
                ]
            }
        }
    )
    got = parse_lldpcli_json(text)
    assert got["ens1f0np0"][0]["switch"] == "leaf-rail1"
    assert got["ens2f0np0"][0]["switch"] == "leaf-rail0"


def test_lldpcli_json_mac_port_id_falls_back_to_the_port_description():
    entry = iface("leaf-rail0", "1c:34:da:00:00:07", kind="mac")
    entry["port"]["descr"] = "swp7"
    got = parse_lldpcli_json({"lldp": {"interface": {"eth1": entry}}})
    assert got["eth1"][0]["port"] == "swp7"


def test_lldpcli_json0():
    text = {
        "lldp": [
            {
                "interface": [
                    {
                        "name": "eth1",
                        "via": "LLDP",
                        "chassis": [
                            {
                                "id": [{"type": "mac", "value": "00:00:00:00:00:02"}],
                                "name": [{"value": "leaf-rail3"}],
                            }
                        ],
                        "port": [
                            {
                                "id": [{"type": "ifname", "value": "swp7"}],
                                "descr": [{"value": "to gpu-b07"}],
                            }
                        ],
                    }
                ]
            }
        ]
    }
    assert parse_lldpcli_json(text) == {
        "eth1": [{"switch": "leaf-rail3", "port": "swp7", "port_descr": "to gpu-b07"}]
    }


def test_lldpcli_no_neighbour_is_empty():
    assert parse_lldpcli_json('{"lldp": {}}') == {}
    assert parse_lldpcli_json('{"lldp": {"interface": []}}') == {}


def test_lldpcli_keyvalue():
    text = "\n".join(
        [
            "lldp.eth1.via=LLDP",
            "lldp.eth1.rid=1",
            "lldp.eth1.age=0 day, 00:00:13",
            "lldp.eth1.chassis.mac=00:00:00:00:00:02",
            "lldp.eth1.chassis.name=leaf-rail2.dc1.example",
            "lldp.eth1.port.ifname=swp9",
            "lldp.eth1.port.descr=swp9",
            "lldp.eth2.chassis.name=leaf-rail3",
            "lldp.eth2.port.local=etp8",
            "lldp.eth2.port.descr=Ethernet28",
        ]
    )
    assert parse_lldpcli_keyvalue(text) == {
        "eth1": [{"switch": "leaf-rail2.dc1.example", "port": "swp9", "port_descr": "swp9"}],
        "eth2": [{"switch": "leaf-rail3", "port": "etp8", "port_descr": "Ethernet28"}],
    }


IBND_SPACES = """\
#
# Topology file: generated on Wed Jun 17 17:06:56 2026
#
vendid=0x2c9
devid=0xd2f0
sysimgguid=0xb8cef60300a1b200
switchguid=0xb8cef60300a1b200(b8cef60300a1b200)
Switch  65 "S-b8cef60300a1b200"          # "MF0;leaf-rail2:MQM9700/U1" enhanced port 0 lid 3 lmc 0
[7]     "H-b8cef60300a1c000"[1](b8cef60300a1c000)                 # "gpu-b07 mlx5_3" lid 5 4xNDR

vendid=0x2c9
devid=0x1021
sysimgguid=0xb8cef60300a1c000
caguid=0xb8cef60300a1c000
Ca      1 "H-b8cef60300a1c000"          # "gpu-b07 mlx5_3"
[1](b8cef60300a1c000) "S-b8cef60300a1b200"[7] # lid 5 lmc 0 "MF0;leaf-rail2:MQM9700/U1" lid 3 4xNDR
"""


def test_ibnetdiscover_with_spaces_for_tabs():
    assert parse_ibnetdiscover(IBND_SPACES) == [
        {
            "ca_guid": "0xb8cef60300a1c000",
            "ca_desc": "gpu-b07 mlx5_3",
            "ca_port": 1,
            "port_guid": "0xb8cef60300a1c000",
            "switch_guid": "0xb8cef60300a1b200",
            "switch": "MF0;leaf-rail2:MQM9700/U1",
            "port": 7,
        }
    ]


NVUE = {
    "swp7": {
        "type": "swp",
        "lldp": {
            "neighbor": {
                "gpu-b07": {
                    "age": 412,
                    "chassis": {"chassis-id": "b8:ce:f6:00:00:01", "system-name": "gpu-b07"},
                    "port": {"name": "ens3f0np0", "description": "ens3f0np0", "ttl": 120},
                }
            }
        },
    },
    "swp8": {"type": "swp", "lldp": {}},
}
SONIC = {
    "LLDP_ENTRY_TABLE:Ethernet28": {
        "lldp_rem_sys_name": "gpu-b07",
        "lldp_rem_port_id_subtype": "5",
        "lldp_rem_port_id": "ens2f0np0",
        "lldp_rem_port_desc": "ens2f0np0",
    }
}
EOS = {
    "lldpNeighbors": [
        {
            "port": "Ethernet7/1",
            "neighborDevice": "gpu-b07",
            "neighborPort": "ens1f0np0",
            "ttl": 120,
        }
    ]
}


def test_switch_side_reads():
    assert parse_nvue_lldp("leaf-rail3", json.dumps(NVUE)) == {
        "swp7": [{"host": "gpu-b07", "port": "ens3f0np0"}]
    }
    assert parse_sonic_lldp(json.dumps(SONIC)) == {
        "Ethernet28": [{"host": "gpu-b07", "port": "ens2f0np0"}]
    }
    assert parse_eos_lldp(json.dumps(EOS)) == {
        "Ethernet7/1": [{"host": "gpu-b07", "port": "ens1f0np0"}]
    }


RAILS = [
    {"name": f"rail{i}", "device": f"mlx5_{i}", "subnet": f"10.{i}.0.0/24", "leaf": leaf}
    for i, leaf in enumerate(["leaf-eos", "leaf-sonic", "leaf-nvue"])
]
HOST_RAILS = [
    {"rail": f"rail{i}", "device": f"mlx5_{i}", "netdev": f"ens{i + 1}f0np0"} for i in range(3)
]


def test_switch_side_reads_judged_find_the_swap():
    """The switches' tables: rail1's netdev sits on the NVUE leaf (rail2's), rail2's on
    the SONiC leaf (rail1's)."""
    plan, errors = expected_cabling(RAILS, {"gpu-b07": {}})
    assert errors == []
    reads = {
        "leaf-eos": parse_eos_lldp(EOS),
        "leaf-sonic": parse_sonic_lldp(
            {
                "LLDP_ENTRY_TABLE:Ethernet28": dict(
                    SONIC["LLDP_ENTRY_TABLE:Ethernet28"], lldp_rem_port_id="ens3f0np0"
                )
            }
        ),
        "leaf-nvue": parse_nvue_lldp(
            "leaf-nvue",
            {
                "swp7": {
                    "lldp": {
                        "neighbor": {
                            "x": {
                                "chassis": {"system-name": "gpu-b07"},
                                "port": {"name": "ens2f0np0"},
                            }
                        }
                    }
                }
            },
        ),
    }
    observed = observed_from_switches(cabling_index(reads), HOST_RAILS, "gpu-b07")
    result = judge_host("gpu-b07", plan["gpu-b07"], observed, HOST_RAILS)
    failed = [c["detail"] for c in result["checks"] if not c["ok"]]
    assert failed == [
        "gpu-b07 rail1 (mlx5_1) reaches leaf-nvue swp7; the plan says leaf-sonic: "
        "rails 1 and 2 look swapped"
    ]


def test_host_side_lldp_bound_to_rails():
    neighbors = {"ens1f0np0": [{"switch": "leaf-eos", "port": "Ethernet7/1"}]}
    observed = observed_from_lldp(neighbors, HOST_RAILS, cabling_index(None))
    assert observed["rail0"] == [
        {"switch": "leaf-eos", "port": "Ethernet7/1", "via": "LLDP (host)"}
    ]
    assert observed["rail1"] == []


def test_host_side_lldp_leaves_the_fabric_hosts_out():
    """A segment that floods LLDP (a hub, a switch forwarding the nearest-bridge group, the
    lab's vde segments) lets a rail netdev hear the other hosts' lldpd beside its leaf:
    the hosts are not leaves, so the rail is judged on its leaf alone, not "several
    switches"."""
    neighbors = {
        "ens1f0np0": [
            {"switch": "gpu-b08.example.net", "port": "ens1f0np0"},
            {"switch": "leaf-eos", "port": "Ethernet7/1"},
            {"switch": "GPU-B09", "port": "ens1f0np0"},
        ],
        "ens2f0np0": [{"switch": "gpu-b08", "port": "ens2f0np0"}],
    }
    peers = cabling_index(None, dict.fromkeys(["gpu-b07", "gpu-b08", "gpu-b09"]))
    observed = observed_from_lldp(neighbors, HOST_RAILS, peers)
    assert observed["rail0"] == [
        {"switch": "leaf-eos", "port": "Ethernet7/1", "via": "LLDP (host)"}
    ]
    assert observed["rail1"] == []
    # Without the fabric's hosts, the same reading has three "switches" on rail0.
    assert len(observed_from_lldp(neighbors, HOST_RAILS, cabling_index(None))["rail0"]) == 3


def test_host_and_switch_readings_are_merged_into_one_judgement():
    """The host hears its leaf on rail0 only; the leaves' own tables see rail0 on the same
    port (one entry, not "several") and rail1 on leaf-sonic: both rails as planned."""
    plan, errors = expected_cabling(RAILS[:2], {"gpu-b07": {}})
    assert not errors
    health = {
        "rails": [dict(r, link_layer="Ethernet") for r in HOST_RAILS[:2]],
        "checks": [],
    }
    lldp = {"neighbors": {"ens1f0np0": [{"switch": RAILS[0]["leaf"], "port": "swp7"}]}}
    reads = {
        RAILS[0]["leaf"]: {"swp7": [{"host": "gpu-b07", "port": "ens1f0np0"}]},
        RAILS[1]["leaf"]: {"Ethernet28": [{"host": "gpu-b07", "port": "ens2f0np0"}]},
    }
    judged = judge_into_health(health, plan, "gpu-b07", lldp, switch_reads=reads)
    details = [c["detail"] for c in judged["checks"]]
    assert details == [
        f"cabled to {RAILS[0]['leaf']} swp7 as planned",
        f"cabled to {RAILS[1]['leaf']} Ethernet28 as planned",
    ], details
    # The host's reading alone leaves rail1 without a neighbour.
    alone = judge_into_health(health, plan, "gpu-b07", lldp)
    assert [c["ok"] for c in alone["checks"]] == [True, False]


def test_switch_lldp_reads_each_os_and_refuses_an_unknown_one():
    dump = {
        "LLDP_ENTRY_TABLE:Ethernet8": {
            "type": "hash",
            "value": {"lldp_rem_sys_name": "gpu-b07", "lldp_rem_port_id": "ens1f0np0"},
        }
    }
    assert parse_switch_lldp("sonic", json.dumps(dump)) == {
        "Ethernet8": [{"host": "gpu-b07", "port": "ens1f0np0"}]
    }
    eos = {
        "lldpNeighbors": [
            {
                "port": "Ethernet7/1",
                "neighborDevice": "gpu-b07",
                "neighborPort": "ens1f0np0",
                "ttl": 120,
            }
        ]
    }
    assert parse_switch_lldp("eos", eos) == {
        "Ethernet7/1": [{"host": "gpu-b07", "port": "ens1f0np0"}]
    }
    with pytest.raises(ValueError, match="rdma_switch_os 'junos': no LLDP reader"):
        parse_switch_lldp("junos", "{}")


# EOS `show lldp neighbors detail | json` (Arista eAPI; the shape of aristanetworks/anta's
# VerifyLLDPNeighbors fixtures): one host with an interface-name port ID, one whose
# lldpd sends a MAC port ID (its default) and names the netdev in the description.
EOS_DETAIL = {
    "lldpNeighbors": {
        "Ethernet1": {
            "lldpNeighborInfo": [
                {
                    "chassisIdType": "macAddress",
                    "chassisId": "0200.0000.0101",
                    "systemName": "gpu-b07",
                    "neighborInterfaceInfo": {
                        "interfaceIdType": "interfaceName",
                        "interfaceId": '"ens1f0np0"',
                        "interfaceId_v2": "ens1f0np0",
                        "interfaceDescription": "ens1f0np0",
                    },
                }
            ]
        },
        "Ethernet2": {
            "lldpNeighborInfo": [
                {
                    "chassisIdType": "macAddress",
                    "chassisId": "0200.0000.0201",
                    "systemName": "gpu-b08",
                    "neighborInterfaceInfo": {
                        "interfaceIdType": "macAddress",
                        "interfaceId": "0200.0000.0202",
                        "interfaceId_v2": "0200.0000.0202",
                        "interfaceDescription": "ens1f0np0",
                    },
                }
            ]
        },
        "Ethernet3": {"lldpNeighborInfo": []},
    }
}


def test_eos_detail_names_a_mac_port_id_by_its_description():
    assert parse_switch_lldp("eos", json.dumps(EOS_DETAIL)) == {
        "Ethernet1": [{"host": "gpu-b07", "port": "ens1f0np0"}],
        "Ethernet2": [{"host": "gpu-b08", "port": "ens1f0np0"}],
    }


def test_rail_leaves_from_leaf_and_leaf_group():
    rails = [
        {"name": "r0", "leaf": "leaf-a"},
        {"name": "r1", "leaf_group": "r1_leaves"},
        {"name": "r2", "leaf": "leaf-a"},
        "junk",
    ]
    assert rail_leaves(rails, {"r1_leaves": ["leaf-b1", "leaf-b2"]}) == [
        "leaf-a",
        "leaf-b1",
        "leaf-b2",
    ]
    # rdma_verify_cabling off (any spelling the check takes): no leaf is read.
    for off in ("false", "no", "off", "0", False):
        assert rail_leaves(rails, {"r1_leaves": ["leaf-b1"]}, off) == []


# ------------------------------------------------------ the module, on a stand-in lldpcli


class Lldpcli:
    """lldpcli answering from a JSON document in lldpd's json format; logs its argv."""

    tool = "lldpcli"

    def __init__(self, doc):
        self.doc = doc
        self.calls = []

    def run(self, argv):
        self.calls.append(list(argv))
        return 0, json.dumps(self.doc), ""


def test_rail_neighbors_info_reads_only_the_rail_netdevs(module_with_tool):
    tool = Lldpcli({"lldp": {"interface": {"ens1f0np0": iface("leaf-rail0", "swp7")}}})
    run = module_with_tool(rail_neighbors_info, tool)
    result = run(check_mode=True, netdevs=["ens1f0np0", "ens2f0np0"])
    assert tool.calls == [
        ["/usr/bin/lldpcli", "-f", "json", "show", "neighbors", "ports", "ens1f0np0,ens2f0np0"]
    ]
    assert result["neighbors"] == {
        "ens1f0np0": [{"switch": "leaf-rail0", "port": "swp7", "port_descr": "swp7"}],
        "ens2f0np0": [],
    }
    assert result["problems"] == [] and result["changed"] is False


def test_rail_neighbors_info_without_lldpd_says_so(module_with_tool):
    tool = Lldpcli({})
    tool.tool = ()
    result = module_with_tool(rail_neighbors_info, tool)(netdevs=["eth1"])
    assert result["problems"][0].startswith("lldpcli not found")
    assert result["neighbors"] == {"eth1": []}


def test_a_port_that_is_down_is_not_judged_for_cabling():
    """lab3's eth1 down (the e2e's fault run): its lldpd hears nothing there. The port
    state check is the finding: the cabling check says it did not judge that rail, and
    the rail is not taken out of the tests as miscabled."""
    plan, errors = expected_cabling(RAILS[:2], {"gpu-b07": {}})
    assert not errors
    rails = [dict(r, link_layer="Ethernet") for r in HOST_RAILS[:2]]
    rails[0]["active"] = False
    health = {"rails": rails, "checks": []}
    lldp = {"neighbors": {"ens2f0np0": [{"switch": RAILS[1]["leaf"], "port": "Ethernet28"}]}}
    judged = judge_into_health(health, plan, "gpu-b07", lldp)
    checks = [(c["ok"], c.get("skipped", False), c["detail"]) for c in judged["checks"]]
    assert checks == [
        (
            True,
            True,
            "gpu-b07 rail0 (mlx5_0): not checked, its port is down (see its port state check)",
        ),
        (True, False, f"cabled to {RAILS[1]['leaf']} Ethernet28 as planned"),
    ], checks
    assert judged["cabling"]["miscabled"] == {}
    assert [r["device"] for r in judged["rails"]] == ["mlx5_0", "mlx5_1"]


def test_a_rail_on_the_leaf_of_a_rail_that_is_down_names_that_rail():
    """lab3's eth1 down and its eth2 on rail0's leaf (the e2e's swapped cables with a port
    down): rail0 is not judged, but its leaf is still rail0's, not "no rail's leaf"."""
    plan, errors = expected_cabling(RAILS[:2], {"gpu-b07": {}})
    assert not errors
    rails = [dict(r, link_layer="Ethernet") for r in HOST_RAILS[:2]]
    rails[0]["active"] = False
    lldp = {"neighbors": {"ens2f0np0": [{"switch": RAILS[0]["leaf"], "port": "Et7"}]}}
    judged = judge_into_health({"rails": rails, "checks": []}, plan, "gpu-b07", lldp)
    failed = [c["detail"] for c in judged["checks"] if not c["ok"]]
    assert failed == [
        f"gpu-b07 rail1 (mlx5_1) reaches {RAILS[0]['leaf']} Et7; the plan says "
        f"{RAILS[1]['leaf']} (rail rail0's leaf)"
    ], failed


def test_a_sonic_port_heard_by_its_alias_matches_the_plan_by_its_name():
    """SONiC's lldpmgrd advertises a port's alias (etp1) as its LLDP port ID, while its
    own LLDP_ENTRY_TABLE and CONFIG_DB (and so rdma_cabling_ports) name it Ethernet0:
    both readings of one cable, the plan's name among them, is as planned."""
    rails = [{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "leaf": "sonic1"}]
    plan, errors = expected_cabling(
        rails, {"gpu-b07": {"rdma_rail_host_index": 1}}, {"sonic1": {1: "Ethernet0"}}
    )
    assert not errors, errors
    health = {"rails": [dict(HOST_RAILS[0], link_layer="Ethernet")], "checks": []}
    lldp = {"neighbors": {"ens1f0np0": [{"switch": "sonic1", "port": "etp1"}]}}
    reads = {"sonic1": {"Ethernet0": [{"host": "gpu-b07", "port": "ens1f0np0"}]}}
    judged = judge_into_health(health, plan, "gpu-b07", lldp, switch_reads=reads)
    assert [c["detail"] for c in judged["checks"]] == ["cabled to sonic1 Ethernet0 as planned"]
    # The host's reading alone (the alias) is a wrong port against a plan in names.
    alone = judge_into_health(health, plan, "gpu-b07", lldp)
    assert [c["ok"] for c in alone["checks"]] == [False]


def test_nvue_per_port_reads_as_the_uri_loop_gives_them():
    """lldp_cumulus.yml reads /interface/{id}/lldp/neighbor per port: the loop's results
    (item, status, json) go to the parser as they are; a 404 (no neighbour) is none, and a
    MAC port ID is named by the port description."""
    results = [
        {
            "item": "swp1",
            "status": 200,
            "json": {
                "gpu-b07": {"chassis": {"system-name": "gpu-b07"}, "port": {"name": "ens1f0np0"}}
            },
        },
        {"item": "swp2", "status": 404, "json": {"status": 404, "title": "Not Found"}},
        {
            "item": "swp3",
            "status": 200,
            "json": {
                "gpu-b09": {
                    "chassis": {"system-name": "gpu-b09"},
                    "port": {"name": "48:b0:2d:76:ee:8e", "type": "mac", "description": "eth1"},
                }
            },
        },
    ]
    assert parse_switch_lldp("cumulus", results, "leaf-nvue") == {
        "swp1": [{"host": "gpu-b07", "port": "ens1f0np0"}],
        "swp3": [{"host": "gpu-b09", "port": "eth1"}],
    }


def test_a_switch_names_the_host_by_its_system_name_not_its_inventory_name():
    """An inventory of addresses (10.1.2.7): the leaf's table names the host as its lldpd
    does, by its system name, which rail_neighbors_info returns."""
    plan, errors = expected_cabling(RAILS[:1], {"10.1.2.7": {}})
    assert not errors
    health = {"rails": [dict(HOST_RAILS[0], link_layer="Ethernet")], "checks": []}
    reads = {RAILS[0]["leaf"]: {"Et7": [{"host": "gpu-b07.example.net", "port": "ens1f0np0"}]}}
    lldp = {"neighbors": {}, "system_name": "gpu-b07"}
    judged = judge_into_health(health, plan, "10.1.2.7", lldp, switch_reads=reads)
    assert [c["detail"] for c in judged["checks"]] == [
        f"cabled to {RAILS[0]['leaf']} Et7 as planned"
    ]
    # Without the system name the leaf's entry is nobody's.
    unnamed = judge_into_health(health, plan, "10.1.2.7", {"neighbors": {}}, switch_reads=reads)
    assert [c["ok"] for c in unnamed["checks"]] == [False]
