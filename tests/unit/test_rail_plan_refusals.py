"""Bad rail plans that the controller refuses before any change (issue 23): each error
names the variable and, where one is at fault, the host(s)."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from ansible_collections.rdma.fabric.plugins.module_utils.rails import normalize_rails

GOOD = [
    {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
    {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24"},
]
HOSTS = {"gpu01": {"rdma_rail_host_index": 1}, "gpu02": {"rdma_rail_host_index": 2}}


def _errors(rails, hosts=None, management=None):
    plan, errors = build_plan(rails, hosts or HOSTS, None, [], management)
    assert plan is None, plan
    return "\n".join(errors)


def test_the_good_plan_passes():
    plan, errors = build_plan(GOOD, HOSTS, None, [], {"gpu01": "192.168.1.0/24"})
    assert errors == []
    assert plan["gpu02"][1]["address"] == "10.0.1.2"


@pytest.mark.parametrize("second", ["10.0.0.0/24", "10.0.0.128/25", "10.0.0.0/16"])
def test_two_rails_with_one_subnet(second):
    rails = [GOOD[0], dict(GOOD[1], subnet=second)]
    assert f"rdma_rails[1] (rail1).subnet {second} overlaps rdma_rails[0] (rail0).subnet" in (
        _errors(rails)
    )


def test_a_pkey_subnet_overlapping_a_rail():
    rails = [
        {
            "name": "ib0",
            "device": "mlx5_0",
            "link_layer": "infiniband",
            "subnet": "10.0.0.0/24",
            "pkeys": [{"partition": "storage", "subnet": "10.0.0.0/24"}],
        }
    ]
    _filled, errors = normalize_rails(rails)
    assert any("rdma_rails[0] (ib0).pkeys[0].subnet 10.0.0.0/24 overlaps" in e for e in errors)


def test_the_same_ipv6_64_on_every_rail():
    rails = [dict(r, subnet6="fd00:1::/64") for r in GOOD]
    assert "rdma_rails[1] (rail1).subnet6 fd00:1::/64 overlaps rdma_rails[0] (rail0).subnet6" in (
        _errors(rails)
    )


def test_a_rail_subnet_on_the_management_network_names_the_hosts():
    text = _errors(GOOD, management={"gpu01": "10.0.0.0/24", "gpu02": "10.0.0.0/16"})
    assert "rdma_rails[0] (rail0).subnet 10.0.0.0/24 overlaps the management network" in text
    assert "gpu01" in text and "gpu02" in text
    assert (
        "rdma_rails[1] (rail1).subnet 10.0.1.0/24 overlaps the management network 10.0.0.0/16"
        in text
    )


@pytest.mark.parametrize(
    ("address", "what"), [("10.0.0.0", "network"), ("10.0.0.255", "broadcast")]
)
def test_network_or_broadcast_address(address, what):
    hosts = {"gpu01": {"rdma_rail_host_index": 1, "rdma_rail_addresses": {"rail0": address}}}
    assert f"gpu01: rdma_rail_addresses.rail0 {address} is the {what} address of" in (
        _errors(GOOD, hosts)
    )


@pytest.mark.parametrize("gateway", ["10.0.1.0", "10.0.1.255"])
def test_gateway_on_network_or_broadcast(gateway):
    rails = [GOOD[0], dict(GOOD[1], gateway=gateway)]
    assert f"rdma_rails[1] (rail1).gateway {gateway} is the" in _errors(rails)


@pytest.mark.parametrize("prefix", [30, 31])
def test_a_fixed_gateway_on_a_per_host_block_rail(prefix):
    rails = [dict(GOOD[0], subnet="10.0.0.0/24", prefix_length=prefix, gateway="10.0.0.0")]
    text = _errors(rails)
    assert "rdma_rails[0] (rail0).gateway 10.0.0.0" in text
    assert "gateway: peer" in text


@pytest.mark.parametrize("mtu", [65520, 100, "big"])
def test_pkey_child_mtu(mtu):
    rails = [
        {
            "name": "ib0",
            "device": "mlx5_0",
            "link_layer": "infiniband",
            "pkeys": [{"partition": "storage", "mtu": mtu}],
        }
    ]
    _filled, errors = normalize_rails(rails)
    assert any(
        e.startswith("rdma_rails[0] (ib0).pkeys[0].mtu must be 1280-4092") and repr(mtu) in e
        for e in errors
    ), errors
