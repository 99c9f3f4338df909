"""mlnx_qos and dcb parsers, the planner of both backends, the RoCE knobs, the module.

Recorded tool outputs in, the exact commands out; a second pass with the outputs the
tools print after the change yields no commands. The fixtures are modelled on real
recordings (each file's header names its source; tests/fixtures/roce_qos/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.dcb import (
    parse_app,
    parse_ets,
    parse_pfc,
)
from ansible_collections.rdma.fabric.plugins.module_utils.mlnx_qos import parse_mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import policy_or_raise
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    Dcb,
    MlnxQos,
    boot_commands,
    desired_qos,
    find_knobs,
    lldpad_commands,
    plan,
)
from conftest import ROLES_DIR
from sysfs_tree import add_cx6dx_roce, add_rxe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "roce_qos"
REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "standins" / "mlnx_qos"
APPLY_SCRIPT = ROLES_DIR / "roce_host_qos" / "files" / "roce-qos-apply"
POLICY = policy_or_raise({})
IF = "enp27s0f0np0"


def load(name: str) -> str:
    """A fixture without its `# ` header lines."""
    text = (FIXTURES / name).read_text()
    return "\n".join(line for line in text.splitlines() if not line.startswith("# ")) + "\n"


def runner(outputs: dict[tuple[str, ...], tuple[int, str, str]]):
    """A run_command stand-in that replays recorded outputs and logs every argv."""
    calls = []

    def run(argv):
        calls.append(list(argv))
        return outputs[tuple(argv)]

    run.calls = calls
    return run


# --- parsers ------------------------------------------------------------------------


def test_mlnx_qos_fresh_port():
    state = parse_mlnx_qos(load("mlnx_qos_fresh_trust_pcp.txt"))
    assert (state["dcbx"], state["trust"], state["dscp2prio"]) == ("os", "pcp", {})
    assert state["pfc"] == [0] * 8
    assert state["prio2buffer"] == [0] * 8
    assert state["receive_buffer_size"] == [130944, 130944, 0, 0, 0, 0, 0, 0]
    assert state["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]
    assert state["tc_tsa"] == ["vendor"] * 8


def test_mlnx_qos_grouped_ets_and_max_buffer():
    state = parse_mlnx_qos(load("mlnx_qos_policy_applied.txt"))
    assert state["trust"] == "dscp"
    assert state["dscp2prio"][26] == 3 and state["dscp2prio"][48] == 6
    assert len(state["dscp2prio"]) == 64
    assert state["max_buffer_size"] == 262016
    assert state["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert state["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert state["tc_tsa"] == ["ets", None, None, "ets", None, None, "strict", None]
    assert state["tc_bw"] == [50, None, None, 50, None, None, 0, None]


def test_mlnx_qos_dscp_line_wrap_and_firmware_dcbx():
    state = parse_mlnx_qos(load("mlnx_qos_dscp_wrap_firmware_dcbx.txt"))
    assert state["dcbx"] == "firmware"
    assert state["dscp2prio"][30] == 6 and state["dscp2prio"][48] == 6
    assert sorted(d for d, p in state["dscp2prio"].items() if p == 3) == [
        24,
        25,
        26,
        27,
        28,
        29,
        31,
    ]
    assert state["prio2buffer"] == [0, 2, 5, 7, 1, 2, 3, 6]


def test_mlnx_qos_legacy_release():
    state = parse_mlnx_qos(load("mlnx_qos_legacy_cx3.txt"))
    assert (state["dcbx"], state["trust"]) == (None, None)
    assert state["pfc"] == [0, 0, 0, 0, 1, 0, 0, 0]
    assert state["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]
    assert state["tcs"][1]["priorities"] == [0]


def test_dcb_app_triples_duplicates_and_empty():
    policy_app = parse_app(load("dcb_app_policy.json"))
    assert policy_app == {d: [3 if d == 26 else 6 if d == 48 else 0] for d in range(64)}
    assert parse_app(load("dcb_app_added_twice.json")) == {0: [0], 26: [2, 3], 48: [6]}
    assert parse_app(load("dcb_app_empty.json")) == {}
    assert parse_app("") == {}
    # Pairs, objects and rt_dsfield names are read as well.
    assert parse_app('{"dscp_prio": [[24, 3], {"dscp": "CS6", "prio": 6}]}') == {24: [3], 48: [6]}


def test_dcb_pfc_and_ets():
    assert parse_pfc(load("dcb_pfc_policy.json"))["prio_pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    pfc = parse_pfc(load("dcb_pfc_off.json"))
    assert (pfc["pfc_cap"], pfc["delay"], pfc["macsec_bypass"]) == (8, 0, False)
    assert parse_pfc(load("dcb_pfc_prerelease_objects.json"))["prio_pfc"] == [0, 0, 0, 1] + [0] * 4
    ets = parse_ets(load("dcb_ets_default.json"))
    assert ets["tc_bw"] == [33, 33, 34, 0, 0, 0, 0, 0]
    assert ets["tc_tsa"][:4] == ["ets", "ets", "ets", "strict"]
    assert ets["prio_tc"] == list(range(8))
    assert ets["willing"] is False


# --- mlnx_qos backend -----------------------------------------------------------------


def mlnx_read(fixture):
    run = runner({("mlnx_qos", "-i", IF): (0, load(fixture), "")})
    return MlnxQos("mlnx_qos").read(run, IF)


def test_mlnx_qos_fresh_port_exact_commands():
    current, reason = mlnx_read("mlnx_qos_fresh_trust_pcp.txt")
    assert reason == ""
    aspects, cmds, drift = plan(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY))
    # The fixture's mlx5 7 m gives way to the policy's 100 m.
    assert aspects == ["trust", "dscp2prio", "pfc", "ets", "cable_len"]
    base = ["mlnx_qos", "-i", IF]
    # All 64 DSCPs in one command (--dscp2prio appends), so DSCP 24-31 leave
    # mlx5's default priority 3 (the lossless one) for priority 0.
    every = [
        word
        for dscp in range(64)
        for word in ("--dscp2prio", f"set,{dscp},{3 if dscp == 26 else 6 if dscp == 48 else 0}")
    ]
    assert cmds == [
        base + ["--trust", "dscp"],
        base + every,
        base + ["--pfc", "0,0,0,1,0,0,0,0"],
        base
        + ["--prio_tc", "0,0,0,3,0,0,6,0"]
        + ["--tsa", "ets,strict,strict,ets,strict,strict,strict,strict"]
        + ["--tcbw", "50,0,0,50,0,0,0,0"],
        base + ["--cable_len", "100"],
    ]
    assert "trust: pcp -> dscp" in drift


def test_mlnx_qos_after_the_change_no_commands():
    current, _ = mlnx_read("mlnx_qos_policy_applied.txt")
    assert plan(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY)) == ([], [], [])


def test_mlnx_qos_partly_configured_port_only_ets():
    current, _ = mlnx_read("mlnx_qos_ofed4_dscp_pfc3.txt")
    aspects, cmds, _ = plan(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY))
    # The fixture keeps mlx5's default map (DSCP 24-31 on priority 3): dscp2prio too.
    assert aspects == ["dscp2prio", "ets", "cable_len"]
    assert [c[3] for c in cmds] == ["--dscp2prio", "--prio_tc", "--cable_len"]
    assert "set,27,0" in cmds[0] and "set,26,3" not in cmds[0]


def test_mlnx_qos_firmware_dcbx_is_taken_back():
    current, _ = mlnx_read("mlnx_qos_dscp_wrap_firmware_dcbx.txt")
    _, cmds, drift = plan(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY))
    assert cmds[0] == ["mlnx_qos", "-i", IF, "--dcbx", "os"]
    assert drift[0] == "dcbx: firmware -> os"


def test_mlnx_qos_legacy_release_is_asked_for_trust_dscp():
    current, _ = mlnx_read("mlnx_qos_legacy_cx3.txt")
    _, cmds, _ = plan(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY))
    assert cmds[0] == ["mlnx_qos", "-i", IF, "--trust", "dscp"]


def test_mlnx_qos_unsupported_netdev():
    run = runner({("mlnx_qos", "-i", "ens4"): (1, "", "Netlink error: Operation not supported\n")})
    assert MlnxQos("mlnx_qos").read(run, "ens4") == (None, "Netlink error: Operation not supported")


# --- dcb backend ----------------------------------------------------------------------


def dcb_outputs(app, pfc, ets, iface=IF, dcbx='{"host":true,"ieee":true}'):
    show = ("dcb", "-j", "-N")
    return {
        (*show, "pfc", "show", "dev", iface): (0, load(pfc), ""),
        (*show, "app", "show", "dev", iface, "dscp-prio"): (0, load(app), ""),
        (*show, "ets", "show", "dev", iface): (0, load(ets), ""),
        # `dcb -j dcbx show` prints only the flags that are set (iproute2 dcb_dcbx.c).
        ("dcb", "-j", "dcbx", "show", "dev", iface): (0, dcbx, "") if dcbx else (1, "", "nope"),
    }


@pytest.mark.parametrize(
    ("dcbx", "state", "command"),
    [
        ('{"host":true,"ieee":true}', "os", None),
        ('{"ieee":true}', "firmware", ["dcb", "dcbx", "set", "dev", IF, "host", "ieee"]),
        (
            '{"cee":true,"ieee":true}',
            "firmware",
            ["dcb", "dcbx", "set", "dev", IF, "host", "cee", "ieee"],
        ),
        (None, None, None),
    ],
    ids=["host", "firmware", "firmware-cee", "no-dcbx"],
)
def test_dcb_sets_dcbx_host_mode(dcbx, state, command):
    """The dcb backend left NIC-firmware DCBX in charge (a switch could override)."""
    outputs = dcb_outputs(
        "dcb_app_policy.json", "dcb_pfc_policy.json", "dcb_ets_policy.json", dcbx=dcbx
    )
    current, _ = Dcb("dcb").read(runner(outputs), IF)
    assert current["dcbx"] == state
    aspects, cmds, _ = plan(Dcb("dcb"), IF, current, desired_qos(POLICY))
    assert cmds == ([command] if command else [])
    boot = boot_commands(Dcb("dcb"), IF, current, desired_qos(POLICY))
    assert (boot[0][:3] == ["dcb", "dcbx", "set"]) is (state is not None)


def test_dcb_default_port_exact_commands():
    run = runner(dcb_outputs("dcb_app_empty.json", "dcb_pfc_off.json", "dcb_ets_default.json"))
    current, _ = Dcb("dcb").read(run, IF)
    aspects, cmds, _ = plan(Dcb("dcb"), IF, current, desired_qos(POLICY))
    assert aspects == ["dscp2prio", "pfc", "ets", "cable_len"]
    assert cmds == [
        ["dcb", "app", "replace", "dev", IF, "dscp-prio"]
        + [f"{d}:{3 if d == 26 else 6 if d == 48 else 0}" for d in range(64)],
        ["dcb", "pfc", "set", "dev", IF, "prio-pfc"]
        + ["0:off", "1:off", "2:off", "3:on", "4:off", "5:off", "6:off", "7:off"]
        + ["delay", "100"],
        ["dcb", "ets", "set", "dev", IF]
        + ["prio-tc", "0:0", "1:0", "2:0", "3:3", "4:0", "5:0", "6:6", "7:0"]
        + ["tc-tsa", "0:ets", "1:strict", "2:strict", "3:ets"]
        + ["4:strict", "5:strict", "6:strict", "7:strict"]
        + ["tc-bw", "0:50", "1:0", "2:0", "3:50", "4:0", "5:0", "6:0", "7:0"],
    ]


def test_dcb_after_the_change_no_commands():
    run = runner(dcb_outputs("dcb_app_policy.json", "dcb_pfc_policy.json", "dcb_ets_policy.json"))
    current, _ = Dcb("dcb").read(run, IF)
    assert plan(Dcb("dcb"), IF, current, desired_qos(POLICY)) == ([], [], [])


def test_dcb_appended_rule_is_replaced_not_added():
    outputs = dcb_outputs("dcb_app_added_twice.json", "dcb_pfc_policy.json", "dcb_ets_policy.json")
    current, _ = Dcb("dcb").read(runner(outputs), IF)
    _, cmds, drift = plan(Dcb("dcb"), IF, current, desired_qos(POLICY))
    # Every DSCP the app table lacks is set too (the one classification).
    missing = [f"{d}:0" for d in range(1, 64) if d not in (26, 48)]
    assert cmds == [
        [
            "dcb",
            "app",
            "replace",
            "dev",
            IF,
            "dscp-prio",
            *sorted(["26:3", *missing], key=lambda p: int(p.split(":")[0])),
        ]
    ]
    assert "26:[2, 3]->[3]" in drift[0]


def test_dcb_unsupported_netdev_real_message():
    # The message is what iproute2 6.1's dcb prints for lo and veth on this machine.
    show = ("dcb", "-j", "-N", "pfc", "show", "dev", "ens4")
    run = runner({show: (1, "\n", "Attribute read: Operation not supported\n")})
    assert Dcb("dcb").read(run, "ens4") == (None, "Attribute read: Operation not supported")
    assert run.calls == [list(show)]


def test_boot_commands_set_everything():
    cmds = boot_commands(Dcb("dcb"), IF, {"dcbx": None, "willing": False}, desired_qos(POLICY))
    assert [c[1] for c in cmds] == ["app", "pfc", "ets"]
    current, _ = mlnx_read("mlnx_qos_policy_applied.txt")
    cmds = boot_commands(MlnxQos("mlnx_qos"), IF, current, desired_qos(POLICY))
    # A release that prints the DCBX mode gets it set too: a switch may take it at boot.
    assert [c[3] for c in cmds] == [
        "--dcbx",
        "--trust",
        "--dscp2prio",
        "--pfc",
        "--prio_tc",
        "--cable_len",
    ]


def test_lldpad_commands():
    cmds = lldpad_commands("eth2", POLICY)
    assert cmds[0] == ["lldptool", "-L", "-i", "eth2", "adminStatus=rxtx"]
    assert cmds[3] == ["lldptool", "-T", "-i", "eth2", "-V", "PFC"] + [
        "enableTx=yes",
        "willing=no",
        "enabled=3",
    ]
    assert cmds[4][-1] == "app=3,5,26" and cmds[5][-1] == "app=6,5,48"
    assert "up2tc=0:0,1:0,2:0,3:3,4:0,5:0,6:6,7:0" in cmds[1]


# --- knobs ------------------------------------------------------------------------------


def ofed_host(root: Path, configfs_group: bool = True) -> Path:
    """A CX-6 Dx RoCE port with the OFED sysfs knobs, traffic_class, configfs and debugfs.

    configfs_group: the rdma_cm group of mlx5_1 exists (in a real configfs the kernel
    fills ports/N/ when the group is created by mkdir; a tmp tree cannot).
    """
    add_cx6dx_roce(root, "mlx5_1", "0000:1b:00.0", IF)
    dev = root / "sys/devices/pci0000:00/0000:1b:00.0"
    net = dev / "net" / IF
    for point in ("roce_rp", "roce_np"):
        (net / "ecn" / point / "enable").mkdir(parents=True)
        for prio in range(8):
            (net / "ecn" / point / "enable" / str(prio)).write_text("1\n")
    (net / "ecn/roce_np/cnp_dscp").write_text("48\n")
    (net / "ecn/roce_np/cnp_802p_prio").write_text("7\n")
    (net / "device").symlink_to(os.path.relpath(dev, net))
    tc = dev / "infiniband/mlx5_1/tc/1"
    tc.mkdir(parents=True)
    (tc / "traffic_class").write_text("Global tclass=-1\n")
    (root / "sys/kernel/config/rdma_cm").mkdir(parents=True)
    if configfs_group:
        (root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1").mkdir(parents=True)
        (root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos").write_text("0\n")
    cc = root / "sys/kernel/debug/mlx5/0000:1b:00.0/cc_params"
    cc.mkdir(parents=True)
    (cc / "np_cnp_dscp").write_text("48\n")
    (cc / "np_cnp_prio").write_text("6\n")
    return root


def test_knobs_found_where_the_kernel_has_them(tmp_path):
    ofed_host(tmp_path, configfs_group=False)
    knobs = {k["name"]: k for k in find_knobs(str(tmp_path), IF, "mlx5_1", 1, POLICY)}
    assert knobs["ecn_roce_np_enable_3"]["want"] == "1"
    assert knobs["ecn_roce_rp_enable_0"]["want"] == "0"
    assert (
        knobs["ecn_roce_np_cnp_802p_prio"]["have"],
        knobs["ecn_roce_np_cnp_802p_prio"]["want"],
    ) == ("7", "6")
    assert (knobs["traffic_class"]["have"], knobs["traffic_class"]["want"]) == ("-1", "106")
    assert knobs["rdma_cm_device"]["kind"] == "mkdir"
    assert knobs["rdma_cm_device"]["have"] == "absent"
    assert knobs["debugfs_np_cnp_dscp"]["have"] == knobs["debugfs_np_cnp_dscp"]["want"] == "48"


def test_no_knobs_on_a_kernel_without_them(tmp_path):
    add_cx6dx_roce(tmp_path, "mlx5_1", "0000:1b:00.0", IF)
    assert find_knobs(str(tmp_path), IF, "mlx5_1", 1, POLICY) == []


# --- the module, for real, against the mlnx_qos stand-in and a tmp sysfs tree ----------------

JSON_CALLBACK = {
    "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
    "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
}


def mlnx_qos_standin_env(tmp_path: Path) -> dict[str, str]:
    """Environment in which `mlnx_qos` is the stand-in, with IF initialised in tmp_path."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mlnx_qos").symlink_to(STANDIN)
    env = {
        "PATH": f"{bindir}:{os.environ['PATH']}",
        "MLNX_QOS_STANDIN_DIR": str(tmp_path / "standin"),
    }
    subprocess.run([str(STANDIN), "--standin-init", IF], env={**os.environ, **env}, check=True)
    return env


