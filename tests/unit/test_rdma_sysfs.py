"""module_utils/rdma_sysfs.py against sysfs trees shaped like real hosts."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_sysfs
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    netdevs_by_link_layer,
    parse_rate,
    read_devices,
    split_numbered,
)
from sysfs_tree import (
    Port,
    add_cx6dx_roce,
    add_cx7_ib,
    add_device,
    add_dual_port_ib,
    add_rxe,
    build_mixed_host,
)

# --- split_numbered --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("4: ACTIVE", (4, "ACTIVE")),
        ("1: DOWN", (1, "DOWN")),
        ("5: LinkUp", (5, "LinkUp")),
        ("3: Disabled", (3, "Disabled")),
        ("1: CA", (1, "CA")),
        ("2: switch", (2, "switch")),
        ("  4:   ACTIVE  ", (4, "ACTIVE")),
        ("10: LinkErrorRecovery", (10, "LinkErrorRecovery")),
    ],
)
def test_split_numbered_reads_kernel_enums(value, expected):
    assert split_numbered(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, (None, None)),
        ("ACTIVE", (None, "ACTIVE")),
        ("  ACTIVE ", (None, "ACTIVE")),
        ("x: ACTIVE", (None, "x: ACTIVE")),
        ("-1: ACTIVE", (None, "-1: ACTIVE")),
        ("", (None, "")),
    ],
)
def test_split_numbered_keeps_what_it_cannot_split(value, expected):
    assert split_numbered(value) == expected


# --- parse_rate --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        ("2.5 Gb/sec (1X SDR)", 2.5),
        ("10 Gb/sec (4X SDR)", 10.0),
        ("56 Gb/sec (4X FDR)", 56.0),
        ("100 Gb/sec (2X HDR)", 100.0),
        ("200 Gb/sec (4X HDR)", 200.0),
        ("400 Gb/sec (4X NDR)", 400.0),
        ("800 Gb/sec (4X XDR)", 800.0),
        ("  40 Gb/sec (4X QDR)\n", 40.0),
    ],
)
def test_parse_rate(text, gbps):
    assert parse_rate(text) == gbps
    assert isinstance(parse_rate(text), float)


@pytest.mark.parametrize(
    "junk",
    [
        None,
        "",
        "   ",
        "Gb/sec",
        "fast",
        "400",
        "400 Mb/sec",
        "(4X NDR) 400 Gb/sec",
        ". Gb/sec",
        "1.2.3 Gb/sec",
    ],
)
def test_parse_rate_junk_is_none(junk):
    assert parse_rate(junk) is None


# --- read_devices: single hosts --------------------------------------------------------


def test_no_infiniband_class_means_no_devices(tmp_path):
    (tmp_path / "sys" / "class" / "net").mkdir(parents=True)
    assert read_devices(str(tmp_path)) == []
    # Not even /sys at all.
    assert read_devices(str(tmp_path / "nonexistent")) == []


def test_empty_infiniband_class_means_no_devices(tmp_path):
    (tmp_path / "sys" / "class" / "infiniband").mkdir(parents=True)
    assert read_devices(str(tmp_path)) == []


def test_connectx7_infiniband_port(tmp_path):
    add_cx7_ib(tmp_path)
    [dev] = read_devices(str(tmp_path))
    assert dev["name"] == "mlx5_0"
    assert (dev["node_type"], dev["node_type_num"]) == ("CA", 1)
    assert dev["node_guid"] == "946d:ae03:00cd:e72c"
    assert dev["fw_ver"] == "28.39.1002"
    assert dev["hca_type"] == "MT4129"
    assert dev["netdevs"] == ["ibp26s0"]
    [port] = dev["ports"]
    assert port == {
        "port": 1,
        "state": "ACTIVE",
        "state_num": 4,
        "phys_state": "LinkUp",
        "phys_state_num": 5,
        "rate": "400 Gb/sec (4X NDR)",
        "rate_gbps": 400.0,
        "link_layer": "InfiniBand",
        "lid": "0x4b",
        "sm_lid": "0x14e",
        # The GID ndev cannot be read on an IB port: the IPoIB netdev of the
        # PCI function (dev_port 0 = port 1) is the port's netdev.
        "netdev": "ibp26s0",
        "gids": [],
    }


def test_roce_port_takes_netdev_from_gid_table(tmp_path):
    # The PCI function's netdev list says one thing, the GID table another (a
    # renamed or moved netdev): the GID table is what RoCE traffic uses.
    add_device(
        tmp_path,
        "mlx5_1",
        {1: Port(rate="100 Gb/sec (2X HDR)", link_layer="Ethernet", gid_ndevs={0: "ens1f0np0"})},
        pci="0000:1b:00.0",
        netdevs={"enp27s0f0np0": 0},
        hca_type="MT4125",
    )
    [dev] = read_devices(str(tmp_path))
    [port] = dev["ports"]
    assert port["link_layer"] == "Ethernet"
    assert port["netdev"] == "ens1f0np0"
    assert dev["netdevs"] == ["enp27s0f0np0"]
    assert port["rate_gbps"] == 100.0
    assert (port["lid"], port["sm_lid"]) == ("0x0", "0x0")


def test_roce_port_down(tmp_path):
    add_cx6dx_roce(tmp_path, "mlx5_2", "0000:1b:00.1", "enp27s0f1np1", up=False)
    [dev] = read_devices(str(tmp_path))
    [port] = dev["ports"]
    assert (port["state"], port["state_num"]) == ("DOWN", 1)
    assert (port["phys_state"], port["phys_state_num"]) == ("Disabled", 3)
    assert port["netdev"] == "enp27s0f1np1"


@pytest.mark.parametrize(
    "netdevs",
    [
        {"ibp5s0": 0, "ibp5s0d1": 1},
        # Renamed by udev so that name order and port order disagree.
        {"ib_rail_b": 0, "ib_rail_a": 1},
    ],
    ids=["predictable-names", "renamed"],
)
def test_dual_port_device_picks_netdev_by_dev_port(tmp_path, netdevs):
    add_dual_port_ib(tmp_path, netdevs)
    [dev] = read_devices(str(tmp_path))
    by_dev_port = {dev_port: name for name, dev_port in netdevs.items()}
    assert sorted(dev["netdevs"]) == sorted(netdevs)
    assert [p["port"] for p in dev["ports"]] == [1, 2]
    assert [p["netdev"] for p in dev["ports"]] == [by_dev_port[0], by_dev_port[1]]
    assert all(p["rate_gbps"] == 56.0 for p in dev["ports"])


def test_dual_port_device_without_a_netdev_for_port_2(tmp_path):
    # IPoIB of port 2 not created: port 2 must not borrow port 1's netdev.
    add_dual_port_ib(tmp_path, {"ibp5s0": 0})
    [dev] = read_devices(str(tmp_path))
    assert [p["netdev"] for p in dev["ports"]] == ["ibp5s0", None]


def test_rxe_netdev_comes_from_parent(tmp_path):
    add_rxe(tmp_path, "rxe0", "ens4")
    [dev] = read_devices(str(tmp_path))
    assert dev["name"] == "rxe0"
    assert dev["netdevs"] == []  # virtual: no device/net
    assert dev["hca_type"] is None
    assert dev["fw_ver"] == ""
    [port] = dev["ports"]
    assert port["netdev"] == "ens4"
    assert port["link_layer"] == "Ethernet"
    assert port["rate_gbps"] == 2.5


def test_rxe_with_gids_agrees_with_parent(tmp_path):
    add_rxe(tmp_path, "rxe0", "eno12399np0", with_gids=True)
    add_rxe(tmp_path, "rxe1", "ens7f1np1")
    devices = read_devices(str(tmp_path))
    assert [(d["name"], d["ports"][0]["netdev"]) for d in devices] == [
        ("rxe0", "eno12399np0"),
        ("rxe1", "ens7f1np1"),
    ]


def test_port_without_any_netdev(tmp_path):
    # A PCI RDMA function whose netdev is gone (e.g. unbound): None, not a crash.
    add_device(
        tmp_path, "mlx5_3", {1: Port(link_layer="InfiniBand")}, pci="0000:3c:00.0", netdevs={}
    )
    [dev] = read_devices(str(tmp_path))
    assert dev["netdevs"] == []
    assert dev["ports"][0]["netdev"] is None


def test_missing_attributes_read_as_none(tmp_path):
    add_device(tmp_path, "mlx5_4", {1: Port(rate=None, link_layer=None)}, pci="0000:4d:00.0")
    [dev] = read_devices(str(tmp_path))
    assert (dev["node_guid"], dev["fw_ver"], dev["hca_type"]) == (None, None, None)
    [port] = dev["ports"]
    assert (port["rate"], port["rate_gbps"], port["link_layer"]) == (None, None, None)


def test_ports_are_in_numeric_order(tmp_path):
    # An mlx5 uplink in switchdev mode carries one IB port per representor:
    # 1 (uplink) + 11 VF representors; "10" must not sort before "2".
    ports = {
        n: Port(link_layer="Ethernet", rate="100 Gb/sec (2X HDR)", gid_ndevs={0: f"pf0vf{n - 2}"})
        for n in range(2, 13)
    }
    ports[1] = Port(link_layer="Ethernet", rate="100 Gb/sec (2X HDR)", gid_ndevs={0: "p0"})
    add_device(tmp_path, "mlx5_0", ports, pci="0000:08:00.0", netdevs={"p0": 0})
    [dev] = read_devices(str(tmp_path))
    assert [p["port"] for p in dev["ports"]] == list(range(1, 13))
    assert [p["netdev"] for p in dev["ports"]] == ["p0"] + [f"pf0vf{i}" for i in range(11)]


def test_non_numeric_entries_under_ports_are_ignored(tmp_path):
    dev_dir = add_cx7_ib(tmp_path)
    (dev_dir / "ports" / "lost+found").mkdir()
    [dev] = read_devices(str(tmp_path))
    assert [p["port"] for p in dev["ports"]] == [1]


# --- a whole host ----------------------------------------------------------------------


def test_mixed_host_devices_sorted_like_ibstat(tmp_path):
    build_mixed_host(tmp_path)
    devices = read_devices(str(tmp_path))
    names = [d["name"] for d in devices]
    # ibstat and /sys list in plain string order: mlx5_10 before mlx5_2.
    assert names == ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_2"]
    assert {d["name"]: d["ports"][0]["link_layer"] for d in devices} == {
        "mlx5_0": "InfiniBand",
        "mlx5_1": "Ethernet",
        "mlx5_10": "InfiniBand",
        "mlx5_2": "Ethernet",
    }


def test_netdevs_by_link_layer_on_mixed_host(tmp_path):
    build_mixed_host(tmp_path)
    add_rxe(tmp_path, "rxe0", "ens4")
    groups = netdevs_by_link_layer(read_devices(str(tmp_path)))
    assert set(groups) == {"InfiniBand", "Ethernet"}
    assert groups["InfiniBand"] == [
        {"device": "mlx5_0", "port": 1, "netdev": "ibp26s0"},
        {"device": "mlx5_10", "port": 1, "netdev": "ibp204s0"},
    ]
    assert groups["Ethernet"] == [
        {"device": "mlx5_1", "port": 1, "netdev": "enp27s0f0np0"},
        {"device": "mlx5_2", "port": 1, "netdev": "enp27s0f1np1"},
        {"device": "rxe0", "port": 1, "netdev": "ens4"},
    ]


def test_netdevs_by_link_layer_dual_port_and_unknown(tmp_path):
    add_dual_port_ib(tmp_path)
    add_device(
        tmp_path, "mlx5_9", {1: Port(link_layer=None)}, pci="0000:bc:00.0", netdevs={"ibp188s0": 0}
    )
    groups = netdevs_by_link_layer(read_devices(str(tmp_path)))
    assert groups == {
        "InfiniBand": [
            {"device": "mlx4_0", "port": 1, "netdev": "ibp5s0"},
            {"device": "mlx4_0", "port": 2, "netdev": "ibp5s0d1"},
        ],
        "unknown": [{"device": "mlx5_9", "port": 1, "netdev": "ibp188s0"}],
    }


def test_netdevs_by_link_layer_empty():
    assert netdevs_by_link_layer([]) == {}
    assert netdevs_by_link_layer([{"name": "mlx5_0", "ports": []}]) == {}


# A ConnectX-6 RoCE port's GID table as show_gids prints it (a public IBM issue): link
# local v1/v2 pairs first, the IPv4-mapped RoCE v2 GID at index 5, unused entries zero.
CX6_GIDS = {
    0: ("fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "IB/RoCE v1"),
    1: ("fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8", "RoCE v2"),
    4: ("0000:0000:0000:0000:0000:ffff:ac13:003c", "IB/RoCE v1"),
    5: ("0000:0000:0000:0000:0000:ffff:ac13:003c", "RoCE v2"),
    6: ("0000:0000:0000:0000:0000:0000:0000:0000", ""),
}


def test_roce_v2_ipv4_gid_index_is_read_not_assumed(tmp_path):
    add_device(
        tmp_path,
        "mlx5_0",
        {
            1: Port(
                link_layer="Ethernet",
                rate="100 Gb/sec (4X EDR)",
                gids=CX6_GIDS,
                gid_ndevs={i: "ens1f0" for i in CX6_GIDS},
            )
        },
        pci="0000:3b:00.0",
        netdevs={"ens1f0": 0},
    )
    [dev] = rdma_sysfs.read_devices(str(tmp_path))
    [port] = dev["ports"]
    assert [g["index"] for g in port["gids"]] == [0, 1, 4, 5]
    entry = rdma_sysfs.roce_v2_ipv4_gid(port)
    assert entry["index"] == 5
    assert entry["ipv4"] == "172.19.0.60"
    assert entry["netdev"] == "ens1f0"


def test_no_roce_v2_ipv4_gid_when_only_v1_or_ipv6(tmp_path):
    only_v1 = {k: v for k, v in CX6_GIDS.items() if v[1] != "RoCE v2"}
    add_device(
        tmp_path,
        "mlx5_0",
        {1: Port(link_layer="Ethernet", gids=only_v1)},
        pci="0000:3b:00.0",
        netdevs={"ens1f0": 0},
    )
    [dev] = rdma_sysfs.read_devices(str(tmp_path))
    assert rdma_sysfs.roce_v2_ipv4_gid(dev["ports"][0]) is None
