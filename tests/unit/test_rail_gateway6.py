"""`gateway6`: the IPv6 gateway of a shared (L2) rail with subnet6, as `gateway` is the
IPv4 one. The rail's table gets `::/0` via it on every backend (networkd, netplan,
NetworkManager) and the drift check compares it; an address outside subnet6, the
subnet-router anycast, a host's own address, an L3 rail (the leaf's end of each /127 is
the gateway there: `gateway: peer`) and a rail without subnet6 are refused naming the
variable."""

from __future__ import annotations

import configparser

import pytest
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.rails import fabric_rails

GW6 = "2001:db8:0:11::fe"
RAIL = {
    "name": "rail1",
    "netdev": "ens18np0",
    "subnet": "198.51.100.0/24",
    "gateway": "198.51.100.254",
    "subnet6": "2001:db8:0:11::/64",
    "gateway6": GW6,
    "table": 101,
}
HOSTS = {"gpu01": {"rdma_rail_host_index": 1}, "gpu07": {"rdma_rail_host_index": 7}}


def _gpu07(rail):
    """gpu07's entry of the plan of one rail, which must have no errors."""
    plan, errors = build_plan([rail], HOSTS, None, [], None)
    assert errors == []
    return plan["gpu07"][0]


def _errors(rail, hosts=None):
    plan, errors = build_plan([rail], hosts or HOSTS, None, [], None)
    assert plan is None, plan
    return "\n".join(errors)


# A router's link-local address is the usual IPv6 next hop (RFC 4861 4.2, 8): the kernel,
# systemd-networkd and `netplan generate` take `::/0 via fe80::1` in the rail's table as
# they take one via an address of subnet6, no on-link flag needed.
LINK_LOCAL = "fe80::1"


@pytest.fixture(params=[GW6, LINK_LOCAL], ids=["in-subnet6", "link-local"])
def gateway6(request):
    return request.param


@pytest.fixture
def link(gateway6):
    plan, errors = fabric_rails([dict(RAIL, gateway6=gateway6)], HOSTS)
    assert errors == []
    (link,) = rail_render.rail_links(plan["gpu07"])
    return link


def test_each_host_of_a_shared_rail_gets_the_ipv6_gateway():
    plan, errors = build_plan([RAIL], HOSTS, None, [], None)
    assert errors == []
    entry = plan["gpu07"][0]
    assert (entry["address6"], entry["prefix_length6"], entry["gateway6"]) == (
        "2001:db8:0:11::7",
        64,
        GW6,
    )
    assert entry["gateway"] == "198.51.100.254"


def test_the_rails_table_gets_the_ipv6_default_as_it_gets_the_ipv4_one(link, gateway6):
    assert {"to": "::/0", "via": gateway6, "table": 101} in link["routes"]
    assert {"to": "0.0.0.0/0", "via": "198.51.100.254", "table": 101} in link["routes"]
    # a shared rail: its subnet is on-link, never via the gateway, in no table
    assert not [r for r in link["routes"] if r.get("via") and r["to"] != "::/0" and ":" in r["to"]]
    assert {"to": "2001:db8:0:11::/64", "table": 101} in link["routes"]


def test_networkd_writes_the_ipv6_default_route(link, gateway6):
    text = rail_render.networkd_files([link])["40-rdma-rail-rail1.network"]
    assert f"[Route]\nDestination=::/0\nGateway={gateway6}\nTable=101\n" in text
    assert "GatewayOnLink" not in text


def test_netplan_writes_the_ipv6_default_route(link, gateway6):
    config = rail_render.netplan_config([link])["network"]["ethernets"]["ens18np0"]
    assert {"to": "default", "via": gateway6, "table": 101} in config["routes"]
    assert {"to": "default", "via": "198.51.100.254", "table": 101} in config["routes"]


