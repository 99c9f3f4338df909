"""The rail plan (rdma_rails): shape, defaults, per-host addresses, cross-host checks,
binding to a host's RDMA ports. One library (module_utils/rails.py) for every role."""

from __future__ import annotations

import time

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    RailPlanError,
    fabric_rails,
    host_rails,
    natural_key,
    normalize_rails,
    plan_or_raise,
    resolve_rails,
)

TWO_RAILS = [
    {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
    {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "mtu": 4200},
]


def _one_error(rails, needle, policy_mtu=None):
    filled, errors = normalize_rails(rails, policy_mtu)
    assert filled is None
    assert any(needle in e for e in errors), errors
    return errors


def test_defaults_fill_every_key():
    rails, errors = normalize_rails(TWO_RAILS, policy_mtu=9000)
    assert errors == []
    r0, r1 = rails
    assert r0["selector"] == {"device": "mlx5_0"}
    assert (r0["port"], r0["link_layer"], r0["mtu"], r0["table"]) == (1, "ethernet", 9000, 100)
    assert (r1["mtu"], r1["table"], r1["prefix_length"]) == (4200, 101, 24)
    assert r0["ipoib_mode"] is None and r0["pkeys"] == []


def test_policy_mtu_is_the_ethernet_default_and_ipoib_has_its_own():
    rails, _ = normalize_rails(
        [
            {"name": "r0", "netdev": "ens1", "subnet": "10.0.0.0/24"},
            {"name": "ib0", "device": "mlx5_4", "link_layer": "infiniband"},
            {
                "name": "ib1",
                "device": "mlx5_5",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
            },
        ],
        policy_mtu=4200,
    )
    assert [r["mtu"] for r in rails] == [4200, 4092, 65520]
    assert rails[1]["subnet"] is None  # IPoIB addresses are optional


@pytest.mark.parametrize(
    ("rail", "needle"),
    [
        ({"name": "r0", "device": "mlx5_0"}, "rdma_rails[0] (r0).subnet is required"),
        ({"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.1/24"}, "rdma_rails[0] (r0).subnet"),
        ({"name": "r0", "subnet": "10.0.0.0/24"}, "exactly one of device, netdev or pci"),
        (
            {"name": "r0", "device": "mlx5_0", "netdev": "ens1", "subnet": "10.0.0.0/24"},
            "exactly one of device, netdev or pci",
        ),
        ({"name": "r0", "pci": "17:00", "subnet": "10.0.0.0/24"}, "rdma_rails[0] (r0).pci"),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 9217},
            ".mtu must be 1280-9216",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "link_layer": "infiniband", "mtu": 9000},
            ".mtu must be 1280-4092 on an infiniband datagram rail",
        ),
        ({"name": "r0", "device": "mlx5_0", "link_layer": "roce"}, ".link_layer must be one of"),
        ({"name": "rail zero", "device": "mlx5_0", "subnet": "10.0.0.0/24"}, ".name must be"),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "vlan": 5},
            "unknown keys ['vlan']",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "prefix_length": 29},
            "prefix_length must be 30 or 31",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "peer"},
            "'peer' needs prefix_length",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "10.9.0.1"},
            "outside the rail's subnet",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "pkeys": ["x"]},
            "for infiniband rails only",
        ),
        (
            {"name": "r0", "device": "mlx5_0", "subnet6": "10.0.0.0/24", "subnet": "10.0.0.0/24"},
            "IPv6 network",
        ),
    ],
)
def test_bad_rail_is_named(rail, needle):
    _one_error([rail], needle)


def test_two_rails_on_one_device_port_and_one_table_are_refused():
    _one_error(
        [
            {"name": "a", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "b", "device": "mlx5_0", "subnet": "10.0.1.0/24", "table": 100},
        ],
        "b and a both select device mlx5_0",
    )
    _one_error(
        [
            {"name": "a", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "b", "device": "mlx5_1", "subnet": "10.0.1.0/24", "table": 100},
        ],
        "b and a share routing table 100",
    )
    _one_error(TWO_RAILS + [dict(TWO_RAILS[0], device="mlx5_9")], "is also rdma_rails[0]'s name")


