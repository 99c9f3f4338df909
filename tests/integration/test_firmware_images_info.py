"""rdma.fabric.firmware_images_info: the controller's read of a firmware directory, before
any image is copied. Files that are not firmware images are found by the REAL mstflint
(Debian's package, installed by tests/harness/install-deps.sh); images a ConnectX would
take come from the STAND-IN mstflint (tests/support/mstflint_standin.py), since no real
ConnectX image can be downloaded here."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from mstflint_standin import FlintCard, install_cli, write_image

PSID_CX6DX = "MT_0000000359"
PSID_CX7 = "MT_0000000838"


@pytest.fixture
def real_mstflint():
    path = shutil.which("mstflint")
    if path is None:
        pytest.fail("mstflint is not installed on this machine: run tests/harness/install-deps.sh")
    return path


def test_real_mstflint_refuses_files_that_are_not_images(
    run_module_on_localhost, tmp_path, real_mstflint
):
    (tmp_path / "regulatory.bin").write_bytes(os.urandom(4096))
    (tmp_path / "notes.bin").write_text("not firmware\n")
    (tmp_path / "README.txt").write_text("not a .bin: never queried\n")
    proc, result = run_module_on_localhost("rdma.fabric.firmware_images_info", f"path={tmp_path}")
    assert result is not None, proc.stdout + proc.stderr
    assert result["tool"] == real_mstflint
    assert result["images"] == []
    by_file = {entry["file"]: entry["error"] for entry in result["invalid"]}
    assert sorted(by_file) == ["notes.bin", "regulatory.bin"]
    assert "No valid image found" in by_file["regulatory.bin"]
    assert "4-bytes aligned" in by_file["notes.bin"]


def test_images_and_strays_side_by_side(run_module_on_localhost, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    write_image(images / "fw-cx6dx-22_39_2048.bin", PSID_CX6DX, "22.39.2048")
    write_image(images / "fw-cx7-28_39_1002.bin", PSID_CX7, "28.39.1002")
    (images / "stray.bin").write_bytes(b"\0" * 64)
    state = tmp_path / "state.json"
    install_cli(tmp_path / "bin", state, FlintCard())
    proc, result = run_module_on_localhost(
        "rdma.fabric.firmware_images_info",
        f"path={images}",
        env={
            "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
            "RDMA_FABRIC_FLINT_STATE": str(state),
        },
    )
    assert result is not None and not result.get("failed"), proc.stdout
    assert [(i["file"], i["psid"], i["version"]) for i in result["images"]] == [
        ("fw-cx6dx-22_39_2048.bin", PSID_CX6DX, "22.39.2048"),
        ("fw-cx7-28_39_1002.bin", PSID_CX7, "28.39.1002"),
    ]
    assert [i["file"] for i in result["invalid"]] == ["stray.bin"]
    # Only image queries ran: no device was touched.
    calls = json.loads(state.read_text())["calls"]
    assert calls and all(argv[1] == "-i" and argv[-1] == "query" for argv in calls), calls


def test_no_query_tool_on_the_controller_is_named(run_module_on_localhost, tmp_path):
    # NVIDIA MFT's flint is not installed here (mstflint is): asking for it must fail,
    # naming what is missing and why it is needed.
    assert shutil.which("flint") is None
    (tmp_path / "fw.bin").write_text("x")
    proc, result = run_module_on_localhost(
        "rdma.fabric.firmware_images_info", f"path={tmp_path} tool=flint"
    )
    assert result is not None and result.get("failed"), proc.stdout
    assert "flint not found" in result["msg"]
    assert "before any image is copied" in result["msg"]
