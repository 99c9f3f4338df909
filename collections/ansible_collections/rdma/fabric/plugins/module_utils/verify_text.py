# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report.md and junit.xml of rdma_verify, from the results document (rdma_verify.report),
written by the report step in Python, and the brief the step returns to the play.

They were Jinja templates fed the whole results document through Ansible: at 1,024 hosts
x 8 rails full (4.2 million tests) that document is gigabytes held in a registered
variable and walked by Jinja. Now the play gets only `brief()`: the summary, the failed
checks, the failed and flaky tests and the isolation verdicts (what the summary lines and
the fail message show). Beyond TESTS_LISTED_UP_TO tests, report.md's test table lists the
tests that did not pass only (results.json has every test), as report.html does.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from ansible_collections.rdma.fabric.plugins.module_utils import verify_scope
from ansible_collections.rdma.fabric.plugins.module_utils.verify_html import TESTS_LISTED_UP_TO

NOT_PASSED = ("failed", "flaky", "peer lost", "not run")


def _s(value):
    """A value joined into text (None as 'None', numbers as str), as Jinja's `~` did."""
    return str(value)


def _v(value):
    """A value printed on its own, as Ansible's `{{ }}` did (None as nothing)."""
    return "" if value is None else str(value)


def _cell(value):
    return _s(value).replace("|", "\\|")


def _or(value, fallback):
    """Jinja's default(fallback, true): the fallback for None and empty values."""
    return value if value else fallback


def _where(check):
    return f"{check['device']}/{check['port']}" if check.get("device") else ""


def brief(doc):
    """What the play needs of the results: summary lines, fail messages (bounded by the
    failures, not by the tests)."""
    return {
        "summary": doc["summary"],
        "results_file": doc.get("results_file", "results.json"),
        "checks": [c for c in doc["checks"] if not c["ok"]],
        # As plain dicts: the records may be compact ones (verify_record.Record).
        "pairs": [dict(p) for p in doc["pairs"] if p.get("outcome") in ("failed", "flaky")],
        "isolation": {"verdicts": (doc.get("isolation") or {}).get("verdicts") or {}},
        "partial_line": verify_scope.partial_line(
            doc["summary"].get("partial"),
            (doc.get("options") or {}).get("fabric_group") or "rdma_hosts",
        ),
    }


def _counts_line(s, mode):
    checked = s["checks"] - s["checks_failed"] - s["checks_skipped"]
    line = f"{s['hosts']} hosts, mode {mode}; health checks {checked}/{s['checks']} passed"
    if s["checks_skipped"]:
        line += f", {s['checks_skipped']} not checked"
    line += (
        f";\ntests {s['tests_passed']}/{s['tests']} passed, {s['tests_flaky']} flaky "
        f"(failed, then passed on retest), {s['tests_failed']} failed"
    )
    if s.get("tests_peer_lost"):
        line += f", {s['tests_peer_lost']} peer lost (a host lost during traffic)"
    if s.get("tests_not_run"):
        line += (
            f", {s['tests_not_run']} not run (each with its reason: a miscabled rail, no pass mark)"
        )
    return line + "."


def _head(doc):
    s = doc["summary"]
    out = [
        f"# RDMA verification {doc['generated_utc']}: {'PASSED' if s['passed'] else 'FAILED'}",
        "",
        _counts_line(s, doc["options"]["mode"]),
    ]
    if s["bad_rails"]:
        out.append(f"Bad host rails (isolated): {', '.join(s['bad_rails'])}")
    out += [f"Rail pattern: {v}" for v in s.get("rail_verdicts") or []]
    if s["unreachable"]:
        out.append(f"Unreachable (not verified): {', '.join(s['unreachable'])}")
    scope = s.get("partial")
    if scope:
        out.append(f"Partial run (--limit): {verify_scope.partial_text(scope)}")
    name = doc.get("results_file") or "results.json"
    if name != "results.json":
        out.append(
            f"Every test is in {name} (gzip-compressed JSON: more than 200,000 tests; "
            f"`zcat {name} | jq .summary`), and in junit.xml.gz (gzip-compressed too: "
            "CI tools read junit.xml, `zcat junit.xml.gz > junit.xml` first)."
        )
    return out


