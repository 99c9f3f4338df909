"""ansible-doc renders the collection's plugins and the role's argument spec."""

from __future__ import annotations

import json

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.fabric_schema import RAIL_OPTIONS
from conftest import ROLES_DIR  # noqa: E402


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
    assert set(doc["return"]) == {"devices", "ports", "by_link_layer", "bonds"}
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


def test_roce_qos_module_doc(run_cli):
    proc = run_cli("ansible-doc", "--json", "rdma.fabric.roce_qos")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma.fabric.roce_qos"]
    options = doc["doc"]["options"]
    assert options["backend"]["choices"] == ["auto", "mlnx_qos", "dcb"]
    assert options["require_hw"]["default"] is True
    assert options["state"]["choices"] == ["present", "gathered"]
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert {"drift", "commands", "before", "after", "boot_steps", "supported"} <= set(doc["return"])
    assert doc["examples"].strip()
    text = run_cli("ansible-doc", "rdma.fabric.roce_qos")
    assert text.returncode == 0 and "[ERROR]" not in text.stderr, text.stderr


@pytest.mark.parametrize("name", ["rdma.fabric.roce_policy", "rdma.fabric.roce_policy_errors"])
def test_roce_policy_filter_docs(run_cli, name):
    proc = run_cli("ansible-doc", "-t", "filter", name)
    assert proc.returncode == 0, proc.stderr
    assert f"FILTER {name}" in proc.stdout
    assert "[ERROR]" not in proc.stderr


def test_roce_host_qos_role_doc_lists_every_option(run_cli):
    proc = run_cli("ansible-doc", "-t", "role", "roce_host_qos")
    assert proc.returncode == 0, proc.stderr
    spec = yaml.safe_load((ROLES_DIR / "roce_host_qos" / "meta" / "argument_specs.yml").read_text())
    missing = [n for n in spec["argument_specs"]["main"]["options"] if n not in proc.stdout]
    assert not missing, f"ansible-doc does not show {missing}"


def test_mlxconfig_module_doc(run_cli):
    proc = run_cli("ansible-doc", "rdma.fabric.mlxconfig")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "MODULE rdma.fabric.mlxconfig" in out
    for word in (
        "device",
        "link_type_p1",
        "cnp_802p_prio_p2",
        "settings",
        "optional",
        "check_mode",
    ):
        assert word in out, word
    assert "EXAMPLES" in out and "RETURN VALUES" in out
    assert "reboot_required" in out
    assert "[ERROR]" not in proc.stderr and "[WARNING]" not in proc.stderr


def test_mlxconfig_doc_json_matches_the_module(run_cli):
    from ansible_collections.rdma.fabric.plugins.modules import mlxconfig

    proc = run_cli("ansible-doc", "--json", "rdma.fabric.mlxconfig")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma.fabric.mlxconfig"]
    options = doc["doc"]["options"]
    assert set(mlxconfig.NAMED) | {
        "device",
        "devices",
        "parallel",
        "tool",
        "settings",
        "device_settings",
        "optional",
        "sysfs_root",
    } == set(options)
    # One of device (one card) and devices (a host's cards side by side).
    assert not options["device"].get("required")
    assert options["devices"]["elements"] == "str" and options["parallel"]["default"] == 8
    assert options["tool"]["choices"] == ["auto", "mstconfig", "mlxconfig"]
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert doc["doc"]["attributes"]["diff_mode"]["support"] == "full"
    assert {"before", "after", "changes", "reboot_required", "skipped", "cards"} <= set(
        doc["return"]
    )


