"""The netplan file of an L3 rail with subnet6 (its /127 and the IPv6 default route via the
leaf in the rail's table) through the real `netplan generate` (Debian's netplan.io,
install-deps.sh) into a scratch root: the systemd-networkd file netplan writes carries
the address, the routes and the rule as the rail plan has them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from ansible_collections.rdma.fabric.plugins.filter.rail import rail_files
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.rails import fabric_rails

pytestmark = pytest.mark.skipif(
    not shutil.which("netplan"), reason="needs netplan (netplan.io, install-deps.sh)"
)
RAILS = [
    {
        "name": "rail0",
        "netdev": "ens17np0",
        "subnet": "192.0.2.0/24",
        "prefix_length": 31,
        "gateway": "peer",
        "subnet6": "2001:db8:0:10::/64",
    },
    {
        "name": "rail1",
        "netdev": "ens18np0",
        "subnet": "198.51.100.0/24",
        "subnet6": "2001:db8:0:11::/64",
    },
]


def _sections(text):
    """[(section, {key: [values]})] of a .network file, in order (keys repeat)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            out.append((line.strip("[]"), {}))
        elif "=" in line and out:
            key, _eq, value = line.partition("=")
            out[-1][1].setdefault(key, []).append(value)
    return out


def _generate(entries, root):
    """The host's netplan file written under root and run through `netplan generate`:
    the directory of the networkd files netplan wrote."""
    ((path, spec),) = rail_files(rail_render.rail_links(entries), "netplan").items()
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(spec["content"])
    target.chmod(0o600)
    proc = subprocess.run(
        ["netplan", "generate", "--root-dir", str(root)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return root / "run/systemd/network"


def test_netplan_generate_renders_the_127_and_its_ipv6_routes(tmp_path):
    plan, errors = fabric_rails(RAILS, {"gpu07": {"rdma_rail_host_index": 7}})
    assert errors == []
    network = _generate(plan["gpu07"], tmp_path) / "10-netplan-ens17np0.network"
    sections = _sections(network.read_text())
    (net,) = [keys for name, keys in sections if name == "Network"]
    assert "2001:db8:0:10::f/127" in net["Address"] and "192.0.2.15/31" in net["Address"]
    routes = [{k: v[0] for k, v in keys.items()} for name, keys in sections if name == "Route"]
    leaf6 = "2001:db8:0:10::e"
    assert {"Destination": "::/0", "Gateway": leaf6, "Table": "100"}.items() <= next(
        r for r in routes if r["Destination"] == "::/0"
    ).items()
    assert any(
        r["Destination"] == "2001:db8:0:10::/64" and r.get("Gateway") == leaf6 and "Table" not in r
        for r in routes
    ), routes
    rules = [keys for name, keys in sections if name == "RoutingPolicyRule"]
    assert any(r["From"] == ["2001:db8:0:10::f"] and r["Table"] == ["100"] for r in rules)
    # The shared rail beside it: subnet6 + index on the /64, no IPv6 gateway.
    shared = _sections((network.parent / "10-netplan-ens18np0.network").read_text())
    (net,) = [keys for name, keys in shared if name == "Network"]
    assert "2001:db8:0:11::7/64" in net["Address"]
    assert not any(keys.get("Destination") == ["::/0"] for name, keys in shared if name == "Route")


@pytest.mark.parametrize("gateway6", ["2001:db8:0:11::fe", "fe80::1"])
def test_netplan_generate_renders_a_shared_rails_gateway6_in_its_table(tmp_path, gateway6):
    """A shared rail's gateway6: the rail's table gets ::/0 via it, as the IPv4 default
    via gateway, and the main table none. A link-local gateway6 (a router's usual next
    hop) comes out as written, with no GatewayOnLink."""
    rail = dict(RAILS[1], gateway="198.51.100.254", gateway6=gateway6)
    plan, errors = fabric_rails([RAILS[0], rail], {"gpu07": {"rdma_rail_host_index": 7}})
    assert errors == []
    network = _generate(plan["gpu07"], tmp_path) / "10-netplan-ens18np0.network"
    sections = _sections(network.read_text())
    routes = [{k: v[0] for k, v in keys.items()} for name, keys in sections if name == "Route"]
    defaults = {r["Gateway"]: r for r in routes if r["Destination"] in ("::/0", "0.0.0.0/0")}
    assert defaults[gateway6]["Destination"] == "::/0"
    assert defaults[gateway6]["Table"] == "101"
    assert "GatewayOnLink" not in defaults[gateway6]
    assert defaults["198.51.100.254"]["Table"] == "101"
    assert len(defaults) == 2


def test_netplan_writes_scope_link_on_a_via_less_ipv6_route_and_no_yaml_avoids_it(tmp_path):
    """A known limit of netplan (0.106 here), pinned: a unicast route without `via` gets
    scope link by default and netplan's networkd writer puts any non-global scope into
    `Scope=`, whatever the family; `scope: global` without `via` is refused ("global
    unicast route must include both a 'to' and 'via' IP", parse.c). So the rail's /127
    route in its table comes out with Scope=link, which systemd-networkd ignores on an
    IPv6 route with a warning (networkd-route.c, "Scope= is specified for IPv6 route. It
    will be ignored."): the route is made, a warning is logged. The YAML we write has no
    scope on it (tests/unit/test_rail_ipv6_l3.py)."""
    plan, errors = fabric_rails(RAILS[:1], {"gpu07": {"rdma_rail_host_index": 7}})
    assert errors == []
    network = _generate(plan["gpu07"], tmp_path / "ours") / "10-netplan-ens17np0.network"
    routes = [keys for name, keys in _sections(network.read_text()) if name == "Route"]
    (block,) = [r for r in routes if r["Destination"] == ["2001:db8:0:10::e/127"]]
    assert block.get("Scope") == ["link"] and "Gateway" not in block

    target = tmp_path / "global/etc/netplan/60-rdma-rails.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(
        "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    ens17np0:\n"
        "      addresses: ['2001:db8:0:10::f/127']\n"
        "      routes: [{to: '2001:db8:0:10::e/127', table: 100, scope: global}]\n"
    )
    target.chmod(0o600)
    proc = subprocess.run(
        ["netplan", "generate", "--root-dir", str(tmp_path / "global")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "route must include both a 'to' and 'via' IP" in proc.stderr


def test_the_rails_file_leaves_other_links_to_their_renderer(tmp_path):
    """A NetworkManager host (Ubuntu's 01-network-manager-all.yaml) whose management link
    comes from cloud-init: with the rails' file beside them, netplan still gives eth0 to
    NetworkManager. A global `renderer: networkd` in the rails' file, the last one read,
    became every definition's renderer: eth0 got a networkd .network file."""
    netplan = tmp_path / "etc/netplan"
    netplan.mkdir(parents=True)
    (netplan / "01-network-manager-all.yaml").write_text(
        "network:\n  version: 2\n  renderer: NetworkManager\n"
    )
    (netplan / "50-cloud-init.yaml").write_text(
        "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n"
    )
    for path in netplan.iterdir():
        path.chmod(0o600)
    plan, errors = fabric_rails(RAILS[:1], {"gpu07": {"rdma_rail_host_index": 7}})
    assert errors == []
    networkd = _generate(plan["gpu07"], tmp_path)
    assert (networkd / "10-netplan-ens17np0.network").is_file()
    assert not (networkd / "10-netplan-eth0.network").exists()
    nm = tmp_path / "run/NetworkManager/system-connections"
    assert [p.name for p in nm.iterdir()] == ["netplan-eth0.nmconnection"]
