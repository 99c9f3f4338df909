"""IPv6 on L3 rails: an L3 rail (prefix_length 31 or 30) is L3 in both families, so each
host owns the /127 of its subnet6 that its rdma_rail_host_index gives (RFC 6164): the
leaf the first address, the host the second, the leaf the gateway with `gateway: peer`.
Rendered for every backend and compared with live `ip -j` state; shared (L2) rails
keep subnet6 + index on the shared prefix."""

from __future__ import annotations

import configparser

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.rails import fabric_rails

L3 = {
    "name": "rail0",
    "netdev": "ens17np0",
    "subnet": "10.0.0.0/24",
    "prefix_length": 31,
    "gateway": "peer",
    "subnet6": "2001:db8:0:10::/64",
}
HOSTS = {"gpu01": {"rdma_rail_host_index": 1}, "gpu07": {"rdma_rail_host_index": 7}}


def _entry(rail, host="gpu07", hosts=None):
    plan, errors = fabric_rails([rail], hosts or HOSTS)
    assert errors == []
    return plan[host][0]


def _errors(rail, hosts):
    plan, errors = build_plan([rail], hosts, None, [], None)
    assert plan is None, plan
    return "\n".join(errors)


# ---------------------------------------------------------------- addresses


@pytest.mark.parametrize("prefix_length", [31, 30])
def test_each_host_owns_the_127_of_its_index_with_the_leaf_as_gateway(prefix_length):
    entry = _entry(dict(L3, prefix_length=prefix_length))
    assert (entry["address6"], entry["prefix_length6"], entry["gateway6"]) == (
        "2001:db8:0:10::f",
        127,
        "2001:db8:0:10::e",
    )


def test_without_gateway_peer_the_127_has_no_gateway():
    entry = _entry(dict(L3, gateway=None))
    assert (entry["address6"], entry["gateway6"]) == ("2001:db8:0:10::f", None)


def test_a_shared_rail_keeps_subnet6_plus_index_on_its_prefix():
    entry = _entry(dict(L3, prefix_length=None, gateway=None))
    assert (entry["address6"], entry["prefix_length6"], entry["gateway6"]) == (
        "2001:db8:0:10::7",
        64,
        None,
    )


def test_an_explicit_ipv6_address_is_the_second_end_of_its_127():
    hosts = {
        "gpu01": {
            "rdma_rail_addresses": {"rail0": {"ipv4": "10.0.0.9", "ipv6": "2001:db8:0:10::21"}}
        }
    }
    entry = _entry(L3, "gpu01", hosts)
    assert (entry["address6"], entry["gateway6"]) == ("2001:db8:0:10::21", "2001:db8:0:10::20")


# ---------------------------------------------------------------- refusals


def test_a_subnet6_longer_than_127_on_an_l3_rail_is_refused_naming_the_variable():
    text = _errors(dict(L3, subnet6="2001:db8:0:10::1/128"), HOSTS)
    assert "rdma_rails[0] (rail0).subnet6 2001:db8:0:10::1/128 holds no /127" in text


def test_a_subnet6_too_small_for_the_hosts_127s_names_the_host():
    text = _errors(dict(L3, subnet6="2001:db8:0:10::10/126"), HOSTS)
    assert "gpu07: rdma_rail_host_index 7 gives no /127 inside rail rail0's subnet6" in text
    assert "(0-1)" in text and "gpu01" not in text


def test_the_leafs_end_as_an_explicit_address_is_refused():
    hosts = {
        "gpu01": {
            "rdma_rail_addresses": {"rail0": {"ipv4": "10.0.0.9", "ipv6": "2001:db8:0:10::20"}}
        }
    }
    text = _errors(L3, hosts)
    assert (
        "gpu01: rdma_rail_addresses.rail0.ipv6 2001:db8:0:10::20 is the leaf's (first) end" in text
    )
    assert "the host's is 2001:db8:0:10::21" in text


def test_index_0_would_give_the_leaf_the_subnet_router_anycast_address():
    text = _errors(L3, {"gpu00": {"rdma_rail_host_index": 0}})
    assert "gpu00: rdma_rail_host_index 0 gives the leaf end of its /127 on rail rail0" in text
    assert "subnet-router anycast" in text and "RFC 6164" in text


