"""rdma_verify's tests (module_utils/verify_tests.py): the schedule per host, rails by
name, ports per server host, expectations per rail, judging, the retest ("flaky"),
isolation per (host, rail) in both directions, and the scale bounds."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rails
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import pair_rounds
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_perftest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "perftest"
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


def rail(name, octet, device=None, rate="400 Gb/sec (4X NDR)", host_octet=1):
    gbps = float(rate.split()[0])
    width, speed = rate.split("(")[1].rstrip(")").split()
    return {
        "rail": name,
        "device": device or name,
        "port": 1,
        "link_layer": "Ethernet",
        "rate_gbps": gbps,
        "rate": {
            "gbps": gbps,
            "width": width,
            "speed": speed,
            "usable_gbps": round(gbps * {"QDR": 0.8, "FDR": 64 / 66}.get(speed, 1.0), 3),
        },
        "gid_index": 3,
        "address": f"10.{octet}.0.{host_octet}",
        "active": True,
        "missing": None,
    }


def host(n, rails=8, boot=None, skip=(), rates=None):
    rates = rates or {}
    return {
        "checks": [],
        "perftest_version": "6.06",
        "boot_id": boot or f"boot-{n}",
        "node_guids": [f"guid-{n}"],
        "rails": [
            rail(f"mlx5_{k}", k, rate=rates.get(k, "400 Gb/sec (4X NDR)"), host_octet=n)
            for k in range(rails)
            if k not in skip
        ],
    }


def fabric_of(count, rails=8, **over):
    names = [f"lab{i}" for i in range(1, count + 1)]
    health = {h: host(i, rails) for i, h in enumerate(names, 1)}
    health.update(over)
    return names, health


def test_each_host_computes_its_own_pairs_of_the_circle_method():
    for count in range(1, 14):
        hosts = [f"h{i}" for i in range(count)]
        for mode in ("full", "quick"):
            reference = sorted(
                (r, *sorted(p)) for r, pairs in enumerate(pair_rounds(hosts, mode)) for p in pairs
            )
            every = vplan.all_pairs(hosts, mode)
            # Two-way schedules (quick, full on 2-4 hosts) run circle round r as rounds
            # 2r and 2r + 1, the second reversed; quick mode on an odd count adds a round.
            both = vplan.two_way(count, mode)
            if mode == "quick" and count % 2:
                reference = sorted(
                    (r, *sorted(p))
                    for r, pairs in enumerate(pair_rounds(hosts, mode, 3))
                    for p in pairs
                )
            base = sorted((r // 2 if both else r, *sorted((s, c))) for r, s, c in every)
            assert base == sorted(reference * (2 if both else 1))
            for h in hosts:
                mine = vplan.host_pairs(hosts, h, mode)
                assert mine == [p for p in every if h in p[1:]]


def test_every_host_both_sends_and_receives_in_full_mode():
    hosts = [f"h{i}" for i in range(6)]
    pairs = vplan.all_pairs(hosts)
    for h in hosts:
        assert any(s == h for _, s, _ in pairs) and any(c == h for _, _, c in pairs), h


def test_rails_by_name_a_missing_device_fails_on_its_own_rail_only():
    names, health = fabric_of(2, lab2=host(2, 8, skip={3}))
    fabric = vfabric.fabric(health)
    tests = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, fabric["rails"])
    by_rail = {t["rail"]: t for t in tests}
    assert list(by_rail) == [f"mlx5_{k}" for k in range(8)]
    assert not by_rail["mlx5_3"]["runnable"]
    assert by_rail["mlx5_3"]["error"] == "lab2: no RDMA port for rail mlx5_3"
    for k in (0, 1, 2, 4, 5, 6, 7):
        test = by_rail[f"mlx5_{k}"]
        assert test["runnable"] and test["server_device"] == test["client_device"] == f"mlx5_{k}"
    [check] = [c for c in fabric["checks"] if c["check"] == "rails"]
    assert check["host"] == "lab2" and not check["ok"]
    assert check["detail"].startswith("no RDMA port for rail mlx5_3 (the rail of lab1")


def test_dgx_names_sort_naturally():
    names, health = fabric_of(2, rails=12)
    tests = vplan.plan(
        "main", vplan.all_pairs(names), health, OPTIONS, vfabric.fabric(health)["rails"]
    )
    assert [t["rail"] for t in tests][:4] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert [t["rail"] for t in tests][-2:] == ["mlx5_10", "mlx5_11"]


def test_ports_are_unique_per_server_host_across_the_whole_run():
    names, health = fabric_of(32)
    fabric = vfabric.fabric(health)
    tests = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, fabric["rails"])
    assert len(tests) == 31 * 16 * 8
    per_server = {}
    for t in tests:
        per_server.setdefault(t["server"], []).append(t["port"])
    for server, ports in per_server.items():
        assert len(ports) == len(set(ports)), server
    assert max(t["port"] for t in tests) < 18515 + 1000


def test_one_host_plans_exactly_its_sides():
    names, health = fabric_of(5, rails=2)
    rails = vfabric.fabric(health)["rails"]
    everything = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, rails)
    for h in names:
        mine = vplan.plan("main", vplan.host_pairs(names, h), health, OPTIONS, rails)
        assert vplan.host_sides(h, mine) == vplan.host_sides(h, everything)
    sides = vplan.host_sides("lab1", everything)
    client = next(s for s in sides if s["side"] == "client")
    server = next(s for s in sides if s["side"] == "server")
    assert client["argv"][-1].startswith("10.")
    assert server["argv"][:7] == ["ib_write_bw", "-d", "mlx5_0", "-i", "1", "-x", "3"]


def test_two_names_of_one_machine_are_refused_naming_both():
    _, health = fabric_of(3, lab3=host(3, boot="boot-1"))
    fabric = vfabric.fabric(health)
    assert fabric["same_machine"] == [
        "lab1 and lab3 are one machine (the same boot id boot-1): list each server once in "
        "the inventory"
    ]


def test_expected_rate_is_the_rails_majority_and_a_slow_or_narrow_port_fails():
    _, health = fabric_of(
        4,
        rails=2,
        lab2=host(2, 2, rates={1: "200 Gb/sec (2X NDR)"}),
        lab3=host(3, 2, rates={0: "100 Gb/sec (4X HDR)"}),
    )
    fabric = vfabric.fabric(health)
    assert fabric["rails"]["mlx5_0"]["gbps"] == 400.0 and fabric["rails"]["mlx5_0"]["agree"] == 3
    bad = {
        (c["host"], c["device"])
        for c in fabric["checks"]
        if c["check"] == "rail rate" and not c["ok"]
    }
    assert bad == {("lab2", "mlx5_1"), ("lab3", "mlx5_0")}
    detail = next(
        c["detail"] for c in fabric["checks"] if c["host"] == "lab2" and c["device"] == "mlx5_1"
    )
    assert detail == (
        "200 Gb/s (2X NDR), expected 400 Gb/s (4X NDR) (3 of 4 ports of rail mlx5_1); "
        "trained at a lower width"
    )
    assert vplan.expected_gbps(OPTIONS, fabric["rails"]["mlx5_1"]) == 360.0


def test_qdr_passes_honestly_on_its_usable_bandwidth():
    _, health = fabric_of(
        2,
        rails=1,
        lab1=host(1, 1, rates={0: "40 Gb/sec (4X QDR)"}),
        lab2=host(2, 1, rates={0: "40 Gb/sec (4X QDR)"}),
    )
    rails = vfabric.fabric(health)["rails"]
    assert rails["mlx5_0"]["usable_gbps"] == 32.0
    assert vplan.expected_gbps(OPTIONS, rails["mlx5_0"]) == 28.8
    assert vplan.expected_gbps(dict(OPTIONS, bidirectional=True), rails["mlx5_0"]) == 57.6
    assert vplan.expected_gbps(dict(OPTIONS, min_gbps=0.005), rails["mlx5_0"]) == 0.005


def outcome(test_id, name, rc=0, **over):
    text = (FIXTURES / f"{name}.txt").read_text()
    result = parse_perftest(text)
    return dict({"id": test_id, "rc": rc, "error": result["error"], "result": result}, **over)


GOOD = "ib_write_bw_rxe_lab_gbits_D3_client"


def ok(test):
    return [outcome(f"{test['id']}/client", GOOD), outcome(f"{test['id']}/server", GOOD)]


def bad(test, name="ib_write_bw_rxe_lab_error_port_down_client"):
    return [outcome(f"{test['id']}/client", name, rc=1), outcome(f"{test['id']}/server", GOOD)]


LAB = dict(OPTIONS, min_gbps=0.005)


def run_phase(phase, pairs, health, fails, rails):
    tests = vplan.plan(phase, pairs, health, LAB, rails)
    outcomes = []
    for t in tests:
        outcomes += bad(t) if fails(t) else ok(t)
    return vjudge.judge(tests, outcomes, 3)


def verify(count, fails_main, fails_retest, fails_isolate, rails=1):
    names, health = fabric_of(count, rails=rails)
    expect = vfabric.fabric(health)["rails"]
    main = run_phase("main", vplan.all_pairs(names), health, fails_main, expect)
    retest = run_phase("retest", vjudge.retest_pairs(main), health, fails_retest, expect)
    vjudge.merge_retests(main, retest)
    isolate = viso.isolation(main, health, LAB)
    iso = run_phase("isolate", isolate["pairs"], health, fails_isolate, expect)
    verdicts = viso.verdicts(isolate, main + retest + iso, health, LAB)
    return main, retest, isolate, iso, verdicts


def test_judge_keeps_perftests_own_error_and_the_counter_deltas():
    names, health = fabric_of(2, rails=1)
    [test] = vplan.plan("main", vplan.all_pairs(names)[:1], health, LAB, {})
    client = outcome(f"{test['id']}/client", GOOD, deltas={"link_downed": 1, "symbol_error": 4})
    [record] = vjudge.judge([test], [client, outcome(f"{test['id']}/server", GOOD)], 3)
    assert not record["passed"]
    # Every delta counter is judged: the link down, and 4 symbol errors
    # over the lab fixture's few bits.
    assert record["error"] == (
        f"client {test['client']} mlx5_0 port 1: link_downed +1 during the test (limit 0); "
        f"client {test['client']} mlx5_0 port 1: symbol_error +4 during the test (limit 0: "
        "bit error rate 1e-12 of 9.81e+07 bits)"
    )
    assert record["deltas"] == {"client": {"link_downed": 1, "symbol_error": 4}}
    [record] = vjudge.judge([test], bad(test), 3)
    assert record["error"].startswith(f"client {test['client']}: Port number 1 state is Down")


def test_a_pair_that_fails_once_is_retested_and_reported_flaky():
    flap = {"id": None}

    def once(t):
        if flap["id"] is None and t["rail"] == "mlx5_0":
            flap["id"] = t["id"]
        return t["id"] == flap["id"]

    main, retest, isolate, iso, verdicts = verify(3, once, lambda t: False, lambda t: True)
    [flaky] = [r for r in main if r["outcome"] == "flaky"]
    assert flaky["retest_id"] == retest[0]["id"] and retest[0]["outcome"] == "passed on retest"
    assert [r["outcome"] for r in main].count("passed") == 5
    assert isolate["suspects"] == [] and iso == [] and verdicts == {}


def test_a_throttled_sender_is_named_on_its_rail_and_its_peer_is_cleared():
    """lab3's egress is slow on mlx5_1: every test where lab3 sends on mlx5_1 fails."""

    def lab3_sends(t):
        return t["client"] == "lab3" and t["rail"] == "mlx5_1"

    main, retest, isolate, iso, verdicts = verify(4, lab3_sends, lab3_sends, lab3_sends, rails=2)
    assert all(r["outcome"] == "failed" for r in main if lab3_sends(r))
    assert "lab3 mlx5_1" in isolate["suspects"]
    assert "lab3 mlx5_0" not in isolate["suspects"]
    assert all(not k.startswith("lab3") for k in isolate["good"] if k.endswith("mlx5_1"))
    for pair in isolate["pairs"]:
        assert "lab3" not in (pair["server"], pair["client"]) or pair["rail"] == "mlx5_1"
    bad_verdicts = {k: v for k, v in verdicts.items() if v["bad"]}
    assert list(bad_verdicts) == ["lab3 mlx5_1"]
    assert bad_verdicts["lab3 mlx5_1"]["verdict"].startswith(
        "lab3 rail mlx5_1 (mlx5_1): fails as sender against 2 good peers"
    )
    for key, v in verdicts.items():
        if key != "lab3 mlx5_1":
            assert v["bad"] is False and "good: passes both directions" in v["verdict"]


