"""IPoIB rails.

Finding 4: enhanced IPoIB (datagram only) is a property of the mlx5 driver (ConnectX-4
and later; drivers/infiniband/ulp/ipoib and mlx5's rdma_netdev); ib_ipoib's
ipoib_enhanced parameter exists only in MLNX_OFED/DOCA-OFED and applies to mlx5 devices
only. So the device's driver is read from sysfs (/sys/class/infiniband/DEV/device/driver
-> .../drivers/mlx5_core); persistent device names (ibp65s0, rocep65s0f0: rdma-core's
udev naming) say nothing about the driver.

Finding 5: without subnet managers in the inventory the Default partition's broadcast
MTU is OpenSM's default, 2048 (OSM_DEFAULT_MGRP_MTU 4 in include/opensm/osm_base.h;
doc/partition-config.txt "mtu ... default 4"), so a datagram IPoIB rail gets 2044, not
4092; a partition mtu in bytes (2048 for the code 4) is refused naming the variable.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_sysfs
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    bind_pkeys,
    normalize_rails,
    resolve_rails,
)
from sysfs_tree import Port, add_device


def _ib_device(name, driver):
    return {
        "name": name,
        "driver": driver,
        "pci_address": "0000:41:00.0",
        "ports": [{"port": 1, "link_layer": "InfiniBand", "netdev": "ibp65s0"}],
    }


def _connected(device):
    rails, errors = normalize_rails(
        [
            {
                "name": "ib0",
                "device": device,
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "subnet": "10.8.0.0/24",
            }
        ]
    )
    assert errors == []
    return rails


@pytest.mark.parametrize("param", [None, True])
def test_connected_mode_refused_on_mlx5_by_driver_with_a_persistent_name(param):
    _out, errors = resolve_rails(
        _connected("ibp65s0"), [_ib_device("ibp65s0", "mlx5_core")], "gpu01", param
    )
    assert len(errors) == 1 and "gpu01: rail ib0: ipoib_mode connected on ibp65s0" in errors[0]
    assert "mlx5_core" in errors[0]


def test_connected_mode_kept_on_mlx5_with_ipoib_enhanced_0():
    out, errors = resolve_rails(
        _connected("ibp65s0"), [_ib_device("ibp65s0", "mlx5_core")], "gpu01", False
    )
    assert errors == [] and out[0]["ipoib_mode"] == "connected"


def test_mlx4_runs_connected_mode_even_where_ofed_has_ipoib_enhanced():
    # MLNX_OFED's ipoib_enhanced=1 (its default) does not make a ConnectX-3 enhanced.
    out, errors = resolve_rails(
        _connected("mlx4_0"), [_ib_device("mlx4_0", "mlx4_core")], "gpu01", True
    )
    assert errors == [] and out[0]["device"] == "mlx4_0"


def test_driver_is_read_from_sysfs(tmp_path):
    add_device(
        tmp_path,
        "ibp65s0",
        {1: Port(link_layer="InfiniBand")},
        pci="0000:41:00.0",
        netdevs={"ibp65s0": 0},
        driver="mlx5_core",
    )
    add_device(tmp_path, "rxe0", {1: Port(link_layer="Ethernet")})
    devices = {d["name"]: d for d in rdma_sysfs.read_devices(str(tmp_path))}
    assert devices["ibp65s0"]["driver"] == "mlx5_core"
    assert devices["rxe0"]["driver"] is None


def _datagram(pkeys=None):
    rails, errors = normalize_rails(
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "subnet": "10.8.0.0/24",
                "pkeys": pkeys or [],
            }
        ]
    )
    assert errors == []
    return rails


def test_default_partition_without_mtu_is_opensms_2048():
    # The role's fallback when no subnet manager defines partitions.
    bound, errors = bind_pkeys(_datagram(), [{"name": "Default", "pkey": 0x7FFF}])
    assert errors == [] and bound[0]["mtu"] == 2044


def test_an_ipoib_partition_without_mtu_is_the_opensm_roles_default():
    # ib_subnet_manager writes ib_subnet_manager_ipoib_mtu (5, 4096) for `ipoib: true`.
    parts = [{"name": "Default", "pkey": 0x7FFF, "ipoib": True}]
    bound, errors = bind_pkeys(_datagram(), parts)
    assert errors == [] and bound[0]["mtu"] == 4092


@pytest.mark.parametrize("mtu", [2048, 4096, 6, 0, "big"])
def test_a_partition_mtu_that_is_no_ib_mtu_code_is_refused(mtu):
    parts = [{"name": "Default", "pkey": 0x7FFF, "mtu": mtu}]
    _bound, errors = bind_pkeys(_datagram(), parts)
    assert len(errors) == 1, errors
    assert "partitions[0] (Default).mtu" in errors[0]
    assert "1-5" in errors[0] and "4 = 2048" in errors[0]
    assert repr(mtu) in errors[0]
