"""The cabling check's cost at rack scale (module_utils/cabling.py cabling_index):
rdma_verify indexes the leaves' LLDP tables by host once for the play (a run_once task)
and each host's judgement reads its own entries, so judging a rack is linear in its
size. Judged against the whole tables, each host scanned every leaf's every entry:
O(hosts x entries), 4.3 s of CPU at 1,000 hosts x 8 rails and ~70 s at 4,096.

The work is counted (reads of the tables' entries), not timed: not flaky on a busy
machine. tests/bench/bench_cabling.py gives the CPU figures."""

from __future__ import annotations

from pathlib import Path

import yaml
from ansible_collections.rdma.fabric.plugins.module_utils import cabling
from cabling_fabric import fabric

ROLE_TASKS = (
    Path(__file__).resolve().parents[2]
    / "collections/ansible_collections/rdma/fabric/roles/rdma_verify/tasks/cabling.yml"
)


class Counting(dict):
    """A dict counting the reads of it, per subclass (``reads``)."""

    reads = 0

    def get(self, key, default=None):
        type(self).reads += 1
        return super().get(key, default)

    def __getitem__(self, key):
        type(self).reads += 1
        return super().__getitem__(key)


class Entry(Counting):
    """A leaf table's neighbour entry."""

    reads = 0


class Index(Counting):
    """cabling_index's result: the host keys a judgement looks up."""

    reads = 0


def test_a_rack_is_judged_with_each_table_entry_read_once():
    """1,000 hosts x 8 rails, 64 leaves' tables (8,000 entries): the index reads each
    entry once; a host's judgement then looks up its own keys (its inventory name, its
    system name, the neighbours its lldpd hears) and reads none of the tables."""
    hosts, rails = 1000, 8
    plan, reads, per_host = fabric(hosts, rails, 8, neighbor=Entry)
    entries = sum(len(n) for ports in reads.values() for n in ports.values())
    assert (len(reads), entries) == (64, hosts * rails)
    Entry.reads = 0
    index = Index(cabling.cabling_index(reads, plan))
    assert Entry.reads <= 2 * entries  # each entry's host and port, once
    assert len(index) == hosts  # one key a host: its entries and its planned flag
    Entry.reads = 0
    for host, (health, lldp) in per_host.items():
        Index.reads = 0
        judged = cabling.judge_into_health(health, plan, host, lldp, index=index)
        assert all(c["ok"] for c in judged["checks"]), judged["checks"]
        # Its own key once, and one for each of its rails' neighbours (a fabric host?).
        assert Index.reads <= 1 + 2 * rails, (host, Index.reads)
        own = index[switch_key := cabling.switch_key(host)]["switch"]
        assert len(own) == rails and {e["switch"] for e in own} <= set(reads), switch_key
    assert Entry.reads == 0  # no host read the tables themselves


def test_the_index_is_built_once_by_the_role_and_each_host_judged_with_it():
    """tasks/cabling.yml: one run_once task indexes the tables (and the plan's hosts); the
    judge task hands each host the index, not the tables."""
    tasks = yaml.safe_load(ROLE_TASKS.read_text())
    building = [
        t for t in tasks if "rdma.fabric.cabling_index" in str(t.get("ansible.builtin.set_fact"))
    ]
    assert len(building) == 1 and building[0].get("run_once") is True, building
    judge = next(t for t in tasks if "cabling_judge" in str(t.get("ansible.builtin.set_fact")))
    text = str(judge["ansible.builtin.set_fact"])
    assert "index=" in text and "__rdma_verify_switch_reads" not in text, text


def _scan(switch_reads, rails, host, names=()):
    """The whole-table scan the index replaced: what every host's judgement did."""
    by_netdev = {rail.get("netdev"): rail["rail"] for rail in rails if rail.get("netdev")}
    me = {cabling.switch_key(n) for n in (host, *names) if n}
    out = {rail["rail"]: [] for rail in rails}
    for switch, ports in (switch_reads or {}).items():
        for port, neighbors in (ports or {}).items():
            for neighbor in neighbors:
                if cabling.switch_key(neighbor.get("host")) not in me:
                    continue
                rail = by_netdev.get(neighbor.get("port"))
                if rail:
                    out[rail].append({"switch": switch, "port": port, "via": "LLDP (switch)"})
    return out


def test_the_index_gives_each_host_what_the_whole_scan_gave_in_its_order():
    """Names by inventory name and by system name (FQDN, upper case) on one host, mixed in
    the tables' order, several neighbours on one port, a neighbour that is nobody: each
    host's entries, in the same order, as a scan of every table."""
    rails = [{"rail": f"rail{i}", "netdev": f"ens{i}"} for i in range(3)]
    reads = {
        "leaf-a": {
            "swp1": [{"host": "10.1.2.7", "port": "ens0"}],
            "swp2": [
                {"host": "GPU-B07.example.net", "port": "ens1"},
                {"host": "gpu-b08", "port": "ens1"},
            ],
            "swp3": [{"host": None, "port": "ens2"}],
        },
        "leaf-b": {
            "Ethernet0": [{"host": "10.1.2.7", "port": "ens1"}],
            "Ethernet4": [
                {"host": "gpu-b07", "port": "ens2"},
                {"host": "10.1.2.7", "port": "eth9"},
            ],
        },
        "leaf-c": {},
    }
    plan = {"10.1.2.7": {}, "gpu-b08": {}}
    index = cabling.cabling_index(reads, plan)
    for host, names in (
        ("10.1.2.7", ["gpu-b07"]),
        ("10.1.2.7", []),
        ("gpu-b08", [None]),
        ("x", []),
    ):
        assert cabling.observed_from_switches(index, rails, host, names) == _scan(
            reads, rails, host, names
        ), (host, names)
    # The plan's hosts, by their reduced names, are the fabric's (not leaves) for lldp.
    heard = {
        "ens0": [{"switch": "GPU-B08.lab", "port": "ens0"}, {"switch": "leaf-a", "port": "swp1"}]
    }
    assert [n["switch"] for n in cabling.observed_from_lldp(heard, rails[:1], index)["rail0"]] == [
        "leaf-a"
    ]