def test_a_dead_host_is_named_and_never_a_known_good_peer():
    def lab2(t):
        return "lab2" in (t["server"], t["client"])

    main, retest, isolate, iso, verdicts = verify(3, lab2, lab2, lab2)
    assert isolate["suspects"] == ["lab2 mlx5_0"]
    assert "lab2 mlx5_0" not in isolate["good"]
    assert all(p["server"] != p["client"] for p in isolate["pairs"])
    assert verdicts["lab2 mlx5_0"]["bad"] is True
    assert verdicts["lab2 mlx5_0"]["verdict"] == (
        "lab2 rail mlx5_0 (mlx5_0): fails as sender against 2 good peers (lab1, lab3) and "
        "fails as receiver against 2 good peers (lab1, lab3)"
    )


def test_without_a_known_good_peer_the_verdict_is_undetermined():
    main, retest, isolate, iso, verdicts = verify(2, lambda t: True, lambda t: True, None)
    assert iso == [] and set(verdicts) == {"lab1 mlx5_0", "lab2 mlx5_0"}
    assert all(v["bad"] is None and "undetermined" in v["verdict"] for v in verdicts.values())


def test_isolation_rounds_keep_each_host_in_one_pair():
    pairs = [
        {"server": "a", "client": "s", "rail": "r0"},
        {"server": "s", "client": "a", "rail": "r0"},
        {"server": "a", "client": "s", "rail": "r1"},
        {"server": "b", "client": "t", "rail": "r0"},
        {"server": "a", "client": "t", "rail": "r0"},
    ]
    rounds = [p["round"] for p in vplan.assign_rounds(pairs)]
    assert rounds == [0, 1, 0, 0, 1] or rounds[:4] == [0, 1, 0, 0]
    by_round = {}
    for p in vplan.assign_rounds(pairs):
        units = by_round.setdefault(p["round"], {})
        for h in (p["server"], p["client"]):
            assert units.setdefault(h, (p["server"], p["client"])) == (p["server"], p["client"])


