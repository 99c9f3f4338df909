"""roce_switch_qos applied to Arista EOS, run with ansible-playbook (playbooks/roce_fabric.yml)
over Ansible's httpapi connection (ansible_network_os arista.eos.eos: eAPI over HTTPS)
against tests/standins/eos_eapi.py on 127.0.0.1, a STAND-IN that follows Arista's
published eAPI contract (its docstring says what it does not model): no EOS runs here.

The push is arista.eos.eos_config's own (a configuration session per change, its diff
against `show running-config`, save_when); these tests prove what the role gives it
converges, is idempotent, is truthful under --check --diff, keeps what it does not own,
and fails clearly, naming the host, when the switch refuses or cannot be reached.
"""

# ruff: noqa: F401, F811 (the fixtures of test_roce_switch_qos_role are imported)
from __future__ import annotations

import json
import socket
import sys

import pytest
from ansible_collections.ansible.netcommon.plugins.module_utils.network.common.config import (
    NetworkConfig,
    dumps,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import render
from role_play import recap
from test_roce_switch_qos_l3 import IPV6, _rails, l3_inventory
from test_roce_switch_qos_role import DEFAULT, STANDINS, inventory, play

sys.path.insert(0, str(STANDINS))
from eos_eapi import EapiStandin, parse_config, print_config  # noqa: E402

USER, PASSWORD = "admin", "arista"
# What the switch holds before the role: lines the role does not own, one in a port the
# role configures (description) and one in a block it never touches (Management1).
RUNNING = """\
! Command: show running-config
hostname leaf1
!
username admin privilege 15 role network-admin secret sha512 $6$standin
!
interface Ethernet1
   description gpu1 rail0
   mtu 1500
!
interface Management1
   ip address 192.0.2.10/24
!
end
"""


@pytest.fixture
def eos(tls):
    started = []

    def start(**kwargs):
        kwargs.setdefault("running", RUNNING)
        standin = EapiStandin(user=USER, password=PASSWORD, **kwargs)
        started.append(standin.start(*tls))
        return standin

    yield start
    for standin in started:
        standin.stop()


def eos_host(standin, tls, **extra):
    return {
        "ansible_connection": "ansible.netcommon.httpapi",
        "ansible_network_os": "arista.eos.eos",
        "ansible_host": "127.0.0.1",
        "ansible_httpapi_port": standin.port,
        "ansible_httpapi_use_ssl": True,
        "ansible_httpapi_validate_certs": True,
        "ansible_httpapi_ca_path": tls[0],
        "ansible_httpapi_use_proxy": False,
        "ansible_user": USER,
        "ansible_password": PASSWORD,
        "roce_switch_qos_ports": ["Ethernet1", "Ethernet2"],
        "roce_switch_qos_uplinks": [],
        **extra,
    }


def lines(tree):
    """The running-config as a set of (parents..., line) paths."""
    out = set()

    def walk(nodes, parents):
        for line, children in nodes:
            out.add((*parents, line))
            walk(children, (*parents, line))

    walk(tree, ())
    return out


def wanted_lines(ports=("Ethernet1", "Ethernet2"), **options):
    return lines(parse_config(render(DEFAULT, "eos", list(ports), 100, options)))


def test_check_then_apply_then_nothing(eos, tls, tmp_path, play):
    standin = eos()
    before = print_config(standin.running)
    hosts = inventory(tmp_path, eos={"leaf1": eos_host(standin, tls)})

    proc, out = play(hosts, "--check", "--diff")
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 1
    assert "+   service-profile RDMA_FABRIC_ROCE" in out, "--diff shows the session's diff"
    assert print_config(standin.running) == before, "--check must not change the switch"
    assert standin.sessions == {}, "--check aborts its session"
    assert not any(cmd == "commit" for cmd, _ in standin.log)

    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 1
    have = lines(standin.running)
    assert wanted_lines() <= have, sorted(wanted_lines() - have)
    # Kept: what the role does not own, in a port it configures and beside it.
    assert ("interface Ethernet1", "description gpu1 rail0") in have
    assert ("interface Management1", "ip address 192.0.2.10/24") in have
    assert ("hostname leaf1",) in have
    assert ("interface Ethernet1", "mtu 1500") not in have, "mtu replaced, not added"
    assert standin.startup == standin.running, "saved (save_when: modified)"
    assert standin.sessions == {}

    commands = len(standin.log)
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 0
    assert not any(cmd.startswith("configure") for cmd, _ in standin.log[commands:]), (
        "a second run opens no session"
    )


@pytest.mark.parametrize(
    "changes",
    [{}, {"roce_priority": 5, "roce_dscp": 34}, {"cnp_dscp": 46, "cnp_priority": 5}],
    ids=["default", "roce-5", "cnp-on-default-dscp-46"],
)
def test_what_the_role_renders_is_what_eos_prints(changes):
    """Once applied, the rendered lines are the running-config's own (as the stand-in
    prints it the way EOS does: one `qos map dscp` line per traffic class, defaults and
    `priority strict` not shown), so eos_config (match=line) has nothing to send on the
    next run: no configuration session each run."""
    policy, errors = normalize_policy(changes)
    assert not errors, errors
    text = render(policy, "eos", ["Ethernet1", "Ethernet2"], 100, {})
    standin = EapiStandin(running=RUNNING)
    empty = NetworkConfig(indent=3, contents="")
    commands = dumps(NetworkConfig(indent=3, contents=text).difference(empty), "commands")
    reply = standin.run("r1", ["configure session s1", *commands.splitlines(), "commit"], "text")
    assert "error" not in reply, reply
    running = NetworkConfig(indent=3, contents=standin.running_text())
    left = NetworkConfig(indent=3, contents=text).difference(running)
    assert dumps(left, "commands") == "", "eos_config would send these again"


def test_save_false_leaves_startup(eos, tls, tmp_path, play):
    standin = eos()
    startup = copy_of(standin.startup)
    hosts = inventory(tmp_path, eos={"leaf1": eos_host(standin, tls, roce_switch_qos_save=False)})
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert standin.startup == startup
    assert not any(cmd.startswith(("copy", "write")) for cmd, _ in standin.log)


def copy_of(tree):
    return json.loads(json.dumps(tree))


def test_a_switch_refusing_tx_queue_keeps_its_configuration(eos, tls, tmp_path, play):
    """A switch that takes uc-tx-queue only (the Arad-based 7500E/7280E; Sand platforms
    such as the 7280R take tx-queue): with the default roce_switch_qos_eos_tx_queue the
    session fails, the play names the host and the refused command, and the session is
    aborted (running and startup unchanged); uc-tx-queue then converges."""
    standin = eos(model="DCS-7280SE-68", queue_keywords=("uc-tx-queue",))
    before = print_config(standin.running)
    hosts = inventory(tmp_path, eos={"leaf1": eos_host(standin, tls)})
    proc, out = play(hosts)
    assert proc.returncode != 0, out
    assert recap(proc, "leaf1")["failed"] == 1
    assert "fatal: [leaf1]" in out and "Invalid input (at token 0: 'tx-queue')" in out, out
    assert print_config(standin.running) == before and standin.sessions == {}
    assert ("abort", standin.log[-1][1]) == standin.log[-1], "the session is aborted"

    args = ("-e", "roce_switch_qos_eos_tx_queue=uc-tx-queue")
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    assert ("qos profile RDMA_FABRIC_ROCE", "uc-tx-queue 3") in lines(standin.running)
    proc, out = play(hosts, *args)
    assert recap(proc, "leaf1")["changed"] == 0, out


def test_an_unreachable_switch_fails_naming_the_host(eos, tls, tmp_path, play):
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    host = eos_host(type("Closed", (), {"port": port})(), tls)
    proc, out = play(inventory(tmp_path, eos={"leaf1": host}))
    assert proc.returncode != 0, out
    assert "leaf1" in out and f"127.0.0.1:{port}" in out, out
    assert "Connection refused" in out, out

    standin = eos()
    before = print_config(standin.running)
    host = eos_host(standin, tls, ansible_password="wrong")
    proc, out = play(inventory(tmp_path, eos={"leaf1": host}))
    assert proc.returncode != 0, out
    assert "fatal: [leaf1]" in out and "401" in out, out
    assert print_config(standin.running) == before and standin.log == []


@IPV6
def test_l3_rail_ports_are_routed_with_the_leaf_address(eos, tls, tmp_path, play, subnet6):
    standin = eos()
    hosts = l3_inventory(
        tmp_path,
        {"eos": {"leaf1": eos_host(standin, tls)}},
        _rails("leaf1", "leaf9", subnet6=subnet6),
        {"leaf1": {1: "Ethernet1", 2: "Ethernet2"}},
    )
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    have = lines(standin.running)
    for port, k in (("Ethernet1", 2), ("Ethernet2", 4)):
        interface = f"interface {port}"
        assert (interface, "no switchport") in have, port
        assert (interface, f"ip address 10.0.0.{k}/31") in have, port
        assert ((interface, f"ipv6 address 2001:db8::{k}/127") in have) == subnet6, port
        assert (interface, "mtu 9000") in have, port
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 0


LLDP_PLAY = """\
- name: Read the leaves' LLDP tables as verify.yml does
  hosts: switches
  gather_facts: false
  tasks:
    - name: Read this leaf's LLDP table
      ansible.builtin.include_role:
        name: rdma.fabric.roce_switch_qos
        tasks_from: lldp.yml

    - name: Keep what the cabling check gets
      ansible.builtin.copy:
        content: "{{ rdma_switch_lldp | to_json }}"
        dest: "{{ lldp_out }}"
        mode: "0644"
      delegate_to: localhost
      check_mode: false
"""


def test_the_lldp_read_names_each_neighbour_and_its_netdev(eos, tls, tmp_path, run_playbook):
    """lldp_eos.yml (verify.yml's switch play) over eAPI: gpu1's lldpd sends its netdev as
    port ID, gpu2's a MAC port ID (lldpd's default) with the netdev as description; both
    read as the netdev. Read only: no session, nothing configured."""
    standin = eos(
        lldp={
            "Ethernet1": [{"system": "gpu1", "port": "ens1f0np0"}],
            "Ethernet2": [
                {
                    "system": "gpu2",
                    "port": "0200.0000.0202",
                    "port_type": "macAddress",
                    "description": "ens1f0np0",
                }
            ],
        }
    )
    before = print_config(standin.running)
    (tmp_path / "lldp.yml").write_text(LLDP_PLAY)
    out_file = tmp_path / "lldp.json"
    hosts = inventory(tmp_path, eos={"leaf1": eos_host(standin, tls)})
    for args in ((), ("--check",)):
        proc = run_playbook(
            "-i", hosts, str(tmp_path / "lldp.yml"), "-e", f"lldp_out={out_file}", *args
        )
        assert proc.returncode == 0, proc.output
        assert json.loads(out_file.read_text()) == {
            "Ethernet1": [{"host": "gpu1", "port": "ens1f0np0"}],
            "Ethernet2": [{"host": "gpu2", "port": "ens1f0np0"}],
        }
        out_file.unlink()
    assert print_config(standin.running) == before
    assert not any(cmd.startswith("configure") for cmd, _ in standin.log)


def test_two_leaves_behind_one_address_each_get_their_own_push(eos, tls, tmp_path, play):
    """Two EOS leaves on one address (127.0.0.1), told apart by port, pushed side by side
    (one batch): each switch gets its own configuration. Ansible keys a persistent
    connection by address, ansible_port and user, not by ansible_httpapi_port; with
    ansible_port set as well, each leaf has its own connection. Without it the preflight
    refuses, naming both, before anything is sent (it once ran leaf2's push on leaf1's
    connection: leaf1 changed, leaf2 "ok" and never configured)."""
    leaves = {"leaf1": eos(), "leaf2": eos(running=RUNNING.replace("leaf1", "leaf2"))}

    def hosts(**port):
        return inventory(
            tmp_path,
            eos={name: eos_host(s, tls, **{k: s.port for k in port}) for name, s in leaves.items()},
        )

    proc, out = play(hosts())
    assert proc.returncode != 0, out
    assert "leaf1, leaf2 share one persistent connection" in out, out
    assert all(s.log == [] for s in leaves.values()), "refused before any switch is read"

    proc, out = play(hosts(ansible_port=True), "-e", "roce_switch_qos_serial=2")
    assert proc.returncode == 0, out
    for name, standin in leaves.items():
        assert recap(proc, name)["changed"] == 1, out
        have = lines(standin.running)
        assert wanted_lines() <= have, (name, sorted(wanted_lines() - have))
        assert (f"hostname {name}",) in have
