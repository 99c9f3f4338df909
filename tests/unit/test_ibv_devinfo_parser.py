"""module_utils/ibv_devinfo.py on `ibv_devinfo` and `ibv_devinfo -v` outputs.

The fixtures in fixtures/ibv_devinfo/ are written for these tests; each one's leading '# '
lines say which public capture in ../shared/reference/outputs its layout follows (the
tab-separated and the space-aligned ConnectX-7 RoCE outputs, the -v port section with its
GID table) and that the values are ours: ConnectX-7 RoCE with tabs, with spaces and a shell
prompt, -v of two devices with GID tables, ConnectX-7 InfiniBand with port and SM LIDs, a
mixed IB/Ethernet host with ports down, a dual-port ConnectX-3 VPI, Soft-RoCE (rxe). Those
lines are stripped before parsing.

The parser keeps every "key: value" line of a device or port as text, except the MTUs,
the LIDs and phys_port_cnt, which become ints; it does not return the GID table (the
health checks read GIDs from sysfs), so the tests check that GID lines leave no trace.
"""

from __future__ import annotations

from pathlib import Path

import fixture_text
import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.ibv_devinfo import parse_ibv_devinfo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ibv_devinfo"
VERBOSE = "roce_cx7_verbose_gid_table.txt"
MIXED = "mixed_ib_eth_port_down.txt"


def load(name: str) -> str:
    return fixture_text.load(FIXTURES, name)


def parse(name: str) -> dict:
    return parse_ibv_devinfo(load(name))


def test_every_fixture_says_where_its_format_comes_from():
    fixture_text.assert_sources_named(FIXTURES, 7)


