"""Run a role from the repository with ansible-playbook against localhost and read what
ansible-runner recorded of it (structured events, not the screen): which tasks and
handlers ran, the recap, the failure messages. Shared by the role tests."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import ROLES_DIR  # noqa: E402  (re-exported for the role tests)
from playbook_run import PlaybookRun


def play(role: str, hosts: str = "localhost") -> str:
    return f"""\
- name: Apply {role} to this machine
  hosts: {hosts}
  connection: local
  gather_facts: true
  roles:
    - role: {role}
"""


INCLUDES = ("ansible.builtin.include_tasks", "ansible.builtin.import_tasks")


def task_names(role: str, tasks_file: str) -> set[str]:
    """Names of the file's tasks and of the tasks in the role's files it includes or
    imports (a step skipped as one behind a conditional include is still that step)."""
    tasks = yaml.safe_load((ROLES_DIR / role / "tasks" / tasks_file).read_text())
    names = {f"{role} : {t['name']}" for t in tasks}
    for task in tasks:
        for key in INCLUDES:
            if key in task:
                spec = task[key]
                names |= task_names(role, spec["file"] if isinstance(spec, dict) else spec)
    return names


def arg_spec_task(role: str) -> str:
    return f"{role} : Validating arguments against arg spec 'main'"


def pre_validation(role: str) -> set[str]:
    """What may run before input is known to be good: fact gathering, the argument spec
    check Ansible inserts, and the role's own read-only set_vars.yml and validate*.yml
    (validate.yml and the files it includes for one setting, such as validate_doca.yml)."""
    checks = sorted(p.name for p in (ROLES_DIR / role / "tasks").glob("validate*.yml"))
    names = {"Gathering Facts"} | task_names(role, "set_vars.yml")
    return names.union(*(task_names(role, name) for name in checks))


def started(run: PlaybookRun, handlers: bool) -> list[str]:
    """Names of the tasks (or handlers) started, in order. awx_display reports a handler
    as playbook_on_task_start with is_conditional true."""
    return [
        e["event_data"]["name"].strip()
        for e in run.events
        if e["event"] == "playbook_on_task_start"
        and bool(e["event_data"].get("is_conditional")) == handlers
    ]


def tasks_run(run: PlaybookRun) -> list[str]:
    return started(run, handlers=False)


def handlers_run(run: PlaybookRun) -> list[str]:
    return started(run, handlers=True)


RESULTS = ("runner_on_ok", "runner_on_failed", "runner_on_skipped", "runner_on_unreachable")


def _results(run: PlaybookRun, name: str) -> list[dict]:
    """The result events of the task (or handler) named `name`, on each host it ran for."""
    uuids = {
        e["event_data"]["uuid"]
        for e in run.events
        if e["event"] == "playbook_on_task_start" and e["event_data"]["name"].strip() == name
    }
    return [
        e for e in run.events if e["event"] in RESULTS and e["event_data"].get("task_uuid") in uuids
    ]


def outcomes(run: PlaybookRun, name: str) -> dict[str, str]:
    """host -> ok, failed, skipped or unreachable: the result of the task (or handler)
    named `name` on each host it ran for."""
    return {
        e["event_data"]["host"]: e["event"].removeprefix("runner_on_") for e in _results(run, name)
    }


def results(run: PlaybookRun, name: str) -> dict[str, dict]:
    """host -> the module's result (changed, diff ...) of the task named `name`."""
    return {e["event_data"]["host"]: e["event_data"].get("res", {}) for e in _results(run, name)}


# PLAY RECAP's words and the playbook_on_stats keys that count them.
RECAP_STATS = {
    "ok": "ok",
    "changed": "changed",
    "unreachable": "dark",
    "failed": "failures",
    "skipped": "skipped",
    "rescued": "rescued",
    "ignored": "ignored",
}


def recaps(run: PlaybookRun) -> dict[str, dict[str, int]]:
    """The PLAY RECAP of every host the playbook processed, from playbook_on_stats."""
    stats = [e["event_data"] for e in run.events if e["event"] == "playbook_on_stats"]
    assert len(stats) == 1, f"{len(stats)} playbook_on_stats events in:\n{run.output}"
    [data] = stats
    return {
        host: {word: data[key].get(host, 0) for word, key in RECAP_STATS.items()}
        for host in data["processed"]
    }


def recap(run: PlaybookRun, host: str = "localhost") -> dict[str, int]:
    counts = recaps(run)
    assert host in counts, f"no PLAY RECAP for {host} in:\n{run.output}"
    return counts[host]


def failure_messages(run: PlaybookRun) -> list[str]:
    """'host: message' of every failed or unreachable result (a loop's failed items
    each), from the runner_on_failed / runner_on_unreachable events."""
    messages = []
    for e in run.events:
        if e["event"] not in ("runner_on_failed", "runner_on_unreachable"):
            continue
        data = e["event_data"]
        res = data.get("res", {})
        items = [r for r in res.get("results", []) if isinstance(r, dict) and r.get("failed")]
        for result in items or [res]:
            messages.append(f"{data['host']}: {result.get('msg', '')}")
    return messages


def check_run(run_playbook, playbook: Path):
    """A runner of the playbook in --check with extra vars; returns (run, output). The
    inventory is localhost alone, or `inventory` (a dict, written next to the playbook)."""

    def run(extra_vars: dict, *args: str, inventory: dict | None = None):
        hosts = "localhost,"
        if inventory is not None:
            hosts = str(playbook.parent / "hosts.yml")
            Path(hosts).write_text(json.dumps(inventory))
        proc = run_playbook(
            "-i",
            hosts,
            "--check",
            str(playbook),
            "-e",
            json.dumps(extra_vars),
            *args,
        )
        return proc, proc.output

    return run


def role_check_run(run_playbook, tmp_path: Path, role: str, hosts: str = "localhost"):
    """check_run of a playbook that applies the role to `hosts` (localhost)."""
    playbook = tmp_path / f"{role}.yml"
    playbook.write_text(play(role, hosts))
    return check_run(run_playbook, playbook)


def assert_failed_before_any_change(role: str, proc: PlaybookRun, output: str, absent=()) -> None:
    """Failed in validation: nothing later ran, nothing changed, no task named with a text
    of `absent` started and no such text shows."""
    assert proc.returncode != 0, output
    ran = tasks_run(proc)
    assert ran, output
    allowed = pre_validation(role)
    late = [n for n in ran if n not in allowed and not n.startswith(arg_spec_task(role))]
    assert not late, f"tasks ran after validation failed: {late}"
    counts = recap(proc)
    assert counts["failed"] == 1
    assert counts["changed"] == 0
    begun = [text for text in absent if any(text in name for name in ran)]
    assert not begun, f"ran after validation failed: {begun}"
    shown = [text for text in absent if text in output]
    assert not shown, f"shown after validation failed: {shown}"


def playbook_json(run_cli, *args: str, env: dict[str, str] | None = None):
    """Run ansible-playbook with the ansible.posix.json callback; returns (proc, document):
    plays, their tasks with each host's result and duration, and the stats (ansible.cfg
    enables the timer callback, which prints after the document)."""
    proc = run_cli(
        "ansible-playbook",
        *args,
        env={**(env or {}), "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json"},
    )
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout.lstrip())
    return proc, doc


def tasks_in(doc: dict) -> list[tuple[str, str]]:
    """(play name, task name) of every task that ran, in order."""
    return [(p["play"]["name"], t["task"]["name"]) for p in doc["plays"] for t in p["tasks"]]
