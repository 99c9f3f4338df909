# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's perftest tests: which pairs, on which rail and port, and what they proved.

Rails are matched by name (the rdma_rails entry, or the device name without a plan): a
test pairs rail R of one host with rail R of its peer, and a host without rail R gets
an error on rail R, never a test of another rail.

Phases, each run by every host as one perftest_run(action=schedule) call:
  main     pair_rounds (full | quick) over the play's hosts, every rail of a pair at
           once. Direction: of a pair (i, j), i < j in the host list, host i serves when
           i + j is odd, else host j. In full mode from 5 hosts on, that alone has every
           host send to and receive from at least 2 peers; quick mode (its few rounds
           cannot balance the directions: at 32 hosts, half the hosts never received),
           and full mode on 2-4 hosts, run each round twice, the second time reversed
           (rounds 2r and 2r + 1), so every host sends to and receives from each of its
           peers; an odd host count adds a round to quick mode, so that the host sitting
           one out still meets 2 peers. Every host sends to and receives from
           min(2, hosts - 1) peers or more, on every rail (a bad receiver never hides
           behind the one bad sender it would have received from).
  retest   every failed main test once more (same pair, rail and direction); a pass is
           "flaky", not "passed"
  isolate  each suspect (host, rail) against up to 2 known-good (host, rail)s of the
           same rail, in both directions
  latency  ib_write_lat on the main schedule
Ports: base + (round x rails + the rail's position among the fabric's rails) % span. A
host is in one pair per round, so its ports are unique while rounds x rails <= span
(31 rounds x 8 rails = 248); beyond, a port comes back only rounds later, when that
host's earlier servers have ended (each host runs its rounds one after another).
Everything here is linear in hosts x rails x rounds: planning for one host needs only
its own pairs (host_pairs, O(rounds)).
"""

from __future__ import annotations

import gc
import re
from collections import Counter
from contextlib import contextmanager
from fnmatch import fnmatchcase

from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (
    MODES,
    full_round_count,
)
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import (
    bw_average_gbps,
    lat_typical_us,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rails import natural_key
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    roce_tos,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_args import (
    as_args,
    extra_args_errors,
    rail_args,
)

PEERS_PER_SUSPECT = 2
SEND, RECEIVE = "sender", "receiver"


def first_line(text, limit=300):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------- the schedule


def round_count(count, mode, rounds):
    """Rounds of the circle method the main schedule uses (before two_way doubles them)."""
    if mode not in MODES:
        raise ValueError(f"rdma_verify_mode must be one of {', '.join(MODES)}; got {mode!r}")
    total = full_round_count(count)
    # Odd count: each round one host sits out; one more round gives it its 2 peers.
    return min(total, rounds + count % 2) if mode == "quick" else total


# Up to this many hosts full mode runs each pair both ways too: with 3 or 4 hosts the
# alternating orientation leaves a host one peer in one direction (2 hosts: none).
TWO_WAY_FULL_MAX = 4


def two_way(count, mode):
    """Whether the main schedule runs each round twice, the second time reversed."""
    return mode == "quick" or count <= TWO_WAY_FULL_MAX


def _oriented(r, server, client, both):
    """The tests of one pair of circle round r: (round, server, client), reversed too."""
    if not both:
        return [(r, server, client)]
    return [(2 * r, server, client), (2 * r + 1, client, server)]


def orient(hosts, i, j):
    """(server, client) of the pair of hosts[i] and hosts[j]."""
    i, j = min(i, j), max(i, j)
    return (hosts[i], hosts[j]) if (i + j) % 2 else (hosts[j], hosts[i])


def host_pairs(hosts, host, mode="full", rounds=2, index=None):
    """[(round, server, client)] of one host in the main schedule: the pairs of
    pair_rounds' circle method that involve it, computed in O(rounds)."""
    count = len(hosts)
    p = hosts.index(host) if index is None else index
    total = round_count(count, mode, rounds)
    both = two_way(count, mode)
    ring = count + count % 2 - 1
    out = []
    for r in range(total):
        if p == ring:
            q = r
        elif p == r:
            q = ring if ring < count else None
        else:
            q = (2 * r - p) % ring
        if q is not None:
            out += _oriented(r, *orient(hosts, p, q), both)
    return out