def test_the_highest_identifiers_of_a_64_are_refused_as_rfc_6164_keeps_them_off_p2p():
    # ffff:ffff:ffff:ff80 is RFC 2526's range with the u/l bit set: not RFC 2526's
    # (fdff:..., tests/unit/test_rail_gateway6_review_r1.py), RFC 6164 5.1 (b)'s.
    rail = dict(L3, subnet6="2001:db8:0:10:ffff:ffff:ffff:ff00/120")
    text = _errors(rail, {"gpu64": {"rdma_rail_host_index": 64}})
    assert "gpu64: rdma_rail_host_index 64 gives the leaf end" in text
    assert "kept off point-to-point links by RFC 6164 5.1 (b)" in text
    assert "RFC 2526" not in text


@pytest.mark.parametrize(
    "hosts",
    [
        {"gpu63": {"rdma_rail_host_index": 63}},
        {
            "gpu63": {
                "rdma_rail_addresses": {
                    "rail0": {"ipv4": "10.0.0.9", "ipv6": "2001:db8:0:10:ffff:ffff:ffff:ff7f"}
                }
            }
        },
    ],
    ids=["index", "explicit"],
)
def test_the_host_end_at_ff7f_is_refused_as_rfc_6164_5_1_b_spells_the_range(hosts):
    """RFC 6164 5.1 (b): "the highest 128 values (i.e., ffff:ffff:ffff:ff7f to
    ffff:ffff:ffff:ffff)" - ff7f included (index 63 of a /120 at the top of its /64 gives
    the /127 ff7e-ff7f: the leaf ff7e, the host ff7f)."""
    rail = dict(L3, subnet6="2001:db8:0:10:ffff:ffff:ffff:ff00/120")
    text = _errors(rail, hosts)
    assert "gives the host end of its /127 on rail rail0 the address" in text
    assert (
        "2001:db8:0:10:ffff:ffff:ffff:ff7f, an interface identifier kept off point-to-point "
        "links by RFC 6164 5.1 (b)"
    ) in text


def test_the_127_just_below_the_reserved_top_is_a_hosts():
    rail = dict(L3, subnet6="2001:db8:0:10:ffff:ffff:ffff:ff00/120")
    entry = _entry(rail, "gpu62", {"gpu62": {"rdma_rail_host_index": 62}})
    assert (entry["address6"], entry["gateway6"]) == (
        "2001:db8:0:10:ffff:ffff:ffff:ff7d",
        "2001:db8:0:10:ffff:ffff:ffff:ff7c",
    )


# The advice of a reserved-identifier refusal fits its case: the subnet-router anycast
# (all-zero identifier) sits at the bottom of a /64, the reserved subnet anycasts at its
# top; an index is moved by rdma_rail_host_index, an explicit address by itself.
TOP = "2001:db8:0:10:ffff:ffff:ffff:ff00/120"


def _explicit(ipv6):
    return {"rdma_rail_addresses": {"rail0": {"ipv4": "10.0.0.9", "ipv6": ipv6}}}


def test_index_0_at_the_bottom_of_a_64_is_told_to_start_from_index_1():
    text = _errors(L3, {"gpu00": {"rdma_rail_host_index": 0}})
    assert "give gpu00 rdma_rail_host_index 1 or higher" in text
    assert "or set rdma_rail_addresses.rail0.ipv6" in text


def test_an_explicit_address_at_the_bottom_of_a_64_is_told_another_127():
    text = _errors(L3, {"gpu01": _explicit("2001:db8:0:10::1")})
    assert "gpu01: rdma_rail_addresses.rail0.ipv6 gives the leaf end" in text
    assert "set rdma_rail_addresses.rail0.ipv6 to the host end of another /127" in text
    assert "2001:db8:0:10::3" in text and "rdma_rail_host_index" not in text


def test_a_high_index_at_the_top_of_a_64_is_told_a_lower_index_or_another_subnet6():
    text = _errors(dict(L3, subnet6=TOP), {"gpu64": {"rdma_rail_host_index": 64}})
    assert "gpu64: rdma_rail_host_index 64 gives the leaf end" in text
    # index 62's /127 is ff7c-ff7d, the last below ff7f
    assert "give gpu64 a lower rdma_rail_host_index (62 or lower)" in text
    assert (
        f"move rdma_rails[0] (rail0).subnet6 ({TOP}) away from the reserved top of its /64"
    ) in text
    assert "or set rdma_rail_addresses.rail0.ipv6" in text
    assert "from 1" not in text and "1 or higher" not in text


def test_a_subnet6_wholly_in_the_reserved_top_is_told_no_index():
    rail = dict(L3, subnet6="2001:db8:0:10:ffff:ffff:ffff:ff80/121")
    text = _errors(rail, {"gpu01": {"rdma_rail_host_index": 1}})
    assert "gpu01: rdma_rail_host_index 1 gives the leaf end" in text
    assert "lower rdma_rail_host_index" not in text
    assert "move rdma_rails[0] (rail0).subnet6 (2001:db8:0:10:ffff:ffff:ffff:ff80/121) away" in text