def test_scale_32_hosts_8_rails_all_rounds_and_4096_hosts_quick():
    """Controller work of a whole run with no traffic (the bench prints the figures).
    The issue's bounds hold for this process's CPU time; the wall-time bounds are
    generous, for a loaded 2-core machine."""
    names, health = fabric_of(32)
    start, cpu = time.perf_counter(), time.process_time()
    fabric = vfabric.fabric(health)
    sides = 0
    for h in names:
        mine = vplan.plan("main", vplan.host_pairs(names, h), health, OPTIONS, fabric["rails"])
        sides += len(vplan.host_sides(h, mine))
    tests = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, fabric["rails"])
    outcomes = {}
    for t in tests:
        for side in ("client", "server"):
            outcomes[f"{t['id']}/{side}"] = {
                "id": t["id"],
                "error": None,
                "result": {"ok": True, "rows": [{"bytes": 65536, "bw_average_gbps": 390.0}]},
            }
    records = vjudge.judge(tests, outcomes, 3)
    viso.isolation(records, health, OPTIONS)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert sides == 2 * len(tests) == 2 * 3968 and all(r["passed"] for r in records)
    assert elapsed < 10 and cpu < 10, (elapsed, cpu)

    big = [f"node{i:05d}" for i in range(4096)]
    rails = {f"mlx5_{k}": {"usable_gbps": 400.0} for k in range(8)}
    big_health = {h: host(i % 250 + 1) for i, h in enumerate(big)}
    start, cpu = time.perf_counter(), time.process_time()
    tests = vplan.plan("main", vplan.all_pairs(big, "quick", 2), big_health, OPTIONS, rails)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert len(tests) == 2 * 2 * 2048 * 8  # 2 rounds, each both ways
    assert elapsed < 15 and cpu < 5, (elapsed, cpu)


