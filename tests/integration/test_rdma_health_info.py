"""rdma.fabric.rdma_health_info against sysfs trees built by sysfs_tree, and its verdicts.

The module runs in-process (conftest's module_with_tool), its sysfs_root at a
tmp tree; once more through the real `ansible` CLI. It only gathers: the verdicts
(port state, rate, MTUs, RoCE v2 GID, subnet manager, counters, tools) are made from
its result by module_utils.rdma_verify.host_health, which the rdma_verify role runs on
it (tasks/health.yml); each test judges the module's real output with it.

ibv_devinfo and ib_write_bw are stand-ins, not the real tools: Tools returns canned
(rc, stdout, stderr). The ibv_devinfo text follows the printf formats of rdma-core's
libibverbs/examples/devinfo.c (tab-separated); the values are modelled on ConnectX-6 Dx,
ConnectX-7 and Soft-RoCE ports, not captured from this machine (it has no RDMA device).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify as rv
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from ansible_collections.rdma.fabric.plugins.modules import rdma_health_info
from conftest import ROLES_DIR
from sysfs_tree import (
    ZERO_GID,
    Port,
    add_cx6dx_roce,
    add_device,
    add_dual_port_ib,
    add_pci_bus_entry,
    add_rxe,
    build_mixed_host,
    roce_gids,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
ROLE_DEFAULTS = yaml.safe_load(
    (ROLES_DIR / "rdma_verify/defaults/main.yml").read_text(encoding="utf-8")
)

# The interface id of enp27s0f0np0 (MAC 94:6d:ae:c2:b6:90, EUI-64, U/L bit flipped).
CX6DX_IID = "966d:aeff:fec2:b690"
ROCE_IP = "192.0.2.21"
ROCE_GID = "0000:0000:0000:0000:0000:ffff:c000:0215"  # ::ffff:192.0.2.21
LINK_LOCAL = f"fe80:0000:0000:0000:{CX6DX_IID}"

# --- ibv_devinfo as rdma-core prints it ----------------------------------------------

MTU_ENUM = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
STATE_ENUM = {"PORT_DOWN": 1, "PORT_INIT": 2, "PORT_ARMED": 3, "PORT_ACTIVE": 4}


RAIL_KEYS = ("device", "port", "link_layer", "rate_gbps", "gid_index", "address", "active")


def rails_subset(health):
    """The rail fields these tests are about (rails carry more: name, rate, PCI, CPUs)."""
    return [{k: r[k] for k in RAIL_KEYS} for r in health["rails"]]


def devinfo_port(
    number=1, state="PORT_ACTIVE", max_mtu=4096, active_mtu=4096, link_layer="Ethernet", sm_lid=0
):
    return (
        f"\t\tport:\t{number}\n"
        f"\t\t\tstate:\t\t\t{state} ({STATE_ENUM[state]})\n"
        f"\t\t\tmax_mtu:\t\t{max_mtu} ({MTU_ENUM[max_mtu]})\n"
        f"\t\t\tactive_mtu:\t\t{active_mtu} ({MTU_ENUM[active_mtu]})\n"
        f"\t\t\tsm_lid:\t\t\t{sm_lid}\n"
        "\t\t\tport_lid:\t\t0\n"
        "\t\t\tport_lmc:\t\t0x00\n"
        f"\t\t\tlink_layer:\t\t{link_layer}\n"
        "\n"
    )


def devinfo_hca(name, *ports, fw_ver="22.38.1002", node_guid="946d:ae03:00c2:b690"):
    return (
        f"hca_id:\t{name}\n"
        "\ttransport:\t\t\tInfiniBand (0)\n"
        f"\tfw_ver:\t\t\t\t{fw_ver}\n"
        f"\tnode_guid:\t\t\t{node_guid}\n"
        f"\tsys_image_guid:\t\t\t{node_guid}\n"
        "\tvendor_id:\t\t\t0x02c9\n"
        "\tvendor_part_id:\t\t\t4125\n"
        "\thw_ver:\t\t\t\t0x0\n"
        f"\tphys_port_cnt:\t\t\t{len(ports)}\n" + "".join(ports or [devinfo_port()])
    )


class Tools:
    """Stand-ins for ibv_devinfo and ib_write_bw: (rc, stdout, stderr) per command.

    None for a command: not installed (get_bin_path finds nothing). perftest prints
    its version on stdout and exits 1 (FACTS.md: -h and -V return 1).
    """

    def __init__(self):
        self.outputs = {"ibv_devinfo": (0, "", ""), "ib_write_bw": (1, "Version: 6.15\n", "")}
        self.calls = []

    @property
    def tool(self):
        """The commands installed (conftest's module_with_tool asks)."""
        return [name for name, output in self.outputs.items() if output is not None]

    def run(self, argv):
        self.calls.append(list(argv))
        return self.outputs[os.path.basename(argv[0])]

    def devinfo(self, *hcas, rc=0, err=""):
        self.outputs["ibv_devinfo"] = (rc, "".join(hcas), err)


@pytest.fixture
def tools():
    return Tools()


@pytest.fixture
def run(module_with_tool, tmp_path, tools):
    """run(check_mode=False, **args): the module in-process, sysfs_root=tmp_path."""
    return module_with_tool(rdma_health_info, tools, sysfs_root=str(tmp_path))


# --- the verdicts, as the rdma_verify role makes them ------------------------------

EXPECT = {
    "devices": [],
    "link_layer": "",
    "device_count": 0,
    "rate_gbps": 0,
    "active_mtu": 0,
    "counter_max": ROLE_DEFAULTS["rdma_verify_error_counter_max"],
    "address": "mgmt",
}


def judge(result, **expect):
    """host_health of the module's result: (health, {(check, device): detail} of failures).

    expect: the role's expectations, typed as tasks/health.yml passes them (floats for
    rates, ints for MTUs).
    """
    health = rv.host_health(result, {**EXPECT, **expect})
    failing = [((c["check"], c["device"]), c["detail"]) for c in health["checks"] if not c["ok"]]
    failures = dict(failing)
    assert len(failures) == len(failing), f"two failures under one key: {failing}"
    return health, failures


def detail(health, check, device=None):
    [found] = [c for c in health["checks"] if c["check"] == check and c["device"] == device]
    return found["ok"], found["detail"]


def healthy_cx6dx(root, **over):
    """mlx5_1: CX-6 Dx port 1, ACTIVE, 100G, 192.0.2.21 on enp27s0f0np0 (MTU 9000)."""
    kwargs = {
        "gids": roce_gids(CX6DX_IID, ROCE_IP),
        "mtu": 9000,
        "counters": {"symbol_error": 0, "link_downed": 0, "port_rcv_errors": 0},
    }
    add_cx6dx_roce(root, "mlx5_1", "0000:1b:00.0", "enp27s0f0np0", **{**kwargs, **over})


def gid(index, gid_text, kind, ipv4, netdev="enp27s0f0np0"):
    return {"index": index, "gid": gid_text, "type": kind, "netdev": netdev, "ipv4": ipv4}


# --- a healthy RoCE port ------------------------------------------------------------


def test_healthy_roce_port(run, tools, tmp_path):
    healthy_cx6dx(tmp_path)
    tools.devinfo(devinfo_hca("mlx5_1", devinfo_port(active_mtu=4096)))
    result = run()

    assert result["changed"] is False
    assert result["problems"] == []
    assert result["perftest_version"] == "6.15"
    assert tools.calls == [
        ["/usr/bin/ibv_devinfo"],
        ["/usr/bin/ib_write_bw", "--version"],
        ["/usr/bin/ib_write_bw", "--help"],  # --use_cuda listed: built with CUDA
    ]
    assert result["ports"] == [
        {
            "device": "mlx5_1",
            "port": 1,
            "state": "ACTIVE",
            "state_num": 4,
            "phys_state": "LinkUp",
            "phys_state_num": 5,
            "rate": "100 Gb/sec (2X HDR)",
            "rate_gbps": 100.0,
            "link_layer": "Ethernet",
            "lid": "0x0",
            "sm_lid": "0x0",
            "netdev": "enp27s0f0np0",
            "netdev_mtu": 9000,
            "active_mtu": 4096,
            "max_mtu": 4096,
            "gids": [
                gid(0, LINK_LOCAL, "IB/RoCE v1", None),
                gid(1, LINK_LOCAL, "RoCE v2", None),
                gid(2, ROCE_GID, "IB/RoCE v1", ROCE_IP),
                gid(3, ROCE_GID, "RoCE v2", ROCE_IP),
            ],
            "roce_v2_gid": gid(3, ROCE_GID, "RoCE v2", ROCE_IP),
            "counters": {"link_downed": 0, "port_rcv_errors": 0, "symbol_error": 0},
        }
    ]

    health, failures = judge(result, rate_gbps=100.0, active_mtu=4096)
    assert failures == {}
    assert [c["check"] for c in health["checks"]] == [
        "devices",
        "port state",
        "rate",
        "active MTU",
        "netdev MTU",
        "RoCE v2 GID",
        "error counters",
        "perftest",
    ]
    assert detail(health, "netdev MTU", "mlx5_1") == (
        True,
        "enp27s0f0np0 MTU 9000 (RoCE needs >= 4192)",
    )
    assert detail(health, "RoCE v2 GID", "mlx5_1") == (True, "index 3 (192.0.2.21)")
    assert rails_subset(health) == [
        {
            "device": "mlx5_1",
            "port": 1,
            "link_layer": "Ethernet",
            "rate_gbps": 100.0,
            "gid_index": 3,
            "address": ROCE_IP,
            "active": True,
        }
    ]


def test_check_mode_runs_and_reads_the_same(run, tools, tmp_path):
    healthy_cx6dx(tmp_path)
    tools.devinfo(devinfo_hca("mlx5_1"))
    normal = run()
    checked = run(check_mode=True)
    assert not checked.get("skipped")
    assert checked["changed"] is False
    assert checked["ports"] == normal["ports"]
    assert checked["ports"][0]["roce_v2_gid"]["index"] == 3


# --- port state -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "phys_state", "devinfo_state", "seen"),
    [
        ("1: DOWN", "3: Disabled", "PORT_DOWN", ("DOWN", 1, "Disabled", 3)),  # ip link set down
        ("1: DOWN", "2: Polling", "PORT_DOWN", ("DOWN", 1, "Polling", 2)),  # no cable/peer
        ("2: INIT", "5: LinkUp", "PORT_INIT", ("INIT", 2, "LinkUp", 5)),
    ],
    ids=["disabled", "polling", "init"],
)
def test_port_not_active(run, tools, tmp_path, state, phys_state, devinfo_state, seen):
    port = Port(
        state=state,
        phys_state=phys_state,
        rate="40 Gb/sec (4X QDR)",  # what mlx5 reports on a port without link
        link_layer="Ethernet",
        gid_ndevs={0: "enp27s0f0np0"},
    )
    add_device(tmp_path, "mlx5_1", {1: port}, pci="0000:1b:00.0", netdevs={"enp27s0f0np0": 0})
    tools.devinfo(devinfo_hca("mlx5_1", devinfo_port(state=devinfo_state, active_mtu=1024)))
    result = run()
    [p] = result["ports"]
    assert (p["state"], p["state_num"], p["phys_state"], p["phys_state_num"]) == seen
    assert (p["rate_gbps"], p["active_mtu"], p["netdev_mtu"]) == (40.0, 1024, None)
    assert (p["gids"], p["roce_v2_gid"], p["counters"]) == ([], None, None)

    health, failures = judge(result, rate_gbps=100.0)
    assert failures == {
        ("port state", "mlx5_1"): f"{seen[0]}/{seen[2]}",
        ("rate", "mlx5_1"): "40.0 Gb/s (expected 100.0)",
        # No mtu file in this tree: an unknown MTU fails, it does not pass.
        ("netdev MTU", "mlx5_1"): "enp27s0f0np0 MTU None (RoCE needs >= 1120)",
        ("RoCE v2 GID", "mlx5_1"): "no RoCE v2 IPv4 GID",
    }
    assert health["rails"][0]["active"] is False
    assert health["rails"][0]["address"] is None


