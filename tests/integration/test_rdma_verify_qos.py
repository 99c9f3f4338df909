"""rdma_verify's "RoCE QoS" check: a host's lossless QoS read back against rdma_roce_policy.

The comparison (module_utils/roce_qos.mismatches) on the recorded mlnx_qos and dcb
outputs, one test per kind of difference; the check (module_utils/rdma_verify.qos_check)
on pass, fail, not checked and failed reads; then the real rdma.fabric.roce_qos module
against the mlnx_qos stand-in (tests/standins/mlnx_qos, not the real tool) on a port
whose PFC was reset, and the whole role in check mode on the same port.
"""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils.mlnx_qos import parse_mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import policy_or_raise
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    Dcb,
    MlnxQos,
    desired_qos,
    mismatches,
)
from role_play import recap
from sysfs_tree import add_cx6dx_roce
from test_rdma_verify import info, roce_port
from test_roce_qos import IF, STANDIN, dcb_outputs, load, mlnx_qos_standin_env, runner

POLICY = policy_or_raise({})
DESIRED = desired_qos(POLICY)
PFC_OFF = f"{IF}: PFC on 0,0,0,0,0,0,0,0, policy wants priority 3"
# dcb_pfc_off.json reads delay 0: the policy's host cable length (100 m)
# differs too.
PFC_RESET = f"{PFC_OFF}; {IF}: cable_len 0, policy wants 100"


def mlnx(fixture):
    state, reason = MlnxQos("mlnx_qos").read(
        runner({("mlnx_qos", "-i", IF): (0, load(fixture), "")}), IF
    )
    assert reason == ""
    return state


def dcb(app="dcb_app_policy.json", pfc="dcb_pfc_policy.json", ets="dcb_ets_policy.json"):
    state, reason = Dcb("dcb").read(runner(dcb_outputs(app, pfc, ets)), IF)
    assert reason == ""
    return state


# --- the comparison ------------------------------------------------------------------


@pytest.mark.parametrize("state", [mlnx("mlnx_qos_policy_applied.txt"), dcb()])
def test_a_port_set_by_the_policy_matches(state):
    assert mismatches(state, DESIRED) == []


def test_pfc_reset():
    state = dcb(pfc="dcb_pfc_off.json")
    assert mismatches(state, DESIRED) == [
        "PFC on 0,0,0,0,0,0,0,0, policy wants priority 3",
        "cable_len 0, policy wants 100",
    ]


def test_pfc_on_the_wrong_priority_and_a_policy_with_two():
    state = mlnx("mlnx_qos_legacy_cx3.txt")  # PFC on 4 only, trust pcp (implied)
    lines = mismatches(state, DESIRED)
    assert "PFC on 0,0,0,0,1,0,0,0, policy wants priority 3" in lines
    assert "trust pcp, policy wants dscp" in lines
    off = desired_qos(dict(POLICY, pfc_priorities=[]))
    assert "PFC on 0,0,0,1,0,0,0,0, policy wants no priority" in mismatches(
        mlnx("mlnx_qos_policy_applied.txt"), off
    )


def test_trust_and_dscp_map_of_a_fresh_port():
    lines = mismatches(mlnx("mlnx_qos_fresh_trust_pcp.txt"), DESIRED)
    # All 64 DSCPs are the policy's; the unnamed ones read as one line.
    assert lines[:4] == [
        "trust pcp, policy wants dscp",
        "DSCP 0-25,27-47,49-63 -> no priority, policy wants priority 0",
        "DSCP 26 -> no priority, policy wants priority 3",
        "DSCP 48 -> no priority, policy wants priority 6",
    ]


def test_dscp_mapped_twice():
    state = dcb(app="dcb_app_added_twice.json")
    assert mismatches(state, DESIRED) == [
        "DSCP 1-25,27-47,49-63 -> no priority, policy wants priority 0",
        "DSCP 26 -> priorities 2,3, policy wants priority 3",
    ]


def test_firmware_dcbx():
    lines = mismatches(mlnx("mlnx_qos_dscp_wrap_firmware_dcbx.txt"), DESIRED)
    assert lines[0] == (
        "DCBX firmware-controlled (a switch's DCBX can overwrite the host's QoS), "
        "policy wants OS-controlled"
    )
    # mlx5's default map (DSCP 8-63 off priority 0) differs from the policy's.
    assert "DSCP 24-25,27-29,31 -> priority 3, policy wants priority 0" in lines


