# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pairwise test schedules: rounds of disjoint pairs that run in parallel.

full   every pair exactly once (the circle method, as SuperBench's one-to-one pattern
       and NVIDIA ClusterKit do): N-1 rounds for even N, N rounds for odd N (each round
       one host sits out).
quick  the first `rounds` rounds of the full schedule (2 or 3): every host meets that
       many different peers (odd N: one fewer for the host that sits out), every host
       is tested when rounds >= 2; a fast first answer on a big rack.
isolate  each suspect host against a known-good one (see isolate_rounds).
"""

from __future__ import annotations

MODES = ("full", "quick")


def _check_hosts(hosts):
    hosts = list(hosts or [])
    seen = set()
    duplicates = sorted({str(h) for h in hosts if h in seen or seen.add(h)})
    if duplicates:
        raise ValueError(f"pair_rounds: hosts must be unique; repeated: {', '.join(duplicates)}")
    return hosts


def full_round_count(count):
    """Rounds of the full schedule for `count` hosts."""
    if count < 2:
        return 0
    return count - 1 if count % 2 == 0 else count


def pair_rounds(hosts, mode="full", rounds=2):
    """[[ [a, b], ... ], ...]: rounds of disjoint pairs; a comes before b in `hosts`."""
    hosts = _check_hosts(hosts)
    if mode not in MODES:
        raise ValueError(f"pair_rounds: mode must be one of {', '.join(MODES)}; got {mode!r}")
    total = full_round_count(len(hosts))
    if mode == "quick":
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 2:
            raise ValueError(f"pair_rounds: quick mode needs rounds >= 2; got {rounds!r}")
        total = min(total, rounds)
    if total == 0:
        return []
    # Circle method: slots 0..m-2 rotate, slot m-1 stays; an odd count adds a bye.
    m = len(hosts) + len(hosts) % 2
    ring = m - 1
    count = len(hosts)
    schedule = []
    for r in range(total):
        pairs = [[hosts[r], hosts[ring]]] if ring < count else []
        for i in range(1, m // 2):
            a, b = (r + i) % ring, (r - i) % ring
            pairs.append([hosts[a], hosts[b]] if a < b else [hosts[b], hosts[a]])
        schedule.append(pairs)
    return schedule


def isolate_rounds(suspects, good):
    """Pair each suspect with a known-good host, in rounds of disjoint pairs.

    Every round uses each good host at most once; suspects beyond the number of good
    hosts go to later rounds. Returns [[ [suspect, good], ... ], ...]; [] when there
    is no suspect or no good host to test against.
    """
    suspects = _check_hosts(suspects)
    good = [h for h in _check_hosts(good) if h not in set(suspects)]
    if not suspects or not good:
        return []
    width = len(good)
    schedule = []
    for start in range(0, len(suspects), width):
        chunk = suspects[start : start + width]
        schedule.append([[s, good[(start + i) % width]] for i, s in enumerate(chunk)])
    return schedule