def test_not_a_list():
    assert normalize_rails("rail0")[1] == ["rdma_rails must be a list of rails; got 'rail0'"]
    assert normalize_rails(None) == ([], [])


def test_host_index_addresses_every_rail():
    rails, _ = normalize_rails(TWO_RAILS)
    entries, errors = host_rails(rails, "gpu07", {"rdma_rail_host_index": 7})
    assert errors == []
    assert [(e["name"], e["address"], e["prefix_length"]) for e in entries] == [
        ("rail0", "10.0.0.7", 24),
        ("rail1", "10.0.1.7", 24),
    ]


def test_explicit_address_wins_and_must_sit_in_the_subnet():
    rails, _ = normalize_rails(TWO_RAILS)
    entries, errors = host_rails(
        rails, "gpu07", {"rdma_rail_host_index": 7, "rdma_rail_addresses": {"rail1": "10.0.1.77"}}
    )
    assert errors == [] and entries[1]["address"] == "10.0.1.77"
    _, errors = host_rails(
        rails, "gpu07", {"rdma_rail_host_index": 7, "rdma_rail_addresses": {"rail1": "10.0.2.7"}}
    )
    assert errors == [
        "gpu07: rdma_rail_addresses.rail1 10.0.2.7 is outside rail rail1's subnet 10.0.1.0/24"
    ]


@pytest.mark.parametrize(
    ("host_vars", "needle"),
    [
        (
            {},
            "gpu07: no address on rail rail0: set rdma_rail_host_index or "
            "rdma_rail_addresses.rail0",
        ),
        ({"rdma_rail_host_index": 0}, "gpu07: rdma_rail_host_index 0 is no usable address"),
        ({"rdma_rail_host_index": 255}, "gpu07: rdma_rail_host_index 255 is no usable address"),
        (
            {"rdma_rail_host_index": "seven"},
            "gpu07: rdma_rail_host_index must be a non-negative integer",
        ),
        (
            {"rdma_rail_host_index": 1, "rdma_rail_devices": {"rail9": "mlx5_9"}},
            "names rail 'rail9'",
        ),
        (
            {"rdma_rail_host_index": 1, "rdma_rail_devices": {"rail0": {"pci": "zz"}}},
            "rdma_rail_devices.rail0.pci",
        ),
    ],
)
def test_bad_host_input_names_host_and_variable(host_vars, needle):
    rails, _ = normalize_rails(TWO_RAILS)
    entries, errors = host_rails(rails, "gpu07", host_vars)
    assert entries is None
    assert any(needle in e for e in errors), errors


def test_slash31_per_host_with_the_leaf_as_peer_gateway():
    rails, errors = normalize_rails(
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.1.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
            }
        ]
    )
    assert errors == []
    (entry,), errors = host_rails(rails, "n0", {"rdma_rail_host_index": 0})
    assert (entry["address"], entry["prefix_length"], entry["gateway"]) == (
        "10.1.0.1",
        31,
        "10.1.0.0",
    )
    (entry,), _ = host_rails(rails, "n5", {"rdma_rail_host_index": 5})
    assert (entry["address"], entry["gateway"]) == ("10.1.0.11", "10.1.0.10")
    _, errors = host_rails(rails, "n200", {"rdma_rail_host_index": 128})
    assert errors and "gives no /31 inside" in errors[0]


def test_rail_devices_map_a_host_by_pci_or_netdev():
    rails, _ = normalize_rails(TWO_RAILS)
    entries, errors = host_rails(
        rails,
        "odd",
        {
            "rdma_rail_host_index": 3,
            "rdma_rail_devices": {"rail0": {"pci": "0000:9A:00.0"}, "rail1": "mlx5_7"},
        },
    )
    assert errors == []
    assert entries[0]["selector"] == {"pci": "0000:9a:00.0"} and entries[0]["device"] is None
    assert entries[1]["selector"] == {"device": "mlx5_7"}


