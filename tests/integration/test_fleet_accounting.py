"""The fleet's CPU accounting (tests/fleet/callback_plugins/fleet_stages.py and
bench_fleet.py): besides the controller's CPU, each play records the CPU the fleet's
containers used (their cgroups) and the whole machine's busy CPU.

A real ansible-playbook run with the callback, its "containers" two accounting files
in tmp_path that the play's own tasks advance (cgroup v1's cpuacct.usage in
nanoseconds, v2's cpu.stat in microseconds), one of them removed mid-run as a killed
host's cgroup is: the play's figures must be exactly what the files moved by, the gone
one left out. Then the growth table shows the figures, and '-' for a size measured
before they were recorded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "tests/fleet"
sys.path.insert(0, str(FLEET))

import bench_fleet  # noqa: E402

PLAY = """
- name: First play
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The first container uses 2.5 s, the second 1 s
      ansible.builtin.shell: |
        echo 3500000000 > {v1}
        printf 'usage_usec 1500000\\nuser_usec 1\\n' > {v2}
      changed_when: false

- name: Second play
  hosts: localhost
  gather_facts: false
  tasks:
    - name: The first container uses 0.5 s more, the second is killed
      ansible.builtin.shell: |
        echo 4000000000 > {v1}
        rm {v2}
      changed_when: false
"""


def _run(tmp_path: Path, cgroups: str) -> dict:
    v1, v2 = tmp_path / "cpuacct.usage", tmp_path / "cpu.stat"
    v1.write_text("1000000000\n")
    v2.write_text("usage_usec 500000\nuser_usec 1\n")
    play = tmp_path / "play.yml"
    play.write_text(PLAY.format(v1=v1, v2=v2))
    stages = tmp_path / "stages.json"
    env = dict(
        os.environ,
        ANSIBLE_CALLBACK_PLUGINS=str(FLEET / "callback_plugins"),
        ANSIBLE_CALLBACKS_ENABLED="fleet_stages",
        RDMA_FLEET_STAGES=str(stages),
        RDMA_FLEET_CGROUPS=cgroups.format(v1=v1, v2=v2),
    )
    ansible = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run(
        [str(ansible), "-i", "localhost,", "-c", "local", str(play),
         "-e", f"ansible_python_interpreter={sys.executable}"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(stages.read_text())


def test_each_play_records_the_containers_cpu_a_killed_one_left_out(tmp_path):
    figures = _run(tmp_path, "{v1}:{v2}")
    first, second = figures["plays"]
    assert (first["play"], first["hosts_cpu"]) == ("First play", 3.5)
    # The second container's file is gone at the play's end: only the first counts.
    assert (second["play"], second["hosts_cpu"]) == ("Second play", 0.5)
    # Over the run: the first container's 3 s, nothing of the one gone at the end.
    assert figures["hosts_cpu"] == 3.0
    # The machine's busy CPU, per play and over the run (not compared with the
    # controller's per play: a worker reaped in a play brings the CPU it used before).
    assert all(
        isinstance(p["machine_cpu"], float) and p["machine_cpu"] >= 0 for p in (first, second)
    )
    assert figures["machine_cpu"] > 0


def test_each_task_records_its_own_cpu(tmp_path):
    """Per task too: each task's containers' CPU is what the files moved by while it ran
    (the linear strategy ends a task on every host before the next starts)."""
    figures = _run(tmp_path, "{v1}:{v2}")
    tasks = [(t["play"], t["task"], t["results"], t["hosts_cpu"]) for t in figures["tasks"]]
    assert tasks == [
        ("First play", "The first container uses 2.5 s, the second 1 s", 1, 3.5),
        ("Second play", "The first container uses 0.5 s more, the second is killed", 1, 0.5),
    ]
    assert all(t["cpu"] >= 0 and t["wall"] >= 0 for t in figures["tasks"])
    # The main process's share of the controller's CPU, per task and over the run.
    assert all(0 <= t["main_cpu"] <= t["cpu"] + 0.001 for t in figures["tasks"])
    assert 0 < figures["controller_main_cpu"] <= figures["controller_cpu"]


def test_without_the_containers_no_host_figures(tmp_path):
    figures = _run(tmp_path, "")
    assert all("hosts_cpu" not in play for play in figures["plays"])
    assert all("hosts_cpu" not in task for task in figures["tasks"])
    assert "hosts_cpu" not in figures


def test_the_growth_table_shows_the_containers_cpu_or_a_dash():
    row = {
        "count": 8, "commit": "abc1234", "verify_mode": "quick", "wall_s": 100.0,
        "cpu_s": 80.0, "maxrss_kib": 2048, "memory_mib": 700, "rc": [0, 0, 0],
        "second_changed": 0, "stages": {},
    }  # fmt: skip
    measured = dict(row, count=16, hosts_cpu_s=120.5, machine_cpu_s=300.25)
    lines = bench_fleet.table([row, measured]).splitlines()
    assert "| 8 | abc1234 | quick | 100.0 | 80.0 | 10.00 | - | - | 2 |" in lines[2]
    assert "| 16 | abc1234 | quick | 100.0 | 80.0 | 5.00 | 120.5 | 300.25 | 2 |" in lines[3]


def test_per_stage_sums_the_containers_cpu_of_a_stage():
    run = {
        "plays": [
            {"play": "Install the RDMA stack", "wall": 1.0, "cpu": 2.0, "hosts_cpu": 3.0},
            {"play": "Install the RDMA stack", "wall": 1.0, "cpu": 2.0, "hosts_cpu": 4.0},
            {"play": "Check the inventory", "wall": 0.5, "cpu": 0.5},
        ]
    }
    stages = bench_fleet.per_stage(run)
    assert stages["rdma_stack+nic"] == {"wall": 2.0, "cpu": 4.0, "hosts_cpu": 7.0}
    assert stages["preflight"] == {"wall": 0.5, "cpu": 0.5}


def test_the_costliest_tasks_are_summed_by_name_and_ranked():
    run = {
        "tasks": [
            {"task": "Read", "play": "A", "results": 16, "cpu": 1.0, "hosts_cpu": 2.0},
            {"task": "Apply", "play": "A", "results": 16, "cpu": 0.5, "hosts_cpu": 5.0},
            {"task": "Read", "play": "B", "results": 16, "cpu": 1.0, "hosts_cpu": 0.5},
        ]
    }
    lines = bench_fleet.costliest(run, top=1).splitlines()
    assert lines[2] == "| Apply | 16 | 0.50 | 5.00 | 55.0% |"
    assert lines[3] == "| all 2 tasks | 48 | 2.50 | 7.50 | 100.0% |"
