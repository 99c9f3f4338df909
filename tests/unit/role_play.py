"""Run a role from the repository with ansible-playbook against localhost and read the
output: which tasks ran, the recap, the error lines. Shared by the role tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from conftest import ROLES_DIR  # noqa: E402  (re-exported for the role tests)

TASK_RE = re.compile(r"^TASK \[(?P<name>.*)\] \*+$", re.MULTILINE)
HANDLER_RE = re.compile(r"^RUNNING HANDLER \[(?P<name>.*)\] \*+$", re.MULTILINE)


def play(role: str) -> str:
    return f"""\
- name: Apply {role} to this machine
  hosts: localhost
  connection: local
  gather_facts: true
  roles:
    - role: {role}
"""


def task_names(role: str, tasks_file: str) -> set[str]:
    tasks = yaml.safe_load((ROLES_DIR / role / "tasks" / tasks_file).read_text())
    return {f"{role} : {t['name']}" for t in tasks}


def arg_spec_task(role: str) -> str:
    return f"{role} : Validating arguments against arg spec 'main'"


def pre_validation(role: str) -> set[str]:
    """What may run before input is known to be good: fact gathering, the argument spec
    check Ansible inserts, and the role's own read-only set_vars.yml and validate.yml."""
    return {"Gathering Facts"} | task_names(role, "set_vars.yml") | task_names(role, "validate.yml")


def tasks_run(output: str) -> list[str]:
    return [m["name"] for m in TASK_RE.finditer(output)]


def handlers_run(output: str) -> list[str]:
    return [m["name"] for m in HANDLER_RE.finditer(output)]


def recap(output: str, host: str = "localhost") -> dict[str, int]:
    match = re.search(rf"^{re.escape(host)}\s*:\s*(?P<counts>.*)$", output, re.MULTILINE)
    assert match, f"no PLAY RECAP line for {host} in:\n{output}"
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match["counts"])}


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "[ERROR]" in line or "FAILED!" in line]


def check_run(run_cli, playbook: Path):
    """A runner of the playbook in --check with extra vars; returns (proc, output)."""

    def run(extra_vars: dict, *args: str):
        proc = run_cli(
            "ansible-playbook",
            "-i",
            "localhost,",
            "--check",
            str(playbook),
            "-e",
            json.dumps(extra_vars),
            *args,
        )
        return proc, proc.stdout + proc.stderr

    return run


def role_check_run(run_cli, tmp_path: Path, role: str):
    """check_run of a playbook that applies the role to localhost."""
    playbook = tmp_path / f"{role}.yml"
    playbook.write_text(play(role))
    return check_run(run_cli, playbook)


def assert_failed_before_any_change(role: str, proc, output: str, absent=()) -> None:
    """Failed in validation: nothing later ran, nothing changed, no text of `absent` shows."""
    assert proc.returncode != 0, output
    ran = tasks_run(output)
    assert ran, output
    allowed = pre_validation(role)
    late = [n for n in ran if n not in allowed and not n.startswith(arg_spec_task(role))]
    assert not late, f"tasks ran after validation failed: {late}"
    counts = recap(output)
    assert counts["failed"] == 1
    assert counts["changed"] == 0
    shown = [text for text in absent if text in output]
    assert not shown, f"ran after validation failed: {shown}"


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
