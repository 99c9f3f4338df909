"""execution-environment.yml, without building it (tests/ee builds and runs the image):
valid for ansible-builder, its pins the project's pins, and the Dockerfile ansible-builder
writes from it configures pip's package source before the first pip install."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import REPO_ROOT
from packaging.requirements import Requirement

sys.path.insert(0, str(REPO_ROOT / "tests" / "harness"))
from build_ee import definition, pip_requirements  # noqa: E402


def pins(*files: str) -> dict[str, str]:
    found = {}
    for name in files:
        for line in (REPO_ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                req = Requirement(line)
                found[req.name.lower()] = str(req.specifier)
    return found


def test_every_pin_of_the_ee_is_the_projects_pin():
    project = pins("requirements.txt", "requirements-dev.txt")
    deps = definition()["dependencies"]
    ee = [
        Requirement(r)
        for r in (
            deps["ansible_core"]["package_pip"],
            deps["ansible_runner"]["package_pip"],
            *deps["python"],
        )
    ]
    assert {r.name for r in ee} >= {"ansible-core", "ansible", "ansible-runner", "paramiko"}
    for req in ee:
        assert str(req.specifier).startswith("=="), f"{req} is not pinned"
        assert project.get(req.name.lower()) == str(req.specifier), (
            f"{req} in execution-environment.yml, "
            f"{req.name}{project.get(req.name.lower())} in requirements*.txt"
        )


def test_the_build_downloads_every_package_pip_installs():
    wanted = {Requirement(r).name for r in pip_requirements(definition())}
    # ansible-builder's own: dumb-init (the entrypoint) and the builder stage's tools.
    assert wanted >= {"ansible-core", "ansible", "ansible-runner", "paramiko", "dumb-init"}
    assert wanted >= {"bindep", "pyyaml", "packaging"}


@pytest.fixture(scope="module")
def dockerfile(tmp_path_factory, run_cli):
    context = tmp_path_factory.mktemp("ee-context")
    proc = run_cli(
        "ansible-builder",
        "create",
        "--file",
        str(REPO_ROOT / "execution-environment.yml"),
        "--context",
        str(context),
        "--output-filename",
        "Dockerfile",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return context, (context / "Dockerfile").read_text()


def test_dockerfile_is_debian_shaped(dockerfile):
    context, text = dockerfile
    assert 'ARG EE_BASE_IMAGE="rdma-fabric/debian:bookworm"' in text
    assert 'ARG PKGMGR="/usr/bin/apt-get"' in text
    # Debian's python3 has no ensurepip: ansible-builder's pip bootstrap must not run.
    assert "/output/scripts/pip_install" not in text
    assert "ansible-galaxy collection build /tmp/rdma_fabric_src" in text
    assert (context / "_build" / "rdma_fabric_src" / "galaxy.yml").exists()
    assert "openssh-client [platform:dpkg]" in (context / "_build" / "bindep.txt").read_text()
    lines = text.splitlines()
    pip_conf = next(i for i, line in enumerate(lines) if "/etc/pip.conf" in line)
    first_pip = next(i for i, line in enumerate(lines) if re.search(r"-m pip install", line))
    assert pip_conf < first_pip
    # The build-time package source does not stay in the image.
    assert lines.index("RUN rm -f /etc/pip.conf") > max(
        i for i, line in enumerate(lines) if "pip install" in line
    )
