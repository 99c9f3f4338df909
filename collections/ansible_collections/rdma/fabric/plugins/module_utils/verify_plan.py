# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's plan: which pairs meet in which round and direction, on which rail and port.

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

This module plans; the other steps are their own modules: verify_judge (outcomes ->
records, retests), verify_counters (the counters' limits), verify_isolation (suspects,
rail patterns, verdicts), verify_fabric (expected rates, firmware checks), verify_common
(what they share).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (
    MODES,
    full_round_count,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    natural_key,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    roce_tos,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_args import (
    as_args,
    extra_args_errors,
    rail_args,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_common import (
    gc_paused,
    rails_of,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_counters import (
    counter_limit_errors,
)


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


def expected_gbps(options, rail_expect):
    """The pass mark of a bandwidth test on a rail: rdma_verify_min_gbps when set, else
    min_fraction x the usable rate (rdma_verify_expected_rate_gbps, else the rate most
    ports of the rail report, after line encoding), x2 bidirectional."""
    if options.get("min_gbps"):
        return float(options["min_gbps"])
    usable = (rail_expect or {}).get("usable_gbps") or 0
    factor = 2 if options.get("bidirectional") else 1
    return round(options.get("min_fraction", 0.9) * usable * factor, 3)


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


def _port_span(options, slots):
    """rdma_verify_port_span, refused below two rounds' worth of `slots` rails."""
    span = options.get("port_span") or 1000
    if span < 2 * slots:
        # Round r's ports are base + (r * slots + rail) % span: below two rounds' worth,
        # consecutive rounds reuse ports, and a client can reach a server still in the
        # previous round.
        raise ValueError(
            f"rdma_verify_port_span is {span} but {slots} rails need at least {2 * slots} "
            "ports (two rounds' worth), or consecutive rounds share ports"
        )
    return span


def main_count(hosts, health, options, rails_expect, mode="full", rounds=2):
    """{tests, rounds} of the main schedule as plan() would make it, counted without
    planning it (the fabric step's figures; a plan of 1,024 x 8 full is 4.2 million
    tests): a pair has a test per rail either host has (one when neither has any). In
    full mode every two hosts meet once (twice when two_way), so hosts with the same
    rails are counted as a group; quick mode's few rounds are walked. Refuses a port
    span as plan() would."""
    count = len(hosts)
    if count < 2:
        return {"tests": 0, "rounds": 0}
    both = two_way(count, mode)
    total = round_count(count, mode, rounds) * (2 if both else 1)
    rails = {h: frozenset(rails_of(health.get(h))) for h in hosts}

    def per_pair(a, b):
        return max(1, len(a | b))

    if mode == "full":
        groups = Counter(rails.values())
        met = [(a, a, n * (n - 1) // 2) for a, n in groups.items() if n > 1]
        met += [(a, b, groups[a] * groups[b]) for a, b in combinations(groups, 2)]
        met = [(a, b, times * (2 if both else 1)) for a, b, times in met]
    else:
        met = [(rails[s], rails[c], 1) for _r, s, c in all_pairs(hosts, mode, rounds)]
    _port_span(options, max([len(rails_expect or {})] + [per_pair(a, b) for a, b, _n in met]))
    return {"tests": sum(per_pair(a, b) * times for a, b, times in met), "rounds": total}


def pair_tests(phase, round_, server, client, health, options, rails_expect, only=None):
    """The tests of one pair in one round: one per rail of either host (or of `only`)."""
    s_rails, c_rails = rails_of(health.get(server)), rails_of(health.get(client))
    # Port slot of a rail: its position among the fabric's rails, so that a host's
    # ports differ across rounds too (rounds x rails <= rdma_verify_port_span).
    fabric = list(rails_expect or {})
    union = set(s_rails) | set(c_rails)
    names = [n for n in fabric if n in union]
    if len(names) < len(union):
        names = sorted(union, key=natural_key)
    names = names or ["-"]
    slots = max(len(fabric), len(names))
    span = _port_span(options, slots)
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
            if rail and rail.get("device") and rail.get("active") is False:
                # Its test cannot pass; run, its partner would wait for it until the
                # round's deadline on the grid (minutes when the fabric runs ahead).
                problems.append(
                    f"{host}: {rail['device']} port is not ACTIVE/LinkUp, not run (see its "
                    "port state check)"
                )
        for host, rail in ((server, s), (client, c)):
            if rail and rail.get("cuda_error"):
                problems.append(f"{host}: {rail.get('device')}: {rail['cuda_error']}")
        if problems:
            test["error"] = "; ".join(problems)
            # Only a miscabled end: the cabling check is the finding; the test is not run
            # (not a failure, nor a suspect HCA for isolation).
            miscabled = [
                rail
                for rail in (s, c)
                if rail and rail.get("cabled_device") and not rail.get("device")
            ]
            if len(miscabled) == len(problems):
                test["not_run"] = True
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
                # Whose rail address the schedule probes when the client does not come
                # (peer_probe), from this side's own.
                "address": s["address"],
                "peer_address": c.get("address"),
            }
            test["client_test"] = {
                "id": f"{test['id']}/client",
                "round": round_,
                "side": "client",
                "port": port,
                "argv": _side_argv(options, c, port, s["address"]),
                "timeout": timeout,
                "address": c.get("address"),
                "peer_address": s["address"],
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


@gc_paused()
def plan(phase, pairs, health, options, rails_expect):
    """Every test of a phase. pairs: [(round, server, client)] or, for retest/isolate,
    [{round, server, client, rail}] (one rail each)."""
    tests = list(iter_plan(phase, pairs, health, options, rails_expect))
    if len({t["id"] for t in tests}) != len(tests):
        raise ValueError(f"{phase}: two tests with one id (a host twice in a round?)")
    return tests


def iter_plan(phase, pairs, health, options, rails_expect):
    """The tests of plan() one at a time, for a step that needs each once (the judge):
    the phase's tests and their perftest command lines are never all held at once.
    Unlike plan(), it does not check that ids are unique (the main schedule's pairs are
    by construction; plan() checks the retest and isolate phases' and each host's own)."""
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
            yield from pair_tests(
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
            yield from pair_tests(phase, *pair, health, options, rails_expect)


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