def test_ets_default_classes():
    lines = mismatches(dcb(ets="dcb_ets_default.json"), DESIRED)
    assert lines == [
        "ETS priority->TC 0,1,2,3,4,5,6,7, policy wants 0,0,0,3,0,0,6,0",
        "ETS TC 0 ets 33%, policy wants ets 50%",
        "ETS TC 3 strict, policy wants ets 50%",
    ]


def test_ets_willing_and_vendor_tsa():
    state = dict(dcb(), willing=True)
    assert mismatches(state, DESIRED) == [
        "ETS willing (takes a DCBX peer's settings), policy wants not willing"
    ]
    state = mlnx("mlnx_qos_ofed4_dscp_pfc3.txt")
    lines = [line for line in mismatches(state, DESIRED) if not line.startswith("DSCP ")]
    # The fixture keeps mlx5's 7 m; the policy's host cable length is 100 m.
    assert lines[-1] == "cable_len 7, policy wants 100", lines
    assert lines[:-1] and all(line.startswith("ETS ") for line in lines[:-1]), lines


def test_knobs():
    knobs = [
        {"name": "ecn_roce_np_enable_3", "have": "0", "want": "1"},
        {"name": "traffic_class", "have": "106", "want": "106"},
        {"name": "rdma_cm_device", "have": "absent", "want": "present"},
    ]
    assert mismatches(dcb(), DESIRED, knobs) == [
        "ecn_roce_np_enable_3 is 0, policy wants 1",
        "rdma_cm_device is absent, policy wants present",
    ]


def test_a_json_round_trip_reads_the_same():
    """After Ansible's JSON the DSCP keys are strings: still a match, still a miss."""
    assert mismatches(json.loads(json.dumps(dcb())), DESIRED) == []
    fresh = json.loads(json.dumps(mlnx("mlnx_qos_fresh_trust_pcp.txt")))
    assert "DSCP 26 -> no priority, policy wants priority 3" in mismatches(fresh, DESIRED)


# --- the check ---------------------------------------------------------------------------


def entry(iface, state=None, backend="dcb", reason=None, knobs=None):
    """One netdev of roce_qos state=gathered (interfaces), as the module returns it."""
    have = {k: v[0] for k, v in (knobs or {}).items()}
    want = {k: v[1] for k, v in (knobs or {}).items()}
    if state is None:
        found = {"before": {"qos": {}, "knobs": have}, "expected": {"qos": {}, "knobs": want}}
        return {
            "interface": iface,
            "supported": False,
            "backend": backend,
            "reason": reason,
            **(found if knobs else {}),
        }
    return json.loads(
        json.dumps(
            {
                "interface": iface,
                "supported": True,
                "backend": backend,
                "before": {"qos": state, "knobs": have},
                "expected": {"qos": DESIRED, "knobs": want},
            }
        )
    )


def gathered(*entries):
    return {"changed": False, "failed": False, "gathered": list(entries)}


NO_DCB = "Attribute read: Operation not supported"


def test_check_passes():
    check = rv.qos_check(
        gathered(
            entry("eth2", dcb()), entry("eth3", dcb(), knobs={"traffic_class": ("106", "106")})
        ),
        {},
    )
    assert check == {
        "check": "RoCE QoS",
        "device": None,
        "port": None,
        "ok": True,
        "detail": "eth2, eth3 match rdma_roce_policy (dcb)",
    }


def test_check_fails_naming_every_difference():
    check = rv.qos_check(
        gathered(
            entry("eth2", dcb(pfc="dcb_pfc_off.json")),
            entry("eth3", dcb(), knobs={"ecn_roce_np_enable_3": ("0", "1")}),
            entry("eth4", dcb()),
        ),
        {},
        require_hw=True,
    )
    assert check["ok"] is False and "skipped" not in check
    assert check["detail"] == (
        "eth2: PFC on 0,0,0,0,0,0,0,0, policy wants priority 3; "
        "eth2: cable_len 0, policy wants 100; "
        "eth3: ecn_roce_np_enable_3 is 0, policy wants 1; "
        "eth4 matches rdma_roce_policy (dcb)"
    )