@pytest.mark.parametrize("binary", ["ib_write_bw", "ib_read_bw"])
def test_direction_follows_the_verb(binary):
    assert viso.sender_is_client(binary) is (binary == "ib_write_bw")


def test_a_port_that_is_down_is_named_without_retests():
    names, health = fabric_of(3, rails=1)
    health["lab3"]["rails"][0]["active"] = False
    expect = vfabric.fabric(health)["rails"]
    main = run_phase(
        "main",
        vplan.all_pairs(names),
        health,
        lambda t: "lab3" in (t["server"], t["client"]),
        expect,
    )
    assert vjudge.retest_pairs(main, health) == []
    vjudge.merge_retests(main, [])
    isolate = viso.isolation(main, health, LAB)
    assert isolate["suspects"] == ["lab3 mlx5_0"] and isolate["pairs"] == []
    [verdict] = viso.verdicts(isolate, main, health, LAB).values()
    assert verdict["bad"] is True
    assert verdict["verdict"] == (
        "lab3 rail mlx5_0 (mlx5_0): bad, not retested: its port is not ACTIVE/LinkUp "
        "(see its port state check)"
    )


def test_a_port_that_died_in_the_last_round_is_named_not_its_partner():
    """lab3's port read DOWN at the start of its last round (perftest_run did not run its
    side there: port_down) and stayed down through the retest: one failed test, lab3
    against one partner, would tie them; the DOWN reading names lab3 without isolate
    tests, and its partner is not suspect."""
    names, health = fabric_of(4, rails=1)
    expect = vfabric.fabric(health)["rails"]
    tests = vplan.plan("main", vplan.all_pairs(names), health, LAB, expect)
    last = max(t["round"] for t in tests if "lab3" in (t["server"], t["client"]))

    def dies(t):
        return "lab3" in (t["server"], t["client"]) and t["round"] == last

    def sides(test):
        if not dies(test) and test["phase"] == "main":
            return ok(test)
        mine, peer = ("client", "server") if test["client"] == "lab3" else ("server", "client")
        down = {
            "id": f"{test['id']}/{mine}",
            "rc": None,
            "result": {},
            "port_down": True,
            "error": f"not run: mlx5_0 port 1 is DOWN on this host (since round {last})",
        }
        return [
            down,
            outcome(f"{test['id']}/{peer}", "ib_write_bw_rxe_lab_error_port_down_client", rc=1),
        ]

    main = vjudge.judge(tests, [o for t in tests for o in sides(t)], 3)
    [failed] = [r for r in main if r["outcome"] == "failed"]
    assert failed["port_down"] == ["lab3"]
    retest_tests = vplan.plan("retest", vjudge.retest_pairs(main, health), health, LAB, expect)
    retest = vjudge.judge(retest_tests, [o for t in retest_tests for o in sides(t)], 3)
    vjudge.merge_retests(main, retest)
    isolate = viso.isolation(main, health, LAB)
    assert isolate["suspects"] == ["lab3 mlx5_0"] and isolate["pairs"] == [], isolate
    [verdict] = viso.verdicts(isolate, main + retest, health, LAB).values()
    assert verdict["bad"] is True
    assert verdict["verdict"] == (
        "lab3 rail mlx5_0 (mlx5_0): bad, not retested: its port went DOWN during the run "
        "(see its tests)"
    )
    assert all("port_down" not in r for r in main if r is not failed)


