"""Per-play wall time and controller CPU/RSS of a playbook run, for the fleet harness.

Writes JSON to $RDMA_FLEET_STAGES at the end of the run: one entry per play (site.yml's
plays, in order) with its wall seconds and the controller CPU seconds it used (the
ansible-playbook process and its reaped workers, from getrusage), the recap per host,
and the controller's peak RSS (the main process; workers are forks of it).
"""

from __future__ import annotations

import json
import os
import resource
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: fleet_stages
type: aggregate
short_description: per-play wall time and controller CPU (tests/fleet)
description: Writes per-play wall time, controller CPU and peak RSS to $RDMA_FLEET_STAGES.
requirements: [enable in ANSIBLE_CALLBACKS_ENABLED]
"""


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fleet_stages"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.plays = []
        self.current = None

    def _close(self):
        if self.current:
            self.current["wall"] = round(time.monotonic() - self.current.pop("_t"), 2)
            self.current["cpu"] = round(_cpu() - self.current.pop("_c"), 2)
            last = self.plays[-1] if self.plays else None
            if last and last["play"] == self.current["play"]:
                # A serial play (roce_switch_qos: one batch per switch) is one stage.
                last["wall"] = round(last["wall"] + self.current["wall"], 2)
                last["cpu"] = round(last["cpu"] + self.current["cpu"], 2)
                last["batches"] = last.get("batches", 1) + 1
            else:
                self.plays.append(self.current)
            self.current = None

    def v2_playbook_on_play_start(self, play):
        self._close()
        self.current = {"play": play.get_name(), "_t": time.monotonic(), "_c": _cpu()}

    def v2_playbook_on_stats(self, stats):
        self._close()
        recap = {host: stats.summarize(host) for host in sorted(stats.processed)}
        totals = {
            key: sum(r[key] for r in recap.values())
            for key in ("ok", "changed", "failures", "unreachable", "skipped")
        }
        out = {
            "plays": self.plays,
            "totals": totals,
            "changed_hosts": sorted(h for h, r in recap.items() if r["changed"]),
            "failed_hosts": sorted(
                h for h, r in recap.items() if r["failures"] or r["unreachable"]
            ),
            "controller_cpu": round(_cpu(), 2),
            "controller_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "workers_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        }
        with open(os.environ["RDMA_FLEET_STAGES"], "w", encoding="utf-8") as handle:
            json.dump(out, handle, indent=1)