# fixture, device, port, state, max_mtu, active_mtu, link_layer, sm_lid, port_lid
PORTS = [
    ("roce_cx7_tabs.txt", "mlx5_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "Ethernet", 0, 0),
    ("roce_cx7_spaces.txt", "mlx5_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "Ethernet", 0, 0),
    ("roce_cx7_spaces.txt", "mlx5_1", 1, "PORT_ACTIVE (4)", 4096, 1024, "Ethernet", 0, 0),
    (VERBOSE, "mlx5_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "Ethernet", 0, 0),
    (VERBOSE, "mlx5_1", 1, "PORT_ACTIVE (4)", 4096, 1024, "Ethernet", 0, 0),
    ("ib_cx7_ndr_lids_sm.txt", "mlx5_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand", 1, 41),
    ("ib_cx7_ndr_lids_sm.txt", "mlx5_1", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand", 1, 42),
    (MIXED, "mlx5_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand", 5, 17),
    (MIXED, "mlx5_1", 1, "PORT_DOWN (1)", 4096, 4096, "InfiniBand", 0, 65535),
    (MIXED, "mlx5_2", 1, "PORT_ACTIVE (4)", 4096, 1024, "Ethernet", 0, 0),
    (MIXED, "mlx5_3", 1, "PORT_DOWN (1)", 4096, 1024, "Ethernet", 0, 0),
    ("vpi_cx3_two_ports.txt", "mlx4_0", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand", 1, 7),
    ("vpi_cx3_two_ports.txt", "mlx4_0", 2, "PORT_ACTIVE (4)", 4096, 1024, "Ethernet", 0, 0),
    ("rxe_soft_roce.txt", "rxe0", 1, "PORT_ACTIVE (4)", 4096, 1024, "Ethernet", 0, 0),
]


@pytest.mark.parametrize(
    ("name", "device", "number", "state", "max_mtu", "active_mtu", "link_layer", "sm", "lid"),
    PORTS,
)
def test_port_fields(name, device, number, state, max_mtu, active_mtu, link_layer, sm, lid):
    port = parse(name)[device]["ports"][number]
    assert port["state"] == state
    assert port["max_mtu"] == max_mtu
    assert port["active_mtu"] == active_mtu
    assert port["link_layer"] == link_layer
    assert port["sm_lid"] == sm
    assert port["port_lid"] == lid
    assert port["port_lmc"] == "0x00"


# fixture: {device: (fw_ver, port numbers)} in output order
DEVICES = [
    ("roce_cx7_tabs.txt", {"mlx5_0": ("28.41.1000", [1])}),
    ("roce_cx7_spaces.txt", {"mlx5_0": ("28.43.2026", [1]), "mlx5_1": ("28.43.2026", [1])}),
    (VERBOSE, {"mlx5_0": ("28.41.1000", [1]), "mlx5_1": ("28.41.1000", [1])}),
    ("ib_cx7_ndr_lids_sm.txt", {"mlx5_0": ("28.40.1000", [1]), "mlx5_1": ("28.40.1000", [1])}),
    (
        MIXED,
        {
            "mlx5_0": ("28.40.1000", [1]),
            "mlx5_1": ("28.40.1000", [1]),
            "mlx5_2": ("22.39.1002", [1]),
            "mlx5_3": ("22.39.1002", [1]),
        },
    ),
    ("vpi_cx3_two_ports.txt", {"mlx4_0": ("2.42.5000", [1, 2])}),
    ("rxe_soft_roce.txt", {"rxe0": ("0.0.0", [1])}),
]


@pytest.mark.parametrize(("name", "devices"), DEVICES)
def test_devices_ports_and_firmware_in_output_order(name, devices):
    parsed = parse(name)
    assert list(parsed) == list(devices)
    for device, (fw_ver, numbers) in devices.items():
        assert parsed[device]["fw_ver"] == fw_ver
        assert list(parsed[device]["ports"]) == numbers
        assert parsed[device]["phys_port_cnt"] == len(numbers)
        assert parsed[device]["transport"] == "InfiniBand (0)"


def test_connectx7_roce_with_tabs_whole_result():
    assert parse("roce_cx7_tabs.txt") == {
        "mlx5_0": {
            "transport": "InfiniBand (0)",
            "fw_ver": "28.41.1000",
            "node_guid": "b83f:d203:00a7:3c10",
            "sys_image_guid": "b83f:d203:00a7:3c10",
            "vendor_id": "0x02c9",
            "vendor_part_id": "4129",
            "hw_ver": "0x0",
            "board_id": "MT_0000000838",
            "phys_port_cnt": 1,
            "ports": {
                1: {
                    "state": "PORT_ACTIVE (4)",
                    "max_mtu": 4096,
                    "active_mtu": 4096,
                    "sm_lid": 0,
                    "port_lid": 0,
                    "port_lmc": "0x00",
                    "link_layer": "Ethernet",
                }
            },
        }
    }


@pytest.mark.parametrize("name", [n for n, _ in DEVICES])
def test_tabs_expanded_to_spaces_parse_the_same(name):
    # The space-aligned layout is the tab layout after a terminal expanded the tabs.
    text = load(name)
    spaced = "".join(line.expandtabs(8) for line in text.splitlines(keepends=True))
    assert "\t" not in spaced
    assert parse_ibv_devinfo(spaced) == parse_ibv_devinfo(text)


def test_space_aligned_output_after_a_shell_prompt():
    text = load("roce_cx7_spaces.txt")
    assert "\t" not in text
    assert text.startswith("[root@gpu-node-07 ~]# ibv_devinfo\nhca_id: mlx5_0\n")
    parsed = parse("roce_cx7_spaces.txt")
    assert parsed["mlx5_1"]["node_guid"] == "e8eb:d303:0041:7a21"
    assert parsed["mlx5_1"]["board_id"] == "MT_0000000838"
    assert set(parsed["mlx5_1"]) == set(parse("roce_cx7_tabs.txt")["mlx5_0"])


def test_infiniband_lids_are_ints_and_the_lmc_stays_text():
    parsed = parse("ib_cx7_ndr_lids_sm.txt")
    lids = {name: info["ports"][1]["port_lid"] for name, info in parsed.items()}
    assert lids == {"mlx5_0": 41, "mlx5_1": 42}
    assert {info["ports"][1]["sm_lid"] for info in parsed.values()} == {1}
    assert all(type(info["ports"][1]["port_lid"]) is int for info in parsed.values())
    assert all(info["ports"][1]["port_lmc"] == "0x00" for info in parsed.values())


def test_mixed_host_down_ports_and_link_layers():
    parsed = parse(MIXED)
    down = [name for name, info in parsed.items() if info["ports"][1]["state"] == "PORT_DOWN (1)"]
    assert down == ["mlx5_1", "mlx5_3"]
    layers = {name: info["ports"][1]["link_layer"] for name, info in parsed.items()}
    assert layers == {
        "mlx5_0": "InfiniBand",
        "mlx5_1": "InfiniBand",
        "mlx5_2": "Ethernet",
        "mlx5_3": "Ethernet",
    }
    assert parsed["mlx5_2"]["vendor_part_id"] == "4125"
    assert parsed["mlx5_3"]["sys_image_guid"] == "0c42:a103:00d5:6e20"
    assert parsed["mlx5_3"]["node_guid"] == "0c42:a103:00d5:6e21"


def test_two_ports_of_one_device_stay_apart():
    device = parse("vpi_cx3_two_ports.txt")["mlx4_0"]
    assert device["phys_port_cnt"] == 2
    assert device["vendor_part_id"] == "4099"
    assert device["board_id"] == "MT_1090120019"
    one, two = device["ports"][1], device["ports"][2]
    assert (one["link_layer"], one["active_mtu"], one["port_lid"]) == ("InfiniBand", 4096, 7)
    assert (two["link_layer"], two["active_mtu"], two["port_lid"]) == ("Ethernet", 1024, 0)
    assert set(one) == set(two)


def test_soft_roce_whole_result():
    # rxe: InfiniBand transport over an Ethernet link layer, firmware 0.0.0, no board_id.
    assert parse("rxe_soft_roce.txt") == {
        "rxe0": {
            "transport": "InfiniBand (0)",
            "fw_ver": "0.0.0",
            "node_guid": "5054:00ff:fe12:3456",
            "sys_image_guid": "5054:00ff:fe12:3456",
            "vendor_id": "0xffffff",
            "vendor_part_id": "0",
            "hw_ver": "0x0",
            "phys_port_cnt": 1,
            "ports": {
                1: {
                    "state": "PORT_ACTIVE (4)",
                    "max_mtu": 4096,
                    "active_mtu": 1024,
                    "sm_lid": 0,
                    "port_lid": 0,
                    "port_lmc": "0x00",
                    "link_layer": "Ethernet",
                }
            },
        }
    }


# --- ibv_devinfo -v -------------------------------------------------------------------


def _values(tree):
    for key, value in tree.items():
        yield key, value
        if isinstance(value, dict):
            yield from _values(value)


def test_verbose_port_fields():
    port = parse(VERBOSE)["mlx5_0"]["ports"][1]
    assert port["active_width"] == "4X (2)"
    assert port["active_speed"] == "50.0 Gbps (64)"
    assert port["phys_state"] == "LINK_UP (5)"
    assert port["gid_tbl_len"] == "256"
    assert port["max_vl_num"] == "invalid value (0)"
    assert port["port_cap_flags"] == "0x04010000"
    assert port["init_type_reply"] == "0"


def test_verbose_gid_table_leaves_no_trace():
    # GID[  n]: lines (RoCE v1 in full form, v2 compressed, each with its type) are not
    # fields: no key, no value, and the port's last field before them is intact.
    parsed = parse(VERBOSE)
    assert "GID[  3]:\t\t::ffff:198.51.100.11, RoCE v2" in load(VERBOSE)
    for key, value in _values(parsed):
        assert not str(key).startswith("GID"), key
        assert "RoCE v" not in str(value), (key, value)
        assert "fe80" not in str(value) and "::ffff" not in str(value), (key, value)
    assert parsed["mlx5_0"]["ports"][1]["phys_state"] == "LINK_UP (5)"


def test_verbose_next_device_starts_after_a_gid_table():
    parsed = parse(VERBOSE)
    port = parsed["mlx5_0"]["ports"][1]
    # mlx5_1's device lines come right after mlx5_0's GID table: they are mlx5_1's.
    assert not {"node_guid", "max_qp", "num_comp_vectors", "hca_id"} & set(port)
    assert parsed["mlx5_1"]["node_guid"] == "b83f:d203:00a7:3c11"
    assert parsed["mlx5_1"]["sys_image_guid"] == "b83f:d203:00a7:3c10"
    assert list(parsed["mlx5_1"]["ports"]) == [1]


def test_verbose_device_fields():
    device = parse(VERBOSE)["mlx5_0"]
    assert device["fw_ver"] == "28.41.1000"
    assert device["phys_port_cnt"] == 1
    assert device["max_qp"] == "131072"
    assert device["max_mr_size"] == "0xffffffffffffffff"
    assert device["device_cap_flags"] == "0x25321c36"
    assert device["atomic_cap"] == "ATOMIC_HCA (1)"
    assert device["completion timestamp_mask"] == "0x7fffffffffffffff"
    assert device["num_comp_vectors"] == "63"
    # The capability flag lists under device_cap_flags are not fields.
    assert not {"BAD_PKEY_CNTR", "XRC", "SUPPORT_RAW_PACKET", "IBV_TM_CAP_RC"} & set(device)


def test_verbose_tag_matching_max_sge_is_not_the_device_max_sge():
    # -v prints the tag-matching caps (max_rndv_hdr_size, max_num_tags, max_ops, max_sge,
    # flags) at the device's own indent, after the device's max_sge: a later line with
    # the same key does not replace a device's or a port's field.
    text = load(VERBOSE)
    assert text.index("\tmax_sge:\t\t\t30\n") < text.index("\tmax_sge:\t\t\t1\n")
    for device in parse(VERBOSE).values():
        assert device["max_sge"] == "30"
        assert device["max_sge_rd"] == "30"
        assert device["max_num_tags"] == "127"


def test_verbose_port_has_the_plain_output_fields_too():
    plain = parse("roce_cx7_tabs.txt")["mlx5_0"]["ports"][1]
    verbose = parse(VERBOSE)["mlx5_0"]["ports"][1]
    assert {key: verbose[key] for key in plain} == plain


# --- empty and malformed input ----------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "\n", "   \n\t\n"])
def test_no_output_is_no_device(text):
    assert parse_ibv_devinfo(text) == {}


def test_no_devices_message_is_no_device():
    # rdma-core's ibv_devinfo with no device prints this (on stderr) and exits non-zero.
    assert parse_ibv_devinfo("No IB devices found\n") == {}


def test_text_before_the_first_device_is_ignored():
    # libibverbs warns on the same terminal when a provider cannot be loaded.
    warning = (
        "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so': "
        "libmlx4-rdmav34.so: cannot open shared object file: No such file or directory\n"
    )
    text = load("roce_cx7_tabs.txt")
    assert parse_ibv_devinfo(warning + text) == parse_ibv_devinfo(text)


def test_fragment_without_hca_id_is_no_device():
    # A -v excerpt as issues quote it: the end of a port section and its GID table.
    port_section = load(VERBOSE).split("\t\tport:\t1\n")[1]
    assert "\t\t\tGID[  0]:" in port_section
    assert parse_ibv_devinfo("\t\tport:\t1\n" + port_section.split("\nhca_id")[0]) == {}


def test_output_cut_inside_a_port():
    text = load("roce_cx7_tabs.txt")
    cut = text[: text.index("\t\t\tsm_lid:")]
    port = parse_ibv_devinfo(cut)["mlx5_0"]["ports"][1]
    assert port == {"state": "PORT_ACTIVE (4)", "max_mtu": 4096, "active_mtu": 4096}


def test_output_cut_after_a_device_name():
    # As a truncated paste: the second device's name, then a key without its value.
    text = load("roce_cx7_spaces.txt")
    cut = text[: text.index("hca_id: mlx5_1")] + "hca_id: mlx5_1\n        transport\n"
    parsed = parse_ibv_devinfo(cut)
    assert parsed["mlx5_1"] == {"ports": {}}
    assert parsed["mlx5_0"] == parse("roce_cx7_spaces.txt")["mlx5_0"]


def test_an_mtu_rdma_core_cannot_name_is_none():
    # devinfo.c prints "invalid MTU (n)" for an MTU enum it does not know.
    text = load("rxe_soft_roce.txt").replace("1024 (3)", "invalid MTU (0)")
    port = parse_ibv_devinfo(text)["rxe0"]["ports"][1]
    assert port["active_mtu"] is None
    assert port["max_mtu"] == 4096


def test_crlf_line_ends_parse_the_same():
    text = load(MIXED)
    assert parse_ibv_devinfo(text.replace("\n", "\r\n")) == parse_ibv_devinfo(text)