@pytest.fixture
def standin_env(tmp_path):
    return {**mlnx_qos_standin_env(tmp_path), **JSON_CALLBACK}


def run_module(run_cli, env, args, *extra):
    proc = run_cli(
        "ansible", "localhost", "-i", "localhost,", "-c", "local",
        "-m", "rdma.fabric.roce_qos", "-a", json.dumps(args), *extra, env=env,
    )  # fmt: skip
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout.lstrip())
    return doc["plays"][0]["tasks"][0]["hosts"]["localhost"]


def standin(env, *args):
    return subprocess.run(
        [str(STANDIN), *args], env={**os.environ, **env}, capture_output=True, text=True, check=True
    ).stdout


def test_module_check_apply_idempotent_drift(run_cli, standin_env, tmp_path):
    root = ofed_host(tmp_path / "root")
    args = {"interface": IF, "sysfs_root": str(root)}
    tc = root / "sys/devices/pci0000:00/0000:1b:00.0/infiniband/mlx5_1/tc/1/traffic_class"

    checked = run_module(run_cli, standin_env, args, "--check", "--diff")
    assert checked["changed"] is True, checked
    assert "+pfc: 0,0,0,1,0,0,0,0" in checked["diff"]["after"].replace("\n", "\n+")
    assert tc.read_text() == "Global tclass=-1\n", "check mode wrote a knob"
    assert "Priority trust state: pcp" in standin(standin_env, "-i", IF), "check mode ran mlnx_qos"

    applied = run_module(run_cli, standin_env, args)
    assert applied["changed"] is True and not applied.get("failed"), applied
    assert [c[3] for c in applied["commands"]] == [
        "--trust",
        "--dscp2prio",
        "--pfc",
        "--prio_tc",
        "--cable_len",
    ]
    assert applied["commands"] == checked["commands"]
    assert tc.read_text() == "106\n"
    assert (root / "sys/kernel/config/rdma_cm/mlx5_1").is_dir()
    assert applied["after"]["qos"]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert applied["device"] == {"name": "mlx5_1", "port": 1}

    again = run_module(run_cli, standin_env, args, "--check")
    assert again["changed"] is False and again["drift"] == [], again

    standin(standin_env, "-i", IF, "--pfc", "0,0,0,0,0,0,0,0")
    (root / "sys/class/net" / IF / "ecn/roce_np/enable/3").write_text("0\n")
    drifted = run_module(run_cli, standin_env, {**args, "state": "gathered"})
    assert drifted["changed"] is False
    assert drifted["drift"] == [
        "pfc: 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0",
        "ecn_roce_np_enable_3: 0 -> 1",
    ]


