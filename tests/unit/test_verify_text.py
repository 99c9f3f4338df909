"""report.md, junit.xml and the brief of rdma_verify's report step
(module_utils/verify_text.py). They were Jinja templates fed the whole results document
through a registered variable: gigabytes at 1,024 hosts x 8 rails full."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils import verify_text
from test_verify_tests import fabric_of, run_phase


def doc_of(count, rails, fails):
    names, health = fabric_of(count, rails=rails)
    expect = vfabric.fabric(health)["rails"]
    main = run_phase("main", vplan.all_pairs(names), health, fails, expect)
    return rv.report(health, main, {}, {"mode": "full"}, "20261205T000000Z", hosts=names)


def test_a_clean_run_reads_passed_with_every_test_and_check():
    doc = doc_of(3, 2, lambda t: False)
    text = verify_text.markdown(doc)
    assert text.startswith("# RDMA verification 20261205T000000Z: PASSED\n\n3 hosts, mode full;")
    assert "\n## Failures\n\nNone.\n" in text
    tests = text.split("## Tests")[1].split("## Health checks")[0]
    assert tests.count("| PASSED |") == len(doc["pairs"]) == 12
    assert text.count("| ok |") == len(doc["checks"])


def test_failures_are_listed_and_pipes_in_details_escaped():
    doc = doc_of(3, 1, lambda t: t["client"] == "lab1")
    doc["checks"][0].update(ok=False, detail="PFC | priorities 3 != 4")
    text = verify_text.markdown(doc)
    failures = text.split("## Failures")[1].split("## Rails")[0]
    assert "PFC \\| priorities 3 != 4" in failures
    failed = [p for p in doc["pairs"] if p["outcome"] == "failed"]
    assert failed and all(
        f"{p['server']} <- {p['client']} (rail {p['rail']})" in failures for p in failed
    )
    assert text.startswith("# RDMA verification 20261205T000000Z: FAILED")


def test_junit_counts_and_escapes():
    doc = doc_of(3, 1, lambda t: t["client"] == "lab1")
    doc["checks"][0].update(ok=False, detail='a <b> & "c"')
    root = ET.fromstring(verify_text.junit(doc).split("\n", 1)[1])
    failed = [p for p in doc["pairs"] if p["outcome"] == "failed"]
    perftest = root.find("testsuite[@name='perftest']")
    assert int(perftest.get("failures")) == len(failed) and int(perftest.get("tests")) == len(
        doc["pairs"]
    )
    health = root.find("testsuite[@name='health']")
    assert int(health.get("failures")) == 1
    assert health.find("testcase/failure").get("message") == 'a <b> & "c"'
    assert int(root.get("tests")) == len(doc["checks"]) + len(doc["pairs"])


def test_the_brief_holds_what_the_play_shows_not_every_test():
    doc = doc_of(16, 8, lambda t: t["client"] == "lab3" and t["rail"] == "mlx5_2")
    brief = verify_text.brief(doc)
    assert brief["summary"] == doc["summary"]
    assert {p["outcome"] for p in brief["pairs"]} == {"failed"}
    failed = sum(1 for p in doc["pairs"] if p["outcome"] == "failed")
    assert len(brief["pairs"]) == failed > 0
    assert all(not c["ok"] for c in brief["checks"])
    assert len(json.dumps(brief)) * 50 < len(json.dumps(doc)), (
        len(json.dumps(brief)),
        len(json.dumps(doc)),
    )


def test_beyond_the_listed_limit_the_test_table_has_the_failures_only(monkeypatch):
    monkeypatch.setattr(verify_text, "TESTS_LISTED_UP_TO", 10)
    doc = doc_of(4, 2, lambda t: t["client"] == "lab2" and t["rail"] == "mlx5_1")
    text = verify_text.markdown(doc)
    tests = text.split("## Tests")[1].split("## Health checks")[0]
    assert (
        f"{len(doc['pairs'])} tests: those that did not pass below; every test is in results.json"
        in tests
    )
    assert tests.count("| FAILED |") == 3 and "| PASSED |" not in tests


def test_cabling_rows_per_leaf_sorted_by_port():
    doc = doc_of(2, 1, lambda t: False)
    rows = [
        {
            "planned_leaf": "leaf1",
            "planned_port": "swp2",
            "host": "lab2",
            "rail": "r0",
            "status": "planned",
            "detail": "as planned",
        },
        {
            "planned_leaf": "leaf1",
            "planned_port": "swp1",
            "host": "lab1",
            "rail": "r0",
            "status": "swapped",
            "detail": "reaches leaf1 swp2",
            "leaf": "leaf1",
            "port": "swp2",
        },
    ]
    text = verify_text.markdown(doc, rows)
    table = text.split("### leaf1")[1].split("## Rails")[0]
    assert table.index("| swp1 | lab1 |") < table.index("| swp2 | lab2 |")
    assert (
        "| leaf1 swp2 | SWAPPED: reaches leaf1 swp2 |" in table
        and "| - | ok: as planned |" in table
    )