def test_cx6dx_link_down(run, tools, tmp_path):
    # The canned down port of sysfs_tree (mlx5_2 of the mixed host), its GIDs gone.
    add_cx6dx_roce(tmp_path, "mlx5_2", "0000:1b:00.1", "enp27s0f1np1", up=False, mtu=9000)
    tools.devinfo(devinfo_hca("mlx5_2", devinfo_port(state="PORT_DOWN", active_mtu=1024)))
    result = run()
    [p] = result["ports"]
    assert (p["device"], p["state"], p["phys_state"], p["netdev"], p["netdev_mtu"]) == (
        "mlx5_2",
        "DOWN",
        "Disabled",
        "enp27s0f1np1",
        9000,
    )
    _, failures = judge(result)
    assert failures == {
        ("port state", "mlx5_2"): "DOWN/Disabled",
        ("RoCE v2 GID", "mlx5_2"): "no RoCE v2 IPv4 GID",
    }


def test_infiniband_port_without_subnet_manager(run, tools, tmp_path):
    # A CX-7 NDR port with link but no SM: INIT/LinkUp, SM LID 0, no LID.
    port = Port(
        state="2: INIT",
        phys_state="5: LinkUp",
        rate="400 Gb/sec (4X NDR)",
        link_layer="InfiniBand",
        lid="0xffff",
        sm_lid="0x0",
        gid_ndev_unreadable=True,
    )
    add_device(tmp_path, "mlx5_0", {1: port}, pci="0000:1a:00.0", netdevs={"ibp26s0": 0}, mtu=4092)
    tools.devinfo(devinfo_hca("mlx5_0", devinfo_port(state="PORT_INIT", link_layer="InfiniBand")))
    result = run()
    [p] = result["ports"]
    assert (p["link_layer"], p["netdev"], p["netdev_mtu"]) == ("InfiniBand", "ibp26s0", 4092)
    assert (p["lid"], p["sm_lid"], p["rate_gbps"]) == ("0xffff", "0x0", 400.0)
    assert (p["gids"], p["roce_v2_gid"]) == ([], None)
    assert (p["active_mtu"], p["max_mtu"]) == (4096, 4096)

    health, failures = judge(result)
    assert failures == {
        ("port state", "mlx5_0"): "INIT/LinkUp",
        ("subnet manager", "mlx5_0"): "SM LID 0x0",
    }
    # No RoCE checks on an InfiniBand port; its peers reach it at the inventory address.
    assert {c["check"] for c in health["checks"]} == {
        "devices",
        "port state",
        "subnet manager",
        "error counters",
        "perftest",
    }
    assert health["rails"][0]["address"] == "mgmt"
    assert health["rails"][0]["gid_index"] is None


