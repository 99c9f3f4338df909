"""rdma.fabric.nic_firmware against a recorded-output command runner.

The module runs in-process; AnsibleModule.run_command and get_bin_path are replaced by
mstflint_standin.FlintStandin, a stand-in for ConnectX flash firmware and the mstflint
command line (see its docstring: it is not the real tool, and its images are marker
files, not firmware). RDMA device names resolve through a sysfs tree built by sysfs_tree.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.modules import nic_firmware
from mstflint_standin import FlintCard, FlintStandin, write_image
from sysfs_tree import build_connectx_roce_host

PCI = "0000:1b:00.0"
PSID = "MT_0000000359"


@pytest.fixture
def host(tmp_path):
    return build_connectx_roce_host(tmp_path / "root", PCI)


@pytest.fixture
def images(tmp_path):
    """An operator's image directory: two versions for this card, one for another card."""
    folder = tmp_path / "firmware"
    folder.mkdir()
    write_image(folder / "fw-ConnectX6Dx-rel-22_38_1002-MCX623106AN-CDA_Ax.bin", PSID, "22.38.1002")
    write_image(folder / "fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin", PSID, "22.39.2048")
    write_image(
        folder / "fw-ConnectX7-rel-28_39_1002-MCX75310AAS-NEA_Ax.bin", "MT_0000000834", "28.39.1002"
    )
    (folder / "README.txt").write_text("release notes, not an image\n")
    return folder


@pytest.fixture
def card():
    return FlintCard(pci=PCI, psid=PSID, flash="22.36.1010")


@pytest.fixture
def run(module_with_tool, host, images, card):
    return module_with_tool(
        nic_firmware,
        FlintStandin(card),
        sysfs_root=str(host),
        device="mlx5_0",
        image_dir=str(images),
    )


def test_first_run_burns_the_newest_image_for_the_psid(run, card, images):
    result = run()
    assert result["changed"] and result["burned"] and result["reboot_required"]
    newest = str(images / "fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin")
    assert run.tool.burns() == [["/usr/bin/mstflint", "-d", PCI, "-i", newest, "-y", "burn"]]
    assert result["image"] == newest and result["image_version"] == "22.39.2048"
    assert (result["before"], result["after"], result["running"]) == (
        "22.36.1010",
        "22.39.2048",
        "22.36.1010",
    )
    assert result["psid"] == PSID and result["pci_address"] == PCI
    # Every .bin was read; the README was not.
    assert [image["version"] for image in result["images"]] == [
        "22.38.1002",
        "22.39.2048",
        "28.39.1002",
    ]
    assert not any("README" in " ".join(argv) for argv in run.tool.calls)
    assert card.flash == "22.39.2048" and card.running == "22.36.1010"


def test_second_run_burns_nothing_but_still_wants_the_reboot(run, card):
    run()
    result = run()
    assert not result["changed"] and not result["burned"]
    assert len(run.tool.burns()) == 1
    assert result["before"] == result["after"] == "22.39.2048"
    assert result["running"] == "22.36.1010"
    assert result["reboot_required"], "the burned firmware is not running yet"
    card.reboot()
    result = run()
    assert not result["changed"] and not result["reboot_required"]
    assert result["skipped"] is None


def test_check_mode_burns_nothing_and_predicts(run, card):
    result = run(check_mode=True, diff=True)
    assert result["changed"] and result["burned"] and result["reboot_required"]
    assert run.tool.burns() == []
    assert card.flash == "22.36.1010"
    assert result["after"] == "22.39.2048"
    assert result["diff"]["before"] == "22.36.1010\n"
    assert (
        result["diff"]["after"]
        == "22.39.2048 (fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin)\n"
    )
    assert PSID in result["diff"]["before_header"]


def test_no_diff_when_up_to_date(run, card):
    card.flash = card.running = "22.39.2048"
    result = run(diff=True)
    assert not result["changed"]
    assert result["diff"]["before"] == result["diff"]["after"] == "22.39.2048\n"


