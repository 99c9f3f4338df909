"""rdma_stack: tasks an ordinary run skips together sit behind one conditional include.

At fleet scale the controller forks a worker per host even to skip a task: a group of
tasks that share the condition that skips them costs one skipped include instead. These
cases run the real role (its validation, module and reboot parts, or its package
install file) in --check against localhost (connection local) and read which tasks
started; the counterparts show the grouped tasks still run, and fail as they did, when
their condition holds. Nothing here installs, loads a module or reboots.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from role_play import check_run, failure_messages, outcomes, recap, results, tasks_run

ROLE = "rdma_stack"

# include task -> the tasks it holds, skipped one by one before.
GROUPS = {
    "Validate the DOCA input": [
        "Validate rdma_stack_doca_version",
        "Validate the DOCA repository URL",
    ],
    "Load the modules now": [
        "Find each module for the running kernel",
        "Fail on modules the running kernel does not have",
        "Load each module",
    ],
    "Act on a needed reboot": [
        "Report a pending reboot (rdma_stack_reboot is never)",
        "Request one reboot at the end of the play",
    ],
}
INSTALL_GROUP = (
    "Install the missing packages",
    ["Install packages (apt)", "Install packages (dnf)"],
)
# The role's read-only parts: validation, the kernel modules (written in --check only)
# and the reboot decision.
TAGS = "rdma_stack-validate,rdma_stack-modules,rdma_stack-reboot"


def _ordinary(tmp_path: Path) -> dict:
    """An inbox host in a container: no module loading, no reboot marker."""
    return {
        "rdma_stack_provider": "inbox",
        "rdma_stack_load_modules": False,
        "rdma_stack_gpudirect": "false",
        "__rdma_stack_reboot_marker": str(tmp_path / "reboot-required"),
    }


def _started(proc) -> list[str]:
    return [name.removeprefix(f"{ROLE} : ") for name in tasks_run(proc)]


def test_an_ordinary_run_skips_each_group_in_one_step(run_play, tmp_path):
    proc, output = run_play(_ordinary(tmp_path), "--tags", TAGS)
    assert proc.returncode == 0, output
    started = _started(proc)
    for include, grouped in GROUPS.items():
        assert outcomes(proc, f"{ROLE} : {include}") == {"localhost": "skipped"}, output
        assert not set(grouped) & set(started), f"{include}: {grouped} started"
    assert "Validate the kernel module names" in started, "validation did not run"
    assert recap(proc)["failed"] == 0


def test_doca_input_is_still_validated_under_its_tag(run_play):
    proc, output = run_play(
        {"rdma_stack_provider": "doca", "rdma_stack_doca_repo_url": "ftp://mirror/doca/"},
        "--tags",
        "rdma_stack-validate",
    )
    assert proc.returncode != 0, output
    assert _started(proc)[-1] == "Validate the DOCA repository URL", output
    assert any("ftp://mirror/doca/" in text for text in failure_messages(proc)), output


def test_loading_modules_still_names_a_module_the_kernel_lacks(run_play, tmp_path):
    extra = {
        **_ordinary(tmp_path),
        "rdma_stack_load_modules": True,
        "rdma_stack_extra_kernel_modules": ["no_such_rdma_module"],
    }
    proc, output = run_play(extra, "--tags", "rdma_stack-modules")
    assert proc.returncode != 0, output
    assert _started(proc)[-1] == "Fail on modules the running kernel does not have", output
    assert any("no_such_rdma_module" in text for text in failure_messages(proc)), output


def test_a_needed_reboot_is_still_reported(run_play, tmp_path):
    extra = _ordinary(tmp_path)
    Path(extra["__rdma_stack_reboot_marker"]).touch()
    proc, output = run_play(extra, "--tags", "rdma_stack-reboot")
    assert proc.returncode == 0, output
    report = f"{ROLE} : {GROUPS['Act on a needed reboot'][0]}"
    assert outcomes(proc, report) == {"localhost": "ok"}, output
    assert "reboot it yourself" in results(proc, report)["localhost"]["msg"]
    assert recap(proc)["changed"] == 0


INSTALL_PLAY = """\
- name: Install the packages of rdma_test_install
  hosts: localhost
  connection: local
  gather_facts: true
  tasks:
    - name: Leave a changed package result behind, as an earlier run of the role would
      ansible.builtin.set_fact:
        __rdma_stack_packages_result: {changed: true}
    - name: Run the role's package install
      ansible.builtin.include_role:
        name: rdma_stack
        tasks_from: install_packages.yml
      vars:
        rdma_stack_provider: doca
        __rdma_stack_install: "{{ rdma_test_install }}"
"""


@pytest.fixture
def run_install(run_playbook, tmp_path):
    playbook = tmp_path / "install.yml"
    playbook.write_text(INSTALL_PLAY)
    return check_run(run_playbook, playbook)


def _packages_changed(proc) -> bool:
    record = results(proc, f"{ROLE} : Record whether packages changed")["localhost"]
    return record["ansible_facts"]["__rdma_stack_packages_changed"]


def test_nothing_missing_skips_the_package_manager_in_one_step(run_install):
    # bash is installed wherever this runs; the result left behind must not count.
    proc, output = run_install({"rdma_test_install": ["bash"]})
    assert proc.returncode == 0, output
    include, grouped = INSTALL_GROUP
    assert outcomes(proc, f"{ROLE} : {include}") == {"localhost": "skipped"}, output
    assert not set(grouped) & set(_started(proc)), output
    assert _packages_changed(proc) is False, output


def test_a_missing_package_still_reaches_the_package_manager(run_install):
    proc, output = run_install({"rdma_test_install": ["bash", "rdma-fabric-no-such-package"]})
    assert proc.returncode != 0, output
    assert _started(proc)[-1] == "Install packages (apt)", output
    assert any("rdma-fabric-no-such-package" in text for text in failure_messages(proc)), output
