"""module_utils/sm_check.py: what a port lacks from an SM that runs elsewhere.

sminfo and saquery outputs are shaped like the captured ones in the shared reference
(ib_sminfo_01_variants, the saquery record format of saquery.c).
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import normalize_partitions
from ansible_collections.rdma.fabric.plugins.module_utils.sm_check import ports_problems

MASTER = (
    "sminfo: sm lid 1 sm guid 0x2c90000001011, activity count 812 priority 15 "
    "state 3 SMINFO_MASTER\n"
)
STANDBY = (
    "sminfo: sm lid 1 sm guid 0x2c90000001011, activity count 812 priority 15 "
    "state 2 SMINFO_STANDBY\n"
)
PORT = {"ca": "mlx5_0", "port": 1, "port_guid": "0x0002c90000001021", "lid": 3, "state": "Active"}


def pktr(*pkeys):
    row = " ".join(f"0x{p:04x}" for p in [*pkeys, 0, 0, 0, 0, 0, 0, 0, 0][:8])
    return (
        "PKeyTableRecord dump:\n\t\tLID........................3\n"
        "\t\tPort.......................1\n\t\tBlock......................0\n"
        f"\t\tPKey Table:\n\t\t{row}\n"
    )


PARTITIONS = normalize_partitions(
    [
        {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
        {"name": "compute", "pkey": 0x20, "members": ["ALL_CAS=full"]},
        {"name": "storage", "pkey": 0x10, "members": ["0x0002c90000001011=full"]},
    ]
)


def test_a_port_with_master_and_partitions_lacks_nothing():
    result = {"port": PORT, "sminfo": MASTER, "pktr": pktr(0xFFFF, 0x8020)}
    assert ports_problems([result], PARTITIONS) == []


def test_a_missing_partition_is_named():
    result = {"port": PORT, "sminfo": MASTER, "pktr": pktr(0xFFFF)}
    [problem] = ports_problems([result], PARTITIONS)
    assert problem.startswith("mlx5_0/1 0x0002c90000001021: the master SM 0x0002c90000001011")
    assert "P_Keys 0x8020 (partitions compute;" in problem and "its table: 0xffff" in problem


def test_no_master_is_named_per_port():
    second = {**PORT, "port": 2, "port_guid": "0x0002c90000001022", "state": "Down"}
    results = [
        {"port": PORT, "sminfo": STANDBY, "pktr": ""},
        {"port": second, "sminfo": "ibwarn: [1] mad_rpc: _do_madrpc failed\n", "pktr": ""},
        {"port": PORT, "sminfo": MASTER, "pktr": pktr(0xFFFF, 0x8020)},
    ]
    problems = ports_problems(results, PARTITIONS)
    assert len(problems) == 2
    assert problems[0].startswith("mlx5_0/1 0x0002c90000001021 (Active): no MASTER subnet manager")
    assert "SMINFO_STANDBY" in problems[0]
    assert problems[1].startswith("mlx5_0/2 0x0002c90000001022 (Down): no MASTER")
    assert "_do_madrpc failed" in problems[1]