def test_a_port_that_is_down_is_not_tested():
    """Its tests cannot pass, and run, each partner waited for it until the round's
    deadline on the grid (the lab's fault run: two servers killed minutes late)."""
    names, health = fabric_of(3, rails=1)
    health["lab3"]["rails"][0]["active"] = False
    expect = vfabric.fabric(health)["rails"]
    tests = vplan.plan("main", vplan.all_pairs(names), health, LAB, expect)
    down = [t for t in tests if "lab3" in (t["server"], t["client"])]
    assert down and not any(t["runnable"] for t in down), down
    for test in down:
        assert test["error"] == (
            "lab3: mlx5_0 port is not ACTIVE/LinkUp, not run (see its port state check)"
        )
    assert all(t["runnable"] for t in tests if t not in down)


def test_retest_rounds_start_at_zero():
    records = [
        {
            "phase": "main",
            "ran": True,
            "passed": False,
            "round": 4,
            "server": "a",
            "client": "b",
            "rail": "r",
        },
        {
            "phase": "main",
            "ran": True,
            "passed": False,
            "round": 9,
            "server": "c",
            "client": "d",
            "rail": "r",
        },
        {
            "phase": "main",
            "ran": False,
            "passed": False,
            "round": 2,
            "server": "e",
            "client": "f",
            "rail": "r",
        },
    ]
    assert vjudge.retest_pairs(records) == [
        {"server": "a", "client": "b", "rail": "r", "round": 0},
        {"server": "c", "client": "d", "rail": "r", "round": 1},
    ]


def test_report_lists_unreachable_hosts_and_per_rail_matrices():
    names, health = fabric_of(3, rails=2)
    expect = vfabric.fabric(health)["rails"]
    main = run_phase("main", vplan.all_pairs(names), health, lambda t: False, expect)
    doc = rv.report(health, main, {}, {"mode": "full"}, "now", hosts=[*names, "lab4"])
    summary = doc["summary"]
    assert summary["unreachable"] == ["lab4"] and summary["passed"] is False
    assert summary["tests"] == 12 and summary["tests_passed"] == 12  # both ways at 3 hosts
    [row] = [c for c in doc["checks"] if c["host"] == "lab4"]
    assert row["check"] == "reachable" and not row["ok"]
    assert doc["hosts"]["lab4"] == {"unreachable": True, "rails": []}
    assert list(doc["matrix"]) == ["mlx5_0", "mlx5_1"]
    # Sparse: one cell per tested direction (6 at 3 hosts both ways), no N x N rows.
    cells = doc["matrix"]["mlx5_1"]["cells"]
    assert len(cells) == 6 and "rows" not in doc["matrix"]["mlx5_1"]
    sender, receiver, gbps, ratio, outcome = cells[0]
    assert (sender, receiver) == (0, 1) and gbps > 0 and ratio >= 1 and outcome == "passed"
    doc = rv.report(health, main, {}, {"mode": "full"}, "now", hosts=names)
    assert doc["summary"]["passed"] is True


def test_heat_map_is_directional_row_sender_column_receiver():
    """Both directions of a pair run: a sender fault colours its row only (the cells were
    keyed by the unordered pair, so the later direction overwrote the earlier one)."""
    names, health = fabric_of(3, rails=1)
    expect = vfabric.fabric(health)["rails"]
    main = run_phase(
        "main", vplan.all_pairs(names), health, lambda t: t["client"] == names[0], expect
    )
    doc = rv.report(health, main, {}, {"mode": "full"}, "now", hosts=names)
    [m] = doc["matrix"].values()
    assert m["hosts"] == names
    state = {(i, j): outcome for i, j, _g, _r, outcome in m["cells"]}
    assert [state[(0, 1)], state[(0, 2)]] == ["failed", "failed"], state
    assert [state[(1, 0)], state[(2, 0)]] == ["passed", "passed"], state
    reads = rv.report(
        health, main, {}, {"mode": "full", "binary": "ib_read_bw"}, "now", hosts=names
    )
    [m] = reads["matrix"].values()
    state = {(i, j): outcome for i, j, _g, _r, outcome in m["cells"]}
    assert [state[(1, 0)], state[(2, 0)]] == ["failed", "failed"], state
    # The role's options: the binary is the bandwidth options'.
    reads = rv.report(
        health,
        main,
        {},
        {"mode": "full", "bandwidth": {"binary": "ib_read_bw"}},
        "now",
        hosts=names,
    )
    [m] = reads["matrix"].values()
    assert {(i, j) for i, j, _g, _r, o in m["cells"] if o == "failed"} == {(1, 0), (2, 0)}


def test_planning_pauses_the_cycle_collector_and_restores_it(monkeypatch):
    names, health = fabric_of(2, rails=1)
    seen = []
    original = vplan._tclass
    monkeypatch.setattr(
        vplan, "_tclass", lambda options: seen.append(gc.isenabled()) or original(options)
    )
    assert gc.isenabled()
    vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, {})
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, {})
        assert not gc.isenabled()
    finally:
        gc.enable()


