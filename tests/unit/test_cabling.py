"""The cabling proof (module_utils/cabling.py): the expected cabling from the inventory,
its refusals, and the judge per (host, rail).

The readings here are written for these tests; the parsers' fixtures (in the shape of
the tools' published outputs) are in test_cabling_parsers.py, the real ibnetdiscover /
iblinkinfo on ibsim in test_cabling_ibsim.py.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.cabling import (
    expected_cabling,
    judge_host,
    switch_key,
    table_by_leaf,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rails import normalize_rails


def rails(n=4, leaves=True):
    out = []
    for i in range(n):
        rail = {"name": f"rail{i}", "device": f"mlx5_{i}", "subnet": f"10.{i}.0.0/24"}
        if leaves:
            rail["leaf"] = f"leaf-rail{i}"
        out.append(rail)
    return out


HOSTS = {"gpu-b07": {"rdma_rail_host_index": 7}, "gpu-b08": {"rdma_rail_host_index": 8}}


def port_maps(n=4):
    return {f"leaf-rail{i}": {7: "swp7", 8: "swp8"} for i in range(n)}


# ------------------------------------------------------------------------- the plan


def test_the_rail_plan_accepts_leaf_and_leaf_group():
    plan, errors = normalize_rails(
        rails()
        + [{"name": "x", "device": "mlx5_9", "subnet": "10.9.0.0/24", "leaf_group": "x_leaves"}]
    )
    assert errors == []


def test_expected_cabling_from_leaf_and_port_map():
    plan, errors = expected_cabling(rails(), HOSTS, port_maps())
    assert errors == []
    assert plan["gpu-b07"]["rail3"] == {
        "leaves": ["leaf-rail3"],
        "leaf": "leaf-rail3",
        "port": "swp7",
    }
    assert plan["gpu-b08"]["rail0"]["port"] == "swp8"


def test_expected_cabling_from_a_group_per_rail_picks_the_leaf_by_index():
    groups = {"rail0_leaves": ["leaf-r01-rail0", "leaf-r02-rail0"]}
    maps = {"leaf-r01-rail0": {7: "swp7"}, "leaf-r02-rail0": {8: "swp1"}}
    plan, errors = expected_cabling(
        [{"name": "rail0", "leaf_group": "rail0_leaves"}], HOSTS, maps, groups
    )
    assert errors == []
    assert plan["gpu-b07"]["rail0"]["leaf"] == "leaf-r01-rail0"
    assert plan["gpu-b08"]["rail0"] == {
        "leaves": ["leaf-r01-rail0", "leaf-r02-rail0"],
        "leaf": "leaf-r02-rail0",
        "port": "swp1",
    }


def test_no_leaf_anywhere_means_no_cabling_check_in_auto():
    assert expected_cabling(rails(leaves=False), HOSTS) == ({}, [])
    assert expected_cabling(rails(), HOSTS, mode=False) == ({}, [])


# ------------------------------------------------------------- bad input refused


def test_a_rail_without_a_leaf_is_refused_when_checks_are_on():
    some = rails()
    del some[2]["leaf"]
    _plan, errors = expected_cabling(some, HOSTS)
    assert errors == [
        "rdma_rails: rail rail2 has no leaf (set leaf or leaf_group) while the cabling check "
        "is on (rdma_verify_cabling: auto, and other rails name their leaf)"
    ]
    _plan, errors = expected_cabling(rails(leaves=False)[:1], HOSTS, mode=True)
    assert errors and "rail rail0 has no leaf" in errors[0]
    assert "rdma_verify_cabling: true" in errors[0]


def test_a_port_twice_in_a_leaf_map_is_refused():
    maps = port_maps()
    maps["leaf-rail1"] = {7: "swp7", 8: "swp7"}
    _plan, errors = expected_cabling(rails(), HOSTS, maps)
    assert errors == [
        "rdma_cabling_ports.leaf-rail1: port swp7 is mapped twice (host indexes 7 and 8)"
    ]


def test_a_host_index_missing_from_the_map_is_refused_naming_host_and_variable():
    maps = port_maps()
    del maps["leaf-rail2"][8]
    _plan, errors = expected_cabling(rails(), HOSTS, maps)
    assert errors == [
        "gpu-b08: rdma_rail_host_index 8 is missing from rdma_cabling_ports.leaf-rail2 (rail rail2)"
    ]


def test_a_host_without_index_is_refused_when_ports_are_mapped():
    _plan, errors = expected_cabling(rails(), {"gpu-x": {}}, port_maps())
    assert errors[0].startswith("gpu-x: rdma_rail_host_index is needed")


def test_a_map_for_a_switch_no_rail_names_and_an_empty_group_are_refused():
    maps = dict(port_maps(), **{"leaf-typo": {1: "swp1"}})
    _plan, errors = expected_cabling(rails(), HOSTS, maps)
    assert errors and errors[0].startswith("rdma_cabling_ports.leaf-typo: leaf-typo is no rail")
    _plan, errors = expected_cabling([{"name": "rail0", "leaf_group": "nope"}], HOSTS)
    assert errors == [
        "rdma_rails[0] (rail0).leaf_group 'nope' is no inventory group with switches in it"
    ]
    _plan, errors = expected_cabling(rails(), HOSTS, mode="maybe")
    assert errors == ["rdma_verify_cabling must be one of auto, true, false; got 'maybe'"]


# ---------------------------------------------------------------------------- judge


def host_rails(n=4):
    return [
        {"rail": f"rail{i}", "device": f"mlx5_{i}", "port": 1, "netdev": f"eth{i}"}
        for i in range(n)
    ]


def planned():
    plan, errors = expected_cabling(rails(), HOSTS, port_maps())
    assert errors == []
    return plan["gpu-b07"]


def seen(**cables):
    out = {f"rail{i}": [{"switch": f"leaf-rail{i}", "port": "swp7"}] for i in range(4)}
    out.update(cables)
    return out


def test_judge_all_as_planned():
    result = judge_host("gpu-b07", planned(), seen(), host_rails())
    assert [c["ok"] for c in result["checks"]] == [True] * 4
    assert result["checks"][3]["detail"] == "cabled to leaf-rail3 swp7 as planned"
    assert result["miscabled"] == {}


def test_judge_names_a_swapped_pair_as_one_finding():
    observed = seen(
        rail2=[{"switch": "leaf-rail3", "port": "swp7"}],
        rail3=[{"switch": "leaf-rail2", "port": "swp7"}],
    )
    result = judge_host("gpu-b07", planned(), observed, host_rails())
    failed = [c for c in result["checks"] if not c["ok"]]
    assert len(failed) == 1
    assert failed[0]["detail"] == (
        "gpu-b07 rail2 (mlx5_2) reaches leaf-rail3 swp7; the plan says leaf-rail2: "
        "rails 2 and 3 look swapped"
    )
    assert (failed[0]["device"], failed[0]["port"]) == ("mlx5_2,mlx5_3", "1")
    assert result["miscabled"] == {
        "rail2": "cabling: rails 2 and 3 look swapped",
        "rail3": "cabling: rails 2 and 3 look swapped",
    }
    assert [r["status"] for r in result["rows"]] == ["planned", "planned", "swapped", "swapped"]
    # Each rail's row in the cabling table says what that rail reaches.
    assert result["rows"][3]["detail"] == (
        "gpu-b07 rail3 (mlx5_3) reaches leaf-rail2 swp7; the plan says leaf-rail3: "
        "rails 2 and 3 look swapped"
    )


def test_judge_a_one_way_wrong_rail_is_not_a_swap():
    observed = seen(rail1=[{"switch": "leaf-rail3", "port": "swp9"}])
    result = judge_host("gpu-b07", planned(), observed, host_rails())
    failed = [c for c in result["checks"] if not c["ok"]]
    assert [c["detail"] for c in failed] == [
        "gpu-b07 rail1 (mlx5_1) reaches leaf-rail3 swp9; the plan says leaf-rail1 "
        "(rail rail3's leaf)"
    ]


def test_judge_wrong_port_on_the_right_leaf():
    observed = seen(rail0=[{"switch": "leaf-rail0.dc1.example", "port": "swp9"}])
    result = judge_host("gpu-b07", planned(), observed, host_rails())
    failed = [c for c in result["checks"] if not c["ok"]]
    assert [c["detail"] for c in failed] == [
        "gpu-b07 rail0 (mlx5_0) reaches leaf-rail0.dc1.example swp9; the plan says leaf-rail0 swp7"
    ]
    assert result["rows"][0]["status"] == "wrong port"


def test_judge_no_neighbour_and_unknown_switch():
    observed = seen(rail0=[], rail1=[{"switch": "mgmt-sw", "port": "ge-0/0/1"}])
    result = judge_host("gpu-b07", planned(), observed, host_rails())
    details = [c["detail"] for c in result["checks"] if not c["ok"]]
    assert details == [
        "gpu-b07 rail0 (mlx5_0): no neighbour seen on netdev eth0",
        "gpu-b07 rail1 (mlx5_1) reaches mgmt-sw ge-0/0/1, which is no rail's leaf; the "
        "plan says leaf-rail1",
    ]
    assert set(result["miscabled"]) == {"rail0", "rail1"}


def test_switch_names_compare_as_short_lowercase_hostnames():
    assert switch_key("MF0;leaf-rail0:MQM9700/U1") == "leaf-rail0"
    assert switch_key("Leaf-Rail0.dc1.example.com") == "leaf-rail0"


def test_table_by_leaf_groups_rows_under_the_planned_leaf():
    result = judge_host("gpu-b07", planned(), seen(), host_rails())
    table = table_by_leaf(result["rows"])
    assert list(table) == ["leaf-rail0", "leaf-rail1", "leaf-rail2", "leaf-rail3"]
    assert table["leaf-rail2"][0]["planned_port"] == "swp7"


@pytest.mark.parametrize("mode", ["true", True, "yes"])
def test_mode_spellings(mode):
    _plan, errors = expected_cabling(rails(), HOSTS, mode=mode)
    assert errors == []
