"""module_utils/mlxconfig.py on mstconfig/mlxconfig outputs across tools and firmware.

The fixtures in fixtures/mlxconfig/ are written for these tests; each one's leading
'# ' lines say which public capture its layout follows (tool, firmware generation,
column set, padding). Those lines are stripped before parsing.
"""

from __future__ import annotations

from pathlib import Path

import fixture_text
import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.mlxconfig import (
    MlxconfigParseError,
    normalize_request,
    parse,
    parse_query,
    parse_value,
    set_argument,
    values_match,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mlxconfig"


def load(name: str) -> str:
    return fixture_text.load(FIXTURES, name)


def test_every_fixture_says_where_its_format_comes_from():
    fixture_text.assert_sources_named(FIXTURES, 10)


# name, type, device, columns, {param: next_boot}, number of params
QUERIES = [
    (
        "q01_cx3_nextboot.txt",
        "ConnectX3",
        "/dev/mst/mt4099_pciconf0",
        ["next_boot"],
        {"SRIOV_EN": "False(0)", "LINK_TYPE_P1": "VPI(3)", "LEGACY_BOOT_PROTOCOL_P1": "None(0)"},
        10,
    ),
    (
        "q02_cx7_nextboot_wide.txt",
        "ConnectX7",
        "0000:1a:00.0",
        ["next_boot"],
        {
            "MEMIC_ATOMIC": "MEMIC_ATOMIC_ENABLE(2)",
            "LINK_TYPE_P1": "IB(1)",
            "NUM_OF_VFS": "16",
            "EXP_ROM_UEFI_x86_ENABLE": "True(1)",
            "P2P_ORDERING_MODE": "DEVICE_DEFAULT(0)",
        },
        15,
    ),
    (
        "q03_cx4lx_name_na.txt",
        "ConnectX4LX",
        "0000:05:00.1",
        ["next_boot"],
        {"KEEP_IB_LINK_UP_P2": "False(0)", "CNP_DSCP_P2": "48"},
        10,
    ),
    (
        "q04_cx6lx_narrow_e.txt",
        "ConnectX6LX",
        "0000:81:00.0",
        ["default", "current", "next_boot"],
        {"SRIOV_EN": "True(1)", "NUM_OF_VL_P2": "_4_VLs(3)", "CNP_802P_PRIO_P2": "6"},
        12,
    ),
    (
        "q05_cx5_cnp_nextboot.txt",
        "ConnectX5",
        "0000:3b:00.0",
        ["next_boot"],
        {"CNP_DSCP_P1": "24", "CNP_802P_PRIO_P1": "3", "SAFE_MODE_ENABLE": "True(1)"},
        12,
    ),
    (
        "q06_cx6lx_wide_e.txt",
        "ConnectX6LX",
        "0000:0b:00.0",
        ["default", "current", "next_boot"],
        {"CRYPTO_POLICY": "UNRESTRICTED(1)", "ATS_ENABLED": "True(1)"},
        9,
    ),
    (
        "q07_cx4_no_column_labels.txt",
        "ConnectX4",
        "/dev/mst/mt4115_pciconf0",
        ["next_boot"],
        {"LINK_TYPE_P1": "IB(1)", "NUM_OF_VFS": "0"},
        3,
    ),
    (
        "q08_cx3pro_default_nextboot.txt",
        "ConnectX3Pro",
        "/sys/bus/pci/devices/0000:07:00.0/config",
        ["default", "next_boot"],
        {"NUM_OF_VFS": "4", "LINK_TYPE_P2": "ETH(2)", "BOOT_RETRY_CNT_P1": None},
        7,
    ),
    (
        "q09_cx5_star_overflow.txt",
        "ConnectX5",
        "0000:af:00.0",
        ["default", "current", "next_boot"],
        {
            "PHY_FEC_OVERRIDE_P2": "DEVICE_DEFAULT(0)",
            "PF_NUM_PF_MSIX": "63",
            "ROCE_CONTROL": "ROCE_DISABLE(1)",
        },
        8,
    ),
    (
        "q10_cx5_star_footer.txt",
        "ConnectX5",
        "/dev/mst/mt4119_pciconf0",
        ["default", "current", "next_boot"],
        {
            "ADVANCED_PCI_SETTINGS": "True(1)",
            "MAX_ACC_OUT_READ": "44",
            "SAFE_MODE_ENABLE": "True(1)",
        },
        5,
    ),
]


@pytest.mark.parametrize(("fixture", "dev_type", "device", "columns", "values", "count"), QUERIES)
def test_query_layouts(fixture, dev_type, device, columns, values, count):
    table = parse_query(load(fixture))
    assert table["type"] == dev_type
    assert table["device"] == device
    assert table["columns"] == columns
    assert len(table["params"]) == count, table["order"]
    for name, value in values.items():
        assert table["params"][name]["next_boot"] == value, name
    # No message line, footer or elision line ever becomes a parameter.
    assert all(name.isupper() or "_x86_" in name for name in table["params"]), table["order"]


def test_name_and_description_na_become_none():
    table = parse_query(load("q03_cx4lx_name_na.txt"))
    assert (table["name"], table["description"]) == (None, None)
    table = parse_query(load("q06_cx6lx_wide_e.txt"))
    assert table["name"] == "MCX631102AN-ADA_Ax"
    assert table["description"].startswith("ConnectX-6 Lx EN adapter card; 25GbE ;")


def test_three_columns_keep_default_current_and_next_boot_apart():
    row = parse_query(load("q06_cx6lx_wide_e.txt"))["params"]["ATS_ENABLED"]
    assert (row["default"], row["current"], row["next_boot"]) == ("False(0)", "False(0)", "True(1)")
    assert row["complete"] and not row["modified"] and not row["read_only"]


def test_star_marks_a_pending_change_and_the_footer_is_ignored():
    result = parse(load("q10_cx5_star_footer.txt"))
    [table] = result["devices"]
    assert [n for n, r in table["params"].items() if r["modified"]] == [
        "ADVANCED_PCI_SETTINGS",
        "MAX_ACC_OUT_READ",
    ]
    assert result["messages"] == ["-I- Reboot the machine to load new configurations."]
    assert result["errors"] == []
    overflow = parse_query(load("q09_cx5_star_overflow.txt"))["params"]
    assert overflow["ROCE_CONTROL"]["modified"]
    assert overflow["ROCE_CONTROL"]["current"] == "ROCE_ENABLE(2)"


def test_truncated_row_is_incomplete():
    row = parse_query(load("q08_cx3pro_default_nextboot.txt"))["params"]["BOOT_RETRY_CNT_P1"]
    assert row == {
        "modified": False,
        "read_only": False,
        "complete": False,
        "default": "0",
        "next_boot": None,
    }


def test_multi_device_query_keeps_devices_apart():
    result = parse(load("multi_device_query.txt"))
    assert [d["device"] for d in result["devices"]] == [
        "/sys/bus/pci/devices/0000:03:00.0/config",
        "/sys/bus/pci/devices/0000:04:00.0/config",
    ]
    assert [d["params"]["NUM_OF_VFS"]["next_boot"] for d in result["devices"]] == ["8", "0"]
    with pytest.raises(MlxconfigParseError, match="expected one device table, found 2"):
        parse_query(load("multi_device_query.txt"))


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("set01_wide_linktype.txt", {"LINK_TYPE_P1": ("IB(1)", "ETH(2)")}),
        (
            "set02_narrow_sriov.txt",
            {"SRIOV_EN": ("False(0)", "True(1)"), "NUM_OF_VFS": ("0", "16")},
        ),
        (
            "set03_indented_blankless.txt",
            {"NUM_OF_VFS": ("8", "32"), "LINK_TYPE_P1": ("IB(1)", "ETH(2)")},
        ),
    ],
)
def test_set_outputs(fixture, expected):
    result = parse(load(fixture))
    [device] = result["devices"]
    assert device["columns"] == ["next_boot", "new"]
    assert {n: (r["next_boot"], r["new"]) for n, r in device["params"].items()} == expected
    assert result["errors"] == []
    assert result["messages"] == ["-I- Please reboot machine to load new configurations."]