def test_fabric_names_both_hosts_of_a_duplicate_address():
    plan, errors = fabric_rails(
        TWO_RAILS,
        {
            "gpu01": {"rdma_rail_host_index": 1},
            "gpu02": {"rdma_rail_addresses": {"rail0": "10.0.0.1", "rail1": "10.0.1.2"}},
        },
    )
    assert plan is None
    assert errors == [
        "gpu02 and gpu01 have the same address 10.0.0.1 on rail rail0 (rdma_rail_host_index / "
        "rdma_rail_addresses)"
    ]
    with pytest.raises(RailPlanError, match="gpu02 and gpu01"):
        plan_or_raise(
            TWO_RAILS, {"gpu01": {"rdma_rail_host_index": 1}, "gpu02": {"rdma_rail_host_index": 1}}
        )


def test_fabric_plan_of_1000_hosts_by_8_rails_is_fast():
    rails = [
        {"name": f"rail{k}", "device": f"mlx5_{k}", "subnet": f"10.{k}.0.0/16"} for k in range(8)
    ]
    hosts = {f"gpu{i:04d}": {"rdma_rail_host_index": i + 1} for i in range(1000)}
    start = time.perf_counter()
    plan = plan_or_raise(rails, hosts)
    elapsed = time.perf_counter() - start
    assert len(plan) == 1000 and plan["gpu0999"][7]["address"] == "10.7.3.232"
    assert elapsed < 2.0, f"planning 1000 x 8 rails took {elapsed:.2f} s"


def _device(name, netdev, link_layer="Ethernet", pci=None, port=1):
    return {
        "name": name,
        "pci_address": pci,
        "ports": [{"port": port, "link_layer": link_layer, "netdev": netdev}],
    }


def test_resolve_binds_rails_to_ports_and_names_what_is_missing():
    rails, _ = normalize_rails(
        [
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "r1", "pci": "0000:2a:00.0", "subnet": "10.0.1.0/24"},
            {"name": "r2", "netdev": "ens3np0", "subnet": "10.0.2.0/24"},
        ]
    )
    entries, _ = host_rails(rails, "h", {"rdma_rail_host_index": 4})
    devices = [
        _device("mlx5_0", "ens1np0", pci="0000:1a:00.0"),
        _device("mlx5_1", "ens2np0", pci="0000:2a:00.0"),
        _device("mlx5_2", "ens3np0", pci="0000:3a:00.0"),
    ]
    bound, errors = resolve_rails(entries, devices, host="h")
    assert errors == []
    assert [(b["name"], b["device"], b["netdev"], b["pci"]) for b in bound] == [
        ("r0", "mlx5_0", "ens1np0", "0000:1a:00.0"),
        ("r1", "mlx5_1", "ens2np0", "0000:2a:00.0"),
        ("r2", "mlx5_2", "ens3np0", "0000:3a:00.0"),
    ]
    _, errors = resolve_rails(entries, devices[:2], host="h")
    assert errors == ["h: rail r2: no RDMA device with netdev ens3np0 on this host"]
    devices[0]["ports"][0]["link_layer"] = "InfiniBand"
    _, errors = resolve_rails(entries, devices, host="h")
    assert errors == ["h: rail r0: mlx5_0 port 1 is InfiniBand, the plan says ethernet"]


def test_natural_sort():
    names = ["mlx5_10", "mlx5_2", "mlx5_0", "mlx5_11", "mlx5_3", "rail1"]
    assert sorted(names, key=natural_key) == [
        "mlx5_0",
        "mlx5_2",
        "mlx5_3",
        "mlx5_10",
        "mlx5_11",
        "rail1",
    ]