def test_module_applies_every_interface_in_one_call(run_cli, standin_env, tmp_path):
    """interfaces with state=present: one module run per host, not one per rail; in
    order, and a refusal stops there with the entries done before it."""
    root = ofed_host(tmp_path / "root")
    (root / "sys/class/net/ens4").mkdir(parents=True)
    args = {"interfaces": [IF, "ens4"], "sysfs_root": str(root), "require_hw": False}

    checked = run_module(run_cli, standin_env, args, "--check", "--diff")
    assert checked["changed"] is True and not checked.get("failed"), checked
    mine, ens4 = checked["results"]
    assert (mine["interface"], ens4["interface"]) == (IF, "ens4")
    assert mine["commands"] and ens4["supported"] is False and ens4["changed"] is False
    assert [d["before_header"] for d in checked["diff"]] == [f"{IF} (mlnx_qos)"]
    assert "Priority trust state: pcp" in standin(standin_env, "-i", IF), "check mode ran mlnx_qos"

    applied = run_module(run_cli, standin_env, args)
    assert applied["changed"] is True and not applied.get("failed"), applied
    assert applied["results"][0]["after"]["qos"]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert applied["results"][0]["commands"] == checked["results"][0]["commands"]
    assert run_module(run_cli, standin_env, args)["changed"] is False

    standin(standin_env, "-i", IF, "--pfc", "0,0,0,0,0,0,0,0")
    strict = {**args, "require_hw": True}
    first_refused = run_module(run_cli, standin_env, {**strict, "interfaces": ["ens4", IF]})
    assert first_refused.get("failed") and "ens4 does not support DCB" in first_refused["msg"]
    assert first_refused["results"] == []
    untouched = run_module(run_cli, standin_env, {**args, "state": "gathered", "interfaces": [IF]})
    assert untouched["gathered"][0]["drift"] == ["pfc: 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0"]
    second_refused = run_module(run_cli, standin_env, strict)
    assert second_refused.get("failed") and "ens4 does not support DCB" in second_refused["msg"]
    [done] = second_refused["results"]
    assert done["interface"] == IF and done["changed"] is True
    assert done["after"]["qos"]["pfc"] == [0, 0, 0, 1, 0, 0, 0, 0]