def all_pairs(hosts, mode="full", rounds=2):
    """[(round, server, client)] of every test of the main schedule, round by round."""
    total = round_count(len(hosts), mode, rounds)
    both = two_way(len(hosts), mode)
    ring = len(hosts) + len(hosts) % 2 - 1
    out = []
    for r in range(total):
        pairs = [orient(hosts, r, ring)] if ring < len(hosts) else []
        pairs += [orient(hosts, (r + i) % ring, (r - i) % ring) for i in range(1, (ring + 1) // 2)]
        if both:
            out += [(2 * r, s, c) for s, c in pairs] + [(2 * r + 1, c, s) for s, c in pairs]
        else:
            out += [(r, s, c) for s, c in pairs]
    return out


# ---------------------------------------------------------------- tests of a pair


def _rails(health):
    return {r["rail"]: r for r in (health or {}).get("rails") or []}


def expected_gbps(options, rail_expect):
    """The pass mark of a bandwidth test on a rail: rdma_verify_min_gbps when set, else
    min_fraction x the usable rate (rdma_verify_expected_rate_gbps, else the rate most
    ports of the rail report, after line encoding), x2 bidirectional."""
    if options.get("min_gbps"):
        return float(options["min_gbps"])
    usable = (rail_expect or {}).get("usable_gbps") or 0
    factor = 2 if options.get("bidirectional") else 1
    return round(options.get("min_fraction", 0.9) * usable * factor, 3)


# Outcomes that say nothing about either host's HCA: isolation and rail patterns skip them.
NOT_JUDGED = ("peer lost", "not run")


def _no_pass_mark(options, rail_expect):
    """A bandwidth test on an ambiguous rail (no majority rate, no rdma_verify_min_gbps)
    would pass at any rate: it is not run."""
    return bool((rail_expect or {}).get("ambiguous")) and not options.get("min_gbps")


def pin_argv(rail):
    """The launcher that keeps a perftest next to its HCA: memory traffic that crosses
    sockets costs bandwidth. numactl --cpunodebind=N --membind=N (CPUs and memory of the
    HCA's NUMA node, as Azure's HPC health checks bind) when the HCA's sysfs numa_node is
    known (>= 0) and the host has numactl; else taskset -c on its local_cpulist (as
    NVIDIA's ngc_multinode_perf pins); else nothing (numa_node -1: one socket, or a VM
    without NUMA information, and no local_cpulist)."""
    node = rail.get("numa_node")
    if rail.get("numactl") and isinstance(node, int) and node >= 0:
        return ["numactl", f"--cpunodebind={node}", f"--membind={node}"]
    if rail.get("local_cpulist"):
        return ["taskset", "-c", rail["local_cpulist"]]
    return []


def _side_argv(options, rail, port, peer_address=None):
    argv = []
    if rail.get("cuda") is not None:
        # --use_cuda=N is nvidia-smi's index, in PCI order; CUDA numbers devices fastest
        # first unless CUDA_DEVICE_ORDER=PCI_BUS_ID (NVIDIA's ngc_multinode_perf sets it),
        # and an inherited CUDA_VISIBLE_DEVICES would renumber them.
        argv += ["env", "-u", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER=PCI_BUS_ID"]
    argv += pin_argv(rail) if options.get("pin_cpus") else []
    argv += [options["binary"], "-d", rail["device"], "-i", str(rail["port"])]
    if rail.get("gid_index") is not None:
        argv += ["-x", str(rail["gid_index"])]
    if (
        options.get("_tclass") is not None
        and rail.get("link_layer") == "Ethernet"
        and rail.get("pci")
    ):
        # RoCE on a NIC: test in the policy's lossless class (Soft-RoCE has no DCB).
        argv.append(f"--tclass={options['_tclass']}")
    if rail.get("cuda") is not None:
        # GPUDirect: this rail's buffers in the GPU nearest its NIC, never one GPU for all.
        argv.append(f"--use_cuda={rail['cuda']}")
    argv += ["-F", "--report_gbits", "-p", str(port)]
    argv += options.get("_args") or [str(a) for a in options.get("args") or []]
    # rdma_verify_rail_extra_args: after the global ones, on this rail only.
    argv += (options.get("_rail_args") or {}).get(rail.get("rail"), [])
    if peer_address:
        argv.append(peer_address)
    return argv


def pair_tests(phase, round_, server, client, health, options, rails_expect, only=None):
    """The tests of one pair in one round: one per rail of either host (or of `only`)."""
    s_rails, c_rails = _rails(health.get(server)), _rails(health.get(client))
    # Port slot of a rail: its position among the fabric's rails, so that a host's
    # ports differ across rounds too (rounds x rails <= rdma_verify_port_span).
    fabric = list(rails_expect or {})
    union = set(s_rails) | set(c_rails)
    names = [n for n in fabric if n in union]
    if len(names) < len(union):
        names = sorted(union, key=natural_key)
    names = names or ["-"]
    slots = max(len(fabric), len(names))
    span = options.get("port_span") or 1000
    tests = []
    for index, name in enumerate(names):
        if only is not None and name not in only:
            continue
        pos = fabric.index(name) if name in fabric else index
        port = options.get("base_port", 18515) + (round_ * slots + pos) % span
        kind = options.get("kind", "bw")
        test = {
            "id": f"{phase}/{round_}/{server}/{client}/{name}",
            "phase": phase,
            "kind": kind,
            "round": round_,
            "server": server,
            "client": client,
            "rail": name,
            "port": port,
            "server_device": None,
            "client_device": None,
            "expected_gbps": expected_gbps(options, rails_expect.get(name))
            if kind == "bw"
            else None,
            "max_latency_us": (options.get("max_latency_us") or None) if kind == "lat" else None,
            "runnable": False,
            "error": None,
        }
        s, c = s_rails.get(name), c_rails.get(name)
        test["server_device"] = (s or {}).get("device")
        test["client_device"] = (c or {}).get("device")
        test["server_hca_port"] = (s or {}).get("port")
        test["client_hca_port"] = (c or {}).get("port")
        problems = []
        for host, rail in ((server, s), (client, c)):
            if not rail or not rail.get("device"):
                why = (rail or {}).get("missing")
                problems.append(
                    f"{host}: no RDMA port for rail {name}" + (f" ({why})" if why else "")
                )
        for host, rail in ((server, s), (client, c)):
            if rail and rail.get("cuda_error"):
                problems.append(f"{host}: {rail.get('device')}: {rail['cuda_error']}")
        if problems:
            test["error"] = "; ".join(problems)
        elif kind == "bw" and _no_pass_mark(options, rails_expect.get(name)):
            test["not_run"] = True
            test["error"] = (
                f"not run: rail {name} has no pass mark (its ports' rates are ambiguous, see "
                "the 'rail rate' check): set rdma_verify_expected_rate_gbps or rdma_verify_min_gbps"
            )
        elif not s.get("address"):
            test["error"] = (
                f"{server}: {s['device']} has no address for perftest to connect to "
                "(no RoCE v2 IPv4 GID)"
            )
        else:
            timeout = options.get("timeout", 60)
            test["runnable"] = True
            test["server_test"] = {
                "id": f"{test['id']}/server",
                "round": round_,
                "side": "server",
                "port": port,
                "argv": _side_argv(options, s, port),
                "timeout": timeout,
            }
            test["client_test"] = {
                "id": f"{test['id']}/client",
                "round": round_,
                "side": "client",
                "port": port,
                "argv": _side_argv(options, c, port, s["address"]),
                "timeout": timeout,
            }
        tests.append(test)
    return tests


def _tclass(options):
    """--tclass of RoCE tests: rdma_verify_tclass, or with "auto" rdma_roce_policy's
    RoCE ToS (DSCP << 2, plus ECT(0) when ECN is on); None: not set."""
    value = options.get("tclass", "auto")
    if value in (None, "", "none"):
        return None
    if value != "auto":
        return int(value)
    policy, errors = normalize_policy(options.get("roce_policy") or {})
    return None if errors or not options.get("roce_policy") else roce_tos(policy)


def option_errors(options, rails):
    """What is wrong with the test options before any traffic, naming the variable:
    rdma_verify_extra_args / rdma_verify_rail_extra_args (a rail not in `rails`, a flag
    the role sets itself, such as --tclass while it sets the traffic class)."""
    return extra_args_errors(
        options.get("extra_args"),
        options.get("rail_args"),
        rails,
        tclass_set=_tclass(options) is not None,
    ) + counter_limit_errors(options.get("counter_limits"))


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


@gc_paused()
def plan(phase, pairs, health, options, rails_expect):
    """Every test of a phase. pairs: [(round, server, client)] or, for retest/isolate,
    [{round, server, client, rail}] (one rail each)."""
    tests = []
    options = dict(
        options,
        # the role's own arguments, then rdma_verify_extra_args (every rail)
        _args=[str(a) for a in options.get("args") or []]
        + as_args(options.get("extra_args"), "rdma_verify_extra_args"),
        _rail_args=rail_args(options.get("rail_args")),
        _tclass=_tclass(options),
    )
    for pair in pairs:
        if isinstance(pair, dict):
            tests += pair_tests(
                phase,
                pair["round"],
                pair["server"],
                pair["client"],
                health,
                options,
                rails_expect,
                only={pair["rail"]},
            )
        else:
            tests += pair_tests(phase, *pair, health, options, rails_expect)
    if len({t["id"] for t in tests}) != len(tests):
        raise ValueError(f"{phase}: two tests with one id (a host twice in a round?)")
    return tests


def host_sides(host, tests):
    """What this host runs: its server and client sides of the runnable tests."""
    sides = []
    for test in tests:
        if not test["runnable"]:
            continue
        if test["server"] == host:
            sides.append(test["server_test"])
        if test["client"] == host:
            sides.append(test["client_test"])
    return sides


# ---------------------------------------------------------------- judging


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
# The increase a counter may show during one test, per port (first match wins; a
# counter no pattern names may not increase). Discards, drops, link downs and transport
# errors: none. Symbol and CRC errors: "ber", a bit error rate (counter_max_ber) of the
# bits the test moved. Congestion signals (PFC pause, CNPs, ECN marks): None, reported
# only - a pair at line rate may legitimately pause or mark; a limit can be set.
COUNTER_LIMITS = (
    ("symbol_error", "ber"),
    ("*symbol_err*", "ber"),
    ("*crc_err*", "ber"),
    ("*pause*", None),
    ("*pfc*", None),
    ("np_cnp_sent", None),
    ("rp_cnp_handled", None),
    ("np_ecn_marked_roce_packets", None),
    ("*_marked", None),
    ("*", 0),
)
DEFAULT_MAX_BER = 1e-12
SATURATED_FIX = "clear it (rdma_verify_clear_counters, or perfquery -x -R)"


def counter_limit(name, limits=None):
    """The limit of one counter: rdma_verify_counter_limits (a name or a glob), then
    COUNTER_LIMITS; an int, "ber" or None (no limit)."""
    for pattern, limit in [*(limits or {}).items(), *COUNTER_LIMITS]:
        if fnmatchcase(name, pattern):
            return limit
    return 0


def counter_limit_errors(limits):
    """rdma_verify_counter_limits: each value a count >= 0, 'ber' or null."""
    errors = []
    for name, value in (limits or {}).items():
        count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not (count or value is None or value == "ber"):
            errors.append(
                f"rdma_verify_counter_limits: {name} must be a count >= 0, 'ber' or null; "
                f"got {value!r}"
            )
    return errors


def _delta_errors(side, host, device, port, outcome, options, bits):
    """Each counter of one side's port over its limit during the test, and each
    counter stuck at its maximum (its delta reads 0 whatever happens)."""
    where = f"{side} {host} {device} port {port}"
    errors = []
    for name, value in sorted(((outcome or {}).get("deltas") or {}).items()):
        limit = counter_limit(name, options.get("counter_limits"))
        if limit is None or not value:
            continue
        if limit == "ber":
            ber = float(options.get("max_ber") or DEFAULT_MAX_BER)
            allowed = int(ber * bits)
            if value > allowed:
                errors.append(
                    f"{where}: {name} +{value} during the test (limit {allowed}: bit error "
                    f"rate {ber:g} of {bits:.3g} bits)"
                )
        elif value > limit:
            errors.append(f"{where}: {name} +{value} during the test (limit {limit})")
    for name in (outcome or {}).get("saturated") or []:
        errors.append(f"{where}: {name} at max: {SATURATED_FIX}")
    return errors


def _bits(result, measured, duration):
    """The bits one direction of a bandwidth test moved (0 when unknown)."""
    if not measured or not duration:
        return 0
    per_direction = 2 if "Bidirectional" in (result.get("test") or "") else 1
    return measured * 1e9 * duration / per_direction


@gc_paused()
def judge(tests, outcomes, duration=None, options=None):
    """Planned tests + perftest_run outcomes ({id: outcome} or a list) -> records.
    options: counter_limits and max_ber (the counters' judge, _delta_errors)."""
    options = options or {}
    if isinstance(outcomes, list):
        outcomes = {o["id"]: o for o in outcomes}
    # A host none of whose sides came back was lost during traffic (its perftest_run
    # returns all its outcomes at once): its tests are "peer lost", not failures of
    # anyone's HCA, and the report lists it unreachable.
    came_back = {}
    for test in tests:
        if test.get("runnable"):
            for side in ("client", "server"):
                came_back[test[side]] = (
                    came_back.get(test[side]) or f"{test['id']}/{side}" in outcomes
                )
    lost = {host for host, back in came_back.items() if not back}
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
        gone = [h for h in (test["server"], test["client"]) if h in lost]
        if test.get("runnable") and gone:
            record.update(
                error=f"peer lost: {' and '.join(gone)} {'was' if len(gone) == 1 else 'were'} "
                "lost during traffic",
                outcome="peer lost",
                lost=gone,
                rows=[],
                mtu=None,
                deltas={},
            )
            records.append(record)
            continue
        if test.get("runnable"):
            client = outcomes.get(f"{test['id']}/client")
            server = outcomes.get(f"{test['id']}/server")
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
                errors += _delta_errors(
                    side,
                    test[side],
                    test.get(f"{side}_device"),
                    test.get(f"{side}_hca_port"),
                    outcome,
                    options,
                    bits,
                )
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
        records.append(record)
    return records


def _active(health, host, rail):
    entry = _rails((health or {}).get(host)).get(rail) or {}
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


# ---------------------------------------------------------------- isolation


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


def _rail_pattern(rail, records, passed, fails):
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
    passed, failed = {}, {}
    untestable = {}
    # Per (host, rail) and direction: [failures, passes] (the one-direction evidence).
    by_dir = {}
    for r in records:
        if r["phase"] != "main" or r["kind"] != "bw" or r.get("outcome") in NOT_JUDGED:
            continue
        final_pass = r["outcome"] in ("passed", "flaky")
        for host, peer in ((r["server"], r["client"]), (r["client"], r["server"])):
            key = (host, r["rail"])
            rail = _rails(health.get(host)).get(r["rail"])
            if not rail or not rail.get("device"):
                untestable[key] = (rail or {}).get("missing") or "no RDMA port for this rail"
            elif rail.get("active") is False:
                untestable[key] = "its port is not ACTIVE/LinkUp (see its port state check)"
            for direction in _directions(r, options).get(host, ()):
                by_dir.setdefault(key, {}).setdefault(direction, [0, 0])[final_pass] += 1
            if final_pass:
                passed.setdefault(key, set()).add(peer)
            else:
                failed.setdefault(key, set()).add(peer)
    rails = {}
    for key, peers in failed.items():
        rails.setdefault(key[1], {})[key[0]] = peers
    patterns = {}
    suspects = set()
    for rail, fails in rails.items():
        pattern = _rail_pattern(rail, records, passed, fails)
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


def assign_rounds(pairs):
    """Give each {server, client, rail} a round in which its two hosts meet nobody else
    (several rails of one host pair and direction share a round)."""
    rounds = []  # [{host: (server, client)}]
    out = []
    for pair in pairs:
        unit = (pair["server"], pair["client"])
        free = [n for n, busy in enumerate(rounds) if all(busy.get(h, unit) == unit for h in unit)]
        if free:
            number, busy = free[0], rounds[free[0]]
        else:
            number, busy = len(rounds), {}
            rounds.append(busy)
        busy[unit[0]] = busy[unit[1]] = unit
        out.append(dict(pair, round=number))
    return out


def _device(health, host, rail):
    return (_rails(health.get(host)).get(rail) or {}).get("device")


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


# ---------------------------------------------------------------- across hosts


def _majority(values):
    counts = Counter(values)
    (value, count), *_rest = counts.most_common(1) or [(None, 0)]
    return value, count


def _width_lanes(width):
    try:
        return int(str(width).rstrip("Xx"))
    except ValueError:
        return None


def firmware_checks(health, hosts):
    """One firmware version per PSID (board_id) across the fabric: a NIC left on old
    firmware behaves differently from its twins."""
    by_psid = {}
    for host in hosts:
        for device in (health[host] or {}).get("devices") or []:
            if device.get("board_id") and device.get("fw_ver"):
                by_psid.setdefault(device["board_id"], {}).setdefault(device["fw_ver"], []).append(
                    f"{host} {device['name']}"
                )
    checks = []
    for psid, versions in sorted(by_psid.items()):
        detail = "; ".join(
            f"{v}: {', '.join(sorted(where, key=natural_key))}"
            for v, where in sorted(versions.items())
        )
        checks.append(
            {
                "check": f"firmware of {psid}",
                "host": "fabric",
                "ok": len(versions) == 1,
                "device": None,
                "port": None,
                "detail": detail if len(versions) > 1 else f"{next(iter(versions))} everywhere",
            }
        )
    return checks


@gc_paused()
def _rate_label(rate):
    gbps, width, speed = rate[:3]
    return f"{gbps:g} Gb/s ({width} {speed})"


# The share of a rail's ports that must report one rate for it to be the rail's expected
# rate when rdma_verify_expected_rate_gbps is not set; a tie is never enough.
RATE_MAJORITY = 0.5


def _ambiguous_rate(name, rates, share):
    """'rail X: ambiguous: ...' when no rate of the rail wins by more than a tie and at
    least `share` of its ports; else None."""
    top = Counter(r for _h, r in rates).most_common()
    if not top:
        return None
    tie = len(top) > 1 and top[1][1] == top[0][1]
    if not tie and top[0][1] / len(rates) >= share:
        return None
    by_rate = {}
    for host, rate in rates:
        by_rate.setdefault(rate, []).append(host)
    seen = "; ".join(
        f"{_rate_label(rate)}: {', '.join(sorted(hosts, key=natural_key))}"
        for rate, hosts in sorted(by_rate.items(), key=lambda kv: (kv[0][0], str(kv[0][1:])))
    )
    return f"rail {name}: ambiguous: set rdma_verify_expected_rate_gbps ({seen})"


def fabric(health, expected_rate_gbps=0, majority_share=RATE_MAJORITY):
    """Checks across hosts and the expectation per rail.

    Returns {checks, rails: {rail: {gbps, width, speed, usable_gbps, ports, agree}},
    same_machine: [messages]}. Two inventory names with one boot id or one node GUID
    are one machine: refused, naming both. A port whose rate or width is below what
    most ports of its rail report fails a "rate" check; a host without a rail the
    others have fails a "rails" check on that rail. Without rdma_verify_expected_rate_gbps,
    a rail whose ports tie, or whose most common rate has less than majority_share of
    them, has no expected rate: a failed "rail rate" check says "ambiguous", never a
    guess by host order.
    """
    checks = []
    hosts = sorted(health, key=natural_key)
    same = []
    for what, key in (("boot id", "boot_id"), ("node GUID", "node_guids")):
        owners = {}
        for host in hosts:
            values = (health[host] or {}).get(key)
            for value in values if isinstance(values, list) else [values]:
                if value:
                    owners.setdefault(value, []).append(host)
        for value, names in sorted(owners.items()):
            if len(names) > 1:
                same.append(
                    f"{' and '.join(names)} are one machine (the same {what} {value}): list "
                    "each server once in the inventory"
                )
    for message in dict.fromkeys(same):
        checks.append(
            {
                "check": "one machine, one name",
                "host": "fabric",
                "ok": False,
                "device": None,
                "port": None,
                "detail": message,
            }
        )
    versions = {}
    for host in hosts:
        versions.setdefault((health[host] or {}).get("perftest_version") or "missing", []).append(
            host
        )
    detail = "; ".join(f"{v}: {', '.join(h)}" for v, h in sorted(versions.items()))
    checks += firmware_checks(health, hosts)
    checks.append(
        {
            "check": "same perftest version",
            "host": "fabric",
            "ok": len(versions) <= 1,
            "device": None,
            "port": None,
            "detail": detail,
        }
    )
    by_rail = {}
    for host in hosts:
        for rail in (health[host] or {}).get("rails") or []:
            by_rail.setdefault(rail["rail"], {})[host] = rail
    rails = {}
    for name in sorted(by_rail, key=natural_key):
        members = by_rail[name]
        rates = [
            (r["rate"]["gbps"], r["rate"]["width"], r["rate"]["speed"], r["rate"]["usable_gbps"])
            for r in members.values()
            if r.get("device") and r.get("rate")
        ]
        (gbps, width, speed, usable), count = _majority(rates) if rates else ((None,) * 4, 0)
        ambiguous = (
            None
            if expected_rate_gbps
            else _ambiguous_rate(
                name,
                [
                    (h, (r["rate"]["gbps"], r["rate"]["width"], r["rate"]["speed"]))
                    for h, r in members.items()
                    if r.get("device") and r.get("rate")
                ],
                majority_share,
            )
        )
        if ambiguous:
            gbps = width = speed = usable = None
            checks.append(
                {
                    "check": "rail rate",
                    "host": "fabric",
                    "ok": False,
                    "device": None,
                    "port": None,
                    "detail": ambiguous,
                }
            )
        if expected_rate_gbps:
            usable = expected_rate_gbps * (usable / gbps if usable and gbps else 1.0)
            gbps = expected_rate_gbps
        rails[name] = {
            "gbps": gbps,
            "width": width,
            "speed": speed,
            "usable_gbps": round(usable, 3) if usable else None,
            "ports": len(rates),
            "agree": count,
            "ambiguous": bool(ambiguous),
        }
        for host in hosts:
            rail = members.get(host)
            if rail is None:
                checks.append(
                    {
                        "check": "rails",
                        "host": host,
                        "ok": False,
                        "device": None,
                        "port": None,
                        "detail": f"no RDMA port for rail {name} (the rail of "
                        f"{', '.join(sorted(members, key=natural_key))})",
                    }
                )
                continue
            rate = rail.get("rate")
            if not rail.get("device") or not rate or gbps is None:
                continue
            slow = rate["gbps"] < gbps
            lanes, want_lanes = _width_lanes(rate["width"]), _width_lanes(width)
            narrow = bool(lanes and want_lanes and lanes < want_lanes)
            label = f"{rate['gbps']:g} Gb/s ({rate['width']} {rate['speed']})"
            want = f"{gbps:g} Gb/s ({width} {speed})"
            source = (
                "rdma_verify_expected_rate_gbps"
                if expected_rate_gbps
                else f"{count} of {len(rates)} ports of rail {name}"
            )
            checks.append(
                {
                    "check": "rail rate",
                    "host": host,
                    "device": rail["device"],
                    "port": rail["port"],
                    "ok": not slow and not narrow,
                    "detail": f"{label}, expected {want} ({source})"
                    + ("; trained at a lower width" if narrow else ""),
                }
            )
    return {"checks": checks, "rails": rails, "same_machine": list(dict.fromkeys(same))}
