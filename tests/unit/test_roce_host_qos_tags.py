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

REPO = Path(__file__).resolve().parents[2]
PLAY = """- hosts: localhost
  gather_facts: false
  roles: [rdma.fabric.roce_host_qos]
"""

READ = "Read lldpad's and the boot unit's states and whether the dcb tool is installed"
OS_VARS = "Load OS-specific variables"
LLDPAD_READ = "Read lldpad's units"


def listed(tmp_path, *args):
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
    # apply.yml "Keep lldpad..." (tags apply, persist, lldpad) reads
    # __roce_host_qos_lldpad_found (vars/main.yml), made from one of the two reads.
    tasks = listed(tmp_path, "--tags", "roce_host_qos-persist")
    assert "Start and enable lldpad" in tasks
    assert READ in tasks


def test_tags_lldpad_alone_reads_the_lldpad_units(tmp_path):
    tasks = listed(tmp_path, "--tags", "roce_host_qos-lldpad")
    assert "Stop and disable lldpad (socket first, so it cannot start the service again)" in tasks
    assert LLDPAD_READ in tasks
    assert OS_VARS in tasks
