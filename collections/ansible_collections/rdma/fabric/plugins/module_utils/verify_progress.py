# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One line per finished round while rdma_verify's schedule runs (an async task): what
perftest_run's progress file says, read by verify_wait on the reporting host."""

from __future__ import annotations


def duration(seconds):
    """'42 s', '3 min 05 s', '29 h 10 min'."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def progress_line(phase, host, state, rounds_total):
    """The line for a progress state (perftest_run's progress_file) of `host`, whose
    rounds run in step with every other host's: the round it finished is the fabric's.
    The ETA assumes the rounds left take as long as the rounds so far."""
    finished = int(state["last_round"]) + 1
    total = max(int(rounds_total or 0), finished)
    elapsed = float(state.get("elapsed") or 0)
    left = elapsed / finished * (total - finished) if finished else 0
    failed = int(state.get("sides_failed") or 0)
    return (
        f"rdma_verify {phase}: round {finished:,}/{total:,} done ({host}: "
        f"{int(state.get('sides_done') or 0):,} sides run, {failed:,} failed so far; "
        f"{duration(elapsed)} elapsed, about {duration(left)} left)"
    )
