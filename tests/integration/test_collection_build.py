"""The rdma.fabric collection as the Ansible world consumes it: every filter documented
for ansible-doc; `ansible-galaxy collection build` carrying its licence, generated
changelog, roles and stage playbooks; and `ansible-galaxy collection install` of that
tarball into an empty collections path, where the roles and playbooks resolve by their
collection names with nothing of this repository on the search path."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import ansible
import pytest
import yaml
from ansible.galaxy.dependency_resolution.versioning import meets_requirements
from conftest import COLLECTION_DIR, ROLES_DIR, ansible_bin

# The collections the pinned `ansible` package bundles (requirements.txt), beside
# ansible-core in the venv; ansible.utils is ansible.netcommon's own dependency.
BUNDLED = Path(ansible.__file__).resolve().parents[1] / "ansible_collections"
BUNDLED_DEPS = [
    ("community", "general"),
    ("ansible", "netcommon"),
    ("arista", "eos"),
    ("ansible", "utils"),
]


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    # No ansible.cfg of the repository applies: cwd is a scratch directory and
    # ANSIBLE_CONFIG points at an empty file.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    (cwd / "empty.cfg").touch()
    full_env = {**clean, "ANSIBLE_CONFIG": str(cwd / "empty.cfg"), "ANSIBLE_NOCOLOR": "1", **env}
    return subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the built tarball, the collections path it was installed into)."""
    work = tmp_path_factory.mktemp("collection")
    built = _run(
        [
            ansible_bin("ansible-galaxy"),
            "collection",
            "build",
            str(COLLECTION_DIR),
            "--output-path",
            str(work),
        ],
        work,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [tarball] = work.glob("rdma-fabric-*.tar.gz")
    colls = work / "colls"
    # No Galaxy is reachable here: galaxy.yml's dependencies resolve offline from the
    # collections the pinned `ansible` package bundles, given as `type: dir` sources.
    requirements = {
        "collections": [
            *({"name": str(BUNDLED / ns / name), "type": "dir"} for ns, name in BUNDLED_DEPS),
            {"name": str(tarball), "type": "file"},
        ]
    }
    (work / "requirements.yml").write_text(yaml.safe_dump(requirements))
    inst = _run(
        [
            ansible_bin("ansible-galaxy"),
            "collection",
            "install",
            "--offline",
            # The bundled copies on ansible-core's own sys.path would count as
            # "already installed": install them into the empty path all the same.
            "--force-with-deps",
            "-r",
            str(work / "requirements.yml"),
            "-p",
            str(colls),
        ],
        work,
        # Only the empty path counts: a copy installed in ~/.ansible/collections must
        # neither stop this install ("already installed") nor answer for it.
        ANSIBLE_COLLECTIONS_PATH=str(colls),
    )
    assert (colls / "ansible_collections/rdma/fabric/roles/rdma_stack").is_dir(), inst.stdout
    assert inst.returncode == 0, inst.stdout + inst.stderr
    return tarball, colls


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
        assert doc["doc"]["version_added"] in ("0.1.0", "0.2.0", "0.3.0", "0.4.0"), name


def _manifest(path: Path) -> dict:
    return json.loads((path / "MANIFEST.json").read_text())["collection_info"]


def test_declared_dependencies_install_beside_it(installed):
    _, colls = installed
    declared = _manifest(colls / "ansible_collections/rdma/fabric")["dependencies"]
    assert {"community.general", "ansible.netcommon", "arista.eos"} <= set(declared)
    for name, spec in declared.items():
        dest = colls / "ansible_collections" / name.replace(".", "/")
        assert (dest / "MANIFEST.json").is_file(), f"{name} was not installed"
        version = _manifest(dest)["version"]
        assert meets_requirements(version, spec), f"{name} {version} outside {spec}"


def test_tarball_carries_roles_playbooks_and_licence(installed):
    tarball, _ = installed
    version = yaml.safe_load((COLLECTION_DIR / "galaxy.yml").read_text())["version"]
    assert tarball.name == f"rdma-fabric-{version}.tar.gz"
    with tarfile.open(tarball) as tar:
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
    for role in sorted(p.name for p in ROLES_DIR.iterdir() if p.is_dir()):
        assert f"roles/{role}/tasks/main.yml" in names, role
        assert f"roles/{role}/meta/argument_specs.yml" in names, role
    for stage in ("site", "preflight", "rdma_stack", "verify"):
        assert f"playbooks/{stage}.yml" in names, stage
    # Molecule scenarios need this repository's stand-ins: they stay out of the tarball.
    assert not any("/molecule/" in n for n in names)


def test_installed_roles_and_playbooks_resolve_by_collection_name(installed, tmp_path):
    _, colls = installed
    (tmp_path / "inv").write_text("h1 ansible_connection=local\n")
    (tmp_path / "play.yml").write_text(
        "- name: A site's own playbook\n  hosts: all\n"
        "  roles:\n    - role: rdma.fabric.rdma_stack\n"
    )
    for playbook in ("play.yml", "rdma.fabric.site"):
        result = _run(
            [ansible_bin("ansible-playbook"), "-i", "inv", playbook, "--syntax-check"],
            tmp_path,
            ANSIBLE_COLLECTIONS_PATH=str(colls),
        )
        assert result.returncode == 0, (playbook, result.stdout + result.stderr)
        assert str(colls) in result.stdout or playbook == "play.yml", result.stdout


def test_a_role_missing_from_the_install_fails_the_syntax_check(installed, tmp_path):
    # The check above can fail: a role name the collection does not ship is an error.
    _, colls = installed
    (tmp_path / "inv").write_text("h1 ansible_connection=local\n")
    (tmp_path / "play.yml").write_text(
        "- name: A typo\n  hosts: all\n  roles:\n    - role: rdma.fabric.rdma_stak\n"
    )
    result = _run(
        [ansible_bin("ansible-playbook"), "-i", "inv", "play.yml", "--syntax-check"],
        tmp_path,
        ANSIBLE_COLLECTIONS_PATH=str(colls),
    )
    assert result.returncode != 0
    assert "rdma.fabric.rdma_stak" in result.stdout + result.stderr


def test_every_python_file_names_its_licence():
    # GPL-3.0-or-later (LICENSE): the collection norm for code built on ansible-core's
    # module_utils; each file says so in the SPDX form tools read.
    files = sorted(COLLECTION_DIR.rglob("*.py"))
    assert files
    missing = [
        str(f.relative_to(COLLECTION_DIR))
        for f in files
        if "tests/output" not in str(f)
        and "# SPDX-License-Identifier: GPL-3.0-or-later\n" not in f.read_text()
    ]
    assert not missing, missing
