#!/usr/bin/env python3
"""Benchmark (not a timed test): the rdma_verify schedule and its orchestration overhead.

Each figure is wall time and this process's CPU time (time.process_time): on a shared
machine the wall time follows the load, the CPU time is the work.

1. pair_rounds for 4,096 hosts: the full schedule (4,095 rounds, 8,386,560 pairs) and
   the quick one, the filter's Python.
2. The controller's work of a whole verify run, no traffic (what the verify_step action
   does): 32 hosts x 8 rails, full mode (31 rounds, 3,968 tests): the fabric step, each
   host's own plan, judging every outcome, the retest and isolation plans and the
   report document. Then the quick-mode plan of 4,096 hosts x 8 rails. The role adds a
   fixed number of Ansible tasks per phase (plan, run, wait, judge), not per round.
3. Orchestration overhead in the Soft-RoCE lab: verify wall time / (rounds x per-test
   duration), from the PLAYBOOK RECAP of a playbooks/verify.yml run and the report it
   wrote. Give --run to run playbooks/verify.yml against the lab (it must be up, with
   Soft-RoCE links: make lab-up and one site.yml run); without it the latest report's
   numbers are used with --wall SECONDS.

    python tests/bench/bench_verify.py [--hosts 4096] [--run | --wall SECONDS]
    (make bench; make bench BENCH_ARGS=--run with the lab up)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.rdma.fabric.plugins.action.verify_step import (  # noqa: E402
    results_file,
)
from ansible_collections.rdma.fabric.plugins.module_utils import (  # noqa: E402
    rdma_verify,
    verify_html,
)
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (  # noqa: E402
    pair_rounds,
)
from ansible_collections.rdma.fabric.plugins.modules import perftest_run  # noqa: E402


def bench_schedule(count: int) -> None:
    hosts = [f"node{i:05d}" for i in range(count)]
    for mode in ("full", "quick"):
        start, cpu = time.perf_counter(), time.process_time()
        rounds = pair_rounds(hosts, mode=mode)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        pairs = sum(len(r) for r in rounds)
        print(
            f"pair_rounds({count} hosts, mode={mode}): {len(rounds)} rounds, {pairs} pairs, "
            f"{elapsed:.2f} s ({cpu:.2f} s CPU)"
        )
        del rounds  # freeing 8 million pairs is not the next schedule's time


def _healths(count, rails):
    def rail(k, n):
        return {
            "rail": f"mlx5_{k}",
            "device": f"mlx5_{k}",
            "port": 1,
            "rate": {"gbps": 400.0, "width": "4X", "speed": "NDR", "usable_gbps": 400.0},
            "gid_index": 3,
            "address": f"10.{k}.{n // 250}.{n % 250 + 1}",
            "missing": None,
        }

    return {
        f"node{n:05d}": {
            "checks": [],
            "perftest_version": "6.06",
            "boot_id": str(n),
            "rails": [rail(k, n) for k in range(rails)],
        }
        for n in range(count)
    }


OPTIONS = {
    "kind": "bw",
    "binary": "ib_write_bw",
    "args": ["-s", 65536, "-D", 5],
    "duration": 5,
    "timeout": 35,
    "base_port": 18515,
    "port_span": 1000,
    "listen_timeout": 30,
    "min_fraction": 0.9,
}


def _timed(step, fn, *args, **kwargs):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    step.append((time.perf_counter() - start, time.process_time() - cpu))
    return out


def bench_run(count: int, rails: int, mode: str) -> None:
    """One verify run's controller work without traffic (every test passes): plan, judge,
    isolation, report (results.json bytes) and report.html (bytes), each timed."""
    health = _healths(count, rails)
    hosts = list(health)
    steps = []
    fabric = _timed(steps, vfabric.fabric, health)
    pairs = vplan.all_pairs(hosts, mode, 2)
    tests = _timed(steps, vplan.plan, "main", pairs, health, OPTIONS, fabric["rails"])
    # Measured rates and counters that differ per test, as real ones do (the same
    # number everywhere would compress far better than any real report).
    outcomes = {}
    for n, t in enumerate(tests):
        gbps = round(380 + (n * 7919 % 1000) / 97, 2)
        row = {"bytes": 65536, "iterations": 35000 + n % 977, "bw_average_gbps": gbps}
        for side in ("server", "client"):
            outcomes[f"{t['id']}/{side}"] = {
                "error": None,
                "result": {"ok": True, "rows": [row]},
                "deltas": {"rx_prio3_pause": n * 7919 % 100_000},  # no limit: PFC at work
            }
    records = _timed(steps, vjudge.judge, tests, outcomes, 5)
    isolate = _timed(steps, viso.isolation, records, health, OPTIONS)
    fabric["hosts"] = hosts
    doc = _timed(
        steps, rdma_verify.report, health, records, dict(isolate, verdicts={}), {}, "now", fabric
    )
    text = _timed(steps, json.dumps, doc)
    size = len(text)
    written = results_file(len(tests))
    if written.endswith(".gz"):
        size = len(_timed(steps, gzip.compress, text.encode(), 1))
    else:
        steps.append((0.0, 0.0))
    del text
    html = len(_timed(steps, verify_html.render, doc))
    names = ("fabric", "plan", "judge", "isolation", "report", "json", "gzip", "html")
    times = ", ".join(f"{n} {cpu:.2f}" for n, (_w, cpu) in zip(names, steps, strict=True))
    print(
        f"{mode} mode, {count} hosts x {rails} rails: {len(tests)} tests; CPU s: {times}; "
        f"{written} {size / 1e6:.1f} MB ({size / max(len(tests), 1):.0f} B a test), "
        f"report.html {html / 1e6:.1f} MB"
    )


def bench_hostvars(count: int = 1024, rails: int = 8) -> None:
    """What one host keeps in hostvars in a full run of count x rails: its plan goes to a
    controller file (bytes on disk, read by the run task), its outcomes are registered."""
    health = _healths(count, rails)
    hosts = list(health)
    fabric = vfabric.fabric(health)
    me = hosts[count // 2]
    start = time.process_time()
    tests = vplan.plan(
        "main", vplan.host_pairs(hosts, me, "full", 2), health, OPTIONS, fabric["rails"]
    )
    sides = vplan.host_sides(me, tests)
    cpu = time.process_time() - start
    row = {"bytes": 65536, "iterations": 1000, "bw_peak_gbps": 0.0, "bw_average_gbps": 390.0}
    deltas = {"rx_prio3_pause": 12345, "tx_prio3_pause": 23456}
    outcomes = [
        perftest_run._compact(
            {"id": s["id"], "rc": 0, "result": {"ok": True, "rows": [row]}, "deltas": deltas}
        )
        for s in sides
    ]
    print(
        f"one host of {count} x {rails} full: {len(sides)} sides, plan {cpu:.2f} s CPU, "
        f"plan file {len(json.dumps(sides)) / 1e6:.1f} MB (not in hostvars), outcomes in "
        f"hostvars {len(json.dumps(outcomes)) / 1e6:.1f} MB"
    )


def bench_controller(count: int = 32, rails: int = 8, big: int = 4096) -> None:
    """The controller's work at 32 x 8 and 256 x 8 full, and 4,096 x 8 quick (a rack, a
    large fabric's full run, a very large one's quick run): per step CPU seconds and the
    bytes of the report."""
    for hosts, mode in ((count, "full"), (256, "full"), (big, "quick")):
        bench_run(hosts, rails, mode)


def bench_lab(run: bool, wall: float | None) -> None:
    if run:
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
        start = time.monotonic()
        proc = subprocess.run(
            ["ansible-playbook", "rdma.fabric.verify"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.monotonic() - start
        if proc.returncode != 0:
            print(proc.stdout[-3000:])
            raise SystemExit(f"verify.yml failed (rc {proc.returncode})")
        match = re.search(r"Playbook run took .*? (\d+) minutes, (\d+) seconds", proc.stdout)
        if match:
            print(f"ansible's own recap: {int(match[1]) * 60 + int(match[2])} s")
    if wall is None:
        print("orchestration overhead: give --run (lab up) or --wall SECONDS")
        return
    report = json.loads((REPO / "reports" / "latest" / "results.json").read_text())
    rounds = len({(p["phase"], p["round"]) for p in report["pairs"]})
    duration = report["options"]["bandwidth"]["duration"]
    ideal = rounds * duration
    print(
        f"verify wall time {wall:.0f} s for {rounds} rounds x {duration} s = {ideal} s of "
        f"traffic: orchestration overhead {wall / ideal:.1f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=4096)
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--wall", type=float)
    args = parser.parse_args()
    # The machine may be shared: wall time grows with its load, CPU time (this process's
    # time.process_time) much less.
    print(
        f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())} on "
        f"{os.cpu_count()} CPUs; each figure: wall (CPU of this process)"
    )
    bench_schedule(args.hosts)
    bench_controller()
    bench_hostvars()
    if args.run or args.wall:
        bench_lab(args.run, args.wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
