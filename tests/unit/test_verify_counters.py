"""What rdma_verify reads around its tests and across hosts (module_utils/rdma_sysfs.py,
rdma_verify.py, verify_counters.py): port counters and hw_counters before and after a
round, the PCIe link against its capability, NVIDIA GPUs and nvidia_peermem, firmware
per PSID, perftest pinned to the HCA's CPUs and RoCE tests in the policy's class.

The trees follow the kernel's layout: ports/N/counters (PMA PortCounters, the names
perfquery prints), ports/N/hw_counters (mlx5's: out_of_buffer, packet_seq_err,
local_ack_timeout_err, rnr_nak_retry_err, np_cnp_sent, rp_cnp_handled, ...), the PCI
function's current_link_speed "16.0 GT/s PCIe" / max_link_width "16", local_cpulist.
The values are ours.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_judge as vjudge
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils.ethtool_stats import (
    parse_ethtool_stats,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    port_counter_deltas,
    read_devices,
    read_gpus,
    read_port_counters,
    saturated_counters,
)
from fixture_text import load
from sysfs_tree import PCI_DOMAIN, add_cx6dx_roce, add_pci_bus_entry, roce_gids

HW_COUNTERS = {
    "out_of_buffer": 0,
    "out_of_sequence": 3,
    "packet_seq_err": 0,
    "local_ack_timeout_err": 7,
    "rnr_nak_retry_err": 0,
    "np_cnp_sent": 120,
    "rp_cnp_handled": 98,
    "np_ecn_marked_roce_packets": 1024,
    "rx_write_requests": 881233,  # not an error counter: not reported
}
PMA = {"link_downed": 1, "symbol_error": 0, "port_rcv_errors": 2, "port_xmit_discards": 0}


def roce_host(root, counters=PMA):
    dev = add_cx6dx_roce(
        root,
        "mlx5_0",
        gids=roce_gids("0000:0000:0000:0001", "10.0.0.1"),
        mtu=9000,
        counters=dict(counters),
    )
    hw = dev / "ports" / "1" / "hw_counters"
    hw.mkdir()
    for name, value in HW_COUNTERS.items():
        (hw / name).write_text(f"{value}\n")
    function = root / "sys/devices" / PCI_DOMAIN / "0000:1b:00.0"
    for name, value in {
        "current_link_speed": "16.0 GT/s PCIe",
        "current_link_width": "8",
        "max_link_speed": "16.0 GT/s PCIe",
        "max_link_width": "16",
        "local_cpulist": "0-15,32-47",
        "numa_node": "0",
    }.items():
        (function / name).write_text(value + "\n")
    (dev / "board_id").write_text("MT_0000000359\n")
    return dev


def bump(dev, folder, name, by):
    path = dev / "ports" / "1" / folder / name
    path.write_text(f"{int(path.read_text()) + by}\n")


def test_counter_deltas_around_a_round(tmp_path):
    dev = roce_host(tmp_path)
    before = read_port_counters(str(tmp_path), [("mlx5_0", "1")])
    assert before[("mlx5_0", "1")]["np_cnp_sent"] == 120
    assert "rx_write_requests" not in before[("mlx5_0", "1")]
    bump(dev, "counters", "link_downed", 1)
    bump(dev, "counters", "port_rcv_errors", 5)
    bump(dev, "hw_counters", "local_ack_timeout_err", 2)
    bump(dev, "hw_counters", "np_cnp_sent", 40)
    bump(dev, "hw_counters", "rx_write_requests", 1000)
    after = read_port_counters(str(tmp_path), [("mlx5_0", "1")])
    assert port_counter_deltas(before, after) == {
        ("mlx5_0", "1"): {
            "link_downed": 1,
            "port_rcv_errors": 5,
            "local_ack_timeout_err": 2,
            "np_cnp_sent": 40,
        }
    }


def test_soft_roce_without_counters_has_no_deltas(tmp_path):
    before = read_port_counters(str(tmp_path), [("rxe0", "1")])
    assert port_counter_deltas(before, before) == {("rxe0", "1"): {}}


def health_of(tmp_path, gpus=None):
    devices = read_devices(str(tmp_path))
    [device] = devices
    port = dict(
        device["ports"][0],
        device="mlx5_0",
        netdev_mtu=9000,
        active_mtu=4096,
        roce_v2_gid={"index": 3, "ipv4": "10.0.0.1"},
        counters=None,
    )
    info = {
        "ports": [port],
        "devices": devices,
        "perftest_version": "6.06",
        "problems": [],
        "gpus": gpus or {},
    }
    return rv.host_health(info, {"active_mtu": 4096, "counter_max": {}})


def test_pcie_link_below_its_capability_fails(tmp_path):
    roce_host(tmp_path)
    health = health_of(tmp_path)
    [check] = [c for c in health["checks"] if c["check"] == "PCIe link"]
    assert not check["ok"] and check["device"] == "mlx5_0"
    assert check["detail"] == "16.0 GT/s x8 (capable 16.0 GT/s x16)"
    [rail] = health["rails"]
    assert rail["local_cpulist"] == "0-15,32-47" and rail["numa_node"] == 0
    assert health["devices"] == [
        {"name": "mlx5_0", "fw_ver": "22.38.1002", "board_id": "MT_0000000359"}
    ]


def test_gpus_without_nvidia_peermem_fail(tmp_path):
    roce_host(tmp_path)
    for pci in ("0000:18:00.0", "0000:2a:00.0"):
        link = add_pci_bus_entry(tmp_path, pci)
        (link / "vendor").write_text("0x10de\n")
        (link / "class").write_text("0x030200\n")
    gpus = read_gpus(str(tmp_path))
    assert [g["pci"] for g in gpus["nvidia_gpus"]] == ["0000:18:00.0", "0000:2a:00.0"]
    assert gpus["nvidia_peermem"] is False
    [check] = [c for c in health_of(tmp_path, gpus)["checks"] if c["check"] == "nvidia_peermem"]
    assert not check["ok"] and "not loaded on a host with 2 NVIDIA GPUs" in check["detail"]
    (tmp_path / "sys/module/nvidia_peermem").mkdir(parents=True)
    [check] = [
        c
        for c in health_of(tmp_path, read_gpus(str(tmp_path)))["checks"]
        if c["check"] == "nvidia_peermem"
    ]
    assert check["ok"]
    assert not [c for c in health_of(tmp_path)["checks"] if c["check"] == "nvidia_peermem"]


def test_firmware_skew_within_one_psid_fails_naming_the_nics():
    def host(fw):
        return {
            "devices": [{"name": "mlx5_0", "fw_ver": fw, "board_id": "MT_0000000838"}],
            "rails": [],
            "checks": [],
        }

    health = {"lab1": host("28.39.1002"), "lab2": host("28.39.1002"), "lab3": host("28.37.1014")}
    [check] = [c for c in vfabric.fabric(health)["checks"] if c["check"].startswith("firmware")]
    assert check["check"] == "firmware of MT_0000000838" and not check["ok"]
    assert check["detail"] == "28.37.1014: lab3 mlx5_0; 28.39.1002: lab1 mlx5_0, lab2 mlx5_0"


def test_perftest_pinned_to_the_hca_cpus_and_roce_in_the_policy_class():
    def rail(name, host):
        return {
            "rail": name,
            "device": name,
            "port": 1,
            "link_layer": "Ethernet",
            "gid_index": 3,
            "address": f"10.0.0.{host}",
            "pci": "0000:1b:00.0",
            "local_cpulist": "0-15",
        }

    health = {h: {"rails": [rail("mlx5_0", n)]} for n, h in enumerate(("a", "b"), 1)}
    options = {
        "binary": "ib_write_bw",
        "args": ["-D", 5],
        "pin_cpus": True,
        "tclass": "auto",
        "roce_policy": {"roce_dscp": 26},
    }
    [test] = vplan.plan("main", vplan.all_pairs(["a", "b"])[:1], health, options, {})
    argv = test["client_test"]["argv"]
    assert argv[:3] == ["taskset", "-c", "0-15"] and argv[3] == "ib_write_bw"
    assert "--tclass=106" in argv  # DSCP 26 << 2, plus ECT(0): ECN is on by default
    [test] = vplan.plan(
        "main",
        vplan.all_pairs(["a", "b"])[:1],
        health,
        dict(options, pin_cpus=False, tclass="none"),
        {},
    )
    assert test["client_test"]["argv"][0] == "ib_write_bw"
    assert not any(a.startswith("--tclass") for a in test["client_test"]["argv"])
    health["a"]["rails"][0].update(pci=None, local_cpulist=None)  # Soft-RoCE: no NIC
    [test] = vplan.plan("main", vplan.all_pairs(["a", "b"])[:1], health, options, {})
    assert not any(a.startswith("--tclass") for a in test["server_test"]["argv"])


def test_ethtool_pause_and_pfc_counters():
    text = load(
        Path(__file__).resolve().parents[1] / "fixtures" / "ethtool", "ethtool_S_mlx5_roce.txt"
    )
    stats = parse_ethtool_stats(text)
    assert stats == {
        "rx_discards_phy": 12,
        "tx_discards_phy": 0,
        "rx_pause_ctrl_phy": 0,
        "tx_pause_ctrl_phy": 0,
        "rx_prio3_pause": 4431,
        "rx_prio3_pause_duration": 90211,
        "tx_prio3_pause": 17,
        "tx_prio3_pause_duration": 512,
        "rx_prio3_pause_transition": 2215,
    }
    assert parse_ethtool_stats("") == {} and parse_ethtool_stats("no stats available") == {}
    assert parse_ethtool_stats(text, keep=None)["rx_packets"] == 1839271


@pytest.mark.parametrize(
    ("numa_node", "numactl", "cpus", "launcher"),
    [
        (1, True, "16-31", ["numactl", "--cpunodebind=1", "--membind=1"]),
        (0, True, "0-15", ["numactl", "--cpunodebind=0", "--membind=0"]),
        (1, False, "16-31", ["taskset", "-c", "16-31"]),  # the host has no numactl
        (-1, True, "0-3", ["taskset", "-c", "0-3"]),  # one socket, or a VM
        (None, True, "0-3", ["taskset", "-c", "0-3"]),  # no numa_node in sysfs
        (-1, True, None, []),  # neither known: unpinned
    ],
    ids=["numactl", "node-0", "no-numactl", "node-minus-1", "no-node", "unknown"],
)
def test_perftest_bound_to_the_hca_numa_node_or_its_cpus(numa_node, numactl, cpus, launcher):
    def rail(host):
        return {
            "rail": "rail0",
            "device": "mlx5_0",
            "port": 1,
            "link_layer": "InfiniBand",
            "address": f"10.0.0.{host}",
            "local_cpulist": cpus,
            "numa_node": numa_node,
            "numactl": numactl,
        }

    health = {h: {"rails": [rail(n)]} for n, h in enumerate(("a", "b"), 1)}
    options = {"binary": "ib_write_bw", "args": ["-D", 5], "pin_cpus": True}
    [test] = vplan.plan("main", vplan.all_pairs(["a", "b"])[:1], health, options, {})
    for side in ("server_test", "client_test"):
        argv = test[side]["argv"]
        assert argv[: len(launcher)] == launcher and argv[len(launcher)] == "ib_write_bw"
    [test] = vplan.plan(
        "main", vplan.all_pairs(["a", "b"])[:1], health, dict(options, pin_cpus=False), {}
    )
    assert test["client_test"]["argv"][0] == "ib_write_bw"


def test_numa_node_minus_one_from_sysfs_pins_with_taskset(tmp_path):
    """A VM's HCA: sysfs numa_node -1; even with numactl installed, taskset on its CPUs."""
    roce_host(tmp_path)
    (tmp_path / "sys/devices" / PCI_DOMAIN / "0000:1b:00.0" / "numa_node").write_text("-1\n")
    devices = read_devices(str(tmp_path))
    [port] = devices[0]["ports"]
    info = {
        "ports": [dict(port, device="mlx5_0", roce_v2_gid={"index": 3, "ipv4": "10.0.0.1"})],
        "devices": devices,
        "numactl": "/usr/bin/numactl",
    }
    [rail] = rv.host_health(info, {"counter_max": {}})["rails"]
    assert (rail["numa_node"], rail["numactl"]) == (-1, True)
    assert vplan.pin_argv(rail) == ["taskset", "-c", "0-15,32-47"]


