"""A synthetic rdma_verify run on the controller, no traffic: the fabric step, the plan,
judging an outcome per side (every test passes, rates and counters differing per test as
real ones do), isolation, the results document written by the report step's own writer
(verify_step.write_results: results.json, or results.json.gz above RESULTS_GZIP_TESTS
tests) and report.html / junit.xml rendered. tests/bench/bench_verify.py prints its
figures; tests/unit/test_verify_cost.py bounds them.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import time

from ansible_collections.rdma.fabric.plugins.action.verify_step import (
    results_file,
    write_results,
)
from ansible_collections.rdma.fabric.plugins.module_utils import (
    rdma_verify,
    verify_html,
    verify_text,
)
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan

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
STEPS = ("fabric", "plan", "judge", "isolation", "report", "write", "html", "junit")


def healths(count, rails):
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


class _Counter:
    """A file that only counts what is written to it (json.dump writes str chunks; its
    output is ASCII)."""

    def __init__(self):
        self.bytes = 0

    def write(self, text):
        self.bytes += len(text)


def _timed(steps, fn, *args, **kwargs):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    steps.append((time.perf_counter() - start, time.process_time() - cpu))
    return out


def run(count, rails=8, mode="full", plain_bytes=True, gzip_bytes=False):
    """One run's controller work: {tests, steps: [(wall, cpu)] per STEPS, file, file_bytes,
    plain_bytes (the document as plain JSON), gzip_bytes (compressed as results.json.gz
    is, for a run small enough to be written plain), html_bytes, junit_bytes; None:
    not asked}."""
    health = healths(count, rails)
    hosts = list(health)
    steps = []
    fabric = _timed(steps, vfabric.fabric, health)
    pairs = vplan.all_pairs(hosts, mode, 2)
    tests = _timed(steps, vplan.plan, "main", pairs, health, OPTIONS, fabric["rails"])
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
    count_tests = len(tests)
    del tests, outcomes  # the judge step keeps neither once the records are written
    isolate = _timed(steps, viso.isolation, records, health, OPTIONS)
    fabric["hosts"] = hosts
    doc = _timed(
        steps, rdma_verify.report, health, records, dict(isolate, verdicts={}), {}, "now", fabric
    )
    doc["results_file"] = results_file(count_tests)
    with tempfile.TemporaryDirectory() as run_dir:
        path = _timed(steps, write_results, run_dir, doc)
        file_bytes = os.path.getsize(path)
    plain = None
    if plain_bytes:
        counter = _Counter()
        json.dump(doc, counter)
        plain = counter.bytes
    packed = None
    if gzip_bytes:
        packed = len(gzip.compress(json.dumps(doc).encode(), 1))
    html = len(_timed(steps, verify_html.render, doc))
    junit = len(_timed(steps, verify_text.junit, doc))
    return {
        "tests": count_tests,
        "steps": steps,
        "file": doc["results_file"],
        "file_bytes": file_bytes,
        "plain_bytes": plain,
        "gzip_bytes": packed,
        "html_bytes": html,
        "junit_bytes": junit,
    }
