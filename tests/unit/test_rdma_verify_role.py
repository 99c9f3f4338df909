"""rdma_verify on localhost: input validation, and the report rendered by the role's
own tasks (tasks/report.yml) from canned results: results.json, report.md (failures
first), report.html (self-contained heat-map), junit.xml, the latest link, the summary
and a failing exit after the report is written. Check mode: health checks only, no
traffic, no report, no failure.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from role_play import recap

PLAYS = {
    # The whole role, as playbooks/verify.yml applies it (tags reach its tasks).
    "main.yml": """\
- name: Apply rdma_verify to this machine
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: rdma_verify
""",
    # Only the report tasks, fed canned results.
    "report.yml": """\
- name: Render an rdma_verify report
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Run the report tasks of rdma_verify
      ansible.builtin.include_role:
        name: rdma_verify
        tasks_from: report.yml
""",
    # The whole role on every host of the inventory, each one this machine.
    "hosts.yml": """\
- name: Apply rdma_verify to hosts that are all this machine
  hosts: all
  connection: local
  gather_facts: false
  roles:
    - role: rdma_verify
""",
}


def health(octet, up=True):
    port = {
        "device": "rxe0",
        "port": 1,
        "state": "ACTIVE" if up else "DOWN",
        "phys_state": "LinkUp" if up else "Disabled",
        "rate_gbps": 10.0,
        "link_layer": "Ethernet",
        "netdev": "eth1",
        "netdev_mtu": 1500,
        "active_mtu": 1024,
        "roce_v2_gid": {"index": 1, "ipv4": f"192.0.2.{octet}"},
        "counters": None,
    }
    info = {"ports": [port], "perftest_version": "6.06", "problems": []}
    expect = {"active_mtu": 1024, "counter_max": {}}
    return rv.host_health(info, expect)


def pair(server, client, passed, phase="main", gbps=0.08):
    return {
        "id": f"{phase}-{server}-{client}",
        "phase": phase,
        "kind": "bw",
        "round": 0,
        "server": server,
        "client": client,
        "rail": 0,
        "port": 18515,
        "server_device": "rxe0",
        "client_device": "rxe0",
        "expected_gbps": 0.005,
        "max_latency_us": None,
        "measured_gbps": gbps if passed else None,
        "latency_us": None,
        "passed": passed,
        "error": None if passed else "client lab3: Port number 1 state is Down <&> | pipe",
    }


@pytest.fixture
def run_role(run_cli, tmp_path):
    def run(tasks, extra, *args):
        playbook = tmp_path / f"{tasks}.yml"
        playbook.write_text(PLAYS[tasks])
        proc = run_cli(
            "ansible-playbook", "-i", "localhost,", str(playbook), "-e", json.dumps(extra), *args
        )
        return proc, proc.stdout + proc.stderr

    return run


def test_report_from_canned_results(run_role, tmp_path):
    healths = {"lab1": health(11), "lab2": health(12), "lab3": health(13, up=False)}
    records = [
        pair("lab1", "lab2", True),
        pair("lab1", "lab3", False),
        pair("lab2", "lab3", False),
    ]
    isolation = rv.isolation(records, healths)
    records.append(pair("lab3", "lab1", False, phase="isolate"))
    reports = tmp_path / "reports"
    proc, output = run_role(
        "report.yml",
        {
            "__rdma_verify_health_all": healths,
            "__rdma_verify_records": records,
            "__rdma_verify_isolation": isolation,
            "rdma_verify_report_dir": str(reports),
        },
    )
    assert proc.returncode == 2, output
    assert "RDMA verification FAILED" in output and "bad host(s): lab3" in output
    assert "isolate lab3: bad host: failed again against known-good lab1" in output
    latest = reports / "latest"
    assert latest.is_symlink() and (latest / "results.json").is_file()

    results = json.loads((latest / "results.json").read_text())
    assert results["summary"]["bad_hosts"] == ["lab3"]
    assert results["summary"]["tests_failed"] == 3 and results["summary"]["checks_failed"] == 1

    markdown = (latest / "report.md").read_text()
    assert markdown.index("## Failures") < markdown.index("## Tests")
    assert "| check port state | lab3 rxe0/1 | DOWN/Disabled |" in markdown
    assert "pipe" in markdown and "\\| pipe" in markdown

    html = (latest / "report.html").read_text()
    assert 'class="heat"' in html and "&lt;&amp;&gt;" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert html.count('<td class="self">') == 3

    junit = ET.parse(latest / "junit.xml").getroot()
    assert junit.tag == "testsuites"
    cases = junit.findall(".//testcase")
    assert len(cases) == len(results["checks"]) + len(results["pairs"])
    assert int(junit.get("failures")) == 4 == len(junit.findall(".//failure"))

    # A second report gets its own directory; latest follows it.
    proc, output = run_role(
        "report.yml",
        {
            "__rdma_verify_health_all": {"lab1": health(11), "lab2": health(12)},
            "__rdma_verify_records": [pair("lab1", "lab2", True)],
            "__rdma_verify_isolation": {},
            "rdma_verify_report_dir": str(reports),
        },
    )
    assert proc.returncode == 0, output
    assert "RDMA verification PASSED" in output
    assert json.loads((latest / "results.json").read_text())["summary"]["passed"] is True
    assert len([d for d in reports.iterdir() if d.name != "latest"]) in (1, 2)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"rdma_verify_mode": "ring"}, "rdma_verify_mode"),
        ({"rdma_verify_min_fraction": 1.5}, "rdma_verify_min_fraction must be in (0, 1]"),
        ({"rdma_verify_quick_rounds": 1}, "rdma_verify_quick_rounds >= 2"),
        ({"rdma_verify_base_port": 65000}, "must stay within 1024..65536"),
    ],
)
def test_bad_input_fails_before_any_test(run_role, extra, needle):
    proc, output = run_role("main.yml", extra, "--tags", "rdma_verify-validate")
    assert proc.returncode != 0, output
    assert needle in output, output
    assert "Gather the RDMA ports" not in output


def test_check_mode_runs_health_only(run_role, tmp_path):
    """This machine has no RDMA device: every health check fails and every planned test
    would fail. Without --check the rounds run and the play fails after the report; with
    --check --diff no round runs, no report is written, the play does not fail and says
    what it did not run."""
    reports = tmp_path / "reports"
    extra = {"rdma_verify_report_dir": str(reports)}
    hosts = ("-i", "lab1,lab2,")  # with localhost: 3 hosts, 3 rounds of one pair

    proc, output = run_role("hosts.yml", extra, *hosts, "--check", "--diff")
    assert proc.returncode == 0, output
    assert "Gather the RDMA ports" in output
    assert "check mode (full): 3 hosts as they are now, health checks only" in output
    assert "check mode sends no RDMA traffic (3 ib_write_bw test(s) in 3 round(s)" in output
    assert "FAIL check lab1 devices" in output
    assert "report: none written in check mode" in output
    assert "traffic.yml" not in output and "round.yml" not in output
    assert "RDMA verification FAILED" not in output
    assert "--- before" not in output
    assert not reports.exists()
    for host in ("localhost", "lab1", "lab2"):
        counts = recap(output, host)
        assert counts["changed"] == 0 and counts["failed"] == 0, (host, counts)

    proc, output = run_role("hosts.yml", extra, *hosts)
    assert proc.returncode == 2, output
    assert len(re.findall(r"round\.yml for .+ \(item=round \d of 3\)", output)) == 3, output
    assert "RDMA verification FAILED (full): 3 hosts" in output
    assert "tests: 0 passed, 3 failed" in output
    assert (reports / "latest" / "results.json").is_file()
