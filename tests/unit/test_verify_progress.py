"""The progress line of rdma_verify's async schedule (module_utils/verify_progress.py)."""

from ansible_collections.rdma.fabric.plugins.module_utils.verify_progress import (
    duration,
    progress_line,
)


def test_line_counts_rounds_of_the_fabric_and_estimates_what_is_left():
    state = {"rounds_done": 19, "last_round": 36, "sides_done": 74, "sides_failed": 1}
    state["elapsed"] = 37 * 105.0
    assert progress_line("main", "gpu-a01", state, 1023) == (
        "rdma_verify main: round 37/1,023 done (gpu-a01: 74 sides run, 1 failed so far; "
        "1 h 04 min elapsed, about 28 h 45 min left)"
    )


def test_a_plan_shorter_than_the_rounds_seen_is_not_trusted():
    state = {"rounds_done": 3, "last_round": 4, "sides_done": 6, "sides_failed": 0, "elapsed": 9}
    assert progress_line("retest", "h", state, 0).startswith("rdma_verify retest: round 5/5 done")
    assert "about 0 s left" in progress_line("retest", "h", state, 2)


def test_durations():
    assert [duration(s) for s in (0, 59.6, 61, 3599, 3600, 104_999)] == [
        "0 s",
        "1 min 00 s",
        "1 min 01 s",
        "59 min 59 s",
        "1 h 00 min",
        "29 h 09 min",
    ]


def _waiter(statuses, states, monkeypatch):
    """verify_wait's action without a connection: the async job's statuses and the
    progress file's states are served in order; what it displays is collected."""
    from ansible_collections.rdma.fabric.plugins.action import verify_wait

    shown = []
    monkeypatch.setattr(verify_wait.display, "display", shown.append)
    monkeypatch.setattr(verify_wait.time, "sleep", lambda _s: None)
    action = object.__new__(verify_wait.ActionModule)
    action._status = lambda *_a: statuses.pop(0)
    action._progress = lambda _p: states.pop(0) if states else None
    return action, shown


ARGS = {
    "jid": "1.2",
    "timeout": 60,
    "delay": 1,
    "report": True,
    "progress_file": "/tmp/p.json",
    "interval": 1,
    "rounds_total": 6,
    "phase": "main",
}


def test_a_schedule_that_ends_before_the_first_read_still_shows_its_last_round(monkeypatch):
    """The CI of 2026-12-05 saw no progress line at all: the job had ended when the first
    poll came back, and the loop returned without reading the progress file."""
    done = {"rounds_done": 6, "last_round": 5, "sides_done": 6, "sides_failed": 1, "elapsed": 7}
    action, shown = _waiter([{"finished": True, "started": True}], [done], monkeypatch)
    status = action._wait(dict(ARGS), "~/.ansible_async", {"inventory_hostname": "lab1"})
    assert status["finished"]
    assert shown == [progress_line("main", "lab1", done, 6)]
    assert shown[0].startswith("rdma_verify main: round 6/6 done (lab1: 6 sides run, 1 failed")


def test_each_new_round_is_shown_once_and_a_host_that_does_not_report_shows_none(monkeypatch):
    one = {"rounds_done": 1, "last_round": 0, "sides_done": 2, "sides_failed": 0, "elapsed": 1}
    two = dict(one, rounds_done=2, last_round=1, sides_done=4)
    running = {"finished": False, "started": True}
    action, shown = _waiter(
        [running, running, running, {"finished": True, "started": True}],
        [one, one, two, two],
        monkeypatch,
    )
    action._wait(dict(ARGS, interval=0), "~", {"inventory_hostname": "lab1"})
    assert [line.split(" done")[0] for line in shown] == [
        "rdma_verify main: round 1/6",
        "rdma_verify main: round 2/6",
    ]
    action, shown = _waiter([{"finished": True, "started": True}], [two], monkeypatch)
    action._wait(dict(ARGS, report=False), "~", {"inventory_hostname": "lab2"})
    assert shown == []
