"""rdma.fabric.perftest_run action=schedule: the rounds' deadlines are one wall-clock grid
for every host, from one start (start_at, round_seconds).

Two "hosts" are two schedule calls in threads of this process, each with its own state
directory; the sides are the perftest stand-in (tests/standins/perftest_standin.py) on
loopback addresses. Before the grid, each host counted its deadlines from its own start:
a host launched later than its partner's connect window (an async launch over many
forks at 1,000 hosts) lost every round-0 test with it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.modules import perftest_run

STANDIN = Path(__file__).resolve().parents[1] / "standins" / "perftest_standin.py"


class FakeModule:
    """What schedule() uses of AnsibleModule: params and get_bin_path (no ethtool)."""

    def __init__(self, **params):
        defaults = {
            "listen_timeout": 3,
            "grace": 1,
            "sysfs_root": "/nonexistent",
            "progress_file": None,
        }
        self.params = {**defaults, **params}

    def get_bin_path(self, name, required=False):
        return None


@pytest.fixture
def standin(tmp_path, monkeypatch):
    """Two devices on loopback: hostA's mlx5_a (127.0.0.61), hostB's mlx5_b (127.0.0.62)."""
    mapping = {
        "mlx5_a": {"address": "127.0.0.61", "gbps": 0.09},
        "mlx5_b": {"address": "127.0.0.62", "gbps": 0.09},
    }
    path = tmp_path / "standin.json"
    path.write_text(json.dumps(mapping))
    monkeypatch.setenv("RDMA_PERFTEST_STANDIN", str(path))
    return [sys.executable, str(STANDIN)]


def side(binary, number, side_name, device, port, peer=None):
    argv = [*binary, "-d", device, "-p", str(port)] + ([peer] if peer else [])
    return {
        "id": f"r{number}/{side_name}",
        "round": number,
        "side": side_name,
        "port": port,
        "argv": argv,
        "timeout": 5,
    }


def run_host(params, tests, state_dir, out, name, delay=0.0):
    time.sleep(delay)
    begun = time.time()
    out[name] = (perftest_run.schedule(FakeModule(**params), tests, str(state_dir)), begun)


def run_a_then_b(tmp_path, a, b, b_delay=5):
    """Hosts "a" and "b" ((params, tests) each) at once, b started b_delay s later: their
    results by name."""
    out = {}
    threads = [
        threading.Thread(target=run_host, args=(*a, tmp_path / "a", out, "a")),
        threading.Thread(target=run_host, args=(*b, tmp_path / "b", out, "b", b_delay)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return out


def test_hosts_launched_apart_meet_in_round_0_on_one_start(standin, tmp_path, port_block):
    """hostB starts 5 s after hostA, beyond A's 3 s connect window counted from A's own
    start; from the common start_at (6 s ahead) both are inside the window."""
    a_tests = [side(standin, 0, "client", "mlx5_a", port_block + 1, "127.0.0.62")]
    b_tests = [side(standin, 0, "server", "mlx5_b", port_block + 1)]
    params = {"start_at": time.time() + 6, "round_seconds": 12}
    out = run_a_then_b(tmp_path, (params, a_tests), (params, b_tests))
    (client,), _ = out["a"]
    (server,), _ = out["b"]
    assert client.get("error") is None and client["result"]["ok"], client
    assert server.get("error") is None, server
    assert client["connect_attempts"] >= 4, client  # it kept trying until B listened


def test_a_host_whose_clock_is_40_s_ahead_still_meets_its_peer(standin, tmp_path, port_block):
    """hostA's clock runs 40 s ahead of the controller's (no NTP): the grid it gets is in
    the controller's time, shifted by A's offset from controller_time. Unshifted, A's
    round-0 connect deadline would be 34 s in A's past: one attempt, and B (5 s late)
    missed."""
    now = time.time()
    controller = now - 40  # the controller's clock, as hostA sees it
    a_tests = [side(standin, 0, "client", "mlx5_a", port_block + 31, "127.0.0.62")]
    b_tests = [side(standin, 0, "server", "mlx5_b", port_block + 31)]
    a_params = {"start_at": controller + 6, "round_seconds": 12, "controller_time": controller}
    b_params = {"start_at": now + 6, "round_seconds": 12, "controller_time": now}
    out = run_a_then_b(tmp_path, (a_params, a_tests), (b_params, b_tests))
    (client,), _ = out["a"]
    assert client.get("error") is None and client["result"]["ok"], client
    assert client["connect_attempts"] >= 4, client


def test_without_a_common_start_the_late_host_is_lost(standin, tmp_path, port_block):
    """The same launch with each host counting from its own start (no start_at): A's
    client gives up before B listens - what the grid fixes."""
    a_tests = [side(standin, 0, "client", "mlx5_a", port_block + 11, "127.0.0.62")]
    b_tests = [side(standin, 0, "server", "mlx5_b", port_block + 11)]
    out = run_a_then_b(tmp_path, ({}, a_tests), ({"round_seconds": 8}, b_tests))
    (client,), _ = out["a"]
    assert client["error"] and "connect" in (client["error"] + client.get("output", "")).lower()


def test_a_lost_peer_costs_its_round_only(standin, tmp_path, port_block):
    """Round 0's peer never comes (nothing listens, nobody connects); round 1 still
    begins by its start on the grid and passes, and the schedule ends by the grid's end
    (start_at + 2 x round_seconds), however long the tests' own timeouts are."""
    start_at, slot = time.time() + 1, 8
    tests = [
        side(standin, 0, "client", "mlx5_a", port_block + 21, "127.0.0.63"),  # nobody there
        side(standin, 0, "server", "mlx5_b", port_block + 22),  # its client never comes
        side(standin, 1, "server", "mlx5_b", port_block + 23),
        side(standin, 1, "client", "mlx5_a", port_block + 23, "127.0.0.62"),
    ]
    for test in tests:
        test["timeout"] = 60
    out = {}
    run_host({"start_at": start_at, "round_seconds": slot}, tests, tmp_path / "s", out, "s")
    results, _ = out["s"]
    ended = time.time()
    by_id = {t["id"]: t for t in results}
    assert by_id["r0/client"]["error"], by_id["r0/client"]
    assert "round 0's deadline" in by_id["r0/server"]["error"], by_id["r0/server"]
    assert by_id["r1/client"].get("error") is None and by_id["r1/client"]["result"]["ok"]
    assert by_id["r1/server"].get("error") is None
    assert ended <= start_at + 2 * slot + 2, ended - start_at


