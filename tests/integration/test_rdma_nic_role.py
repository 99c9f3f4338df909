"""rdma_nic: bad input fails before any change, naming the variable; the reboot request
reaches rdma_stack's handler once per host, and only under rdma_stack_reboot if_needed.

Everything runs ansible-playbook against localhost (connection local). Input cases run
the whole role in --check and fail in validation. The reboot cases run only the role's
reboot.yml with module results written here, next to a STAND-IN rdma_stack role (written
to a temporary roles directory that comes first on the roles path) whose handler on the
"rdma_stack reboot" topic only prints: nothing here can reboot this machine.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mstflint_standin import FlintCard, install_cli, write_image
from role_play import (
    ROLES_DIR,
    arg_spec_task,
    assert_failed_before_any_change,
    failure_messages,
    handlers_run,
    play,
    recap,
    tasks_run,
)

ROLE = "rdma_nic"
PSID_CX6DX = "MT_0000000359"


def failed_early(proc, output):
    assert_failed_before_any_change(ROLE, proc, output, ("rdma_nic : Install mstflint",))


def message(proc, word: str) -> str:
    messages = [text for text in failure_messages(proc) if word in text]
    assert messages, proc.output
    return messages[0]


def test_unknown_tool(run_play):
    proc, output = run_play({"rdma_nic_tool": "flint"})
    failed_early(proc, output)
    assert tasks_run(proc)[-1].startswith(arg_spec_task(ROLE))
    line = next(line for line in output.splitlines() if "rdma_nic_tool" in line)
    assert "mstconfig" in line and "flint" in line


def test_link_type_choices_in_the_named_settings(run_play):
    proc, output = run_play({"rdma_nic_settings": {"LINK_TYPE_P1": "ETHERNET"}})
    failed_early(proc, output)
    line = next(line for line in output.splitlines() if "LINK_TYPE_P1" in line)
    assert "ETHERNET" in line and "ETH" in line


def test_misspelled_named_setting_lists_the_names(run_play):
    proc, output = run_play({"rdma_nic_settings": {"SRIOV_ENABLE": True}})
    failed_early(proc, output)
    line = next(line for line in output.splitlines() if "SRIOV_ENABLE" in line)
    assert "rdma_nic_settings" in line and "SRIOV_EN" in line and "NUM_OF_VFS" in line


def test_link_type_in_the_free_form_settings(run_play):
    proc, output = run_play(
        {"rdma_nic_device_settings": {"mlx5_3": {"LINK_TYPE_P2": "infiniband"}}}
    )
    failed_early(proc, output)
    assert tasks_run(proc)[-1] == "rdma_nic : Validate the link types"
    line = message(proc, "LINK_TYPE_P2")
    assert "rdma_nic_device_settings.mlx5_3.LINK_TYPE_P2=infiniband" in line


@pytest.mark.parametrize(
    ("extra", "shown"),
    [
        ({"rdma_nic_extra_settings": {"ROCE-CC": 1}}, "rdma_nic_extra_settings.ROCE-CC=1"),
        (
            {"rdma_nic_extra_settings": {"NUM_OF_VFS": [8]}},
            "rdma_nic_extra_settings.NUM_OF_VFS=[8]",
        ),
    ],
)
def test_bad_free_form_entries(run_play, extra, shown):
    proc, output = run_play(extra)
    failed_early(proc, output)
    assert shown in message(proc, "rdma_nic_extra_settings")


def test_parallel_cards_must_be_one_or_more(run_play):
    proc, output = run_play({"rdma_nic_parallel_cards": 0})
    failed_early(proc, output)
    assert "got 0" in message(proc, "rdma_nic_parallel_cards")


def test_device_settings_must_be_dictionaries(run_play):
    proc, output = run_play({"rdma_nic_device_settings": {"mlx5_0": "ETH"}})
    failed_early(proc, output)
    assert "mlx5_0" in message(proc, "rdma_nic_device_settings")


def test_cnp_setting_that_disagrees_with_the_policy(run_play):
    proc, output = run_play(
        {
            "rdma_roce_policy": {"cnp_dscp": 46, "cnp_priority": 5},
            "rdma_nic_settings": {"CNP_DSCP_P1": 46, "CNP_802P_PRIO_P1": 6},
        }
    )
    failed_early(proc, output)
    line = message(proc, "rdma_roce_policy")
    assert "rdma_nic_settings.CNP_802P_PRIO_P1=6" in line
    assert "CNP_DSCP_P1" not in line, "the agreeing value must not be reported"
    assert "cnp_priority=5" in line


def test_cc_prio_mask_that_disagrees_with_the_policy(run_play):
    proc, output = run_play(
        {
            "rdma_roce_policy": {"roce_priority": 4},
            "rdma_nic_extra_settings": {"ROCE_CC_PRIO_MASK_P2": 8},
        }
    )
    failed_early(proc, output)
    line = message(proc, "rdma_roce_policy")
    assert "rdma_nic_extra_settings.ROCE_CC_PRIO_MASK_P2=8" in line and "ecn_priorities=4" in line


def test_policy_settings_per_port(run_cli, tmp_path):
    """CNP marking and DCQCN's priority mask from rdma_roce_policy, on both ports."""
    playbook = tmp_path / "vars.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_vars: " + str(ROLES_DIR / ROLE / "vars" / "main.yml") + "\n"
        "    - ansible.builtin.debug:\n        var: __rdma_nic_cnp_settings\n"
    )
    policy = {"roce_priority": 4, "ecn_priorities": [2, 4], "cnp_dscp": 46, "cnp_priority": 7}
    proc = run_cli(
        "ansible-playbook", "-i", "localhost,", "-c", "local", str(playbook),
        "-e", json.dumps({"rdma_roce_policy": policy}),
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = proc.stdout
    for port in ("P1", "P2"):
        assert f'"CNP_DSCP_{port}": 46' in shown
        assert f'"CNP_802P_PRIO_{port}": 7' in shown
        assert f'"ROCE_CC_PRIO_MASK_{port}": 20' in shown, shown  # bits 2 and 4


@pytest.mark.parametrize(
    ("dcbx", "expected"),
    [(None, None), (False, False), (True, True), ("no", False)],
    ids=["unset", "false", "true", "string"],
)
def test_policy_dcbx_per_port(run_cli, tmp_path, dcbx, expected):
    """LLDP_NB_DCBX_P1/P2 follow rdma_roce_policy.nic_firmware_dcbx; unset: not touched."""
    playbook = tmp_path / "vars.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        + "".join(
            f"    - ansible.builtin.include_vars: {ROLES_DIR / ROLE / part / 'main.yml'}\n"
            for part in ("defaults", "vars")
        )
        + "    - ansible.builtin.debug:\n"
        + "        msg: '{{ __rdma_nic_policy_settings | to_json }}'\n"
    )
    policy = {} if dcbx is None else {"nic_firmware_dcbx": dcbx}
    proc = run_cli(
        "ansible-playbook", "-i", "localhost,", "-c", "local", str(playbook),
        "-e", json.dumps({"rdma_roce_policy": policy}),
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = json.JSONDecoder().raw_decode(proc.stdout)[0]["plays"][0]["tasks"][-1]["hosts"][
        "localhost"
    ]["msg"]
    settings = json.loads(shown)
    assert settings["CNP_DSCP_P1"] == 48
    if expected is None:
        assert not any(name.startswith("LLDP_NB_DCBX") for name in settings)
    else:
        assert (settings["LLDP_NB_DCBX_P1"], settings["LLDP_NB_DCBX_P2"]) == (expected, expected)


def test_dcbx_setting_that_disagrees_with_the_policy(run_play):
    proc, output = run_play(
        {
            "rdma_roce_policy": {"nic_firmware_dcbx": False},
            "rdma_nic_device_settings": {"mlx5_0": {"LLDP_NB_DCBX_P2": "False(0)"}},
            "rdma_nic_extra_settings": {"LLDP_NB_DCBX_P1": 1},
        }
    )
    failed_early(proc, output)
    line = message(proc, "nic_firmware_dcbx")
    assert "rdma_nic_extra_settings.LLDP_NB_DCBX_P1=1" in line
    assert "LLDP_NB_DCBX_P2" not in line, "the agreeing value must not be reported"


def test_firmware_dcbx_is_refused_on_a_roce_host(run_play, tmp_path):
    """roce_host_qos puts every RoCE port of a roce_hosts member in DCBX host mode:
    nic_firmware_dcbx: true contradicts it and fails before the firmware is touched."""
    roce_hosts = tmp_path / "roce_hosts.yml"
    roce_hosts.write_text("all:\n  children:\n    roce_hosts:\n      hosts:\n        localhost:\n")
    proc, output = run_play(
        {"rdma_roce_policy": {"nic_firmware_dcbx": True}}, "-i", str(roce_hosts)
    )
    failed_early(proc, output)
    assert "roce_host_qos" in message(proc, "rdma_roce_policy.nic_firmware_dcbx must not be true")


def test_bad_policy_values(run_play):
    proc, output = run_play({"rdma_roce_policy": {"cnp_dscp": 64}})
    failed_early(proc, output)
    line = message(proc, "rdma_roce_policy.cnp_dscp")
    assert "got 64" in line
    # The shared policy's own rules, not a looser copy: CNP apart from RoCE.
    proc, output = run_play({"rdma_roce_policy": {"cnp_priority": 3}})
    failed_early(proc, output)
    assert "must differ from rdma_roce_policy.roce_priority" in message(proc, "cnp_priority")
    # A wrong type: the role's argument spec (the policy's schema) refuses it first.
    proc, output = run_play({"rdma_roce_policy": {"nic_firmware_dcbx": "sometimes"}})
    failed_early(proc, output)
    assert tasks_run(proc)[-1].startswith(arg_spec_task(ROLE))
    line = message(proc, "argument 'nic_firmware_dcbx' is of type str found in 'rdma_roce_policy'")
    assert "unable to convert to bool" in line


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"rdma_roce_policy": {"cnp_dscp": 46, "cnp_priority": 5}},
        {"rdma_roce_policy": {"cnp_dscp": 46}, "rdma_nic_settings": {"CNP_DSCP_P2": 46}},
        {"rdma_nic_extra_settings": {"ROCE_CC_PRIO_MASK_P1": 8}},
        {
            "rdma_roce_policy": {"nic_firmware_dcbx": True},
            "rdma_nic_extra_settings": {"LLDP_NB_DCBX_P1": "True(1)"},
        },
        {"rdma_nic_cnp_from_policy": False, "rdma_nic_settings": {"CNP_DSCP_P1": 24}},
        {"rdma_nic_settings": {"LINK_TYPE_P1": "IB", "SRIOV_EN": True, "NUM_OF_VFS": 8}},
        {"rdma_nic_extra_settings": {"LINK_TYPE_P2": 2}},
        {"rdma_nic_device_settings": {"0000:3b:00.0": {"LINK_TYPE_P1": "eth"}}},
        # Not a roce_hosts member: nothing puts its ports in DCBX host mode.
        {"rdma_roce_policy": {"nic_firmware_dcbx": True}},
    ],
)
def test_good_input_passes_validation(run_play, extra):
    proc, output = run_play(extra, "--tags", "rdma_nic-validate")
    assert proc.returncode == 0, output
    assert "rdma_nic : Validate that CNP settings agree with rdma_roce_policy" in tasks_run(proc)
    assert recap(proc)["failed"] == 0


