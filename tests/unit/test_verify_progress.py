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