def test_failed_set_reports_the_error():
    result = parse(load("set04_failed_numvfs.txt"))
    assert result["errors"] == ["Parameter NUM_OF_VFS' value is larger than maximum allowed 127"]
    assert result["devices"][0]["params"]["NUM_OF_VFS"]["new"] == "512"


@pytest.mark.parametrize(
    ("fixture", "errors"),
    [
        ("err01_unsupported_two_devices.txt", ["Unsupported device", "Unsupported device"]),
        (
            "err02_cannot_open.txt",
            ["Cannot open Device: 0000:d8:00.0. No such file or directory. MFE_CR_ERROR"],
        ),
    ],
)
def test_errors(fixture, errors):
    text = load(fixture)
    assert parse(text)["errors"] == errors
    with pytest.raises(MlxconfigParseError, match=errors[0].split(".")[0]):
        parse_query(text)


def test_read_only_marker():
    # The RO marker after a name (mlxcfg_ui.cpp; see FACTS.md): no capture shows one.
    text = (
        "Configurations:                              Next Boot\n"
        "         SRIOV_EN                            True(1)\n"
        "         PCI_DOWNSTREAM_PORT_OWNER    RO     Array[0..15]\n"
    )
    params = parse_query(text)["params"]
    assert params["PCI_DOWNSTREAM_PORT_OWNER"]["read_only"]
    assert params["PCI_DOWNSTREAM_PORT_OWNER"]["next_boot"] == "Array[0..15]"
    assert not params["SRIOV_EN"]["read_only"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ETH(2)", {"raw": "ETH(2)", "name": "ETH", "number": 2, "array": False}),
        ("_256KB(1)", {"raw": "_256KB(1)", "name": "_256KB", "number": 1, "array": False}),
        ("48", {"raw": "48", "name": None, "number": 48, "array": False}),
        ("0x10", {"raw": "0x10", "name": None, "number": 16, "array": False}),
        (
            "Array[0..7]",
            {"raw": "Array[0..7]", "name": "Array[0..7]", "number": None, "array": True},
        ),
    ],
)
def test_parse_value(raw, expected):
    assert parse_value(raw) == expected


@pytest.mark.parametrize("alias", ["ETH", "eth", "ETH(2)", "2", 2, " Eth "])
def test_link_type_aliases(alias):
    assert values_match("ETH(2)", alias)
    assert not values_match("IB(1)", alias)


@pytest.mark.parametrize("alias", [True, "true", "True", "True(1)", "1", 1, "yes", "on"])
def test_boolean_aliases(alias):
    assert values_match("True(1)", alias)
    assert not values_match("False(0)", alias)


def test_numbers_and_arrays():
    assert values_match("48", 48) and values_match("48", "48") and not values_match("48", 24)
    assert not values_match("Array[0..7]", "Array[0..7]")
    assert not values_match(None, 1)


@pytest.mark.parametrize(
    ("value", "argument"),
    [
        (True, "1"),
        (False, "0"),
        ("yes", "1"),
        ("ETH", "ETH"),
        ("ETH(2)", "2"),
        (48, "48"),
        ("0x2", "2"),
    ],
)
def test_set_argument(value, argument):
    assert set_argument(value) == argument


def test_normalize_request():
    assert normalize_request("IB") == {"number": None, "name": "IB"}
    assert normalize_request(3) == {"number": 3, "name": None}
