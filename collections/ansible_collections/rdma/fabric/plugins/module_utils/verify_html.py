# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report.html of rdma_verify, from the results document (rdma_verify.report).

Read top down by someone bringing up a rack: the verdict, then what failed (bad host
rails, rail-level patterns, unreachable hosts, failed checks grouped by check, failed
tests), then one bandwidth heat-map per rail as small multiples (row = sender, column =
receiver, colour = measured / pass mark, green from the pass mark up; numbers in the
cells up to 16 hosts, a tooltip beyond), the cabling per leaf, and the health checks and
tests folded (<details>) with their counts. No script, no external resource: the file
opens offline. Heat-maps are drawn up to MAX_MAP_HOSTS hosts (beyond, a grid is no
longer readable and its size grows with the square of the hosts).
"""

from __future__ import annotations

from html import escape

from ansible_collections.rdma.fabric.plugins.module_utils import verify_scope

NUMBERS_UP_TO = 16
# Failed tests listed before the heat-maps; the rest folded.
FAILURES_SHOWN = 12
# Beyond this many tests the page lists none but the failures (results.json has them).
TESTS_LISTED_UP_TO = 5000
MAX_MAP_HOSTS = 256
# Width a rail's map may take, so that 4 maps sit side by side on a 1,600 px screen.
MAP_WIDTH_PX = 340

STYLE = """
body { font-family: sans-serif; margin: 1.2em; color: #222; max-width: 1560px; }
h1 .pass { color: #17692b; } h1 .fail { color: #a31515; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
td.detail { max-width: 60em; overflow-wrap: anywhere; }
tr.fail td.result { background: #f4b6b6; font-weight: bold; }
ul.verdicts li { margin: 0.3em 0; }
.maps { display: flex; flex-wrap: wrap; gap: 12px; }
.maps figure { margin: 0; }
.maps figcaption { font-weight: bold; margin-bottom: 0.2em; }
table.heat { table-layout: fixed; border-collapse: collapse; margin: 0; }
table.heat td, table.heat th { border: 1px solid #fff; padding: 0; text-align: center; }
table.heat.numbers td { min-width: 3em; padding: 0.1em 0.2em; font-size: 0.8em; }
table.heat th { font-size: 0.7em; font-weight: normal; white-space: nowrap; }
table.heat th.row { text-align: right; padding-right: 0.3em; }
td.self { background: #ddd; } td.none { background: #f7f7f7; }
.legend span { display: inline-block; padding: 0.1em 0.5em; margin-right: 0.3em; }
details { margin: 0.4em 0; } summary { cursor: pointer; }
"""

# Colours of a cell: green from the pass mark up (darker the more headroom), red below
# (darker the further below), orange flaky, grey when the test said nothing of the link.
GREY = "hsl(0, 0%, 80%)"


def _e(value):
    return escape("" if value is None else str(value))


# Colours in steps (a class per step keeps a 256-host page small): STEPS greens from the
# pass mark to 25 % above it, STEPS reds from just below it to nothing.
STEPS = 6


def cell_class(ratio, outcome):
    """The colour class of a heat-map cell: g0..g5 passed (darker, more headroom), r0..r5
    failed (darker, further below the pass mark), fl flaky, gy peer lost / not run."""
    if outcome in ("peer lost", "not run"):
        return "gy"
    if outcome == "flaky":
        return "fl"
    if outcome == "passed":
        headroom = min(max((ratio or 1.0) - 1.0, 0.0), 0.25) / 0.25
        return f"g{round(headroom * (STEPS - 1))}"
    shortfall = 1.0 - min(max(ratio or 0.0, 0.0), 1.0)
    return f"r{round(shortfall * (STEPS - 1))}"


def class_colour(name):
    """The background of a colour class."""
    if name == "gy":
        return GREY
    if name == "fl":
        return "hsl(35, 90%, 70%)"
    hue, saturation = (125, 55) if name[0] == "g" else (0, 70)
    return f"hsl({hue}, {saturation}%, {78 - 6 * int(name[1:])}%)"


def cell_colour(ratio, outcome):
    """The background of a heat-map cell."""
    return class_colour(cell_class(ratio, outcome))


COLOUR_STYLE = "".join(
    f"table.heat td.{name} {{ background: {class_colour(name)}; }}\n"
    for name in [*(f"g{i}" for i in range(STEPS)), *(f"r{i}" for i in range(STEPS)), "fl", "gy"]
)


def _cell_size(count):
    return max(3, min(14, MAP_WIDTH_PX // max(count, 1)))


def heat_map(rail, matrix, expected=None):
    """One rail's map: a table (numbers up to NUMBERS_UP_TO hosts), or a note."""
    hosts = matrix.get("hosts") or []
    if len(hosts) > MAX_MAP_HOSTS:
        return (
            f"<figure><figcaption>{_e(rail)}</figcaption><p>{len(hosts)} hosts: no heat-map "
            f"above {MAX_MAP_HOSTS} (see the failures above and results.json)</p></figure>"
        )
    cells = {(c[0], c[1]): c for c in matrix.get("cells") or []}
    numbers = len(hosts) <= NUMBERS_UP_TO
    size = _cell_size(len(hosts))
    out = [f"<figure><figcaption>{_e(rail)}</figcaption>"]
    if numbers:
        out.append('<table class="heat numbers">')
        out.append("<tr><th></th>" + "".join(f"<th>{_e(h)}</th>" for h in hosts) + "</tr>")
    else:
        # One size for every cell of the map, from its own style rule.
        out.append(f"<style>table.heat.s{size} td {{ width: {size}px; height: {size}px; }}</style>")
        out.append(f'<table class="heat s{size}">')
    for i, sender in enumerate(hosts):
        row = [f'<tr><th class="row">{_e(sender)}</th>']
        for j, receiver in enumerate(hosts):
            if i == j:
                row.append('<td class="self"></td>')
                continue
            cell = cells.get((i, j))
            if cell is None:
                row.append('<td class="none"></td>')
                continue
            _i, _j, gbps, ratio, outcome = cell
            text = "no result" if gbps is None else f"{gbps:g}"
            tip = f"{sender} -> {receiver} on {rail}: {text} Gb/s ({outcome}"
            tip += f", {ratio:.0%} of the pass mark)" if ratio is not None else ")"
            body = _e(text) if numbers else ""
            row.append(f'<td class="{cell_class(ratio, outcome)}" title="{_e(tip)}">{body}</td>')
        out.append("".join(row) + "</tr>")
    out.append("</table>")
    if expected:
        out.append(f"<small>pass mark {_e(expected)} Gb/s</small>")
    out.append("</figure>")
    return "\n".join(out)


def _legend():
    items = [
        (cell_colour(1.3, "passed"), "passed, headroom"),
        (cell_colour(1.0, "passed"), "passed, at the pass mark"),
        (cell_colour(0.9, "failed"), "failed, just below"),
        (cell_colour(0.1, "failed"), "failed, far below"),
        (cell_colour(None, "flaky"), "flaky (passed on retest)"),
        (GREY, "peer lost / not run"),
        ("hsl(0, 0%, 97%)", "not tested"),
    ]
    return (
        '<p class="legend">'
        + "".join(f'<span style="background:{c}">{_e(t)}</span>' for c, t in items)
        + "</p>"
    )


def _table(head, rows):
    out = ["<table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"]
    for cls, cells in rows:
        out.append(
            f'<tr class="{cls}">'
            + "".join(f'<td class="{k}">{_e(v)}</td>' for k, v in cells)
            + "</tr>"
        )
    out.append("</table>")
    return "\n".join(out)


def _measured(p):
    if p.get("kind") == "bw":
        return "-" if p.get("measured_gbps") is None else f"{p['measured_gbps']} Gb/s"
    return "-" if p.get("latency_us") is None else f"{p['latency_us']} us"


def _expected(p):
    if p.get("expected_gbps") is not None:
        return f"{p['expected_gbps']} Gb/s"
    return f"{p['max_latency_us']} us" if p.get("max_latency_us") else "-"


def _test_rows(pairs):
    for p in pairs:
        outcome = p.get("outcome") or ("passed" if p.get("passed") else "failed")
        yield (
            "pass" if outcome in ("passed", "flaky") else "fail",
            [
                ("", f"{p.get('phase')} {p.get('kind')}"),
                ("", p.get("client")),
                ("", p.get("server")),
                ("", p.get("rail")),
                ("", f"{p.get('client_device') or '-'} / {p.get('server_device') or '-'}"),
                ("", _measured(p)),
                ("", _expected(p)),
                ("result", outcome.upper()),
                ("detail", p.get("error") or ""),
            ],
        )


TEST_HEAD = [
    "phase",
    "client",
    "server",
    "rail",
    "devices",
    "measured",
    "pass mark",
    "result",
    "error",
]


def _failures(doc):
    s = doc["summary"]
    out = ["<h2>Verdicts and failures</h2>", '<ul class="verdicts">']
    verdicts = (doc.get("isolation") or {}).get("verdicts") or {}
    bad = [v for v in verdicts.values() if v.get("bad")]
    for v in bad:
        out.append(
            f"<li><strong>{_e(v.get('host'))} {_e(v.get('rail'))}</strong>: "
            f"{_e(v.get('verdict'))}</li>"
        )
    for text in s.get("rail_verdicts") or []:
        out.append(f"<li><strong>rail</strong>: {_e(text)}</li>")
    if s.get("unreachable"):
        out.append(
            "<li><strong>unreachable</strong> (not verified): "
            f"{_e(', '.join(s['unreachable']))}</li>"
        )
    scope = s.get("partial")
    if scope:
        out.append(f"<li><strong>partial run</strong>: {_e(verify_scope.partial_text(scope))}</li>")
    failed_checks = {}
    for c in doc.get("checks") or []:
        if not c.get("ok"):
            failed_checks.setdefault(c["check"], []).append(c)
    for name, items in sorted(failed_checks.items()):
        where = "; ".join(
            f"{c.get('host')}{(' ' + str(c['device'])) if c.get('device') else ''}: "
            f"{c.get('detail')}"
            for c in items
        )
        out.append(f"<li><strong>{_e(name)}</strong> failed on {len(items)}: {_e(where)}</li>")
    for v in verdicts.values():
        if not v.get("bad") and v.get("verdict"):
            out.append(f"<li>{_e(v.get('host'))} {_e(v.get('rail'))}: {_e(v.get('verdict'))}</li>")
    if len(out) == 2:
        out.append("<li>none: every check and test passed</li>")
    out.append("</ul>")
    # The final tests (after retest) that did not pass; retests and isolation tests are
    # in the folded list of all tests.
    failed = [
        p
        for p in doc.get("pairs") or []
        if p.get("phase") in ("main", "latency")
        and (p.get("outcome") or ("passed" if p.get("passed") else "failed")) != "passed"
    ]
    if failed:
        out.append(f"<h3>Tests not passed ({len(failed)})</h3>")
        out.append(_table(TEST_HEAD, _test_rows(failed[:FAILURES_SHOWN])))
        if len(failed) > FAILURES_SHOWN:
            out.append(f"<details><summary>{len(failed) - FAILURES_SHOWN} more</summary>")
            out.append(_table(TEST_HEAD, _test_rows(failed[FAILURES_SHOWN:])))
            out.append("</details>")
    return "\n".join(out)


def _cabling(rows):
    if not rows:
        return ""
    out = ["<h2>Cabling (per planned leaf)</h2>"]
    by_leaf = {}
    for row in rows:
        by_leaf.setdefault(row.get("planned_leaf") or "-", []).append(row)
    for leaf in sorted(by_leaf, key=str):
        items = sorted(
            by_leaf[leaf], key=lambda r: (str(r.get("planned_port") or ""), str(r.get("host")))
        )
        bad = sum(1 for r in items if r.get("status") != "planned")
        out.append(f"<h3>{_e(leaf)}: {len(items)} ports, {bad} not as planned</h3>")
        out.append(
            _table(
                ["planned port", "host", "rail", "device", "netdev", "reaches", "result"],
                (
                    (
                        "pass" if r.get("status") == "planned" else "fail",
                        [
                            ("", r.get("planned_port") or "-"),
                            ("", r.get("host")),
                            ("", r.get("rail")),
                            ("", r.get("device") or "-"),
                            ("", r.get("netdev") or "-"),
                            ("", f"{r.get('leaf') or '-'} {r.get('port') or ''}".strip()),
                            (
                                "result",
                                (
                                    "ok"
                                    if r.get("status") == "planned"
                                    else str(r.get("status")).upper()
                                )
                                + f": {r.get('detail')}",
                            ),
                        ],
                    )
                    for r in items
                ),
            )
        )
    return "\n".join(out)


def _health(checks):
    by_check = {}
    for c in checks:
        by_check.setdefault(c["check"], []).append(c)
    out = ["<h2>Health checks</h2>"]
    for name, items in sorted(by_check.items()):
        failed = sum(1 for c in items if not c.get("ok"))
        skipped = sum(1 for c in items if c.get("ok") and c.get("skipped"))
        counts = f"{len(items) - failed - skipped} ok, {failed} failed" + (
            f", {skipped} not checked" if skipped else ""
        )
        out.append(f"<details><summary>{_e(name)}: {counts}</summary>")
        out.append(
            _table(
                ["host", "device/port", "result", "detail"],
                (
                    (
                        "pass" if c.get("ok") else "fail",
                        [
                            ("", c.get("host")),
                            ("", f"{c['device']}/{c.get('port')}" if c.get("device") else "-"),
                            (
                                "result",
                                ("not checked" if c.get("skipped") else "ok")
                                if c.get("ok")
                                else "FAIL",
                            ),
                            ("detail", c.get("detail")),
                        ],
                    )
                    for c in sorted(items, key=lambda c: (bool(c.get("ok")), str(c.get("host"))))
                ),
            )
        )
        out.append("</details>")
    return "\n".join(out)


def _rails_table(rails):
    rows = []
    for name, r in rails.items():
        rate = f"{r.get('gbps')} Gb/s {r.get('width') or ''} {r.get('speed') or ''}".strip()
        rows.append(
            (
                "fail" if r.get("ambiguous") else "pass",
                [
                    ("", name),
                    ("", f"{rate} (usable {r.get('usable_gbps')})"),
                    ("", f"{r.get('agree')}/{r.get('ports')}"),
                ],
            )
        )
    return _table(["rail", "expected rate", "ports agreeing"], rows) if rows else ""


def render(doc, cabling_rows=None):
    """The whole report.html text."""
    return "".join(render_parts(doc, cabling_rows))


def render_parts(doc, cabling_rows=None):
    """report.html part by part (each with its newline), for a writer that never holds
    the whole page (its heat-maps grow with the tests up to MAX_MAP_HOSTS hosts)."""
    for part in _parts(doc, cabling_rows):
        if part:
            yield part + "\n"


def _parts(doc, cabling_rows):
    s = doc["summary"]
    verdict = "PASSED" if s.get("passed") else "FAILED"
    status = "pass" if s.get("passed") else "fail"
    checks_ok = s["checks"] - s["checks_failed"] - s.get("checks_skipped", 0)
    yield from [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>RDMA verification {_e(doc.get('generated_utc'))}: {verdict}</title>",
        f"<style>{STYLE}{COLOUR_STYLE}</style></head><body>",
        f'<h1>RDMA verification <span class="{status}">{verdict}</span></h1>',
        f"<p>{_e(doc.get('generated_utc'))} &middot; {s['hosts']} hosts &middot; mode "
        f"{_e((doc.get('options') or {}).get('mode'))} &middot; health checks {checks_ok}/"
        f"{s['checks']} passed &middot; tests {s['tests_passed']}/{s['tests']} passed"
        + (f", {s['tests_flaky']} flaky" if s.get("tests_flaky") else "")
        + (f", {s['tests_failed']} failed" if s.get("tests_failed") else "")
        + "</p>",
        _failures(doc),
    ]
    rails = doc.get("rails") or {}
    maps = doc.get("matrix") or {}
    if maps:
        yield "<h2>Bandwidth per rail (row = sender, column = receiver)</h2>"
        yield _legend()
        yield '<div class="maps">'
        for rail, matrix in maps.items():
            pass_mark = None
            for p in doc.get("pairs") or []:
                if p.get("rail") == rail and p.get("expected_gbps"):
                    pass_mark = p["expected_gbps"]
                    break
            yield heat_map(rail, matrix, pass_mark)
        yield "</div>"
    yield _rails_table(rails)
    yield _cabling(cabling_rows)
    yield _health(doc.get("checks") or [])
    pairs = doc.get("pairs") or []
    passed = sum(1 for p in pairs if p.get("outcome") == "passed")
    if len(pairs) > TESTS_LISTED_UP_TO:
        yield (
            f"<h2>Tests</h2><p>{len(pairs)} tests ({passed} passed): more than "
            f"{TESTS_LISTED_UP_TO:,}, listed in results.json only (the failures are above)</p>"
        )
    else:
        yield f"<h2>Tests</h2><details><summary>all {len(pairs)} tests ({passed} passed)</summary>"
        yield _table(TEST_HEAD, _test_rows(pairs))
        yield "</details>"
    yield "</body></html>"