def test_a_host_past_its_rounds_deadlines_says_so_and_runs_nothing(standin, tmp_path, port_block):
    """Reached after the deadline (launched beyond the start's margin): its sides are
    "not run ... after its deadline", not a perftest timeout, and it does not wait."""
    tests = [
        side(standin, 0, "server", "mlx5_b", port_block + 41),
        side(standin, 1, "client", "mlx5_a", port_block + 42, "127.0.0.62"),
    ]
    out = {}
    begun = time.time()
    run_host({"start_at": begun - 100, "round_seconds": 8}, tests, tmp_path / "l", out, "l")
    results, _ = out["l"]
    assert time.time() - begun < 3
    for result in results:
        assert result["error"].startswith("not run: this host reached round"), result
        assert "after its deadline" in result["error"] and not result.get("timed_out")


def test_round_deadlines_are_the_same_for_every_host():
    tests = [{"round": n, "timeout": 35} for n in (0, 2, 5)]
    params = {"listen_timeout": 30, "grace": 10, "start_at": 1000.0, "round_seconds": None}
    grid = perftest_run.round_deadlines(params, tests, now=5.0)
    # Default round: connect window + longest test + grace = 75 s.
    assert grid == {
        0: (1000.0, 1030.0, 1065.0),
        2: (1150.0, 1180.0, 1215.0),
        5: (1375.0, 1405.0, 1440.0),
    }
    assert perftest_run.round_deadlines(dict(params, start_at=None), tests[:1], now=5.0) == {
        0: (5.0, 35.0, 70.0)
    }
    # A host whose clock reads 7 s more than the controller's shifts the grid by 7 s.
    ahead = dict(params, controller_time=998.0)
    assert perftest_run.round_deadlines(ahead, tests[:1], now=1005.0) == {
        0: (1007.0, 1037.0, 1072.0)
    }


def test_a_partner_late_from_waiting_for_a_lost_peer_is_still_met(standin, tmp_path, port_block):
    """b waits all of round 0 for a client that never comes (a lost host), so b begins
    round 1 a round later than a, which has nothing in round 0. a's client must still meet
    b's round-1 server: a partner late from waiting for a lost peer is not a second,
    innocent failure. The grid gives that: every host's round-1 window is counted from one
    start. A local bound on waits (from when a host began its round) cannot: whatever a
    server waits for a lost client, its partner in the next round must wait longer, so the
    bound cascades (a local bound failed this test: a's client "Couldn't connect")."""
    grid = {"start_at": time.time(), "round_seconds": 12}
    a_tests = [side(standin, 1, "client", "mlx5_a", port_block + 61, "127.0.0.62")]
    b_tests = [
        side(standin, 0, "server", "mlx5_b", port_block + 62),  # its client never comes
        side(standin, 1, "server", "mlx5_b", port_block + 61),
    ]
    out = run_a_then_b(tmp_path, (grid, a_tests), (grid, b_tests), b_delay=0)
    a_by_id = {t["id"]: t for t in out["a"][0]}
    b_by_id = {t["id"]: t for t in out["b"][0]}
    # Ended 5 s past round 0's connect deadline, still listening: no client can come.
    assert "no client connected by round 0's connect deadline" in b_by_id["r0/server"]["error"]
    assert a_by_id["r1/client"].get("error") is None, a_by_id["r1/client"]
    assert a_by_id["r1/client"]["result"]["ok"], a_by_id["r1/client"]


