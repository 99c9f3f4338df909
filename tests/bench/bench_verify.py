#!/usr/bin/env python3
"""Benchmark (not a timed test): the rdma_verify schedule and its orchestration overhead.

1. pair_rounds for 4,096 hosts: the full schedule (4,095 rounds, 8,386,560 pairs) and
   the quick one, wall time of the filter's Python.
2. Orchestration overhead in the Soft-RoCE lab: verify wall time / (rounds x per-test
   duration), from the PLAYBOOK RECAP of a playbooks/verify.yml run and the report it
   wrote. Give --run to run playbooks/verify.yml against the lab (it must be up, with
   Soft-RoCE links: make lab-up and one site.yml run); without it the latest report's
   numbers are used with --wall SECONDS.

    python tests/bench/bench_verify.py [--hosts 4096] [--run | --wall SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (  # noqa: E402
    pair_rounds,
)


def bench_schedule(count: int) -> None:
    hosts = [f"node{i:05d}" for i in range(count)]
    for mode in ("full", "quick"):
        start = time.perf_counter()
        rounds = pair_rounds(hosts, mode=mode)
        elapsed = time.perf_counter() - start
        pairs = sum(len(r) for r in rounds)
        print(
            f"pair_rounds({count} hosts, mode={mode}): {len(rounds)} rounds, {pairs} pairs, "
            f"{elapsed:.2f} s"
        )


def bench_lab(run: bool, wall: float | None) -> None:
    if run:
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"))
        start = time.monotonic()
        proc = subprocess.run(
            ["ansible-playbook", "playbooks/verify.yml"],
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
    bench_schedule(args.hosts)
    bench_lab(args.run, args.wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
