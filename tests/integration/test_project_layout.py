"""The repository skeleton keeps the shape DESIGN.md gives it."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
COLLECTION = REPO / "collections/ansible_collections/rdma/fabric"


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)


def test_top_level_entries():
    required = {
        "ansible.cfg",
        "site.yml",
        "inventories",
        "collections",
        "tests",
        "README.md",
        "Makefile",
        "requirements.txt",
        ".ci",
    }
    assert required <= {p.name for p in REPO.iterdir()}
    # The roles and playbooks live in the collection, the one source; the top-level
    # roles/ and playbooks/ the design card names are relative symlinks into it.
    for name in ("roles", "playbooks"):
        assert (REPO / name).is_symlink(), name
        assert os.readlink(REPO / name) == f"collections/ansible_collections/rdma/fabric/{name}"
        assert (REPO / name).resolve() == COLLECTION / name
    assert {"roles", "playbooks", "plugins", "LICENSE"} <= {p.name for p in COLLECTION.iterdir()}
    assert os.access(REPO / ".ci" / "run", os.X_OK)


def test_ansible_cfg_settings():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "ansible.cfg")
    defaults = cfg["defaults"]
    assert defaults["inventory"] == "inventories/lab"
    assert defaults["roles_path"] == "collections/ansible_collections/rdma/fabric/roles"
    assert defaults["collections_path"] == "collections"
    assert int(defaults["forks"]) >= 50
    assert defaults["gathering"] == "smart"
    assert defaults["fact_caching"] == "jsonfile"
    cache_dir = defaults["fact_caching_connection"]
    assert cache_dir.startswith(".cache/")
    assert "/.cache/" in (REPO / ".gitignore").read_text().splitlines()
    assert cfg.getboolean("ssh_connection", "pipelining")


def test_ansible_cfg_has_no_unknown_keys():
    result = _run("ansible-config", "validate", "-t", "all")
    assert "All configurations seem valid" in result.stdout, result.stdout + result.stderr
    assert "unknown" not in (result.stdout + result.stderr).lower()


def _imports(playbook: Path) -> list[str]:
    plays = yaml.safe_load(playbook.read_text())
    assert plays, f"{playbook} is empty"
    for play in plays:
        assert set(play) == {"name", "ansible.builtin.import_playbook"}, play
    return [play["ansible.builtin.import_playbook"] for play in plays]


def test_site_only_imports_playbooks():
    # The repository's site.yml is the collection's: rdma.fabric.site imports each
    # stage by its collection name.
    assert _imports(REPO / "site.yml") == ["rdma.fabric.site"]
    stages = _imports(COLLECTION / "playbooks/site.yml")
    assert stages[0] == "rdma.fabric.preflight" and stages[-1] == "rdma.fabric.verify"
    for target in stages:
        namespace, name, stage = target.split(".")
        assert (namespace, name) == ("rdma", "fabric"), target
        assert (COLLECTION / "playbooks" / f"{stage}.yml").is_file(), target


def test_site_syntax_check():
    result = _run("ansible-playbook", "site.yml", "--syntax-check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_top_level_stage_playbook_runs_from_playbooks_dir():
    result = _run("ansible-playbook", "playbooks/verify.yml", "--syntax-check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_molecule_project_dir_through_the_symlink_is_the_collection_role():
    # molecule's MOLECULE_PROJECT_DIRECTORY is os.getcwd(): the kernel's physical path, so
    # the scenarios' "six levels up" from roles/<role> lands on the repository root.
    role = REPO / "roles" / "rdma_verify"
    cwd = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getcwd())"],
        cwd=role,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(cwd) == COLLECTION / "roles/rdma_verify"
    assert Path(cwd).parents[5] == REPO


def _declared_groups(tree: dict) -> set[str]:
    groups = set()
    for name, body in (tree or {}).items():
        groups.add(name)
        groups |= _declared_groups((body or {}).get("children"))
    return groups


def test_inventories_parse_with_the_design_groups():
    expected = {"rdma_hosts", "subnet_managers", "switches", "roce_hosts", "ib_hosts"}
    expected |= {"cumulus_switches", "sonic_switches", "eos_switches"}
    for name in ("lab", "example"):
        result = _run("ansible-inventory", "-i", f"inventories/{name}", "--list")
        assert result.returncode == 0, result.stderr
        declared = _declared_groups(
            yaml.safe_load((REPO / f"inventories/{name}/hosts.yml").read_text())
        )
        assert expected <= declared, (name, expected - declared)
    example = yaml.safe_load(
        _run("ansible-inventory", "-i", "inventories/example", "--list").stdout
    )
    for child in ("cumulus_switches", "sonic_switches", "eos_switches"):
        assert example[child]["hosts"], child


def test_collection_metadata():
    root = REPO / "collections/ansible_collections/rdma/fabric"
    galaxy = yaml.safe_load((root / "galaxy.yml").read_text())
    assert (galaxy["namespace"], galaxy["name"]) == ("rdma", "fabric")
    runtime = yaml.safe_load((root / "meta/runtime.yml").read_text())
    assert "2.19" in runtime["requires_ansible"]


def test_every_role_has_argument_specs():
    roles = [p for p in (COLLECTION / "roles").iterdir() if p.is_dir()]
    assert roles
    for role in roles:
        specs = yaml.safe_load((role / "meta/argument_specs.yml").read_text())
        options = specs["argument_specs"]["main"]["options"]
        defaults = yaml.safe_load((role / "defaults/main.yml").read_text()) or {}
        assert set(defaults) <= set(options), (
            f"{role.name}: undocumented {set(defaults) - set(options)}"
        )
        assert all(name.startswith(role.name + "_") for name in defaults), role.name


def test_role_readmes_carry_their_argument_specs():
    result = _run(sys.executable, "tests/harness/role_vars_table.py", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
