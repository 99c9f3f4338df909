"""Host receive buffers and PFC storm prevention from rdma_roce_policy.

The roce_qos module, run for real against the mlnx_qos stand-in (extended to
--cable_len, --prio2buffer and --buffer_size) and an ethtool stand-in for the
pfc-prevention-tout tunable. The command lines the module generates were parsed by the
real mlnx_qos option parser (mlnx-tools python/mlnx_qos at v2607.0.6, commit 8fbfd9cf):
--cable_len takes one integer 0-65535, --prio2buffer and --buffer_size comma lists, and
with sysfs buffers a command giving both sets only buffer_size, so the module sends one
option a command.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    policy_or_raise,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    MlnxQos,
    desired_qos,
    plan,
    storm_knob,
)
from conftest import REPO_ROOT
from test_roce_qos import IF, JSON_CALLBACK, mlnx_qos_standin_env, ofed_host, run_module

ETHTOOL = REPO_ROOT / "tests" / "standins" / "ethtool"
BUFFERS = {
    "host_cable_length_m": 30,
    "host_prio2buffer": [0, 0, 0, 1, 0, 0, 0, 0],
    "host_buffer_size": [130944, 100000, 0, 0, 0, 0, 0, 0],
}


def test_defaults_leave_the_nic_buffer_split_and_follow_the_watchdog():
    policy = policy_or_raise({})
    assert [policy[k] for k in BUFFERS] == [100, None, None]
    assert policy["host_pfc_storm_timeout_ms"] == 200
    off = policy_or_raise({"pfc_watchdog": {"enabled": False}})
    assert off["host_pfc_storm_timeout_ms"] == 0


@pytest.mark.parametrize(
    ("bad", "key"),
    [
        ({"host_cable_length_m": 0}, "rdma_roce_policy.host_cable_length_m"),
        ({"host_prio2buffer": [0, 0, 0, 1]}, "rdma_roce_policy.host_prio2buffer"),
        ({"host_prio2buffer": [0, 0, 0, 0, 0, 0, 0, 0]}, "rdma_roce_policy.host_prio2buffer"),
        (
            {**BUFFERS, "host_buffer_size": [262016, 0, 0, 0, 0, 0, 0, 0]},
            "rdma_roce_policy.host_buffer_size",
        ),
        ({"pfc_watchdog": {"detection_time_ms": 9000}}, "rdma_roce_policy.pfc_watchdog"),
    ],
)
def test_bad_host_buffers_are_named(bad, key):
    policy, errors = normalize_policy(bad)
    assert policy is None and len(errors) == 1 and errors[0].startswith(key), errors


def test_mlnx_qos_commands_one_buffer_option_each():
    policy = policy_or_raise(BUFFERS)
    desired = desired_qos(policy)
    current = {
        **desired,
        "backend": "mlnx_qos",
        "cable_len": 7,
        "prio2buffer": [0] * 8,
        "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
    }
    aspects, commands, drift = plan(MlnxQos("mlnx_qos"), IF, current, desired)
    assert aspects == ["cable_len", "prio2buffer", "buffer_size"]
    assert commands == [
        ["mlnx_qos", "-i", IF, "--cable_len", "30"],
        ["mlnx_qos", "-i", IF, "--prio2buffer", "0,0,0,1,0,0,0,0"],
        ["mlnx_qos", "-i", IF, "--buffer_size", "130944,100000,0,0,0,0,0,0"],
    ]
    assert drift[0] == "cable_len: 7 -> 30"
    # dcb reads no buffers: nothing planned there (the policy's buffers need mlnx_qos).
    assert plan(MlnxQos("mlnx_qos"), IF, {**desired, "backend": "dcb"}, desired)[0] == []


def test_storm_knob_parses_ethtool_and_skips_a_nic_without_it():
    policy = policy_or_raise({})

    def run(argv):
        return 0, "pfc-prevention-tout: 100\n", ""

    knob = storm_knob(run, "ethtool", IF, policy)
    assert (knob["have"], knob["want"]) == ("100", "200")
    assert knob["argv"] == ["ethtool", "--set-tunable", IF, "pfc-prevention-tout", "200"]
    unsupported = storm_knob(
        lambda argv: (1, "", "pfc-prevention-tout: Operation not supported"), "ethtool", IF, policy
    )
    assert unsupported is None


def test_module_sets_buffers_and_storm_prevention_then_nothing(run_cli, tmp_path):
    env = {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}
    env["ETHTOOL_STANDIN_DIR"] = str(tmp_path / "ethtool")
    (tmp_path / "bin" / "ethtool").symlink_to(ETHTOOL)
    subprocess.run([str(ETHTOOL), "--standin-init", IF], env=env, check=True)
    root = ofed_host(tmp_path / "root")
    args = {"interface": IF, "sysfs_root": str(root), "policy": BUFFERS}

    applied = run_module(run_cli, env, args)
    assert applied["changed"] is True and not applied.get("failed"), applied
    options = [c[3] for c in applied["commands"]]
    assert options[-3:] == ["--cable_len", "--prio2buffer", "--buffer_size"]
    after = applied["after"]
    assert after["qos"]["cable_len"] == 30
    assert after["qos"]["prio2buffer"] == BUFFERS["host_prio2buffer"]
    assert after["qos"]["buffer_size"] == BUFFERS["host_buffer_size"]
    assert after["knobs"]["ethtool_pfc_prevention_tout"] == "200"
    assert (tmp_path / "ethtool" / f"{IF}.storm").read_text() == "200\n"
    assert {"argv": [str(tmp_path / "bin" / "ethtool"), "--set-tunable", IF,
                     "pfc-prevention-tout", "200"]} in applied["boot_steps"]  # fmt: skip
    assert ["--buffer_size" in s.get("argv", []) for s in applied["boot_steps"]].count(True) == 1

    again = run_module(run_cli, env, args, "--check")
    assert again["changed"] is False and again["drift"] == [], again
    assert json.dumps(again["before"]["qos"]["buffer_size"]) == json.dumps(
        BUFFERS["host_buffer_size"]
    )


def test_dcb_backend_says_it_leaves_the_host_buffers(run_cli, tmp_path):
    """The dcb backend has no cable length: a policy with host buffers is not dropped
    silently on a host without mlnx_qos. The module finds the real
    dcb first (/usr/sbin), which knows no such port: require_hw false, the warning is
    what is asserted."""
    env = {**JSON_CALLBACK}
    root = ofed_host(tmp_path / "root")
    args = {"interface": IF, "sysfs_root": str(root), "backend": "dcb", "require_hw": False}
    result = run_module(run_cli, env, {**args, "policy": BUFFERS, "knobs": False})
    assert not result.get("failed"), json.dumps(result)
    assert any(
        f"roce_qos: {IF}: the dcb backend sets no host buffer split; "
        "rdma_roce_policy.host_prio2buffer, "
        "rdma_roce_policy.host_buffer_size left to the NIC's own" in w
        for w in result["warnings"]
    ), result.get("warnings")
    plain = run_module(run_cli, env, {**args, "knobs": False})
    assert not any("buffers" in w for w in plain.get("warnings", [])), plain["warnings"]
