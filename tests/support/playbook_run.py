"""Run ansible-playbook through ansible-runner, the library AWX runs playbooks with, and
keep what it reports: the screen text and the structured events of its awx_display
callback (task and handler starts, each host's result, the stats of the recap)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from ansible_runner.interface import init_command_config


@dataclass
class PlaybookRun:
    """One ansible-playbook run: exit code, screen text and events, as ansible-runner
    recorded them (event dicts as in its artifacts' job_events)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    events: list[dict] = field(default_factory=list)

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_playbook(
    binary: str, args: list[str], env: dict[str, str], cwd: Path, timeout: int
) -> PlaybookRun:
    """Run `binary args` in cwd with exactly env (plus what ansible-runner sets for its
    callback). Raises subprocess.TimeoutExpired past timeout, as subprocess.run does."""
    events: list[dict] = []

    def keep(event: dict) -> bool:
        events.append(event)
        return True

    # ansible-runner starts from os.environ: give it exactly the environment wanted.
    # Host key checking stays what ansible-playbook's default is (runner turns it off).
    wanted = {"ANSIBLE_HOST_KEY_CHECKING": "True", **env}
    with tempfile.TemporaryDirectory(prefix="runner-") as private:
        with mock.patch.dict(os.environ, wanted, clear=True):
            runner = init_command_config(
                binary,
                list(args),
                private_data_dir=private,
                host_cwd=str(cwd),
                runner_mode="subprocess",
                # Keep the caller's fact cache plugin (runner would set a jsonfile one).
                fact_cache_type="none",
                suppress_env_files=True,
                quiet=True,
                timeout=timeout,
                event_handler=keep,
            )
        runner.run()
        if runner.status == "timeout":
            raise subprocess.TimeoutExpired([binary, *args], timeout)
        stdout, stderr = runner.stdout.read(), runner.stderr.read()
    return PlaybookRun([binary, *args], runner.rc, stdout, stderr, events)