# The expected rate is never a guess by host order.
def test_a_tie_for_the_rails_rate_is_ambiguous_not_settled_by_host_order():
    _, health = fabric_of(2, rails=1, lab2=host(2, 1, rates={0: "200 Gb/sec (2X NDR)"}))
    fabric = vfabric.fabric(health)
    assert fabric["rails"]["mlx5_0"]["gbps"] is None
    assert fabric["rails"]["mlx5_0"]["usable_gbps"] is None
    [check] = [c for c in fabric["checks"] if c["check"] == "rail rate"]
    assert not check["ok"] and check["host"] == "fabric"
    assert check["detail"] == (
        "rail mlx5_0: ambiguous: set rdma_verify_expected_rate_gbps (200 Gb/s (2X NDR): "
        "lab2; 400 Gb/s (4X NDR): lab1)"
    )
    # Set, it decides: the 2X port is the slow one.
    fabric = vfabric.fabric(health, expected_rate_gbps=400)
    bad = [c["host"] for c in fabric["checks"] if c["check"] == "rail rate" and not c["ok"]]
    assert bad == ["lab2"]


def test_an_ambiguous_rail_runs_no_test_and_names_why():
    """No majority rate: no pass mark, so the rail's tests are not run (they would pass at
    any rate), are not isolated (no host is to blame) and the run fails; with
    rdma_verify_min_gbps the rail has a pass mark again."""
    names, health = fabric_of(2, rails=1, lab2=host(2, 1, rates={0: "200 Gb/sec (2X NDR)"}))
    expect = vfabric.fabric(health)["rails"]
    assert expect["mlx5_0"]["ambiguous"] is True
    tests = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, expect)
    assert tests and not any(t["runnable"] for t in tests)
    assert all(t["error"].startswith("not run: rail mlx5_0 has no pass mark") for t in tests), tests
    records = vjudge.judge(tests, [], 3)
    assert {r["outcome"] for r in records} == {"not run"}
    isolate = viso.isolation(records, health, LAB)
    assert not isolate["pairs"] and not isolate.get("rails"), isolate
    doc = rv.report(health, records, isolate, {"mode": "full"}, "now", hosts=names)
    assert doc["summary"]["passed"] is False and doc["summary"]["tests_not_run"] == len(tests)
    assert not doc["summary"]["bad_hosts"]
    floor = vplan.plan("main", vplan.all_pairs(names), health, dict(OPTIONS, min_gbps=100), expect)
    assert all(t["runnable"] for t in floor)


def test_a_majority_below_the_share_is_ambiguous():
    _, health = fabric_of(
        5,
        rails=1,
        lab1=host(1, 1, rates={0: "200 Gb/sec (4X HDR)"}),
        lab2=host(2, 1, rates={0: "100 Gb/sec (4X EDR)"}),
    )
    # 3 of 5 at 400: a majority, above the default share (0.5).
    assert vfabric.fabric(health)["rails"]["mlx5_0"]["gbps"] == 400.0
    fabric = vfabric.fabric(health, majority_share=0.75)
    assert fabric["rails"]["mlx5_0"]["gbps"] is None
    assert any(
        c["detail"].startswith("rail mlx5_0: ambiguous") for c in fabric["checks"] if not c["ok"]
    )


def ethernet_port(rate):
    return {
        "device": "mlx5_0",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "rate": rate,
        "rate_gbps": float(rate.split()[0]),
        "link_layer": "Ethernet",
        "netdev": "eth0",
        "counters": None,
    }


def test_ethernet_speeds_use_64b66b_whatever_ib_name_mlx5_reports():
    """mlx5 reports 40GBASE as "4X QDR" and 10GBASE as "1X QDR" (the IB names of the same
    signalling); Ethernet 10/40GBASE-R carry 64b/66b, sysfs prints their data rate."""
    for text, usable in (("40 Gb/sec (4X QDR)", 40.0), ("10 Gb/sec (1X QDR)", 10.0)):
        info = {"ports": [ethernet_port(text)], "perftest_version": "6.06", "problems": []}
        [rail] = rv.host_health(info, {"address": "mgmt", "counter_max": {}})["rails"]
        assert rail["rate"]["usable_gbps"] == usable, text
    ib = dict(ethernet_port("40 Gb/sec (4X QDR)"), link_layer="InfiniBand", netdev=None)
    info = {"ports": [ib], "perftest_version": "6.06", "problems": []}
    [rail] = rv.host_health(info, {"address": "mgmt", "counter_max": {}})["rails"]
    assert rail["rate"]["usable_gbps"] == 32.0