# --- the RoCE v2 GID ---------------------------------------------------------------------

V4_2 = "0000:0000:0000:0000:0000:ffff:c633:6415"  # ::ffff:198.51.100.21


@pytest.mark.parametrize(
    ("gids", "indexes", "want"),
    [
        (roce_gids(CX6DX_IID, ROCE_IP), [0, 1, 2, 3], gid(3, ROCE_GID, "RoCE v2", ROCE_IP)),
        # No IPv4 address on the netdev: only the link-local pair.
        (roce_gids(CX6DX_IID), [0, 1], None),
        # The address only as a RoCE v1 GID (v2 disabled): not usable for RoCE v2.
        (
            {0: (LINK_LOCAL, "IB/RoCE v1"), 2: (ROCE_GID, "IB/RoCE v1")},
            [0, 2],
            None,
        ),
        # Empty GID table (netdev never came up).
        (None, [], None),
        # The address removed and added again: its old entries are zero (their types do
        # not read), the new pair sits at 4 and 5. Never assume index 3.
        (
            {
                **roce_gids(CX6DX_IID),
                2: (ZERO_GID, None),
                3: (ZERO_GID, None),
                4: (ROCE_GID, "IB/RoCE v1"),
                5: (ROCE_GID, "RoCE v2"),
            },
            [0, 1, 4, 5],
            gid(5, ROCE_GID, "RoCE v2", ROCE_IP),
        ),
        # Two addresses: the first RoCE v2 IPv4 GID wins.
        (
            {
                **roce_gids(CX6DX_IID, ROCE_IP),
                4: (V4_2, "IB/RoCE v1"),
                5: (V4_2, "RoCE v2"),
            },
            [0, 1, 2, 3, 4, 5],
            gid(3, ROCE_GID, "RoCE v2", ROCE_IP),
        ),
    ],
    ids=["v2-ipv4", "link-local-only", "v1-only", "empty", "re-added", "two-addresses"],
)
def test_roce_v2_gid(run, tools, tmp_path, gids, indexes, want):
    healthy_cx6dx(tmp_path, gids=gids)
    tools.devinfo(devinfo_hca("mlx5_1"))
    result = run()
    [p] = result["ports"]
    assert [g["index"] for g in p["gids"]] == indexes
    assert p["roce_v2_gid"] == want

    health, failures = judge(result)
    if want:
        assert failures == {}
        assert detail(health, "RoCE v2 GID", "mlx5_1") == (
            True,
            f"index {want['index']} ({want['ipv4']})",
        )
        assert (health["rails"][0]["gid_index"], health["rails"][0]["address"]) == (
            want["index"],
            ROCE_IP,
        )
    else:
        assert failures == {("RoCE v2 GID", "mlx5_1"): "no RoCE v2 IPv4 GID"}
        assert health["rails"][0]["address"] is None


