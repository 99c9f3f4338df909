"""A lost peer costs each partner one round on the grid, never later rounds (one lost host
must not stall the schedule of every other): perftest_run's schedule() run on a virtual
clock, every host of a real full plan (verify_plan, 8 hosts x 2 rails, 7 rounds), one
host lost before the run or in the middle of it.

The sides are fakes of perftest_run's process layer (_spawn, _poll, _reap): a side
whose peer is there finishes 6 s after it starts; one whose peer is lost never does
(a server: nobody connects) or is refused at once (a client: "Couldn't connect"). So
each host's schedule runs in milliseconds, its clock advances only by its own sleeps,
and the time it ends is exact. The integration tests (test_perftest_schedule_grid.py)
run the same code with the perftest stand-in and real time; this one runs every host
of a fabric, with test timeouts far longer than a round on the grid.

Each partner of the lost host must end its round with it at that round's deadline on
the grid (the client: its connect deadline, the server: the round's end less grace),
never at its sides' own timeouts, and then run every later round at the healthy pace:
it ends by that deadline + (later rounds) x 6 s. Its other rounds all pass.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.modules import perftest_run
from test_verify_tests import OPTIONS, fabric_of

RUN = 6.0  # a side with its peer there: the test's duration and its setup
TICK = 0.25  # the schedule's polls: 0.1 s (clients), 0.2 s (servers)
WINDOW, GRACE, TIMEOUT = 30, 10, 600  # a test's own timeout far beyond the round
SLOT = WINDOW + 35 + GRACE  # the grid's round: connect window + a 5 s test's timeout + grace
EPOCH = 1_800_000_000.0


class Clock:
    """time for perftest_run: wall and monotonic clocks that only sleep() advances."""

    def __init__(self):
        self.now = 0.0

    def time(self):
        return EPOCH + self.now

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now = round(self.now + seconds, 6)  # no drift over thousands of polls


class Module:
    def __init__(self, **params):
        self.params = {
            "listen_timeout": WINDOW,
            "grace": GRACE,
            "sysfs_root": "/nonexistent",
            "progress_file": None,
            **params,
        }

    def get_bin_path(self, name, required=False):
        return None


def _peer(side_id):
    """The other host of a side: main/<round>/<server>/<client>/<rail>/<side>."""
    _phase, _round, server, client, _rail, side = side_id.split("/")
    return client if side == "server" else server


def _rail(side):
    return side["id"].split("/")[4]


PROBE = 3.0  # a probe of a gone address: the kernel's neighbour resolution, ~3 s


def fake_processes(monkeypatch, clock, lost, lost_from, dead=None, probe_finds=False):
    """perftest_run's process layer, faked; returns {round: virtual time it began}.
    dead: test -> whether its side fails as with a lost peer (default: its peer is
    ``lost`` from round ``lost_from``). A lost peer's server side listens (nobody
    connects); probe_finds: a probe of a lost peer's rail address says "no route to
    host" (its host is off), else it says nothing (a firewall drops the probe)."""
    began = {}
    live = []

    def is_lost(test):
        if dead is not None:
            return dead(test)
        return _peer(test["id"]) == lost and test["round"] >= lost_from

    def spawn(test, state_dir, name):
        began.setdefault(test["round"], clock.now)
        job = {"test": test, "files": {}, "at": clock.now, "until": clock.now + 1e9}
        live.append(job)
        return job

    def listening():
        return {
            j["test"]["port"] for j in live if j["test"]["side"] == "server" and is_lost(j["test"])
        }

    asked = {}  # test id -> when its probe began (it answers PROBE s later)

    def lost_peers(tests, probes):
        for test in tests:
            asked.setdefault(test["id"], clock.now)
        answered = {t["id"] for t in tests if clock.now >= asked[t["id"]] + PROBE}
        return {t["id"] for t in tests if probe_finds and is_lost(t) and t["id"] in answered}

    def poll(job):
        if is_lost(job["test"]):
            return 1 if job["test"]["side"] == "client" else None
        return 0 if clock.now >= job["at"] + RUN else None

    def reap(job, killed=False):
        live.remove(job)
        test = job["test"]
        refused = is_lost(test) and test["side"] == "client"
        errors = [f"Couldn't connect to {lost}:{test['port']}"] if refused else []
        return {
            "id": test["id"],
            "rc": 1 if refused else (None if killed else 0),
            "timed_out": False,
            "killed": killed,
            "error": errors[0] if errors else None,
            "result": {"ok": not (refused or killed), "errors": errors, "rows": []},
        }

    monkeypatch.setattr(perftest_run, "time", clock)
    monkeypatch.setattr(perftest_run, "_spawn", spawn)
    monkeypatch.setattr(perftest_run, "_poll", poll)
    monkeypatch.setattr(perftest_run, "_reap", reap)
    monkeypatch.setattr(perftest_run, "_kill_job", lambda job: None)
    monkeypatch.setattr(perftest_run, "listening_ports", listening)
    monkeypatch.setattr(perftest_run, "_lost_peers", lost_peers)
    monkeypatch.setattr(perftest_run, "_counters", lambda module, ports: {})
    monkeypatch.setattr(perftest_run, "_stop_earlier_run", lambda state_dir, run: None)
    return began


