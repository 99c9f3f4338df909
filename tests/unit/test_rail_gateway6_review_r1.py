"""Review r1 of gateway6 / the /127 reserved identifiers: each test demonstrates a
finding (it fails on this branch)."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render

RAIL = {
    "name": "rail1",
    "netdev": "ens18np0",
    "subnet": "198.51.100.0/24",
    "gateway": "198.51.100.254",
    "subnet6": "2001:db8:0:11::/64",
    "gateway6": "2001:db8:0:11::fe",
    "table": 101,
}
HOSTS = {"gpu07": {"rdma_rail_host_index": 7}}


def test_a_gateway6_with_a_zone_id_is_refused():
    # Python's ipaddress (3.9+) takes "%zone"; the plan keeps it and renders it:
    # `netplan generate` fails ("invalid IP family '-1'"), systemd-networkd 252 logs
    # "Invalid Gateway='...%ens18np0', ignoring assignment" and drops the [Route],
    # NetworkManager's keyfile reader drops the route ("ignoring invalid gateway").
    plan, errors = build_plan(
        [dict(RAIL, gateway6="2001:db8:0:11::fe%ens18np0")], HOSTS, None, [], None
    )
    assert plan is None, plan["gpu07"][0]["gateway6"]
    assert "gateway6" in "\n".join(errors)


def test_a_link_local_gateway6_is_taken_as_the_tables_default():
    # A router's link-local address is the usual IPv6 next hop (RFC 4861 4.2/8); the
    # kernel, systemd-networkd 252 and `netplan generate` all take `::/0 via fe80::1`
    # in table 101 with no on-link flag. The plan refuses it as "outside subnet6".
    plan, errors = build_plan([dict(RAIL, gateway6="fe80::1")], HOSTS, None, [], None)
    assert errors == []
    (link,) = rail_render.rail_links(plan["gpu07"])
    assert {"to": "::/0", "via": "fe80::1", "table": 101} in link["routes"]


@pytest.mark.parametrize(
    "host", ["2001:db8:0:10:fdff:ffff:ffff:ff81", "2001:db8:0:10:fdff:ffff:ffff:ffff"]
)
def test_a_127_end_in_rfc_2526s_reserved_subnet_anycast_range_is_refused(host):
    # RFC 2526 2 (u/l bit 0 in modified EUI-64 IIDs) and the IANA Reserved IPv6
    # Interface Identifiers registry (RFC 5453): FDFF:FFFF:FFFF:FF80-FDFF:FFFF:FFFF:FFFF,
    # as the Linux kernel's ipv6_reserved_interfaceid and NetworkManager's
    # _is_reserved_ipv6_iid test. The plan refuses ffff:...:ff7f-ffff only.
    rail = {
        "name": "rail0",
        "netdev": "ens17np0",
        "subnet": "192.0.2.0/24",
        "prefix_length": 31,
        "gateway": "peer",
        "subnet6": "2001:db8:0:10::/64",
    }
    hosts = {"gpu01": {"rdma_rail_addresses": {"rail0": {"ipv4": "192.0.2.1", "ipv6": host}}}}
    plan, errors = build_plan([rail], hosts, None, [], None)
    assert plan is None, plan["gpu01"][0]["address6"]
    assert "reserved subnet anycast" in "\n".join(errors)
