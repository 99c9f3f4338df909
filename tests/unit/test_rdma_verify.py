"""The rdma_verify logic (module_utils/rdma_verify.py): health, plan, judge, isolation."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import pair_rounds
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_perftest

FIXTURES = Path(__file__).parent / "fixtures" / "perftest"
EXPECT = {
    "devices": [],
    "link_layer": "",
    "device_count": 0,
    "rate_gbps": 0,
    "active_mtu": 1024,
    "counter_max": {"symbol_error": 10},
    "address": "mgmt",
}
OPTIONS = {
    "kind": "bw",
    "binary": "ib_write_bw",
    "args": ["-s", 65536, "-q", 1, "-D", 3],
    "duration": 3,
    "timeout": 33,
    "base_port": 18515,
    "port_span": 1000,
    "listen_timeout": 30,
    "min_gbps": 0,
    "min_fraction": 0.9,
    "bidirectional": False,
}


def roce_port(host_octet, **over):
    port = {
        "device": "rxe0",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate_gbps": 10.0,
        "link_layer": "Ethernet",
        "netdev": "eth1",
        "netdev_mtu": 1500,
        "active_mtu": 1024,
        "sm_lid": "0",
        "roce_v2_gid": {"index": 1, "ipv4": f"192.0.2.{host_octet}"},
        "counters": None,
    }
    port.update(over)
    return port


def info(*ports, version="6.06"):
    return {"ports": list(ports), "perftest_version": version, "problems": []}


def failed(checks):
    return {(c["check"], c["device"]) for c in checks if not c["ok"]}


def test_healthy_roce_host():
    health = rv.host_health(info(roce_port(11)), EXPECT)
    assert failed(health["checks"]) == set()
    [rail] = health["rails"]
    assert rail == {
        "device": "rxe0",
        "port": 1,
        "link_layer": "Ethernet",
        "rate_gbps": 10.0,
        "gid_index": 1,
        "address": "192.0.2.11",
        "active": True,
    }


def test_every_health_fault_is_named():
    port = roce_port(
        11,
        state="DOWN",
        phys_state="Disabled",
        active_mtu=4096,
        netdev_mtu=1500,
        roce_v2_gid=None,
        counters={"symbol_error": 99, "port_rcv_errors": 5},
    )
    health = rv.host_health(info(port, version=None), dict(EXPECT, active_mtu=4096))
    assert failed(health["checks"]) == {
        ("port state", "rxe0"),
        ("netdev MTU", "rxe0"),
        ("RoCE v2 GID", "rxe0"),
        ("error counters", "rxe0"),
        ("perftest", None),
    }
    detail = {c["check"]: c["detail"] for c in health["checks"]}
    assert detail["netdev MTU"] == "eth1 MTU 1500 (RoCE needs >= 4192)"
    assert detail["error counters"] == "over the limit: symbol_error=99"
    assert health["rails"][0]["address"] is None


def test_no_device_and_expected_count():
    assert failed(rv.host_health(info(), EXPECT)["checks"]) == {("devices", None)}
    two = info(roce_port(11), roce_port(11, device="rxe1"))
    health = rv.host_health(two, dict(EXPECT, device_count=3))
    assert failed(health["checks"]) == {("devices", None)}
    assert [r["device"] for r in health["rails"]] == ["rxe0", "rxe1"]


def test_infiniband_port_needs_a_subnet_manager():
    ib = roce_port(11, link_layer="InfiniBand", roce_v2_gid=None, sm_lid="0x0")
    health = rv.host_health(info(ib), dict(EXPECT, active_mtu=0))
    assert failed(health["checks"]) == {("subnet manager", "rxe0")}
    assert health["rails"][0]["address"] == "mgmt"


def test_perftest_versions_must_agree():
    healths = {"a": {"perftest_version": "6.06"}, "b": {"perftest_version": "4.5"}}
    [check] = rv.fabric_checks(healths)
    assert not check["ok"] and check["detail"] == "4.5: b; 6.06: a"


def healthy(*hosts):
    return {h: rv.host_health(info(roce_port(10 + i)), EXPECT) for i, h in enumerate(hosts, 1)}


def test_plan_same_options_both_sides_and_distinct_ports():
    health = healthy("a", "b", "c", "d")
    rounds = rv.plan(pair_rounds(list(health)), health, OPTIONS)
    tests = [t for r in rounds for t in r]
    assert len(tests) == 6 and all(t["runnable"] for t in tests)
    assert len({t["port"] for t in tests}) == 6
    test = tests[0]
    server, client = test["server_test"]["argv"], test["client_test"]["argv"]
    assert client[:-1] == server and client[-1] == "192.0.2.1" + str(
        list(health).index(test["server"]) + 1
    )
    assert server[:9] == ["ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-F", "--report_gbits"]
    assert "-p" in server and server[server.index("-p") + 1] == str(test["port"])
    assert test["server_test"]["timeout"] > test["client_test"]["timeout"]


def test_plan_expected_rate():
    health = healthy("a", "b")
    [[test]] = rv.plan([[["a", "b"]]], health, OPTIONS)
    assert test["expected_gbps"] == 9.0
    [[test]] = rv.plan([[["a", "b"]]], health, dict(OPTIONS, bidirectional=True))
    assert test["expected_gbps"] == 18.0
    [[test]] = rv.plan([[["a", "b"]]], health, dict(OPTIONS, min_gbps=0.005))
    assert test["expected_gbps"] == 0.005


def test_plan_rail_missing_is_an_error_not_a_run():
    health = healthy("a", "b")
    health["b"]["rails"] = []
    [[test]] = rv.plan([[["a", "b"]]], health, OPTIONS)
    assert not test["runnable"] and test["error"] == "b: no RDMA port for rail 0"


def outcome(test_id, name, rc=0):
    text = (FIXTURES / f"{name}.txt").read_text()
    result = parse_perftest(text)
    return {"id": test_id, "rc": rc, "error": result["error"], "stdout": text, "result": result}


def test_judge_pass_fail_and_clock_estimate():
    health = healthy("a", "b", "c")
    rounds = rv.plan(pair_rounds(["a", "b", "c"]), health, dict(OPTIONS, min_gbps=0.005))
    ids = [t["id"] for r in rounds for t in r]
    outcomes = [
        outcome(f"{ids[0]}/client", "ib_write_bw_rxe_lab_gbits_D3_client"),
        outcome(f"{ids[0]}/server", "ib_write_bw_rxe_lab_gbits_D3_server"),
        outcome(f"{ids[1]}/client", "ib_write_bw_rxe_lab_error_port_down_client", rc=1),
        dict(
            outcome(f"{ids[1]}/server", "ib_write_bw_rxe_lab_error_no_server_client"),
            error="killed: still running 10 s after its client finished",
        ),
        outcome(f"{ids[2]}/client", "ib_write_bw_rxe_lab_clock_error_client"),
    ]
    records = {r["id"]: r for r in rv.judge(rounds, outcomes)}
    good, down, clock = (records[i] for i in ids)
    assert good["passed"] and good["measured_gbps"] > 0.005 and good["error"] is None
    assert not down["passed"] and down["error"].startswith(
        f"client {down['client']}: Port number 1 state is Down; Couldn't set the link layer"
    )
    assert f"server {down['server']}: killed" in down["error"]
    # 235 iterations x 65536 bytes x 8 bits / 3 s
    assert clock["measured_gbps"] == pytest.approx(235 * 65536 * 8 / 3 / 1e9, abs=1e-6)
    assert clock["passed"] and "could not calibrate" in clock["note"]


def test_judge_below_threshold_and_missing_results():
    health = healthy("a", "b")
    rounds = rv.plan([[["a", "b"]]], health, dict(OPTIONS, min_gbps=5))
    test_id = rounds[0][0]["id"]
    [record] = rv.judge(
        rounds, [outcome(f"{test_id}/client", "ib_write_bw_rxe_lab_gbits_D3_client")]
    )
    assert not record["passed"] and "below the expected 5.0 Gb/s" in record["error"]
    [record] = rv.judge(rounds, [])
    assert record["error"] == "client b: no result (host failed?)"


def record(server, client, passed, phase="main"):
    return {"server": server, "client": client, "passed": passed, "phase": phase, "kind": "bw"}


def test_isolation_names_the_bad_host_not_its_peers():
    health = healthy("a", "b", "c", "d")
    records = [
        record("a", "b", True),
        record("c", "d", False),
        record("a", "c", False),
        record("b", "d", True),
    ]
    iso = rv.isolation(records, health)
    assert iso["suspects"] == ["c"] and iso["good"] == ["a", "b", "d"]
    assert iso["rounds"] == [[["c", "a"]]]
    verdicts = rv.verdicts(iso, records + [record("c", "a", False, "isolate")])
    assert verdicts["c"]["bad"] is True and "known-good a" in verdicts["c"]["verdict"]
    verdicts = rv.verdicts(iso, records + [record("c", "a", True, "isolate")])
    assert verdicts["c"]["bad"] is False


def test_isolation_without_a_good_host_is_undetermined():
    health = healthy("a", "b")
    iso = rv.isolation([record("a", "b", False)], health)
    assert iso["rounds"] == [] and iso["suspects"] == ["a", "b"]
    assert rv.verdicts(iso, [])["a"]["bad"] is None


def test_report_summary_and_matrix():
    health = healthy("a", "b", "c")
    records = [
        dict(record("a", "b", True), measured_gbps=0.08, expected_gbps=0.005),
        dict(record("a", "c", False), measured_gbps=None, expected_gbps=0.005),
    ]
    iso = rv.isolation(records, health)
    doc = rv.report(health, records, iso, {"mode": "full"}, "20260101T000000Z")
    assert doc["summary"]["tests_failed"] == 1 and doc["summary"]["passed"] is False
    assert doc["matrix"]["hosts"] == ["a", "b", "c"]
    ab = doc["matrix"]["rows"][0][1]
    assert ab["gbps"] == 0.08 and ab["passed"] and ab["ratio"] == 16.0
    assert doc["matrix"]["rows"][0][0] is None and doc["matrix"]["rows"][1][2] is None