def test_networkmanager_writes_the_ipv6_default_route(link, gateway6):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(rail_render.nm_keyfiles([link])["rdma-rail1.nmconnection"])
    ipv6 = dict(parser["ipv6"])
    routes = {ipv6[k]: ipv6.get(k + "_options") for k in ipv6 if k[5:].isdigit()}
    assert routes[f"::/0,{gateway6}"] == "table=101"
    assert ipv6["never-default"] == "true"  # the main table's default stays the host's


def test_the_drift_check_names_a_missing_ipv6_default(link, gateway6):
    addr = [
        {
            "ifname": "ens18np0",
            "mtu": link["mtu"],
            "addr_info": [
                {"local": "198.51.100.7", "prefixlen": 24, "scope": "global"},
                {"local": "2001:db8:0:11::7", "prefixlen": 64, "scope": "global"},
                # the kernel's own link-local address: never "extra"
                {"local": "fe80::5054:ff:fe00:7", "prefixlen": 64, "scope": "link"},
            ],
        }
    ]
    rules = [{"src": r["from"], "table": str(r["table"])} for r in link["rules"]]
    sysctl = "\n".join(
        f"{p}:{v}"
        for p, (_k, v) in zip(rail_render.sysctl_paths([link]), rail_render.SYSCTLS, strict=True)
    )
    routes = [
        {
            "dst": "default" if r["to"] in ("0.0.0.0/0", "::/0") else r["to"],
            "gateway": r.get("via"),
            "dev": "ens18np0",
            "table": str(r["table"]),
        }
        for r in link["routes"]
    ]
    assert rail_render.live_drift([link], addr, rules, sysctl, routes) == {}
    routes = [r for r in routes if r["gateway"] != gateway6]
    assert rail_render.live_drift([link], addr, rules, sysctl, routes) == {
        "ens18np0": [f"route to ::/0 via {gateway6} table 101 missing"]
    }


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("gateway6", "expect"),
    [
        (
            "2001:db8:0:99::1",
            "rdma_rails[0] (rail1).gateway6 2001:db8:0:99::1 is outside the rail's subnet6 "
            "2001:db8:0:11::/64",
        ),
        (
            "198.51.100.254",
            "gateway6 198.51.100.254 is outside the rail's subnet6 2001:db8:0:11::/64",
        ),
        ("peer", "rdma_rails[0] (rail1).gateway6 must be an IPv6 address; got 'peer'"),
        (
            "2001:db8:0:11::",
            "rdma_rails[0] (rail1).gateway6 2001:db8:0:11:: is the subnet-router anycast "
            "address of 2001:db8:0:11::/64",
        ),
        # Python's ipaddress (3.9+) takes "%zone"; the plan kept it and rendered it:
        # `netplan generate` fails ("invalid IP family '-1'"), systemd-networkd 252 logs
        # "Invalid Gateway='...%ens18np0', ignoring assignment" and drops the [Route],
        # NetworkManager's keyfile reader drops the route ("ignoring invalid gateway").
        (
            f"{GW6}%ens18np0",
            "rdma_rails[0] (rail1).gateway6 must be given without a zone ID (%ens18np0); "
            f"got '{GW6}%ens18np0'",
        ),
        (
            "fe80::1%ens18np0",
            "rdma_rails[0] (rail1).gateway6 must be given without a zone ID (%ens18np0)",
        ),
        # reserved interface identifiers (the kernel never takes them as a host's)
        (
            "fe80::",
            "rdma_rails[0] (rail1).gateway6 fe80:: is the subnet-router anycast address "
            "(RFC 4291 2.6.1) of its /64",
        ),
        (
            "2001:db8:0:11:fdff:ffff:ffff:ff80",
            "rdma_rails[0] (rail1).gateway6 2001:db8:0:11:fdff:ffff:ffff:ff80 is a reserved "
            "subnet anycast address (RFC 2526",
        ),
        (
            "fe80::fdff:ffff:ffff:ffff",
            "gateway6 fe80::fdff:ffff:ffff:ffff is a reserved subnet anycast address",
        ),
    ],
)
def test_a_bad_gateway6_is_refused_naming_the_variable(gateway6, expect):
    assert expect in _errors(dict(RAIL, gateway6=gateway6))


