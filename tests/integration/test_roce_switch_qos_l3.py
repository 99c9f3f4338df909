# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roce_switch_qos and the leaf side of L3 rails (each host's /31 on a rail ends at a leaf
port, which takes the even address and the rail's MTU), run with ansible-playbook
(playbooks/roce_fabric.yml) against the stand-ins only: rendered for the three OSes,
applied to the NVUE and SONiC stand-ins (EOS applied: test_roce_switch_qos_eos.py)."""

# ruff: noqa: F401, F811 (the fixtures of test_roce_switch_qos_role are imported)
from __future__ import annotations

import json

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import render
from role_play import recap
from test_roce_switch_qos_role import (
    DEFAULT,
    cumulus_host,
    nvue,
    play,
    sonic,
)

RAILS = [
    {
        "name": "rail0",
        "device": "mlx5_0",
        "subnet": "10.0.0.0/24",
        "prefix_length": 31,
        "gateway": "peer",
    },
    {
        "name": "rail1",
        "device": "mlx5_1",
        "subnet": "10.0.1.0/24",
        "prefix_length": 31,
        "gateway": "peer",
        "mtu": 4200,
    },
]
GPUS = {"gpu1": {"rdma_rail_host_index": 1}, "gpu2": {"rdma_rail_host_index": 2}}


def l3_inventory(tmp_path, switches, rails, port_maps, extra_vars=None):
    """switches: {os: {name: vars}}; rdma_hosts: the GPU servers (only their vars are read)."""
    groups = {
        f"{os_name}_switches": {"hosts": hosts, "vars": {"rdma_switch_os": os_name}}
        for os_name, hosts in switches.items()
    }
    data = {
        "all": {
            "vars": {"rdma_rails": rails, "rdma_cabling_ports": port_maps, **(extra_vars or {})},
            "children": {
                "switches": {"children": groups},
                "rdma_hosts": {
                    "hosts": {h: dict(v, ansible_connection="local") for h, v in GPUS.items()}
                },
            },
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _rails(*leaves, subnet6=False):
    """The two rails on these leaves; subnet6: each with its own IPv6 /64 too."""
    return [
        dict(rail, leaf=leaf, **({"subnet6": f"2001:db8:0:{k}::/64"} if subnet6 else {}))
        for k, (rail, leaf) in enumerate(zip(RAILS, leaves, strict=True))
    ]


# With subnet6 on the rails, each port also gets the leaf's end of its host's /127.
IPV6 = pytest.mark.parametrize("subnet6", [False, True], ids=["ipv4", "dual-stack"])


def _prefixes(subnet6, ipv4, ipv6):
    return {ipv4: {}, **({ipv6: {}} if subnet6 else {})}


@IPV6
def test_rendered_l3_ports_for_each_os(tmp_path, play, subnet6):
    out_dir = tmp_path / "rendered"
    local = {"ansible_connection": "local", "roce_switch_qos_uplinks": []}
    hosts = l3_inventory(
        tmp_path,
        {
            "cumulus": {"leaf0": {**local, "roce_switch_qos_ports": ["swp1", "swp2"]}},
            "sonic": {"leaf1": {**local, "roce_switch_qos_ports": ["Ethernet0", "Ethernet4"]}},
        },
        _rails("leaf0", "leaf1", subnet6=subnet6),
        {"leaf0": {1: "swp1", 2: "swp2"}, "leaf1": {1: "Ethernet0", 2: "Ethernet4"}},
    )
    args = ("-e", "roce_switch_qos_state=rendered", "-e", f"roce_switch_qos_render_dir={out_dir}")
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    nvue_tree = json.loads((out_dir / "leaf0.json").read_text())
    assert nvue_tree["interface"]["swp2"]["ip"] == {
        "address": _prefixes(subnet6, "10.0.0.4/31", "2001:db8::4/127")
    }
    assert nvue_tree["interface"]["swp2"]["link"]["mtu"] == 9000
    tables = json.loads((out_dir / "leaf1.json").read_text())
    assert tables["INTERFACE"] == {
        "Ethernet0": {},
        **{f"Ethernet0|{a}": {} for a in _prefixes(subnet6, "10.0.1.2/31", "2001:db8:0:1::2/127")},
        "Ethernet4": {},
        **{f"Ethernet4|{a}": {} for a in _prefixes(subnet6, "10.0.1.4/31", "2001:db8:0:1::4/127")},
    }
    assert tables["PORT"]["Ethernet4"] == {"mtu": "4200"}
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf0")["changed"] == 0 and recap(proc, "leaf1")["changed"] == 0

    # roce_switch_qos_l3_ports false: the policy alone
    proc, out = play(hosts, *args, "-e", "roce_switch_qos_l3_ports=false")
    assert proc.returncode == 0, out
    assert json.loads((out_dir / "leaf0.json").read_text()) == render(
        DEFAULT, "cumulus", ["swp1", "swp2"], 100
    )


def test_rendered_eos_routed_ports(tmp_path, play):
    out_dir = tmp_path / "rendered"
    hosts = l3_inventory(
        tmp_path,
        {
            "eos": {
                "leaf0": {
                    "ansible_connection": "local",
                    "roce_switch_qos_uplinks": [],
                    "roce_switch_qos_ports": ["Ethernet1", "Ethernet2"],
                }
            }
        },
        _rails("leaf0", "leaf9"),
        {"leaf0": {1: "Ethernet1", 2: "Ethernet2"}},
    )
    args = ("-e", "roce_switch_qos_state=rendered", "-e", f"roce_switch_qos_render_dir={out_dir}")
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    text = (out_dir / "leaf0.cfg").read_text()
    assert "interface Ethernet2\n   no switchport\n   ip address 10.0.0.4/31\n   mtu 9000\n" in text
    proc, out = play(hosts, *args, "-e", '{"roce_switch_qos_eos_switchports": ["Ethernet2"]}')
    assert proc.returncode != 0
    assert "roce_switch_qos_eos_switchports of leaf0 lists Ethernet2" in out


def test_a_managed_l3_leaf_without_a_port_map_is_refused_before_any_change(
    nvue,
    tls,
    tmp_path,
    play,
):
    standin = nvue()
    hosts = l3_inventory(
        tmp_path,
        {"cumulus": {"leaf0": cumulus_host(standin, tls), "leaf1": cumulus_host(standin, tls)}},
        _rails("leaf0", "leaf1"),
        {"leaf0": {1: "swp1", 2: "swp2"}},
    )
    proc, out = play(hosts)
    assert proc.returncode != 0
    assert "rdma_cabling_ports.leaf1 is missing" in out
    assert standin.log == [], "leaf0 (the first batch) must not be changed either"


@IPV6
def test_cumulus_applies_the_addresses_then_nothing(nvue, tls, tmp_path, play, subnet6):
    standin = nvue()
    hosts = l3_inventory(
        tmp_path,
        {"cumulus": {"leaf0": cumulus_host(standin, tls)}},
        # leaf9 is not managed: left alone, no map needed
        _rails("leaf0", "leaf9", subnet6=subnet6),
        {"leaf0": {1: "swp1", 2: "swp2"}},
    )
    proc, out = play(hosts, "--check", "--diff")
    assert proc.returncode == 0, out
    assert "10.0.0.2/31" in out and "10.0.0.4/31" in out, "--diff shows the address lines"
    assert ("2001:db8::4/127" in out) == subnet6
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf0")["changed"] == 1
    interface = standin.applied["interface"]
    for port, k in (("swp1", 2), ("swp2", 4)):
        assert interface[port]["ip"]["address"] == _prefixes(
            subnet6, f"10.0.0.{k}/31", f"2001:db8::{k}/127"
        )
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf0")["changed"] == 0


@IPV6
def test_sonic_applies_the_interface_rows_then_nothing(sonic, play, tmp_path, subnet6):
    db, env, _hosts = sonic
    host = {
        "ansible_connection": "local",
        "roce_switch_qos_sonic_become": False,
        "roce_switch_qos_ports": ["Ethernet0", "Ethernet4"],
        "roce_switch_qos_uplinks": [],
    }
    hosts = l3_inventory(
        tmp_path,
        {"sonic": {"sonic1": host}},
        _rails("leaf9", "sonic1", subnet6=subnet6),
        {"sonic1": {1: "Ethernet0", 2: "Ethernet4"}},
    )
    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    configdb = json.loads(db.read_text())
    assert configdb["INTERFACE"]["Ethernet4|10.0.1.4/31"] == {}
    assert ("Ethernet4|2001:db8:0:1::4/127" in configdb["INTERFACE"]) == subnet6
    assert configdb["INTERFACE"]["Ethernet0"] == {}
    assert configdb["PORT"]["Ethernet0"]["mtu"] == "4200"
    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 0
