"""Rolling changes and bonds: one port at a time, each back up before
the next; a RoCE LAG bond is configured through its members. Real roce_qos module runs
against the mlnx_qos stand-in and a tmp sysfs tree (operstate, bonding/slaves)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from ansible_collections.rdma.fabric.plugins.module_utils.mlnx_qos import parse_mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import bond_members, read_bonds
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    rdma_port_of,
    wait_link_up,
)
from role_play import ROLES_DIR, failure_messages, recap
from sysfs_tree import add_cx6dx_roce, add_netdev
from test_roce_qos import (
    IF,
    JSON_CALLBACK,
    STANDIN,
    mlnx_qos_standin_env,
    ofed_host,
    run_module,
)

LAG = ["enp27s0f0np0", "enp27s0f1np1"]


def test_bond_members_from_sysfs(tmp_path):
    bond = tmp_path / "sys/class/net/bond0/bonding"
    bond.mkdir(parents=True)
    (bond / "slaves").write_text("enp1s0f0np0 enp1s0f1np1\n")
    assert bond_members(str(tmp_path), "bond0") == ["enp1s0f0np0", "enp1s0f1np1"]
    assert bond_members(str(tmp_path), IF) == []
    (tmp_path / "sys/class/net" / IF).mkdir()
    (tmp_path / "sys/class/net/bond1/bonding").mkdir(parents=True)  # no members yet
    assert read_bonds(str(tmp_path)) == {"bond0": ["enp1s0f0np0", "enp1s0f1np1"], "bond1": []}
    assert read_bonds(str(tmp_path / "nowhere")) == {}


def test_wait_link_up_polls_until_up_or_the_deadline(tmp_path):
    state = tmp_path / "sys/class/net" / IF / "operstate"
    state.parent.mkdir(parents=True)
    state.write_text("down\n")
    now = [0.0]

    def sleep(seconds):
        now[0] += seconds
        if now[0] >= 2:
            state.write_text("up\n")  # the link comes back 2 s after the change

    assert wait_link_up(str(tmp_path), IF, 10, sleep=sleep, clock=lambda: now[0])
    state.write_text("down\n")
    now[0] = 100.0
    assert not wait_link_up(str(tmp_path), IF, 3, sleep=lambda s: now.__setitem__(0, now[0] + s),
                            clock=lambda: now[0])  # fmt: skip


def test_module_refuses_a_bond_master_naming_its_members(run_cli, tmp_path):
    env = {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}
    root = ofed_host(tmp_path / "root")
    bond = root / "sys/class/net/bond0/bonding"
    bond.mkdir(parents=True)
    (bond / "slaves").write_text(f"{IF} enp27s0f1np1\n")
    result = run_module(run_cli, env, {"interface": "bond0", "sysfs_root": str(root)})
    assert result.get("failed"), result
    assert (
        f"bond0 is a bond (RoCE LAG); DCB is set on its members {IF}, enp27s0f1np1" in result["msg"]
    )
    assert result["commands"] == []


def link_drops_on_pfc(tmp_path: Path, env: dict[str, str], iface: str, operstate: Path) -> None:
    """Put a wrapper before the mlnx_qos stand-in on env's PATH: a PFC change of iface
    takes its link down (operstate), and it stays down, as a port that does not come
    back after mlx5 toggles it."""
    wrapper = tmp_path / "down" / "mlnx_qos"
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *"{iface} --pfc"*) echo down > {operstate};; esac\n'
        f'exec {tmp_path / "bin" / "mlnx_qos"} "$@"\n'
    )
    wrapper.chmod(0o755)
    env["PATH"] = f"{wrapper.parent}:{env['PATH']}"


def test_module_fails_when_the_port_does_not_come_back(run_cli, tmp_path):
    env = {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}
    root = ofed_host(tmp_path / "root")
    operstate = root / "sys/class/net" / IF / "operstate"
    operstate.write_text("up\n")
    args = {"interface": IF, "sysfs_root": str(root), "link_wait": 1, "knobs": False}
    # The stand-in does not toggle the link: up before and after -> the change passes.
    assert not run_module(run_cli, env, args).get("failed")
    # A port that went down with the change (and stays down) fails the task by name.
    link_drops_on_pfc(tmp_path, env, IF, operstate)
    operstate.write_text("up\n")
    failed = run_module(run_cli, env, {**args, "policy": {"roce_priority": 4}})
    assert failed.get("failed"), failed
    assert f"{IF} was not up again 1 s after the change" in failed["msg"]


def lag_members(root: Path, env: dict[str, str]) -> Path:
    """mlx5_bond_0 (RoCE LAG, netdev bond0) with OFED's traffic_class and the RDMA-CM
    configfs group; its members as the kernel shows them (a ``master`` link to bond0),
    each up and a fresh ConnectX port in the mlnx_qos stand-in."""
    device = add_cx6dx_roce(root, "mlx5_bond_0", netdev="bond0")
    bond = (root / "sys/class/net/bond0").resolve()
    (bond / "bonding").mkdir()
    (bond / "bonding/slaves").write_text(" ".join(LAG) + "\n")
    tc = root / "sys/class/infiniband/mlx5_bond_0/tc/1"
    tc.mkdir(parents=True)
    (tc / "traffic_class").write_text("Global tclass=-1\n")
    cm = root / "sys/kernel/config/rdma_cm/mlx5_bond_0/ports/1"
    cm.mkdir(parents=True)
    (cm / "default_roce_tos").write_text("0\n")
    for index, member in enumerate(LAG):
        net = add_netdev(root, member, 1500, device=f"pci0000:00/0000:1b:00.{index}")
        (net / "operstate").write_text("up\n")
        (net / "master").symlink_to(os.path.relpath(bond, net))
        subprocess.run(
            [str(STANDIN), "--standin-init", member], env={**os.environ, **env}, check=True
        )
    assert device.is_dir()
    return tc / "traffic_class"


def test_a_lag_member_sets_its_bond_devices_tos(run_cli, tmp_path):
    """The RoCE knobs of a LAG member are mlx5_bond_0's: without them the bond's RoCE
    left with ToS 0."""
    env = {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}
    root = tmp_path / "root"
    traffic_class = lag_members(root, env)
    assert rdma_port_of(str(root), LAG[1]) == ("mlx5_bond_0", 1)
    assert rdma_port_of(str(root), "bond0") == ("mlx5_bond_0", 1)
    first = run_module(run_cli, env, {"interface": LAG[0], "sysfs_root": str(root)})
    assert first["changed"] and not first.get("failed"), first
    assert first["device"] == {"name": "mlx5_bond_0", "port": 1}
    assert traffic_class.read_text() == "106\n"
    tos = root / "sys/kernel/config/rdma_cm/mlx5_bond_0/ports/1/default_roce_tos"
    assert tos.read_text() == "106\n"
    assert {"write": str(tos), "value": "106"} in first["boot_steps"]
    # The second member finds the bond device's knobs set: only its own DCB changes.
    second = run_module(run_cli, env, {"interface": LAG[1], "sysfs_root": str(root)})
    assert second["changed"] and second["writes"] == [], second
    assert second["knobs"]["traffic_class"] == "106"


def test_role_stops_at_a_port_that_stays_down(run_playbook, tmp_path):
    """Rolling change: the first leg of a bond does not come back after its PFC change;
    the role fails the host there and leaves the other leg alone."""
    env = mlnx_qos_standin_env(tmp_path)
    root = tmp_path / "root"
    lag_members(root, env)
    link_drops_on_pfc(tmp_path, env, LAG[0], root / "sys/class/net" / LAG[0] / "operstate")
    playbook = tmp_path / "play.yml"
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n"
        f"        name: {ROLES_DIR / 'roce_host_qos'}\n"
        "        tasks_from: apply.yml\n"
    )
    extra = {
        "roce_host_qos_sysfs_root": str(root),
        "roce_host_qos_backend": "mlnx_qos",
        "roce_host_qos_link_wait": 1,
        "__roce_host_qos_ifaces": LAG,
        "__roce_host_qos_policy": {},
    }
    run = run_playbook("-i", "localhost,", str(playbook), "-e", json.dumps(extra), env=env)
    assert run.returncode != 0, run.output
    assert recap(run)["failed"] == 1
    assert failure_messages(run) == [
        f"localhost: roce_qos: {LAG[0]} was not up again 1 s after the change "
        "(link_wait, roce_host_qos_link_wait)"
    ]
    [failed] = [e["event_data"]["res"] for e in run.events if e["event"] == "runner_on_failed"]
    assert failed["results"] == [], failed  # no port was done before the one that failed
    untouched = subprocess.run(
        [str(STANDIN), "-i", LAG[1]], env={**os.environ, **env}, capture_output=True, text=True
    )
    assert parse_mlnx_qos(untouched.stdout)["pfc"] == [0] * 8, untouched.stdout
