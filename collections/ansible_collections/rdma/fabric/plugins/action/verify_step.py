# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's planning and judging, on the controller (see modules/verify_step.py).

Nothing big goes through Ansible variables: each host's plan step writes its own sides
to a file its run task reads; each host's outcomes come back as a file fetched to the
run directory (the schedule returns only its summary), read forward by the judge;
judged records are written to the run directory and read back by the report step.
Host health is read from hostvars (``__rdma_verify_health``, set per host).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import shutil
import time
from contextlib import contextmanager

from ansible import context
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible_collections.rdma.fabric.plugins.module_utils import (
    rdma_verify,
    verify_html,
    verify_text,
)
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_outcomes as voutcomes
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils import verify_record as vrecord

HEALTH_VAR = "__rdma_verify_health"
# The schedule's result (its outcomes file's summary): the synchronous call's, or the
# async job's once finished.
OUTCOME_VARS = ("__rdma_verify_sync", "__rdma_verify_waited")
STEPS = ("fabric", "plan", "start", "judge", "report")


def _host_var(task_vars, host, name):
    hostvars = task_vars.get("hostvars") or {}
    try:
        return hostvars[host].get(name)
    except (KeyError, AttributeError):
        return None


def _plain(value):
    """Ansible's tagged containers as plain JSON data."""
    return json.loads(json.dumps(value, default=str))