def test_a_refused_client_is_retried_while_its_sibling_clients_run(standin, tmp_path, port_block):
    """Host a runs two clients in round 0: one to b's server, which listens 1.5 s late,
    and a sibling that takes 7 s (another rail's long test). The refused client is
    retried every second on its own; it used to wait for the sibling to finish, past the
    connect window (3 s) and the server's end of round (5 s), and failed "Couldn't
    connect" against a healthy peer (session 26's review)."""
    a_tests = [
        side(standin, 0, "client", "mlx5_a", port_block + 41, "127.0.0.62"),
        {
            "id": "r0/sibling",
            "round": 0,
            "side": "client",
            "port": port_block + 42,
            "argv": [sys.executable, "-c", "import time; time.sleep(7)"],
            "timeout": 20,
        },
    ]
    b_tests = [side(standin, 0, "server", "mlx5_b", port_block + 41)]
    params = {"start_at": time.time(), "round_seconds": 6}
    out = run_a_then_b(tmp_path, (params, a_tests), (params, b_tests), b_delay=1.5)
    client, sibling = out["a"][0]
    assert client.get("error") is None and client["result"]["ok"], client
    assert 2 <= client["connect_attempts"] <= 4, client
    assert sibling["rc"] == 0, sibling


def test_an_interrupted_runs_schedule_and_sides_are_stopped_not_this_runs(tmp_path):
    """An interrupted run's async schedule goes on to its deadline, starting servers that
    could take the next run's clients (session 26's review: only action=start killed a
    leftover server). The next schedule stops it and its sides; a schedule of the same
    run (another inventory host on this machine) is left alone."""
    import subprocess

    state = tmp_path / "state"
    state.mkdir()
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]

    def earlier(run):
        schedule = subprocess.Popen([*sleeper, "perftest_run"])
        side_job = perftest_run._spawn(
            {"id": "x", "port": 1, "argv": sleeper, "timeout": 60}, str(state), "server-1"
        )
        deadline = time.monotonic() + 5
        while (
            not perftest_run._read(side_job["files"]["pid"]).strip() and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        (state / "schedule.pid").write_text(f"{schedule.pid} {run}\n")
        return schedule, int(perftest_run._read(side_job["files"]["pid"]))

    now = time.time()
    same, same_side = earlier(str(now))
    assert perftest_run.schedule(FakeModule(start_at=now, round_seconds=5), [], str(state)) == []
    assert same.poll() is None and perftest_run._alive(same_side)
    perftest_run._kill_group(same_side)
    same.kill()
    same.wait(5)

    old, old_side = earlier("1700000000.0")
    assert perftest_run.schedule(FakeModule(start_at=now, round_seconds=5), [], str(state)) == []
    assert old.wait(5) == -9
    assert not perftest_run._alive(old_side)
    assert (state / "schedule.pid").read_text().split() == [str(os.getpid()), str(now)]


def test_the_progress_file_holds_the_last_round_after_the_schedule_ends(
    standin, tmp_path, port_block
):
    """verify_wait reads the progress file once more when the job has ended; the schedule
    used to delete it as it ended, so a run that ended between two reads (a loaded CI
    machine) showed no round at all. The next run's schedule removes it."""
    state = tmp_path / "a"  # host a's state directory (run_a_then_b)
    progress = state / "progress-main-1.json"
    a_tests = [side(standin, 0, "client", "mlx5_a", port_block + 51, "127.0.0.62")]
    b_tests = [side(standin, 0, "server", "mlx5_b", port_block + 51)]
    params = {"start_at": time.time(), "round_seconds": 8}
    out = run_a_then_b(
        tmp_path, (dict(params, progress_file=str(progress)), a_tests), (params, b_tests), b_delay=0
    )
    assert out["a"][0][0].get("error") is None, out["a"]
    state_now = json.loads(progress.read_text())
    assert state_now["rounds_done"] == 1 and state_now["last_round"] == 0, state_now
    perftest_run.schedule(FakeModule(start_at=time.time() + 100, round_seconds=5), [], str(state))
    assert not progress.exists()
