"""The rdma_verify health logic (module_utils/rdma_verify.py): per-host checks and rails.
Planning, judging and isolation: test_verify_tests.py."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv

EXPECT = {
    "devices": [],
    "link_layer": "",
    "device_count": 0,
    "rate_gbps": 0,
    "active_mtu": 1024,
    "counter_max": {"symbol_error": 10},
    "address": "mgmt",
}


def roce_port(host_octet, **over):
    port = {
        "device": "rxe0",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate_gbps": 10.0,
        "link_layer": "Ethernet",
        "netdev": "eth1",
        "netdev_mtu": 1500,
        "active_mtu": 1024,
        "sm_lid": "0",
        "roce_v2_gid": {"index": 1, "ipv4": f"192.0.2.{host_octet}"},
        "counters": None,
    }
    port.update(over)
    return port


def info(*ports, version="6.06"):
    return {"ports": list(ports), "perftest_version": version, "problems": []}


def failed(checks):
    return {(c["check"], c["device"]) for c in checks if not c["ok"]}


def test_healthy_roce_host():
    health = rv.host_health(info(roce_port(11)), EXPECT)
    assert failed(health["checks"]) == set()
    [rail] = health["rails"]
    assert rail == {
        "rail": "rxe0",
        "device": "rxe0",
        "port": 1,
        "link_layer": "Ethernet",
        "rate_gbps": 10.0,
        "rate": None,
        "netdev": "eth1",
        "gid_index": 1,
        "address": "192.0.2.11",
        "active": True,
        "missing": None,
        "pci": None,
        "local_cpulist": None,
        "numa_node": None,
        "numactl": False,
        "cuda": None,
        "cuda_error": None,
    }


def test_every_health_fault_is_named():
    port = roce_port(
        11,
        state="DOWN",
        phys_state="Disabled",
        active_mtu=4096,
        netdev_mtu=1500,
        roce_v2_gid=None,
        counters={"symbol_error": 99, "port_rcv_errors": 5},
    )
    health = rv.host_health(info(port, version=None), dict(EXPECT, active_mtu=4096))
    assert failed(health["checks"]) == {
        ("port state", "rxe0"),
        ("netdev MTU", "rxe0"),
        ("RoCE v2 GID", "rxe0"),
        ("error counters", "rxe0"),
        ("perftest", None),
    }
    detail = {c["check"]: c["detail"] for c in health["checks"]}
    assert detail["netdev MTU"] == "eth1 MTU 1500 (RoCE needs >= 4192)"
    assert detail["error counters"] == "over the limit: symbol_error=99"
    assert health["rails"][0]["address"] is None


def test_no_device_and_expected_count():
    assert failed(rv.host_health(info(), EXPECT)["checks"]) == {("devices", None)}
    two = info(roce_port(11), roce_port(11, device="rxe1"))
    health = rv.host_health(two, dict(EXPECT, device_count=3))
    assert failed(health["checks"]) == {("devices", None)}
    assert [r["device"] for r in health["rails"]] == ["rxe0", "rxe1"]


def test_infiniband_port_needs_a_subnet_manager():
    ib = roce_port(11, link_layer="InfiniBand", roce_v2_gid=None, sm_lid="0x0")
    health = rv.host_health(info(ib), dict(EXPECT, active_mtu=0))
    assert failed(health["checks"]) == {("subnet manager", "rxe0")}
    assert health["rails"][0]["address"] == "mgmt"


def rate_port(device, rate, **over):
    return roce_port(11, device=device, rate=rate, rate_gbps=float(rate.split()[0]), **over)


def test_rails_without_a_plan_are_device_names_in_natural_order():
    ports = [rate_port(f"mlx5_{n}", "400 Gb/sec (4X NDR)") for n in (0, 10, 11, 2, 3)]
    health = rv.host_health(info(*ports), EXPECT)
    assert [r["rail"] for r in health["rails"]] == [
        "mlx5_0",
        "mlx5_2",
        "mlx5_3",
        "mlx5_10",
        "mlx5_11",
    ]
    assert health["rails"][0]["rate"] == {
        "gbps": 400.0,
        "width": "4X",
        "speed": "NDR",
        "usable_gbps": 400.0,
    }


@pytest.mark.parametrize(
    ("value", "chosen"),
    [
        ("mlx5_0,mlx5_1", ["mlx5_0", "mlx5_1"]),
        ("mlx5_1 mlx5_10", ["mlx5_1", "mlx5_10"]),
        (["mlx5_10"], ["mlx5_10"]),
        ([], ["mlx5_0", "mlx5_1", "mlx5_10"]),
    ],
)
def test_devices_string_is_split_at_commas_not_into_characters(value, chosen):
    ports = [roce_port(11, device=d) for d in ("mlx5_0", "mlx5_1", "mlx5_10")]
    health = rv.host_health(info(*ports), dict(EXPECT, devices=value))
    assert [r["device"] for r in health["rails"]] == chosen


def test_devices_of_another_type_are_refused_naming_the_variable():
    with pytest.raises(ValueError, match="rdma_verify_devices must be a list"):
        rv.host_health(info(roce_port(11)), dict(EXPECT, devices={"mlx5_0": 1}))


def plan_device(name, netdev, pci):
    return {
        "name": name,
        "pci_address": pci,
        "node_guid": None,
        "ports": [{"port": 1, "link_layer": "Ethernet", "netdev": netdev}],
    }


RAILS = [
    {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
    {"name": "rail1", "netdev": "ens2np0", "subnet": "10.0.1.0/24"},
    {"name": "rail2", "device": "mlx5_2", "subnet": "10.0.2.0/24"},
]


def test_rails_from_the_plan_by_name_and_a_missing_device_on_its_own_rail():
    ports = [
        roce_port(11, device="mlx5_0", netdev="ens1np0"),
        roce_port(11, device="mlx5_5", netdev="ens2np0"),
    ]
    devices = [
        plan_device("mlx5_0", "ens1np0", "0000:17:00.0"),
        plan_device("mlx5_5", "ens2np0", "0000:3b:00.0"),
    ]
    expect = dict(EXPECT, rails=RAILS, rail_vars={"rdma_rail_host_index": 3})
    health = rv.host_health(dict(info(*ports), devices=devices), expect, "lab3")
    rails = {r["rail"]: r for r in health["rails"]}
    assert [r["rail"] for r in health["rails"]] == ["rail0", "rail1", "rail2"]
    assert rails["rail1"]["device"] == "mlx5_5"  # bound by netdev, whatever its device name
    assert rails["rail2"]["device"] is None
    assert "lab3: rail rail2: no RDMA device with device mlx5_2" in rails["rail2"]["missing"]
    assert ("rail rail2", None) in failed(health["checks"])


def test_an_unusable_rail_plan_is_a_failed_check_naming_the_host():
    expect = dict(EXPECT, rails=RAILS, rail_vars={})
    health = rv.host_health(info(roce_port(11)), expect, "lab3")
    [check] = [c for c in health["checks"] if c["check"] == "rail plan"]
    assert not check["ok"] and "lab3: no address on rail rail0" in check["detail"]


def planned_port(*addresses, mtu=9000):
    """mlx5_0 on ens1np0 with a RoCE v2 IPv4 GID per address (index 3, 5, ...), as
    rdma_health_info reports it."""
    gids = [
        {"index": 2 * k + 3, "gid": "-", "type": "RoCE v2", "netdev": "ens1np0", "ipv4": a}
        for k, a in enumerate(addresses)
    ]
    return roce_port(
        0,
        device="mlx5_0",
        netdev="ens1np0",
        netdev_mtu=mtu,
        gids=[{"index": 1, "gid": "-", "type": "IB/RoCE v1", "netdev": "ens1np0", "ipv4": None}]
        + gids,
        roce_v2_gid=gids[0] if gids else None,
    )


def planned_health(port):
    rails = [{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 9000}]
    devices = [plan_device("mlx5_0", "ens1np0", "0000:17:00.0")]
    expect = dict(EXPECT, rails=rails, rail_vars={"rdma_rail_host_index": 3})
    return rv.host_health(dict(info(port), devices=devices), expect, "lab3")


def test_a_planned_rail_is_tested_from_its_planned_address_and_mtu():
    # A second address on the netdev (an operator's, or DHCP's) sorts first in the GID
    # table: perftest must still use the rail's planned address and its GID index.
    health = planned_health(planned_port("10.9.9.9", "10.0.0.3"))
    assert failed(health["checks"]) == set()
    [rail] = health["rails"]
    assert (rail["address"], rail["gid_index"]) == ("10.0.0.3", 5)
    details = {c["check"]: c["detail"] for c in health["checks"]}
    assert details["rail address"] == "ens1np0 has 10.0.0.3 (planned)"
    assert details["rail MTU"] == "ens1np0 MTU 9000 (planned 9000)"


def test_a_planned_rail_without_its_address_or_mtu_fails_naming_both():
    health = planned_health(planned_port("10.9.9.9", mtu=1500))
    assert failed(health["checks"]) == {("rail address", "mlx5_0"), ("rail MTU", "mlx5_0")}
    details = {c["check"]: c["detail"] for c in health["checks"]}
    assert details["rail address"] == (
        "ens1np0 lacks the planned 10.0.0.3 (RoCE v2 IPv4 GIDs: 10.9.9.9)"
    )
    assert details["rail MTU"] == "ens1np0 MTU 1500 (planned 9000)"
    assert health["rails"][0]["address"] is None  # never tested from a wrong address
