"""roce_host_qos under --tags/--skip-tags: a task that reads a registered or set
variable must run whenever the task that makes it is skipped by a tag filter, or the
run fails with "... is undefined". Asked of Ansible itself (ansible-playbook
--list-tasks: the tag filter, no host contacted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PLAY = """- hosts: localhost
  gather_facts: false
  roles: [rdma.fabric.roce_host_qos]
"""

READ = "Read lldpad's and the boot unit's states and whether the dcb tool is installed"
OS_VARS = "Load OS-specific variables"
LLDPAD_READ = "Read lldpad's units"
LLDPAD_KEEP = "Keep lldpad and make it advertise the policy"
MLNX_QOS_LOOKUP = "Look for mlnx_qos where lldpad would be configured by the auto backend"
TASKS = REPO / "collections/ansible_collections/rdma/fabric/roles/roce_host_qos/tasks"
# As playbooks/roce_fabric.yml applies it.
TAGGED_ROLE = "roles:\n    - role: rdma.fabric.roce_host_qos\n      tags: [roce_host_qos]"


def listed(tmp_path, *args, play=None):
    if play is None:
        play = tmp_path / "play.yml"
        play.write_text(PLAY)
    ansible_playbook = Path(sys.executable).with_name("ansible-playbook")
    out = subprocess.run(
        [str(ansible_playbook), "-i", "localhost,", "--list-tasks", str(play), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")},
    ).stdout
    return [line.split(" : ", 1)[-1].split("\tTAGS")[0].strip() for line in out.splitlines()]


def test_skip_tags_lldpad_keeps_the_read_that_persist_uses(tmp_path):
    # persist.yml "Enable the boot unit" reads __roce_host_qos_host_state.
    tasks = listed(tmp_path, "--skip-tags", "roce_host_qos-lldpad")
    assert "Enable the boot unit" in tasks
    assert READ in tasks


@pytest.mark.parametrize("tag", ["roce_host_qos-apply", "roce_host_qos-persist"])
def test_tagged_read_has_the_os_vars_it_templates(tmp_path, tag):
    # The read templates __roce_host_qos_dcb_package (vars/Debian.yml, set_vars.yml).
    tasks = listed(tmp_path, "--tags", tag)
    assert READ in tasks
    assert OS_VARS in tasks


def test_tags_persist_keeps_the_read_the_lldpad_block_reads(tmp_path):
    # apply.yml "Keep lldpad..." (tags apply, persist, lldpad; an include, so its tasks
    # are not listed) reads __roce_host_qos_lldpad_found (vars/main.yml), made from one
    # of the two reads.
    tasks = listed(tmp_path, "--tags", "roce_host_qos-persist")
    assert LLDPAD_KEEP in tasks
    assert READ in tasks


def imported_tags() -> dict[str, set[str]]:
    """tasks file -> the tags main.yml imports it with."""
    main = yaml.safe_load((TASKS / "main.yml").read_text())
    return {t["ansible.builtin.import_tasks"]: set(t.get("tags", [])) for t in main}


def includes() -> list[tuple[str, dict]]:
    """(tasks file, task) of every include_tasks in the role's task files."""
    return [
        (path.name, task)
        for path in sorted(TASKS.glob("*.yml"))
        for task in yaml.safe_load(path.read_text()) or []
        if "ansible.builtin.include_tasks" in task
    ]


def test_includes_pass_on_every_tag_that_selects_them():
    """Ansible gives an included file's tasks only the tags of `apply`: a tag that
    selects the include but is not passed on runs the include and none of its tasks."""
    found = includes()
    assert {task["name"] for _, task in found} >= {LLDPAD_KEEP, MLNX_QOS_LOOKUP}
    for name, task in found:
        selecting = set(task.get("tags", [])) | imported_tags()[name]
        applied = set(task["ansible.builtin.include_tasks"]["apply"]["tags"])
        assert selecting <= applied, (name, task["name"], selecting - applied)


@pytest.mark.parametrize(
    ("args", "included"),
    [
        (("--tags", "roce_host_qos-validate"), MLNX_QOS_LOOKUP),
        (("--tags", "roce_host_qos-lldpad"), LLDPAD_KEEP),
        (("--tags", "roce_host_qos-apply"), LLDPAD_KEEP),
        (("--tags", "roce_host_qos"), LLDPAD_KEEP),
    ],
)
def test_includes_are_selected_by_their_tags(tmp_path, args, included):
    play = tmp_path / "play.yml"
    play.write_text(PLAY.replace("roles: [rdma.fabric.roce_host_qos]", TAGGED_ROLE))
    assert included in listed(tmp_path, *args, play=play)


def test_skip_tags_lldpad_skips_the_lldpad_include(tmp_path):
    assert LLDPAD_KEEP not in listed(tmp_path, "--skip-tags", "roce_host_qos-lldpad")


def test_tags_lldpad_alone_reads_the_lldpad_units(tmp_path):
    tasks = listed(tmp_path, "--tags", "roce_host_qos-lldpad")
    assert "Stop and disable lldpad (socket first, so it cannot start the service again)" in tasks
    assert LLDPAD_READ in tasks
    assert OS_VARS in tasks
