#!/usr/bin/env python3
"""Benchmark (not a timed test): rdma_verify's cabling judgement at rack scale.

tests/support/cabling_fabric.py's synthetic RoCE fabric: HOSTS hosts x 8 rails, 64
leaves (8 per rail), every leaf's own LLDP table and every host's lldpd reading; what
roles/rdma_verify/tasks/cabling.yml hands the judge, minus Ansible's templating.
"whole": each host judged against the leaves' whole tables (the role before 0.4.0);
"indexed": the tables indexed by host once (cabling_index, the role's run_once task),
each host judged on its own entries.

Figures are this process's CPU time (time.process_time) of the Python the judge task
runs: the leaves' index once (run_once) plus every host's judgement, which is what grows
with the rack. Ansible's own per-host templating of the arguments comes on top.

    python tests/bench/bench_cabling.py [--hosts 1000 4096]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "collections"))
sys.path.insert(0, str(REPO / "tests" / "support"))

from ansible_collections.rdma.fabric.plugins.module_utils import cabling  # noqa: E402
from cabling_fabric import RAILS, fabric  # noqa: E402


def judge_all(plan, reads, per_host, indexed):
    """Every host's judgement, as the role's tasks make them; indexed: the leaves' tables
    indexed once (the run_once task), else each host given the whole tables."""
    index = cabling.cabling_index(reads, plan) if indexed else None
    out = {}
    for host, (health, lldp) in per_host.items():
        if indexed:
            out[host] = cabling.judge_into_health(health, plan, host, lldp, index=index)
        else:
            out[host] = cabling.judge_into_health(health, plan, host, lldp, switch_reads=reads)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[1000, 4096])
    parser.add_argument("--only", choices=("indexed", "whole"), help="one way only")
    args = parser.parse_args()
    ways = (
        [args.only]
        if args.only
        else (["whole", "indexed"] if hasattr(cabling, "cabling_index") else ["whole"])
    )
    for hosts in args.hosts:
        plan, reads, per_host = fabric(hosts)
        entries = sum(len(v) for ports in reads.values() for v in ports.values())
        results = {}
        for way in ways:
            cpu, wall = time.process_time(), time.perf_counter()
            results[way] = judge_all(plan, reads, per_host, way == "indexed")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            bad = sum(1 for h in results[way].values() for c in h["checks"] if not c["ok"])
            print(
                f"{hosts} hosts x {RAILS} rails, {len(reads)} leaves, {entries} switch entries, "
                f"{way}: {cpu:.2f} s CPU ({wall:.2f} s wall), {bad} failed checks"
            )
        if len(results) == 2:
            assert results["whole"] == results["indexed"], "the two ways disagree"
            print("  both ways judge every host the same")


if __name__ == "__main__":
    main()