def test_a_gateway6_without_subnet6_is_refused():
    rail = {k: v for k, v in RAIL.items() if k != "subnet6"}
    assert "rdma_rails[0] (rail1).gateway6 needs a subnet6" in _errors(rail)


@pytest.mark.parametrize("prefix_length", [31, 30])
def test_a_gateway6_on_an_l3_rail_is_refused_for_gateway_peer(prefix_length):
    rail = dict(RAIL, prefix_length=prefix_length, gateway="peer")
    text = _errors(rail)
    assert (
        f"rdma_rails[0] (rail1).gateway6 {GW6}: a /{prefix_length} rail gives each host its "
        "own /127, so one fixed gateway fits at most one host; use gateway: peer"
    ) in text


def test_a_link_local_gateway6_is_taken_as_the_tables_default():
    # A router's link-local address is the usual IPv6 next hop (RFC 4861 4.2/8); the
    # kernel, systemd-networkd 252 and `netplan generate` all take `::/0 via fe80::1`
    # in table 101 with no on-link flag. The plan refused it as "outside subnet6".
    (link,) = rail_render.rail_links([_gpu07(dict(RAIL, gateway6="fe80::1"))])
    assert {"to": "::/0", "via": "fe80::1", "table": 101} in link["routes"]


def test_a_link_local_gateway6_on_an_l3_rail_is_refused_for_gateway_peer():
    text = _errors(dict(RAIL, prefix_length=31, gateway="peer", gateway6=LINK_LOCAL))
    assert (
        f"rdma_rails[0] (rail1).gateway6 {LINK_LOCAL}: on a /31 rail the leaf's end of each "
        "host's /127 is its IPv6 gateway (gateway: peer)"
    ) in text


def test_the_top_of_a_shared_64_is_a_gateway6_rfc_6164_covers_point_to_point_only():
    # RFC 6164 5.1 (b) keeps ffff:ffff:ffff:ff7f-ffff off point-to-point links; on a
    # shared link they are unicast identifiers (RFC 2526's range has the u/l bit clear:
    # fdff:...), which the kernel and NetworkManager take.
    top = "2001:db8:0:11:ffff:ffff:ffff:ff80"
    assert _gpu07(dict(RAIL, gateway6=top))["gateway6"] == top


def test_a_subnet6_with_a_zone_id_is_refused():
    text = _errors(dict(RAIL, subnet6="2001:db8:0:11::%ens18np0/64", gateway6=None))
    assert (
        "rdma_rails[0] (rail1).subnet6 must be given without a zone ID (%ens18np0); got "
        "'2001:db8:0:11::%ens18np0/64'"
    ) in text


def test_an_explicit_ipv6_address_with_a_zone_id_is_refused_naming_the_host():
    given = "2001:db8:0:11::9%ens18np0/64"
    hosts = {"gpu01": {"rdma_rail_addresses": {"rail1": {"ipv4": "198.51.100.9", "ipv6": given}}}}
    assert (
        "gpu01: rdma_rail_addresses.rail1.ipv6 must be given without a zone ID (%ens18np0)"
    ) in _errors(RAIL, hosts)


def test_a_host_whose_ipv6_address_is_the_gateway6_is_named():
    text = _errors(dict(RAIL, gateway6="2001:db8:0:11::7"))
    assert (
        "gpu07: rail rail1 address 2001:db8:0:11::7 is the rail's gateway "
        "(rdma_rails[0] (rail1).gateway6)"
    ) in text
    assert "gpu01" not in text


def test_an_explicit_ipv6_address_on_the_gateway6_is_named():
    hosts = {"gpu01": {"rdma_rail_addresses": {"rail1": {"ipv4": "198.51.100.9", "ipv6": GW6}}}}
    assert f"gpu01: rail rail1 address {GW6} is the rail's gateway" in _errors(RAIL, hosts)