def test_module_unsupported_nic(run_cli, standin_env, tmp_path):
    (tmp_path / "root/sys/class/net/ens4").mkdir(parents=True)
    args = {"interface": "ens4", "sysfs_root": str(tmp_path / "root")}
    failed = run_module(run_cli, standin_env, args)
    assert failed.get("failed") and "ens4 does not support DCB" in failed["msg"]
    skipped = run_module(run_cli, standin_env, {**args, "require_hw": False})
    assert not skipped.get("failed") and skipped["supported"] is False
    assert skipped["changed"] is False


def soft_roce_host(root: Path) -> Path:
    """rxe0 on virtio ens4 (no DCB) with rdma_cm's configfs group, as the lab VMs have it
    after a first apply (a tmp tree cannot fill ports/ on mkdir as the kernel does)."""
    add_rxe(root, "rxe0", "ens4", with_gids=True, mtu=1500)
    tos = root / "sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos"
    tos.parent.mkdir(parents=True)
    tos.write_text("0\n")
    return tos


def test_module_sets_the_roce_tos_on_a_netdev_without_dcb(run_cli, standin_env, tmp_path):
    """A port without DCB still marks RoCE with the policy's ToS, set now
    and at boot; with require_hw it fails and writes nothing."""
    root = tmp_path / "root"
    tos = soft_roce_host(root)
    args = {"interface": "ens4", "sysfs_root": str(root)}

    refused = run_module(run_cli, standin_env, args)
    assert refused.get("failed") and "ens4 does not support DCB" in refused["msg"], refused
    assert tos.read_text() == "0\n", "a refused run wrote the ToS"

    args["require_hw"] = False
    checked = run_module(run_cli, standin_env, args, "--check", "--diff")
    assert checked["changed"] is True and checked["supported"] is False, checked
    assert checked["writes"] == [{"path": str(tos), "before": "0", "after": "106"}]
    assert "rdma_cm_default_roce_tos: 106" in checked["diff"]["after"]
    assert tos.read_text() == "0\n", "check mode wrote the ToS"

    applied = run_module(run_cli, standin_env, args)
    assert applied["changed"] is True and not applied.get("failed"), applied
    assert tos.read_text() == "106\n"
    assert applied["commands"] == []
    assert applied["boot_steps"] == [
        {"mkdir": str(root / "sys/kernel/config/rdma_cm/rxe0")},
        {"write": str(tos), "value": "106"},
    ]
    assert any("follow the policy (rdma_cm_device" in w for w in applied["warnings"])

    again = run_module(run_cli, standin_env, args)
    assert again["changed"] is False and again["drift"] == [], again

    tos.write_text("0\n")
    gathered = run_module(run_cli, standin_env, {**args, "state": "gathered"})
    assert gathered["changed"] is False and tos.read_text() == "0\n"
    assert gathered["drift"] == ["rdma_cm_default_roce_tos: 0 -> 106"]
    assert gathered["expected"]["knobs"]["rdma_cm_default_roce_tos"] == "106"