# Counters judge.
def test_ethtool_filter_keeps_discards_ecn_marks_and_phy_errors():
    text = load(
        Path(__file__).resolve().parents[1] / "fixtures" / "ethtool",
        "ethtool_S_mlx5_roce_errors.txt",
    )
    stats = parse_ethtool_stats(text)
    assert stats == {
        "rx_out_of_buffer": 3,
        "rx_discards_phy": 0,
        "rx_crc_errors_phy": 2,
        "rx_symbol_err_phy": 41,
        "link_down_events_phy": 1,
        "rx_prio3_pause": 0,
        "rx_prio3_buf_discard": 7,
        "rx_prio3_cong_discard": 5,
        "rx_prio3_marked": 9120,
        "rx_prio0_buf_discard": 0,
    }


def _judged(deltas=None, saturated=None, gbps=390.0, options=None):
    health = {h: {"rails": [dict(_rail("mlx5_0", n))]} for n, h in enumerate(("a", "b"), 1)}
    options = options or {"kind": "bw", "binary": "ib_write_bw"}
    [test] = vplan.plan("main", vplan.all_pairs(["a", "b"])[:1], health, options, {})
    result = {"ok": True, "rows": [{"bytes": 65536, "bw_average_gbps": gbps}]}
    client = {"id": f"{test['id']}/client", "error": None, "result": result}
    client.update(deltas=deltas or {}, **({"saturated": saturated} if saturated else {}))
    server = {"id": f"{test['id']}/server", "error": None, "result": result}
    [record] = vjudge.judge([test], [client, server], 3, options)
    return test, record


