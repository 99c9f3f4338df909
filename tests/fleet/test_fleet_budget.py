"""The fleet in make test (tests/fleet/fleet.py ci): site.yml on RDMA_FLEET containers
(16) with 8 rails and 8 stand-in leaves, first run green, then one fault planted (the
fault plan's slow rail: one host's rail 3 at 10 %) and site.yml again: the second run
changes nothing, and its verification (quick: two rounds) names exactly that rail.
The whole of it, fleet up and down included, is held to the budget: 6 minutes on this
2-core machine (RDMA_FLEET_BUDGET_S).

Heavy: make test's fleet phase runs it (make fleet runs test_fleet.py, the whole plan).
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
BUDGET_S = float(os.environ.get("RDMA_FLEET_BUDGET_S", "360"))

pytestmark = pytest.mark.skipif(shutil.which("docker") is None, reason="needs docker")


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    # The image first (cached by its inputs' hash): its build is not the fleet's cost.
    fleet.sh(str(HERE / "build-fleet-image.sh"), capture=False)
    args = ["ci", str(COUNT), "--verify-mode", "quick"]
    folder = tmp_path_factory.mktemp("fleet")
    result = fleet.run_harness(args, folder, f"fleet-budget-{COUNT}.json", judged="second")
    print(
        f"fleet budget: {COUNT} hosts, up {result.get('up')} s, first run "
        f"{result['first']['wall']} s, second run {result['second']['wall']} s, "
        f"total {result['total_s']} s (budget {BUDGET_S:.0f} s)"
    )
    return result


def test_fleet_is_gone_after_the_run(figures):
    assert fleet.leftovers() == ("", "")


def test_first_run_is_green(figures):
    first = figures["first"]
    assert first["rc"] == 0, first["log"]
    assert first["failed_hosts"] == []
    # It configured every host and every leaf (NVUE, SONiC and EOS stand-ins).
    leaves = {leaf for leaf, _os in fleet.LEAVES}
    assert set(first["changed_hosts"]) == set(fleet.host_names(COUNT)) | leaves


def test_the_leaves_are_one_batch(figures):
    """The fleet asks for all 8 leaves in one batch (-e roce_switch_qos_serial=8): the
    switch play ran once per run, not once per leaf."""
    assert figures["first"]["switch_batches"] == 1
    assert figures["second"]["switch_batches"] == 1


def test_second_run_changes_nothing(figures):
    second = figures["second"]
    assert second["totals"]["changed"] == 0, second["changed_hosts"]
    assert second["totals"]["unreachable"] == 0


def test_second_run_reads_no_gid_table_again(figures):
    """The rails were not touched in the second run: rdma_rails writes /etc/nccl.conf from
    the devices it read first (one module run a host less), the first run read them
    again after applying the rails."""
    task = "rdma.fabric.rdma_rails : Read the rails' GID tables"
    assert fleet.task_results(figures["second"]["log"], task) == {"skipping": COUNT}
    assert fleet.task_results(figures["first"]["log"], task) == {"ok": COUNT}


def test_second_run_fails_on_the_planted_rail_only(figures):
    """site.yml fails (rc 2) at verification's verdict, and the verdict is exactly the
    slow rail: no other host or rail is named."""
    second = figures["second"]
    assert second["rc"] == 2, second["log"]
    results = figures["results"]
    assert results is not None, "the second run wrote no report"
    slow = second["plan"]["slow"]
    assert results["summary"]["bad_rails"] == [f"{slow['host']} rail{slow['rail']}"]
    assert results["summary"]["bad_hosts"] == [slow["host"]]
    assert results["summary"]["unreachable"] == []
    assert "RDMA verification FAILED" in Path(second["log"]).read_text()


def test_within_the_budget(figures):
    assert figures["total_s"] <= BUDGET_S, (
        f"the {COUNT}-host fleet took {figures['total_s']} s (up {figures.get('up')} s, "
        f"first {figures['first']['wall']} s, second {figures['second']['wall']} s): over "
        f"the {BUDGET_S:.0f} s budget"
    )