def test_an_explicit_address_at_the_top_of_a_64_is_told_the_highest_host_end():
    text = _errors(L3, {"gpu01": _explicit("2001:db8:0:10:ffff:ffff:ffff:ff81")})
    assert "gpu01: rdma_rail_addresses.rail0.ipv6 gives the leaf end" in text
    assert (
        "set rdma_rail_addresses.rail0.ipv6 to the host end of a /127 below the reserved "
        "top of its /64 (at most 2001:db8:0:10:ffff:ffff:ffff:ff7d)"
    ) in text
    assert "rdma_rail_host_index" not in text


# RFC 2526's reserved subnet anycast identifiers (fdff:ffff:ffff:ff80-ffff) sit below the
# top of a /64: the advice names the highest index below them, and an explicit address
# may go below or above them.
RFC2526 = "2001:db8:0:10:fdff:ffff:ffff:ff00/120"


def test_a_high_index_in_rfc_2526s_range_is_told_a_lower_index_or_another_subnet6():
    text = _errors(dict(L3, subnet6=RFC2526), {"gpu64": {"rdma_rail_host_index": 64}})
    assert (
        "gpu64: rdma_rail_host_index 64 gives the leaf end of its /127 on rail rail0 the "
        "address 2001:db8:0:10:fdff:ffff:ffff:ff80, a reserved subnet anycast address "
        "(RFC 2526"
    ) in text
    # index 63's /127 is ff7e-ff7f, the last below ff80
    assert "give gpu64 a lower rdma_rail_host_index (63 or lower)" in text
    assert (
        f"move rdma_rails[0] (rail0).subnet6 ({RFC2526}) away from RFC 2526's reserved "
        "subnet anycast identifiers of its /64"
    ) in text
    assert "top" not in text and "RFC 6164" not in text


def test_the_127_just_below_rfc_2526s_range_is_a_hosts():
    entry = _entry(dict(L3, subnet6=RFC2526), "gpu63", {"gpu63": {"rdma_rail_host_index": 63}})
    assert entry["address6"] == "2001:db8:0:10:fdff:ffff:ffff:ff7f"


def test_a_subnet6_wholly_in_rfc_2526s_range_is_told_no_index():
    rail = dict(L3, subnet6="2001:db8:0:10:fdff:ffff:ffff:ff80/121")
    text = _errors(rail, {"gpu01": {"rdma_rail_host_index": 1}})
    assert "reserved subnet anycast address (RFC 2526" in text
    assert "lower rdma_rail_host_index" not in text


@pytest.mark.parametrize(
    "host", ["2001:db8:0:10:fdff:ffff:ffff:ff81", "2001:db8:0:10:fdff:ffff:ffff:ffff"]
)
def test_a_127_end_in_rfc_2526s_reserved_subnet_anycast_range_is_refused(host):
    # RFC 2526 2 (u/l bit 0 in modified EUI-64 IIDs) and the IANA Reserved IPv6
    # Interface Identifiers registry (RFC 5453): FDFF:FFFF:FFFF:FF80-FDFF:FFFF:FFFF:FFFF,
    # as the Linux kernel's ipv6_reserved_interfaceid and NetworkManager's
    # _is_reserved_ipv6_iid test. The plan refused ffff:...:ff7f-ffff only.
    plan, errors = build_plan([L3], {"gpu01": _explicit(host)}, None, [], None)
    assert plan is None, plan["gpu01"][0]["address6"]
    assert "reserved subnet anycast" in "\n".join(errors)


def test_an_explicit_address_in_rfc_2526s_range_is_told_a_host_end_below_or_above():
    text = _errors(L3, {"gpu01": _explicit("2001:db8:0:10:fdff:ffff:ffff:ffff")})
    assert (
        "gpu01: rdma_rail_addresses.rail0.ipv6 gives the leaf end of its /127 on rail rail0 "
        "the address 2001:db8:0:10:fdff:ffff:ffff:fffe, a reserved subnet anycast address"
    ) in text
    assert (
        "set rdma_rail_addresses.rail0.ipv6 to the host end of a /127 below RFC 2526's "
        "reserved subnet anycast identifiers of its /64 (at most "
        "2001:db8:0:10:fdff:ffff:ffff:ff7f), or above them (from 2001:db8:0:10:fe00::1)"
    ) in text
    assert "rdma_rail_host_index" not in text


