"""A synthetic rdma_verify run on the controller, no traffic: the fabric step, the plan,
judging an outcome per side (every test passes, rates and counters differing per test as
real ones do), isolation, the results document written by the report step's own writer
(verify_step.write_results: results.json, or results.json.gz above RESULTS_GZIP_TESTS
tests) and report.html / junit.xml rendered. tests/bench/bench_verify.py prints its
figures; tests/unit/test_verify_cost.py bounds them.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import time
import zlib
from collections.abc import Mapping

from ansible_collections.rdma.fabric.plugins.action.verify_step import (
    junit_file,
    results_file,
    write_reports,
    write_results,
)
from ansible_collections.rdma.fabric.plugins.module_utils import (
    rdma_verify,
    verify_text,
)
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils.verify_record import Record, as_json

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
STEPS = ("fabric", "plan", "judge", "isolation", "report", "write", "reports")


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


class Outcomes(Mapping):
    """Every side's perftest_run outcome, made when the judge asks for it (in a run they
    are the hosts' registered results, in Ansible's hostvars: see bench_hostvars): every
    test passes, rates and counters differing per test as real ones do."""

    def __getitem__(self, side_id):
        n = zlib.crc32(side_id.rsplit("/", 1)[0].encode())
        gbps = round(380 + (n % 1000) / 97, 2)
        row = {"bytes": 65536, "iterations": 35000 + n % 977, "bw_average_gbps": gbps}
        return {
            "error": None,
            "result": {"ok": True, "rows": [row]},
            "deltas": {"rx_prio3_pause": n % 100_000},  # no limit: PFC at work
        }

    def __iter__(self):
        raise TypeError("the judge looks outcomes up by id")

    def __len__(self):
        raise TypeError("the judge looks outcomes up by id")


class _Counter(io.RawIOBase):
    """A binary file that only counts the bytes written to it."""

    def __init__(self):
        super().__init__()
        self.bytes = 0

    def writable(self):
        return True

    def write(self, data):
        self.bytes += len(data)
        return len(data)


def _json_bytes(doc, compress):
    """The document's bytes as JSON, written as the report step writes it (streamed:
    never the whole text in memory), gzip-compressed or not."""
    counter = _Counter()
    raw = gzip.GzipFile(fileobj=counter, mode="wb", compresslevel=1) if compress else counter
    handle = io.TextIOWrapper(raw, encoding="utf-8")
    json.dump(doc, handle, default=as_json)
    handle.close()  # and gzip's trailer; the counter keeps its count
    return counter.bytes


def _timed(steps, fn, *args, **kwargs):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    steps.append((time.perf_counter() - start, time.process_time() - cpu))
    return out


def _count(tests):
    return sum(1 for _test in tests)


def run(count, rails=8, mode="full", plain_bytes=True, gzip_bytes=False):
    """One run's controller work: {tests, steps: [(wall, cpu)] per STEPS, file, file_bytes,
    plain_bytes (the document as plain JSON), gzip_bytes (compressed as results.json.gz
    is, for a run small enough to be written plain), html_bytes, junit_file,
    junit_file_bytes, junit_bytes (junit.xml plain); None: not asked}."""
    health = healths(count, rails)
    hosts = list(health)
    steps = []
    fabric = _timed(steps, vfabric.fabric, health)
    pairs = vplan.all_pairs(hosts, mode, 2)
    # Planning every test (each host plans its own share in its plan step).
    planned = vplan.iter_plan("main", pairs, health, OPTIONS, fabric["rails"])
    count_tests = _timed(steps, _count, planned)
    # The judge step reads the plan once, test by test, as verify_step's does.
    tests = vplan.iter_plan("main", pairs, health, OPTIONS, fabric["rails"])
    records = _timed(steps, vjudge.judge, tests, Outcomes(), 5, pack=Record)
    isolate = _timed(steps, viso.isolation, records, health, OPTIONS)
    fabric["hosts"] = hosts
    doc = _timed(
        steps,
        rdma_verify.report,
        health,
        records,
        dict(isolate, verdicts={}),
        {"mode": mode},
        "now",
        fabric,
    )
    doc["results_file"] = results_file(count_tests)
    with tempfile.TemporaryDirectory() as run_dir:
        path = _timed(steps, write_results, run_dir, doc)
        file_bytes = os.path.getsize(path)
        _timed(steps, write_reports, run_dir, doc)
        html = os.path.getsize(os.path.join(run_dir, "report.html"))
        junit_name = junit_file(len(doc["pairs"]))
        junit_file_bytes = os.path.getsize(os.path.join(run_dir, junit_name))
    return {
        "tests": count_tests,
        "steps": steps,
        "file": doc["results_file"],
        "file_bytes": file_bytes,
        "plain_bytes": _json_bytes(doc, False) if plain_bytes else None,
        "gzip_bytes": _json_bytes(doc, True) if gzip_bytes else None,
        "html_bytes": html,
        "junit_file": junit_name,
        "junit_file_bytes": junit_file_bytes,
        "junit_bytes": sum(len(line) for line in verify_text.junit_lines(doc)),
    }