def test_module_names_a_bad_policy_key(run_cli, standin_env, tmp_path):
    result = run_module(run_cli, standin_env, {"interface": IF, "policy": {"cnp_dscp": 64}})
    assert result.get("failed") and "rdma_roce_policy.cnp_dscp" in result["msg"]


def run_apply_script(config, root, env=None):
    """The role's boot-time script, run for real with its sysfs root at a tmp tree."""
    return subprocess.run(
        [sys.executable, str(APPLY_SCRIPT), str(config)],
        env={**os.environ, **(env or {}), "ROCE_QOS_SYS_ROOT": str(root)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_boot_script_restores_the_policy(run_cli, standin_env, tmp_path):
    root = ofed_host(tmp_path / "root")
    applied = run_module(run_cli, standin_env, {"interface": IF, "sysfs_root": str(root)})
    config = tmp_path / "roce-qos.json"
    config.write_text(
        json.dumps(
            {"wait_seconds": 1, "interfaces": [{"item": IF, "boot_steps": applied["boot_steps"]}]}
        )
    )
    # A reboot: the port and the knobs are back at their defaults.
    standin(standin_env, "--standin-init", IF)
    tc = root / "sys/devices/pci0000:00/0000:1b:00.0/infiniband/mlx5_1/tc/1/traffic_class"
    tc.write_text("Global tclass=-1\n")
    (root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos").write_text("0\n")
    proc = run_apply_script(config, root, standin_env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert tc.read_text() == "106\n"
    assert (
        root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos"
    ).read_text() == "106\n"
    after = run_module(
        run_cli, standin_env, {"interface": IF, "sysfs_root": str(root), "state": "gathered"}
    )
    assert after["drift"] == [], after["drift"]


def test_boot_script_reports_a_missing_netdev(tmp_path):
    config = tmp_path / "c.json"
    config.write_text(
        json.dumps({"wait_seconds": 0, "interfaces": [{"item": "nope0", "boot_steps": []}]})
    )
    proc = run_apply_script(config, tmp_path)
    assert proc.returncode == 1
    assert "nope0 did not appear" in proc.stdout


def test_boot_script_retries_until_the_rdma_side_appears(tmp_path):
    """rdma_cm/configfs loading after the netdev made the ToS writes fail once."""
    (tmp_path / "sys/class/net" / IF).mkdir(parents=True)
    late = tmp_path / "sys/kernel/config/rdma_cm"
    tos = late / "mlx5_1/ports/1/default_roce_tos"
    config = tmp_path / "c.json"
    steps = [{"mkdir": str(late / "mlx5_1")}, {"write": str(tos), "value": "106"}]
    config.write_text(
        json.dumps({"wait_seconds": 20, "interfaces": [{"item": IF, "boot_steps": steps}]})
    )
    # The "module" appears 2 s after boot: configfs' rdma_cm directory and, once the group
    # exists, its ports (the kernel fills them in a real configfs).
    filler = subprocess.Popen(
        ["sh", "-c", f"sleep 2; mkdir -p {late}; while [ ! -d {late}/mlx5_1 ]; do sleep 0.2; done;"
         f" mkdir -p {tos.parent}"]
    )  # fmt: skip
    try:
        proc = run_apply_script(config, tmp_path)
    finally:
        filler.wait(timeout=30)
    assert proc.returncode == 0, proc.stdout
    assert "retrying" in proc.stdout
    assert tos.read_text() == "106\n"


def test_boot_script_gives_up_at_the_deadline(tmp_path):
    (tmp_path / "sys/class/net" / IF).mkdir(parents=True)
    config = tmp_path / "c.json"
    step = {"write": str(tmp_path / "never/there"), "value": "1"}
    config.write_text(
        json.dumps({"wait_seconds": 2, "interfaces": [{"item": IF, "boot_steps": [step]}]})
    )
    proc = run_apply_script(config, tmp_path)
    assert proc.returncode == 1 and "finished with errors" in proc.stdout
