"""`make demo` runs ansible-playbook with a blocking standard input.

ansible-core 2.19 refuses to start when stdin is in non-blocking mode ("Ansible requires
blocking IO on stdin/stdout/stderr", lib/ansible/cli/__init__.py), which is what a CI job,
nohup or a background shell can hand it. The demo recipe redirects ansible-playbook's
stdin from /dev/null. This test takes the recipe as make would run it (`make -n`),
points it at a one-task localhost playbook and runs it with a non-blocking stdin.
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

PLAY = """\
- name: Stand-in for site.yml
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Say something
      ansible.builtin.debug:
        msg: stdin is fine
"""


def _nonblocking_pipe():
    read_end, write_end = os.pipe()
    flags = fcntl.fcntl(read_end, fcntl.F_GETFL)
    fcntl.fcntl(read_end, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    return read_end, write_end


def _run(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    read_end, write_end = _nonblocking_pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["ANSIBLE_CONFIG"] = str(tmp_path / "none.cfg")
    env["ANSIBLE_LOCAL_TEMP"] = str(tmp_path / "tmp")
    try:
        return subprocess.run(
            ["sh", "-c", command],
            cwd=tmp_path,
            stdin=read_end,
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
            check=False,
        )
    finally:
        os.close(read_end)
        os.close(write_end)


def _demo_playbook_line() -> str:
    out = subprocess.run(
        ["make", "-n", "-s", "demo", "LAB=true"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = [line for line in out.splitlines() if "ansible-playbook site.yml" in line]
    assert lines, f"no ansible-playbook site.yml in make demo's recipe:\n{out}"
    return lines[0]


def test_nonblocking_stdin_is_refused_without_the_redirect(tmp_path):
    # The premise: this ansible-core refuses a non-blocking stdin.
    (tmp_path / "site.yml").write_text(PLAY)
    result = _run("ansible-playbook -i localhost, -c local site.yml", tmp_path)
    assert result.returncode != 0
    assert "blocking" in (result.stdout + result.stderr).lower()


def test_demo_recipe_runs_with_a_nonblocking_stdin(tmp_path):
    (tmp_path / "site.yml").write_text(PLAY)
    line = _demo_playbook_line()
    # Run only the ansible-playbook part of the recipe, on a local inventory.
    command = line.replace(
        "ansible-playbook site.yml", "ansible-playbook -i localhost, -c local site.yml", 1
    )
    command = command.split("||", 1)[0].split(";", 1)[-1]
    assert "ansible-playbook" in command, shlex.quote(line)
    result = _run(command, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stdin is fine" in result.stdout
    # make demo names each stage with the elapsed time (tests/lab/callback_plugins).
    assert re.search(r"\[demo\] stage: Stand-in for site.yml \(elapsed 0m\d\ds\)", result.stdout)
