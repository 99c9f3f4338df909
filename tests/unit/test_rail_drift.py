"""The live drift check covers routes, rules, sysctls and extra addresses: a foreign
change after the run (a route deleted, an address added by hand) is
reported by --check and repaired by the next run. Fixtures in the shape of iproute2's
JSON (`ip -j addr show`, `ip -j rule show`, `ip -j route show table all`: main-table
routes carry no "table" key, the default route is "dst": "default", a host route has
no /32)."""

from __future__ import annotations

import json

from ansible_collections.rdma.fabric.plugins.filter.rail import rail_drift
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render

LINK = {
    "rail": "rail1",
    "partition": None,
    "netdev": "ens18np0",
    "kind": "ethernet",
    "parent": None,
    "mode": None,
    "pkey": None,
    "mtu": 4200,
    "addresses": ["10.0.1.7/24", "fd00:0:0:11::7/64"],
    "routes": [
        {"to": "10.0.1.0/24", "table": 101, "scope": "link"},
        {"to": "0.0.0.0/0", "via": "10.0.1.254", "table": 101},
        {"to": "fd00:0:0:11::/64", "table": 101, "scope": "link"},
    ],
    "rules": [
        {"from": "10.0.1.7", "table": 101, "priority": 101},
        {"from": "fd00:0:0:11::7", "table": 101, "priority": 101},
    ],
    "children": [],
}


def _addr(extra=()):
    info = [
        {"family": "inet", "local": "10.0.1.7", "prefixlen": 24, "scope": "global"},
        {"family": "inet6", "local": "fd00:0:0:11::7", "prefixlen": 64, "scope": "global"},
        {"family": "inet6", "local": "fe80::a8bb:ccff:fe00:18", "prefixlen": 64, "scope": "link"},
    ]
    return [{"ifname": "ens18np0", "mtu": 4200, "addr_info": info + list(extra)}]


RULES4 = [
    {"priority": 0, "src": "all", "table": "local"},
    {"priority": 101, "src": "10.0.1.7", "table": "101"},
    {"priority": 32766, "src": "all", "table": "main"},
]
RULES6 = [{"priority": 101, "src": "fd00:0:0:11::7", "table": "101"}]
ROUTES4 = [
    {"dst": "10.0.1.0/24", "dev": "ens18np0", "protocol": "kernel", "scope": "link"},
    {"dst": "10.0.1.0/24", "dev": "ens18np0", "table": "101", "protocol": "static"},
    {"dst": "default", "gateway": "10.0.1.254", "dev": "ens18np0", "table": "101"},
]
ROUTES6 = [
    {"dst": "fd00:0:0:11::/64", "dev": "ens18np0", "table": "101", "metric": 1024},
]
SYSCTL = "\n".join(
    f"/proc/sys/net/ipv4/conf/ens18np0/{key}:{value}" for key, value in rail_render.SYSCTLS
)


def _probe(addr=None, routes4=ROUTES4, routes6=ROUTES6, rules4=RULES4):
    docs = [addr or _addr(), rules4, RULES6, routes4, routes6]
    return "\n\n".join(json.dumps(d) for d in docs) + "\n" + SYSCTL


def test_in_place():
    assert rail_drift([LINK], _probe()) == {}


def test_an_extra_address_added_by_hand():
    extra = [{"family": "inet", "local": "192.168.9.9", "prefixlen": 24, "scope": "global"}]
    assert rail_drift([LINK], _probe(_addr(extra))) == {
        "ens18np0": ["extra address 192.168.9.9/24"]
    }


def test_routes_deleted_by_hand():
    drift = rail_drift([LINK], _probe(routes4=ROUTES4[:2], routes6=[]))
    assert drift == {
        "ens18np0": [
            "route to 0.0.0.0/0 via 10.0.1.254 table 101 missing",
            "route to fd00:0:0:11::/64 table 101 missing",
        ]
    }


def test_a_route_in_the_wrong_table_or_on_another_netdev():
    moved = [dict(ROUTES4[1], table="102"), dict(ROUTES4[2], dev="ens17np0")]
    drift = rail_drift([LINK], _probe(routes4=moved))
    assert drift["ens18np0"] == [
        "route to 10.0.1.0/24 table 101 missing",
        "route to 0.0.0.0/0 via 10.0.1.254 table 101 missing",
    ]


def test_the_probe_reads_routes_after_the_rules():
    import yaml
    from conftest import ROLES_DIR

    role_vars = yaml.safe_load((ROLES_DIR / "rdma_rails" / "vars" / "main.yml").read_text())
    cmd = role_vars["__rdma_rails_probe_cmd"]
    assert cmd.index("ip -j -6 rule") < cmd.index("ip -j -4 route show table all")
    assert cmd.index("ip -j -4 route show table all") < cmd.index("ip -j -6 route show table all")