# --- rate, MTU, link layer -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "gbps", "verdict"),
    [
        ("100 Gb/sec (2X HDR)", 100.0, None),
        # A 100G port that came up on one 25G lane.
        ("25 Gb/sec (1X EDR)", 25.0, "25.0 Gb/s (expected 100.0)"),
        # rate unreadable (the kernel fails the read on an invalid width).
        (None, None, "0 Gb/s (expected 100.0)"),
    ],
    ids=["line-rate", "one-lane", "unreadable"],
)
def test_rate(run, tools, tmp_path, rate, gbps, verdict):
    port = Port(
        rate=rate,
        link_layer="Ethernet",
        gid_ndevs={0: "enp27s0f0np0"},
        gids=roce_gids(CX6DX_IID, ROCE_IP),
    )
    add_device(
        tmp_path, "mlx5_1", {1: port}, pci="0000:1b:00.0", netdevs={"enp27s0f0np0": 0}, mtu=9000
    )
    tools.devinfo(devinfo_hca("mlx5_1"))
    result = run()
    [p] = result["ports"]
    assert (p["rate"], p["rate_gbps"]) == (rate, gbps)
    _, failures = judge(result, rate_gbps=100.0)
    assert failures == ({("rate", "mlx5_1"): verdict} if verdict else {})


@pytest.mark.parametrize(
    ("netdev_mtu", "active_mtu", "expect_mtu", "failures"),
    [
        (9000, 4096, 4096, {}),
        # Jumbo RoCE MTU on a 1500-byte netdev: 4096 + 96 header bytes do not fit.
        (
            1500,
            4096,
            0,
            {("netdev MTU", "mlx5_1"): "enp27s0f0np0 MTU 1500 (RoCE needs >= 4192)"},
        ),
        # The port negotiated 1024 where the fabric expects 4096.
        (
            1500,
            1024,
            4096,
            {
                ("active MTU", "mlx5_1"): "1024 (expected 4096)",
                ("netdev MTU", "mlx5_1"): "enp27s0f0np0 MTU 1500 (RoCE needs >= 4192)",
            },
        ),
        (4200, 1024, 1024, {}),
    ],
    ids=["jumbo", "netdev-too-small", "active-too-small", "rxe-like"],
)
def test_mtu(run, tools, tmp_path, netdev_mtu, active_mtu, expect_mtu, failures):
    healthy_cx6dx(tmp_path, mtu=netdev_mtu)
    tools.devinfo(devinfo_hca("mlx5_1", devinfo_port(active_mtu=active_mtu)))
    result = run()
    [p] = result["ports"]
    assert (p["netdev_mtu"], p["active_mtu"], p["max_mtu"]) == (netdev_mtu, active_mtu, 4096)
    assert judge(result, active_mtu=expect_mtu)[1] == failures