def test_an_explicit_subnet_router_anycast_on_a_shared_rail_is_told_another_address():
    rail = dict(L3, prefix_length=None, gateway=None)
    text = _errors(rail, {"gpu01": _explicit("2001:db8:0:10::")})
    assert "subnet-router anycast" in text
    assert "set rdma_rail_addresses.rail0.ipv6 to another address of" in text
    assert "2001:db8:0:10::1" in text and "rdma_rail_host_index" not in text


# ---------------------------------------------------------------- rendering

LEAF6 = "2001:db8:0:10::e"


@pytest.fixture
def link():
    (link,) = rail_render.rail_links([dict(_entry(L3), table=100)])
    return link


def test_the_link_has_the_127_its_route_and_the_default_via_the_leaf(link):
    assert "2001:db8:0:10::f/127" in link["addresses"]
    # no Scope= on an IPv6 route: networkd warns and ignores it (networkd-route.c)
    assert {"to": "2001:db8:0:10::e/127", "table": 100} in link["routes"]
    assert {"to": "::/0", "via": LEAF6, "table": 100} in link["routes"]
    assert {"to": "2001:db8:0:10::/64", "via": LEAF6, "table": 100} in link["routes"]
    assert {"to": "2001:db8:0:10::/64", "via": LEAF6, "table": None} in link["routes"]
    assert {"from": "2001:db8:0:10::f", "table": 100, "priority": 100} in link["rules"]


def test_networkd_writes_the_ipv6_default_route_in_the_rails_table(link):
    text = rail_render.networkd_files([link])["40-rdma-rail-rail0.network"]
    assert "Address=2001:db8:0:10::f/127" in text
    assert f"[Route]\nDestination=::/0\nGateway={LEAF6}\nTable=100\n" in text
    assert "[Route]\nDestination=2001:db8:0:10::e/127\nTable=100\n" in text


def test_netplan_writes_the_ipv6_default_route_in_the_rails_table(link):
    config = rail_render.netplan_config([link])["network"]["ethernets"]["ens17np0"]
    assert "2001:db8:0:10::f/127" in config["addresses"]
    assert {"to": "default", "via": LEAF6, "table": 100} in config["routes"]
    assert {"to": "default", "via": "10.0.0.14", "table": 100} in config["routes"]
    yaml.safe_dump(config)


def test_networkmanager_writes_the_ipv6_default_route_in_the_rails_table(link):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(rail_render.nm_keyfiles([link])["rdma-rail0.nmconnection"])
    ipv6 = dict(parser["ipv6"])
    assert ipv6["address1"] == "2001:db8:0:10::f/127"
    routes = {ipv6[k]: ipv6.get(k + "_options") for k in ipv6 if k[5:].isdigit()}
    assert routes[f"::/0,{LEAF6}"] == "table=100"
    assert routes[f"2001:db8:0:10::/64,{LEAF6}"] is None


# ---------------------------------------------------------------- drift


def _live(link, drop_route=None, prefix=127):
    addr = [
        {
            "ifname": "ens17np0",
            "mtu": link["mtu"],
            "addr_info": [
                {"family": "inet", "local": "10.0.0.15", "prefixlen": 31, "scope": "global"},
                {"family": "inet6", "local": "2001:db8:0:10::f", "prefixlen": prefix},
            ],
        }
    ]
    routes = [
        {
            "dst": "default" if r["to"] in ("0.0.0.0/0", "::/0") else r["to"],
            "gateway": r.get("via"),
            "dev": "ens17np0",
            **({"table": str(r["table"])} if r["table"] is not None else {}),
        }
        for r in link["routes"]
        if r["to"] != drop_route
    ]
    rules = [{"src": r["from"], "table": str(r["table"])} for r in link["rules"]]
    sysctl = "\n".join(
        f"{p}:{v}"
        for p, (_k, v) in zip(rail_render.sysctl_paths([link]), rail_render.SYSCTLS, strict=True)
    )
    return addr, rules, sysctl, routes


def test_live_drift_sees_the_ipv6_default_route_and_the_127(link):
    assert rail_render.live_drift([link], *_live(link)[:3], _live(link)[3]) == {}
    addr, rules, sysctl, routes = _live(link, drop_route="::/0")
    assert rail_render.live_drift([link], addr, rules, sysctl, routes) == {
        "ens17np0": [f"route to ::/0 via {LEAF6} table 100 missing"]
    }
    addr, rules, sysctl, routes = _live(link, prefix=64)
    assert rail_render.live_drift([link], addr, rules, sysctl, routes)["ens17np0"] == [
        "address 2001:db8:0:10::f/127 missing",
        "extra address 2001:db8:0:10::f/64",
    ]