def _rail(name, n):
    return {
        "rail": name,
        "device": name,
        "port": 1,
        "link_layer": "Ethernet",
        "address": f"10.0.0.{n}",
        "gid_index": 3,
    }


@pytest.mark.parametrize(
    "name",
    [
        "port_xmit_discards",
        "rx_prio3_buf_discard",
        "rx_prio3_cong_discard",
        "rx_discards_phy",
        "link_down_events_phy",
        "rx_out_of_buffer",
        "out_of_sequence",
        "port_rcv_errors",
    ],
)
def test_a_discard_or_link_down_during_a_test_fails_it_naming_port_and_counter(name):
    test, record = _judged({name: 2})
    assert not record["passed"]
    assert record["error"] == (
        f"client {test['client']} mlx5_0 port 1: {name} +2 during the test (limit 0)"
    )


def test_symbol_and_crc_errors_are_judged_as_a_bit_error_rate():
    # 390 Gb/s for 3 s: 1.17e12 bits; at the default 1e-12 one error is allowed.
    test, record = _judged({"symbol_error": 1, "rx_crc_errors_phy": 1})
    assert record["passed"], record["error"]
    test, record = _judged({"rx_symbol_err_phy": 5})
    assert record["error"] == (
        f"client {test['client']} mlx5_0 port 1: rx_symbol_err_phy +5 during the test "
        "(limit 1: bit error rate 1e-12 of 1.17e+12 bits)"
    )


