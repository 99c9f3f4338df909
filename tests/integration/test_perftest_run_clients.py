"""rdma.fabric.perftest_run action=run: every client of a round runs at once (one
thread each on run_command), each under its timeout; a client whose server is not
listening is not run. The clients here are sh printing a recorded ib_write_bw output."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perftest"


def client(test_id, port, seconds, starts: Path, timeout=30):
    """Writes when it started, takes `seconds`, prints a recorded client output."""
    output = next(FIXTURES.glob("*bw*client*"))
    return {
        "id": test_id,
        "port": port,
        "argv": ["sh", "-c", f"date +%s.%N > {starts / test_id}; sleep {seconds}; cat {output}"],
        "timeout": timeout,
    }


def test_clients_run_at_once_each_under_its_timeout(run_module_on_localhost, tmp_path):
    slow = {"id": "slow", "port": 18518, "argv": ["sleep", "30"], "timeout": 1}
    tests = [
        client("a", 18515, 2, tmp_path),
        client("b", 18516, 2, tmp_path),
        client("c", 18517, 2, tmp_path),
        slow,
    ]
    tests.append(client("no-server", 18519, 0, tmp_path))
    args = {
        "action": "run",
        "tests": tests,
        "ready_ports": [18515, 18516, 18517, 18518],
        "state_dir": str(tmp_path),
    }
    proc, result = run_module_on_localhost("rdma.fabric.perftest_run", json.dumps(args))
    assert result is not None, proc.stdout + proc.stderr
    by_id = {t["id"]: t for t in result["tests"]}
    assert [t["id"] for t in result["tests"]] == ["a", "b", "c", "slow", "no-server"]
    for name in ("a", "b", "c"):
        assert by_id[name]["rc"] == 0
        assert by_id[name]["result"]["ok"], by_id[name]
        assert by_id[name]["result"]["rows"]
    assert by_id["slow"]["timed_out"]
    assert by_id["no-server"]["error"] == "not run: its server was not listening"
    # One after the other, each would start 2 s after the one before.
    starts = sorted(float((tmp_path / name).read_text()) for name in ("a", "b", "c"))
    assert starts[-1] - starts[0] < 1.5, f"clients ran one after the other: {starts}"
    assert not (tmp_path / "no-server").exists()
    assert result["changed"] is False
