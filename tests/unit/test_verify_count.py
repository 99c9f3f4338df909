"""The fabric step counts the main schedule's tests and rounds (the summary of a check
mode run, the progress line) without planning it: a plan of 1,024 hosts x 8 rails full
is 4.2 million tests, each with both sides' perftest command lines. The count is the
plan's, for any size and mode, and for hosts whose rails differ."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from test_verify_tests import OPTIONS, fabric_of, host


def _planned(names, health, mode):
    tests = vplan.plan(
        "main", vplan.all_pairs(names, mode), health, OPTIONS, vfabric.fabric(health)["rails"]
    )
    return {"tests": len(tests), "rounds": len({t["round"] for t in tests})}


def _counted(names, health, mode, options=OPTIONS):
    return vplan.main_count(names, health, options, vfabric.fabric(health)["rails"], mode)


def _mixed(count):
    """Hosts whose rails differ: one without mlx5_1, one with 3 rails, one with none."""
    names, health = fabric_of(count, rails=2)
    if count > 0:
        health[names[0]] = host(1, 2, skip=(1,))
    if count > 2:
        health[names[2]] = host(3, 3)
    if count > 4:
        health[names[4]] = host(5, 0)
    return names, health


@pytest.mark.parametrize("mode", ["full", "quick"])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 6, 7, 9, 16, 17, 33])
def test_the_count_is_the_plans_for_every_size_and_mode(count, mode):
    names, health = fabric_of(count, rails=8)
    assert _counted(names, health, mode) == _planned(names, health, mode)
    names, health = _mixed(count)
    assert _counted(names, health, mode) == _planned(names, health, mode)


def test_a_full_count_of_1024_x_8_is_arithmetic():
    names, health = fabric_of(1024, rails=8)
    assert _counted(names, health, "full") == {"tests": 1024 * 1023 // 2 * 8, "rounds": 1023}


def test_the_count_refuses_a_port_span_as_the_plan_does():
    names, health = fabric_of(4)
    with pytest.raises(
        ValueError, match="rdma_verify_port_span is 15 but 8 rails need at least 16"
    ):
        _counted(names, health, "full", dict(OPTIONS, port_span=15))
    assert _counted(names, health, "full", dict(OPTIONS, port_span=16))["tests"] == 4 * 3 * 8