# A host lost during traffic (its perftest_run never came back).
def test_a_host_lost_during_traffic_is_unreachable_and_its_partners_tests_peer_lost():
    names, health = fabric_of(4, rails=2)
    expect = vfabric.fabric(health)["rails"]
    tests = vplan.plan("main", vplan.all_pairs(names), health, LAB, expect)
    outcomes = []
    for t in tests:
        gone = f"{t['id']}/{_side_of(t, 'lab3')}" if "lab3" in (t["server"], t["client"]) else None
        outcomes += [o for o in ok(t) if o["id"] != gone]
    main = vjudge.judge(tests, outcomes, 3)
    lost = [r for r in main if "lab3" in (r["server"], r["client"])]
    # 3 peers x 2 ways x 2 rails
    assert len(lost) == 12 and {r["outcome"] for r in lost} == {"peer lost"}
    assert all(r["error"] == "peer lost: lab3 was lost during traffic" for r in lost)
    assert all(r["outcome"] == "passed" for r in main if r not in lost)
    assert vjudge.retest_pairs(main, health) == []
    vjudge.merge_retests(main, [])
    isolate = viso.isolation(main, health, LAB)
    assert isolate["suspects"] == [] and isolate["pairs"] == []
    doc = rv.report(health, main, dict(isolate, verdicts={}), {"mode": "full"}, "now", hosts=names)
    summary = doc["summary"]
    assert summary["unreachable"] == ["lab3"] and summary["passed"] is False
    assert summary["bad_hosts"] == [] and summary["bad_rails"] == []
    assert summary["tests_failed"] == 0 and summary["tests_peer_lost"] == 12
    [row] = [c for c in doc["checks"] if c["host"] == "lab3" and c["check"] == "reachable"]
    assert not row["ok"] and row["detail"] == "lost during traffic: no perftest result came back"


def _side_of(test, host):
    return "client" if test["client"] == host else "server"


# Isolation that names several culprits, and rail patterns.
@pytest.mark.parametrize("count", [8, 32])
def test_two_dead_hosts_on_one_rail_are_named_exactly(count):
    dead = {"lab3", f"lab{count - 1}"}

    def on_dead(t):
        return t["rail"] == "mlx5_1" and bool(dead & {t["server"], t["client"]})

    main, retest, isolate, iso, verdicts = verify(count, on_dead, on_dead, on_dead, rails=2)
    assert isolate["suspects"] == [f"{h} mlx5_1" for h in sorted(dead, key=rails.natural_key)]
    assert isolate["rails"] == {}
    assert {k for k, v in verdicts.items() if v["bad"]} == set(isolate["suspects"])
    for key in isolate["suspects"]:
        assert "fails as sender against 2 good peers" in verdicts[key]["verdict"]
        assert "fails as receiver against 2 good peers" in verdicts[key]["verdict"]


def test_a_bad_sender_and_a_bad_receiver_among_four_are_both_named():
    # lab2 cannot send, lab3 cannot receive (both show in the full schedule's orientations:
    # lab2 sends to lab1 and lab4, lab3 receives from lab1 and lab4).
    def faults(t):
        return t["client"] == "lab2" or t["server"] == "lab3"

    main, retest, isolate, iso, verdicts = verify(4, faults, faults, faults)
    bad = {k: v["verdict"] for k, v in verdicts.items() if v["bad"]}
    assert set(bad) == {"lab2 mlx5_0", "lab3 mlx5_0"}, verdicts
    assert bad["lab2 mlx5_0"].startswith("lab2 rail mlx5_0 (mlx5_0): fails as sender against")
    assert "receiver" not in bad["lab2 mlx5_0"]
    assert bad["lab3 mlx5_0"].startswith("lab3 rail mlx5_0 (mlx5_0): fails as receiver against")
    assert all(v["bad"] is False for k, v in verdicts.items() if k not in bad)


def test_a_leaf_half_gets_a_rail_verdict_not_eight_suspects():
    half = {"lab1", "lab2", "lab3", "lab4"}

    def across(t):
        return t["rail"] == "mlx5_1" and (t["server"] in half) != (t["client"] in half)

    main, retest, isolate, iso, verdicts = verify(8, across, across, across, rails=2)
    assert isolate["rails"] == {
        "mlx5_1": "rail mlx5_1: lab1-lab4 fail against lab5-lab8: suspect the leaf or its uplinks"
    }
    assert isolate["suspects"] == [] and verdicts == {}


def test_a_rail_wide_half_rate_gets_a_rail_verdict():
    names, health = fabric_of(8, rails=2)
    expect = vfabric.fabric(health)["rails"]
    tests = vplan.plan("main", vplan.all_pairs(names), health, OPTIONS, expect)
    outcomes = {}
    for t in tests:
        gbps = 200.0 if t["rail"] == "mlx5_1" else 390.0
        for side in ("client", "server"):
            outcomes[f"{t['id']}/{side}"] = {
                "id": t["id"],
                "error": None,
                "result": {"ok": True, "rows": [{"bytes": 65536, "bw_average_gbps": gbps}]},
            }
    main = vjudge.judge(tests, outcomes, 3)
    vjudge.merge_retests(main, [])
    isolate = viso.isolation(main, health, OPTIONS)
    assert isolate["rails"] == {
        "mlx5_1": "rail mlx5_1: every pair at ~56% of the expected rate: suspect the expected "
        "rate (rdma_verify_expected_rate_gbps) or the leaf"
    }
    assert isolate["suspects"] == []


