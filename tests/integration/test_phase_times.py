"""make test's phase times (tests/harness/phase.sh): each phase's seconds and status are
printed at the end, a failed phase named with its exit code and the run's status kept."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PHASE = ROOT / "tests" / "harness" / "phase.sh"


def _sh(log, *args):
    return subprocess.run(
        [str(PHASE), *args],
        env={"PATH": "/usr/bin:/bin", "RDMA_FABRIC_PHASE_LOG": str(log)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_phases_are_tabled_with_failures_named(tmp_path):
    log = tmp_path / "phase-times"
    assert _sh(log, "reset").returncode == 0
    assert _sh(log, "run", "lint", "true").returncode == 0
    failed = _sh(log, "run", "e2e", "sh", "-c", "exit 3")
    assert failed.returncode == 3, "run keeps the command's exit status"
    assert _sh(log, "add", "images(background)", "42", "0").returncode == 0
    table = _sh(log, "table")
    assert table.returncode == 0
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    assert list(rows) == ["lint", "e2e", "images(background)", "wall"]
    assert rows["lint"].endswith("ok")
    assert rows["e2e"].endswith("FAILED (exit 3)")
    assert rows["images(background)"].split()[1] == "42"


def test_without_a_log_run_only_runs(tmp_path):
    marker = tmp_path / "ran"
    result = subprocess.run(
        [str(PHASE), "run", "x", "touch", str(marker)],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and marker.exists()
    assert not list(tmp_path.glob("phase-times*"))
