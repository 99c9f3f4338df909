"""The dcb stand-in (tests/standins/dcb) and the roce_qos dcb backend agree: what the
backend plans, run through the stand-in, leaves a port the backend reads as the policy
(DCBX host included). The stand-in refuses what mlx5 refuses, so a backend that
generates such a command fails here, not first on a real NIC."""

from __future__ import annotations

import json
import subprocess

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import policy_or_raise
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    Dcb,
    boot_commands,
    desired_qos,
    plan,
)
from conftest import REPO_ROOT

STANDIN = REPO_ROOT / "tests" / "standins" / "dcb"
IF = "enp27s0f0np0"
DESIRED = desired_qos(policy_or_raise({}))


@pytest.fixture
def dcb(tmp_path, monkeypatch):
    """run(argv) -> (rc, out, err) with argv[0] "dcb" answered by the stand-in."""
    monkeypatch.setenv("DCB_STANDIN_DIR", str(tmp_path))
    monkeypatch.setenv("DCB_STANDIN_REAL", str(tmp_path / "no-real-dcb"))

    def run(argv):
        proc = subprocess.run(
            [str(STANDIN), *argv[1:]], capture_output=True, text=True, check=False
        )
        return proc.returncode, proc.stdout, proc.stderr

    run(["dcb", "--standin-init", IF])
    run.state = lambda: json.loads((tmp_path / f"{IF}.json").read_text())
    run.log = lambda: (tmp_path / f"{IF}.log").read_text().splitlines()
    return run


def test_plan_applied_through_the_standin_reads_back_as_the_policy(dcb):
    current, _ = Dcb("dcb").read(dcb, IF)
    assert (current["dcbx"], current["dcbx_flags"]) == ("firmware", ["cee", "ieee"])
    aspects, cmds, _ = plan(Dcb("dcb"), IF, current, DESIRED)
    assert aspects == ["dcbx", "dscp2prio", "pfc", "ets", "cable_len"]
    # The cable length rides on the `dcb pfc set` command (delay, the policy's 100 m).
    assert cmds[2][-2:] == ["delay", "100"]
    assert [dcb(cmd)[0] for cmd in cmds] == [0, 0, 0, 0]
    assert dcb.log()[0] == f"dcb dcbx set dev {IF} host cee ieee"
    after, _ = Dcb("dcb").read(dcb, IF)
    # All 64 DSCPs: the unnamed ones on priority 0, none left to mlx5's default.
    want = {d: [3 if d == 26 else 6 if d == 48 else 0] for d in range(64)}
    assert after["dcbx"] == "os" and after["dscp2prio"] == want
    assert after["cable_len"] == 100
    assert plan(Dcb("dcb"), IF, after, DESIRED) == ([], [], [])


def test_boot_commands_restore_a_fresh_port(dcb):
    current, _ = Dcb("dcb").read(dcb, IF)
    for cmd in boot_commands(Dcb("dcb"), IF, current, DESIRED):
        assert dcb(cmd)[0] == 0, cmd
    dcb(["dcb", "--standin-init", IF])  # a reboot: the NIC forgets
    for cmd in boot_commands(Dcb("dcb"), IF, Dcb("dcb").read(dcb, IF)[0], DESIRED):
        assert dcb(cmd)[0] == 0, cmd
    assert plan(Dcb("dcb"), IF, Dcb("dcb").read(dcb, IF)[0], DESIRED)[0] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dcbx", "set", "dev", IF, "lld-managed"], "Operation not supported"),
        (["dcbx", "set", "dev", IF, "ieee"], "Operation not supported"),
        (["ets", "set", "dev", IF, "tc-tsa", "0:ets", "tc-bw", "0:40"], "Invalid argument"),
        (["pfc", "set", "dev", IF, "prio-pfc", "8:on"], "Invalid mapping"),
    ],
    ids=["lld-managed", "no-host", "ets-sum", "priority-8"],
)
def test_what_mlx5_refuses_is_refused(dcb, argv, message):
    before = dcb.state()
    rc, _out, err = dcb(["dcb", *argv])
    assert rc == 1 and message in err
    assert dcb.state() == before


def test_no_flag_hands_dcbx_back_to_the_firmware(dcb):
    dcb(["dcb", "dcbx", "set", "dev", IF, "host", "ieee"])
    assert json.loads(dcb(["dcb", "-j", "dcbx", "show", "dev", IF])[1]) == {
        "host": True,
        "ieee": True,
    }
    dcb(["dcb", "dcbx", "set", "dev", IF])
    assert Dcb("dcb").read(dcb, IF)[0]["dcbx"] == "firmware"


def test_a_netdev_without_state_is_not_a_dcb_port(dcb):
    rc, _out, err = dcb(["dcb", "-j", "-N", "pfc", "show", "dev", "veth0"])
    assert (rc, err.strip()) == (1, "Attribute read: Operation not supported")


def test_dcb_backend_sets_the_cable_length_as_the_pfc_delay(dcb):
    """The host cable length follows the policy on the dcb backend too.
    dcb-buffer(8) has no cable length (prio-buffer, buffer-size only); mlx5 takes the
    IEEE PFC delay as its cable length (en_dcbnl.c mlx5e_dcbnl_ieee_setpfc, 1-999 m),
    which `dcb pfc set dev IF delay N` sets (dcb-pfc(8))."""
    desired = desired_qos(policy_or_raise({"cable_length_m": 40}))
    current, _ = Dcb("dcb").read(dcb, IF)
    assert current["cable_len"] == 7, "mlx5's default, MLX5E_DEFAULT_CABLE_LEN"
    aspects, cmds, drift = plan(Dcb("dcb"), IF, current, desired)
    assert "cable_len" in aspects
    pfc = [c for c in cmds if c[1] == "pfc"]
    assert pfc == [
        ["dcb", "pfc", "set", "dev", IF, "prio-pfc"]
        + [f"{p}:{'on' if p == 3 else 'off'}" for p in range(8)]
        + ["delay", "40"]
    ]
    assert [dcb(cmd)[0] for cmd in cmds] == [0] * len(cmds)
    after, _ = Dcb("dcb").read(dcb, IF)
    assert after["cable_len"] == 40 and after["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert plan(Dcb("dcb"), IF, after, desired) == ([], [], [])
    # Alone (PFC already right): `dcb pfc set ... delay` keeps prio-pfc.
    longer = desired_qos(policy_or_raise({"cable_length_m": 40, "host_cable_length_m": 300}))
    _aspects, cmds, _ = plan(Dcb("dcb"), IF, after, longer)
    assert cmds == [["dcb", "pfc", "set", "dev", IF, "delay", "300"]]
    assert dcb(cmds[0])[0] == 0
    assert Dcb("dcb").read(dcb, IF)[0]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
