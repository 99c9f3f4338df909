"""report.html (module_utils/verify_html.py): verdicts and failures first, one directional
heat-map per rail as small multiples, numbers only up to 16 hosts, green from the pass
mark up, checks and tests folded; opened in a real headless browser (Debian's
chromium-headless-shell, installed by tests/harness/install-deps.sh) at 64 hosts x 8
rails: no horizontal overflow on a 1,600 px screen."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_html
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from test_verify_tests import LAB, fabric_of, run_phase

BROWSER = "chromium-headless-shell"


def run_report(count, rails, fails):
    """The report of a whole run (main, retest, isolate) where `fails` fails every time."""
    names, health = fabric_of(count, rails=rails)
    fabric = vfabric.fabric(health)
    expect = fabric["rails"]
    main = run_phase("main", vplan.all_pairs(names), health, fails, expect)
    retest = run_phase("retest", vjudge.retest_pairs(main), health, fails, expect)
    vjudge.merge_retests(main, retest)
    isolate = viso.isolation(main, health, LAB)
    iso = run_phase("isolate", isolate["pairs"], health, fails, expect)
    records = main + retest + iso
    verdicts = viso.verdicts(isolate, records, health, LAB)
    fabric["hosts"] = names
    options = {"mode": "full"}
    doc = rv.report(health, records, dict(isolate, verdicts=verdicts), options, "now", fabric)
    return names, doc


class Cells(HTMLParser):
    """The heat-map cells (td with a background) and the section order of a report."""

    def __init__(self):
        super().__init__()
        self.cells, self.headings, self._h = [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "td" and re.fullmatch(r"[gr]\d|fl|gy", attrs.get("class") or ""):
            self.cells.append(attrs)
        if tag in ("h2", "figcaption"):
            self._h = tag
            self.headings.append([tag, ""])

    def handle_endtag(self, tag):
        if tag == self._h:
            self._h = None

    def handle_data(self, data):
        if self._h:
            self.headings[-1][1] += data


def parse(html):
    parser = Cells()
    parser.feed(html)
    return parser


def lab3_sends_slowly(test):
    return test["client"] == "lab3" and test["rail"] == "mlx5_1"


def test_small_report_leads_with_the_verdict_and_shows_numbers():
    _names, doc = run_report(4, 2, lab3_sends_slowly)
    html = verify_html.render(doc)
    page = parse(html)
    sections = [text for tag, text in page.headings if tag == "h2"]
    assert sections[0] == "Verdicts and failures", sections
    assert sections.index("Verdicts and failures") < sections.index(
        "Bandwidth per rail (row = sender, column = receiver)"
    )
    assert "<strong>lab3 mlx5_1</strong>: lab3 rail mlx5_1 (mlx5_1): fails as sender" in html
    # 4 hosts both ways: 12 directions per rail, 3 failed (lab3's row on mlx5_1).
    assert len(page.cells) == 24
    red = [c for c in page.cells if c["class"].startswith("r")]
    assert len(red) == 3 and all(c["title"].startswith("lab3 -> ") for c in red), red
    # Passing cells are green from the pass mark up, with the number in the cell.
    assert all(re.fullmatch(r"g\d", c["class"]) for c in page.cells if c not in red)
    assert re.search(r'<td class="g\d" title="[^"]+">\d', html)
    assert "table.heat td.g0 { background: hsl(125, 55%, 78%); }" in html
    passed = sum(p["outcome"] == "passed" for p in doc["pairs"])
    assert f"<details><summary>all {len(doc['pairs'])} tests ({passed} passed)</summary>" in html
    final = [p for p in doc["pairs"] if p["phase"] == "main" and p["outcome"] != "passed"]
    assert len(final) == 3 and f"<h3>Tests not passed ({len(final)})</h3>" in html
    assert "<script" not in html and "http" not in html


def test_colour_scale_is_green_from_the_pass_mark_and_red_below():
    assert verify_html.cell_colour(1.0, "passed") == "hsl(125, 55%, 78%)"
    assert verify_html.cell_colour(1.5, "passed") == "hsl(125, 55%, 48%)"
    assert verify_html.cell_colour(0.99, "failed").startswith("hsl(0, 70%, 78%")
    assert verify_html.cell_colour(0.0, "failed") == "hsl(0, 70%, 48%)"
    assert verify_html.cell_colour(None, "peer lost") == verify_html.GREY


@pytest.fixture(scope="module")
def report_64():
    """64 hosts x 8 rails, full mode, lab3's rail mlx5_1 sending slowly: (doc, html)."""
    _names, doc = run_report(64, 8, lab3_sends_slowly)
    return doc, verify_html.render(doc)


def test_64_hosts_no_numbers_tooltips_and_health_grouped(report_64):
    doc, html = report_64
    page = parse(html)
    # Full mode at 64 hosts: every direction of every pair once, per rail.
    assert len(page.cells) == 8 * 64 * 63 // 2
    assert not re.search(r'title="[^"]*">\d', html), "no numbers in cells above 16 hosts"
    assert all(c["title"] for c in page.cells)
    assert '<table class="heat s5">' in html and 'class="heat numbers"' not in html
    # More tests than the page lists: the failures only (results.json has every test).
    tests = len(doc["pairs"])
    assert tests > verify_html.TESTS_LISTED_UP_TO
    assert f"<h2>Tests</h2><p>{tests} tests (" in html and "<summary>all " not in html
    figures = [text for tag, text in page.headings if tag == "figcaption"]
    assert figures == [f"mlx5_{i}" for i in range(8)]
    # Health grouped by check, with counts, folded.
    assert "<details><summary>rail rate: 512 ok, 0 failed</summary>" in html


def test_a_64_host_report_fits_1600_px_in_a_real_browser(report_64, tmp_path):
    browser = shutil.which(BROWSER)
    assert browser, f"{BROWSER} is missing: make deps installs it (tests/harness/install-deps.sh)"
    _doc, html = report_64
    # The measurement is the test's: the report itself carries no script.
    probe = (
        "<script>window.onload = () => { document.title = 'scroll=' + "
        "document.documentElement.scrollWidth + ' height=' + "
        "document.documentElement.scrollHeight; };</script></body>"
    )
    page = tmp_path / "report.html"
    page.write_text(html.replace("</body>", probe))
    shot = tmp_path / "report.png"
    common = [browser, "--no-sandbox", "--disable-gpu", "--window-size=1600,1000"]
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r"<title>scroll=(\d+) height=(\d+)</title>", dom.stdout)
    assert found, dom.stdout[:500]
    width, height = int(found[1]), int(found[2])
    print(f"report.html at 64 hosts x 8 rails: {len(html)} bytes, {width} x {height} px")
    assert width <= 1600, f"horizontal overflow: {width} px"
    shot_run = subprocess.run(
        [*common, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot_run.returncode == 0 and shot.stat().st_size > 10_000, shot_run.stderr[-2000:]
    keep = os.environ.get("RDMA_REPORT_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
