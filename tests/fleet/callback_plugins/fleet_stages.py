"""Per-play wall time and controller CPU/RSS of a playbook run, for the fleet harness.

Writes JSON to $RDMA_FLEET_STAGES at the end of the run: one entry per play (site.yml's
plays, in order) with its wall seconds and the controller CPU seconds it used (the
ansible-playbook process and its reaped workers, from getrusage), the recap per host,
and the controller's peak RSS (the main process; workers are forks of it). Of the
controller's CPU, "main_cpu" is the main process's alone (the strategy's loop, the
callbacks, forking each worker); the rest is the workers'.

With $RDMA_FLEET_CGROUPS (a colon-separated list of the fleet containers' CPU accounting
files, cgroup v1 cpuacct.usage or v2 cpu.stat), each play also gets the CPU seconds the
containers used ("hosts_cpu": the modules Ansible runs in them and the NIC tools'
stand-ins) and the whole machine's busy CPU ("machine_cpu", /proc/stat): what neither the
controller nor the containers count is the docker daemons, the runc of every docker
exec and the kernel. All share the machine's cores: on 2 cores a play's wall is at
least its machine CPU over 2.

The same figures per task ("tasks": name, play, host results, wall, cpu, hosts_cpu), for
the costliest tasks in bench_fleet.py: under the linear strategy a task ends on every
host before the next starts, so a task's figures are its own.
"""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: fleet_stages
type: aggregate
short_description: per-play wall time and controller CPU (tests/fleet)
description: Writes per-play wall time, controller CPU and peak RSS to $RDMA_FLEET_STAGES.
requirements: [enable in ANSIBLE_CALLBACKS_ENABLED]
"""


def _main_cpu() -> float:
    """The ansible-playbook process alone: the strategy's loop, callbacks, forking."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return _main_cpu() + kids.ru_utime + kids.ru_stime


def _cgroup_ns(path: str) -> int | None:
    """CPU nanoseconds of one container's cgroup; None when the container is gone."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except OSError:
        return None
    if path.endswith("cpu.stat"):  # cgroup v2: usage_usec
        fields = dict(line.split() for line in text.splitlines() if line.strip())
        return int(fields.get("usage_usec", 0)) * 1000
    return int(text)


def _hosts_ns() -> dict:
    paths = [p for p in os.environ.get("RDMA_FLEET_CGROUPS", "").split(":") if p]
    return {p: ns for p in paths if (ns := _cgroup_ns(p)) is not None}


def _machine_s() -> float:
    """Busy CPU seconds of the whole machine since boot (/proc/stat: every state but
    idle and iowait): the controller, the containers, and what neither counts - the
    docker daemons and the runc that starts every docker exec, the kernel."""
    fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()[1:]
    ticks = [int(v) for v in fields]
    return (sum(ticks[:8]) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _hosts_delta(before: dict, after: dict) -> float:
    """Seconds the containers present at both ends used (a container killed between the
    two, as the fault run's silent host, is left out)."""
    return sum(after[p] - before[p] for p in before if p in after) / 1e9


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fleet_stages"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.plays = []
        self.current = None
        self.tasks = []
        self.task = None
        self.measure_hosts = bool(os.environ.get("RDMA_FLEET_CGROUPS"))
        self.start_hosts = _hosts_ns()
        self.start_machine = _machine_s()

    def _mark(self, machine: bool) -> dict:
        """Where the clocks stand: wall, the controller's CPU and, with the containers'
        files, their CPU (and the machine's, for a play)."""
        mark = {"t": time.monotonic(), "c": _cpu(), "mc": _main_cpu()}
        if self.measure_hosts:
            mark["h"] = _hosts_ns()
            if machine:
                mark["m"] = _machine_s()
        return mark

    @staticmethod
    def _since(mark: dict, digits: int) -> dict:
        """The figures since a mark: wall, cpu (of it main_cpu, the main process's),
        hosts_cpu and machine_cpu as marked."""
        figures = {
            "wall": round(time.monotonic() - mark["t"], 2),
            "cpu": round(_cpu() - mark["c"], digits),
            "main_cpu": round(_main_cpu() - mark["mc"], digits),
        }
        if "h" in mark:
            figures["hosts_cpu"] = round(_hosts_delta(mark["h"], _hosts_ns()), digits)
        if "m" in mark:
            figures["machine_cpu"] = round(_machine_s() - mark["m"], 2)
        return figures

    def _close_task(self):
        if self.task:
            self.task.update(self._since(self.task.pop("_mark"), 3))
            self.tasks.append(self.task)
            self.task = None

    def _open_task(self, name: str):
        self._close_task()
        play = self.current["play"] if self.current else ""
        self.task = {"task": name, "play": play, "results": 0, "_mark": self._mark(False)}

    def _count(self, *_args, **_kwargs):
        if self.task:
            self.task["results"] += 1

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = _count
    v2_runner_on_unreachable = _count

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._open_task(task.get_name())

    def v2_playbook_on_handler_task_start(self, task):
        self._open_task(task.get_name())

    def _close(self):
        self._close_task()
        if self.current:
            self.current.update(self._since(self.current.pop("_mark"), 2))
            last = self.plays[-1] if self.plays else None
            if last and last["play"] == self.current["play"]:
                # A serial play (roce_switch_qos: one batch per switch) is one stage.
                last["wall"] = round(last["wall"] + self.current["wall"], 2)
                for key in ("cpu", "main_cpu", "hosts_cpu", "machine_cpu"):
                    if key in self.current:
                        last[key] = round(last[key] + self.current[key], 2)
                last["batches"] = last.get("batches", 1) + 1
            else:
                self.plays.append(self.current)
            self.current = None

    def v2_playbook_on_play_start(self, play):
        self._close()
        self.current = {"play": play.get_name(), "_mark": self._mark(True)}

    def v2_playbook_on_stats(self, stats):
        self._close()
        recap = {host: stats.summarize(host) for host in sorted(stats.processed)}
        totals = {
            key: sum(r[key] for r in recap.values())
            for key in ("ok", "changed", "failures", "unreachable", "skipped")
        }
        out = {
            "plays": self.plays,
            "tasks": self.tasks,
            "totals": totals,
            "changed_hosts": sorted(h for h, r in recap.items() if r["changed"]),
            "failed_hosts": sorted(
                h for h, r in recap.items() if r["failures"] or r["unreachable"]
            ),
            "controller_cpu": round(_cpu(), 2),
            "controller_main_cpu": round(_main_cpu(), 2),
            "controller_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "workers_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        }
        if self.measure_hosts:
            out["hosts_cpu"] = round(_hosts_delta(self.start_hosts, _hosts_ns()), 2)
            out["machine_cpu"] = round(_machine_s() - self.start_machine, 2)
        with open(os.environ["RDMA_FLEET_STAGES"], "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=1)
