#!/usr/bin/env python3
"""Stand-in for perftest's ib_write_bw (a test double, not perftest).

It follows perftest's contract as rdma_verify uses it: the same options on both sides;
without a trailing address it is a server that listens on TCP port -p and takes exactly
one client, then exits; with a trailing address it is a client that connects at once
and fails with perftest's own lines ("Couldn't connect to ADDR:PORT", "Unable to open
file descriptor for socket connection") when nothing listens; `--version` prints
"Version: 6.06" and exits 1; both sides print the settings block and the
--report_gbits result table of the real captures in tests/fixtures/perftest.

No RDMA traffic: the bandwidth it prints is made up. Which host it runs as comes from
its -d device, looked up in the JSON map named by RDMA_PERFTEST_STANDIN (device ->
{address, sysfs_root, faults, gbps}); a server binds its device's address (127.x, loopback).
Faults of a device (as client):
  slow        prints 0.001 Gb/s (an egress throttled to 1 Mbit/s)
  flap_once   the first run fails as perftest does when its peer's keys never come
              ("ethernet_read_keys: Couldn't read remote address"); later runs pass
  link_downed increments the port's link_downed counter in the sysfs tree
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

HEADER = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : {device}
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 PCIe relax order: ON
 TX depth        : 128
 CQ Moderation   : 1
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : {gid}
 Max inline data : 0[B]
 rdma_cm QPs     : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
"""
TABLE = """ #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      {iters}             0.00               {gbps:.6f}            {mpps:.6f}
---------------------------------------------------------------------------------------
"""


def option(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv[:-1] else default


def main(argv):
    if "--version" in argv:
        print("Version: 6.06")
        return 1
    mapping = json.loads(Path(os.environ["RDMA_PERFTEST_STANDIN"]).read_text())
    device = option(argv, "-d")
    me = mapping[device]
    port = int(option(argv, "-p", "18515"))
    peer = argv[-1] if argv[-1].count(".") == 3 else None
    print(HEADER.format(device=device, gid=option(argv, "-x", "0")), end="", flush=True)
    faults = set(me.get("faults") or [])
    if peer is None:
        server = socket.create_server((me["address"], port))
        conn, _ = server.accept()
        server.close()
        data = conn.recv(64).decode()
        conn.close()
        if not data:
            print("ethernet_read_keys: Couldn't read remote address", file=sys.stderr)
            print(" Unable to read from socket/rdma_cm", file=sys.stderr)
            return 1
        gbps = float(data.strip() or 0)
    else:
        try:
            conn = socket.create_connection((peer, port), timeout=5)
        except OSError:
            print(f"Couldn't connect to {peer}:{port}", file=sys.stderr)
            print(
                "Unable to open file descriptor for socket connection Unable to init the "
                "socket connection",
                file=sys.stderr,
            )
            return 1
        marker = Path(os.environ["RDMA_PERFTEST_STANDIN"] + f".{device}.flapped")
        if "flap_once" in faults and not marker.exists():
            marker.write_text("1")
            conn.close()
            print("ethernet_read_keys: Couldn't read remote address", file=sys.stderr)
            print(" Unable to read from socket/rdma_cm", file=sys.stderr)
            return 1
        # "gbps" in the map: the port's rate (the fleet's fault plan), default 0.09.
        gbps = 0.001 if "slow" in faults else float(me.get("gbps", 0.09))
        if "link_downed" in faults:
            counter = Path(me["sysfs_root"], "sys/class/infiniband", device, "ports/1/counters")
            value = int((counter / "link_downed").read_text())
            (counter / "link_downed").write_text(f"{value + 1}\n")
        conn.sendall(f"{gbps}\n".encode())
        conn.close()
    iters = max(1, int(gbps * 1e9 * 3 / 8 / 65536))
    print(TABLE.format(iters=iters, gbps=gbps, mpps=gbps * 1e9 / 8 / 65536 / 1e6), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
