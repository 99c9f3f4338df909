"""Every role that loads OS-specific variables does it with the same tasks file
(tasks/set_vars.yml): the copies must be one text with the role's name in it. A copy
that drifts (a check dropped, another fact subset) fails here. The gate those tasks ask
(__<role>_os_support in vars/main.yml, the filter rdma.fabric.os_support) is one
expression with the role's name in it too; only the lists of systems may differ."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROLES_DIR

COPIES = sorted(p.parent.parent.name for p in ROLES_DIR.glob("*/tasks/set_vars.yml"))


def test_there_are_copies_to_compare():
    assert len(COPIES) >= 4 and "rdma_stack" in COPIES, COPIES


@pytest.mark.parametrize("role", COPIES)
def test_the_copy_is_rdma_stacks_with_its_own_name(role):
    reference = (ROLES_DIR / "rdma_stack" / "tasks" / "set_vars.yml").read_text()
    text = (ROLES_DIR / role / "tasks" / "set_vars.yml").read_text()
    assert text == reference.replace("rdma_stack", role)


def _gate(role):
    internal = yaml.safe_load((ROLES_DIR / role / "vars" / "main.yml").read_text())
    return internal.get(f"__{role}_os_support")


@pytest.mark.parametrize("role", COPIES)
def test_the_os_gate_is_rdma_stacks_with_its_own_name(role):
    assert _gate(role) == _gate("rdma_stack").replace("rdma_stack", role)