def fabric_sides(count=8, rails=2):
    names, health = fabric_of(count, rails=rails)
    options = dict(OPTIONS, timeout=TIMEOUT)
    tests = vplan.plan(
        "main", vplan.all_pairs(names), health, options, vfabric.fabric(health)["rails"]
    )
    return names, {h: vplan.host_sides(h, tests) for h in names}


@pytest.mark.parametrize("probe_finds", [False, True], ids=["probe-silent", "no-route-to-host"])
@pytest.mark.parametrize("lost_from", [0, 3], ids=["never-came", "lost-after-round-2"])
def test_a_lost_peer_costs_each_partner_one_round_on_the_grid(
    monkeypatch, tmp_path, lost_from, probe_finds
):
    """With a probe that says nothing, the round ends at its deadline: the client's
    connect deadline, the server's 5 s later (still listening: no client can come),
    not the round's end. With a probe that finds the peer's rail address gone, the round
    ends at the first probe: seconds, whatever the grid says."""
    names, sides = fabric_sides()
    lost = names[-1]
    rounds_total = 1 + max(s["round"] for h in names for s in sides[h])
    assert rounds_total == 7
    start_at = EPOCH + 5  # the start step's launch margin
    grid = perftest_run.round_deadlines(
        {"listen_timeout": WINDOW, "grace": GRACE, "start_at": start_at, "round_seconds": SLOT},
        [{"round": r, "timeout": 35} for r in range(rounds_total)],
        EPOCH,
    )
    partners = 0
    for host in names[:-1]:
        clock = Clock()
        began = fake_processes(monkeypatch, clock, lost, lost_from, probe_finds=probe_finds)
        mine = [dict(s, timeout=TIMEOUT) for s in sides[host]]
        out = perftest_run.schedule(
            Module(start_at=start_at, round_seconds=SLOT), mine, str(tmp_path / host)
        )
        ended = clock.now
        failed = {s["round"] for s, o in zip(mine, out, strict=True) if o.get("error")}
        met = {s["round"] for s in mine if _peer(s["id"]) == lost}
        assert len(met) == 1, met  # full mode: each pair meets once
        (with_lost,) = met
        if with_lost < lost_from:
            # Met it before it was lost: nothing failed, every round at the healthy pace.
            assert failed == set(), (host, out)
            assert ended <= rounds_total * (RUN + TICK), (host, ended)
            continue
        partners += 1
        # Exactly one round failed: the one with the lost peer, on every rail.
        assert failed == {with_lost}, (host, failed)
        assert all(
            not o.get("error") for s, o in zip(mine, out, strict=True) if s["round"] != with_lost
        )
        _begin, connect_by, server_by = grid[with_lost]
        serves = any(
            s["side"] == "server" for s in mine if s["round"] == with_lost
        )  # else it is the lost host's client
        end_of_round = began.get(with_lost + 1, ended)
        if probe_finds:
            # The first probe (3 s after the round began, 3 s long) ends it.
            first = began[with_lost] + perftest_run.PROBE_EVERY + PROBE
            assert first <= end_of_round <= first + 1 + TICK, (host, with_lost, end_of_round)
            assert end_of_round < connect_by - EPOCH - 10
        else:
            late = perftest_run.LATE_CLIENT if serves else 0
            cut = connect_by - EPOCH + late
            # That round ends at its deadline on the grid (not at the sides' 600 s
            # timeout, nor the round's end for a server nobody connected to)...
            assert cut <= end_of_round <= cut + PROBE + 1 + TICK, (host, end_of_round, cut)
            assert end_of_round < server_by - EPOCH
        # ... and every later round runs at the healthy pace: no later round is lost.
        later = rounds_total - 1 - with_lost
        assert ended <= end_of_round + later * (RUN + TICK), (host, ended, end_of_round, later)
    # Every host met the lost one; those after it was lost paid one round each.
    assert partners == len([r for r in range(rounds_total) if r >= lost_from])


