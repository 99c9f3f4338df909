"""perftest_run's schedule removes what an earlier run left in its state directory: the
progress and outcomes files, and the `.tmp` of either that a run killed while writing
left (written aside, then renamed); never a file of this run (another inventory host of
it on this machine), nor anything else."""

from __future__ import annotations

import os

from ansible_collections.rdma.fabric.plugins.modules import perftest_run

EARLIER = [
    "progress-main-1.json",
    "progress-main-1.json.tmp",
    "outcomes-main-1-gpu01.jsonl.gz",
    "outcomes-main-1-gpu01.jsonl.gz.tmp",
    # Written aside under a name of the writer's own (a pid before cc6d66e, a random token
    # since): hosts sharing a machine write side by side.
    "progress-main-1.json.4242.tmp",
    "outcomes-main-1-gpu01.jsonl.gz.4242.tmp",
    "start-main-1.json.77.tmp",
    "progress-main-1.json.k3_x9qzb.tmp",
    "start-main-1.json.0ab_cdef.tmp",
]
OTHERS = ["notes.tmp", "outcomes.txt", "server-1.pid.tmp", "server-1.pid.42.tmp"]


def _state(tmp_path, run):
    # The marker's pid is this process: never signalled (the schedule skips its own).
    (tmp_path / "schedule.pid").write_text(f"{os.getpid()} {run}\n")
    for name in EARLIER + OTHERS:
        (tmp_path / name).write_text("x")


def test_an_earlier_runs_files_go_with_the_tmp_a_killed_write_left(tmp_path):
    _state(tmp_path, "1")
    perftest_run._stop_earlier_run(str(tmp_path), "2")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(OTHERS + ["schedule.pid"])
    assert (tmp_path / "schedule.pid").read_text() == f"{os.getpid()} 2\n"


def test_this_runs_files_stay_while_another_host_of_it_writes_them(tmp_path):
    _state(tmp_path, "2")
    perftest_run._stop_earlier_run(str(tmp_path), "2")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(EARLIER + OTHERS + ["schedule.pid"])


def test_this_runs_start_being_written_aside_stays(tmp_path):
    """The next run's first host on this machine removes an earlier run's start, whole
    or half-written, never this run's own start or its .tmp (a sibling host of this run
    releasing it)."""
    _state(tmp_path, "start-main-1.json")
    for name in ("start-main-2.json", "start-main-2.json.3a_1337x.tmp"):
        (tmp_path / name).write_text("x")
    perftest_run._stop_earlier_run(str(tmp_path), "start-main-2.json")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(
        OTHERS + ["schedule.pid", "start-main-2.json", "start-main-2.json.3a_1337x.tmp"]
    )