# --- reboot coordination --------------------------------------------------------------

STANDIN_HANDLER = """\
---
# Stand-in for rdma_stack's reboot handler: same topic, prints instead of rebooting.
- name: Reboot for the RDMA stack
  ansible.builtin.debug:
    msg: "STAND-IN REBOOT of {{ inventory_hostname }}"
  listen: rdma_stack reboot
  when: rdma_stack_reboot == 'if_needed'
"""

REBOOT_PLAY = """\
- name: Firmware results that wait for a reboot
  hosts: localhost
  connection: local
  gather_facts: false
  roles: {roles}
  tasks:
    - name: Run rdma_nic's reboot step
      ansible.builtin.include_role:
        name: rdma_nic
        tasks_from: reboot.yml
      vars:
        __rdma_nic_targets: [mlx5_0, mlx5_1, mlx5_2]
        __rdma_nic_results:
          cards:
            - {{device: mlx5_0, pci_address: "0000:1a:00.0", device_type: ConnectX7,
               before: {{LINK_TYPE_P1: "IB(1)"}}, after: {{LINK_TYPE_P1: "ETH(2)"}},
               changes: {{LINK_TYPE_P1: "ETH"}}, skipped: [], reboot_required: true}}
            - {{device: mlx5_1, pci_address: "0000:1b:00.0", device_type: ConnectX7,
               before: {{}}, after: {{}}, changes: {{}}, skipped: [], reboot_required: true}}
            - {{device: mlx5_2, pci_address: "0000:1c:00.0", device_type: ConnectX6DX,
               before: {{}}, after: {{}}, changes: {{}}, skipped: [], reboot_required: false}}
        __rdma_nic_firmware_results:
          cards:
            - {{device: mlx5_0, pci_address: "0000:1a:00.0", psid: MT_0000000834,
               before: 28.38.1002, running: 28.38.1002, after: 28.39.1002,
               image: /srv/fw/cx7.bin, burned: true, skipped: null, reboot_required: true,
               changed: true, images: []}}
            - {{device: mlx5_2, pci_address: "0000:1c:00.0", psid: MT_0000000359,
               before: 22.39.2048, running: 22.36.1010, after: 22.39.2048,
               image: /srv/fw/cx6dx.bin, burned: false, skipped: null, reboot_required: true,
               changed: false, images: []}}
    - name: Show rdma_nic_facts
      ansible.builtin.debug:
        var: rdma_nic_facts
"""


