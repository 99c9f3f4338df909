"""rdma_verify on this machine: input validation, two names of one machine refused,
and a whole run on three hosts (each this machine with a sysfs tree of its own) with
the perftest stand-in: rails by name, the async schedule, retest, isolation, report.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sysfs_tree as st
from role_play import tasks_run

STANDIN = Path(__file__).resolve().parents[1] / "standins" / "perftest_standin.py"

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


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"rdma_verify_mode": "ring"}, "rdma_verify_mode"),
        ({"rdma_verify_min_fraction": 1.5}, "rdma_verify_min_fraction must be in (0, 1]"),
        ({"rdma_verify_quick_rounds": 1}, "rdma_verify_quick_rounds >= 2"),
        ({"rdma_verify_base_port": 65000}, "must stay within 1024..65536"),
        ({"rdma_verify_rail_extra_args": "-t 128"}, "rdma_verify_rail_extra_args"),
        # perftest's own ranges (-s 1..UINT_MAX/2, -q 1..MAX_QP_NUM): refused by perftest
        # on every host after the health checks, before.
        ({"rdma_verify_qps": 0}, "rdma_verify_qps must be in 1..16384 (got 0)"),
        ({"rdma_verify_qps": 20000}, "rdma_verify_qps must be in 1..16384 (got 20000)"),
        ({"rdma_verify_size": 0}, "rdma_verify_size must be in 1..2147483647 (got 0)"),
        ({"rdma_verify_latency_size": -2}, "rdma_verify_latency_size must be in 1..2147483647"),
        ({"rdma_verify_rate_majority": 0}, "rdma_verify_rate_majority must be in (0, 1] (got 0"),
        ({"rdma_verify_rate_majority": 1.5}, "rdma_verify_rate_majority must be in (0, 1]"),
        # The round grid: a negative window or grace ran the deadlines backwards.
        ({"rdma_verify_listen_timeout": 0}, "rdma_verify_listen_timeout must be in 1..3600"),
        ({"rdma_verify_server_grace": -5}, "rdma_verify_server_grace must be in 0..3600"),
        ({"rdma_verify_timeout": 0}, "rdma_verify_timeout must be in 1..3600 (got 0)"),
        # A slice of a sliced job: its inventory holds fewer of the fabric's hosts.
        (
            {"rdma_verify_fabric_size": 16},
            "rdma_verify_fabric_size is 16 but this run's inventory holds 0 hosts of rdma_hosts",
        ),
        ({"rdma_verify_fabric_size": -1}, "rdma_verify_fabric_size must be 0 (not declared)"),
    ],
)
def test_bad_input_fails_before_any_test(run_role, extra, needle):
    proc, output = run_role("main.yml", extra, "--tags", "rdma_verify-validate")
    assert proc.returncode != 0, output
    assert needle in output, output
    assert "Gather the RDMA ports" not in output


def test_two_names_of_one_machine_are_refused_naming_both(run_role, tmp_path):
    """lab1, lab2 and localhost are all this machine (one boot id): the play stops after
    the health checks, before any traffic, naming every name; in --check too."""
    reports = tmp_path / "reports"
    extra = {"rdma_verify_report_dir": str(reports)}
    for args in (("--check", "--diff"), ()):
        proc, output = run_role("hosts.yml", extra, "-i", "lab1,lab2,", *args)
        assert proc.returncode == 2, output
        assert "lab1 and lab2 and localhost are one machine (the same boot id" in output
        assert "Plan this host's tests" not in output
        assert not reports.exists()


def test_extra_args_are_checked_before_any_traffic(run_role, tmp_path):
    """A flag the role sets, in rdma_verify_extra_args, and a rail this fabric does not
    have, in rdma_verify_rail_extra_args: refused by the fabric step, naming both, before
    any test is planned."""
    reports = tmp_path / "reports"
    extra = {
        "rdma_verify_report_dir": str(reports),
        "rdma_verify_extra_args": ["-D", "9"],
        "rdma_verify_rail_extra_args": {"rail7": "-t 128"},
    }
    proc, output = run_role("main.yml", extra)
    assert proc.returncode == 2, output
    assert "rdma_verify_extra_args: -D/--duration is set by rdma_verify_duration" in output
    assert "rdma_verify_rail_extra_args: no rail 'rail7' in this fabric" in output
    assert "Plan this host's tests" not in output
    assert not reports.exists()


def build_host(root, number, faults, mapping):
    """Host labN: two RoCE rails (netdevs ens0, ens1; device names unique to the host,
    bound to rails by netdev), GIDs 127.10.0.N and 127.10.1.N (the rail plan's addresses
    for rdma_rail_host_index N), its own boot id."""
    for rail in (0, 1):
        device = f"mlx5_{number}{rail}"
        address = f"127.10.{rail}.{number}"
        st.add_cx6dx_roce(
            root,
            device,
            pci=f"0000:{number}{rail}:00.0",
            netdev=f"ens{rail}",
            node_guid=f"946d:ae03:00c2:{number}{rail:03d}",
            gids=st.roce_gids(f"0000:0000:0000:{number}{rail:03d}", address),
            mtu=9000,
            counters={"link_downed": 0, "symbol_error": 0, "port_rcv_errors": 0},
        )
        mapping[device] = {
            "address": address,
            "sysfs_root": str(root),
            "faults": faults.get(rail, []),
        }
    boot = root / "proc/sys/kernel/random/boot_id"
    boot.parent.mkdir(parents=True)
    boot.write_text(f"00000000-0000-0000-0000-00000000000{number}\n")


def three_hosts(tmp_path, faults=None, tools=None):
    """lab1-lab3 in tmp_path/hosts.ini, each this machine with its own sysfs tree and boot
    id (build_host; faults: {host number: {rail: [fault]}} for the perftest stand-in), a
    bin directory with the perftest stand-in as ib_write_bw and `tools` ({name: script});
    the environment to run them with."""
    mapping = {}
    inventory = ["[rdma_hosts]"]
    for number in (1, 2, 3):
        root = tmp_path / f"lab{number}"
        build_host(root, number, (faults or {}).get(number, {}), mapping)
        inventory.append(
            f"lab{number} ansible_connection=local rdma_verify_sysfs_root={root} "
            f"rdma_rail_host_index={number}"
        )
    (tmp_path / "standin.json").write_text(json.dumps(mapping))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in {"ib_write_bw": STANDIN, **(tools or {})}.items():
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {sys.executable} {target} "$@"\n')
        script.chmod(0o755)
    (tmp_path / "hosts.ini").write_text("\n".join(inventory) + "\n")
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "RDMA_PERFTEST_STANDIN": str(tmp_path / "standin.json"),
    }


def quick_extra(reports, verify_ports, **more):
    """rdma_verify's variables for three_hosts: short tests against the stand-in, two rails
    on ens0/ens1 with the addresses build_host gives."""
    return {
        "rdma_verify_report_dir": str(reports),
        "rdma_verify_check_qos": False,
        "rdma_verify_min_gbps": 0.005,
        "rdma_verify_duration": 1,
        "rdma_verify_listen_timeout": 10,
        **verify_ports,
        "rdma_rails": [
            {"name": "rail0", "netdev": "ens0", "subnet": "127.10.0.0/24", "mtu": 9000},
            {"name": "rail1", "netdev": "ens1", "subnet": "127.10.1.0/24", "mtu": 9000},
        ],
        **more,
    }


def run_three(run_playbook, tmp_path, extra, env, *args):
    """verify.yml (the role on rdma_hosts) on three_hosts' inventory, with `extra` as
    extra vars and `args` (--limit ...) before them."""
    playbook = tmp_path / "verify.yml"
    playbook.write_text(PLAYS["hosts.yml"].replace("hosts: all", "hosts: rdma_hosts"))
    return run_playbook(
        "-i", str(tmp_path / "hosts.ini"), str(playbook), *args, "-e", json.dumps(extra),
        env=env, timeout=600,
    )  # fmt: skip


@pytest.mark.parametrize("run_async", [False, True], ids=["synchronous", "async"])
def test_multi_rail_run_names_the_bad_rail_retests_the_flaky_pair(
    run_playbook, tmp_path, run_async, verify_ports
):
    """Three hosts (each this machine, with its own sysfs tree and boot id) and the
    perftest stand-in: lab3's rail1 sends slowly (a throttled egress), lab2's rail0
    fails its first test once (a flap).
    The role plans by rail name, runs every host's schedule as one async call, retests,
    isolates per (host, rail) in both directions and writes the report."""
    env = three_hosts(tmp_path, {2: {0: ["flap_once"]}, 3: {1: ["slow"]}})
    reports = tmp_path / "reports"
    # A 20 s connect window: under CI's load (Molecule builds beside it) one host's
    # schedule began more than the launch margin plus 10 s late, and lab3's client gave up
    # on lab2's server in round 0 ("Couldn't connect"), not the slow rail this test plants.
    extra = quick_extra(
        reports,
        verify_ports,
        rdma_verify_async=run_async,
        rdma_verify_progress_interval=1,
        rdma_verify_listen_timeout=20,
    )
    start = time.monotonic()
    proc = run_three(run_playbook, tmp_path, extra, env)
    output = proc.output
    print(f"role run with the stand-in: {time.monotonic() - start:.0f} s")
    assert proc.returncode == 2, output
    assert (reports / "latest" / "results.json").is_file(), output[-6000:]
    results = json.loads((reports / "latest" / "results.json").read_text())
    summary = results["summary"]
    # The schedule kept its marker in this run's own state directory: runs sharing the
    # default one (two test workers at once) stopped each other's schedules.
    marker = Path(verify_ports["rdma_verify_state_dir"]) / "schedule.pid"
    assert marker.is_file(), output[-3000:]
    assert summary["bad_rails"] == ["lab3 rail1"], (summary, results["isolation"])
    assert summary["bad_hosts"] == ["lab3"]
    # Every planned rail has the plan's MTU and address (rdma_rails' health checks).
    planned = [c for c in results["checks"] if c["check"] in ("rail address", "rail MTU")]
    assert len(planned) == 12 and all(c["ok"] for c in planned), planned
    verdict = results["isolation"]["verdicts"]["lab3 rail1"]["verdict"]
    # Three hosts test each pair both ways: lab3 sent to both others.
    judged = [
        (p["phase"], p["round"], p["server"], p["client"], p["rail"], p["outcome"], p.get("error"))
        for p in results["pairs"]
    ]
    assert (
        verdict == "lab3 rail rail1 (mlx5_31): fails as sender against 2 good peers (lab1, lab2)"
    ), (judged, results["isolation"], output[-4000:])
    main = {
        (p["server"], p["client"], p["rail"]): p for p in results["pairs"] if p["phase"] == "main"
    }
    assert len(main) == 12 and {p["rail"] for p in main.values()} == {"rail0", "rail1"}
    assert main[("lab3", "lab2", "rail0")]["outcome"] == "flaky"
    assert main[("lab3", "lab2", "rail0")]["server_device"] == "mlx5_30"
    assert main[("lab3", "lab2", "rail0")]["client_device"] == "mlx5_20"
    assert main[("lab2", "lab3", "rail1")]["outcome"] == "failed"
    assert main[("lab1", "lab3", "rail1")]["outcome"] == "failed"
    assert main[("lab3", "lab1", "rail1")]["outcome"] == "passed"
    assert "0.001 Gb/s is below the expected 0.005 Gb/s" in main[("lab2", "lab3", "rail1")]["error"]
    retests = [p for p in results["pairs"] if p["phase"] == "retest"]
    assert {(p["server"], p["client"], p["rail"]) for p in retests} == {
        ("lab3", "lab2", "rail0"),
        ("lab2", "lab3", "rail1"),
        ("lab1", "lab3", "rail1"),
    }
    assert summary["tests_flaky"] == 1 and summary["tests_failed"] == 2
    ports = {}
    for p in results["pairs"]:
        if p["phase"] == "main":
            ports.setdefault(p["server"], []).append(p["port"])
    assert all(len(v) == len(set(v)) for v in ports.values()), ports
    failed_checks = {(c["host"], c["check"]) for c in results["checks"] if not c["ok"]}
    assert {check for _, check in failed_checks} <= {"tools"}, failed_checks

    latest = reports / "latest"
    markdown = (latest / "report.md").read_text()
    assert "| lab3 | rail1 | lab3 rail rail1 (mlx5_31): fails as sender" in markdown
    assert "flaky" in markdown and "## Rails" in markdown
    html = (latest / "report.html").read_text()
    assert (
        html.count('<table class="heat numbers">') == 2 and "<figcaption>rail1</figcaption>" in html
    )
    assert html.index("Verdicts and failures") < html.index("Bandwidth per rail")
    assert "<strong>lab3 rail1</strong>: lab3 rail rail1 (mlx5_31): fails as sender" in html
    assert "http://" not in html and "<script" not in html
    junit = ET.parse(latest / "junit.xml").getroot()
    failed_records = [p for p in results["pairs"] if p["outcome"] == "failed"]
    assert {p["phase"] for p in failed_records} == {"main", "isolate"}
    assert int(junit.find("testsuite[@name='perftest']").get("failures")) == len(failed_records)
    assert "FLAKY main bw lab3 <- lab2 rail rail0" in output
    assert "isolate lab3 rail rail1 (mlx5_31): fails as sender" in output
    ran = "Start this host's tests round by round, async" if run_async else "Run this host's"
    # An async schedule shows its rounds as they finish (the play's first
    # host, lab1, reports; 3 hosts both ways: 6 rounds).
    progress = re.findall(
        r"rdma_verify main: round (\d)/6 done \(lab1: (\d+) sides run, (\d+) failed so far; "
        r"\d+ s elapsed, about \d+ s left\)",
        output,
    )
    if run_async:
        assert progress, output[-6000:]
        assert all(1 <= int(r) <= 6 and int(done) >= 1 for r, done, _f in progress), progress
    else:
        assert not progress and "rdma_verify main: round" not in output
    assert any(name.startswith(f"rdma_verify : {ran}") for name in tasks_run(proc)), output
    # One start for the round grid per phase; the hosts' plan files (kept out of
    # hostvars) are gone once their phase is judged.
    grid = "rdma_verify : Set the start of the round grid"
    assert any(n.startswith(grid) for n in tasks_run(proc)), output
    assert not list(latest.resolve().glob("plan-*")), list(latest.resolve().iterdir())
    # The outcomes came back as files, one per host and phase (not in hostvars), fetched
    # to the run directory and removed there once judged.
    assert any(n.startswith("rdma_verify : Fetch this host's outcomes") for n in tasks_run(proc))
    assert not list(latest.resolve().glob("outcomes-*")), list(latest.resolve().iterdir())
    # The hosts' files stay in their state directory until the next phase's or run's
    # schedule: this run's last phase's.
    kept = list(Path(verify_ports["rdma_verify_state_dir"]).glob("outcomes-*.jsonl.gz"))
    assert kept and all(f"-{latest.resolve().name}-lab" in p.name for p in kept), kept


def test_a_limited_run_is_verified_and_reported_partial(run_playbook, tmp_path, verify_ports):
    """A --limit run of 2 of the fabric's 3 hosts: the two are tested against each other
    and pass, and results.json, report.md and the summary say the run was partial and
    name the host left out (a --limit run must not read as the fabric's pass)."""
    env = three_hosts(tmp_path)
    reports = tmp_path / "reports"
    # Declared: a --limit run still sees the whole inventory, so it is not a slice.
    extra = quick_extra(reports, verify_ports, rdma_verify_fabric_size=3)
    proc = run_three(run_playbook, tmp_path, extra, env, "--limit", "lab1,lab2")
    output = proc.output
    results = json.loads((reports / "latest" / "results.json").read_text())
    summary = results["summary"]
    # This machine has no ibv_devinfo: the "tools" check fails (as in the multi-rail
    # test); every test passed.
    failed_checks = {c["check"] for c in results["checks"] if not c["ok"]}
    assert failed_checks <= {"tools"} and proc.returncode in (0, 2), output[-6000:]
    assert summary["tests_passed"] == summary["tests"] > 0, summary
    assert summary["partial"] == {"tested": 2, "of": 3, "missing": ["lab3"]}, summary
    assert {p["server"] for p in results["pairs"]} == {"lab1", "lab2"}
    markdown = (reports / "latest" / "report.md").read_text()
    assert "Partial run (--limit): 2 of 3 hosts verified; not verified: lab3" in markdown
    html = (reports / "latest" / "report.html").read_text()
    assert "<strong>partial run</strong>: 2 of 3 hosts verified; not verified: lab3" in html
    assert "partial: 2 of 3 hosts of rdma_hosts verified; not in this run: lab3" in output


# Removes lab2's outcomes file from its state directory (lab2 is this machine) between
# its schedule task's result and the fetch (the next task): a host whose /run was
# cleared, or whose file a cleanup took, after its schedule came back. A callback runs
# in the controller as each host's result arrives, before the play's next task starts.
VANISH_CALLBACK = """\
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "outcomes_vanish"

    def v2_runner_on_ok(self, result):
        outcomes = result._result.get("outcomes")
        if result._host.get_name() == "lab2" and isinstance(outcomes, dict):
            os.unlink(outcomes["path"])
            self._display.display("outcomes_vanish: removed " + outcomes["path"])
"""


def test_a_host_whose_outcomes_file_vanished_before_the_fetch_is_lost(
    run_playbook, tmp_path, verify_ports
):
    """lab2's schedule ran and came back, then its outcomes file was gone before the
    fetch: lab2 fails at the fetch, naming it, and the judge takes it as lost during
    traffic (unreachable, its partners' tests "peer lost"), never as bad HCAs; the
    tests between lab1 and lab3 pass."""
    env = three_hosts(tmp_path)
    # A callback next to the playbook is loaded without being enabled by name.
    (tmp_path / "callback_plugins").mkdir()
    (tmp_path / "callback_plugins" / "outcomes_vanish.py").write_text(VANISH_CALLBACK)
    reports = tmp_path / "reports"
    proc = run_three(run_playbook, tmp_path, quick_extra(reports, verify_ports), env)
    output = proc.output
    assert "outcomes_vanish: removed " in output, output[-6000:]
    assert proc.returncode == 2, output[-6000:]
    failed = [
        e
        for e in proc.events
        if e.get("event") == "runner_on_failed"
        and e["event_data"]["task"].startswith("Fetch this host's outcomes")
    ]
    assert [e["event_data"]["host"] for e in failed] == ["lab2"], output[-6000:]
    results = json.loads((reports / "latest" / "results.json").read_text())
    summary = results["summary"]
    assert summary["unreachable"] == ["lab2"], summary
    assert summary["bad_hosts"] == [] and summary["bad_rails"] == [], summary
    # lab2: 2 peers x 2 ways x 2 rails; lab1 and lab3: 2 ways x 2 rails.
    assert summary["tests_peer_lost"] == 8 and summary["tests_failed"] == 0, summary
    lost = [p for p in results["pairs"] if "lab2" in (p["server"], p["client"])]
    assert len(lost) == 8 and {p["outcome"] for p in lost} == {"peer lost"}, lost
    others = [p for p in results["pairs"] if p not in lost]
    assert len(others) == 4 and {p["outcome"] for p in others} == {"passed"}, others
    [row] = [c for c in results["checks"] if c["host"] == "lab2" and c["check"] == "reachable"]
    assert not row["ok"] and row["detail"] == "lost during traffic: no perftest result came back"


# ansible.cfg's callbacks and profile_tasks (each task's wall time in the recap).
TIMED = "ansible.builtin.timer,rdma.fabric.preload,ansible.posix.profile_tasks"


def test_an_async_launch_slower_than_any_margin_still_meets_in_round_0(
    run_playbook, tmp_path, verify_ports
):
    """Ansible launches async schedules fork by fork, as slowly as the connection goes:
    the fleet's 64 hosts at forks 16 took 130 s where the predicted margin was 18 s, and
    the hosts launched last lost their first rounds against healthy peers. Here forks is
    1 and lab3's launch takes 45 s (its interpreter waits before the async wrapper runs),
    where the predicted margin for 3 hosts at forks 1 is 16 s and a round 17 s (10 s to
    connect, 5 s beyond the test, 2 s of grace): lab3 would reach the grid past its
    first rounds. Every host must still meet in every round, as the grid starts once
    every host is launched and released."""
    env = three_hosts(tmp_path)
    slow = tmp_path / "slow-launch-python"
    slow.write_text(
        f'#!/bin/sh\ncase "$*" in *async_wrapper*) sleep 45 ;; esac\nexec {sys.executable} "$@"\n'
    )
    slow.chmod(0o755)
    hosts = tmp_path / "hosts.ini"
    hosts.write_text(
        hosts.read_text().replace(
            "lab3 ansible_connection=local",
            f"lab3 ansible_connection=local ansible_python_interpreter={slow}",
        )
    )
    reports = tmp_path / "reports"
    extra = quick_extra(
        reports,
        verify_ports,
        rdma_verify_async=True,
        rdma_verify_retest=False,
        rdma_verify_timeout=5,
        rdma_verify_server_grace=2,
    )
    started = time.monotonic()
    timed = dict(env, ANSIBLE_FORKS="1", ANSIBLE_CALLBACKS_ENABLED=TIMED)
    proc = run_three(run_playbook, tmp_path, extra, timed)
    output = proc.output
    print(f"slow async launch: {time.monotonic() - started:.0f} s")
    results = json.loads((reports / "latest" / "results.json").read_text())
    summary = results["summary"]
    failed = [p for p in results["pairs"] if p["outcome"] != "passed"]
    assert not failed, (failed[:3], output[-4000:])
    assert summary["tests_passed"] == summary["tests"] == 12, summary
    ran = tasks_run(proc)
    assert any(n.startswith("rdma_verify : Release this host's tests at that start") for n in ran)
    grid = "rdma_verify : Set the start of the round grid, every host launched"
    assert any(n.startswith(grid) for n in ran)
    # The launch was slow for real (not a test that passes whatever the margin).
    launch = re.search(
        r"Start this host's tests round by round, async \(main\) -* ?(\d+\.\d+)s", output
    )
    assert launch and float(launch.group(1)) >= 45, output[-3000:]
