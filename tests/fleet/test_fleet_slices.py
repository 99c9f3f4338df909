"""A sliced job on the fleet (tests/fleet/fleet.py slices): the per-host stages (rdma_stack,
rdma_nic, rdma_rails, roce_host_qos) run once per slice, side by side, each slice on the
part of the inventory AWX's job slicing gives it (hosts by name, every K-th); verify in
a slice is refused before any test; site.yml on the whole inventory afterwards finds
nothing to change on the hosts and verifies the whole fabric green.

Heavy: `make fleet-slices FLEET=16 SLICES=4` runs it (not make test); needs docker and
the base image.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleet  # noqa: E402

COUNT = int(os.environ.get("RDMA_FLEET", "16"))
SLICES = int(os.environ.get("RDMA_FLEET_SLICES", "4"))

pytestmark = pytest.mark.skipif(shutil.which("docker") is None, reason="needs docker")


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    fleet.sh(str(HERE / "build-fleet-image.sh"), capture=False)
    args = ["slices", str(COUNT), "--slices", str(SLICES), "--verify-mode", "quick"]
    folder = tmp_path_factory.mktemp("fleet")
    result = fleet.run_harness(args, folder, f"fleet-slices-{COUNT}.json", judged="whole")
    walls = ", ".join(str(run["wall"]) for run in result["slices"])
    print(
        f"fleet slices: {COUNT} hosts in {SLICES} slices, up {result.get('up')} s, slices "
        f"side by side {result['slices_wall']} s ({walls}), verify in a slice "
        f"{result['slice_verify']['wall']} s, whole site.yml {result['whole']['wall']} s"
    )
    return result


def servers_of(number: int) -> set[str]:
    """Slice NUMBER's GPU servers as AWX deals them: every host by name, every K-th."""
    names = sorted(fleet.host_names(COUNT) + [leaf for leaf, _os in fleet.LEAVES])
    return set(names[number - 1 :: SLICES]) & set(fleet.host_names(COUNT))


def test_fleet_is_gone_after_the_run(figures):
    assert fleet.leftovers() == ("", "")


def test_each_slice_configures_exactly_its_hosts(figures):
    """Every slice is green and changed its own servers and nothing else (no leaf: the
    switch stage is not a per-host stage); together they cover the fleet once."""
    runs = figures["slices"]
    assert len(runs) == SLICES
    for number, run in enumerate(runs, start=1):
        assert run["rc"] == 0, run["log"]
        assert run["failed_hosts"] == [], run["log"]
        assert set(run["changed_hosts"]) == servers_of(number), run["log"]
    covered = [h for run in runs for h in run["changed_hosts"]]
    assert sorted(covered) == sorted(fleet.host_names(COUNT))


def test_verify_in_a_slice_is_refused_before_any_test(figures):
    run = figures["slice_verify"]
    log = Path(run["log"]).read_text()
    assert run["rc"] != 0, run["log"]
    held = len(servers_of(1))
    assert (
        f"rdma_verify_fabric_size is {COUNT} but this run's inventory holds {held} hosts "
        "of rdma_hosts" in log
    ), run["log"]
    assert "Run this host's tests" not in log, "a test ran in the slice"


def test_the_whole_run_finds_the_hosts_done(figures):
    """site.yml on the whole inventory after the sliced job: the per-host stages have
    nothing left to do on any server; only the leaves (never in the sliced job) change."""
    whole = figures["whole"]
    assert whole["rc"] == 0, whole["log"]
    leaves = {leaf for leaf, _os in fleet.LEAVES}
    assert set(whole["changed_hosts"]) == leaves, whole["log"]


def test_the_whole_fabric_verifies(figures):
    results = figures["results"]
    assert results is not None, "the whole run wrote no report"
    summary = results["summary"]
    assert summary["bad_rails"] == [] and summary["unreachable"] == [], summary
    assert not summary.get("partial"), summary
    assert sorted(results["hosts"]) == sorted(fleet.host_names(COUNT))
