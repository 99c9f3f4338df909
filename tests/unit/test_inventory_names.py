"""The typo finder behind rdma.fabric.inventory_check: declared names, closest names,
allowed names, group typos, and the messages."""

from __future__ import annotations

from pathlib import Path

import yaml
from ansible_collections.rdma.fabric.plugins.plugin_utils import inventory_names as names
from conftest import PLAYBOOKS_DIR, ROLES_DIR

REPO = Path(__file__).resolve().parents[2]
ROLES = str(ROLES_DIR)


def test_declared_names_are_every_roles_argument_spec_options():
    known = names.declared_names([ROLES])
    assert {
        "rdma_stack_provider",
        "rdma_verify_min_gbps",
        "soft_roce_links",
        "rdma_roce_policy",
    } <= known
    assert "rdma_stack_provder" not in known


def test_declared_names_read_every_entry_point_and_skip_missing_dirs(tmp_path):
    meta = tmp_path / "site_role" / "meta"
    meta.mkdir(parents=True)
    specs = {
        "argument_specs": {
            "main": {"options": {"rdma_a": {}}},
            "other": {"options": {"rdma_b": {}}},
        }
    }
    (meta / "argument_specs.yml").write_text(yaml.safe_dump(specs))
    (tmp_path / "no_spec_role").mkdir()
    assert names.declared_names([str(tmp_path), str(tmp_path / "missing")]) == {"rdma_a", "rdma_b"}


def test_typo_is_named_with_the_closest_known_name_and_where_it_is_set():
    known = names.declared_names([ROLES])
    found = names.unknown_vars(
        {
            "group rdma_hosts": {"rdma_stack_provder", "ansible_user", "rdma_stack_provider"},
            "host gpu-01": {"rdma_stack_provder"},
            "extra vars": {"__rdma_stack_internal", "site_owner"},
        },
        known,
    )
    assert found == [
        {
            "name": "rdma_stack_provder",
            "where": ["group rdma_hosts", "host gpu-01"],
            "closest": "rdma_stack_provider",
        }
    ]
    [line] = names.messages(found, [])
    where = "group rdma_hosts, host gpu-01"
    assert line == f"rdma_stack_provder (set in {where}): did you mean rdma_stack_provider?"


def test_every_project_prefix_is_checked_and_a_far_name_has_no_suggestion():
    known = {"rdma_stack_provider"}
    found = names.unknown_vars(
        {"host h": {"roce_x", "ib_subnet_manager_y", "soft_roce_z", "rdmaother"}}, known
    )
    assert [f["name"] for f in found] == ["ib_subnet_manager_y", "roce_x", "soft_roce_z"]
    assert all(f["closest"] is None for f in found)
    assert names.messages(found[:1], []) == [
        "ib_subnet_manager_y (set in host h): no role declares it"
    ]


def test_many_places_are_shortened():
    found = names.unknown_vars({f"host h{i}": {"rdma_x"} for i in range(5)}, set())
    assert names.messages(found, []) == [
        "rdma_x (set in host h0, host h1, host h2 and 2 more): no role declares it"
    ]


def test_allowed_names_patterns_and_true():
    sources = {"group all": {"rdma_site_owner", "rdma_site_rack", "rdma_stack_provder"}}
    assert [f["name"] for f in names.unknown_vars(sources, set(), ["rdma_site_*"])] == [
        "rdma_stack_provder"
    ]
    assert [f["name"] for f in names.unknown_vars(sources, set(), ["rdma_stack_provder"])] == [
        "rdma_site_owner",
        "rdma_site_rack",
    ]
    assert names.unknown_vars(sources, set(), True) == []


def test_group_typo_needs_an_empty_targeted_group_and_a_similar_group_with_hosts():
    targeted = ["rdma_hosts", "roce_hosts", "subnet_managers", "switches"]
    hosts = {
        "all": 5,
        "ungrouped": 0,
        "rdma_host": 3,
        "rdma_hosts": 0,
        "subnet_manager": 0,
        "switchs": 2,
        "switches": 1,
    }
    assert names.group_typos(targeted, hosts) == [
        {"group": "rdma_host", "hosts": 3, "closest": "rdma_hosts"}
    ]
    [line] = names.messages([], names.group_typos(targeted, hosts))
    assert line.startswith("group rdma_host (3 hosts): did you mean rdma_hosts?")


def test_groups_of_the_inventory_model_are_never_typos():
    # A RoCE-only site: roce_hosts empty is no typo of gpu_hosts (which has hosts).
    targeted = ["rdma_hosts", "roce_hosts"]
    hosts = {"rdma_hosts": 4, "roce_hosts": 0, "gpu_hosts": 4, "rdma_hostz": 0}
    assert names.group_typos(targeted, hosts, ["gpu_hosts"]) == []
    assert names.group_typos(targeted, {"roce_host": 2}) == [
        {"group": "roce_host", "hosts": 2, "closest": "roce_hosts"}
    ]


def test_preflight_lists_every_group_a_playbook_targets():
    targeted = set()
    for playbook in (PLAYBOOKS_DIR).glob("*.yml"):
        for play in yaml.safe_load(playbook.read_text()):
            if "hosts" in play and play["hosts"] != "localhost":
                targeted.update(p.strip() for p in str(play["hosts"]).split(":") if p.strip())
    [play] = yaml.safe_load((PLAYBOOKS_DIR / "preflight.yml").read_text())
    [check] = [t for t in play["tasks"] if "rdma.fabric.inventory_check" in t]
    assert set(check["rdma.fabric.inventory_check"]["groups"]) == targeted