def test_pinned_version(run, card):
    result = run(version="22.38.1002")
    assert result["changed"] and result["after"] == "22.38.1002"
    assert card.flash == "22.38.1002"


def test_downgrade_is_refused_unless_allowed(run, card):
    card.flash = card.running = "22.40.1000"
    result = run()
    assert not result["changed"] and not result["reboot_required"]
    assert run.tool.burns() == []
    assert "22.40.1000" in result["skipped"] and "allow_downgrade" in result["skipped"]
    result = run(allow_downgrade=True)
    assert result["changed"] and card.flash == "22.39.2048"


def test_no_image_for_the_psid_fails_listing_what_is_there(run, card):
    card.psid = "MT_0000000223"
    result = run()
    assert result["failed"]
    assert "no firmware image for PSID MT_0000000223" in result["msg"]
    assert (
        "fw-ConnectX7-rel-28_39_1002-MCX75310AAS-NEA_Ax.bin (MT_0000000834 28.39.1002)"
        in result["msg"]
    )
    assert run.tool.burns() == []


def test_no_image_can_be_skipped(run, card):
    card.psid = "MT_0000000223"
    result = run(missing_image="skip")
    assert not result.get("failed") and not result["changed"]
    assert "MT_0000000223" in result["skipped"]
    assert result["image"] is None


def test_a_pinned_version_that_is_not_there_fails(run):
    result = run(version="22.41.1000")
    assert result["failed"]
    assert f"PSID {PSID} version 22.41.1000" in result["msg"]


def test_bad_version_fails_before_any_command(run):
    result = run(version="latest")
    assert result["failed"] and "version" in result["msg"] and "latest" in result["msg"]
    assert run.tool.calls == []


def test_unreadable_image_fails_naming_the_file(run, images):
    (images / "fw-broken.bin").write_bytes(b"\x00\x01garbage")
    result = run()
    assert result["failed"]
    assert "fw-broken.bin" in result["msg"] and "No valid image found" in result["msg"]
    assert run.tool.burns() == []


def test_missing_image_dir_fails_by_name(run, tmp_path):
    result = run(image_dir=str(tmp_path / "nowhere"))
    assert result["failed"] and "image_dir" in result["msg"] and "nowhere" in result["msg"]
    assert run.tool.burns() == []


def test_unknown_rdma_device_fails_listing_the_present_ones(run):
    result = run(device="mlx5_7")
    assert result["failed"]
    assert "mlx5_7" in result["msg"] and "mlx5_0, rxe0" in result["msg"]
    assert run.tool.calls == []


def test_soft_roce_device_is_not_a_connectx(run):
    result = run(device="rxe0")
    assert result["failed"] and "not a PCI device" in result["msg"]


def test_device_the_tool_cannot_open(run, card, host):
    card.pci = "0000:5e:00.0"
    result = run(device=PCI)
    assert result["failed"]
    assert "Cannot open Device" in result["msg"] and "mstflint" in result["msg"]


def test_pci_address_without_domain(run):
    result = run(device="1b:00.0")
    assert result["pci_address"] == PCI and result["changed"]


def test_missing_tool_names_both(run):
    run.tool.tool = "neither"
    result = run()
    assert result["failed"] and "flint or mstflint not found" in result["msg"]


def test_connectx3_fs2_card(run, images, card):
    card.psid, card.flash, card.running, card.image_type = "MT_1090111019", "2.40.7000", None, "FS2"
    card.reboot()
    write_image(
        images / "fw-ConnectX3-rel-2_42_5000-MCX312A-XCB_A2-A6.bin",
        "MT_1090111019",
        "2.42.5000",
        "FS2",
    )
    result = run(tool="mstflint")
    assert result["changed"] and result["after"] == "2.42.5000"
    assert run(tool="mstflint")["changed"] is False