def _read(run_dir, name, default):
    try:
        with open(os.path.join(run_dir, f"{name}.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return default


@contextmanager
def _replacing(path):
    """A text handle writing path whole or not at all (written aside, then renamed);
    gzip for a .gz path, its header naming the file without .gz (gunzip -N), not the
    .tmp."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if path.endswith(".gz"):
        name = os.path.basename(path)[: -len(".gz")]
        with (
            open(path + ".tmp", "wb") as raw,
            gzip.GzipFile(filename=name, fileobj=raw, mode="wb", compresslevel=1) as gz,
            io.TextIOWrapper(gz, encoding="utf-8") as handle,
        ):
            yield handle
    else:
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            yield handle
    os.replace(path + ".tmp", path)


def _dump(path, data):
    """data as JSON at path (see _replacing); judged records (verify_record) as dicts."""
    with _replacing(path) as handle:
        json.dump(data, handle, default=vrecord.as_json)
    return path


def _write(run_dir, name, data):
    return _dump(os.path.join(run_dir, f"{name}.json"), data)


def _write_records(run_dir, phase, records):
    """A phase's judged records, one JSON object a line (read back one at a time)."""
    with _replacing(os.path.join(run_dir, f"{phase}.jsonl")) as handle:
        for record in records:
            handle.write(json.dumps(record, default=vrecord.as_json) + "\n")


def _read_records(run_dir, phase):
    """A phase's records as written by _write_records, each kept compact; [] when the
    phase did not run."""
    try:
        with open(os.path.join(run_dir, f"{phase}.jsonl"), encoding="utf-8") as handle:
            return [vrecord.Record(json.loads(line)) for line in handle]
    except FileNotFoundError:
        return []


# Above this many tests results.json is written gzip-compressed, as results.json.gz
# (about 600 bytes a test plain, about 43 compressed: a 1,024 x 8 full run's 4.2 million
# tests would be 2.5 GB plain, 181 MB compressed; make bench measures them).
RESULTS_GZIP_TESTS = 200_000


def results_file(tests):
    """results.json, or results.json.gz for a run of more than RESULTS_GZIP_TESTS tests."""
    return "results.json.gz" if tests > RESULTS_GZIP_TESTS else "results.json"


def junit_file(tests):
    """junit.xml, or junit.xml.gz above RESULTS_GZIP_TESTS tests (about 190 bytes a
    test plain: 0.8 GB at 1,024 x 8 full)."""
    return "junit.xml.gz" if tests > RESULTS_GZIP_TESTS else "junit.xml"


def write_reports(run_dir, results, cabling=None):
    """report.html, report.md and junit.xml (or junit.xml.gz, see junit_file) beside the
    results file; junit written test by test, never whole in memory."""
    writers = {
        "report.html": lambda: verify_html.render_parts(results, cabling),
        "report.md": lambda: [verify_text.markdown(results, cabling)],
        junit_file(len(results["pairs"])): lambda: verify_text.junit_lines(results),
    }
    for name, parts in writers.items():
        with _replacing(os.path.join(run_dir, name)) as handle:
            handle.writelines(parts())


def write_results(run_dir, results):
    return _dump(os.path.join(run_dir, results["results_file"]), results)


def outcomes_file(run_dir, phase, host):
    """Where a host's outcomes file of a phase is fetched to on the controller (absolute:
    fetch would resolve a relative one from the playbook's directory)."""
    return os.path.abspath(os.path.join(run_dir, f"outcomes-{phase}", f"{host}.jsonl.gz"))


def _use_async(mode, count):
    """auto: async only when the play has more hosts than forks (then a synchronous call
    would leave hosts waiting for a fork while their peers wait for them). Mitogen's
    async ran no module in the Soft-RoCE lab: keep forks >= hosts there."""
    mode = str(mode).lower()
    if mode in ("true", "false"):
        return mode == "true"
    if mode != "auto":
        raise ValueError(f"rdma_verify_async must be auto, true or false; got {mode!r}")
    return count > _forks()


def _check_async(mode, count):
    """A synchronous schedule runs `forks` hosts at a time: with more hosts than forks the
    later hosts start when their peers' rounds are over, and every test between the two
    batches fails. Refused before any test (rdma_verify_async: false is for Mitogen)."""
    use = _use_async(mode, count)
    if not use and count > _forks():
        raise ValueError(
            f"rdma_verify_async is false but the phase has {count} hosts and forks is "
            f"{_forks()}: a synchronous schedule runs {_forks()} hosts at a time, so the "
            "later hosts would start after their peers' rounds; set rdma_verify_async to "
            f"auto (or true), or run with --forks {count} or more"
        )
    return use


def _forks():
    return int(context.CLIARGS.get("forks") or 5)


def _launch_margin(count):
    """Seconds from the start step until every host has begun a synchronous schedule
    (one batch: no more hosts than forks): about 2 s a batch, plus 10 s. An async
    schedule does not rely on it: its start is released once every host is launched."""
    return 10 + 2 * math.ceil(count / _forks())


def grid_start(count, after=None, now=None, start_wait=None):
    """(start_at, at) of the start step: the predicted launch margin ahead, or with
    `after` (the first start step's `at`, before the async launch) 1.5 times the launch's
    measured length plus 10 s ahead. The releases go fork by fork as the launches did, one
    module run a host each: in the 64-host fleet at forks 16 they took 48 s after a 43 s
    launch (other load had begun meanwhile); a host released a little late still meets
    its round-0 peers within the connect window (rdma_verify_listen_timeout)."""
    now = time.time() if now is None else now
    launch = max(0.0, now - float(after)) if after is not None else None
    margin = _launch_margin(count) if launch is None else 1.5 * launch + 10
    if launch is not None and start_wait and launch + margin > int(start_wait):
        # The first host launched waits from `after` to the start: it would give up
        # (and its async limit, which counts from its launch, would end its rounds).
        raise ValueError(
            f"every host's schedule took {launch:.0f} s to launch, so the round grid "
            f"would start {launch + margin:.0f} s after the first launch, beyond "
            f"rdma_verify_launch_timeout ({int(start_wait)} s) that the first hosts wait "
            "for it: raise rdma_verify_launch_timeout (to at least 2.5 times the launch "
            "plus 10 s) or forks"
        )
    return round(now + margin, 3), round(now, 3)


def round_seconds(options):
    """A round's length on the schedule's grid: a client's connect window, the longest
    test and the server's grace (perftest_run's default, said explicitly)."""
    return (
        int(options.get("listen_timeout", 30))
        + int(options.get("timeout", 60))
        + int(options.get("grace", 10))
    )


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def _health(self, task_vars, hosts):
        return {h: _plain(_host_var(task_vars, h, HEALTH_VAR) or {}) for h in hosts}

    def _pairs(self, args, hosts, host=None):
        if args["phase"] in ("retest", "isolate"):
            pairs = _plain(args.get("pairs") or [])
            if host is not None:
                pairs = [p for p in pairs if host in (p["server"], p["client"])]
            return pairs
        if host is not None:
            return vplan.host_pairs(hosts, host, args["mode"], int(args["rounds"]))
        return vplan.all_pairs(hosts, args["mode"], int(args["rounds"]))

    def _rounds_total(self, args, hosts):
        """The phase's rounds across the fabric (for the progress line), in O(1) for the
        main schedule."""
        if args["phase"] in ("retest", "isolate"):
            return max((int(p["round"]) for p in args.get("pairs") or []), default=-1) + 1
        count, mode = len(hosts), args["mode"]
        rounds = vplan.round_count(count, mode, int(args["rounds"]))
        return rounds * (2 if vplan.two_way(count, mode) else 1)

    def _plan(self, args, hosts, health, host=None, lazy=False):
        """The phase's tests (host: that host's); lazy: those of the main schedule (the
        main and latency phases) one at a time (vplan.iter_plan), for a step that reads
        each once; the retest and isolate phases' few are checked whole (vplan.plan)."""
        pairs = self._pairs(args, hosts, host)
        if host is not None:
            wanted = {host}
            for p in pairs:
                wanted |= {p["server"], p["client"]} if isinstance(p, dict) else {p[1], p[2]}
            health = {h: health[h] for h in wanted if h in health}
        scheduled = args["phase"] not in ("retest", "isolate")
        planner = vplan.iter_plan if lazy and scheduled else vplan.plan
        return planner(
            args["phase"], pairs, health, _plain(args["options"]), _plain(args.get("rails") or {})
        )

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        step = args.get("step")
        if step not in STEPS:
            raise AnsibleActionFail(f"verify_step: step must be one of {', '.join(STEPS)}")
        hosts = list(args.get("hosts") or [])
        try:
            if step == "fabric":
                result.update(self._fabric(args, task_vars, hosts))
            elif step == "plan":
                me = task_vars["inventory_hostname"]
                health = {h: None for h in hosts}
                tests = self._plan(args, hosts, _LazyHealth(self, task_vars, health), me)
                sides = vplan.host_sides(me, tests)
                slot = round_seconds(args["options"])
                last = max((s["round"] for s in sides), default=-1)
                result.update(
                    **self._plan_file(args, me, sides),
                    rounds_total=self._rounds_total(args, hosts),
                    round_seconds=slot,
                    use_async=_check_async(args.get("run_async", "auto"), len(hosts)),
                )
                # The grid's end from the start step, plus the launch (async: the wait
                # for the release of the start) and a margin.
                launch = (
                    int(args.get("start_wait") or 900)
                    if result["use_async"]
                    else _launch_margin(len(hosts))
                )
                result["deadline"] = launch + (last + 1) * slot + 120
            elif step == "start":
                # One start for every host of the phase (run once, after every plan; an
                # async phase's again once every host is launched, with `after`).
                result["start_at"], result["at"] = grid_start(
                    len(hosts), args.get("after"), start_wait=args.get("start_wait")
                )
            elif step == "judge":
                result.update(self._judge(args, task_vars, hosts))
            else:
                result.update(self._report(args, task_vars, hosts))
        except (KeyError, TypeError, ValueError) as exc:
            raise AnsibleActionFail(f"verify_step {step}: {exc}") from exc
        result["changed"] = False
        return result

    @staticmethod
    def _plan_file(args, host, sides):
        """A host's sides (megabytes at 1,024 hosts x 8 rails full) go to a controller
        file the run task reads, not into hostvars; without run_dir, into the result.
        outcomes_file: where the host's outcomes file is fetched to."""
        if not args.get("run_dir"):
            return {"sides": sides, "sides_count": len(sides)}
        # Absolute: lookup('file') searches a relative path in the role and playbook
        # directories, not where the run directory is.
        folder = os.path.abspath(os.path.join(args["run_dir"], f"plan-{args['phase']}"))
        return {
            "plan_file": _write(folder, host, sides),
            "sides_count": len(sides),
            "outcomes_file": outcomes_file(args["run_dir"], args["phase"], host),
        }

    def _fabric(self, args, task_vars, hosts):
        live = [h for h in hosts if _host_var(task_vars, h, HEALTH_VAR)]
        health = self._health(task_vars, live)
        out = vfabric.fabric(
            health,
            float(args.get("expected_rate_gbps") or 0),
            float(args.get("rate_majority") or vfabric.RATE_MAJORITY),
        )
        options = _plain(args["options"])
        out["hosts"] = live
        out["unreachable"] = [h for h in hosts if h not in live]
        # Bad options stop the play here, before any traffic (in check mode too).
        errors = vplan.option_errors(options, list(out["rails"]))
        if errors:
            return dict(out, failed=True, msg="rdma_verify: " + "; ".join(errors))
        out["planned"] = vplan.main_count(
            live, health, options, out["rails"], args["mode"], int(args["rounds"])
        )
        if out["same_machine"]:
            return dict(out, failed=True, msg="rdma_verify: " + "; ".join(out["same_machine"]))
        return out

    def _outcomes(self, args, task_vars, hosts):
        """The hosts' outcomes files fetched to the run directory, each checked against
        the summary its schedule returned (a host without one did not come back)."""
        files = {}
        for host in hosts:
            summary = None
            for name in OUTCOME_VARS:
                done = _host_var(task_vars, host, name) or {}
                summary = summary or _plain(done.get("outcomes") or {}) or None
            files[host] = (outcomes_file(args["run_dir"], args["phase"], host), summary)
        return voutcomes.OutcomeFiles(files)

    def _judge(self, args, task_vars, hosts):
        phase, run_dir = args["phase"], args["run_dir"]
        health = self._health(task_vars, hosts)
        options = _plain(args["options"])
        records = vjudge.judge(
            self._plan(args, hosts, health, lazy=True),
            self._outcomes(args, task_vars, hosts),
            options.get("duration"),
            options,
            pack=vrecord.Record,
        )
        _write_records(run_dir, phase, records)
        # The hosts' plan files were read by their run tasks, their outcomes are judged
        # (the records keep what was judged).
        for folder in (f"plan-{phase}", f"outcomes-{phase}"):
            shutil.rmtree(os.path.join(run_dir, folder), ignore_errors=True)
        out = {
            "tests": len(records),
            "tests_failed": sum(not r["passed"] for r in records),
            "next": [],
            "next_phase": None,
        }
        if phase == "main" and args.get("retest", True):
            out["next"] = vjudge.retest_pairs(records, health)
            if out["next"]:
                out["next_phase"] = "retest"
                return out
        if phase in ("main", "retest"):
            if phase == "retest":
                main = _read_records(run_dir, "main")
                vjudge.merge_retests(main, records)
                _write_records(run_dir, "main", main)
                _write_records(run_dir, phase, records)
            else:
                main = records
            isolate = viso.isolation(main, health, options)
            _write(run_dir, "isolation", isolate)
            out["suspects"] = isolate["suspects"]
            if args.get("isolate", True) and isolate["pairs"]:
                out.update(next=isolate["pairs"], next_phase="isolate")
        return out

    def _report(self, args, task_vars, hosts):
        run_dir = args.get("run_dir")
        fabric = _plain(args.get("fabric") or {})
        live = fabric.get("hosts") or hosts
        health = self._health(task_vars, live)
        records = []
        for phase in ("main", "retest", "isolate", "latency"):
            records += _read_records(run_dir, phase) if run_dir else []
        isolate = _read(run_dir, "isolation", {}) if run_dir else {}
        options = _plain(args["options"])
        verdict = viso.verdicts(isolate, records, health, options.get("bandwidth") or {})
        results = rdma_verify.report(
            health,
            records,
            dict(isolate, verdicts=verdict),
            options,
            args["stamp"],
            fabric=fabric,
            hosts=hosts,
            fabric_hosts=list(args.get("fabric_hosts") or []),
        )
        results["results_file"] = results_file(len(records))
        if run_dir and args.get("write"):
            write_results(run_dir, results)
            cabling = [
                row
                for h in live
                for row in ((health.get(h) or {}).get("cabling") or {}).get("rows") or []
            ]
            write_reports(run_dir, results, cabling)
        # Only what the summary and the fail message show: the whole document is in
        # results.json (gigabytes at 1,024 x 8 full, never through Ansible).
        return {"results": verify_text.brief(results)}


class _LazyHealth(dict):
    """{host: health} read from hostvars on first use (a host plans with its peers only)."""

    def __init__(self, action, task_vars, hosts):
        super().__init__(hosts)
        self._action, self._vars = action, task_vars

    def __getitem__(self, host):
        value = super().__getitem__(host)
        if value is None:
            value = _plain(_host_var(self._vars, host, HEALTH_VAR) or {})
            self[host] = value
        return value

    def get(self, host, default=None):
        if host not in self:
            return default
        return self[host]
