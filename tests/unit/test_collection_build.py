"""The rdma.fabric collection as the Ansible world consumes it: every filter documented
for ansible-doc, and the built tarball carrying its licence and generated changelog."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import yaml

COLLECTION = (
    Path(__file__).resolve().parents[2] / "collections" / "ansible_collections" / "rdma" / "fabric"
)


def test_every_filter_has_documentation(run_cli):
    proc = run_cli("ansible-doc", "-t", "filter", "-l", "rdma.fabric", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert len(listed) >= 20
    assert not [name for name, short in listed.items() if short in ("UNDOCUMENTED", "", None)]
    proc = run_cli("ansible-doc", "-t", "filter", "--json", *listed)
    assert proc.returncode == 0, proc.stderr
    docs = json.loads(proc.stdout)
    assert sorted(docs) == sorted(listed)
    for name, doc in docs.items():
        assert doc["doc"]["description"], name
        assert doc["doc"]["version_added"] in ("0.1.0", "0.2.0", "0.3.0"), name


def test_built_collection_has_licence_changelog_and_no_tests(run_cli, tmp_path):
    proc = run_cli(
        "ansible-galaxy", "collection", "build", str(COLLECTION), "--output-path", str(tmp_path)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version = yaml.safe_load((COLLECTION / "galaxy.yml").read_text())["version"]
    with tarfile.open(tmp_path / f"rdma-fabric-{version}.tar.gz") as tar:
        names = set(tar.getnames())
        licence = tar.extractfile("LICENSE").read().decode()
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    assert "GNU GENERAL PUBLIC LICENSE" in licence and "Version 3" in licence
    assert manifest["collection_info"]["license"] == ["GPL-3.0-or-later"]
    assert {
        "CHANGELOG.md",
        "changelogs/changelog.yaml",
        "plugins/action/inventory_check.py",
    } <= names
    assert not [n for n in names if n.startswith("tests/")]