def _failures(doc):
    checks = [c for c in doc["checks"] if not c["ok"]]
    pairs = [p for p in doc["pairs"] if p.get("outcome") in NOT_PASSED]
    out = ["", "## Failures"]
    if not checks and not pairs:
        return out + ["", "None."]
    out += ["", "| what | host / pair | detail |", "| --- | --- | --- |"]
    for c in checks:
        where = f" {_where(c)}" if c.get("device") else ""
        out.append(f"| check {c['check']} | {c['host']}{where} | {_cell(c['detail'])} |")
    for p in pairs:
        out.append(
            f"| {p['phase']} {p['kind']} {p['outcome']} | {p['server']} <- {p['client']} "
            f"(rail {p['rail']}) | {_cell(p.get('error') or '')} |"
        )
    return out


def _isolation(doc):
    verdicts = (doc.get("isolation") or {}).get("verdicts") or {}
    if not verdicts:
        return []
    out = [
        "",
        "## Isolation (per host rail, both directions against known-good peers)",
        "",
        "| host | rail | verdict |",
        "| --- | --- | --- |",
    ]
    return out + [
        f"| {v['host']} | {v['rail']} | {_cell(v['verdict'])} |" for v in verdicts.values()
    ]


def _by_port(rows):
    try:
        return sorted(rows, key=lambda row: row.get("planned_port"))
    except TypeError:  # a port missing from the plan among named ones
        return sorted(
            rows, key=lambda row: (row.get("planned_port") is None, str(row.get("planned_port")))
        )