def test_mixed_host_by_link_layer(run, tools, tmp_path):
    # CX-7 IB rails mlx5_0/mlx5_10, CX-6 Dx mlx5_1 (up) and mlx5_2 (down), one rxe.
    build_mixed_host(tmp_path)
    add_rxe(tmp_path, "rxe0", "ens4", ipv4="192.0.2.11", mtu=1500)
    ib = devinfo_port(link_layer="InfiniBand", sm_lid=334)
    tools.devinfo(
        devinfo_hca("mlx5_0", ib, fw_ver="28.39.1002"),
        devinfo_hca("mlx5_1"),
        devinfo_hca("mlx5_2", devinfo_port(state="PORT_DOWN", active_mtu=1024)),
        devinfo_hca("mlx5_10", ib, fw_ver="28.39.1002"),
        devinfo_hca("rxe0", devinfo_port(active_mtu=1024), fw_ver="0.0.0"),
    )
    result = run()
    rows = [
        (
            p["device"],
            p["link_layer"],
            p["state"],
            p["rate_gbps"],
            p["netdev"],
            p["netdev_mtu"],
            p["active_mtu"],
            p["sm_lid"],
            (p["roce_v2_gid"] or {}).get("ipv4"),
        )
        for p in result["ports"]
    ]
    assert rows == [
        ("mlx5_0", "InfiniBand", "ACTIVE", 400.0, "ibp26s0", 4092, 4096, "0x14e", None),
        ("mlx5_1", "Ethernet", "ACTIVE", 100.0, "enp27s0f0np0", 1500, 4096, "0x0", None),
        ("mlx5_10", "InfiniBand", "ACTIVE", 400.0, "ibp204s0", None, 4096, "0x14e", None),
        ("mlx5_2", "Ethernet", "DOWN", 40.0, "enp27s0f1np1", 1500, 1024, "0x0", None),
        ("rxe0", "Ethernet", "ACTIVE", 2.5, "ens4", 1500, 1024, "0x0", "192.0.2.11"),
    ]

    health, failures = judge(result, link_layer="InfiniBand")
    assert failures == {}
    assert [(r["device"], r["address"]) for r in health["rails"]] == [
        ("mlx5_0", "mgmt"),
        ("mlx5_10", "mgmt"),
    ]
    assert detail(health, "subnet manager", "mlx5_10") == (True, "SM LID 0x14e")
    assert detail(health, "devices") == (True, "found: mlx5_0, mlx5_10")

    health, failures = judge(result, link_layer="Ethernet", device_count=3)
    # The canned CX-6 Dx ports have no IPv4 address (no GIDs) and run 4096 on 1500.
    assert failures == {
        ("netdev MTU", "mlx5_1"): "enp27s0f0np0 MTU 1500 (RoCE needs >= 4192)",
        ("RoCE v2 GID", "mlx5_1"): "no RoCE v2 IPv4 GID",
        ("port state", "mlx5_2"): "DOWN/Disabled",
        ("RoCE v2 GID", "mlx5_2"): "no RoCE v2 IPv4 GID",
    }
    assert detail(health, "devices") == (True, "3 of 3 (mlx5_1, mlx5_2, rxe0)")
    assert [(r["device"], r["address"], r["active"]) for r in health["rails"]] == [
        ("mlx5_1", None, True),
        ("mlx5_2", None, False),
        ("rxe0", "192.0.2.11", True),
    ]


def test_dual_port_device_mtus_by_port(run, tools, tmp_path):
    add_dual_port_ib(tmp_path)
    tools.devinfo(
        devinfo_hca(
            "mlx4_0",
            devinfo_port(1, link_layer="InfiniBand", sm_lid=1),
            devinfo_port(2, link_layer="InfiniBand", sm_lid=1, active_mtu=2048),
            fw_ver="2.42.5000",
        )
    )
    result = run()
    assert [(p["device"], p["port"], p["netdev"], p["active_mtu"]) for p in result["ports"]] == [
        ("mlx4_0", 1, "ibp5s0", 4096),
        ("mlx4_0", 2, "ibp5s0d1", 2048),
    ]
    _, failures = judge(result, active_mtu=4096)
    assert failures == {("active MTU", "mlx4_0"): "2048 (expected 4096)"}


# --- Soft-RoCE ---------------------------------------------------------------------------------

RXE_GID = "0000:0000:0000:0000:0000:ffff:c000:020b"  # ::ffff:192.0.2.11


