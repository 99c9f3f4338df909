"""A judged test kept compact on the controller (module_utils/verify_record.py): a
1,024 hosts x 8 rails full run holds 4.2 million of them from the judge step to the
report's last file. A Record reads and writes as its dict (every report file byte for
byte the same as with dict records) in a fraction of the dict's memory; the report step
streams junit.xml, compressed above RESULTS_GZIP_TESTS tests as results.json is."""

from __future__ import annotations

import gzip
import json
import tracemalloc

import pytest
from ansible_collections.rdma.fabric.plugins.action import verify_step
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_html, verify_text
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils.verify_record import Record, as_json
from test_verify_tests import LAB, bad, fabric_of, ok


def _lab3_sends_badly_on_mlx5_1(test):
    return test["client"] == "lab3" and test["rail"] == "mlx5_1"


SCENARIOS = {
    # {phase: which tests fail}, hosts lost during traffic
    "clean": ({}, ()),
    # failed, failed again on retest, isolated against known-good peers
    "bad sender": (dict.fromkeys(("main", "retest", "isolate"), _lab3_sends_badly_on_mlx5_1), ()),
    # lab2 fails every main test once, passes its retests
    "flaky": ({"main": lambda t: "lab2" in (t["server"], t["client"])}, ()),
    # lab5 lost during traffic (none of its sides came back), lab3 bad as above
    "lost host": (
        dict.fromkeys(("main", "retest", "isolate"), _lab3_sends_badly_on_mlx5_1),
        ("lab5",),
    ),
}


def _phase(phase, pairs, health, expect, fails, lost, pack):
    tests = vplan.plan(phase, pairs, health, LAB, expect)
    outcomes = [
        o
        for t in tests
        for o in (bad(t) if fails(t) else ok(t))
        if o["id"].split("/")[2 if o["id"].endswith("/server") else 3] not in lost
    ]
    # Compact: the plan read once, as the judge step reads the main schedule.
    return vjudge.judge(iter(tests) if pack else tests, outcomes, 3, LAB, pack=pack)


def _doc(scenario, pack):
    faults, lost = SCENARIOS[scenario]
    names, health = fabric_of(8, rails=2)
    expect = vfabric.fabric(health)["rails"]

    def run(phase, pairs):
        fails = faults.get(phase, lambda t: False)
        return _phase(phase, pairs, health, expect, fails, lost, pack)

    main = run("main", vplan.all_pairs(names))
    retest = run("retest", vjudge.retest_pairs(main, health))
    vjudge.merge_retests(main, retest)
    isolate = viso.isolation(main, health, LAB)
    iso = run("isolate", isolate["pairs"])
    records = main + retest + iso
    verdicts = viso.verdicts(isolate, records, health, LAB)
    doc = rv.report(health, records, dict(isolate, verdicts=verdicts), {"mode": "full"}, "now")
    doc["results_file"] = "results.json"
    return doc


def _files(doc, folder):
    verify_step.write_results(str(folder), doc)
    verify_step.write_reports(str(folder), doc)
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_compact_records_write_every_report_file_byte_for_byte(tmp_path, scenario):
    plain, compact = _doc(scenario, None), _doc(scenario, Record)
    assert all(type(p) is dict for p in plain["pairs"])
    assert all(type(p) is Record for p in compact["pairs"])
    want, got = _files(plain, tmp_path / "plain"), _files(compact, tmp_path / "compact")
    assert set(got) == {"results.json", "report.html", "report.md", "junit.xml"}
    assert got == want
    # The writers stream what render / markdown / junit return whole.
    assert got["report.html"].decode() == verify_html.render(plain)
    assert got["report.md"].decode() == verify_text.markdown(plain)
    assert got["junit.xml"].decode() == verify_text.junit(plain)
    assert json.dumps(verify_text.brief(compact)) == json.dumps(verify_text.brief(plain))
    outcomes = {p["outcome"] for p in compact["pairs"]}
    expect = {
        "clean": {"passed"},
        "bad sender": {"passed", "failed", "failed again"},
        "flaky": {"passed", "flaky", "passed on retest"},
        "lost host": {"passed", "failed", "failed again", "peer lost"},
    }[scenario]
    assert outcomes == expect