def _cabling(rows):
    if not rows:
        return []
    out = ["## Cabling", ""]
    leaves = {}
    for row in rows:
        leaves.setdefault(row.get("planned_leaf"), []).append(row)
    for leaf in sorted(leaves, key=lambda name: (name is None, str(name))):
        out += [
            f"### {leaf}",
            "",
            "| planned port | host | rail | device | netdev | reaches | result |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for c in _by_port(leaves[leaf]):
            reaches = f"{_or(c.get('leaf'), '-')} {_or(c.get('port'), '')}".strip()
            result = "ok" if c["status"] == "planned" else c["status"].upper()
            out.append(
                f"| {_or(c.get('planned_port'), '-')} | {c['host']} | {c['rail']} | "
                f"{_or(c.get('device'), '-')} | {_or(c.get('netdev'), '-')} | {reaches} | "
                f"{result}: {_cell(c['detail'])} |"
            )
        out += ["", ""]
    return out


def _rails(doc):
    out = ["## Rails", "", "| rail | expected rate | ports agreeing |", "| --- | --- | --- |"]
    for name, rail in doc["rails"].items():
        out.append(
            f"| {name} | {_v(rail['gbps'])} Gb/s {rail.get('width') or ''} "
            f"{rail.get('speed') or ''} "
            f"(usable {_v(rail['usable_gbps'])}) | {rail['agree']}/{rail['ports']} |"
        )
    return out


def _measured(p):
    if p["kind"] == "bw" and p.get("measured_gbps") is not None:
        return f"{p['measured_gbps']} Gb/s"
    return f"{p['latency_us']} us" if p.get("latency_us") is not None else "-"


def _expected(p):
    if p.get("expected_gbps") is not None:
        return f"{p['expected_gbps']} Gb/s"
    return f"{p['max_latency_us']} us" if p.get("max_latency_us") else "-"


def _deltas(p):
    return "".join(
        f"{side}: " + "".join(f"{k} +{v} " for k, v in d.items())
        for side, d in (p.get("deltas") or {}).items()
    )


def _tests(doc):
    pairs = doc["pairs"]
    out = ["", "## Tests", ""]
    if len(pairs) > TESTS_LISTED_UP_TO:
        pairs = [p for p in pairs if p.get("outcome") in NOT_PASSED]
        name = doc.get("results_file") or "results.json"
        out += [
            f"{len(doc['pairs'])} tests: those that did not pass below; every test is in {name}.",
            "",
        ]
    out += [
        "| phase | server | client | rail | devices | port | measured | expected | result "
        "| counter deltas |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in pairs:
        result = (p.get("outcome") or ("passed" if p.get("passed") else "failed")).upper()
        out.append(
            f"| {p['phase']} {p['kind']} | {p['server']} | {p['client']} | {p['rail']} | "
            f"{_or(p.get('server_device'), '-')} / {_or(p.get('client_device'), '-')} | "
            f"{p['port']} | {_measured(p)} | {_expected(p)} | {result} | {_deltas(p)} |"
        )
    return out


def _health(doc):
    out = [
        "",
        "## Health checks",
        "",
        "| host | device/port | check | result | detail |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in doc["checks"]:
        result = ("not checked" if c.get("skipped") else "ok") if c["ok"] else "FAIL"
        out.append(
            f"| {c['host']} | {_where(c) or '-'} | {c['check']} | {result} | {_cell(c['detail'])} |"
        )
    return out


def markdown(doc, cabling_rows=None):
    """report.md: verdict and counts, failures, isolation, cabling per leaf, rails, tests,
    health checks."""
    lines = _head(doc) + _failures(doc) + _isolation(doc) + [""]
    lines += _cabling(cabling_rows or []) + _rails(doc) + _tests(doc) + _health(doc)
    return "\n".join(lines) + "\n"


def junit(doc):
    """junit.xml: a health suite (one case per check) and a perftest suite (one per test)."""
    return "".join(junit_lines(doc))


def junit_lines(doc):
    """junit.xml line by line (each with its newline), for a writer that never holds the
    whole text: it is about 190 bytes a test, 0.8 GB at 1,024 x 8 full."""
    checks, pairs = doc["checks"], doc["pairs"]
    checks_failed = sum(1 for c in checks if not c["ok"])
    pairs_failed = sum(1 for p in pairs if p.get("outcome") == "failed")
    skipped_checks = sum(1 for c in checks if c.get("skipped"))
    not_run = sum(1 for p in pairs if p.get("outcome") == "not run")
    stamp = quoteattr(_s(doc["generated_utc"]))
    yield '<?xml version="1.0" encoding="UTF-8"?>\n'
    yield (
        f'<testsuites name="rdma_verify" tests="{len(checks) + len(pairs)}" '
        f'failures="{checks_failed + pairs_failed}">\n'
    )
    yield (
        f'  <testsuite name="health" tests="{len(checks)}" failures="{checks_failed}" '
        f'skipped="{skipped_checks}" timestamp={stamp}>\n'
    )
    for c in checks:
        yield "".join(f"{line}\n" for line in _junit_check(c))
    yield "  </testsuite>\n"
    yield (
        f'  <testsuite name="perftest" tests="{len(pairs)}" failures="{pairs_failed}" '
        f'skipped="{not_run}" timestamp={stamp}>\n'
    )
    for p in pairs:
        yield "".join(f"{line}\n" for line in _junit_test(p))
    yield "  </testsuite>\n</testsuites>\n"


def _junit_check(c):
    name = c["check"] + (f" {_where(c)}" if c.get("device") else "")
    detail = quoteattr(_s(c["detail"]))
    out = [
        f"    <testcase classname={quoteattr('health.' + _s(c['host']))} name={quoteattr(name)}>"
    ]
    if not c["ok"]:
        out.append(f"      <failure message={detail}/>")
    elif c.get("skipped"):
        out.append(f"      <skipped message={detail}/>")
    return out + [f"      <system-out>{escape(_s(c['detail']))}</system-out>", "    </testcase>"]


def _junit_test(p):
    classname = quoteattr(f"perftest.{p['phase']}.{p['kind']}.{p['rail']}")
    name = quoteattr(f"{p['server']} <- {p['client']} rail {p['rail']}")
    out = [f"    <testcase classname={classname} name={name}>"]
    if p.get("outcome") == "failed":
        out.append(f"      <failure message={quoteattr(p.get('error') or 'failed')}/>")
    elif p.get("outcome") == "not run":
        out.append(f"      <skipped message={quoteattr(p.get('error') or 'not run')}/>")
    elif not p.get("passed"):
        out.append(
            f"      <system-err>{escape(_s(p.get('outcome')))}: "
            f"{escape(p.get('error') or '')}</system-err>"
        )
    if p["kind"] == "bw":
        said = f"measured {p.get('measured_gbps')} Gb/s, expected {p.get('expected_gbps')} Gb/s"
    else:
        said = f"latency {p.get('latency_us')} us"
    return out + [f"      <system-out>{escape(said)}</system-out>", "    </testcase>"]