def test_soft_roce(run, tools, tmp_path):
    # The lab: rxe0 on ens4 (virtio-net, MTU 1500): active MTU 1024, rate 1X SDR.
    add_rxe(tmp_path, "rxe0", "ens4", ipv4="192.0.2.11", mtu=1500)
    tools.devinfo(devinfo_hca("rxe0", devinfo_port(active_mtu=1024), fw_ver="0.0.0"))
    result = run()
    assert result["problems"] == []
    [p] = result["ports"]
    assert {k: v for k, v in p.items() if k != "gids"} == {
        "device": "rxe0",
        "port": 1,
        "state": "ACTIVE",
        "state_num": 4,
        "phys_state": "LinkUp",
        "phys_state_num": 5,
        "rate": "2.5 Gb/sec (1X SDR)",
        "rate_gbps": 2.5,
        "link_layer": "Ethernet",
        "lid": "0x0",
        "sm_lid": "0x0",
        "netdev": "ens4",
        "netdev_mtu": 1500,
        "active_mtu": 1024,
        "max_mtu": 4096,
        "roce_v2_gid": gid(3, RXE_GID, "RoCE v2", "192.0.2.11", netdev="ens4"),
        # rxe has no PMA counters directory.
        "counters": None,
    }
    assert [(g["index"], g["type"]) for g in p["gids"]] == [
        (0, "IB/RoCE v1"),
        (1, "RoCE v2"),
        (2, "IB/RoCE v1"),
        (3, "RoCE v2"),
    ]

    health, failures = judge(result, active_mtu=1024)
    assert failures == {}
    assert detail(health, "error counters", "rxe0") == (True, "no port counters exposed")
    assert detail(health, "netdev MTU", "rxe0") == (True, "ens4 MTU 1500 (RoCE needs >= 1120)")
    assert rails_subset(health) == [
        {
            "device": "rxe0",
            "port": 1,
            "link_layer": "Ethernet",
            "rate_gbps": 2.5,
            "gid_index": 3,
            "address": "192.0.2.11",
            "active": True,
        }
    ]


def test_soft_roce_parent_down(run, tools, tmp_path):
    # `ip link set ens4 down`: rxe follows its parent; the kernel drops the GIDs.
    add_rxe(tmp_path, "rxe0", "ens4", mtu=1500, state="1: DOWN", phys_state="3: Disabled")
    tools.devinfo(
        devinfo_hca("rxe0", devinfo_port(state="PORT_DOWN", active_mtu=1024), fw_ver="0.0.0")
    )
    result = run()
    [p] = result["ports"]
    assert (p["state"], p["phys_state"], p["netdev"], p["roce_v2_gid"]) == (
        "DOWN",
        "Disabled",
        "ens4",
        None,
    )
    _, failures = judge(result)
    assert failures == {
        ("port state", "rxe0"): "DOWN/Disabled",
        ("RoCE v2 GID", "rxe0"): "no RoCE v2 IPv4 GID",
    }


def test_soft_roce_without_its_verbs_provider(run, tools, tmp_path):
    # The kernel has rxe0 but libibverbs cannot load the rxe provider: ibv_devinfo sees
    # no device and says so in two stderr lines. sysfs still lists the port.
    add_rxe(tmp_path, "rxe0", "ens4", ipv4="192.0.2.11", mtu=1500)
    tools.devinfo(
        rc=255,
        err=(
            "libibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': "
            "librxe-rdmav34.so: cannot open shared object file: No such file or directory\n"
            "No IB devices found\n"
        ),
    )
    result = run()
    [p] = result["ports"]
    assert (p["device"], p["active_mtu"], p["max_mtu"]) == ("rxe0", None, None)
    # One line per problem (RETURN says so; the report puts it in a table row).
    assert result["problems"] == [
        "ibv_devinfo failed (rc 255): libibverbs: Warning: couldn't load driver "
        "'librxe-rdmav34.so': librxe-rdmav34.so: cannot open shared object file: "
        "No such file or directory; No IB devices found"
    ]
    _, failures = judge(result, active_mtu=1024)
    assert failures == {
        ("tools", None): result["problems"][0],
        ("active MTU", "rxe0"): "None (expected 1024)",
    }


# --- counters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counters", "read", "verdict"),
    [
        (
            {
                "symbol_error": 3,
                "link_downed": 1,
                "port_rcv_errors": 12,
                "port_xmit_data": 18446744073709551615,
                "port_xmit_discards": 0,
                # A counter whose read fails (EINVAL on some ports): left out.
                "VL15_dropped": None,
            },
            {
                "link_downed": 1,
                "port_rcv_errors": 12,
                "port_xmit_data": 18446744073709551615,
                "port_xmit_discards": 0,
                "symbol_error": 3,
            },
            (False, "over the limit: port_rcv_errors=12"),
        ),
        (
            {"symbol_error": 11, "link_error_recovery": 10, "port_xmit_discards": 999},
            {"link_error_recovery": 10, "port_xmit_discards": 999, "symbol_error": 11},
            # At the limit passes; a counter without a limit never fails.
            (False, "over the limit: symbol_error=11"),
        ),
        ({}, {}, (True, "under the limits")),
    ],
    ids=["rcv-errors", "symbol-errors", "empty"],
)
def test_counters(run, tools, tmp_path, counters, read, verdict):
    healthy_cx6dx(tmp_path, counters=counters)
    tools.devinfo(devinfo_hca("mlx5_1"))
    result = run()
    [p] = result["ports"]
    assert p["counters"] == read
    health, failures = judge(result, counter_max=SINCE_BOOT_LIMITS)
    assert detail(health, "error counters", "mlx5_1") == verdict
    assert set(failures) == ({("error counters", "mlx5_1")} if not verdict[0] else set())