def test_check_judges_against_the_policy_it_is_given():
    """A site policy (RoCE on DSCP 24) judges a port set to the defaults as differing."""
    check = rv.qos_check(gathered(entry("eth2", dcb())), {"roce_dscp": 24})
    assert not check["ok"]
    assert "eth2: DSCP 24 -> priority 0, policy wants priority 3" in check["detail"]


def test_no_dcb_is_not_checked_in_a_lab():
    result = gathered(entry("eth1", reason=NO_DCB))
    check = rv.qos_check(result, {}, require_hw=False)
    assert check["ok"] is True and check["skipped"] is True
    assert check["detail"] == f"not checked: eth1 has no DCB support (dcb: {NO_DCB})"


def test_no_dcb_still_checks_the_roce_tos():
    """A Soft-RoCE or virtio port has no DCB, but its RDMA-CM ToS is set
    by the policy and read back: a wrong one fails the check by name."""
    tos = "rdma_cm_default_roce_tos"
    right = entry(
        "eth1", reason=NO_DCB, knobs={"rdma_cm_device": ("present",) * 2, tos: ("106",) * 2}
    )
    check = rv.qos_check(gathered(right), {}, require_hw=False)
    assert check["ok"] is True and check["skipped"] is True
    assert check["detail"] == (
        f"not checked: eth1 has no DCB support (dcb: {NO_DCB}), its RoCE knobs match "
        f"({tos}, rdma_cm_device)"
    )
    wrong = entry("eth2", reason=NO_DCB, knobs={tos: ("0", "106")})
    check = rv.qos_check(gathered(right, wrong), {}, require_hw=False)
    assert check["ok"] is False and "skipped" not in check
    assert check["detail"].startswith(f"eth2: {tos} is 0, policy wants 106; not checked: ")


def test_a_kernel_without_a_global_tos_is_said():
    """On a mainline kernel (no OFED traffic_class) the report says that
    only traffic whose application sets a ToS reaches the lossless class."""
    mainline = {**entry("eth2", dcb()), "global_tos": False}
    ofed = {**entry("eth3", dcb(), knobs={"traffic_class": ("106", "106")}), "global_tos": True}
    check = rv.qos_check(gathered(mainline, ofed), {})
    assert check["ok"] is True
    assert check["detail"] == (
        "eth2: no global RoCE ToS on this kernel (no OFED traffic_class): only traffic whose "
        "application sets a ToS (NCCL_IB_TC, RDMA-CM's default_roce_tos) is on the lossless "
        "class; eth2, eth3 match rdma_roce_policy (dcb)"
    )


def test_no_dcb_fails_when_hardware_is_required():
    check = rv.qos_check(gathered(entry("eth1", reason=NO_DCB)), {}, require_hw=True)
    assert check["ok"] is False and "skipped" not in check
    assert check["detail"].startswith(f"eth1 has no DCB support (dcb: {NO_DCB}): a lossless")


def test_no_tool_and_a_mix():
    result = gathered(
        entry("eth1", backend=None, reason="no mlnx_qos or dcb on this host"),
        entry("eth2", dcb(), backend="mlnx_qos"),
    )
    check = rv.qos_check(result, {}, require_hw=False)
    assert check["ok"] is True and "skipped" not in check
    assert check["detail"] == (
        "not checked: eth1: no mlnx_qos or dcb on this host; "
        "eth2 matches rdma_roce_policy (mlnx_qos)"
    )


def test_a_failed_read_or_a_bad_policy_fails():
    failed = {"failed": False, "msg": "roce_qos: eth9 is not a network interface on this host"}
    check = rv.qos_check(failed, {})
    assert not check["ok"] and "eth9 is not a network interface" in check["detail"]
    check = rv.qos_check(gathered(entry("eth2", dcb())), {"roce_priority": 8})
    assert not check["ok"] and "rdma_roce_policy.roce_priority" in check["detail"]


