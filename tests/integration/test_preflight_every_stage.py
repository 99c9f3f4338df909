"""The inventory check runs for every stage and under any tags, once per run.

Each stage playbook imports rdma.fabric.preflight first; its play is tagged always and ends
at once when this run already did the check. The inventory here carries a typo
(rdma_stack_provder); preflight fails on the controller before any host is contacted.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv/bin"
STAGES = ["rdma_stack", "ib_fabric", "soft_roce", "rdma_rails", "roce_fabric", "verify"]
TYPO_INVENTORY = """\
all:
  children:
    rdma_hosts:
      hosts:
        node1:
          ansible_host: 192.0.2.1
          rdma_stack_provder: doca
"""


def _play(
    tmp_path: Path, *args: str, inventory_text: str = TYPO_INVENTORY
) -> subprocess.CompletedProcess[str]:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(inventory_text)
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}",
    }
    return subprocess.run(
        ["ansible-playbook", "-i", str(inventory), *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )


def _assert_typo_named(result: subprocess.CompletedProcess[str]) -> None:
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "rdma_stack_provder" in out and "rdma_stack_provider" in out, out
    # Stopped by the check on the controller: node1 was never contacted.
    assert "UNREACHABLE" not in out, out


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_run_alone_checks_the_inventory(tmp_path, stage):
    _assert_typo_named(_play(tmp_path, f"rdma.fabric.{stage}"))


def test_site_with_tags_of_one_role_checks_the_inventory(tmp_path):
    _assert_typo_named(_play(tmp_path, "site.yml", "--tags", "rdma_verify"))


def test_the_check_runs_once_per_run(tmp_path):
    result = _play(tmp_path, "site.yml", "--list-tasks")
    assert result.returncode == 0, result.stdout + result.stderr
    # Listed once per import (site and each stage), so a skip guard must be there.
    listed = result.stdout.count("Fail on variable and group names no role knows")
    assert listed == 1 + len(STAGES), result.stdout
    assert result.stdout.count("Skip a check this run has already done") == listed


def test_a_later_stage_of_the_same_run_skips_the_check(tmp_path):
    clean = "all:\n  children:\n    rdma_hosts:\n      hosts: {}\n"
    result = _play(tmp_path, "site.yml", "--tags", "rdma_stack", inventory_text=clean)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert out.count("TASK [Fail on variable and group names no role knows]") == 1, out