# Since-boot limits a site may set (rdma_verify_error_counter_max); none by default.
SINCE_BOOT_LIMITS = dict.fromkeys(
    (
        "symbol_error",
        "link_error_recovery",
        "link_downed",
        "port_rcv_errors",
        "port_rcv_remote_physical_errors",
        "local_link_integrity_errors",
        "excessive_buffer_overrun_errors",
    ),
    10,
)


def test_since_boot_counts_are_reported_not_judged_by_default(run, tools, tmp_path):
    """Nothing clears since-boot counts: by default they are shown, never a failure (the
    tests judge their increase); a saturated counter still fails."""
    assert ROLE_DEFAULTS["rdma_verify_error_counter_max"] == {}
    healthy_cx6dx(tmp_path, counters={"symbol_error": 11, "port_rcv_errors": 12})
    tools.devinfo(devinfo_hca("mlx5_1"))
    health, failures = judge(run())
    assert detail(health, "error counters", "mlx5_1") == (
        True,
        "since boot: port_rcv_errors=12, symbol_error=11",
    )
    assert not failures


# --- no device, no tools -------------------------------------------------------------------


@pytest.mark.parametrize("make_sys", [True, False], ids=["sys-without-infiniband", "no-sys"])
def test_no_rdma_device(run, tools, tmp_path, make_sys):
    if make_sys:
        (tmp_path / "sys" / "class" / "net" / "eth0").mkdir(parents=True)
    # rdma-core's ibv_devinfo with no device: this line on stderr, exit -1.
    tools.devinfo(rc=255, err="No IB devices found\n")
    result = run()
    assert result["ports"] == []
    assert result["problems"] == ["ibv_devinfo failed (rc 255): No IB devices found"]
    assert result["perftest_version"] == "6.15"

    health, failures = judge(result)
    assert failures == {
        ("devices", None): "found: none",
        ("tools", None): "ibv_devinfo failed (rc 255): No IB devices found",
    }
    assert health["rails"] == []
    _, failures = judge(result, device_count=2)
    assert failures[("devices", None)] == "0 of 2 (none)"


def test_ibv_devinfo_failing_silently_is_still_a_problem(run, tools, tmp_path):
    tools.devinfo(rc=1)
    assert run()["problems"] == ["ibv_devinfo failed (rc 1): no output"]


def test_tools_not_installed(run, tools, tmp_path):
    healthy_cx6dx(tmp_path)
    tools.outputs = {"ibv_devinfo": None, "ib_write_bw": None}
    result = run()
    assert tools.calls == []
    assert result["problems"] == [
        "ibv_devinfo not found (libibverbs-utils / rdma-core)",
        "ib_write_bw not found (perftest)",
    ]
    assert result["perftest_version"] is None
    [p] = result["ports"]
    # sysfs still answers; the MTUs from ibv_devinfo are unknown.
    assert (p["state"], p["netdev_mtu"], p["active_mtu"], p["max_mtu"]) == (
        "ACTIVE",
        9000,
        None,
        None,
    )
    assert p["roce_v2_gid"]["ipv4"] == ROCE_IP

    health = rv.host_health(result, EXPECT)
    assert [(c["check"], c["detail"]) for c in health["checks"] if not c["ok"]] == [
        ("tools", "ibv_devinfo not found (libibverbs-utils / rdma-core)"),
        ("tools", "ib_write_bw not found (perftest)"),
        ("perftest", "not found"),
    ]


def test_ibv_devinfo_partial_output_is_used(run, tools, tmp_path):
    # One device fails to answer (devinfo.c stops at "Failed to query port", rc 1);
    # the module takes what was printed and, as it does on purpose, does not add a
    # problem line when there is output to use.
    healthy_cx6dx(tmp_path)
    add_cx6dx_roce(tmp_path, "mlx5_2", "0000:1b:00.1", "enp27s0f1np1")
    # mlx5_2's header is printed, then the port query fails: no port lines for it.
    mlx5_2_header = devinfo_hca("mlx5_2").split("\t\tport:")[0]
    tools.devinfo(
        devinfo_hca("mlx5_1", devinfo_port(active_mtu=4096)),
        mlx5_2_header,
        rc=1,
        err="Failed to query port 1 props\n",
    )
    result = run()
    assert [(p["device"], p["active_mtu"]) for p in result["ports"]] == [
        ("mlx5_1", 4096),
        ("mlx5_2", None),
    ]
    assert result["problems"] == []
    _, failures = judge(result, active_mtu=4096, devices=["mlx5_1"])
    assert failures == {}


def test_perftest_version_from_stdout_or_stderr(run, tools, tmp_path):
    tools.outputs["ib_write_bw"] = (1, "", "Version: 4.5\n")
    assert run()["perftest_version"] == "4.5"
    tools.outputs["ib_write_bw"] = (1, "Usage: ib_write_bw [options]\n", "")
    result = run()
    assert result["perftest_version"] is None
    assert result["problems"] == []
    assert judge(result)[1][("perftest", None)] == "not found"


