# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's judge: planned tests + perftest_run outcomes -> records (passed, flaky,
failed, peer lost, not run), and the retest of failed tests.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.perftest import (
    bw_average_gbps,
    lat_typical_us,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_common import (
    NOT_JUDGED,
    first_line,
    gc_paused,
    rails_of,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_counters import (
    delta_errors,
)


def _clock_estimate(result, duration):
    """Gb/s from the last row's iterations x bytes over the -D duration, when perftest
    printed zeros because it could not calibrate its clock; else None."""
    rows = result.get("rows") or []
    if not (result.get("clock_error") and duration and rows):
        return None
    last = rows[-1]
    if not last.get("iterations") or not last.get("bytes") or last.get("bw_average_gbps"):
        return None
    factor = 2 if "Bidirectional" in (result.get("test") or "") else 1
    return round(last["bytes"] * last["iterations"] * 8 * factor / duration / 1e9, 6)


RECORD_KEYS = (
    "id",
    "phase",
    "kind",
    "round",
    "server",
    "client",
    "rail",
    "port",
    "server_device",
    "client_device",
    "expected_gbps",
    "max_latency_us",
)


def _bits(result, measured, duration):
    """The bits one direction of a bandwidth test moved (0 when unknown)."""
    if not measured or not duration:
        return 0
    per_direction = 2 if "Bidirectional" in (result.get("test") or "") else 1
    return measured * 1e9 * duration / per_direction


def _peer_lost(record, gone):
    """The record of a test one of whose hosts was lost during traffic."""
    out = {k: record.get(k) for k in RECORD_KEYS}
    out.update(
        measured_gbps=None,
        latency_us=None,
        passed=False,
        error=f"peer lost: {' and '.join(gone)} {'was' if len(gone) == 1 else 'were'} "
        "lost during traffic",
        ran=True,
        outcome="peer lost",
        lost=gone,
        rows=[],
        mtu=None,
        deltas={},
    )
    return out


def _lookup(outcomes):
    """(host, side id) -> outcome or None, from any form judge() takes."""
    if callable(outcomes):
        return outcomes
    if isinstance(outcomes, list):
        outcomes = {o["id"]: o for o in outcomes}
    return lambda _host, side_id: outcomes.get(side_id)


@gc_paused()
def judge(tests, outcomes, duration=None, options=None, pack=None):
    """Planned tests (a list, or any iterable: each is read once) + perftest_run outcomes
    -> records. outcomes: {id: outcome} (any mapping), a list, or a call (host, side id)
    -> outcome or None (verify_outcomes.OutcomeFiles: the hosts' files, each read forward
    as the tests ask). options: counter_limits and max_ber (the counters' judge,
    delta_errors). pack: applied to each record as it is made (verify_record.Record keeps
    millions of them small); None: plain dicts."""
    options = options or {}
    pack = pack or (lambda record: record)
    side_outcome = _lookup(outcomes)
    # A host none of whose sides came back was lost during traffic (its perftest_run
    # returns all its outcomes at once): its tests are "peer lost", not failures of
    # anyone's HCA, and the report lists it unreachable. Known once every test is read:
    # its tests' records are replaced then.
    came_back = {}
    records = []
    for test in tests:
        record = {k: test.get(k) for k in RECORD_KEYS}
        record.update(
            measured_gbps=None,
            latency_us=None,
            passed=False,
            error=test.get("error"),
            ran=bool(test.get("runnable")),
        )
        if test.get("runnable"):
            client = side_outcome(test["client"], f"{test['id']}/client")
            server = side_outcome(test["server"], f"{test['id']}/server")
            for side, outcome in (("client", client), ("server", server)):
                came_back[test[side]] = came_back.get(test[side]) or outcome is not None
            errors = []
            if client is None:
                errors.append(f"client {test['client']}: no result (host failed or unreachable?)")
            elif client.get("error"):
                errors.append(f"client {test['client']}: {client['error']}")
            if server is None:
                errors.append(f"server {test['server']}: no result (host failed or unreachable?)")
            elif server.get("error"):
                errors.append(f"server {test['server']}: {server['error']}")
            result = (client or {}).get("result") or {}
            bits = _bits(result, bw_average_gbps(result) if test["kind"] == "bw" else 0, duration)
            for side, outcome in (("client", client), ("server", server)):
                errors += delta_errors(
                    side,
                    test[side],
                    test.get(f"{side}_device"),
                    test.get(f"{side}_hca_port"),
                    outcome,
                    options,
                    bits,
                )
            # A side not run because its own port read DOWN (perftest_run) names its host:
            # isolation blames that host's port, not the partner that waited for it.
            down = [
                test[side]
                for side, o in (("server", server), ("client", client))
                if (o or {}).get("port_down")
            ]
            if down:
                record["port_down"] = down
            record["rows"] = result.get("rows") or []
            record["mtu"] = result.get("mtu")
            record["deltas"] = {
                side: (o or {}).get("deltas") or {}
                for side, o in (("server", server), ("client", client))
                if (o or {}).get("deltas")
            }
            if test["kind"] == "bw":
                record["measured_gbps"] = bw_average_gbps(result)
                estimate = _clock_estimate(result, duration)
                if estimate is not None:
                    record["measured_gbps"] = estimate
                    record["note"] = (
                        f"perftest could not calibrate its clock ({result['clock_error']}): "
                        "Gb/s estimated from iterations x size / duration"
                    )
                measured = record["measured_gbps"]
                if not errors and measured is not None and measured < test["expected_gbps"]:
                    errors.append(
                        f"{measured} Gb/s is below the expected {test['expected_gbps']} Gb/s"
                    )
            else:
                record["latency_us"] = lat_typical_us(result)
                limit, lat = test.get("max_latency_us"), record["latency_us"]
                if not errors and lat is not None and limit and lat > limit:
                    errors.append(f"{lat} us is above the limit of {limit} us")
            if not errors and not result.get("ok"):
                errors.append(f"client {test['client']}: {result.get('error')}")
            record["error"] = first_line("; ".join(errors), 600) if errors else None
            if errors and client is not None and client.get("output"):
                record["client_output"] = client["output"]
            if errors and server is not None and server.get("output"):
                record["server_output"] = server["output"]
        record["passed"] = record["error"] is None
        record["outcome"] = "passed" if record["passed"] else "failed"
        if test.get("not_run"):
            record["outcome"] = "not run"
        records.append(pack(record))
    lost = {host for host, back in came_back.items() if not back}
    if lost:
        for n, record in enumerate(records):
            gone = [h for h in (record["server"], record["client"]) if h in lost]
            if record["ran"] and gone:
                records[n] = pack(_peer_lost(record, gone))
    return records


def _active(health, host, rail):
    entry = rails_of((health or {}).get(host)).get(rail) or {}
    return bool(entry.get("device")) and entry.get("active", True) is not False


def retest_pairs(records, health=None):
    """The failed main tests that ran, to run once more: [{round, server, client, rail}],
    rounds renumbered from 0 (a test whose port is not ACTIVE is not retested: its
    health check already says why)."""
    chosen = [
        r
        for r in records
        if r["phase"] == "main"
        and r.get("ran")
        and not r["passed"]
        and r.get("outcome") not in NOT_JUDGED
        and (
            health is None
            or (_active(health, r["server"], r["rail"]) and _active(health, r["client"], r["rail"]))
        )
    ]
    numbers = {n: i for i, n in enumerate(sorted({r["round"] for r in chosen}))}
    return [
        dict({k: r[k] for k in ("server", "client", "rail")}, round=numbers[r["round"]])
        for r in chosen
    ]


def merge_retests(records, retests):
    """Mark each main record retested: "flaky" when the retest passed, else "failed";
    both attempts stay in the records (the retest with phase "retest")."""
    by_key = {(r["server"], r["client"], r["rail"]): r for r in retests}
    for record in records:
        if record["phase"] != "main" or record["passed"]:
            continue
        again = by_key.get((record["server"], record["client"], record["rail"]))
        if again is None:
            continue
        record["retest_id"] = again["id"]
        record["outcome"] = "flaky" if again["passed"] else "failed"
        again["outcome"] = "passed on retest" if again["passed"] else "failed again"
    return records
