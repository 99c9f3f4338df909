"""The rdma_rails README's table of proven versions says the systemd of the images every
Molecule scenario runs on (.config/molecule/config.yml), read from the images themselves,
and says what Molecule does not prove."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml
from conftest import REPO_ROOT, ROLES_DIR

README = ROLES_DIR / "rdma_rails" / "README.md"
DEBIAN = {"bookworm": "Debian 12", "trixie": "Debian 13"}


def _images():
    config = yaml.safe_load((REPO_ROOT / ".config/molecule/config.yml").read_text())
    return [p["image"] for p in config["platforms"]]


def _table():
    """{column heading: {row name: cell}} of the versions table."""
    lines = [line for line in README.read_text().splitlines() if line.startswith("| ")]
    start = next(i for i, line in enumerate(lines) if "Debian 12 (bookworm)" in line)
    heads = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2 :]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) != len(heads):
            break
        rows[cells[0]] = cells
    return {head: {name: cells[i] for name, cells in rows.items()} for i, head in enumerate(heads)}


def test_the_table_has_a_column_per_molecule_image_and_says_what_is_not_proven():
    table = _table()
    for image in _images():
        suite = image.rpartition(":")[2]
        assert f"{DEBIAN[suite]} ({suite})" in table, (image, list(table))
    text = " ".join(README.read_text().split())
    assert "Not proven in Molecule: Ubuntu" in text
    bookworm = table["Debian 12 (bookworm)"]
    assert bookworm["netplan (`netplan generate`)"].startswith("netplan.io 0.106")
    assert bookworm["NetworkManager"].startswith("1.42.4")


@pytest.mark.parametrize("image", _images())
def test_the_systemd_said_is_the_images(image):
    if not shutil.which("docker"):
        pytest.skip("no docker")
    probe = subprocess.run(
        ["docker", "image", "inspect", image], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"{image} is not built (tests/images/build-base-image.sh)")
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            image,
            "dpkg-query",
            "-W",
            "-f",
            "${Version}",
            "systemd",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    version = proc.stdout.strip()
    suite = image.rpartition(":")[2]
    cell = _table()[f"{DEBIAN[suite]} ({suite})"]["systemd-networkd"]
    major = re.match(r"\d+", version).group(0)
    # The major version only: a rebuilt image takes Debian's next point release.
    assert cell.startswith(f"{major} ("), (cell, version)
