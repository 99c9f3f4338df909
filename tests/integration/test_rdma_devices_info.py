"""rdma.fabric.rdma_devices_info run as a real Ansible module (ad-hoc, localhost)."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import read_devices
from sysfs_tree import add_dual_port_ib, add_rxe, build_mixed_host


def run_module(run_module_on_localhost, module_args, *extra):
    return run_module_on_localhost("rdma.fabric.rdma_devices_info", module_args, *extra)


def test_module_reads_a_mixed_host(run_module_on_localhost, tmp_path):
    build_mixed_host(tmp_path)
    add_rxe(tmp_path, "rxe0", "ens4")
    proc, result = run_module(run_module_on_localhost, f"sysfs_root={tmp_path}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["changed"] is False
    assert not result.get("failed")
    assert result["action"] == "rdma.fabric.rdma_devices_info"

    devices = {d["name"]: d for d in result["devices"]}
    names = [d["name"] for d in result["devices"]]
    assert names == ["mlx5_0", "mlx5_1", "mlx5_10", "mlx5_2", "rxe0"]
    ib = devices["mlx5_0"]
    assert (ib["hca_type"], ib["fw_ver"], ib["node_guid"]) == (
        "MT4129",
        "28.39.1002",
        "946d:ae03:00cd:e72c",
    )
    assert ib["ports"][0]["rate_gbps"] == 400.0
    assert ib["ports"][0]["state"] == "ACTIVE"
    assert ib["ports"][0]["netdev"] == "ibp26s0"
    assert devices["mlx5_2"]["ports"][0]["state"] == "DOWN"
    assert devices["rxe0"]["ports"][0]["netdev"] == "ens4"
    assert devices["rxe0"]["netdevs"] == []

    by_ll = result["by_link_layer"]
    assert [r["netdev"] for r in by_ll["InfiniBand"]] == ["ibp26s0", "ibp204s0"]
    assert [r["netdev"] for r in by_ll["Ethernet"]] == ["enp27s0f0np0", "enp27s0f1np1", "ens4"]

    # What went through Ansible (AnsiballZ, JSON) is what the parser builds in-process.
    assert result["devices"] == read_devices(str(tmp_path))


def test_module_dual_port_in_check_mode(run_module_on_localhost, tmp_path):
    add_dual_port_ib(tmp_path)
    proc, result = run_module(run_module_on_localhost, f"sysfs_root={tmp_path}", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["changed"] is False
    assert not result.get("skipped"), "the module must run in check mode, not be skipped"
    [dev] = result["devices"]
    assert [(p["port"], p["netdev"]) for p in dev["ports"]] == [(1, "ibp5s0"), (2, "ibp5s0d1")]


@pytest.mark.parametrize("make_sys", [True, False], ids=["sys-without-infiniband", "no-sys"])
def test_module_on_host_without_rdma(run_module_on_localhost, tmp_path, make_sys):
    if make_sys:
        (tmp_path / "sys" / "class" / "net" / "eth0").mkdir(parents=True)
    proc, result = run_module(run_module_on_localhost, f"sysfs_root={tmp_path}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["devices"] == []
    assert result["by_link_layer"] == {}
    assert result["changed"] is False


def test_module_rejects_unknown_options(run_module_on_localhost, tmp_path):
    proc, result = run_module(run_module_on_localhost, f"sysfs_root={tmp_path} sysfs_rot=/")
    assert proc.returncode != 0
    assert result.get("failed") is True
    assert "sysfs_rot" in result["msg"]
