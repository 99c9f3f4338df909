# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What rdma_verify's plan, judge, isolation and fabric steps share: rails by name,
the outcomes no test is judged on, a first line of an error, gc paused for big runs.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


def first_line(text, limit=300):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def rails_of(health):
    return {r["rail"]: r for r in (health or {}).get("rails") or []}


# Outcomes that say nothing about either host's HCA: isolation and rail patterns skip them.
NOT_JUDGED = ("peer lost", "not run")


@contextmanager
def gc_paused():
    """Python's cycle collector off for a while (a context manager, or a decorator): a
    plan, its judging and the checks across hosts build tens of thousands of small
    containers and no cycle, and the collector would traverse them again and again
    (half the CPU of a quick plan of 4,096 hosts x 8 rails)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
