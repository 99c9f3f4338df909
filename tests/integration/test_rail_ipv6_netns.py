"""An L3 rail's /31 and /127 made live by the real kernel and iproute2 in network
namespaces this test creates: a host namespace and a leaf namespace joined by a veth
pair. The host side is the rail plan's link (rails.py, rail_render.rail_links: addresses,
the rail's table, its rules), the leaf side leaf_ports.leaf_plan's port addresses. Proven:
the kernel takes the /127 (RFC 6164) and the IPv6 default route via the leaf in the
rail's table; `ip route get` from the rail address leaves by the rail to the leaf; the
role's own drift probe (rdma_rails vars/main.yml) read through rdma.fabric.rail_drift
finds nothing, then names the IPv6 route a foreign change deleted."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.filter.rail import rail_drift
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.leaf_ports import leaf_plan
from ansible_collections.rdma.fabric.plugins.module_utils.rails import fabric_rails

ROLE_VARS = (
    Path(__file__).resolve().parents[2]
    / "collections/ansible_collections/rdma/fabric/roles/rdma_rails/vars/main.yml"
)
TAG = f"rf6{os.getpid() % 100000}"
HOST_NS, LEAF_NS = f"{TAG}h", f"{TAG}l"
NETDEV, LEAF_PORT = f"{TAG}r0", f"{TAG}p1"
RAIL = {
    "name": "rail0",
    "netdev": NETDEV,
    "subnet": "192.0.2.0/24",
    "prefix_length": 31,
    "gateway": "peer",
    "subnet6": "2001:db8:0:10::/64",
    "leaf": "leaf0",
}
HOSTS = {"gpu07": {"rdma_rail_host_index": 7}}
# Beyond the leaf: an address only the rail's table reaches (via the leaf).
FAR6 = "2001:db8:ffff::1"


def _ip(ns, *args):
    return subprocess.run(
        ["ip", "netns", "exec", ns, *args], capture_output=True, text=True, check=True
    ).stdout


def _namespaces_work():
    probe = f"{TAG}x"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, check=False)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return made.returncode == 0


@pytest.fixture
def netns():
    if not _namespaces_work():
        pytest.skip("ip netns add is not permitted here (needs root and CAP_SYS_ADMIN)")
    for ns in (HOST_NS, LEAF_NS):
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(
            [
                "ip",
                "link",
                "add",
                NETDEV,
                "netns",
                HOST_NS,
                "type",
                "veth",
                "peer",
                "name",
                LEAF_PORT,
                "netns",
                LEAF_NS,
            ],
            check=True,
        )
        yield
    finally:
        for ns in (HOST_NS, LEAF_NS):
            subprocess.run(["ip", "netns", "del", ns], check=False)


def _host_commands(link):
    """The link as iproute2 commands: what networkd, netplan or NetworkManager make of
    the rendered files (address, MTU, the rail table's routes, the rules)."""
    commands = [["ip", "link", "set", link["netdev"], "mtu", str(link["mtu"]), "up"]]
    commands += [
        ["ip", "addr", "add", a, "dev", link["netdev"], "nodad"]
        if ":" in a
        else ["ip", "addr", "add", a, "dev", link["netdev"]]
        for a in link["addresses"]
    ]
    for route in link["routes"]:
        family = "-6" if ":" in route["to"] else "-4"
        command = ["ip", family, "route", "replace", route["to"], "dev", link["netdev"]]
        command += ["via", route["via"]] if route.get("via") else []
        command += ["table", str(route["table"])] if route["table"] is not None else []
        commands.append(command)
    for rule in link["rules"]:
        family = "-6" if ":" in rule["from"] else "-4"
        commands.append(
            [
                "ip",
                family,
                "rule",
                "add",
                "from",
                rule["from"],
                "table",
                str(rule["table"]),
                "priority",
                str(rule["priority"]),
            ]
        )
    commands += [
        ["sysctl", "-q", "-w", f"net.ipv4.conf.{link['netdev']}.{key}={value}"]
        for key, value in rail_render.SYSCTLS
    ]
    return commands


ECHO = """
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9999))
data, peer = s.recvfrom(64)
s.sendto(data, peer)
"""
SEND = """
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((sys.argv[2], 0))
s.settimeout(0.5)
for _ in range(10):
    s.sendto(b"rail0", (sys.argv[1], 9999))
    try:
        sys.stdout.write(s.recv(64).decode())
        break
    except socket.timeout:
        pass
"""


def _udp_echo(far, source):
    """A datagram from the host's rail address to an address behind the leaf and back:
    the rule, the rail table's default route via the leaf and neighbour discovery on the
    /127, on the real data path."""
    server = subprocess.Popen(["ip", "netns", "exec", LEAF_NS, sys.executable, "-c", ECHO, far])
    try:
        return _ip(HOST_NS, sys.executable, "-c", SEND, far, source).encode()
    finally:
        server.kill()
        server.wait()


def _probe(link):
    """The role's drift probe (vars/main.yml __rdma_rails_probe_cmd), its sysctl paths
    filled as the role's Jinja fills them, run in the host namespace."""
    template = yaml.safe_load(ROLE_VARS.read_text())["__rdma_rails_probe_cmd"]
    paths = " ".join(shlex.quote(p) for p in rail_render.sysctl_paths([link]))
    command = re.sub(r"\{\{.*?\}\}", paths, template)
    return _ip(HOST_NS, "sh", "-c", command)


def test_the_127_and_its_default_route_live_and_checked_by_the_drift_probe(netns):
    plan, errors = fabric_rails([RAIL], HOSTS)
    assert errors == []
    (link,) = rail_render.rail_links([dict(plan["gpu07"][0], table=100)])
    leaf, errors, _notes = leaf_plan([RAIL], HOSTS, {"leaf0": {7: LEAF_PORT}})
    assert errors == []
    port = leaf["leaf0"][LEAF_PORT]
    assert (port["address"], port["address6"]) == ("192.0.2.14/31", "2001:db8:0:10::e/127")

    _ip(LEAF_NS, "ip", "link", "set", LEAF_PORT, "mtu", str(port["mtu"]), "up")
    _ip(LEAF_NS, "ip", "addr", "add", port["address"], "dev", LEAF_PORT)
    _ip(LEAF_NS, "ip", "addr", "add", port["address6"], "dev", LEAF_PORT, "nodad")
    _ip(LEAF_NS, "ip", "link", "set", "lo", "up")
    _ip(LEAF_NS, "ip", "addr", "add", f"{FAR6}/128", "dev", "lo")
    for command in _host_commands(link):
        _ip(HOST_NS, *command)

    have = _ip(HOST_NS, "ip", "-6", "addr", "show", "dev", NETDEV)
    assert "inet6 2001:db8:0:10::f/127 scope global" in have
    route = _ip(HOST_NS, "ip", "-6", "route", "get", FAR6, "from", "2001:db8:0:10::f")
    assert f"via 2001:db8:0:10::e dev {NETDEV}" in route and "table 100" in route
    route = _ip(HOST_NS, "ip", "-4", "route", "get", "198.51.100.1", "from", "192.0.2.15")
    assert f"via 192.0.2.14 dev {NETDEV}" in route and "table 100" in route
    assert _udp_echo(FAR6, "2001:db8:0:10::f") == b"rail0"

    assert rail_drift([link], _probe(link)) == {}
    _ip(HOST_NS, "ip", "-6", "route", "del", "default", "via", "2001:db8:0:10::e", "table", "100")
    assert rail_drift([link], _probe(link)) == {
        NETDEV: ["route to ::/0 via 2001:db8:0:10::e table 100 missing"]
    }
    _ip(HOST_NS, "ip", "-6", "addr", "add", "2001:db8:0:99::7/64", "dev", NETDEV, "nodad")
    assert "extra address 2001:db8:0:99::7/64" in rail_drift([link], _probe(link))[NETDEV]


# A shared (L2) rail with an IPv6 gateway: the host has subnet6 + index on the /64 and
# the rail's table `::/0` via gateway6, a router on the same segment.
SHARED = {
    "name": "rail0",
    "netdev": NETDEV,
    "subnet": "198.51.100.0/24",
    "gateway": "198.51.100.254",
    "subnet6": "2001:db8:0:11::/64",
    "gateway6": "2001:db8:0:11::fe",
}


# A router is usually known to its hosts by its link-local address (RFC 4861 4.2, 8).
@pytest.mark.parametrize("gateway6", ["2001:db8:0:11::fe", "fe80::1"])
def test_a_shared_rails_gateway6_is_the_ipv6_default_of_its_table(netns, gateway6):
    plan, errors = fabric_rails([dict(SHARED, gateway6=gateway6)], HOSTS)
    assert errors == []
    (link,) = rail_render.rail_links([dict(plan["gpu07"][0], table=100)])

    # The other end of the veth plays the rail's router: gateway and gateway6.
    _ip(LEAF_NS, "ip", "link", "set", LEAF_PORT, "mtu", str(link["mtu"]), "up")
    _ip(LEAF_NS, "ip", "addr", "add", "198.51.100.254/24", "dev", LEAF_PORT)
    _ip(LEAF_NS, "ip", "addr", "add", "2001:db8:0:11::fe/64", "dev", LEAF_PORT, "nodad")
    if gateway6 != "2001:db8:0:11::fe":
        _ip(LEAF_NS, "ip", "addr", "add", f"{gateway6}/64", "dev", LEAF_PORT, "nodad")
    _ip(LEAF_NS, "ip", "link", "set", "lo", "up")
    _ip(LEAF_NS, "ip", "addr", "add", f"{FAR6}/128", "dev", "lo")
    for command in _host_commands(link):
        _ip(HOST_NS, *command)

    assert "inet6 2001:db8:0:11::7/64 scope global" in _ip(
        HOST_NS, "ip", "-6", "addr", "show", "dev", NETDEV
    )
    route = _ip(HOST_NS, "ip", "-6", "route", "get", FAR6, "from", "2001:db8:0:11::7")
    assert f"via {gateway6} dev {NETDEV}" in route and "table 100" in route
    # the main table keeps no IPv6 default of the rail's
    assert "default" not in _ip(HOST_NS, "ip", "-6", "route", "show", "table", "main")
    assert _udp_echo(FAR6, "2001:db8:0:11::7") == b"rail0"

    assert rail_drift([link], _probe(link)) == {}
    _ip(HOST_NS, "ip", "-6", "route", "del", "default", "via", gateway6, "table", "100")
    assert rail_drift([link], _probe(link)) == {
        NETDEV: [f"route to ::/0 via {gateway6} table 100 missing"]
    }
