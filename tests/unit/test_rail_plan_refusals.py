"""Bad rail plans that the controller refuses before any change: each error
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


def _ib(mode="datagram", mtu=None, pkey_mtu=None, device="mlx5_0"):
    rail = {"name": "ib0", "device": device, "link_layer": "infiniband", "ipoib_mode": mode}
    if mtu is not None:
        rail["mtu"] = mtu
    pkey = {"partition": "storage"}
    if pkey_mtu is not None:
        pkey["mtu"] = pkey_mtu
    rail["pkeys"] = [pkey]
    return rail


# OpenSM partitions.conf mtu codes: 4 = 2048 bytes, 5 = 4096 bytes.
PARTS = [
    {"name": "Default", "pkey": 0x7FFF, "mtu": 5},
    {"name": "storage", "pkey": 0x10, "mtu": 4},
]


def _bound(rail, partitions=PARTS):
    from ansible_collections.rdma.fabric.plugins.module_utils.rails import bind_pkeys

    filled, errors = normalize_rails([rail])
    assert errors == []
    return bind_pkeys(filled, partitions)


def test_ipoib_mtu_follows_the_partition():
    bound, errors = _bound(_ib())
    assert errors == []
    assert bound[0]["mtu"] == 4092  # Default, 4096 - 4
    assert bound[0]["pkeys"][0]["mtu"] == 2044  # storage, 2048 - 4


def test_ipoib_mtu_above_the_partition_is_refused():
    _bound_rails, errors = _bound(_ib(pkey_mtu=4092))
    assert errors == [
        "rdma_rails[0] (ib0).pkeys[0].mtu 4092 is above the datagram IPoIB MTU of partition "
        "'storage' (IB MTU 2048 - 4 = 2044; the partition's mtu in "
        "ib_subnet_manager_partitions): the kernel caps it there"
    ]
    parts = [{"name": "Default", "pkey": 0x7FFF, "mtu": 4}, PARTS[1]]
    _bound_rails, errors = _bound(_ib(mtu=4092), parts)
    assert any(e.startswith("rdma_rails[0] (ib0).mtu 4092 is above") for e in errors)


def test_connected_mode_on_enhanced_ipoib_is_refused():
    from ansible_collections.rdma.fabric.plugins.module_utils.rails import resolve_rails

    def resolve(device, enhanced=None):
        rail = dict(_ib("connected", device=device), pkeys=[])
        filled, _ = normalize_rails([rail])
        devices = [
            {"name": device, "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ib0"}]}
        ]
        return resolve_rails(filled, devices, "gpu01", enhanced)

    _out, errors = resolve("mlx5_0")
    assert errors and errors[0].startswith("gpu01: rail ib0: ipoib_mode connected on mlx5_0")
    assert "datagram mode only" in errors[0]
    out, errors = resolve("mlx4_0")  # ConnectX-3: connected mode works
    assert errors == [] and out[0]["netdev"] == "ib0"
    # MLNX_OFED's ipoib_enhanced=1 applies to mlx5 only (review finding 4): mlx4 stays
    # connected-capable whatever the parameter says.
    _out, errors = resolve("mlx4_0", True)
    assert errors == []
    out, errors = resolve("mlx5_0", False)  # ipoib_enhanced=0 read from the host
    assert errors == []


# Review finding 7: plans still accepted (or ending in a traceback) after session 23.
def _host_errors(rails, host_vars):
    plan, errors = build_plan(rails, {"gpu01": host_vars}, None, [], None)
    assert plan is None, plan
    return "\n".join(errors)


def test_a_host_whose_address_is_the_rails_gateway():
    rails = [dict(GOOD[1], gateway="10.0.1.254")]
    text = _host_errors(rails, {"rdma_rail_host_index": 254})
    assert "gpu01: rail rail1 address 10.0.1.254 is the rail's gateway" in text
    assert "rdma_rails[0] (rail1).gateway" in text


@pytest.mark.parametrize(
    ("address", "what"), [("10.0.0.8", "network"), ("10.0.0.11", "broadcast"), ("10.0.0.9", "leaf")]
)
def test_a_30_host_address_that_is_not_the_hosts_end(address, what):
    rails = [dict(GOOD[0], prefix_length=30, gateway="peer")]
    text = _host_errors(rails, {"rdma_rail_addresses": {"rail0": address}})
    assert f"gpu01: rdma_rail_addresses.rail0 {address} is the {what} address of its /30" in text


def test_an_ipv6_address_outside_subnet6():
    rails = [dict(GOOD[0], subnet6="fd00:0:0:10::/64")]
    text = _host_errors(
        rails, {"rdma_rail_addresses": {"rail0": {"ipv4": "10.0.0.5", "ipv6": "fd00:0:0:99::5"}}}
    )
    assert "gpu01: rdma_rail_addresses.rail0.ipv6 fd00:0:0:99::5 is outside" in text
    assert "fd00:0:0:10::/64" in text


@pytest.mark.parametrize("garbled", ["fd00::zz", "10.0.0.5", 42, ["fd00::5"]])
def test_a_garbled_ipv6_address_is_named_not_a_traceback(garbled):
    rails = [dict(GOOD[0], subnet6="fd00:0:0:10::/64")]
    text = _host_errors(
        rails, {"rdma_rail_addresses": {"rail0": {"ipv4": "10.0.0.5", "ipv6": garbled}}}
    )
    assert "gpu01: rdma_rail_addresses.rail0.ipv6" in text


def test_index_0_on_an_ipv6_rail_is_the_subnet_router_anycast():
    # /31 rails take index 0 (the first /31's odd end); IPv6 subnet + 0 is the
    # subnet-router anycast address (RFC 4291 2.6.1), never a host's.
    rails = [dict(GOOD[0], prefix_length=31, gateway="peer", subnet6="fd00:0:0:10::/64")]
    text = _host_errors(rails, {"rdma_rail_host_index": 0})
    assert "gpu01: rdma_rail_host_index 0" in text and "subnet-router anycast" in text


@pytest.mark.parametrize(
    ("key", "subnet"),
    [
        ("subnet", "127.0.0.0/24"),
        ("subnet", "169.254.0.0/24"),
        ("subnet", "224.0.0.0/24"),
        ("subnet", "0.0.0.0/24"),
        ("subnet6", "fe80::/64"),
        ("subnet6", "ff02::/64"),
        ("subnet6", "::1/128"),
    ],
)
def test_loopback_link_local_and_multicast_subnets(key, subnet):
    rails = [dict(GOOD[0], **{key: subnet})]
    text = _errors(rails)
    assert f"rdma_rails[0] (rail0).{key} {subnet} is a " in text


@pytest.mark.parametrize(
    "value",
    [{"ipv4": None}, {}, ["10.0.0.5"], "10.0.0.5/33", "ten", 7, {"ipv4": "fd00::1"}],
)
def test_garbled_ipv4_addresses_are_named(value):
    text = _host_errors(GOOD[:1], {"rdma_rail_addresses": {"rail0": value}})
    assert "gpu01: rdma_rail_addresses.rail0" in text


@pytest.mark.parametrize("policy_mtu", [100, 1279, 9217, 12000, "big", "9000x", True])
def test_a_policy_mtu_out_of_range_is_refused_naming_the_variable_and_the_hosts(policy_mtu):
    """rdma_roce_policy.mtu is every ethernet rail's default MTU: a bad one was taken as
    it was (100) or silently replaced by 9000 ('big'), and failed on the hosts only
    after their files were written."""
    plan, errors = build_plan(GOOD, HOSTS, policy_mtu, [], {})
    assert plan is None
    text = "\n".join(errors)
    assert "rdma_roce_policy.mtu must be an MTU in bytes (1280-9216)" in text
    assert f"got {policy_mtu!r}" in text
    assert "gpu01, gpu02" in text
    # Every reader of the rails refuses it, not only the plan of the role.
    _filled, errors = normalize_rails(GOOD, policy_mtu)
    assert any(e.startswith("rdma_roce_policy.mtu must be") for e in errors), errors


@pytest.mark.parametrize("policy_mtu", [1280, 9216, "9000", None])
def test_a_policy_mtu_in_range_is_the_ethernet_rails_default(policy_mtu):
    plan, errors = build_plan(GOOD, HOSTS, policy_mtu, [], {})
    assert errors == []
    assert plan["gpu01"][0]["mtu"] == int(policy_mtu or 9000)


def test_a_policy_mtu_error_names_at_most_ten_hosts():
    hosts = {f"gpu{i:04d}": {"rdma_rail_host_index": i + 1} for i in range(1000)}
    rails = [dict(GOOD[0], subnet="10.0.0.0/16")]
    _plan, errors = build_plan(rails, hosts, 12000, [], {})
    assert errors[0].endswith(
        "gpu0000, gpu0001, gpu0002, gpu0003, gpu0004, gpu0005, gpu0006, gpu0007, gpu0008, "
        "gpu0009 and 990 more"
    ), errors
    assert len(errors[0]) < 400
