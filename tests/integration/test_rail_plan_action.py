"""rdma.fabric.rail_plan (an action plugin, run once on the controller) through the real
ansible-playbook: a generated 1,000-host x 8-rail inventory, the per-host plan it
returns, and errors naming hosts. Also measures the controller's cost."""

from __future__ import annotations

import json
import time

import yaml
from conftest import ROLES_DIR

RAILS = [{"name": f"rail{k}", "device": f"mlx5_{k}", "subnet": f"10.{k}.0.0/22"} for k in range(8)]

PLAY = """
- name: Plan the rails of every host once
  hosts: rdma_hosts
  gather_facts: false
  tasks:
    - name: Check the fabric's rail plan
      rdma.fabric.rail_plan:
        rails: "{{ rdma_rails }}"
        hosts: "{{ ansible_play_hosts_all }}"
        partitions: []
      run_once: true
      register: plan
    - name: Keep the result for the test
      ansible.builtin.copy:
        content: "{{ {'hosts': plan.hosts, 'last': plan.plan[last]} | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
      delegate_to: localhost
      run_once: true
      vars:
        last: "{{ ansible_play_hosts_all[-1] }}"
"""


def _inventory(tmp_path, hosts, duplicate=None):
    members = {name: {"rdma_rail_host_index": i + 1} for i, name in enumerate(hosts)}
    if duplicate:
        members[duplicate[1]] = {
            "rdma_rail_host_index": members[duplicate[0]]["rdma_rail_host_index"]
        }
    inventory = {
        "all": {
            "vars": {"rdma_rails": RAILS, "ansible_connection": "local"},
            "children": {"rdma_hosts": {"hosts": members}},
        }
    }
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text(PLAY)
    return path


def _play(run_cli, tmp_path, inventory, timeout=120):
    return run_cli(
        "ansible-playbook",
        "-i",
        str(inventory),
        str(tmp_path / "play.yml"),
        "-e",
        f"out={tmp_path / 'out.json'}",
        timeout=timeout,
    )


def test_one_thousand_hosts_planned_once_on_the_controller(tmp_path, run_cli):
    hosts = [f"gpu{i:04d}" for i in range(1000)]
    inventory = _inventory(tmp_path, hosts)
    out = tmp_path / "out.json"
    start = time.perf_counter()
    proc = _play(run_cli, tmp_path, inventory, timeout=600)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["hosts"] == 1000
    last = result["last"]
    assert [r["name"] for r in last] == [f"rail{k}" for k in range(8)]
    assert [r["address"] for r in last] == [f"10.{k}.3.232" for k in range(8)]
    print(f"\nrail_plan: 1000 hosts x 8 rails through ansible-playbook in {elapsed:.1f} s")
    # The whole playbook (inventory parsing, two run_once tasks) on this 2-core machine.
    assert elapsed < 120, f"{elapsed:.1f} s"


def test_a_duplicate_address_names_both_hosts(tmp_path, run_cli):
    inventory = _inventory(tmp_path, ["gpu01", "gpu02", "gpu03"], duplicate=("gpu01", "gpu03"))
    proc = _play(run_cli, tmp_path, inventory)
    assert proc.returncode != 0
    assert "gpu03 and gpu01 have the same address 10.0.0.1 on rail rail0" in proc.stdout
    assert not (tmp_path / "out.json").exists()


RAIL_FILTERS = (
    "rail_resolve",
    "rail_links",
    "rail_files",
    "rail_drift",
    "rail_nccl",
    "rail_sysctl",
    "rail_sysctl_paths",
)


def test_rail_plugin_and_role_docs(run_cli):
    proc = run_cli("ansible-doc", "--json", "rdma.fabric.rail_plan")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma.fabric.rail_plan"]
    assert set(doc["doc"]["options"]) == {"rails", "policy_mtu", "hosts", "partitions"}
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert {"plan", "hosts", "rails", "errors"} == set(doc["return"])
    names = [f"rdma.fabric.{name}" for name in RAIL_FILTERS]
    proc = run_cli("ansible-doc", "--json", "-t", "filter", *names)
    assert proc.returncode == 0 and "[ERROR]" not in proc.stderr, proc.stderr
    assert set(json.loads(proc.stdout)) == set(names)
    proc = run_cli("ansible-doc", "-t", "role", "rdma_rails")
    assert proc.returncode == 0, proc.stderr
    spec = yaml.safe_load((ROLES_DIR / "rdma_rails/meta/argument_specs.yml").read_text())
    missing = [n for n in spec["argument_specs"]["main"]["options"] if n not in proc.stdout]
    assert not missing, missing