def test_congestion_signals_are_reported_unless_given_a_limit():
    test, record = _judged({"np_cnp_sent": 40, "rx_prio3_marked": 900, "rx_prio3_pause": 3})
    assert record["passed"] and record["deltas"]["client"]["np_cnp_sent"] == 40
    options = {"kind": "bw", "binary": "ib_write_bw", "counter_limits": {"np_cnp_sent": 10}}
    test, record = _judged({"np_cnp_sent": 40}, options=options)
    assert "np_cnp_sent +40 during the test (limit 10)" in record["error"]


def test_a_saturated_counter_fails_the_test():
    test, record = _judged(saturated=["symbol_error"])
    assert record["error"] == (
        f"client {test['client']} mlx5_0 port 1: symbol_error at max: clear it "
        "(rdma_verify_clear_counters, or perfquery -x -R)"
    )


def test_counter_limits_are_checked_naming_the_variable():
    errors = vplan.option_errors({"counter_limits": {"symbol_error": -1, "x": "many"}}, [])
    assert errors == [
        "rdma_verify_counter_limits: symbol_error must be a count >= 0, 'ber' or null; got -1",
        "rdma_verify_counter_limits: x must be a count >= 0, 'ber' or null; got 'many'",
    ]


def test_saturated_counters_by_their_pma_width(tmp_path):
    # IBA PortCounters widths: SymbolErrorCounter 16 bits, LinkDownedCounter 8,
    # LocalLinkIntegrityErrors 4.
    assert saturated_counters(
        {
            "symbol_error": 65535,
            "link_downed": 255,
            "port_rcv_errors": 3,
            "local_link_integrity_errors": 15,
            "np_cnp_sent": 65535,
        }
    ) == ["link_downed", "local_link_integrity_errors", "symbol_error"]


def _counted_port(**counters):
    return {
        "device": "mlx5_0",
        "port": 1,
        "state": "ACTIVE",
        "phys_state": "LinkUp",
        "link_layer": "InfiniBand",
        "sm_lid": "1",
        "counters": dict(PMA, **counters),
    }


def test_since_boot_counts_fail_only_when_saturated():
    # Nothing clears since-boot counts: the limits apply to deltas during the tests.
    info = {"ports": [_counted_port(port_rcv_errors=4000)], "perftest_version": "6.06"}
    [check] = [c for c in rv.host_health(info, {})["checks"] if c["check"] == "error counters"]
    assert check["ok"] and "port_rcv_errors=4000" in check["detail"]
    info = {"ports": [_counted_port(symbol_error=65535)], "perftest_version": "6.06"}
    [check] = [c for c in rv.host_health(info, {})["checks"] if c["check"] == "error counters"]
    assert not check["ok"]
    assert check["detail"].startswith("symbol_error at max (65535): clear it")
