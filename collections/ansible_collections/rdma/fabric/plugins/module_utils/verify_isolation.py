# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's isolation: the suspect (host, rail)s among several, retested against
known-good peers, the rail-level patterns and the verdicts per host rail.
"""

from __future__ import annotations

import re
from collections import Counter

from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    natural_key,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_common import (
    NOT_JUDGED,
    rails_of,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_plan import (
    assign_rounds,
)

PEERS_PER_SUSPECT = 2
SEND, RECEIVE = "sender", "receiver"


def sender_is_client(binary):
    """ib_write_* and ib_send_* move data client -> server; ib_read_* server -> client."""
    return "read" not in (binary or "")


def _directions(record, options):
    """{host: set of directions} that a record exercised."""
    if options.get("bidirectional"):
        both = {SEND, RECEIVE}
        return {record["client"]: both, record["server"]: both}
    if sender_is_client(options.get("binary")):
        return {record["client"]: {SEND}, record["server"]: {RECEIVE}}
    return {record["client"]: {RECEIVE}, record["server"]: {SEND}}


def _span(hosts):
    """'lab1-lab4' for hosts that follow each other by name, else 'lab1, lab3'."""
    hosts = sorted(hosts, key=natural_key)
    prefix = {re.sub(r"\d+$", "", h) for h in hosts}
    numbers = [re.search(r"(\d+)$", h) for h in hosts]
    if len(hosts) > 2 and len(prefix) == 1 and all(numbers):
        values = [int(m.group(1)) for m in numbers]
        if values == list(range(values[0], values[0] + len(values))):
            return f"{hosts[0]}-{hosts[-1]}"
    return ", ".join(hosts)


def _rail_pattern(rail, records):
    """A rail-level verdict when the rail's failures follow its wiring rather than hosts:
    every tested pair failing (3+ hosts), or two groups (3+ hosts each) that pass among
    themselves and fail every test across. None otherwise."""
    mine = [
        r
        for r in records
        if r["phase"] == "main"
        and r["kind"] == "bw"
        and r["rail"] == rail
        and r.get("outcome") not in NOT_JUDGED
    ]
    hosts = {h for r in mine for h in (r["server"], r["client"])}
    failing = [r for r in mine if r["outcome"] not in ("passed", "flaky")]
    if len(hosts) >= 3 and len(failing) == len(mine):
        ratios = sorted(
            r["measured_gbps"] / r["expected_gbps"]
            for r in mine
            if r.get("measured_gbps") and r.get("expected_gbps")
        )
        if len(ratios) == len(mine):
            share = round(100 * ratios[len(ratios) // 2])
            return (
                f"rail {rail}: every pair at ~{share}% of the expected rate: suspect the "
                "expected rate (rdma_verify_expected_rate_gbps) or the leaf"
            )
        return f"rail {rail}: every pair fails: suspect the leaf or the rail's subnet"
    # Groups: hosts joined by passing tests on this rail.
    group = {h: {h} for h in hosts}
    for r in mine:
        if r["outcome"] in ("passed", "flaky"):
            a, b = group[r["server"]], group[r["client"]]
            if a is not b:
                a |= b
                for h in b:
                    group[h] = a
    groups = {id(g): g for g in group.values()}
    # 3+ hosts a side: two against two is as well two bad hosts (their retests decide).
    if len(groups) != 2 or min(len(g) for g in groups.values()) < 3:
        return None
    one, two = sorted(groups.values(), key=lambda g: natural_key(min(g, key=natural_key)))
    if all((r["server"] in one) != (r["client"] in one) for r in failing):
        return (
            f"rail {rail}: {_span(one)} fail against {_span(two)}: suspect the leaf or its uplinks"
        )
    return None


def _culprits(rail, fails, passed, untestable, steady=None):
    """The (host, rail)s that explain the rail's failures: its untestable ports, then,
    repeatedly, the host(s) with the most failures against peers not yet suspect, until
    every failure has a suspect end. A tie suspects every host in it (the isolate
    retests against known-good peers separate them); among equal counts, the hosts
    whose failures are all in one direction that never passed (steady: {host: count})."""
    steady = steady or {}
    suspects = {h for (h, r) in untestable if r == rail}
    unexplained = {frozenset((h, p)) for h, peers in fails.items() for p in peers if h != p}
    unexplained = {e for e in unexplained if not e & suspects}
    while unexplained:
        count = Counter(h for edge in unexplained for h in edge)
        score = {h: (c, steady.get(h, 0)) for h, c in count.items()}
        top = max(score.values())
        picked = {h for h, c in score.items() if c == top}
        suspects |= picked
        unexplained = {e for e in unexplained if not e & picked}
    # A host that failed and never passed on the rail is suspect whatever its peers.
    suspects |= {h for h in fails if (h, rail) not in passed}
    return {(h, rail) for h in suspects}


def isolation(records, health, options):
    """Suspects per (host, rail), known-good (host, rail)s, rail-level patterns and the
    isolate tests.

    Per rail, on the final (after retest) main tests: when the failures follow the rail
    rather than hosts (every pair fails; or two groups pass among themselves and fail
    across: a leaf half) the rail gets a verdict in "rails" and no host is suspect.
    Else the suspects are the (host, rail)s that explain the failures: repeatedly the
    one(s) with the most failures against peers that are not themselves suspect, until
    every failure has a suspect end (untestable ports and hosts that never passed are
    suspect too). Known-good: passed at least once and not suspect; a suspect is never
    a known-good peer. Each suspect is tested against up to 2 known-good peers on its
    rail, as client and as server.
    """
    # passed: the (host, rail)s that passed at least once (whom against is not needed:
    # one set entry per port, not two per test); failed: {(host, rail): failing peers}.
    passed, failed = set(), {}
    untestable = {}
    # Per (host, rail) and direction: [failures, passes] (the one-direction evidence).
    by_dir = {}
    for r in records:
        if r["phase"] != "main" or r["kind"] != "bw" or r.get("outcome") in NOT_JUDGED:
            continue
        final_pass = r["outcome"] in ("passed", "flaky")
        for host, peer in ((r["server"], r["client"]), (r["client"], r["server"])):
            key = (host, r["rail"])
            rail = rails_of(health.get(host)).get(r["rail"])
            if not rail or not rail.get("device"):
                untestable[key] = (rail or {}).get("missing") or "no RDMA port for this rail"
            elif rail.get("active") is False:
                untestable[key] = "its port is not ACTIVE/LinkUp (see its port state check)"
            elif host in (r.get("port_down") or ()):
                untestable[key] = "its port went DOWN during the run (see its tests)"
            for direction in _directions(r, options).get(host, ()):
                by_dir.setdefault(key, {}).setdefault(direction, [0, 0])[final_pass] += 1
            if final_pass:
                passed.add(key)
            else:
                failed.setdefault(key, set()).add(peer)
    rails = {}
    for key, peers in failed.items():
        rails.setdefault(key[1], {})[key[0]] = peers
    patterns = {}
    suspects = set()
    for rail, fails in rails.items():
        pattern = _rail_pattern(rail, records)
        if pattern:
            patterns[rail] = pattern
            continue
        steady = {
            h: max((f for f, p in by_dir.get((h, rail), {}).values() if not p), default=0)
            for h in fails
        }
        suspects |= _culprits(rail, fails, passed, untestable, steady)
    good = sorted(
        (k for k in passed if k not in suspects),
        key=lambda k: (natural_key(k[1]), natural_key(k[0])),
    )
    good_by_rail = {}
    for host, rail in good:
        good_by_rail.setdefault(rail, []).append(host)
    pairs = []
    ordered = sorted(suspects, key=lambda k: (natural_key(k[0]), natural_key(k[1])))
    for n, (host, rail) in enumerate(ordered):
        if (host, rail) in untestable:
            continue
        peers = [g for g in good_by_rail.get(rail, []) if g != host]
        if not peers:
            continue
        chosen = [peers[(n + i) % len(peers)] for i in range(min(PEERS_PER_SUSPECT, len(peers)))]
        for peer in chosen:
            pairs.append({"server": peer, "client": host, "rail": rail})
            pairs.append({"server": host, "client": peer, "rail": rail})
    return {
        "rails": patterns,
        "suspects": [f"{h} {r}" for h, r in ordered],
        "untestable": {f"{h} {r}": why for (h, r), why in sorted(untestable.items())},
        "good": [f"{h} {r}" for h, r in good],
        "pairs": assign_rounds(pairs),
    }


def _device(health, host, rail):
    return (rails_of(health.get(host)).get(rail) or {}).get("device")


def verdicts(isolate, records, health, options):
    """{"host rail": {host, rail, device, bad, verdict}} for every suspect."""
    out = {}
    retests = [r for r in records if r["phase"] == "isolate" and r.get("outcome") not in NOT_JUDGED]
    for key in isolate.get("suspects") or []:
        host, rail = key.split(" ", 1)
        device = _device(health, host, rail)
        name = f"{host} rail {rail}" + (f" ({device})" if device else "")
        entry = {"host": host, "rail": rail, "device": device}
        if key in (isolate.get("untestable") or {}):
            out[key] = dict(
                entry, bad=True, verdict=f"{name}: bad, not retested: {isolate['untestable'][key]}"
            )
            continue
        mine = [r for r in retests if r["rail"] == rail and host in (r["server"], r["client"])]
        if not mine:
            out[key] = dict(
                entry,
                bad=None,
                verdict=f"{name}: undetermined: no known-good peer on rail {rail} to "
                "retest against",
            )
            continue
        by_dir = {SEND: {"fail": set(), "pass": set()}, RECEIVE: {"fail": set(), "pass": set()}}
        for r in mine:
            peer = r["server"] if r["client"] == host else r["client"]
            for direction in _directions(r, options).get(host, ()):
                by_dir[direction]["pass" if r["passed"] else "fail"].add(peer)
        bad_parts, mixed = [], []
        for direction in (SEND, RECEIVE):
            fails, passes = by_dir[direction]["fail"], by_dir[direction]["pass"]
            if fails and not passes:
                count = len(fails)
                bad_parts.append(
                    f"fails as {direction} against {count} good peer{'s' if count > 1 else ''}"
                    f" ({', '.join(sorted(fails, key=natural_key))})"
                )
            elif fails:
                mixed.append(
                    f"as {direction} fails against {', '.join(sorted(fails))}, passes against "
                    f"{', '.join(sorted(passes))}"
                )
        peers = sorted(
            {r["server"] if r["client"] == host else r["client"] for r in mine}, key=natural_key
        )
        if bad_parts:
            out[key] = dict(entry, bad=True, verdict=f"{name}: {' and '.join(bad_parts)}")
        elif mixed:
            out[key] = dict(entry, bad=None, verdict=f"{name}: inconsistent: {'; '.join(mixed)}")
        else:
            out[key] = dict(
                entry,
                bad=False,
                verdict=f"{name}: good: passes both directions against {', '.join(peers)} "
                "(its failures were its peer's)",
            )
    return out
