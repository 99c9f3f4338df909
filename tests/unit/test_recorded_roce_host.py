"""The recorded RoCE host of rdma_verify's Molecule scenario (tests/harness/
recorded_roce_host.py): its sysfs tree and its ibv_devinfo output describe the same
ports, read by the same parsers the role's rdma_health_info uses."""

from __future__ import annotations

import sys

from ansible_collections.rdma.fabric.plugins.module_utils.ibv_devinfo import parse_ibv_devinfo
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    flat_ports,
    read_devices,
    read_port_counters,
    roce_v2_ipv4_gid,
)
from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests" / "harness"))
from recorded_roce_host import record  # noqa: E402


def test_tree_and_ibv_devinfo_agree(tmp_path):
    record(tmp_path, 7, symbol_errors=50)
    ports = flat_ports(read_devices(str(tmp_path)))
    devinfo = parse_ibv_devinfo((tmp_path / "ibv_devinfo.txt").read_text())
    assert [(p["device"], p["netdev"]) for p in ports] == [
        ("mlx5_0", "enp27s0f0np0"),
        ("mlx5_1", "enp27s0f1np1"),
    ]
    assert all(p["state"] == "ACTIVE" and p["link_layer"] == "Ethernet" for p in ports)
    assert [roce_v2_ipv4_gid(p)["ipv4"] for p in ports] == ["192.168.10.7", "192.168.11.7"]
    assert sorted(devinfo) == ["mlx5_0", "mlx5_1"]
    for device in read_devices(str(tmp_path)):
        assert devinfo[device["name"]]["node_guid"] == device["node_guid"]
        assert devinfo[device["name"]]["ports"][1]["active_mtu"] == 4096
    counters = read_port_counters(str(tmp_path), [("mlx5_0", 1), ("mlx5_1", 1)])
    assert counters[("mlx5_1", "1")]["symbol_error"] == 50
    assert counters[("mlx5_0", "1")]["symbol_error"] == 0


def test_each_number_is_its_own_host(tmp_path):
    record(tmp_path / "a", 1)
    record(tmp_path / "b", 2)
    boot = "proc/sys/kernel/random/boot_id"
    assert (tmp_path / "a" / boot).read_text() != (tmp_path / "b" / boot).read_text()
    guids = [{d["node_guid"] for d in read_devices(str(tmp_path / host))} for host in ("a", "b")]
    assert not guids[0] & guids[1]
