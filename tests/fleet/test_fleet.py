"""The fleet (tests/fleet/fleet.py): site.yml on RDMA_FLEET containers (default 16) with
8 rails and 8 stand-in leaves: first run green, second run changed=0, --check --diff
changes nothing, then the fault plan (fleet.fault_plan) judged by verify.yml's report.

Heavy: `make fleet FLEET=N` runs it (not make unit); needs docker and the base image.
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
MODE = os.environ.get("RDMA_FLEET_VERIFY_MODE", "full" if COUNT <= 16 else "quick")

pytestmark = pytest.mark.skipif(shutil.which("docker") is None, reason="needs docker")


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    args = ["all", str(COUNT), "--faults", "--verify-mode", MODE]
    folder = tmp_path_factory.mktemp("fleet")
    return fleet.run_harness(args, folder, f"fleet-figures-{COUNT}.json", judged="faults")


def test_fleet_is_gone_after_the_run(figures):
    assert fleet.leftovers() == ("", "")


def test_first_run_is_green(figures):
    first = figures["first"]
    assert first["rc"] == 0, first["log"]
    assert first["failed_hosts"] == []


def test_second_run_changes_nothing(figures):
    second = figures["second"]
    assert second["rc"] == 0, second["log"]
    assert second["totals"]["changed"] == 0, second["changed_hosts"]


def test_check_diff_changes_nothing(figures):
    check = figures["check"]
    assert check["rc"] == 0, check["log"]
    assert check["totals"]["changed"] == 0, check["changed_hosts"]


def test_fleet_memory_budget(figures):
    # The whole 64-host fleet within 8 GiB; per host, that is 128 MiB.
    memory = figures["memory"]
    assert memory["containers"] == figures["count"] + 2  # the hosts and the SONiC leaves
    assert 0 < memory["usage"] <= figures["count"] * 128 * 2**20


def planted_ports(plan: dict) -> set[str]:
    ports = {f"{plan['slow']['host']} rail{plan['slow']['rail']}"}
    ports |= {f"{d['host']} rail{d['rail']}" for d in plan["dead"]}
    ports |= {f"{h} rail{plan['leaf_half']['rail']}" for h in plan["leaf_half"]["hosts"]}
    return ports


def test_the_fault_run_fails_and_reports(figures):
    faults = figures["faults"]
    assert faults["rc"] != 0, "verify passed with faults planted"
    assert figures["results"] is not None, "no report written"
    assert faults["silenced"], "the silent host was never stopped"


def test_the_silent_host_is_named_unreachable(figures):
    plan = figures["faults"]["plan"]
    assert figures["results"]["summary"]["unreachable"] == [plan["silent"]["host"]]


def test_the_dead_ports_fail_their_health_checks(figures):
    plan = figures["faults"]["plan"]
    failed = {
        (c["host"], c.get("device")) for c in figures["results"]["checks"] if c["ok"] is False
    }
    hosts = figures["results"]["hosts"]
    for dead in plan["dead"]:
        rail = hosts[dead["host"]]["rails"][dead["rail"]]
        assert (dead["host"], rail["device"]) in failed


def test_the_report_names_exactly_the_planted_ports(figures):
    """The verdict (summary.bad_rails) is exactly the planted ports; the isolation's
    suspects that are not (partners of a bad rail) are cleared as good, by name."""
    results = figures["results"]
    planted = planted_ports(figures["faults"]["plan"])
    assert set(results["summary"]["bad_rails"]) == planted
    verdicts = results["isolation"]["verdicts"]
    cleared = {name for name, v in verdicts.items() if not v["bad"]}
    assert not cleared & planted
    assert all("good" in verdicts[name]["verdict"] for name in cleared)