def _judged():
    """A record as the judge makes it, and its dict."""
    names, health = fabric_of(4, rails=2)
    expect = vfabric.fabric(health)["rails"]
    return _phase("main", vplan.all_pairs(names), health, expect, lambda t: False, (), None)


def test_a_record_reads_and_writes_as_its_dict():
    record = _judged()[0]
    packed = Record(record)
    assert packed == record and record == packed and dict(packed) == record
    assert list(packed) == list(record) and len(packed) == len(record)
    assert json.dumps(packed, default=as_json) == json.dumps(record)
    assert packed["rows"] == record["rows"] and packed["deltas"] == record["deltas"]
    assert packed["id"] == record["id"] and "id" in packed and "nope" not in packed
    assert packed.get("nope", 7) == 7
    packed["outcome"] = "flaky"  # an existing key keeps its place
    packed["retest_id"] = "retest/0/lab1/lab2/mlx5_0"  # a new one comes last
    record.update(outcome="flaky", retest_id="retest/0/lab1/lab2/mlx5_0")
    assert list(packed.items()) == list(record.items())
    del packed["retest_id"]
    assert "retest_id" not in packed and packed["outcome"] == "flaky"
    # An id that is not the plan's is kept as it is.
    other = Record(dict(record, id="custom"))
    assert other["id"] == "custom"


def _bytes_each(make, items):
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [make(item) for item in items]
        used = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == len(items)
    return used / len(items)


def test_a_record_takes_under_a_third_of_its_dict():
    records = _judged() * 50
    texts = [json.dumps(r) for r in records]
    # Each made from its own JSON, as the report step reads a phase file back.
    as_dict = _bytes_each(json.loads, texts)
    as_record = _bytes_each(lambda text: Record(json.loads(text)), texts)
    assert as_record < as_dict / 3, (as_record, as_dict)


def test_phase_files_hold_one_record_a_line_read_back_compact(tmp_path):
    records = [Record(r) for r in _judged()]
    verify_step._write_records(str(tmp_path), "main", records)
    lines = (tmp_path / "main.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [dict(r) for r in records]
    back = verify_step._read_records(str(tmp_path), "main")
    assert back == records and all(type(r) is Record for r in back)
    assert verify_step._read_records(str(tmp_path), "retest") == []


def test_junit_is_compressed_above_the_results_threshold(tmp_path, monkeypatch):
    doc = _doc("bad sender", Record)
    tests = len(doc["pairs"])
    assert verify_step.junit_file(tests) == "junit.xml"
    monkeypatch.setattr(verify_step, "RESULTS_GZIP_TESTS", tests - 1)
    assert verify_step.junit_file(tests) == "junit.xml.gz"
    verify_step.write_reports(str(tmp_path), doc)
    assert not (tmp_path / "junit.xml").exists()
    with gzip.open(tmp_path / "junit.xml.gz", "rt", encoding="utf-8") as handle:
        assert handle.read() == verify_text.junit(doc)
    # report.md says so where it names results.json.gz.
    doc["results_file"] = "results.json.gz"
    assert (
        "and in junit.xml.gz (gzip-compressed too: CI tools read junit.xml, "
        "`zcat junit.xml.gz > junit.xml` first)" in verify_text.markdown(doc)
    )


@pytest.mark.parametrize("phase", ["main", "latency", "retest", "isolate"])
def test_the_judge_step_reads_the_schedule_one_test_at_a_time(phase):
    """At 1,024 x 8 full the main and latency phases are 4.2 million tests each with both
    sides' command lines (2.1 kB a test as a list); the retest and isolate phases, a few,
    are planned whole and their ids checked."""
    names, health = fabric_of(4, rails=2)
    pairs = [{"round": 0, "server": "lab1", "client": "lab2", "rail": "mlx5_0"}]
    args = {
        "phase": phase,
        "mode": "full",
        "rounds": 2,
        "pairs": pairs,
        "options": LAB,
        "rails": vfabric.fabric(health)["rails"],
    }
    action = verify_step.ActionModule.__new__(verify_step.ActionModule)
    tests = action._plan(args, names, health, lazy=True)
    assert isinstance(tests, list) == (phase in ("retest", "isolate"))
    assert [t["id"] for t in tests] == [t["id"] for t in action._plan(args, names, health)]
