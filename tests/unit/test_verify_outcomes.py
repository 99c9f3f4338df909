"""The schedule's outcomes bypass hostvars (module_utils/verify_outcomes.py): perftest_run
writes them to a file on the host and returns a summary of a fixed size whatever its
tests (at 1,024 x 8 full a host's 8,184 outcomes were ~2 MB as JSON, ~8.8 MB in Ansible's
memory, kept in hostvars); the judge step reads each host's fetched file forward, and a
host whose file is missing or not the one it wrote is lost, as one whose result did not
come back."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.action import verify_step
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_outcomes as voutcomes
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.modules import perftest_run
from test_verify_tests import LAB, fabric_of, ok

COLLECTIONS = Path(verify_step.__file__).resolve().parents[5]
# The summary's bytes as JSON (path, bytes, sha1, count, failed) and the module's other keys.
RESULT_MAX = 1500


def _late_sides(count):
    """count sides whose rounds' deadlines are long past: the schedule runs none (no
    perftest needed) and returns an outcome with an error for each."""
    return [
        {
            "id": f"main/{n}/a/b/mlx5_0/server",
            "round": n,
            "side": "server",
            "port": 18515,
            "argv": ["ib_write_bw", "-d", "mlx5_0", "-p", "18515"],
            "timeout": 5,
        }
        for n in range(count)
    ]


def _schedule_result(tmp_path, count):
    """perftest_run action=schedule as Ansible runs it (its arguments from a file): its
    result's JSON and the outcomes file's path."""
    outcomes = tmp_path / f"outcomes-{count}.jsonl.gz"
    args = {
        "action": "schedule",
        "tests": _late_sides(count),
        "start_at": 1000.0,
        "round_seconds": 1,
        "state_dir": str(tmp_path / "state"),
        "sysfs_root": str(tmp_path),
        "outcomes_file": str(outcomes),
    }
    argfile = tmp_path / f"args-{count}.json"
    argfile.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    env = dict(os.environ, PYTHONPATH=str(COLLECTIONS))
    proc = subprocess.run(
        [sys.executable, perftest_run.__file__, str(argfile)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return proc.stdout, outcomes


def test_the_schedules_result_stays_small_whatever_its_tests(tmp_path):
    small, small_file = _schedule_result(tmp_path, 10)
    large, large_file = _schedule_result(tmp_path, 2000)
    # The outcomes (2,000 errors, ~0.3 MB as JSON) are in the file, not the result.
    assert len(small) < RESULT_MAX and len(large) < RESULT_MAX, large[-500:]
    assert abs(len(large) - len(small)) < 40  # the counts' and file size's digits
    result = json.loads(large)
    assert result["tests"] == [] and result["outcomes"]["count"] == 2000
    assert result["outcomes"]["failed"] == 2000
    assert result["outcomes"]["sha1"] == voutcomes.file_sha1(large_file)
    assert result["outcomes"]["bytes"] == large_file.stat().st_size
    with gzip.open(large_file, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    assert [o["id"] for o in lines] == [t["id"] for t in _late_sides(2000)]
    assert all(o["error"].startswith("not run: this host reached round") for o in lines)
    assert json.loads(small)["outcomes"]["count"] == 10 and small_file.exists()


def _fabric(count=6, rails=2):
    names, health = fabric_of(count, rails=rails)
    return names, health, vfabric.fabric(health)["rails"]


def _write_hosts(folder, names, health, tests, phase="main"):
    """Each host's outcomes file as its schedule writes it (its sides in its plan's
    order: host_sides of its own plan): {host: (path, summary)}."""
    by_id = {o["id"]: o for t in tests for o in ok(t)}
    files = {}
    for host in names:
        mine = [t for t in tests if host in (t["server"], t["client"])]
        sides = vplan.host_sides(host, mine)
        path = str(folder / phase / f"{host}.jsonl.gz")
        files[host] = (path, voutcomes.write_outcomes(path, [by_id[s["id"]] for s in sides]))
    return files


def _plain(records):
    return [dict(r) for r in records]


@pytest.mark.parametrize("mode", ["full", "quick"])
def test_the_judge_reads_the_hosts_files_forward_and_judges_as_from_results(tmp_path, mode):
    names, health, expect = _fabric(7)
    tests = vplan.plan("main", vplan.all_pairs(names, mode), health, LAB, expect)
    files = voutcomes.OutcomeFiles(_write_hosts(tmp_path, names, health, tests))
    from_files = vjudge.judge(iter(tests), files, 3)
    from_results = vjudge.judge(tests, [o for t in tests for o in ok(t)], 3)
    assert _plain(from_files) == _plain(from_results)
    assert {r["outcome"] for r in from_files} == {"passed"}
    # Read forward: no outcome was read past and kept (each host's next line was asked).
    assert files.ahead() == 0


def test_a_retest_phase_reads_its_files_forward_too(tmp_path):
    names, health, expect = _fabric(6)
    pairs = [
        {"round": 0, "server": "lab1", "client": "lab2", "rail": "mlx5_1"},
        {"round": 0, "server": "lab4", "client": "lab3", "rail": "mlx5_0"},
        {"round": 1, "server": "lab2", "client": "lab1", "rail": "mlx5_0"},
    ]
    tests = vplan.plan("retest", pairs, health, LAB, expect)
    files = voutcomes.OutcomeFiles(_write_hosts(tmp_path, names, health, tests, "retest"))
    assert {r["outcome"] for r in vjudge.judge(tests, files, 3)} == {"passed"}
    assert files.ahead() == 0


def _lost_lab3(path, summary):
    Path(path).unlink()


def _rewritten_lab3(path, summary):
    Path(path).write_bytes(gzip.compress(b'{"id": "something else"}\n'))


def _cut_lab3(path, summary):
    Path(path).write_bytes(Path(path).read_bytes()[:100])


def _no_summary_lab3(path, summary):
    summary.clear()


@pytest.mark.parametrize("harm", [_lost_lab3, _rewritten_lab3, _cut_lab3, _no_summary_lab3])
def test_a_host_whose_file_is_missing_or_not_its_own_is_lost_during_traffic(tmp_path, harm):
    """As a host whose schedule did not come back: its tests "peer lost", the others
    judged on their files (test_verify_tests' host lost during traffic)."""
    names, health, expect = _fabric(4)
    tests = vplan.plan("main", vplan.all_pairs(names), health, LAB, expect)
    written = _write_hosts(tmp_path, names, health, tests)
    harm(*written["lab3"])
    records = vjudge.judge(tests, voutcomes.OutcomeFiles(written), 3)
    lost = [r for r in records if "lab3" in (r["server"], r["client"])]
    # 3 peers x 2 ways x 2 rails
    assert len(lost) == 12 and {r["outcome"] for r in lost} == {"peer lost"}
    assert all(r["error"] == "peer lost: lab3 was lost during traffic" for r in lost)
    assert all(r["outcome"] == "passed" for r in records if r not in lost)


def test_a_file_cut_short_gives_the_outcomes_before_the_cut_and_no_more(tmp_path):
    path = str(tmp_path / "host.jsonl.gz")
    outcomes = [{"id": f"side{n}", "error": None, "pad": "x" * (n % 97)} for n in range(3000)]
    summary = voutcomes.write_outcomes(path, outcomes)
    Path(path).write_bytes(Path(path).read_bytes()[: summary["bytes"] // 2])
    reader = voutcomes.HostOutcomes(path)
    read = [reader.get(o["id"]) for o in outcomes]
    cut = read.index(None)
    assert 0 < cut < 3000 and read[:cut] == outcomes[:cut] and set(read[cut:]) == {None}


def _side_outcome(n):
    row = {"bytes": 65536, "iterations": 35000 + n % 977, "bw_average_gbps": 380 + n % 97 / 10}
    deltas = {"rx_prio3_pause": n * 7919 % 100_000}
    return {
        "id": f"main/{n}/a/b/mlx5_{n % 8}/server",
        "rc": 0,
        "result": {"ok": True, "rows": [row]},
        "deltas": deltas,
    }


def test_the_judge_holds_a_bounded_piece_of_each_hosts_file(tmp_path):
    """Between two of a host's sides the judge holds its reader: the inflater, at most a
    piece of text and no outcome read past, about 70 kB, whatever the file's size (here a
    host's 8,184 sides at 1,024 x 8 full; their results in hostvars were ~8.8 MB a host)."""
    outcomes = [_side_outcome(n) for n in range(8184)]
    path = str(tmp_path / "host.jsonl.gz")
    summary = voutcomes.write_outcomes(path, outcomes)
    tracemalloc.start()
    try:
        files = voutcomes.OutcomeFiles({"host": (path, summary)})
        first = files("host", outcomes[0]["id"])
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first == outcomes[0] and files.ahead() == 0
    assert held < 100_000, held
    assert [files("host", o["id"]) for o in outcomes[1:]] == outcomes[1:]


def _judge_step(tmp_path, fetched_not=()):
    """verify_step's judge of a main phase on 4 hosts x 2 rails, each host's summary (its
    schedule's result, sync or async) in hostvars and its file fetched to the run
    directory, but for the hosts in fetched_not: (its output, its records)."""
    names, health, expect = _fabric(4)
    run_dir = tmp_path / "run"
    args = {
        "phase": "main",
        "mode": "full",
        "rounds": 2,
        "options": LAB,
        "rails": expect,
        "run_dir": str(run_dir),
        "retest": True,
        "isolate": True,
    }
    tests = vplan.plan("main", vplan.all_pairs(names), health, LAB, expect)
    written = _write_hosts(tmp_path / "hosts", names, health, tests)
    hostvars = {}
    for n, host in enumerate(names):
        path, summary = written[host]
        fetched = verify_step.outcomes_file(str(run_dir), "main", host)
        os.makedirs(os.path.dirname(fetched), exist_ok=True)
        if host not in fetched_not:
            shutil.copy(path, fetched)
        result = {"tests": [], "outcomes": summary}
        registered = ("__rdma_verify_sync", "__rdma_verify_waited")[n % 2]
        hostvars[host] = {"__rdma_verify_health": health[host], registered: result}
    action = verify_step.ActionModule.__new__(verify_step.ActionModule)
    out = action._judge(args, {"hostvars": hostvars}, names)
    # The files are removed once judged (the records keep what was judged).
    assert not (run_dir / "outcomes-main").exists()
    lines = (run_dir / "main.jsonl").read_text().splitlines()
    return out, [json.loads(line) for line in lines]


def test_the_judge_step_judges_the_fetched_files_not_hostvars(tmp_path):
    out, records = _judge_step(tmp_path)
    assert out["tests"] == len(records) == 24 and out["tests_failed"] == 0, out
    assert {r["outcome"] for r in records} == {"passed"}


def test_the_judge_step_takes_a_host_whose_file_was_not_fetched_as_lost(tmp_path):
    """Its tests are "peer lost", never retested nor isolated (its HCAs are not judged)."""
    out, records = _judge_step(tmp_path, fetched_not={"lab2"})
    lost = [r for r in records if "lab2" in (r["server"], r["client"])]
    assert len(lost) == 12 and {r["outcome"] for r in lost} == {"peer lost"}
    assert all(r["lost"] == ["lab2"] for r in lost)
    assert out["next_phase"] is None and out["suspects"] == [], out


def test_the_same_outcomes_give_the_same_bytes_whoever_writes_them(tmp_path):
    """The gzip header names the file (as gunzip -N restores it), never the writer's
    .tmp: the bytes and the SHA-1 fetch checks do not depend on the writer, and no .tmp
    is left."""
    outcomes = [{"id": 1, "rc": 0, "error": None}, {"id": 2, "rc": 1, "error": "x"}]
    name = "outcomes-main-1-gpu01.jsonl.gz"
    first = voutcomes.write_outcomes(str(tmp_path / "a" / name), outcomes)
    second = voutcomes.write_outcomes(str(tmp_path / "b" / name), outcomes)
    assert first["sha1"] == second["sha1"] and (first["count"], first["failed"]) == (2, 1)
    header = (tmp_path / "a" / "outcomes-main-1-gpu01.jsonl.gz").read_bytes()[:64]
    assert b"outcomes-main-1-gpu01.jsonl\x00" in header and b".tmp" not in header
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["outcomes-main-1-gpu01.jsonl.gz"]


def test_a_failed_write_leaves_neither_the_file_nor_its_tmp(tmp_path):
    path = tmp_path / "outcomes-main-1-gpu01.jsonl.gz"

    def outcomes():
        yield {"id": 1}
        raise RuntimeError("cut short")

    with pytest.raises(RuntimeError):
        voutcomes.write_outcomes(str(path), outcomes())
    assert list(tmp_path.iterdir()) == []
