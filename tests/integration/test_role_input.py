"""rdma_stack: bad input fails before any change, with a message naming the variable.

Each case runs the real role with ansible-playbook --check against localhost
(connection local) from the repository root, so ansible.cfg's roles_path and
collections_path apply.
"""

from __future__ import annotations

import pytest
from role_play import (
    arg_spec_task,
    failure_messages,
    pre_validation,
    recap,
    tasks_run,
)
from role_play import assert_failed_before_any_change as _failed_early

ROLE = "rdma_stack"
PRE_VALIDATION = pre_validation(ROLE)
ARG_SPEC_TASK = arg_spec_task(ROLE)


def assert_failed_before_any_change(proc, output):
    _failed_early(ROLE, proc, output, ("Install packages", "Look for an installed NVIDIA OFED"))


@pytest.mark.parametrize("provider", ["bogus", "DOCA", "mlnx_ofed"])
def test_unknown_provider(run_play, provider):
    proc, output = run_play({"rdma_stack_provider": provider})
    assert_failed_before_any_change(proc, output)
    [task] = [t for t in tasks_run(proc) if t.startswith(ARG_SPEC_TASK)]
    assert tasks_run(proc)[-1] == task, "the argument spec check must be what failed"
    message = next(line for line in output.splitlines() if "rdma_stack_provider" in line)
    assert "inbox" in message and "doca" in message, message
    assert provider in message


@pytest.mark.parametrize("version", ["2.9", "latest", "v2.9.1", 2.9])
def test_doca_version_must_be_a_release(run_play, version):
    proc, output = run_play({"rdma_stack_provider": "doca", "rdma_stack_doca_version": version})
    assert_failed_before_any_change(proc, output)
    assert tasks_run(proc)[-1] == "rdma_stack : Validate rdma_stack_doca_version"
    errors = failure_messages(proc)
    assert any("rdma_stack_doca_version" in line for line in errors), output
    assert any(str(version) in line for line in errors), output


def test_reboot_policy_choices(run_play):
    proc, output = run_play({"rdma_stack_reboot": "always"})
    assert_failed_before_any_change(proc, output)
    message = next(line for line in output.splitlines() if "rdma_stack_reboot" in line)
    assert "never" in message and "if_needed" in message and "always" in message


def test_gpudirect_unknown_value(run_play):
    proc, output = run_play({"rdma_stack_gpudirect": "maybe"})
    assert_failed_before_any_change(proc, output)
    message = next(line for line in output.splitlines() if "rdma_stack_gpudirect" in line)
    assert "auto" in message and "maybe" in message


@pytest.mark.parametrize("value", [False, True, "false", "auto"])
def test_gpudirect_yaml_boolean_is_accepted(run_play, value):
    # YAML turns `rdma_stack_gpudirect: false` into a boolean; the spec (type str,
    # choices auto/"true"/"false") must accept it. Only validation runs (its tag; the
    # argument spec check is tagged always), so nothing on this machine changes.
    proc, output = run_play({"rdma_stack_gpudirect": value}, "--tags", "rdma_stack-validate")
    assert proc.returncode == 0, output
    ran = tasks_run(proc)
    assert any(t.startswith(ARG_SPEC_TASK) for t in ran), output
    assert "rdma_stack : Validate rdma_stack_memlock" in ran, "validate.yml did not run"
    assert set(ran) <= PRE_VALIDATION | {t for t in ran if t.startswith(ARG_SPEC_TASK)}
    counts = recap(proc)
    assert (counts["failed"], counts["changed"]) == (0, 0)


def test_good_input_passes_validation(run_play):
    # The counterpart of the failing cases: a valid doca setup passes every check.
    proc, output = run_play(
        {"rdma_stack_provider": "doca", "rdma_stack_doca_version": "2.9.1"},
        "--tags",
        "rdma_stack-validate",
    )
    assert proc.returncode == 0, output
    assert "rdma_stack : Validate rdma_stack_doca_version" in tasks_run(proc)
    assert recap(proc)["failed"] == 0
