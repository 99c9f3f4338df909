#!/usr/bin/env python3
"""Benchmark (not a timed test): the rdma_verify schedule and its orchestration overhead.

Each figure is wall time and this process's CPU time (time.process_time): on a shared
machine the wall time follows the load, the CPU time is the work.

1. pair_rounds for 4,096 hosts: the full schedule (4,095 rounds, 8,386,560 pairs) and
   the quick one, the filter's Python.
2. The controller's work of a whole verify run, no traffic (what the verify_step action
   does; tests/support/verify_synthetic.py): 32, 128 and 256 hosts x 8 rails full mode,
   4,096 x 8 quick: the fabric step, planning every test, judging every outcome,
   isolation, the report document, the results file and report.html, report.md and
   junit.xml written by the report step's writers; each in a child process, whose peak
   RSS is the run's. Then 1,024 x 8 full extrapolated from the 128 and 256 runs.
   One host's share of a 128 x 8 full run, per side for 1,024 x 8 full: its plan file,
   its outcomes as they were in hostvars and as the file the judge reads now.
   The role adds a fixed number of Ansible tasks per phase (plan, run, wait, judge),
   not per round.
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
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "collections"))
sys.path.insert(0, str(REPO / "tests" / "support"))

import verify_synthetic  # noqa: E402
from ansible_collections.rdma.fabric.plugins.action.verify_step import (  # noqa: E402
    junit_file,
    results_file,
)
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (  # noqa: E402
    pair_rounds,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_outcomes import (  # noqa: E402
    HostOutcomes,
    write_outcomes,
)
from ansible_collections.rdma.fabric.plugins.modules import perftest_run  # noqa: E402
from verify_synthetic import OPTIONS, healths  # noqa: E402


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


def _peak_rss() -> int:
    """This process's peak RSS in bytes: VmHWM, its own memory's high-water mark.
    (getrusage's ru_maxrss survives exec: a child started by a parent that has grown,
    as this bench's has after the 4,096-host schedule, reports the parent's size.)"""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _one_run(count: int, rails: int, mode: str) -> None:
    """(In a child process, --one) one synthetic run's figures and this process's peak RSS,
    as a JSON line."""
    figures = verify_synthetic.run(count, rails, mode)
    figures["peak_rss"] = _peak_rss()
    print(json.dumps(figures))


def bench_run(count: int, rails: int, mode: str) -> dict:
    """One verify run's controller work without traffic (every test passes): plan, judge,
    isolation, report, results file, report.html, report.md and junit.xml written by the
    report step's writers, each timed, in a child process: its peak RSS is the run's."""
    proc = subprocess.run(
        [sys.executable, __file__, "--one", str(count), str(rails), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    f = json.loads(proc.stdout.splitlines()[-1])
    tests = max(f["tests"], 1)
    times = ", ".join(
        f"{n} {cpu:.2f}" for n, (_w, cpu) in zip(verify_synthetic.STEPS, f["steps"], strict=True)
    )
    written = f"{f['file']} {f['file_bytes'] / 1e6:.1f} MB ({f['file_bytes'] / tests:.0f} B a test)"
    if f["file"].endswith(".gz"):
        written += f", {f['plain_bytes'] / 1e6:.0f} MB as plain JSON"
    junit = f"{f['junit_file']} {f['junit_file_bytes'] / 1e6:.1f} MB"
    if f["junit_file"].endswith(".gz"):
        junit += f" ({f['junit_bytes'] / 1e6:.0f} MB plain)"
    print(
        f"{mode} mode, {count} hosts x {rails} rails: {f['tests']} tests; CPU s: {times}; "
        f"{written}; report.html {f['html_bytes'] / 1e6:.1f} MB, {junit}; peak RSS "
        f"{f['peak_rss'] / 1e6:.0f} MB ({f['peak_rss'] / tests / 1e3:.2f} kB a test)"
    )
    return f


def full_tests(count: int, rails: int) -> int:
    return count * (count - 1) // 2 * rails


def extrapolate(small: dict, large: dict, count: int = 1024, rails: int = 8) -> None:
    """A full run of count x rails from two measured full runs: memory and bytes grow
    linearly with the tests (the slope between the two runs; the results file's bytes
    per test of the larger one)."""
    tests = full_tests(count, rails)
    slope = (large["peak_rss"] - small["peak_rss"]) / (large["tests"] - small["tests"])
    rss = large["peak_rss"] + slope * (tests - large["tests"])
    per_test = large["file_bytes"] / large["tests"]
    plain = large["plain_bytes"] / large["tests"]
    junit = large["junit_bytes"] / large["tests"]
    junit_packed = large["junit_file_bytes"] / large["tests"]
    print(
        f"{count} x {rails} full ({tests:,} tests), extrapolated from "
        f"{small['tests']:,} and {large['tests']:,} tests: {results_file(tests)} "
        f"{per_test * tests / 1e6:.0f} MB ({plain * tests / 1e9:.1f} GB as plain JSON), "
        f"{junit_file(tests)} {junit_packed * tests / 1e6:.0f} MB ({junit * tests / 1e9:.1f} GB "
        "plain), "
        f"peak RSS {rss / 1e9:.1f} GB ({slope:.0f} B a test)"
    )


def _held(make):
    """(what make() returns, Python's allocations that stay for it)."""
    tracemalloc.start()
    try:
        kept = make()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return kept, held


def _reading(path, outcomes):
    """One host's outcomes file as the judge holds it between two of its sides."""
    reader = HostOutcomes(path)
    for outcome in outcomes[:3]:
        reader.get(outcome["id"])
    return reader


def bench_hostvars(count: int = 128, rails: int = 8) -> None:
    """One host's share of a full run of count x rails: its plan goes to a controller file
    (bytes on disk, read by the run task); its schedule's outcomes were its registered
    result, kept in hostvars, and are now a file fetched to the run directory, the
    result a summary. Bytes as JSON, and Python's allocations holding them parsed (as
    hostvars hold a registered result); then what the judge holds of a host's file while
    it reads it. Per side, so 1,024 x 8 full's 8,184 sides a host is count x 8's times
    8,184 / its sides."""
    health = healths(count, rails)
    hosts = list(health)
    fabric = vfabric.fabric(health)
    me = hosts[count // 2]
    start = time.process_time()
    tests = vplan.plan(
        "main", vplan.host_pairs(hosts, me, "full", 2), health, OPTIONS, fabric["rails"]
    )
    sides = vplan.host_sides(me, tests)
    cpu = time.process_time() - start
    # Rates, iterations and counters differing per side, as real ones do.
    made = verify_synthetic.Outcomes()
    outcomes = [perftest_run._compact(dict(made[s["id"]], id=s["id"], rc=0)) for s in sides]
    before = json.dumps({"changed": False, "tests": outcomes, "listening": []})
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{me}.jsonl.gz")
        summary = write_outcomes(path, outcomes)
        after = json.dumps({"changed": False, "tests": [], "outcomes": summary, "listening": []})
        _reader, reading = _held(lambda: _reading(path, outcomes))
    _parsed, before_held = _held(lambda: json.loads(before))
    _parsed, after_held = _held(lambda: json.loads(after))
    scale = 1023 * rails / len(sides)  # to 1,024 x 8 full's sides a host
    print(
        f"one host of {count} x {rails} full: {len(sides)} sides, plan {cpu:.2f} s CPU, "
        f"plan file {len(json.dumps(sides)) / 1e6:.2f} MB (not in hostvars); its outcomes "
        f"in hostvars before: {len(before) / 1e6:.2f} MB as JSON, {before_held / 1e6:.2f} MB "
        f"held ({before_held / len(sides):.0f} B a side; x {scale:.2f} at 1,024 x 8 full: "
        f"{before_held * scale / 1e6:.1f} MB a host); now the summary {len(after)} B as JSON, "
        f"{after_held} B held, the file {summary['bytes'] / 1e3:.0f} kB fetched "
        f"({summary['bytes'] / len(sides):.0f} B a side; {summary['bytes'] * scale / 1e3:.0f} kB "
        f"at 1,024 x 8 full), the judge holds {reading / 1e3:.0f} kB a host while reading it"
    )


def bench_controller(count: int = 32, rails: int = 8, big: int = 4096) -> None:
    """The controller's work at 32 x 8, 128 x 8 and 256 x 8 full, and 4,096 x 8 quick (a
    rack, a large fabric's full run, a very large one's quick run): per step CPU seconds,
    the bytes of the report and the peak RSS; then 1,024 x 8 full extrapolated."""
    runs = {}
    for hosts, mode in ((count, "full"), (128, "full"), (256, "full"), (big, "quick")):
        runs[hosts, mode] = bench_run(hosts, rails, mode)
    extrapolate(runs[128, "full"], runs[256, "full"])


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
    parser.add_argument(
        "--one", nargs=3, metavar=("HOSTS", "RAILS", "MODE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        _one_run(int(args.one[0]), int(args.one[1]), args.one[2])
        return 0
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
