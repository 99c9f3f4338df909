"""The controller's main process while its workers run: ansible-core's strategy polls
for results every `internal_poll_interval` seconds (1 ms by default), and each poll asks
every live worker whether it has died (a waitpid each: `has_dead_workers`). Its cost
grows with the hosts in flight (up to forks) and with the run's wall time, so a host's
share of it grows with the fleet: at 64 hosts it was a third of the controller's CPU
(the fleet's second run: 182 of 529 s; strace: 11,000 waitpid a second).

ansible.cfg polls every 10 ms. A real ansible-playbook run of one task that sleeps on
32 hosts (the local connection): the main process's own CPU during that task
(tests/fleet's fleet_stages callback, getrusage of the process alone) with the
project's ansible.cfg against the same file polling at ansible-core's default.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CALLBACKS = REPO / "tests/fleet/callback_plugins"
HOSTS = 32

PLAY = """
- name: Workers that wait, as modules on slow hosts do
  hosts: all
  gather_facts: false
  tasks:
    - name: Sleep
      ansible.builtin.command: sleep 8
      changed_when: false
"""


def _main_cpu(tmp_path: Path, config: Path) -> float:
    stages = tmp_path / f"stages-{config.parent.name}.json"
    env = dict(
        {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
        ANSIBLE_CONFIG=str(config),
        ANSIBLE_CALLBACK_PLUGINS=str(CALLBACKS),
        ANSIBLE_CALLBACKS_ENABLED="fleet_stages",
        ANSIBLE_FORKS=str(HOSTS),
        ANSIBLE_CACHE_PLUGIN="ansible.builtin.memory",
        RDMA_FLEET_STAGES=str(stages),
    )
    done = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "hosts.ini"),
         str(tmp_path / "play.yml")],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (task,) = json.loads(stages.read_text())["tasks"]
    return task["main_cpu"]


def test_the_controller_polls_its_workers_ten_times_less_often(tmp_path):
    text = (REPO / "ansible.cfg").read_text()
    assert re.search(r"(?m)^internal_poll_interval = 0\.01$", text), "ansible.cfg"
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "hosts.ini").write_text(
        "\n".join(
            f"h{i:02d} ansible_connection=local ansible_python_interpreter={sys.executable}"
            for i in range(HOSTS)
        )
        + "\n"
    )
    configs = {}
    for name, body in {
        "project": text,
        "default": re.sub(r"(?m)^internal_poll_interval = .*\n", "", text),
    }.items():
        home = tmp_path / name
        home.mkdir()
        (home / "ansible.cfg").write_text(body)
        # ansible.cfg's relative paths (the collection for its preload callback).
        (home / "collections").symlink_to(REPO / "collections")
        configs[name] = home / "ansible.cfg"
    project = _main_cpu(tmp_path, configs["project"])
    default = _main_cpu(tmp_path, configs["default"])
    print(f"main process CPU, 32 hosts x sleep 8: {project:.2f} s (10 ms), {default:.2f} s (1 ms)")
    # Measured here: 0.26-0.27 s against 0.56-0.59 s; forking the workers
    # and reading their results cost the same in both.
    assert project < 0.8 * default, (project, default)
