#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: perftest_run
short_description: Run perftest servers and clients, many at once, each under a timeout
description:
  - One call does the work of a loop, every test in O(tests) runs concurrently.
  - C(action=start) starts each test's server detached (its own session, output to
    files under O(state_dir)), each wrapped in C(timeout); a leftover server of an
    earlier run on the same port is killed first. Returns once every server listens
    on its TCP port (read from C(/proc/net/tcp), never by connecting, as a perftest server
    takes exactly one client), or has exited, or O(listen_timeout) passed.
  - C(action=run) runs each test's client concurrently, each wrapped in C(timeout), and
    waits for all of them. A test whose port is not in O(ready_ports) is not run.
  - C(action=collect) waits up to O(grace) seconds for each server to finish, kills
    what is left (the whole process group), and returns the servers' output.
  - C(action=schedule) runs this host's side of every round of a plan, round after
    round, in step with its peers without any coordinator - each host runs the same
    call at once (as an C(async) task). Round N has one deadline for every host, from
    one start, O(start_at) + (N + 1) x O(round_seconds), on the controller's clock
    (with O(controller_time), each host shifts the grid by its own clock's offset, so
    the hosts' clocks need not agree). A host begins a round as soon as it is done with
    the one before (a healthy fabric runs faster than the deadlines); in a round it
    starts its servers, runs its clients (a client whose server does not listen yet,
    "Couldn't connect", is retried every second up to O(listen_timeout) after the
    round's start on the grid, O(start_at) + N x O(round_seconds)), and waits for its
    servers, killing a server whose client has not finished by the round's deadline
    less O(grace). So a lost peer costs its partner the rest of that round, never
    later rounds, and hosts started seconds apart still meet in round 0. With
    O(start_file), the schedule is launched before its start is known (an C(async)
    launch over many forks takes as long as it takes, 130 s for 64 hosts at forks 16
    in the fleet) and waits, up to O(start_wait) seconds, for C(action=release) to
    write the start into that file. A side whose peer is gone does not wait that long;
    from a client's second refusal, and while a server still listens (perftest closes
    its listening socket once its one client connects), the peer's rail address is
    probed every 3 s (TCP to port 1, from the side's own rail address); "no route to
    host" (no neighbour answered, so the host or its rail link is down) ends the side
    at once (C(peer_gone)), and a server still listening 5 s past the round's connect
    deadline is ended too, as no client tries any more. A refusal, a listener or a
    timeout counts as there. A schedule of an earlier run still going on the host
    (an interrupted run's async job) is stopped first, with every side it left in
    O(state_dir), so its servers cannot take this run's clients. A side on a port
    whose state (sysfs, under O(sysfs_root)) reads DOWN at its round's start - a NIC
    or link that died during the run, the host still answering - is not run and says
    so (C(port_down)), and the host goes on at the healthy
    pace instead of waiting out every later round's deadline with it. The
    port counters and hw_counters of each tested port are read before and after the
    round, and for RoCE ports the pause/PFC counters of C(ethtool -S); each side returns
    their increase (C(deltas)).
  - C(action=release) writes O(start_at) into O(start_file), shifted to this host's
    clock by O(controller_time), for the schedule waiting there. Written aside, then
    renamed, so the schedule reads the whole start or none.
  - With O(progress_file), C(action=schedule) writes after each round what it has done
    (rounds, sides run and failed, seconds elapsed) as JSON, for
    R(rdma.fabric.verify_wait,ansible_collections.rdma.fabric.verify_wait_module) to
    show while the schedule runs as an async task.
  - Every returned test carries its exit code, output and the parsed result
    (C(rdma.fabric.perftest_parse)). A test never makes the task fail; judging is the
    caller's business. Nothing on the host changes (C(changed) is always false).
version_added: 0.2.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  action:
    description: Which side to act on.
    type: str
    required: true
    choices: [start, run, collect, schedule, release]
  tests:
    description: The tests this host takes part in on this side.
    type: list
    elements: dict
    default: []
    suboptions:
      id:
        description: A name for the test, returned as is.
        type: str
        required: true
      port:
        description: The test's TCP port (perftest C(-p)); distinct per test.
        type: int
        required: true
      argv:
        description: The perftest command line, the same options on both sides.
        type: list
        elements: str
        required: true
      timeout:
        description: Seconds before the command is killed.
        type: int
        default: 60
      round:
        description: For C(action=schedule), the round of the test (rounds run in order).
        type: int
        default: 0
      side:
        description: For C(action=schedule), which side of the test this host runs.
        type: str
        choices: [server, client]
        default: client
      address:
        description:
          - For C(action=schedule), this host's address on the test's rail, the source
            of the probe of O(tests[].peer_address). Default the routing's choice.
        type: str
      peer_address:
        description:
          - For C(action=schedule), the peer's address on the test's rail, probed while
            this side waits for it (see C(action=schedule)). Default not probed.
        type: str
  ready_ports:
    description: For C(action=run), the ports whose server listens.
    type: list
    elements: int
    default: []
  listen_timeout:
    description: For C(action=start), seconds to wait for the servers to listen.
    type: int
    default: 30
  grace:
    description: For C(action=collect), seconds to wait for a server to finish.
    type: int
    default: 10
  sysfs_root:
    description: >-
      For C(action=schedule), where sysfs is (port states and counters are read under
      it).
    type: path
    default: /
  state_dir:
    description:
      - Where detached servers keep their output until collected, and the schedule its
        marker (C(schedule.pid)). The role keeps each run's start, progress and outcomes
        files there too (C(start-*.json), C(progress-*.json), C(outcomes-*)), which the
        next run's schedule removes.
    type: path
    default: /run/rdma-fabric-perftest
  start_at:
    description:
      - For C(action=schedule), when round 0 starts on the grid, in seconds since the
        epoch; the same value for every host of the schedule. Default now (this host's
        own start), or with O(start_file) the start released there.
      - For C(action=release), the start to write into O(start_file) (required).
    type: float
  start_file:
    description:
      - For C(action=schedule), wait for the start of the grid in this file (written by
        C(action=release)) instead of O(start_at); the same path for every host of the
        schedule, and it names the run (a schedule of another run is stopped).
      - For C(action=release), the file to write (required).
    type: path
  start_wait:
    description:
      - For C(action=schedule) with O(start_file), how many seconds to wait for the
        release before failing (the play stopped before it released the start).
    type: int
    default: 900
  controller_time:
    description:
      - For C(action=schedule) and C(action=release), the controller's clock when it
        sent this call, in seconds since the epoch. O(start_at) is shifted by this host's
        offset from it (the error is the call's transfer time, a second or two). Default
        no shift.
    type: float
  round_seconds:
    description:
      - For C(action=schedule), the length of a round on the grid. Default
        O(listen_timeout) + the longest test's O(tests[].timeout) + O(grace).
    type: int
  progress_file:
    description:
      - For C(action=schedule), a file rewritten after each round with C(rounds_done),
        C(last_round) (the round just finished), C(sides_done), C(sides_failed) and
        C(elapsed) seconds (JSON). It stays when the schedule ends (verify_wait reads the
        last rounds from it after the job's end); the next run's schedule removes the
        C(progress-*.json) files (and C(.tmp) ones) of earlier runs in O(state_dir).
    type: path
  outcomes_file:
    description:
      - For C(action=schedule), write the outcomes there (gzip, one JSON object a line,
        in the order of O(tests)) and return only their summary, RV(outcomes), instead of
        RV(tests). At 1,024 hosts x 8 rails full a host has 8,184 sides, megabytes that
        would stay in the controller's memory as the registered result. Fetch the file
        (M(ansible.builtin.fetch)). The next run's schedule removes the
        C(outcomes-*.jsonl.gz) files of earlier runs in O(state_dir), and the C(.tmp)
        file (written aside, then renamed) that a run killed while writing left.
    type: path
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
    details: >-
      Runs the tests in check mode too; they change nothing on the host.
      C(action=release) writes its start file in check mode too.
  diff_mode:
    support: none
"""

EXAMPLES = r"""
- name: Start two servers
  rdma.fabric.perftest_run:
    action: start
    tests:
      - id: a
        port: 18515
        argv: [ib_write_bw, -d, rxe0, -x, "1", -p, "18515", -D, "3"]
        timeout: 90
  register: started

- name: Run the client of the pair on the other host
  rdma.fabric.perftest_run:
    action: run
    ready_ports: "{{ started.listening }}"
    tests:
      - id: a
        port: 18515
        argv: [ib_write_bw, -d, rxe0, -x, "1", -p, "18515", -D, "3", 192.0.2.11]
        timeout: 60
"""

RETURN = r"""
tests:
  description:
    - One entry per test, in the order given; empty with O(outcomes_file) (they are in
      the file).
    - C(port_down) is true on a side that was not run because its port read DOWN at its
      round's start (C(action=schedule)).
  returned: always
  type: list
  elements: dict
  sample:
    - id: lab1-lab2-r0
      port: 18515
      rc: 0
      timed_out: false
      killed: false
      error: null
      stdout: "..."
      stderr: ""
      result: {ok: true, rows: [{bytes: 65536, bw_average_gbps: 0.0867}]}
      deltas: {port_rcv_errors: 2}
outcomes:
  description: With O(outcomes_file), the file's summary (the tests' outcomes are in it).
  returned: with O(outcomes_file)
  type: dict
  sample: {path: /run/rdma-fabric-perftest/outcomes-main-lab1.jsonl.gz, bytes: 20480,
           sha1: 3f786850e387550fdab836ed7e6dc881de23001b, count: 8184, failed: 0}
start_at:
  description: For C(action=release), the start written, on this host's clock.
  returned: with C(action=release)
  type: float
listening:
  description: For C(action=start), the ports whose server listens.
  returned: always
  type: list
  elements: int
"""

import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.ethtool_stats import parse_ethtool_stats
from ansible_collections.rdma.fabric.plugins.module_utils.peer_probe import Probes
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_perftest
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    SYSFS_IB,
    port_counter_deltas,
    read_attr,
    read_port_counters,
    saturated_counters,
    split_numbered,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_outcomes import (
    replacing,
    write_outcomes,
    written_name,
)

TCP_LISTEN = "0A"
# A side waiting for its peer probes the peer's rail address every PROBE_EVERY s (each
# probe at most PROBE_TIMEOUT s); a server still listening LATE_CLIENT s after the
# round's connect deadline has no client coming (the hosts' clocks agree to a second or
# two through controller_time).
PROBE_EVERY = 3
PROBE_TIMEOUT = 5
LATE_CLIENT = 5


def listening_ports():
    """Local TCP ports in LISTEN state, IPv4 and IPv6."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                next(handle, None)
                for line in handle:
                    fields = line.split()
                    if len(fields) > 3 and fields[3] == TCP_LISTEN:
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


def _files(state_dir, port):
    base = os.path.join(state_dir, f"server-{port}")
    return {k: f"{base}.{k}" for k in ("pid", "out", "err", "rc")}


def _read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return default


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _kill_group(pid):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return
        for _attempt in range(20):
            if not _alive(pid):
                return
            time.sleep(0.1)


def _cleanup(files):
    for path in files.values():
        with contextlib.suppress(OSError):
            os.unlink(path)


def _timeout_argv(test):
    # --foreground: timeout stays in its caller's process group, so killing the group
    # of a detached server reaches perftest too.
    return ["timeout", "--foreground", "-k", "5", str(test["timeout"]), *test["argv"]]


def _outcome(test, rc, stdout, stderr, killed=False):
    timed_out = rc in (124, 137)
    result = parse_perftest(stdout + "\n" + stderr)
    error = result["error"]
    if killed:
        error = f"killed: still running {test.get('_grace')} s after its client finished" + (
            f" ({error})" if error and result["errors"] else ""
        )
    elif timed_out:
        error = f"timed out after {test['timeout']} s" + (
            f" ({error})" if error and result["errors"] else ""
        )
    elif rc != 0 and not result["errors"]:
        error = f"exit code {rc}" + (f": {stderr.strip()[-300:]}" if stderr.strip() else "")
    return {
        "id": test["id"],
        "port": test["port"],
        "rc": rc,
        "timed_out": timed_out,
        "killed": killed,
        "error": error,
        "stdout": stdout,
        "stderr": stderr,
        "result": result,
    }


def start(module, tests, state_dir):
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    pids = {}
    for test in tests:
        files = _files(state_dir, test["port"])
        stale = _read(files["pid"]).strip()
        if stale.isdigit() and _alive(int(stale)):
            _kill_group(int(stale))  # a leftover server of an earlier run
        _cleanup(files)
        _launch(_timeout_argv(test), files)
        pids[test["port"]] = files
    deadline = time.monotonic() + module.params["listen_timeout"]
    waiting = {test["port"] for test in tests}
    while waiting and time.monotonic() < deadline:
        time.sleep(0.2)
        waiting -= listening_ports()
        waiting = {port for port in waiting if not os.path.exists(pids[port]["rc"])}
    listening = listening_ports()
    results = []
    for test in tests:
        files = pids[test["port"]]
        if test["port"] in listening:
            results.append({"id": test["id"], "port": test["port"], "error": None})
            continue
        # The server exited (or never listened): report why now; its client will not run.
        rc_text = _read(files["rc"]).strip()
        if not rc_text:
            pid = _read(files["pid"]).strip()
            if pid.isdigit():
                _kill_group(int(pid))
        rc = int(rc_text) if rc_text.isdigit() else -1
        outcome = _outcome(test, rc, _read(files["out"]), _read(files["err"]))
        if not rc_text:
            outcome["error"] = (
                f"the server did not listen on port {test['port']} within "
                f"{module.params['listen_timeout']} s"
            )
        results.append(outcome)
        _cleanup(files)
    return results, sorted(port for port in pids if port in listening)


def run(module, tests, state_dir):
    """Every client of the round at once, one thread each waiting on run_command."""
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    ready = set(module.params["ready_ports"])
    results = {}
    for test in tests:
        if test["port"] not in ready:
            results[test["id"]] = {
                "id": test["id"],
                "port": test["port"],
                "rc": None,
                "error": "not run: its server was not listening",
                "result": None,
            }
    clients = [test for test in tests if test["id"] not in results]

    def client(test):
        return _outcome(test, *module.run_command(_timeout_argv(test)))

    with ThreadPoolExecutor(max_workers=max(len(clients), 1)) as pool:
        for test, outcome in zip(clients, pool.map(client, clients)):
            results[test["id"]] = outcome
    return [results[test["id"]] for test in tests]


def collect(module, tests, state_dir):
    grace = module.params["grace"]
    deadline = time.monotonic() + grace
    results = []
    for test in tests:
        files = _files(state_dir, test["port"])
        while not os.path.exists(files["rc"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        rc_text = _read(files["rc"]).strip()
        killed = False
        if not rc_text:
            pid = _read(files["pid"]).strip()
            if pid.isdigit():
                _kill_group(int(pid))
            killed = True
        rc = int(rc_text) if rc_text.isdigit() else -1
        results.append(
            _outcome(
                dict(test, _grace=grace),
                rc,
                _read(files["out"]),
                _read(files["err"]),
                killed=killed,
            )
        )
        _cleanup(files)
    return results


def _side_port(argv):
    """(device, port) a perftest command line tests (-d DEV, -i PORT)."""
    device = argv[argv.index("-d") + 1] if "-d" in argv[:-1] else None
    port = argv[argv.index("-i") + 1] if "-i" in argv[:-1] else "1"
    return device, port


def _compact(outcome):
    """An outcome small enough to move through Ansible for thousands of tests (it stays
    in hostvars: at 1,024 hosts x 8 rails a host has 8,184 sides): the parsed result's
    last rows, the output's tail only when something went wrong, and no key at its
    default (no error, not timed out or killed, one connect attempt, no counter grew)."""
    result = {k: v for k, v in (outcome.get("result") or {}).items() if v not in (None, [], {})}
    result["rows"] = (result.get("rows") or [])[-3:]
    result.pop("settings", None)
    out = {"id": outcome.get("id"), "rc": outcome.get("rc"), "result": result}
    out.update(
        {
            k: outcome[k]
            for k in ("timed_out", "killed", "port_down", "peer_gone", "error")
            if outcome.get(k)
        }
    )
    if outcome.get("error"):
        out["output"] = ((outcome.get("stdout") or "")[-1500:] + (outcome.get("stderr") or ""))[
            -2000:
        ]
    out.update({k: outcome[k] for k in ("deltas", "saturated") if outcome.get(k)})
    if (outcome.get("connect_attempts") or 1) > 1:
        out["connect_attempts"] = outcome["connect_attempts"]
    return out


def _connect_refused(outcome):
    return (
        bool(outcome["rc"])
        and not outcome["timed_out"]
        and any("couldn't connect to" in line.lower() for line in outcome["result"]["errors"])
    )


def _launch(argv, files):
    """Start argv detached: its pid, stdout, stderr and exit code land in files."""
    command = (
        f"echo $$ > {shlex.quote(files['pid'])}; "
        f"{shlex.join(argv)} > {shlex.quote(files['out'])} "
        f"2> {shlex.quote(files['err'])}; echo $? > {shlex.quote(files['rc'])}"
    )
    # setsid -f: its own session and process group, reparented to init (no zombie).
    subprocess.run(
        ["setsid", "-f", "sh", "-c", command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )


def _spawn(test, state_dir, name):
    base = os.path.join(state_dir, name)
    files = {k: f"{base}.{k}" for k in ("pid", "out", "err", "rc")}
    _cleanup(files)
    _launch(_timeout_argv(test), files)
    # timeout(1) ends it by then (-k 5); past that, _reap's own margin applies.
    return {"test": test, "files": files, "until": time.monotonic() + test["timeout"] + 5}


def _poll(job):
    """The exit code of a spawned side, or None while it runs."""
    text = _read(job["files"]["rc"]).strip()
    return int(text) if text.lstrip("-").isdigit() else None


def _kill_job(job):
    deadline = time.monotonic() + 5
    pid = _read(job["files"]["pid"]).strip()
    while not pid.isdigit() and time.monotonic() < deadline:
        time.sleep(0.05)
        pid = _read(job["files"]["pid"]).strip()
    if pid.isdigit():
        _kill_group(int(pid))


def _reap(job, killed=False):
    # timeout(1) ends every side by its own deadline (plus -k 5); the margin is for a
    # loaded host.
    deadline = time.monotonic() + job["test"]["timeout"] + 60
    rc = _poll(job)
    while rc is None and not killed and time.monotonic() < deadline:
        time.sleep(0.1)
        rc = _poll(job)
    if rc is None:
        _kill_job(job)
        rc = -signal.SIGKILL
    outcome = _outcome(
        job["test"], rc, _read(job["files"]["out"]), _read(job["files"]["err"]), killed=killed
    )
    _cleanup(job["files"])
    return outcome


def _counters(module, ports):
    """Port counters, hw_counters and, for a RoCE port's netdev, the pause/PFC counters
    of ethtool -S (when ethtool is there)."""
    root = module.params["sysfs_root"]
    values = read_port_counters(root, ports)
    ethtool = module.get_bin_path("ethtool")
    for device, port in ports:
        netdev = read_attr(os.path.join(root, SYSFS_IB, device, "ports", port, "gid_attrs/ndevs/0"))
        if ethtool and netdev:
            rc, out, _err = module.run_command([ethtool, "-S", netdev])
            if rc == 0:
                values[(device, port)].update(parse_ethtool_stats(out))
    return values


def _ports_down(module, ports):
    """The ports whose sysfs state reads DOWN (the kernel's ib_port_state 1). Only DOWN:
    INIT and ARMED pass by for seconds while a bounced InfiniBand link comes back, and
    ACTIVE_DEFER is a live port retraining; a port that cannot be read is not judged
    here. Their sides run and are judged on what they measure."""
    root = module.params["sysfs_root"]
    down = set()
    for device, port in ports:
        text = read_attr(os.path.join(root, SYSFS_IB, device, "ports", port, "state"))
        if split_numbered(text)[1] == "DOWN":
            down.add((device, port))
    return down


def _not_run_on_a_down_port(side_id, device_port, since):
    device, port = device_port
    return {
        "id": side_id,
        "rc": None,
        "result": {},
        "port_down": True,
        "error": f"not run: {device} port {port} is DOWN on this host (since round {since})",
    }


def _progress(path, done, number, results, start):
    """What the schedule has done so far, for verify_wait (written whole, then renamed)."""
    if not path:
        return
    state = {
        "rounds_done": done,
        "last_round": number,
        "sides_done": len(results),
        "sides_failed": sum(1 for o in results.values() if o.get("error")),
        "elapsed": round(time.monotonic() - start, 1),
    }
    # Progress is a courtesy: the schedule's results do not depend on it.
    with contextlib.suppress(OSError):
        _write_aside(path, state)


def _write_aside(path, data):
    """Write JSON aside (a .tmp of this writer's own), then rename it to path: a reader sees
    all of it or none (the progress for verify_wait, a released start for a waiting
    schedule), and hosts sharing a machine release one start file side by side."""
    with replacing(path) as raw:
        raw.write(json.dumps(data).encode())


def round_deadlines(params, tests, now):
    """(start on the grid, connect deadline, server deadline) of each round, wall clock:
    the same for every host given the same start_at and round_seconds."""
    window, grace = params["listen_timeout"], params["grace"]
    longest = max((t["timeout"] for t in tests), default=0)
    slot = params.get("round_seconds") or window + longest + grace
    start_at = params.get("start_at") or now
    if params.get("start_at") and params.get("controller_time"):
        start_at += now - params["controller_time"]  # this host's clock offset
    return {
        n: (start_at + n * slot, start_at + n * slot + window, start_at + (n + 1) * slot - grace)
        for n in sorted({t["round"] for t in tests})
    }


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


# What an earlier run's progress, outcomes and start files end with (or their .tmp, see
# written_name: a write cut short).
EARLIER_FILES = (".json", ".gz")


def _stop_earlier_run(state_dir, run):
    """Stop an earlier run's schedule still going here (an interrupted run's async job goes
    on to its deadline, starting servers round after round) and every side it left.
    `run` names this run (its start on the grid, the same on every host): a schedule of
    this run (another inventory host on this machine, as in tests) is left alone. A pid
    is acted on only if its command line is a schedule's (perftest_run) or names this
    state directory (a side's sh -c), never a recycled pid."""
    marker = os.path.join(state_dir, "schedule.pid")
    earlier = _read(marker).strip().split(None, 1)  # the pid, then the run's name
    if earlier[1:2] != [run]:
        pid = int(earlier[0]) if earlier and earlier[0].isdigit() else 0
        if pid and pid != os.getpid() and _alive(pid) and "perftest_run" in _cmdline(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for name in sorted(os.listdir(state_dir)):
            final = written_name(name)
            mine = final == run  # this run's start file (or its .tmp being written)
            earlier = final.startswith(("progress-", "outcomes-", "start-")) and not mine
            if earlier and final.endswith(EARLIER_FILES):
                # An earlier run's progress (kept after its schedule ended, so that
                # verify_wait could read its last rounds), outcomes (fetched) and start
                # (released; never this run's, which names the run), and the
                # .tmp of either that a run killed while writing it left (written aside,
                # then renamed). Never this run's: the first host of this run on this
                # machine comes here before it writes any, and marks the run as its
                # own for the hosts after it (the test above).
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(state_dir, name))
                continue
            side = _read(os.path.join(state_dir, name)).strip() if name.endswith(".pid") else ""
            ours = name != "schedule.pid" and side.isdigit() and _alive(int(side))
            if ours and state_dir in _cmdline(int(side)):
                _kill_group(int(side))
    # Whole or not at all: a sibling host of this run on this machine reading it half
    # written (empty) would take this run for an earlier one.
    with replacing(marker) as raw:
        raw.write(f"{os.getpid()} {run}\n".encode())


def _run_clients(clients, state_dir, client_deadline, own_down=None):
    """Run a round's clients at once, each on its own: one refused ("Couldn't connect",
    its server not listening yet) is started again a second later, until the round's
    connect deadline, while its sibling clients (the other rails) go on running. From
    PROBE_EVERY s after its first refusal on, its server's rail address is probed
    (peer_probe.Probes: never waited on, so a probe a firewall drops holds no retry up):
    a server host that is gone ends the retries at once (own_down: see _unreached)."""
    attempts = dict.fromkeys((t["id"] for t in clients), 0)
    outcomes = {}
    running = [_spawn(t, state_dir, f"client-{t['port']}") for t in clients]
    again = []  # (when, test): refused, to start again
    refused = {}  # test id -> its latest refused outcome, while it waits to start again
    first_refused = {}  # test id -> when it was first refused
    with Probes(PROBE_EVERY, PROBE_TIMEOUT) as probes:
        while running or again:
            now = time.monotonic()
            # The first refusal is the usual one (its server not up yet): probed from
            # PROBE_EVERY s on.
            due = [t for _when, t in again if now - first_refused[t["id"]] >= PROBE_EVERY]
            lost = _lost_peers(due, probes)
            for test in due:
                if test["id"] in lost:
                    outcome = refused[test["id"]]
                    key, why = _unreached(test, own_down)
                    outcome["error"] = f"{outcome.get('error') or 'refused'}; {why}"
                    outcome[key] = True
                    outcome["connect_attempts"] = attempts[test["id"]]
                    outcomes[test["id"]] = outcome
            again = [(when, t) for when, t in again if t["id"] not in lost]
            now = time.monotonic()
            running += [
                _spawn(t, state_dir, f"client-{t['port']}") for when, t in again if when <= now
            ]
            again = [(when, t) for when, t in again if when > now]
            still = []
            for job in running:
                if _poll(job) is None and now < job["until"]:
                    still.append(job)
                    continue
                outcome = _reap(job)
                attempts[job["test"]["id"]] += 1
                if _connect_refused(outcome) and time.time() < client_deadline:
                    again.append((time.monotonic() + 1, job["test"]))
                    refused[job["test"]["id"]] = outcome
                    first_refused.setdefault(job["test"]["id"], time.monotonic())
                    continue
                outcome["connect_attempts"] = attempts[job["test"]["id"]]
                outcomes[job["test"]["id"]] = outcome
            running = still
            if running or again:
                time.sleep(0.1)
    return outcomes


def _wait_servers(servers, number, client_deadline, server_deadline, own_down=None):
    """Wait for a round's servers, each until its client has finished or the round's
    deadline. A server still listening (perftest closes its listening socket once its
    one client connects) is ended early when no client can come any more: past the
    round's connect deadline (every client stops trying by then), or once its client's
    rail address is gone (peer_probe, every PROBE_EVERY s; own_down: see _unreached)."""
    with Probes(PROBE_EVERY, PROBE_TIMEOUT) as probes:
        return _wait_servers_probing(
            servers, number, client_deadline, server_deadline, own_down, probes
        )


def _wait_servers_probing(servers, number, client_deadline, server_deadline, own_down, probes):
    outcomes = {}
    waiting = list(servers)
    first_probe = time.monotonic() + PROBE_EVERY
    while waiting:
        listening = listening_ports()
        alone = [j for j in waiting if j["test"]["port"] in listening and _poll(j) is None]
        due = [j["test"] for j in alone] if time.monotonic() >= first_probe else []
        lost = _lost_peers(due, probes)
        now = time.time()
        still = []
        for job in waiting:
            test = job["test"]
            if _poll(job) is not None:
                outcomes[test["id"]] = _reap(job)
                continue
            unreached = _unreached(test, own_down) if test["id"] in lost else None
            if now >= server_deadline:
                why = f"no client came and finished by round {number}'s deadline"
            elif job in alone and now >= client_deadline + LATE_CLIENT:
                why = f"no client connected by round {number}'s connect deadline"
            elif unreached:
                why = unreached[1]
            else:
                still.append(job)
                continue
            _kill_job(job)
            # A killed group never writes its exit code: no wait for it.
            outcome = _reap(job, killed=True)
            outcome["killed"] = True
            if unreached:
                outcome[unreached[0]] = True
            outcome["error"] = f"killed: {why}" + (
                f" ({outcome['error']})" if outcome["result"]["errors"] else ""
            )
            outcomes[test["id"]] = outcome
        waiting = still
        if waiting:
            time.sleep(0.2)
    return outcomes


def _lost_peers(tests, probes):
    """The ids of the tests whose peer's rail address was found gone (probes: their
    peer_probe.Probes, asked without waiting)."""
    targets = {(t["peer_address"], t.get("address")) for t in tests if t.get("peer_address")}
    lost = probes.lost(targets)
    return {t["id"] for t in tests if t.get("peer_address") in lost}


def _own_port_down(module, test):
    """Whether the port of this side's own rail reads DOWN now."""
    port = _side_port(test["argv"])
    return port in _ports_down(module, [port])


def _unreached(test, own_down=None):
    """(outcome key, why) of a side whose peer's rail address the probe found gone. The
    kernel says "no route to host" alike when this host's own rail link died during the
    round (the round began with its port up: a down one is not run): own_down(test)
    reads the side's own port then, so that the report names this host's port
    (port_down, as a side not run on a down port), not a peer that is up."""
    if own_down and own_down(test):
        device, port = _side_port(test["argv"])
        return "port_down", (
            f"not waited for: {device} port {port} went DOWN on this host during round "
            f"{test['round']} (its peer's rail address {test['peer_address']} cannot be "
            "reached from it)"
        )
    return "peer_gone", (
        f"not waited for: its peer's rail address {test['peer_address']} does not answer"
        " (no route to host: the host or its rail link is down)"
    )


def release(module):
    """Write the grid's start, on this host's clock, for a schedule waiting on start_file."""
    params = module.params
    if not params.get("start_file") or params.get("start_at") is None:
        module.fail_json(msg="perftest_run: action=release needs start_file and start_at")
    start_at = params["start_at"]
    if params.get("controller_time"):
        start_at += time.time() - params["controller_time"]  # this host's clock offset
    path = params["start_file"]
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    _write_aside(path, {"start_at": start_at})
    return start_at


def await_release(path, wait, every=0.5):
    """The start released into path (this host's clock), or None after wait seconds."""
    deadline = time.monotonic() + wait
    while True:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):  # noqa: SIM117 (3.8)
            with open(path, encoding="utf-8") as handle:
                return float(json.load(handle)["start_at"])
        if time.monotonic() > deadline:
            return None
        time.sleep(every)


def schedule(module, tests, state_dir):
    """Run this host's sides of every round, in round order (see DOCUMENTATION)."""
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    params = dict(module.params)
    start_at, start_file = params.get("start_at"), params.get("start_file")
    # The run's name: its start file's (one per phase and run, the same on every host),
    # or its start on the grid.
    if start_file:
        run = os.path.basename(os.path.normpath(start_file))
    else:
        run = str(start_at) if start_at else f"unplanned-{time.time()}"
    _stop_earlier_run(state_dir, run)
    if start_file:
        wait = params.get("start_wait") or 900
        released = await_release(start_file, wait)
        if released is None:
            module.fail_json(
                msg=f"perftest_run: no start of the round grid was released into {start_file} "
                f"within {wait} s (start_wait): the play stopped or failed before it "
                "released this host's start"
            )
        params.update(start_at=released, controller_time=None)  # already this host's clock
    grid = round_deadlines(params, tests, time.time())
    start = time.monotonic()
    results = {}
    since_round = {}  # (device, port): the round its link was first found down
    for done, (number, (_begin, client_deadline, server_deadline)) in enumerate(grid.items(), 1):
        mine = [t for t in tests if t["round"] == number]
        late = time.time() - server_deadline
        if late > 0:
            # Reached after the round's deadline (a launch beyond the start's margin, or an
            # earlier round overran): its peers are gone; say so, not "timed out".
            for test in mine:
                results[test["id"]] = {
                    "id": test["id"],
                    "rc": None,
                    "result": {},
                    "error": f"not run: this host reached round {number} {late:.0f} s after "
                    "its deadline (started late, or an earlier round overran)",
                }
            _progress(module.params.get("progress_file"), done, number, results, start)
            continue
        ports = sorted({_side_port(t["argv"]) for t in mine if _side_port(t["argv"])[0]})
        # A side on a port whose link is down (a NIC or cable that died during the run,
        # the host still answering) is not run: its server would wait for a client until
        # the round's deadline, round after round, and put this host (and each partner
        # that meets it later) on the grid's pace for the rest of the schedule.
        down = _ports_down(module, ports)
        for port in ports:
            if port in down:
                since_round.setdefault(port, number)
            else:
                since_round.pop(port, None)  # up again: its sides run
        live = []
        for test in mine:
            port = _side_port(test["argv"])
            if port in down:
                results[test["id"]] = _not_run_on_a_down_port(test["id"], port, since_round[port])
            else:
                live.append(test)
        before = _counters(module, ports)
        # A server lives until the round's deadline at most (its timeout(1) a bit more).
        lifetime = max(1, int(server_deadline - time.time()) + 5)
        servers = [
            _spawn(dict(t, timeout=lifetime), state_dir, f"server-{t['port']}")
            for t in live
            if t["side"] == "server"
        ]
        clients = [t for t in live if t["side"] == "client"]
        own_down = partial(_own_port_down, module)
        results.update(_run_clients(clients, state_dir, client_deadline, own_down))
        results.update(_wait_servers(servers, number, client_deadline, server_deadline, own_down))
        after = _counters(module, ports)
        deltas = port_counter_deltas(before, after)
        for test in mine:
            port = _side_port(test["argv"])
            results[test["id"]]["deltas"] = deltas.get(port, {})
            # A counter at its maximum counts nothing more: its delta proves nothing.
            results[test["id"]]["saturated"] = saturated_counters(after.get(port))
        _progress(module.params.get("progress_file"), done, number, results, start)
    return [_compact(results[t["id"]]) for t in tests]


def main():
    module = AnsibleModule(
        argument_spec={
            "action": {
                "type": "str",
                "required": True,
                "choices": ["start", "run", "collect", "schedule", "release"],
            },
            "tests": {
                "type": "list",
                "elements": "dict",
                "default": [],
                "options": {
                    "id": {"type": "str", "required": True},
                    "port": {"type": "int", "required": True},
                    "argv": {"type": "list", "elements": "str", "required": True},
                    "timeout": {"type": "int", "default": 60},
                    "round": {"type": "int", "default": 0},
                    "address": {"type": "str"},
                    "peer_address": {"type": "str"},
                    "side": {
                        "type": "str",
                        "default": "client",
                        "choices": ["server", "client"],
                    },
                },
            },
            "ready_ports": {"type": "list", "elements": "int", "default": []},
            "listen_timeout": {"type": "int", "default": 30},
            "grace": {"type": "int", "default": 10},
            "state_dir": {"type": "path", "default": "/run/rdma-fabric-perftest"},
            "progress_file": {"type": "path"},
            "start_at": {"type": "float"},
            "start_file": {"type": "path"},
            "start_wait": {"type": "int", "default": 900},
            "controller_time": {"type": "float"},
            "round_seconds": {"type": "int"},
            "sysfs_root": {"type": "path", "default": "/"},
            "outcomes_file": {"type": "path"},
        },
        supports_check_mode=True,
    )
    action = module.params["action"]
    tests = module.params["tests"]
    ports = [(test["round"], test["side"], test["port"]) for test in tests]
    if len(ports) != len(set(ports)):
        module.fail_json(msg=f"perftest_run: every test needs its own port; got {ports}")
    state_dir = module.params["state_dir"]
    listening = []
    if action == "start":
        results, listening = start(module, tests, state_dir)
    elif action == "schedule":
        results = schedule(module, tests, state_dir)
    elif action == "release":
        module.exit_json(changed=False, start_at=release(module), tests=[], listening=[])
    elif action == "run":
        results = run(module, tests, state_dir)
    else:
        results = collect(module, tests, state_dir)
    # The tests are not echoed back (module_args): at 1,024 hosts x 8 rails a host's
    # plan is megabytes, moved for nothing through the worker's queue, the callbacks and
    # an async job's status file (Ansible drops invocation before registering it).
    echoed = {k: v for k, v in module.params.items() if k != "tests"}
    out = {"tests": results}
    if action == "schedule" and module.params["outcomes_file"]:
        # Through a file, not the result (which Ansible keeps in hostvars).
        out = {"tests": [], "outcomes": write_outcomes(module.params["outcomes_file"], results)}
    module.exit_json(
        changed=False,
        listening=listening,
        invocation={"module_args": dict(echoed, tests=f"{len(tests)} tests")},
        **out,
    )


if __name__ == "__main__":
    main()