# --- bad input ------------------------------------------------------------------------------


def test_unknown_option_fails_naming_it(run, tools, tmp_path):
    result = run(sysfs_rot="/")
    assert result["failed"] is True
    assert "Unsupported parameters" in result["msg"]
    assert "sysfs_rot" in result["msg"]
    assert "Supported parameters include: sysfs_root" in result["msg"]
    assert tools.calls == []


def test_wanted_device_that_does_not_exist_is_named(run, tools, tmp_path):
    # rdma_verify_devices names a device this host lacks: the devices check fails and
    # names it, also when another wanted device is there.
    healthy_cx6dx(tmp_path)
    tools.devinfo(devinfo_hca("mlx5_1"))
    result = run()
    health, failures = judge(result, devices=["mlx5_1", "mlx5_9"])
    assert failures == {("devices", None): "found: mlx5_1; not found: mlx5_9"}
    assert [r["device"] for r in health["rails"]] == ["mlx5_1"]

    _, failures = judge(result, devices=["mlx5_9"])
    assert failures == {("devices", None): "found: none; not found: mlx5_9"}

    _, failures = judge(result, devices=["mlx5_9"], device_count=1)
    assert failures == {("devices", None): "0 of 1 (none); not found: mlx5_9"}

    # A wanted device of the other link layer is not tested either: named as such.
    _, failures = judge(result, devices=["mlx5_1"], link_layer="InfiniBand")
    assert failures == {("devices", None): "found: none; not found: mlx5_1 (not InfiniBand)"}


# --- through Ansible, and the documented return values -----------------------------------


def test_ad_hoc_run_matches_in_process(run, run_module_on_localhost, tools, tmp_path):
    root = tmp_path / "root"
    add_rxe(root, "rxe0", "ens4", ipv4="192.0.2.11", mtu=1500)
    devinfo = devinfo_hca("rxe0", devinfo_port(active_mtu=1024), fw_ver="0.0.0")
    tools.devinfo(devinfo)
    in_process = run(sysfs_root=str(root))

    # The same stand-in outputs as commands first on PATH.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "ibv_devinfo.out").write_text(devinfo, encoding="utf-8")
    (bindir / "ibv_devinfo").write_text('#!/bin/sh\ncat "$0.out"\n', encoding="utf-8")
    (bindir / "ib_write_bw").write_text('#!/bin/sh\necho "Version: 6.15"\nexit 1\n')
    for tool in ("ibv_devinfo", "ib_write_bw"):
        (bindir / tool).chmod(0o755)
    env = {"PATH": f"{bindir}:{os.environ['PATH']}"}
    proc, result = run_module_on_localhost(
        "rdma.fabric.rdma_health_info", f"sysfs_root={root}", "--check", env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["action"] == "rdma.fabric.rdma_health_info"
    assert not result.get("skipped"), "the module must run in check mode"
    assert result["changed"] is False
    assert result["problems"] == []
    assert result["perftest_version"] == "6.15"
    assert result["ports"] == in_process["ports"]
    assert result["ports"][0]["roce_v2_gid"]["ipv4"] == "192.0.2.11"


def test_documented_return_values_are_returned(run, tools, tmp_path):
    add_rxe(tmp_path, "rxe0", "ens4", ipv4="192.0.2.11", mtu=1500)
    tools.devinfo(devinfo_hca("rxe0", devinfo_port(active_mtu=1024), fw_ver="0.0.0"))
    result = run()
    doc = yaml.safe_load(rdma_health_info.RETURN)
    assert set(doc) == set(result) - {"changed", "invocation"}
    [sample] = doc["ports"]["sample"]
    [port] = result["ports"]
    assert set(sample) <= set(port), set(sample) - set(port)
    assert set(sample["roce_v2_gid"]) <= set(port["roce_v2_gid"])


def test_numactl_and_the_numa_node_come_from_the_host(run, tools, tmp_path):
    """Whether numactl is installed is the host's answer (get_bin_path there), never
    run; with the HCA's numa_node it decides how rdma_verify binds its perftests."""
    healthy_cx6dx(tmp_path)
    (add_pci_bus_entry(tmp_path, "0000:1b:00.0") / "numa_node").write_text("1\n")
    tools.devinfo(devinfo_hca("mlx5_1", devinfo_port(active_mtu=4096)))
    result = run()
    assert result["numactl"] is None
    [device] = result["devices"]
    assert device["numa_node"] == 1
    [rail] = rv.host_health(result, EXPECT)["rails"]
    assert (rail["numa_node"], rail["numactl"]) == (1, False)

    tools.outputs["numactl"] = (0, "", "")
    result = run()
    assert result["numactl"] == "/usr/bin/numactl"
    assert not [call for call in tools.calls if "numactl" in call[0]]
    [rail] = rv.host_health(result, EXPECT)["rails"]
    assert (rail["numa_node"], rail["numactl"]) == (1, True)
    assert vplan.pin_argv(rail) == ["numactl", "--cpunodebind=1", "--membind=1"]
