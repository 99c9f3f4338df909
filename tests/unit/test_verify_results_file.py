"""results.json stays proportional to the tests and bounded: above RESULTS_GZIP_TESTS
tests the report step writes results.json.gz (a 1,024 x 8 full run has 4.2 million
tests: about 2.5 GB as plain JSON, about 170 MB compressed; make bench measures 256 x 8)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ansible_collections.rdma.fabric.plugins.action import verify_step


def test_the_file_is_compressed_above_the_threshold_only():
    limit = verify_step.RESULTS_GZIP_TESTS
    assert verify_step.results_file(0) == "results.json"
    assert verify_step.results_file(limit) == "results.json"
    assert verify_step.results_file(limit + 1) == "results.json.gz"
    # 256 x 8 full (261,120 tests) is compressed; 64 x 8 full (16,128) is not.
    assert verify_step.results_file(256 * 255 // 2 * 8) == "results.json.gz"
    assert verify_step.results_file(64 * 63 // 2 * 8) == "results.json"


def test_both_forms_hold_the_same_document(tmp_path):
    doc = {"summary": {"passed": True, "tests": 3}, "pairs": [{"id": "a", "gbps": 1.5}]}
    plain = dict(doc, results_file="results.json")
    verify_step.write_results(str(tmp_path), plain)
    assert json.loads((tmp_path / "results.json").read_text()) == plain
    packed = dict(doc, results_file="results.json.gz")
    verify_step.write_results(str(tmp_path), packed)
    with gzip.open(tmp_path / "results.json.gz", "rt", encoding="utf-8") as handle:
        assert json.load(handle) == packed
    assert not list(tmp_path.glob("*.tmp"))


def test_the_gzip_header_names_results_json(tmp_path):
    verify_step.write_results(str(tmp_path), {"results_file": "results.json.gz"})
    header = (tmp_path / "results.json.gz").read_bytes()[:40]
    assert b"results.json\x00" in header and b".tmp" not in header


def test_a_relative_run_dir_gives_an_absolute_plan_file(tmp_path, monkeypatch):
    """lookup('file') looks for a relative path in the role and playbook directories."""
    monkeypatch.chdir(tmp_path)
    sides = [{"id": "main/0/a/b/r0/server", "round": 0}]
    out = verify_step.ActionModule._plan_file(
        {"run_dir": "reports/20260101T000000Z", "phase": "main"}, "gpu-a01", sides
    )
    assert out["plan_file"] == str(tmp_path / "reports/20260101T000000Z/plan-main/gpu-a01.json")
    assert json.loads(Path(out["plan_file"]).read_text()) == sides and out["sides_count"] == 1
