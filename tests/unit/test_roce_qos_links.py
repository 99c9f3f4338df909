"""Rolling changes and bonds (issue 14, item 6): one port at a time, each back up before
the next; a RoCE LAG bond is configured through its members. Real roce_qos module runs
against the mlnx_qos stand-in and a tmp sysfs tree (operstate, bonding/slaves)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    bond_members,
    wait_link_up,
)
from test_roce_qos import IF, JSON_CALLBACK, mlnx_qos_standin_env, ofed_host, run_module


def test_bond_members_from_sysfs(tmp_path):
    bond = tmp_path / "sys/class/net/bond0/bonding"
    bond.mkdir(parents=True)
    (bond / "slaves").write_text("enp1s0f0np0 enp1s0f1np1\n")
    assert bond_members(str(tmp_path), "bond0") == ["enp1s0f0np0", "enp1s0f1np1"]
    assert bond_members(str(tmp_path), IF) == []


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


def test_module_fails_when_the_port_does_not_come_back(run_cli, tmp_path):
    env = {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}
    root = ofed_host(tmp_path / "root")
    operstate = root / "sys/class/net" / IF / "operstate"
    operstate.write_text("up\n")
    args = {"interface": IF, "sysfs_root": str(root), "link_wait": 1, "knobs": False}
    # The stand-in does not toggle the link: up before and after -> the change passes.
    assert not run_module(run_cli, env, args).get("failed")
    # A port that went down with the change (and stays down) fails the task by name.
    env["PATH"] = f"{tmp_path / 'down'}:{env['PATH']}"
    (tmp_path / "down").mkdir()
    wrapper = tmp_path / "down" / "mlnx_qos"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *--pfc*) echo down > {operstate};; esac\n'
        f'exec {tmp_path / "bin" / "mlnx_qos"} "$@"\n'
    )
    wrapper.chmod(0o755)
    operstate.write_text("up\n")
    failed = run_module(run_cli, env, {**args, "policy": {"roce_priority": 4}})
    assert failed.get("failed"), failed
    assert f"{IF} was not up again 1 s after the change" in failed["msg"]