def test_undetermined_says_why():
    main, retest, isolate, iso, verdicts = verify(2, lambda t: True, lambda t: True, None)
    for v in verdicts.values():
        assert v["verdict"].endswith(
            "undetermined: no known-good peer on rail mlx5_0 to retest against"
        )


def test_the_report_carries_rail_verdicts():
    names, health = fabric_of(3, rails=1)
    expect = vfabric.fabric(health)["rails"]
    main = run_phase("main", vplan.all_pairs(names), health, lambda t: True, expect)
    isolate = viso.isolation(main, health, LAB)
    doc = rv.report(health, main, dict(isolate, verdicts={}), {"mode": "full"}, "now")
    assert doc["summary"]["rail_verdicts"] == [
        "rail mlx5_0: every pair fails: suspect the leaf or the rail's subnet"
    ]


# Every host sends and receives on every rail, in both modes.
def _directions_per_host(pairs, binary="ib_write_bw"):
    """{host: (peers it sent to, peers it received from)}; ib_write_*: the client sends."""
    out = {}
    for _r, server, client in pairs:
        sender, receiver = (client, server) if viso.sender_is_client(binary) else (server, client)
        out.setdefault(sender, (set(), set()))[0].add(receiver)
        out.setdefault(receiver, (set(), set()))[1].add(sender)
    return out


@pytest.mark.parametrize("mode", ["full", "quick"])
@pytest.mark.parametrize("count", [*range(2, 20), 31, 32, 33, 64])
def test_every_host_sends_to_and_receives_from_two_peers_in_both_modes(mode, count):
    hosts = [f"h{i}" for i in range(count)]
    pairs = vplan.all_pairs(hosts, mode, 2)
    directions = _directions_per_host(pairs)
    want = min(2, count - 1)
    for h in hosts:
        sent, received = directions.get(h, (set(), set()))
        assert len(sent) >= want and len(received) >= want, (h, sent, received)
    # No host twice in a round, whatever the orientation.
    seen = {}
    for r, server, client in pairs:
        for h in (server, client):
            assert (r, h) not in seen, (r, h)
            seen[(r, h)] = True


@pytest.mark.parametrize(("count", "mode"), [(4, "full"), (32, "quick")])
def test_a_bad_receiver_that_only_received_from_a_bad_sender_is_seen(count, mode):
    # The old schedule let one host receive from one peer only (full mode at 4 hosts:
    # lab4 from lab2) or from none (quick mode at 32 hosts: lab18-lab32): with that peer
    # a bad sender, the bad receiver hid behind it. Pick such a pair from the old shape.
    names, health = fabric_of(count, rails=1)
    if count == 4:
        sender, receiver = "lab2", "lab4"
    else:
        sender, receiver = "lab5", "lab20"

    def faults(t):
        return t["client"] == sender or t["server"] == receiver

    expect = vfabric.fabric(health)["rails"]
    main = run_phase("main", vplan.all_pairs(names, mode, 2), health, faults, expect)
    # The receiver's fault shows against a peer that is not the bad sender.
    assert any(
        not r["passed"] and r["server"] == receiver and r["client"] != sender for r in main
    ), "the bad receiver never received from a good sender"
    retest = run_phase("retest", vjudge.retest_pairs(main), health, faults, expect)
    vjudge.merge_retests(main, retest)
    isolate = viso.isolation(main, health, LAB)
    assert f"{receiver} mlx5_0" in isolate["suspects"]
    iso = run_phase("isolate", isolate["pairs"], health, faults, expect)
    verdicts = viso.verdicts(isolate, main + retest + iso, health, LAB)
    bad = {k for k, v in verdicts.items() if v["bad"]}
    assert bad == {f"{sender} mlx5_0", f"{receiver} mlx5_0"}, verdicts
    assert "fails as receiver" in verdicts[f"{receiver} mlx5_0"]["verdict"]


def test_the_docstring_says_what_the_schedule_does():
    doc = vplan.__doc__
    assert "sends to and receives from" in doc


def test_a_port_span_below_two_rounds_of_rails_is_refused_naming_it():
    """Round r's ports are base + (r * rails + rail) % span: with a span of 8 on 8 rails,
    every round used the same 8 ports, so a client could reach a server still in the
    previous round (session 26's review)."""
    names, health = fabric_of(4)
    fabric = vfabric.fabric(health)
    pairs = vplan.all_pairs(names)
    for span in (8, 15):
        refused = f"rdma_verify_port_span is {span} but 8 rails need at least 16"
        with pytest.raises(ValueError, match=refused):
            vplan.plan("main", pairs, health, dict(OPTIONS, port_span=span), fabric["rails"])
    tests = vplan.plan("main", pairs, health, dict(OPTIONS, port_span=16), fabric["rails"])
    by_round = {}
    for t in tests:
        by_round.setdefault(t["round"], set()).add(t["port"])
    rounds = sorted(by_round)
    assert all(not by_round[a] & by_round[b] for a, b in zip(rounds, rounds[1:], strict=False)), (
        by_round
    )
