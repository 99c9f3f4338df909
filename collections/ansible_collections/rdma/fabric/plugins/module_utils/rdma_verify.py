# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The logic of the rdma_verify role, kept out of Jinja so it can be tested.

host_health   per-host checks from rdma.fabric.rdma_health_info, and the host's rails
qos_check     the "RoCE QoS" check: rdma.fabric.roce_qos (state=gathered) against the policy
fabric_checks checks across hosts (the same perftest version everywhere)
plan          rounds of [a, b] pairs -> rounds of perftest tests (argv for both sides)
judge         the tests' outcomes -> one record per test: measured, expected, pass
isolation     who to retest against whom, and the verdict once retested
report        everything the report files are rendered from
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import isolate_rounds
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import (
    bw_average_gbps,
    lat_typical_us,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import desired_qos, mismatches

# RoCE headers on top of the RDMA MTU (GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28,
# ICRC 4: iboe_get_mtu in the kernel): a 4096 active MTU needs a netdev MTU >= 4192.
ROCE_OVERHEAD = 96


def _check(name, ok, detail, device=None, port=None, skipped=False):
    """One check; skipped (not checked, and not failed) only appears when true."""
    out = {"check": name, "device": device, "port": port, "ok": bool(ok), "detail": detail}
    if skipped:
        out["skipped"] = True
    return out


def _selected(ports, expect):
    wanted = expect.get("devices") or []
    layer = expect.get("link_layer") or ""
    chosen = [p for p in ports if not wanted or p["device"] in wanted]
    if layer:
        chosen = [p for p in chosen if p.get("link_layer") == layer]
    return sorted(chosen, key=lambda p: (p["device"], p["port"]))


def host_health(info, expect):
    """{checks: [...], rails: [...], perftest_version} for one host."""
    ports = list(info.get("ports") or [])
    chosen = _selected(ports, expect)
    checks = []
    devices = sorted({p["device"] for p in chosen})
    count = expect.get("device_count") or 0
    found = ", ".join(devices) or "none"
    if count:
        ok, text = len(devices) == count, f"{len(devices)} of {count} ({found})"
    else:
        ok, text = bool(devices), f"found: {found}"
    # A device the inventory asks for must be there (and of the asked link layer).
    present = {p["device"] for p in ports}
    layer = expect.get("link_layer") or ""
    missing = [
        f"{name} (not {layer})" if name in present and layer else name
        for name in expect.get("devices") or []
        if name not in devices
    ]
    if missing:
        ok, text = False, f"{text}; not found: {', '.join(missing)}"
    checks.append(_check("devices", ok, text))
    for problem in info.get("problems") or []:
        checks.append(_check("tools", False, problem))
    rails = []
    for p in chosen:
        dev, num = p["device"], p["port"]
        active = p.get("state") == "ACTIVE" and p.get("phys_state") == "LinkUp"
        checks.append(
            _check("port state", active, f"{p.get('state')}/{p.get('phys_state')}", dev, num)
        )
        want_rate = expect.get("rate_gbps") or 0
        if want_rate:
            rate = p.get("rate_gbps") or 0
            checks.append(
                _check("rate", rate >= want_rate, f"{rate} Gb/s (expected {want_rate})", dev, num)
            )
        want_mtu = expect.get("active_mtu") or 0
        if want_mtu:
            checks.append(
                _check(
                    "active MTU",
                    p.get("active_mtu") == want_mtu,
                    f"{p.get('active_mtu')} (expected {want_mtu})",
                    dev,
                    num,
                )
            )
        address = None
        gid_index = None
        if p.get("link_layer") == "Ethernet":
            need = (want_mtu or p.get("active_mtu") or 0) + ROCE_OVERHEAD
            mtu = p.get("netdev_mtu")
            checks.append(
                _check(
                    "netdev MTU",
                    mtu is not None and mtu >= need,
                    f"{p.get('netdev')} MTU {mtu} (RoCE needs >= {need})",
                    dev,
                    num,
                )
            )
            gid = p.get("roce_v2_gid")
            if gid:
                gid_index, address = gid["index"], gid["ipv4"]
            checks.append(
                _check(
                    "RoCE v2 GID",
                    gid,
                    f"index {gid['index']} ({gid['ipv4']})" if gid else "no RoCE v2 IPv4 GID",
                    dev,
                    num,
                )
            )
        elif p.get("link_layer") == "InfiniBand":
            sm = str(p.get("sm_lid") or "0")
            has_sm = sm not in ("0", "0x0", "0x0000")
            checks.append(_check("subnet manager", has_sm, f"SM LID {sm}", dev, num))
            address = expect.get("address")
        counters = p.get("counters")
        limits = expect.get("counter_max") or {}
        if counters is None:
            checks.append(_check("error counters", True, "no port counters exposed", dev, num))
        else:
            over = {k: counters[k] for k, v in limits.items() if counters.get(k, 0) > v}
            checks.append(
                _check(
                    "error counters",
                    not over,
                    ("over the limit: " + ", ".join(f"{k}={v}" for k, v in over.items()))
                    if over
                    else "under the limits",
                    dev,
                    num,
                )
            )
        rails.append(
            {
                "device": dev,
                "port": num,
                "link_layer": p.get("link_layer"),
                "rate_gbps": p.get("rate_gbps"),
                "gid_index": gid_index,
                "address": address,
                "active": active,
            }
        )
    version = info.get("perftest_version")
    checks.append(_check("perftest", version, f"version {version}" if version else "not found"))
    # The netdevs of the chosen RoCE ports: the ones whose lossless QoS qos_check judges.
    roce = sorted(
        {p["netdev"] for p in chosen if p.get("link_layer") == "Ethernet" and p.get("netdev")}
    )
    return {"checks": checks, "rails": rails, "perftest_version": version, "roce_netdevs": roce}


QOS_CHECK = "RoCE QoS"


def qos_check(gathered, policy, require_hw=True):
    """The "RoCE QoS" check of one host: what rdma.fabric.roce_qos (state=gathered,
    interfaces=the host's RoCE netdevs) read back, against the fabric policy.

    Passes when every netdev matches; fails naming each difference ("eth2: PFC on
    0,0,0,0,0,0,0,0, policy wants priority 3"); a netdev without DCB (virtio, veth) or
    a host without mlnx_qos and dcb is "not checked", a failure only when require_hw
    (the roce_host_qos_require_hw semantics). The comparison is roce_qos.mismatches.
    """
    filled, errors = normalize_policy(policy)
    if errors:
        return _check(QOS_CHECK, False, "rdma_roce_policy is invalid: " + "; ".join(errors))
    if "gathered" not in (gathered or {}):
        reason = (gathered or {}).get("msg") or "rdma.fabric.roce_qos returned no read-back"
        return _check(QOS_CHECK, False, f"cannot read the QoS: {_first_line(reason)}")
    desired = desired_qos(filled)
    differ, unchecked, matched, backends = [], [], [], set()
    for entry in gathered["gathered"]:
        iface = entry["interface"]
        if not entry.get("supported"):
            if entry.get("backend"):
                unchecked.append(
                    f"{iface} has no DCB support ({entry['backend']}: {entry.get('reason')})"
                )
            else:
                unchecked.append(f"{iface}: {entry.get('reason')}")
            continue
        backends.add(entry.get("backend"))
        before, expected = entry.get("before") or {}, entry.get("expected") or {}
        want = expected.get("knobs") or {}
        knobs = [
            {"name": name, "have": have, "want": want[name]}
            for name, have in sorted((before.get("knobs") or {}).items())
            if name in want
        ]
        lines = mismatches(before.get("qos") or {}, desired, knobs)
        if lines:
            differ += [f"{iface}: {line}" for line in lines]
        else:
            matched.append(iface)
    parts = list(differ)
    if unchecked:
        note = "; ".join(unchecked)
        if require_hw:
            parts.append(
                f"{note}: a lossless RoCE port needs a DCB-capable NIC "
                "(rdma_verify_qos_require_hw: false skips such ports)"
            )
        else:
            parts.append(f"not checked: {note}")
    if matched:
        verb = "matches" if len(matched) == 1 else "match"
        tools = ", ".join(sorted(b for b in backends if b))
        parts.append(f"{', '.join(matched)} {verb} rdma_roce_policy ({tools})")
    ok = not differ and not (unchecked and require_hw)
    skipped = ok and not matched
    return _check(QOS_CHECK, ok, "; ".join(parts) or "no RoCE netdev to check", skipped=skipped)


def fabric_checks(health):
    """Checks across hosts: {host: host_health(...)} -> [check]."""
    versions = {}
    for host, h in sorted(health.items()):
        versions.setdefault(h.get("perftest_version") or "missing", []).append(host)
    detail = "; ".join(f"{v}: {', '.join(hosts)}" for v, hosts in sorted(versions.items()))
    return [dict(_check("same perftest version", len(versions) <= 1, detail), host="fabric")]


def _side_argv(options, rail, port, peer_address=None):
    argv = [options["binary"], "-d", rail["device"], "-i", str(rail["port"])]
    if rail.get("gid_index") is not None:
        argv += ["-x", str(rail["gid_index"])]
    argv += ["-F", "--report_gbits", "-p", str(port)]
    argv += [str(a) for a in options.get("args") or []]
    if peer_address:
        argv.append(peer_address)
    return argv


def _expected_gbps(options, a, b):
    if options.get("min_gbps"):
        return float(options["min_gbps"])
    rates = [r.get("rate_gbps") or 0 for r in (a, b)]
    factor = 2 if options.get("bidirectional") else 1
    return round(options.get("min_fraction", 0.9) * min(rates) * factor, 3)


def plan(rounds, health, options, phase="main", first_port_index=0):
    """Rounds of pairs -> rounds of tests, rail i of a with rail i of b.

    options: binary, args (the test options, the same on both sides), kind (bw|lat),
    base_port, port_span, timeout (client), listen_timeout, min_gbps, min_fraction,
    bidirectional, max_latency_us.
    """
    out = []
    index = first_port_index
    span = options.get("port_span") or 1000
    for r, pairs in enumerate(rounds):
        tests = []
        for server, client in pairs:
            s_rails = (health.get(server) or {}).get("rails") or []
            c_rails = (health.get(client) or {}).get("rails") or []
            for rail in range(max(len(s_rails), len(c_rails), 1)):
                port = options.get("base_port", 18515) + index % span
                index += 1
                test = {
                    "id": f"{phase}-{r}-{server}-{client}-{rail}",
                    "phase": phase,
                    "kind": options.get("kind", "bw"),
                    "round": r,
                    "server": server,
                    "client": client,
                    "rail": rail,
                    "port": port,
                    "runnable": False,
                    "error": None,
                    "duration": options.get("duration"),
                }
                missing = [
                    h for h, rails in ((server, s_rails), (client, c_rails)) if len(rails) <= rail
                ]
                if missing:
                    test["error"] = f"{' and '.join(missing)}: no RDMA port for rail {rail}"
                    tests.append(test)
                    continue
                s, c = s_rails[rail], c_rails[rail]
                test.update(
                    server_device=s["device"],
                    client_device=c["device"],
                    expected_gbps=_expected_gbps(options, s, c) if test["kind"] == "bw" else None,
                    max_latency_us=options.get("max_latency_us") or None
                    if test["kind"] == "lat"
                    else None,
                )
                if not s.get("address"):
                    test["error"] = (
                        f"{server}: {s['device']} has no address for perftest to connect to "
                        "(no RoCE v2 IPv4 GID)"
                    )
                    tests.append(test)
                    continue
                timeout = options.get("timeout", 60)
                test["runnable"] = True
                test["server_test"] = {
                    "id": f"{test['id']}/server",
                    "port": port,
                    "argv": _side_argv(options, s, port),
                    "timeout": timeout + options.get("listen_timeout", 30) + 30,
                }
                test["client_test"] = {
                    "id": f"{test['id']}/client",
                    "port": port,
                    "argv": _side_argv(options, c, port, s["address"]),
                    "timeout": timeout,
                }
                tests.append(test)
        out.append(tests)
    if any(len(tests) > span for tests in out):
        raise ValueError(f"a round has more tests than rdma_verify_port_span ({span})")
    return out


def _first_line(text, limit=300):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clock_estimate(result, duration):
    """Gb/s from the last row's iterations x bytes over the -D duration, when perftest
    printed zeros because it could not calibrate its clock; else None."""
    rows = result.get("rows") or []
    if not (result.get("clock_error") and duration and rows):
        return None
    last = rows[-1]
    if not last.get("iterations") or not last.get("bytes") or last.get("bw_average_gbps"):
        return None
    factor = 2 if "Bidirectional" in (result.get("test") or "") else 1
    return round(last["bytes"] * last["iterations"] * 8 * factor / duration / 1e9, 6)


def judge(rounds, outcomes):
    """Planned tests + the perftest_run outcomes -> one record per test."""
    by_id = {o["id"]: o for o in outcomes or []}
    records = []
    for tests in rounds:
        for test in tests:
            record = {
                k: test.get(k)
                for k in (
                    "id",
                    "phase",
                    "kind",
                    "round",
                    "server",
                    "client",
                    "rail",
                    "port",
                    "server_device",
                    "client_device",
                    "expected_gbps",
                    "max_latency_us",
                )
            }
            record.update(
                measured_gbps=None, latency_us=None, passed=False, error=test.get("error")
            )
            if test.get("runnable"):
                client = by_id.get(f"{test['id']}/client")
                server = by_id.get(f"{test['id']}/server")
                errors = []
                if client is None:
                    errors.append(f"client {test['client']}: no result (host failed?)")
                elif client.get("error") and not client["error"].startswith("not run"):
                    errors.append(f"client {test['client']}: {client['error']}")
                if server is not None and server.get("error"):
                    errors.append(f"server {test['server']}: {server['error']}")
                result = (client or {}).get("result") or {}
                record["rows"] = result.get("rows") or []
                record["mtu"] = result.get("mtu")
                if test["kind"] == "bw":
                    record["measured_gbps"] = bw_average_gbps(result)
                    estimate = _clock_estimate(result, test.get("duration"))
                    if estimate is not None:
                        record["measured_gbps"] = estimate
                        record["note"] = (
                            f"perftest could not calibrate its clock ({result['clock_error']}): "
                            "Gb/s estimated from iterations x size / duration"
                        )
                    measured = record["measured_gbps"]
                    if not errors and measured is not None and measured < test["expected_gbps"]:
                        errors.append(
                            f"{measured} Gb/s is below the expected {test['expected_gbps']} Gb/s"
                        )
                else:
                    record["latency_us"] = lat_typical_us(result)
                    limit = test.get("max_latency_us")
                    lat = record["latency_us"]
                    if not errors and lat is not None and limit and lat > limit:
                        errors.append(f"{lat} us is above the limit of {limit} us")
                if not errors and not result.get("ok"):
                    errors.append(f"client {test['client']}: {result.get('error')}")
                record["error"] = _first_line("; ".join(errors)) if errors else None
                if errors and client is not None:
                    record["client_output"] = (client.get("stdout") or "")[-2000:] + (
                        client.get("stderr") or ""
                    )[-1000:]
            record["passed"] = record["error"] is None
            records.append(record)
    return records


def isolation(records, health):
    """Suspects, known-good hosts, and the retest rounds ([[suspect, good], ...]).

    A passed pair proves both of its hosts: known-good = hosts with a passed test.
    Suspects = hosts with a failed test and none passed; they are retested against a
    known-good host. A host without a testable rail cannot be retested.
    """
    good, failed = set(), set()
    for r in records:
        target = good if r["passed"] else failed
        target.update((r["server"], r["client"]))
    hosts = sorted(health)
    suspects = [h for h in hosts if h in failed and h not in good]
    untestable = [h for h in suspects if not (health.get(h) or {}).get("rails")]
    testable = [h for h in suspects if h not in untestable]
    known_good = [h for h in hosts if h in good]
    return {
        "suspects": suspects,
        "good": known_good,
        "untestable": untestable,
        "rounds": isolate_rounds(testable, known_good),
    }


def verdicts(isolate, records):
    """{host: verdict} for every suspect once the isolate rounds ran."""
    out = {}
    retests = [r for r in records if r["phase"] == "isolate"]
    for host in isolate["suspects"]:
        mine = [r for r in retests if host in (r["server"], r["client"])]
        if host in isolate["untestable"]:
            out[host] = {"bad": True, "verdict": "bad host: no testable RDMA port"}
        elif not mine:
            out[host] = {"bad": None, "verdict": "undetermined: no host passed to retest against"}
        elif all(r["passed"] for r in mine):
            peers = sorted({r["server"] if r["client"] == host else r["client"] for r in mine})
            out[host] = {
                "bad": False,
                "verdict": f"good host, bad peer: passed against {', '.join(peers)}",
            }
        else:
            peers = sorted({r["server"] if r["client"] == host else r["client"] for r in mine})
            out[host] = {
                "bad": True,
                "verdict": f"bad host: failed again against known-good {', '.join(peers)}",
            }
    return out


def _matrix(hosts, records):
    cells = {}
    for r in records:
        if r["kind"] != "bw":
            continue
        key = tuple(sorted((r["server"], r["client"])))
        cell = cells.setdefault(key, {"gbps": None, "passed": True, "expected": None})
        if r["measured_gbps"] is not None:
            cell["gbps"] = (
                r["measured_gbps"]
                if cell["gbps"] is None
                else min(cell["gbps"], r["measured_gbps"])
            )
        cell["expected"] = r["expected_gbps"]
        cell["passed"] = cell["passed"] and r["passed"]
    rows = []
    for a in hosts:
        row = []
        for b in hosts:
            cell = cells.get(tuple(sorted((a, b)))) if a != b else None
            if cell and cell["expected"]:
                ratio = (cell["gbps"] or 0) / cell["expected"]
                cell = dict(cell, ratio=round(ratio, 3))
            row.append(cell)
        rows.append(row)
    return {"hosts": hosts, "rows": rows}


def report(health, records, isolate, options, stamp):
    """The document results.json holds; report.md/html and junit.xml render from it."""
    hosts = sorted(health)
    checks = fabric_checks(health)
    for host in hosts:
        checks += [dict(c, host=host) for c in health[host]["checks"]]
    verdict = verdicts(isolate, records) if isolate else {}
    failed_checks = [c for c in checks if not c["ok"]]
    skipped_checks = [c for c in checks if c.get("skipped")]
    failed_tests = [r for r in records if not r["passed"]]
    summary = {
        "hosts": len(hosts),
        "checks": len(checks),
        "checks_failed": len(failed_checks),
        "checks_skipped": len(skipped_checks),
        "tests": len(records),
        "tests_passed": len(records) - len(failed_tests),
        "tests_failed": len(failed_tests),
        "bad_hosts": sorted(h for h, v in verdict.items() if v["bad"]),
        "passed": not failed_checks and not failed_tests,
    }
    return {
        "generated_utc": stamp,
        "options": options,
        "summary": summary,
        "hosts": {
            h: {"rails": health[h]["rails"], "perftest_version": health[h]["perftest_version"]}
            for h in hosts
        },
        "checks": checks,
        "pairs": records,
        "isolation": dict(isolate or {}, verdicts=verdict),
        "matrix": _matrix(hosts, records),
    }