def test_health_names_the_roce_netdevs():
    def port(dev, layer, netdev):
        return {
            "device": dev,
            "port": 1,
            "state": "ACTIVE",
            "phys_state": "LinkUp",
            "link_layer": layer,
            "netdev": netdev,
            "sm_lid": "1",
        }

    info = {
        "ports": [
            port("mlx5_0", "InfiniBand", "ib0"),
            port("mlx5_2", "Ethernet", "eth3"),
            port("mlx5_1", "Ethernet", "eth2"),
        ],
        "perftest_version": "6.06",
    }
    assert rv.host_health(info, {})["roce_netdevs"] == ["eth2", "eth3"]
    assert rv.host_health(info, {"devices": ["mlx5_1"]})["roce_netdevs"] == ["eth2"]
    assert rv.host_health(info, {"link_layer": "InfiniBand"})["roce_netdevs"] == []


# --- the module and the role, for real, on a port whose PFC was reset --------------------


@pytest.fixture
def reset_port(tmp_path, run_cli):
    """A CX-6 Dx RoCE port in a tmp sysfs tree, set to the policy through the module and
    the mlnx_qos stand-in, then its PFC reset (what a reboot without the boot unit does),
    and ens4: a netdev the stand-in does not know, which fails like one without DCB."""
    root = tmp_path / "root"
    add_cx6dx_roce(root, "mlx5_1", "0000:1b:00.0", IF)
    (root / "sys/class/net/ens4").mkdir(parents=True)
    env = mlnx_qos_standin_env(tmp_path)
    full = {**os.environ, **env}
    applied = module(run_cli, env, {"interface": IF, "sysfs_root": str(root)})
    assert applied["changed"] and not applied.get("failed"), applied
    subprocess.run([str(STANDIN), "-i", IF, "--pfc", "0,0,0,0,0,0,0,0"], env=full, check=True)
    return root, env


