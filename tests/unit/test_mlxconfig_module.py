"""rdma.fabric.mlxconfig against a recorded-output command runner.

The module runs in-process; AnsibleModule.run_command and get_bin_path are replaced by
mstconfig_standin.StandinTool, a stand-in for a ConnectX card and the mstconfig command
line (see its docstring: it is not the real tool). RDMA device names resolve through a
sysfs tree built by sysfs_tree.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.modules import mlxconfig
from mstconfig_standin import ConnectX, Param, StandinTool
from sysfs_tree import build_connectx_roce_host

PCI = "0000:1b:00.0"


@pytest.fixture
def host(tmp_path):
    return build_connectx_roce_host(tmp_path, PCI)


@pytest.fixture
def card():
    return ConnectX(pci=PCI)


@pytest.fixture
def run(module_with_tool, host, card):
    return module_with_tool(mlxconfig, StandinTool(card), sysfs_root=str(host), device="mlx5_0")


WANTED = {"link_type_p1": "IB", "sriov_en": True, "num_of_vfs": 8, "cnp_dscp_p1": 48}


def test_first_run_sets_only_what_differs(run, card):
    result = run(**WANTED)
    assert result["changed"] and result["reboot_required"]
    # CNP_DSCP_P1 is already 48: it is not on the set command line.
    [set_call] = run.tool.sets()
    assert set_call == [
        "/usr/bin/mstconfig",
        "-y",
        "-d",
        PCI,
        "set",
        "LINK_TYPE_P1=IB",
        "NUM_OF_VFS=8",
        "SRIOV_EN=1",
    ]
    assert result["changes"] == {"LINK_TYPE_P1": "IB", "NUM_OF_VFS": "8", "SRIOV_EN": "1"}
    assert result["before"]["LINK_TYPE_P1"] == "ETH(2)"
    assert result["after"] == {
        "LINK_TYPE_P1": "IB(1)",
        "SRIOV_EN": "True(1)",
        "NUM_OF_VFS": "8",
        "CNP_DSCP_P1": "48",
    }
    assert result["pci_address"] == PCI and result["device_type"] == "ConnectX6DX"
    # Next boot changed; the running firmware did not.
    assert card.params["LINK_TYPE_P1"].next_boot == "IB(1)"
    assert card.params["LINK_TYPE_P1"].current == "ETH(2)"


def test_second_run_sets_nothing_but_still_wants_the_reboot(run, card):
    run(**WANTED)
    calls = len(run.tool.calls)
    result = run(**WANTED)
    assert not result["changed"]
    assert result["changes"] == {}
    assert len(run.tool.sets()) == 1
    assert all("set" not in argv for argv in run.tool.calls[calls:])
    # The first run's settings wait for a reboot that has not happened.
    assert result["reboot_required"]
    card.reboot()
    result = run(**WANTED)
    assert not result["changed"] and not result["reboot_required"]


def test_aliases_of_the_current_values_change_nothing(run):
    result = run(
        link_type_p1="eth",
        link_type_p2="ETH(2)",
        sriov_en="False(0)",
        ats_enabled=False,
        settings={"ADVANCED_PCI_SETTINGS": "no", "CNP_802P_PRIO_P1": "6", "cnp_dscp_p2": 48},
    )
    assert not result["changed"] and not result["reboot_required"]
    assert run.tool.sets() == []


def test_check_mode_sets_nothing(run, card):
    result = run(check_mode=True, diff=True, **WANTED)
    assert result["changed"] and result["reboot_required"]
    assert result["changes"] == {"LINK_TYPE_P1": "IB", "NUM_OF_VFS": "8", "SRIOV_EN": "1"}
    assert run.tool.sets() == []
    assert all(argv[-1] == "query" for argv in run.tool.calls)
    assert card.params["LINK_TYPE_P1"].next_boot == "ETH(2)"
    assert "LINK_TYPE_P1=ETH(2)" in result["diff"]["before"]
    assert "LINK_TYPE_P1=IB" in result["diff"]["after"]


def test_diff_after_a_real_set(run):
    result = run(diff=True, link_type_p2="IB")
    assert result["diff"]["before"] == "LINK_TYPE_P2=ETH(2)\n"
    assert result["diff"]["after"] == "LINK_TYPE_P2=IB(1)\n"


def test_unknown_parameter_fails_by_name_with_the_device_list(run):
    result = run(settings={"LINK_TYPE_P3": "ETH", "SRIOV_EN": True})
    assert result["failed"]
    assert "LINK_TYPE_P3" in result["msg"]
    assert (
        "the device reports: MEMIC_BAR_SIZE, HOST_CHAINING_DESCRIPTORS, LINK_TYPE_P1"
        in result["msg"]
    )
    assert result["unknown"] == ["LINK_TYPE_P3"]
    assert run.tool.sets() == []


def test_optional_names_the_device_lacks_are_skipped(run, card):
    del card.params["CNP_DSCP_P2"]
    result = run(cnp_dscp_p1=26, cnp_dscp_p2=26, optional=["CNP_DSCP_P2"])
    assert result["skipped"] == ["CNP_DSCP_P2"]
    assert result["changes"] == {"CNP_DSCP_P1": "26"}


@pytest.mark.parametrize(
    ("device", "words"),
    [
        ("mlx5_9", ["mlx5_9", "RDMA devices on this host: mlx5_0, rxe0"]),
        ("0000:d8:00.0", ["0000:d8:00.0", "no PCI function"]),
        ("rxe0", ["rxe0", "not a PCI device"]),
        ("/dev/mst/mt4125_pciconf9", ["/dev/mst/mt4125_pciconf9", "no such device path"]),
    ],
)
def test_unknown_device_fails_by_name(run, device, words):
    result = run(device=device, **WANTED)
    assert result["failed"]
    for word in words:
        assert word in result["msg"]
    assert run.tool.calls == []


def test_device_the_tool_cannot_open_fails_by_name(run, host):
    # A PCI function that exists in sysfs but is not this stand-in's card.
    (host / "sys/bus/pci/devices/0000:5e:00.0").mkdir()
    result = run(device="5e:00.0", **WANTED)
    assert result["failed"]
    assert "mstconfig query on 5e:00.0 failed: Cannot open Device: 0000:5e:00.0" in result["msg"]


def test_pci_address_short_form_is_the_same_card(run):
    result = run(device="1b:00.0", num_of_vfs=4)
    assert result["changed"] and result["pci_address"] == PCI


def test_a_set_the_firmware_refuses_fails_with_its_message(run, card):
    result = run(num_of_vfs=512)
    assert result["failed"]
    assert "maximum allowed 127" in result["msg"] and result["rc"] == 3
    assert card.params["NUM_OF_VFS"].next_boot == "0"


def test_arrays_cannot_be_set(run):
    result = run(settings={"HOST_CHAINING_DESCRIPTORS": 1})
    assert result["failed"] and "HOST_CHAINING_DESCRIPTORS" in result["msg"]


def test_named_option_and_settings_must_agree(run):
    result = run(link_type_p1="IB", settings={"LINK_TYPE_P1": "ETH"})
    assert result["failed"] and "LINK_TYPE_P1 is given twice" in result["msg"]
    # Spelled differently, same meaning: accepted (names are compared case-insensitively).
    assert run(link_type_p1="IB", settings={"link_type_p1": "ib"})["changed"]


def test_connectx3_without_current_column(run, card):
    card.has_current = False
    card.params = {"SRIOV_EN": Param("False(0)", enum={"False": 0, "True": 1})}
    result = run(sriov_en=True)
    assert result["changed"] and result["current"] == {}
    assert result["after"] == {"SRIOV_EN": "True(1)"}


def test_missing_tool_names_both(run):
    run.tool.tool = "neither"
    result = run(**WANTED)
    assert result["failed"]
    assert "mlxconfig or mstconfig not found" in result["msg"]


def test_policy_dcbx_off_is_set_for_next_boot_on_both_ports(run, card):
    """rdma_nic passes LLDP_NB_DCBX_P1/P2 from rdma_roce_policy.nic_firmware_dcbx."""
    settings = {"LLDP_NB_DCBX_P1": False, "LLDP_NB_DCBX_P2": False}
    result = run(settings=settings, optional=list(settings))
    assert result["changed"] and result["reboot_required"]
    [set_call] = run.tool.sets()
    assert set_call[-2:] == ["LLDP_NB_DCBX_P1=0", "LLDP_NB_DCBX_P2=0"]
    assert card.params["LLDP_NB_DCBX_P2"].next_boot == "False(0)"
    assert card.params["LLDP_NB_DCBX_P2"].current == "True(1)"
    again = run(settings=settings, optional=list(settings))
    assert not again["changed"] and again["reboot_required"]
