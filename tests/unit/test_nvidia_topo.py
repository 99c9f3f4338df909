"""nvidia-smi topo -m (module_utils/nvidia_topo.py) and GPUDirect in rdma_verify: the GPU
nearest each NIC goes to that rail's --use_cuda; perftest without CUDA is a named
failure. Fixtures: our own matrices in the layouts nvidia-smi prints (a DGX H100-shaped
node with NIC columns and a NIC Legend; an 8-GPU PCIe server with NICs named in the
columns, as older drivers print them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.module_utils.nvidia_topo import (
    nearest_gpus,
    parse_topo,
)
from fixture_text import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia_smi"
DGX_COMPUTE = {
    "mlx5_0": 0,
    "mlx5_3": 1,
    "mlx5_4": 2,
    "mlx5_5": 3,
    "mlx5_6": 4,
    "mlx5_9": 5,
    "mlx5_10": 6,
    "mlx5_11": 7,
}


def test_dgx_h100_each_compute_nic_gets_its_own_gpu():
    topo = parse_topo(load(FIXTURES, "topo_dgx_h100.txt"))
    assert topo["gpus"] == [f"GPU{i}" for i in range(8)]
    assert len(topo["nics"]) == 12 and topo["nics"]["mlx5_0"]["GPU0"] == "PXB"
    nearest = nearest_gpus(topo, list(DGX_COMPUTE))
    assert {nic: v["gpu"] for nic, v in nearest.items()} == DGX_COMPUTE
    assert {v["link"] for v in nearest.values()} == {"PXB"}
    # A storage NIC has no GPU behind its switch: the nearest is on its own socket.
    assert nearest_gpus(topo, ["mlx5_7"])["mlx5_7"]["link"] == "NODE"
    assert nearest_gpus(topo, ["mlx5_7"])["mlx5_7"]["gpu"] >= 4


def nearest_of(name, gpus):
    topo = parse_topo(load(FIXTURES, name))
    assert topo["gpus"] == [f"GPU{i}" for i in range(gpus)]
    assert sorted(topo["nics"]) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    return {n: (v["gpu"], v["link"]) for n, v in nearest_gpus(topo).items()}


def test_pcie_server_older_layout_spreads_the_gpus_behind_each_switch():
    assert nearest_of("topo_pcie_8gpu.txt", 8) == {
        "mlx5_0": (0, "PIX"),
        "mlx5_1": (2, "PIX"),
        "mlx5_2": (4, "PIX"),
        "mlx5_3": (6, "PIX"),
    }


def test_no_matrix_no_nics():
    assert parse_topo("") == {"gpus": [], "nics": {}}
    assert nearest_gpus(parse_topo("No devices were found")) == {}


def ib_ports(devices):
    return [
        {
            "device": dev,
            "port": 1,
            "state": "ACTIVE",
            "phys_state": "LinkUp",
            "rate_gbps": 400.0,
            "link_layer": "InfiniBand",
            "sm_lid": "0x1",
            "counters": None,
        }
        for dev in devices
    ]


def gpu_host(perftest_cuda=True, mode="auto", nearest=None):
    ports = ib_ports(("mlx5_0", "mlx5_3"))
    gpus = {
        "nvidia_gpus": [{"pci": f"0000:{n}:00.0"} for n in range(8)],
        "nvidia_peermem": True,
        "perftest_cuda": perftest_cuda,
        "nearest": nearest
        if nearest is not None
        else nearest_gpus(parse_topo(load(FIXTURES, "topo_dgx_h100.txt"))),
    }
    info = {"ports": ports, "perftest_version": "6.06", "problems": [], "gpus": gpus}
    return rv.host_health(info, {"gpudirect": mode, "address": "mgmt", "counter_max": {}})


def test_each_rail_uses_the_gpu_nearest_its_nic():
    health = {"a": gpu_host(), "b": gpu_host()}
    tests = vplan.plan("main", vplan.all_pairs(["a", "b"]), health, {"binary": "ib_write_bw"}, {})
    cuda = {
        t["rail"]: [a for a in t["client_test"]["argv"] if a.startswith("--use_cuda")][0]
        for t in tests
    }
    assert cuda == {"mlx5_0": "--use_cuda=0", "mlx5_3": "--use_cuda=1"}
    [check] = [c for c in health["a"]["checks"] if c["check"] == "GPUDirect"]
    assert check["ok"] and "mlx5_0: GPU0 (PXB)" in check["detail"]


def test_perftest_without_cuda_is_a_named_failure_not_a_host_memory_test():
    health = {"a": gpu_host(perftest_cuda=False), "b": gpu_host()}
    [check] = [c for c in health["a"]["checks"] if c["check"] == "GPUDirect"]
    assert not check["ok"] and check["detail"].startswith("perftest was built without CUDA")
    tests = vplan.plan("main", vplan.all_pairs(["a", "b"]), health, {"binary": "ib_write_bw"}, {})
    assert all(not t["runnable"] for t in tests)
    assert "a: mlx5_0: perftest was built without CUDA" in tests[0]["error"]


def test_gpudirect_false_tests_host_memory():
    health = {"a": gpu_host(mode=False), "b": gpu_host(mode="false")}
    tests = vplan.plan("main", vplan.all_pairs(["a", "b"]), health, {"binary": "ib_write_bw"}, {})
    assert all(t["runnable"] for t in tests)
    assert not any("--use_cuda" in " ".join(t["client_test"]["argv"]) for t in tests)
    with pytest.raises(ValueError, match="rdma_verify_gpudirect must be one of"):
        gpu_host(mode="sometimes")


# Real nvidia-smi (R590) underlines the header row with ESC[4m ... ESC[0m
# even through a pipe; before, the first GPU row was taken as the header.
def test_header_wrapped_in_terminal_escapes_is_still_the_header():
    assert nearest_of("topo_escapes_4gpu.txt", 4) == {
        "mlx5_0": (0, "PIX"),
        "mlx5_1": (1, "NODE"),
        "mlx5_2": (2, "PXB"),
        "mlx5_3": (3, "SYS"),
    }


def escape_host(allow_node=None):
    ports = ib_ports([f"mlx5_{n}" for n in range(4)])
    gpus = {
        "nvidia_gpus": [{"pci": f"0000:{n}:00.0"} for n in range(4)],
        "perftest_cuda": True,
        "nearest": nearest_gpus(parse_topo(load(FIXTURES, "topo_escapes_4gpu.txt"))),
    }
    info = {"ports": ports, "perftest_version": "6.06", "problems": [], "gpus": gpus}
    expect = {"gpudirect": "auto", "address": "mgmt", "counter_max": {}}
    if allow_node is not None:
        expect["gpudirect_allow_node"] = allow_node
    return rv.host_health(info, expect)


def test_gpu_affinity_pix_pxb_by_default_node_by_a_variable_sys_never():
    """NVIDIA's ngc_multinode_perf accepts a GPU at PIX or PXB from its NIC only."""
    host = escape_host()
    rails = {r["device"]: r for r in host["rails"]}
    assert (rails["mlx5_0"]["cuda"], rails["mlx5_0"]["cuda_error"]) == (0, None)
    assert (rails["mlx5_2"]["cuda"], rails["mlx5_2"]["cuda_error"]) == (2, None)
    assert rails["mlx5_1"]["cuda"] is None
    assert "GPU1 over NODE" in rails["mlx5_1"]["cuda_error"]
    assert "rdma_verify_gpudirect_allow_node" in rails["mlx5_1"]["cuda_error"]
    assert rails["mlx5_3"]["cuda"] is None and "over SYS" in rails["mlx5_3"]["cuda_error"]
    [check] = [c for c in host["checks"] if c["check"] == "GPUDirect"]
    assert not check["ok"] and "mlx5_3: GPU3 (SYS" in check["detail"]

    host = escape_host(allow_node=True)
    rails = {r["device"]: r for r in host["rails"]}
    assert (rails["mlx5_1"]["cuda"], rails["mlx5_1"]["cuda_error"]) == (1, None)
    assert rails["mlx5_3"]["cuda"] is None and "over SYS" in rails["mlx5_3"]["cuda_error"]


def test_perftest_numbers_gpus_in_pci_order_with_every_gpu_visible():
    """--use_cuda=N takes nvidia-smi's (PCI-order) index: CUDA numbers devices fastest
    first unless CUDA_DEVICE_ORDER=PCI_BUS_ID (as ngc_multinode_perf sets), and an
    inherited CUDA_VISIBLE_DEVICES would renumber them."""
    health = {"a": gpu_host(), "b": gpu_host()}
    tests = vplan.plan("main", vplan.all_pairs(["a", "b"]), health, {"binary": "ib_write_bw"}, {})
    for test in tests:
        for side in ("client_test", "server_test"):
            argv = test[side]["argv"]
            assert argv[:4] == ["env", "-u", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER=PCI_BUS_ID"]
            assert "ib_write_bw" in argv
    health = {"a": gpu_host(mode="false"), "b": gpu_host(mode="false")}
    tests = vplan.plan("main", vplan.all_pairs(["a", "b"]), health, {"binary": "ib_write_bw"}, {})
    assert tests[0]["client_test"]["argv"][0] == "ib_write_bw"
