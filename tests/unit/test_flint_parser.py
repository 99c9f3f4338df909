"""module_utils/flint.py on `mstflint query` / `flint query` outputs of devices and images.

The fixtures in fixtures/flint/ are written for these tests; each one's leading '# '
lines say which public capture or source its layout follows (FS4 with and without a
pending burn, FS2 ConnectX-3, an old flint that prints only the Running line, an image
queried with `full`) or that it was captured from the real mstflint 4.21 here. Those
lines are stripped before parsing.
"""

from __future__ import annotations

from pathlib import Path

import fixture_text
import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.flint import (
    FlintParseError,
    messages,
    parse_query,
    parse_version,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flint"


def load(name: str) -> str:
    return fixture_text.load(FIXTURES, name)


def test_every_fixture_says_where_its_format_comes_from():
    fixture_text.assert_sources_named(FIXTURES, 7)


# fixture, image type, psid, flash (next boot), running, pending
QUERIES = [
    ("q01_fs4_bluefield_secure.txt", "FS4", "MT_0000000561", "24.35.2000", None, False),
    ("q02_fs4_running_differs.txt", "FS4", "MT_0000000359", "22.39.2048", "22.36.1010", True),
    ("q03_fs2_cx3_running_differs.txt", "FS2", "MT_1090111019", "2.42.5000", "2.40.7000", True),
    ("q04_fs2_old_flint_running_only.txt", "FS2", "MT_1080120023", "2.36.5000", "2.36.5000", False),
    ("q05_fs4_image_part_number.txt", "FS4", "MT_0000000834", "28.39.1002", None, False),
]


@pytest.mark.parametrize(("name", "kind", "psid", "flash", "running", "pending"), QUERIES)
def test_versions_and_identity(name, kind, psid, flash, running, pending):
    info = parse_query(load(name))
    assert info["image_type"] == kind
    assert info["psid"] == psid
    assert info["next_boot_version"] == flash
    assert info["running_fw_version"] == running
    assert info["reboot_pending"] is pending


def test_fs4_fields():
    info = parse_query(load("q01_fs4_bluefield_secure.txt"))
    assert info["rom_info"] == [
        "type=UEFI Virtio net version=21.4.10 cpu=AMD64",
        "type=UEFI Virtio blk version=22.4.10 cpu=AMD64",
        "type=UEFI version=14.28.16 cpu=AMD64,AARCH64",
        "type=PXE version=3.6.902 cpu=AMD64",
    ]
    assert info["base_guid"] == "1070fd0300a1b2c0"
    assert info["base_mac"] == "1070fda1b2c0"
    assert info["security_attributes"] == "secure-fw"
    # The UID table header is not the card's description.
    assert info["description"] is None
    assert info["release_date"] == "7.11.2022"


def test_fs2_fields():
    info = parse_query(load("q03_fs2_cx3_running_differs.txt"))
    assert info["device_id"] == "4103"
    assert info["guids"] == ["ffffffffffffffff"] * 4
    assert info["macs"] == ["f452140a1b20", "f452140a1b21"]
    assert info["vsd"] == ""
    assert info["product_version"] == "02.42.50.00"
    assert info["rom_info"] == ["type=PXE version=3.4.752"]


def test_full_query_keeps_the_card_description_apart_from_the_uid_table():
    info = parse_query(load("q05_fs4_image_part_number.txt"))
    assert info["part_number"] == "MCX75310AAS-NEA_Ax"
    assert info["description"].startswith("NVIDIA ConnectX-7 HHHL Adapter card; 400GbE")
    assert info["description"].endswith("Secure Boot Enabled")
    assert info["fields"]["PRS Name"] == "cx7_ndr_osfp_1p.prs"
    assert info["fields"]["Default Update Method"] == "fw_ctrl"
    assert info["base_guid"] == "N/A"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("err01_cannot_open_device.txt", "Cannot open Device: 0000:00:01.0"),
        ("err02_no_valid_image.txt", "No valid image found"),
    ],
)
def test_errors_are_not_queries(name, shown):
    text = load(name)
    with pytest.raises(FlintParseError, match="no PSID and no FW Version") as exc:
        parse_query(text)
    assert shown in str(exc.value)
    assert any(shown in line for line in messages(text))


def test_messages_by_level():
    text = "-W- a warning\nsome text\n  -E- failed here \n-I- To load new FW run mstfwreset\n"
    assert messages(text) == ["failed here"]
    assert messages(text, "W") == ["a warning"]
    assert messages(text, "I") == ["To load new FW run mstfwreset"]


def test_a_query_without_psid_fails():
    # mstflint prints a warning instead of VSD/PSID for firmware of another vendor.
    text = load("q02_fs4_running_differs.txt").replace("PSID:                  MT_0000000359\n", "")
    with pytest.raises(FlintParseError, match="no PSID"):
        parse_query(text)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("22.39.2048", (22, 39, 2048)),
        ("2.42.5000", (2, 42, 5000)),
        (" 16.35.1012\n", (16, 35, 1012)),
    ],
)
def test_versions_compare_numerically(text, key):
    assert parse_version(text) == key


def test_numeric_order_is_not_text_order():
    assert parse_version("22.9.1000") < parse_version("22.39.1000")
    assert parse_version("2.42.5000") < parse_version("16.35.1012")


@pytest.mark.parametrize("text", ["", "22", "22.x.1", "rel-22_39_2048", "22..1"])
def test_bad_versions(text):
    with pytest.raises(ValueError, match="not a firmware version"):
        parse_version(text)