def module(run_cli, env, args, *extra):
    proc = run_cli(
        "ansible", "localhost", "-i", "localhost,", "-c", "local",
        "-m", "rdma.fabric.roce_qos", "-a", json.dumps(args), *extra,
        env={**env, "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
             "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json"},
    )  # fmt: skip
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout.lstrip())
    return doc["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_module_reads_every_netdev_in_one_call(run_cli, reset_port):
    root, env = reset_port
    args = {"interfaces": [IF, "ens4"], "state": "gathered", "sysfs_root": str(root)}
    result = module(run_cli, env, {**args, "require_hw": False}, "--check")
    assert not result.get("failed") and result["changed"] is False, result
    mine, ens4 = result["gathered"]
    assert mine["interface"] == IF and mine["supported"] is True
    assert mine["drift"] == ["pfc: 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0"]
    assert ens4["supported"] is False and ens4["backend"] == "mlnx_qos"
    # The tree is a mainline kernel's (no OFED traffic_class); ens4 has no RDMA port.
    assert (mine["global_tos"], ens4["global_tos"]) == (False, None)

    check = rv.qos_check(result, {}, require_hw=False)
    assert check["ok"] is False
    assert check["detail"].startswith(f"{PFC_OFF}; {IF}: no global RoCE ToS on this kernel")
    assert "; not checked: ens4 has no DCB support" in check["detail"]

    # require_hw as the module's own: the netdev without DCB fails the read.
    strict = module(run_cli, env, {**args, "require_hw": True})
    assert strict.get("failed") and "ens4 does not support DCB" in strict["msg"]
    # The same list with state=present applies the policy, then reads back clean.
    present = module(run_cli, env, {**args, "state": "present", "require_hw": False})
    assert present["changed"] and [r["interface"] for r in present["results"]] == [IF, "ens4"]
    again = module(run_cli, env, {**args, "require_hw": False}, "--check")
    assert again["gathered"][0]["drift"] == []


PLAY = """\
- name: rdma_verify on a host whose sysfs is a tmp tree
  hosts: localhost
  connection: local
  gather_facts: false
  vars:
    rdma_verify_sysfs_root: "{root}"
  module_defaults:
    rdma.fabric.roce_qos: {{sysfs_root: "{root}"}}
  roles:
    - role: rdma_verify
"""


def test_role_reports_the_reset_pfc_in_check_mode(run_playbook, reset_port, tmp_path):
    root, env = reset_port
    playbook = tmp_path / "verify.yml"
    playbook.write_text(PLAY.format(root=root))

    def play(extra):
        proc = run_playbook(
            "-i", "localhost,", str(playbook), "--check", "--diff",
            "-e", json.dumps({"rdma_verify_report_dir": str(tmp_path / "reports"), **extra}),
            env=env,
        )  # fmt: skip
        return proc, proc.output

    proc, output = play({})
    # A failed health check fails the dry run too, after printing it.
    assert proc.returncode == 2, output
    assert f"FAIL check localhost RoCE QoS: {PFC_OFF}" in output, output
    assert recap(proc)["changed"] == 0 and recap(proc)["failed"] == 1
    shown = subprocess.run(
        [str(STANDIN), "-i", IF], env={**os.environ, **env}, capture_output=True, text=True
    ).stdout
    assert parse_mlnx_qos(shown)["pfc"] == [0] * 8, "the check changed the port"

    proc, output = play({"rdma_verify_check_qos": False})
    # The tree's other checks still fail (its port has no RoCE v2 IPv4 GID, whatever tools).
    assert proc.returncode == 2, output
    assert "check localhost RoCE QoS" not in output, output


REPORT_PLAY = """\
- name: Render an rdma_verify report from each host's canned health
  hosts: all
  gather_facts: false
  tasks:
    - name: Run the report tasks of rdma_verify
      ansible.builtin.include_role:
        name: rdma_verify
        tasks_from: report.yml
"""


def canned_health(octet):
    report_info = dict(info(roce_port(octet)), boot_id=str(octet))
    return rv.host_health(report_info, {"active_mtu": 1024, "counter_max": {}})


def test_report_shows_the_check_failed_and_not_checked(run_cli, tmp_path):
    """report.yml of the role renders the RoCE QoS check like every health check: a
    failure with its difference, and a lab host's "not checked" (junit: skipped)."""
    healths = {"lab1": canned_health(11), "lab2": canned_health(12)}
    reset = rv.qos_check(gathered(entry(IF, dcb(pfc="dcb_pfc_off.json"))), {})
    lab = rv.qos_check(gathered(entry("eth1", reason=NO_DCB)), {}, require_hw=False)
    healths["lab1"]["checks"].append(reset)
    healths["lab2"]["checks"].append(lab)
    playbook = tmp_path / "report.yml"
    playbook.write_text(REPORT_PLAY)
    inventory = tmp_path / "hosts.yml"
    hosts = {
        h: {"ansible_connection": "local", "__rdma_verify_health": v} for h, v in healths.items()
    }
    inventory.write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    reports = tmp_path / "reports"
    extra = {"rdma_verify_report_dir": str(reports), "__rdma_verify_stamp": "20260101T000000Z"}
    proc = run_cli("ansible-playbook", "-i", str(inventory), str(playbook), "-e", json.dumps(extra))
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert f"FAIL check lab1 RoCE QoS: {PFC_RESET}" in output
    checks = len(healths["lab1"]["checks"]) + len(healths["lab2"]["checks"]) + 1
    assert f"health checks: {checks - 2} passed, 1 failed, 1 not checked" in output

    latest = reports / "latest"
    results = json.loads((latest / "results.json").read_text())
    assert results["summary"]["checks_skipped"] == 1
    qos = {c["host"]: c for c in results["checks"] if c["check"] == "RoCE QoS"}
    assert qos["lab1"]["ok"] is False and qos["lab2"]["skipped"] is True

    markdown = (latest / "report.md").read_text()
    assert f"| check RoCE QoS | lab1 | {PFC_RESET} |" in markdown
    not_checked = f"not checked: eth1 has no DCB support (dcb: {NO_DCB})"
    assert f"| lab2 | - | RoCE QoS | not checked | {not_checked} |" in markdown
    html = (latest / "report.html").read_text()
    assert '<td class="result">not checked</td>' in html and PFC_RESET in html

    junit = ET.parse(latest / "junit.xml").getroot()
    cases = {c.get("classname"): c for c in junit.iter("testcase") if c.get("name") == "RoCE QoS"}
    assert cases["health.lab1"].find("failure").get("message") == PFC_RESET
    assert cases["health.lab2"].find("skipped").get("message") == not_checked
    assert junit.find("testsuite[@name='health']").get("skipped") == "1"
