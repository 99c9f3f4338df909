"""The execution environment image (execution-environment.yml), run with docker as AWX
runs it: as the image's own user (1000), ansible-playbook inside the container.

make ee builds the image first (tests/harness/build_ee.py); these tests fail, never
skip, when it is missing. What is proven here:
- the image carries the pinned toolchain, the `ansible` package's collections, ssh, and
  this checkout's rdma.fabric (its FILES.json, a sha256 per file, equals a fresh build's);
- the project's site.yml passes --syntax-check against the repository's inventory in
  it (the checkout mounted read-only, as an AWX project);
- the rendered switch play runs from the collection installed in the image (only an
  inventory mounted, no project) and writes, per switch of the example inventory, the
  very files this venv renders from the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT
from packaging.requirements import Requirement

sys.path.insert(0, str(REPO_ROOT / "tests" / "harness"))
from build_ee import COLLECTION, definition, image_inputs, image_name  # noqa: E402

EXAMPLE = REPO_ROOT / "inventories" / "example"
RENDERED = ("-e", "roce_switch_qos_state=rendered", "--limit", "switches")
# Without a fact cache in the read-only checkout, colour or deprecation noise.
ANSIBLE_ENV = {
    "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.memory",
    "ANSIBLE_NOCOLOR": "1",
    "ANSIBLE_DEPRECATION_WARNINGS": "0",
}


@pytest.fixture(scope="session")
def image() -> str:
    name = image_name(definition())
    assert image_inputs(name), f"image {name} is missing: make ee builds it"
    return name


def run_in_ee(image, *argv, mounts=(), workdir="/runner", env=None, timeout=600):
    """docker run --rm of the image as its own user; returns CompletedProcess."""
    command = ["docker", "run", "--rm", "--workdir", workdir]
    for source, target, mode in mounts:
        command += ["--volume", f"{source}:{target}:{mode}"]
    for key, value in {**ANSIBLE_ENV, **(env or {})}.items():
        command += ["--env", f"{key}={value}"]
    return subprocess.run(
        [*command, image, *argv], capture_output=True, text=True, timeout=timeout, check=False
    )


def stats(proc) -> dict:
    """PLAY RECAP of an ansible.posix.json run (the document before the timer's line)."""
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc, _ = json.JSONDecoder().raw_decode(proc.stdout.lstrip())
    return doc["stats"]


def venv_collections() -> dict[str, str]:
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-galaxy"), "collection", "list"]
        + ["--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
        cwd="/",
    )
    return {
        name: info["version"]
        for path in json.loads(proc.stdout).values()
        for name, info in path.items()
    }


PROBE = """
import json, os, shutil, subprocess
from importlib.metadata import version
listed = json.loads(subprocess.run(
    ["ansible-galaxy", "collection", "list", "--format", "json"],
    capture_output=True, text=True, check=True).stdout)
print(json.dumps({
    "versions": {d: version(d) for d in
                 ("ansible-core", "ansible", "ansible-runner", "paramiko")},
    "collections": {path: {n: i["version"] for n, i in found.items()}
                    for path, found in listed.items()},
    "files_json": json.load(open("/usr/share/ansible/collections/ansible_collections"
                                 "/rdma/fabric/FILES.json")),
    "ssh": shutil.which("ssh"),
    "mstflint": shutil.which("mstflint"),
    "pip_conf": os.path.exists("/etc/pip.conf"),
}))
"""


def test_image_carries_the_pins_the_ansible_collections_and_this_collection(image, tmp_path):
    proc = run_in_ee(image, "python3", "-c", PROBE)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    deps = definition()["dependencies"]
    for pin in (
        deps["ansible_core"]["package_pip"],
        deps["ansible_runner"]["package_pip"],
        *deps["python"],
    ):
        req = Requirement(pin)
        assert req.specifier.contains(found["versions"][req.name]), (req, found["versions"])
    # rdma.fabric installed by ansible-galaxy where AWX and navigator look.
    installed = found["collections"]["/usr/share/ansible/collections/ansible_collections"]
    galaxy = yaml.safe_load((COLLECTION / "galaxy.yml").read_text())
    assert installed == {"rdma.fabric": galaxy["version"]}
    # The collections of the `ansible` package, at this venv's versions.
    site = "/usr/local/lib/python3.11/dist-packages/ansible_collections"
    packaged = found["collections"][site]
    venv = venv_collections()
    for name in ("community.general", "ansible.posix", "ansible.netcommon", "arista.eos"):
        assert packaged[name] == venv[name], name
    assert found["ssh"] == "/usr/bin/ssh"
    # rdma_nic reads firmware images on the controller with it.
    assert found["mstflint"] == "/usr/bin/mstflint"
    assert found["pip_conf"] is False
    # This checkout's collection, file for file.
    subprocess.run(
        [str(Path(sys.executable).parent / "ansible-galaxy"), "collection", "build"]
        + [str(COLLECTION), "--output-path", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    (tarball,) = tmp_path.glob("rdma-fabric-*.tar.gz")
    with tarfile.open(tarball) as tar:
        built = json.load(tar.extractfile("FILES.json"))
    assert found["files_json"] == built
    assert any(f["name"] == "roles/roce_switch_qos/tasks/render.yml" for f in built["files"])


def test_site_syntax_check_in_the_project(image):
    """As an AWX project: the checkout at /runner/project, its ansible.cfg and inventory."""
    proc = run_in_ee(
        image,
        "ansible-playbook",
        "site.yml",
        "--syntax-check",
        mounts=[(REPO_ROOT, "/runner/project", "ro")],
        workdir="/runner/project",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "playbook: site.yml" in proc.stdout


def test_rendered_switch_play_from_the_installed_collection(image, tmp_path):
    """Only the example inventory is mounted: the play and roles are the image's."""
    out = tmp_path / "ee"
    out.mkdir()
    out.chmod(0o777)  # the image's user (uid 1000) writes here
    proc = run_in_ee(
        image,
        "ansible-playbook",
        "-i",
        "/runner/inventory",
        "rdma.fabric.roce_fabric",
        *RENDERED,
        "-e",
        "roce_switch_qos_render_dir=/runner/rendered/switches",
        mounts=[(EXAMPLE, "/runner/inventory", "ro"), (out, "/runner/rendered", "rw")],
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json"},
    )
    recap = stats(proc)
    switches = ["leaf-r02-a", "leaf-r02-b", "leaf-r03-a", "spine-01", "spine-02"]
    assert sorted(recap) == switches
    assert all(r["failures"] == 0 and r["unreachable"] == 0 for r in recap.values()), recap
    rendered = out / "switches"
    names = sorted(p.name for p in rendered.iterdir())
    assert names == [
        "leaf-r02-a.json",
        "leaf-r02-b.json",
        "leaf-r03-a.json",
        "spine-01.cfg",
        "spine-02.cfg",
    ]
    # The same play from the checkout in this venv renders the same bytes.
    host = tmp_path / "venv"
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(EXAMPLE)]
        + ["rdma.fabric.roce_fabric", *RENDERED, "-e", f"roce_switch_qos_render_dir={host}"],
        cwd=REPO_ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
            **ANSIBLE_ENV,
            "ANSIBLE_CONFIG": str(REPO_ROOT / "ansible.cfg"),
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    for name in names:
        assert (rendered / name).read_bytes() == (host / name).read_bytes(), name
