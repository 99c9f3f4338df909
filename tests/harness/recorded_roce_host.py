#!/usr/bin/env python3
"""Write the recorded RDMA side of a RoCE host into a directory: its sysfs tree (two
ConnectX-6 Dx ports, mlx5_0 and mlx5_1, RoCE v2 GIDs on 192.168.{10,11}.N, netdev MTU
9000, zero PMA error counters), its boot id, and what rdma-core's ibv_devinfo prints for
those ports (the tab layout of tests/fixtures/ibv_devinfo/roce_cx7_tabs.txt).

Used by rdma_verify's Molecule scenario: a container has no RDMA device, so the role's
health checks read this tree (rdma_verify_sysfs_root) and the ibv_devinfo STAND-IN
(tests/standins/ibv_devinfo) prints the output written here. The tree comes from
sysfs_tree.py (tests/support), which must sit beside this file or on PYTHONPATH.

    recorded_roce_host.py ROOT NUMBER [--symbol-errors N]

NUMBER (1-254) makes the host's GUIDs, addresses and boot id its own;
--symbol-errors puts N symbol errors on mlx5_1 (a bad cable, for a failing check).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sysfs_tree as st

DEVINFO_HCA = """\
hca_id:\t{name}
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t22.38.1002
\tnode_guid:\t\t\t{guid}
\tsys_image_guid:\t\t\t{guid}
\tvendor_id:\t\t\t0x02c9
\tvendor_part_id:\t\t\t4125
\thw_ver:\t\t\t\t0x0
\tboard_id:\t\t\tMT_0000000359
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tsm_lid:\t\t\t0
\t\t\tport_lid:\t\t0
\t\t\tport_lmc:\t\t0x00
\t\t\tlink_layer:\t\tEthernet

"""


def record(root: Path, number: int, symbol_errors: int = 0) -> None:
    devinfo = []
    for index in (0, 1):
        name = f"mlx5_{index}"
        guid = f"946d:ae03:00c2:{number:02x}{index:02x}"
        errors = symbol_errors if index == 1 else 0
        st.add_cx6dx_roce(
            root,
            name,
            pci=f"0000:1b:00.{index}",
            netdev=f"enp27s0f{index}np{index}",
            node_guid=guid,
            gids=st.roce_gids(
                f"966d:aeff:fe03:{number:02x}{index:02x}", f"192.168.{10 + index}.{number}"
            ),
            mtu=9000,
            counters={"symbol_error": errors, "link_downed": 0, "port_rcv_errors": 0},
        )
        devinfo.append(DEVINFO_HCA.format(name=name, guid=guid))
    boot = root / "proc/sys/kernel/random/boot_id"
    boot.parent.mkdir(parents=True, exist_ok=True)
    boot.write_text(f"5e1f0000-0000-4000-8000-{number:012d}\n")
    (root / "ibv_devinfo.txt").write_text("".join(devinfo))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("number", type=int, choices=range(1, 255), metavar="NUMBER")
    parser.add_argument("--symbol-errors", type=int, default=0)
    args = parser.parse_args()
    record(args.root, args.number, args.symbol_errors)


if __name__ == "__main__":
    main()
