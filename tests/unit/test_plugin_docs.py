"""ansible-doc renders the collection's plugins and the role's argument spec."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

ROLES_DIR = Path(__file__).resolve().parents[2] / "roles"


def test_module_doc(run_cli):
    proc = run_cli("ansible-doc", "rdma.fabric.rdma_devices_info")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "MODULE rdma.fabric.rdma_devices_info" in out
    assert "sysfs_root" in out
    assert "type: path" in out
    assert "EXAMPLES" in out
    assert "RETURN VALUES" in out
    assert "[ERROR]" not in proc.stderr


def test_module_doc_json_matches_argument_spec(run_cli):
    proc = run_cli("ansible-doc", "--json", "rdma.fabric.rdma_devices_info")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma.fabric.rdma_devices_info"]
    assert doc["doc"]["options"]["sysfs_root"]["type"] == "path"
    assert doc["doc"]["options"]["sysfs_root"]["default"] == "/"
    assert set(doc["return"]) == {"devices", "by_link_layer"}
    assert doc["examples"].strip()


def test_filter_doc(run_cli):
    proc = run_cli("ansible-doc", "-t", "filter", "rdma.fabric.dkms_status")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "FILTER rdma.fabric.dkms_status" in out
    assert "_input" in out
    assert "type: str" in out
    assert "[ERROR]" not in proc.stderr


def test_role_doc_lists_every_option(run_cli):
    proc = run_cli("ansible-doc", "-t", "role", "rdma_stack")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "rdma_stack_provider" in out
    assert "ENTRY POINT: *main*" in out or "ENTRY POINT: main" in out
    spec = yaml.safe_load((ROLES_DIR / "rdma_stack" / "meta" / "argument_specs.yml").read_text())
    options = spec["argument_specs"]["main"]["options"]
    missing = [name for name in options if name not in out]
    assert not missing, f"ansible-doc does not show {missing}"


def test_role_doc_json_shows_provider_choices(run_cli):
    proc = run_cli("ansible-doc", "-t", "role", "--json", "rdma_stack")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma_stack"]
    provider = doc["entry_points"]["main"]["options"]["rdma_stack_provider"]
    assert provider["choices"] == ["inbox", "doca"]
    assert provider["default"] == "inbox"


IB_FILTERS = [
    "ib_guid",
    "ibstat",
    "sminfo",
    "saquery",
    "opensm_conf",
    "opensm_restart_keys",
    "opensm_partition_errors",
    "opensm_partitions",
    "opensm_partition_line",
    "opensm_expected_pkeys",
]


def test_ib_filter_docs(run_cli):
    proc = run_cli(
        "ansible-doc", "--json", "-t", "filter", *(f"rdma.fabric.{f}" for f in IB_FILTERS)
    )
    assert proc.returncode == 0, proc.stderr
    docs = json.loads(proc.stdout)
    for name in IB_FILTERS:
        doc = docs[f"rdma.fabric.{name}"]
        assert doc["doc"]["short_description"], name
        assert "_input" in doc["doc"]["options"], name
        assert doc["examples"].strip() and doc["return"]["_value"], name


def test_ib_subnet_manager_role_doc(run_cli):
    proc = run_cli("ansible-doc", "-t", "role", "--json", "ib_subnet_manager")
    assert proc.returncode == 0, proc.stderr
    options = json.loads(proc.stdout)["ib_subnet_manager"]["entry_points"]["main"]["options"]
    assert options["ib_subnet_manager_mode"]["choices"] == ["opensm", "external"]
    assert "dfsssp" in options["ib_subnet_manager_routing_engines"]["choices"]