@pytest.mark.parametrize(
    ("name", "returns"),
    [
        (
            "rdma.fabric.nvue_config",
            {"patch", "revision", "before", "after", "applied_unchanged", "saved"},
        ),
        ("rdma.fabric.sonic_config_patch", {"patch", "before", "after", "saved", "buffer_model"}),
    ],
)
def test_switch_module_docs(run_cli, name, returns):
    proc = run_cli("ansible-doc", "--json", name)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)[name]
    assert doc["doc"]["attributes"]["check_mode"]["support"] == "full"
    assert set(doc["return"]) == returns
    assert doc["examples"].strip()
    if name.endswith("nvue_config"):
        assert doc["doc"]["options"]["validate_certs"]["default"] is True
        assert doc["doc"]["options"]["port"]["default"] == 8765


def test_switch_filter_and_role_docs(run_cli):
    proc = run_cli("ansible-doc", "-t", "filter", "rdma.fabric.roce_switch_config")
    assert proc.returncode == 0 and "[ERROR]" not in proc.stderr, proc.stderr
    proc = run_cli("ansible-doc", "-t", "role", "roce_switch_qos")
    assert proc.returncode == 0, proc.stderr
    spec = yaml.safe_load(
        (ROLES_DIR / "roce_switch_qos" / "meta" / "argument_specs.yml").read_text()
    )
    missing = [n for n in spec["argument_specs"]["main"]["options"] if n not in proc.stdout]
    assert not missing, f"ansible-doc does not show {missing}"


def test_verify_plugins_docs(run_cli):
    for kind, name in [
        ("filter", "rdma.fabric.perftest_parse"),
        ("filter", "rdma.fabric.pair_rounds"),
        ("module", "rdma.fabric.perftest_run"),
        ("module", "rdma.fabric.rdma_health_info"),
    ]:
        proc = run_cli("ansible-doc", "-t", kind, "--json", name)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)[name]
        assert doc["doc"]["description"] and doc["examples"].strip(), name
        assert "[ERROR]" not in proc.stderr, name


def test_rdma_verify_role_doc(run_cli):
    proc = run_cli("ansible-doc", "-t", "role", "--json", "rdma_verify")
    assert proc.returncode == 0, proc.stderr
    options = json.loads(proc.stdout)["rdma_verify"]["entry_points"]["main"]["options"]
    assert options["rdma_verify_mode"]["choices"] == ["full", "quick"]
    assert options["rdma_verify_min_fraction"]["default"] == 0.9


IB_FILTERS = [
    "ib_guid",
    "ibstat",
    "sminfo",
    "saquery",
    "opensm_conf",
    "opensm_restart_keys",
    "opensm_partition_errors",
    "opensm_guid_errors",
    "opensm_partitions",
    "opensm_partition_line",
    "opensm_expected_pkeys",
    "opensm_unknown_options",
    "opensm_option_errors",
    "opensm_input_files",
    "opensm_routing_engine_errors",
    "ib_sm_port_problems",
    "opensm_fabric_warnings",
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
    assert options["ib_subnet_manager_mode"]["choices"] == ["opensm", "external", "switch", "ufm"]
    # Engines are checked by validate.yml against OpenSM's list (chains, no_fallback).
    assert "choices" not in options["ib_subnet_manager_routing_engines"]
    assert "no_fallback" in " ".join(options["ib_subnet_manager_routing_engines"]["description"])
    assert options["ib_subnet_manager_ipoib_mtu"]["default"] == 5


def test_rdma_rails_role_doc_shows_a_rails_keys(run_cli):
    """ansible-doc shows rdma_rails' sub-options (fabric_schema.RAIL_OPTIONS), a P_Key
    child's too, in every role that reads the plan."""
    for role in ("rdma_rails", "rdma_verify", "roce_switch_qos"):
        proc = run_cli("ansible-doc", "-t", "role", "--json", role)
        assert proc.returncode == 0, proc.stderr
        option = json.loads(proc.stdout)[role]["entry_points"]["main"]["options"]["rdma_rails"]
        assert set(option["options"]) == set(RAIL_OPTIONS), role  # ansible-doc sorts them
        assert set(option["options"]["pkeys"]["options"]) == {"partition", "subnet", "mtu"}
        assert option["options"]["name"]["required"] is True