def test_a_port_that_dies_mid_run_costs_its_own_host_no_later_round(monkeypatch, tmp_path):
    """A host that still answers but whose first rail's link dies after round 2 (its sysfs port
    state DOWN from then on): its sides on that rail say so and are not run, and the host runs
    every round at the healthy pace on its other rail. Before, its server there waited
    for a client that could not come until each round's deadline on the grid, round after
    round, and every later partner waited for it."""
    names, sides = fabric_sides()
    host, dies = names[0], 3
    mine = [dict(s, timeout=TIMEOUT) for s in sides[host]]
    rounds_total = 1 + max(s["round"] for s in mine)
    ports = {_rail(s): perftest_run._side_port(s["argv"]) for s in mine}
    first, other = sorted(ports)  # the rail that dies, the one that stays up
    root = tmp_path / "root"
    states = {}
    for rail, (device, port) in ports.items():
        states[rail] = root / "sys/class/infiniband" / device / "ports" / port / "state"
        states[rail].parent.mkdir(parents=True)
        states[rail].write_text("4: ACTIVE\n")
    clock = Clock()
    fake_processes(
        monkeypatch, clock, None, None, dead=lambda t: _rail(t) == first and t["round"] >= dies
    )

    def progress(path, done, number, results, start):
        if number + 1 == dies:  # the link goes down between rounds 2 and 3
            states[first].write_text("1: DOWN\n")

    monkeypatch.setattr(perftest_run, "_progress", progress)
    start_at = EPOCH + 5
    out = perftest_run.schedule(
        Module(start_at=start_at, round_seconds=SLOT, sysfs_root=str(root)),
        mine,
        str(tmp_path / host),
    )
    by_id = {s["id"]: o for s, o in zip(mine, out, strict=True)}
    dead = [s for s in mine if _rail(s) == first and s["round"] >= dies]
    assert dead and [s for s in mine if _rail(s) == other]
    for side in mine:
        error = by_id[side["id"]].get("error")
        if side not in dead:
            assert not error, (side["id"], error)
            continue
        device, port = ports[first]
        assert error == f"not run: {device} port {port} is DOWN on this host (since round {dies})"
        assert by_id[side["id"]]["port_down"] is True
    # The healthy pace: no round waited for its deadline (5 s into the grid + 6 s a round).
    assert clock.now <= 5 + rounds_total * (RUN + TICK), clock.now


@pytest.mark.parametrize(
    ("state", "skipped"),
    [("1: DOWN", True), ("2: INIT", False), ("3: ARMED", False), ("5: ACTIVE_DEFER", False)],
)
def test_only_a_down_port_is_skipped_and_since_when_survives_a_round_without_it(
    monkeypatch, tmp_path, state, skipped
):
    """INIT and ARMED pass by while a bounced InfiniBand link comes back and ACTIVE_DEFER
    is a live port retraining: their sides run. A DOWN port's sides are not run, and
    "since round N" stays the round it was first found down through a round that does
    not test it."""
    clock = Clock()
    fake_processes(monkeypatch, clock, None, None, dead=lambda t: False)
    root = tmp_path / "root"
    path = root / "sys/class/infiniband/mlx5_0/ports/1/state"
    path.parent.mkdir(parents=True)
    path.write_text(state + "\n")

    def side(number, port):
        return {
            "id": f"main/{number}/a/b/mlx5_0/server",
            "round": number,
            "side": "server",
            "port": port,
            "timeout": 20,
            "argv": ["ib_write_bw", "-d", "mlx5_0", "-i", "1", "-p", str(port)],
        }

    other = dict(side(1, 18516), argv=["ib_write_bw", "-d", "mlx5_1", "-p", "18516"])
    tests = [side(0, 18515), other, side(2, 18517)]
    out = perftest_run.schedule(
        Module(start_at=EPOCH + 5, round_seconds=SLOT, sysfs_root=str(root)),
        tests,
        str(tmp_path / "state"),
    )
    errors = [o.get("error") for o in out]
    if skipped:
        down = "not run: mlx5_0 port 1 is DOWN on this host (since round 0)"
        assert errors == [down, None, down], errors
    else:
        assert errors == [None, None, None], errors