@pytest.fixture
def run_reboot(run_playbook, tmp_path):
    handlers = tmp_path / "roles" / "rdma_stack" / "handlers"
    handlers.mkdir(parents=True)
    (handlers / "main.yml").write_text(STANDIN_HANDLER)
    roles_path = f"{tmp_path / 'roles'}:{ROLES_DIR}"

    def run(policy: str | None, with_stack: bool = True):
        playbook = tmp_path / "reboot.yml"
        playbook.write_text(REBOOT_PLAY.format(roles="[rdma_stack]" if with_stack else "[]"))
        extra = [] if policy is None else ["-e", f"rdma_stack_reboot={policy}"]
        proc = run_playbook(
            "-i", "localhost,", str(playbook), *extra, env={"ANSIBLE_ROLES_PATH": roles_path}
        )
        assert proc.returncode == 0, proc.output
        return proc

    return run


def test_one_reboot_for_several_devices_under_if_needed(run_reboot):
    proc = run_reboot("if_needed")
    output = proc.output
    assert handlers_run(proc) == ["rdma_stack : Reboot for the RDMA stack"]
    assert output.count("STAND-IN REBOOT of localhost") == 1
    # Firmware images (mlx5_0 burned, mlx5_2 burned earlier) and settings (mlx5_0, mlx5_1)
    # wait for the same, single reboot.
    assert "firmware (settings or image) of mlx5_0, mlx5_1, mlx5_2." in output
    assert '"reboot_required": true' in output
    assert '"image": "/srv/fw/cx7.bin"' in output
    assert '"images"' not in output, "rdma_nic_facts.firmware keeps only the summary keys"


