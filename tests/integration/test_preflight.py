"""playbooks/preflight.yml (the first play of site.yml) fails on typos in variable and
group names before any other play runs, passes the example and lab inventories, and
stays fast at 1,000 hosts."""

from __future__ import annotations

import importlib.util
import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from role_play import playbook_json, tasks_in

REPO = Path(__file__).resolve().parents[2]
CHECK = "Fail on variable and group names no role knows"


def inventory(tmp_path: Path, hosts_yml: dict, group_vars: dict | None = None) -> Path:
    inv = tmp_path / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts_yml))
    for group, data in (group_vars or {}).items():
        (inv / "group_vars" / f"{group}.yml").write_text(yaml.safe_dump(data))
    return inv


def local_rack(group: str = "rdma_hosts") -> dict:
    host = {"ansible_connection": "local"}
    return {"all": {"children": {group: {"children": {"roce_hosts": {"hosts": {"gpu-01": host}}}}}}}


def check_result(doc: dict) -> dict:
    [task] = [t for p in doc["plays"] for t in p["tasks"] if t["task"]["name"] == CHECK]
    return task["hosts"]["localhost"]


def test_variable_typo_fails_site_yml_before_any_other_play(run_cli, tmp_path):
    inv = inventory(tmp_path, local_rack(), {"rdma_hosts": {"rdma_stack_provder": "doca"}})
    proc, doc = playbook_json(run_cli, "-i", str(inv), "site.yml", "--check")
    assert proc.returncode != 0
    result = check_result(doc)
    assert result["failed"]
    assert (
        "rdma_stack_provder (set in group rdma_hosts): did you mean rdma_stack_provider?"
        in result["msg"]
    )
    assert {p for p, _ in tasks_in(doc)} == {"Check the inventory before anything else"}
    assert "gpu-01" not in doc["stats"]


def test_extra_vars_typo_is_named(run_cli, tmp_path):
    inv = inventory(tmp_path, local_rack())
    proc, doc = playbook_json(
        run_cli, "-i", str(inv), "rdma.fabric.preflight", "-e", "rdma_verify_min_gbp=3"
    )
    assert proc.returncode != 0
    assert check_result(doc)["unknown_vars"] == [
        {"name": "rdma_verify_min_gbp", "where": ["extra vars"], "closest": "rdma_verify_min_gbps"}
    ]


def test_group_typo_fails(run_cli, tmp_path):
    inv = inventory(tmp_path, local_rack(group="rdma_host"))
    proc, doc = playbook_json(run_cli, "-i", str(inv), "site.yml", "--check")
    assert proc.returncode != 0
    result = check_result(doc)
    assert result["group_typos"] == [{"group": "rdma_host", "hosts": 1, "closest": "rdma_hosts"}]
    assert "group rdma_host (1 hosts): did you mean rdma_hosts?" in result["msg"]
    assert "gpu-01" not in doc["stats"]


def test_site_variables_are_kept_with_allow_unknown_vars(run_cli, tmp_path):
    site_vars = {
        "rdma_site_owner": "ops",
        "rdma_site_rack": "r01",
        "rdma_fabric_allow_unknown_vars": ["rdma_site_*"],
    }
    inv = inventory(tmp_path, local_rack(), {"all": site_vars})
    proc, doc = playbook_json(run_cli, "-i", str(inv), "rdma.fabric.preflight")
    assert proc.returncode == 0, check_result(doc)["msg"]
    assert check_result(doc)["unknown_vars"] == []
    allow_all = json.dumps({"rdma_fabric_allow_unknown_vars": True, "rdma_stack_provder": "doca"})
    proc, doc = playbook_json(run_cli, "-i", str(inv), "rdma.fabric.preflight", "-e", allow_all)
    assert proc.returncode == 0


def test_bad_allow_unknown_vars_is_named(run_cli, tmp_path):
    inv = inventory(tmp_path, local_rack())
    proc, doc = playbook_json(
        run_cli,
        "-i",
        str(inv),
        "rdma.fabric.preflight",
        "-e",
        "rdma_fabric_allow_unknown_vars=rdma_site_x",
    )
    assert proc.returncode != 0
    assert "rdma_fabric_allow_unknown_vars must be true or a list" in check_result(doc)["msg"]


def test_example_inventory_has_no_unknown_names(run_cli):
    proc, doc = playbook_json(run_cli, "-i", "inventories/example", "rdma.fabric.preflight")
    result = check_result(doc)
    assert proc.returncode == 0, result["msg"]
    assert result["hosts"] > 50


@pytest.fixture
def lab_inventory_up(tmp_path, monkeypatch):
    """The lab inventory as `rdmalab.py up` leaves it (its own write_inventory)."""
    lab = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", lab)
    monkeypatch.syspath_prepend(str(REPO / "tests" / "lab"))  # rdmalab imports lab_fabric
    spec = importlib.util.spec_from_file_location("rdmalab", REPO / "tests" / "lab" / "rdmalab.py")
    rdmalab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rdmalab)
    monkeypatch.setattr(rdmalab, "INVENTORY", lab / "hosts.lab.yml")
    monkeypatch.setattr(rdmalab, "STATE", tmp_path / "state")
    vms = [
        {
            "name": f"lab{i}",
            "port": 2220 + i,
            "fabric_address": f"192.0.2.{10 + i}",
            "rail_host_index": 10 + i,
        }
        for i in (1, 2, 3)
    ]
    rdmalab.write_inventory(vms)
    return lab


def test_lab_inventory_up_has_no_unknown_names(run_cli, lab_inventory_up):
    proc, doc = playbook_json(run_cli, "-i", str(lab_inventory_up), "rdma.fabric.preflight")
    result = check_result(doc)
    assert proc.returncode == 0, result["msg"]
    assert result["hosts"] == 3


def test_thousand_hosts_one_typo_in_one_host_vars_file(run_cli, tmp_path):
    names = [f"gpu-{i:04d}" for i in range(1000)]
    racks = {
        f"rack{r:02d}": {"hosts": dict.fromkeys(names[r * 32 : (r + 1) * 32])} for r in range(32)
    }
    hosts = {n: {"ansible_host": f"10.0.{i // 250}.{i % 250}"} for i, n in enumerate(names)}
    inv = inventory(
        tmp_path,
        {
            "all": {
                "children": {"rdma_hosts": {"children": {"roce_hosts": {"hosts": hosts}, **racks}}}
            }
        },
        {"rdma_hosts": {"rdma_stack_provider": "inbox"}},
    )
    (inv / "host_vars").mkdir()
    for name in names[::10]:
        (inv / "host_vars" / f"{name}.yml").write_text("roce_host_qos_require_hw: false\n")
    (inv / "host_vars" / "gpu-0999.yml").write_text("rdma_verify_min_gbp: 3\n")
    proc, doc = playbook_json(run_cli, "-i", str(inv), "rdma.fabric.preflight")
    assert proc.returncode != 0
    result = check_result(doc)
    assert result["hosts"] == 1000
    assert result["unknown_vars"] == [
        {
            "name": "rdma_verify_min_gbp",
            "where": ["host gpu-0999"],
            "closest": "rdma_verify_min_gbps",
        }
    ]
    [task] = [t for p in doc["plays"] for t in p["tasks"] if t["task"]["name"] == CHECK]
    took = datetime.fromisoformat(task["task"]["duration"]["end"]) - datetime.fromisoformat(
        task["task"]["duration"]["start"]
    )
    print(f"inventory_check at 1,000 hosts: {took.total_seconds():.2f} s")
