"""rdma_nic on an ordinary run: steps skipped together cost one skipped include per host,
not one skipped task each (the controller forks a worker per host and task even to skip
it: the fleet budget). Behaviour stays: the tool-pending report still follows this run.

Everything runs ansible-playbook against localhost (connection local), in --check.
"""

from __future__ import annotations

import json

import pytest
from role_play import ROLES_DIR, failure_messages, outcomes, recap, tasks_run

ROLE = "rdma_nic"

# Steps a host without ConnectX devices, with the firmware tool present and no firmware
# update asked, skips as a whole: the include that holds them, then what it holds.
SKIPPED_AS_ONE = {
    "Install mstflint where it is missing": [
        "Install mstflint (apt)",
        "Install mstflint (dnf)",
        "Look for mstconfig and mlxconfig again (the package manager ran)",
    ],
    "Validate the firmware update input": ["Validate the firmware image source"],
    "Compare and configure the ConnectX devices found": [
        "Report devices that cannot be compared before mstflint is installed (check mode)",
        "Update the firmware image",
        "Apply the firmware settings",
    ],
    "Report or request the reboot the firmware waits for": [
        "Report a pending reboot (no reboot in this play)",
        "Request one reboot at the end of the play",
    ],
}


def test_a_host_without_connectx_skips_each_idle_step_once(run_play):
    # As in the fleet: rdma_stack ran first and found no device. No package to install
    # (rdma_nic_install_tools: false asks for none), whatever this machine has.
    proc, output = run_play({"rdma_stack_facts": {"devices": []}, "rdma_nic_install_tools": False})
    assert proc.returncode == 0, output
    assert recap(proc)["changed"] == 0
    started = tasks_run(proc)
    assert f"{ROLE} : Report a host without ConnectX devices" in started
    for include, held in SKIPPED_AS_ONE.items():
        assert outcomes(proc, f"{ROLE} : {include}") == {"localhost": "skipped"}, include
        begun = [name for name in held if f"{ROLE} : {name}" in started]
        assert not begun, f"started one by one, to be skipped: {begun}"


def test_the_settings_tag_still_reaches_the_settings(run_play):
    """--tags rdma_nic-settings runs the settings inside the devices' include, not the
    image update beside them (its tag is rdma_nic-firmware) nor the package step. The
    device is one this machine lacks: the module's refusal names it."""
    proc, output = run_play(
        {
            "rdma_nic_devices": ["mlx5_0"],
            "rdma_nic_tool": "mstconfig",
            "rdma_nic_firmware_update": True,
        },
        "--tags",
        "rdma_nic-settings",
    )
    started = tasks_run(proc)
    assert f"{ROLE} : Apply firmware settings (next boot)" in started, output
    assert f"{ROLE} : Update the firmware image" not in started
    assert f"{ROLE} : Read mstflint's package and the firmware tools on the PATH" not in started
    assert any("mlx5_0: no such RDMA device" in text for text in failure_messages(proc)), output
    assert recap(proc)["changed"] == 0


def tool_pending(run_cli, tmp_path, extra: dict) -> bool:
    playbook = tmp_path / "vars.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        f"    - ansible.builtin.include_vars: {ROLES_DIR / ROLE / 'vars' / 'main.yml'}\n"
        "    - ansible.builtin.debug:\n"
        "        msg: '{{ __rdma_nic_tool_pending | bool | to_json }}'\n"
    )
    proc = run_cli(
        "ansible-playbook", "-i", "localhost,", "-c", "local", str(playbook),
        "-e", json.dumps(extra),
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.JSONDecoder().raw_decode(proc.stdout)[0]
    return json.loads(doc["plays"][0]["tasks"][-1]["hosts"]["localhost"]["msg"])


NOT_FOUND = {"commands": {"mstconfig": None, "mlxconfig": None}}
FOUND = {"commands": {"mstconfig": "/usr/bin/mstconfig", "mlxconfig": None}}


def this_run(missing: list[str], read_again: dict) -> dict:
    """The first read (packages.yml) and the read after the install (packages_install.yml)."""
    return {"__rdma_nic_state": {"missing": missing}, "__rdma_nic_tools_after": read_again}


@pytest.mark.parametrize(
    ("extra", "pending"),
    [
        # This run found mstflint missing and check mode installed nothing: pending.
        (this_run(["mstflint"], NOT_FOUND), True),
        (this_run(["mstflint"], FOUND), False),
        # The package manager ran without a change: the read again was skipped.
        (this_run(["mstflint"], {"skipped": True}), False),
        # This run found nothing missing, so the install step did not run: what an earlier
        # run of the role in the same play read then (mstflint installed since) is stale.
        (this_run([], NOT_FOUND), False),
        # --tags rdma_nic-settings: the package step did not run at all.
        ({}, False),
    ],
    ids=["missing-not-installed", "missing-installed", "no-change", "stale", "not-read"],
)
def test_tool_pending_follows_this_run(run_cli, tmp_path, extra, pending):
    assert tool_pending(run_cli, tmp_path, extra) is pending