def test_policy_never_reports_and_does_not_notify(run_reboot):
    proc = run_reboot("never")
    output = proc.output
    assert handlers_run(proc) == []
    assert "needs a reboot for the firmware (settings or image) of mlx5_0, mlx5_1, mlx5_2" in output
    assert recap(proc)["changed"] == 0


def test_without_rdma_stack_in_the_play_the_reboot_is_reported(run_reboot):
    # No handler listens on the topic here: notifying it would fail the play.
    proc = run_reboot("if_needed", with_stack=False)
    output = proc.output
    assert handlers_run(proc) == []
    assert "reboot it yourself" in output


# --- firmware image update input ------------------------------------------------------


@pytest.fixture
def image_src(tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    write_image(
        folder / "fw-ConnectX6Dx-rel-22_38_1002-MCX623106AN-CDA_Ax.bin", PSID_CX6DX, "22.38.1002"
    )
    return folder


@pytest.mark.parametrize(
    ("extra", "shown"),
    [
        ({"rdma_nic_firmware_src": "https://example.invalid/fw/"}, "never downloaded"),
        ({"rdma_nic_firmware_src": "/nonexistent/firmware"}, "no such directory on the controller"),
        ({"rdma_nic_firmware_dir": "firmware"}, "must be an absolute path"),
        ({"rdma_nic_firmware_version": "latest"}, "rdma_nic_firmware_version"),
    ],
)
def test_bad_firmware_input(run_play, extra, shown):
    proc, output = run_play({"rdma_nic_firmware_update": True, **extra})
    failed_early(proc, output)
    assert tasks_run(proc)[-1] == "rdma_nic : Validate the firmware image source"
    line = message(proc, shown)
    name, value = next(iter(extra.items()))
    assert name in line and value in line


def test_firmware_source_without_images(run_play, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "fw.bin.zip").write_text("zipped, not usable\n")
    proc, output = run_play({"rdma_nic_firmware_update": True, "rdma_nic_firmware_src": str(empty)})
    failed_early(proc, output)
    assert "holds no *.bin firmware image" in message(proc, "rdma_nic_firmware_src")


def test_missing_image_choices(run_play):
    proc, output = run_play({"rdma_nic_firmware_missing_image": "ignore"})
    failed_early(proc, output)
    line = next(line for line in output.splitlines() if "rdma_nic_firmware_missing_image" in line)
    assert "fail" in line and "skip" in line


def test_firmware_input_is_not_checked_while_the_update_is_off(run_play):
    proc, output = run_play(
        {"rdma_nic_firmware_src": "/nonexistent"}, "--tags", "rdma_nic-validate"
    )
    assert proc.returncode == 0, output


def test_good_firmware_input_passes_validation(run_play, image_src):
    proc, output = run_play(
        {
            "rdma_nic_firmware_update": True,
            "rdma_nic_firmware_src": str(image_src),
            "rdma_nic_firmware_version": "22.39.2048",
        },
        "--tags",
        "rdma_nic-validate",
    )
    assert proc.returncode == 0, output
    assert "rdma_nic : Validate the firmware image source" in tasks_run(proc)


# --- firmware image update, whole role ----------------------------------------------
# The role runs on localhost against one of this machine's real PCI functions (any: the
# module only checks that it exists), with a STAND-IN `mstflint` executable first on PATH
# (tests/support/mstflint_standin.py: a ConnectX card and its flash, kept in a JSON file
# between runs). Only the validate, firmware and reboot steps run (tags): nothing here
# installs packages or reaches a real NIC.


@pytest.fixture
def firmware_play(run_playbook, tmp_path, image_src):
    functions = sorted(Path("/sys/bus/pci/devices").iterdir())
    assert functions, "this machine shows no PCI function in /sys/bus/pci/devices"
    pci = functions[0].name
    state = tmp_path / "flint-state.json"
    install_cli(tmp_path / "bin", state, FlintCard(pci=pci, psid=PSID_CX6DX, flash="22.36.1010"))
    write_image(
        image_src / "fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin", PSID_CX6DX, "22.39.2048"
    )
    host_dir = tmp_path / "host-firmware"
    playbook = tmp_path / "rdma_nic.yml"
    playbook.write_text(play(ROLE))

    def attempt(*args: str):
        """One run of the play; its outcome, whatever it is, is the caller's to judge."""
        extra = {
            "rdma_nic_devices": [pci],
            "rdma_nic_tool": "mstconfig",
            "rdma_nic_firmware_update": True,
            "rdma_nic_firmware_src": str(image_src),
            "rdma_nic_firmware_dir": str(host_dir),
        }
        return run_playbook(
            "-i",
            "localhost,",
            str(playbook),
            "--tags",
            "rdma_nic-validate,rdma_nic-firmware",
            "-e",
            json.dumps(extra),
            *args,
            env={
                "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
                "RDMA_FABRIC_FLINT_STATE": str(state),
            },
        )

    def run(*args: str):
        proc = attempt(*args)
        assert proc.returncode == 0, proc.output
        return proc, [argv for argv in run.calls() if argv[-1] == "burn"]

    run.attempt = attempt
    run.calls = lambda: json.loads(state.read_text())["calls"]
    run.pci = pci
    run.host_dir = host_dir
    return run


def test_firmware_update_burns_once_and_asks_for_one_reboot(firmware_play, image_src):
    proc, burns = firmware_play("--check", "--diff")
    assert burns == [], "--check burned"
    assert "cannot be compared in this dry run" in proc.output, proc.output
    assert not firmware_play.host_dir.exists()

    proc, burns = firmware_play()
    assert len(burns) == 1
    assert burns[0][burns[0].index("-i") + 1].endswith("rel-22_39_2048-MCX623106AN-CDA_Ax.bin")
    assert recap(proc)["changed"] >= 2  # the copy and the burn
    needs = f"needs a reboot for the firmware (settings or image) of {firmware_play.pci}"
    assert needs in proc.output
    assert (
        firmware_play.host_dir / "fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin"
    ).is_file()

    proc, burns = firmware_play()
    assert len(burns) == 1, "the second run burned again"
    assert recap(proc)["changed"] == 0
    assert "reboot it yourself" in proc.output, "the burned firmware still waits for its reboot"

    proc, burns = firmware_play("--check", "--diff")
    assert len(burns) == 1 and recap(proc)["changed"] == 0


def test_a_directory_of_unrelated_bin_files_is_refused_before_any_copy(firmware_play, image_src):
    # /usr/lib/firmware-like: a real image beside files that are not ConnectX images.
    # The controller reads them all first; nothing reaches the host, nothing is burned.
    (image_src / "iwlwifi-regulatory.bin").write_bytes(os.urandom(256))
    proc = firmware_play.attempt()
    output = proc.output
    assert proc.returncode != 0, output
    assert "rdma_nic_firmware_src" in output and "iwlwifi-regulatory.bin: " in output, output
    assert "not ConnectX" in output and "No valid image found" in output, output
    assert "Copy the firmware images from the controller" not in "".join(tasks_run(proc))
    assert not list(firmware_play.host_dir.glob("*.bin")), "an image was copied before the refusal"
    calls = firmware_play.calls()
    assert all(argv[1] == "-i" for argv in calls), f"a device was touched: {calls}"
