#!/usr/bin/env python3
"""Stand-in for a rail leaf switch's LLDP agent in the Soft-RoCE lab.

What it stands for: the LLDP agent of a leaf switch (Cumulus/NVUE, SONiC and EOS all run
lldpd or their own agent), which no VM here can run. It follows IEEE 802.1AB: every
``--interval`` seconds one LLDPDU to the nearest-bridge group 01:80:c2:00:00:0e,
EtherType 0x88cc, with the mandatory Chassis ID (MAC address), Port ID (interface name,
as Cumulus and EOS send it), TTL, then System Name and Port/System Description, End.
The hosts' real lldpd (installed by rdma_rails) reads it, and rdma_verify's cabling
check judges what lldpcli shows.

It talks to the rail's segment through ``vde_plug`` (vdeplug4: frames on its stdin,
each behind a 2-byte big-endian length), on the port of the lab's vde_switch that is the
leaf's (the URL ``SOCKET[PORT]``): the
segment is a hub for LLDP, so every VM on the rail sees the same leaf port. It sends
nothing else and reads nothing (vde_plug's output goes to /dev/null).

    leaf_lldp.py --plug 'STATE/fabric.vde[1]' --name leaf-rail0 --ifname swp1
"""

from __future__ import annotations

import argparse
import signal
import struct
import subprocess
import sys
import time

LLDP_GROUP = bytes.fromhex("0180c200000e")
ETHERTYPE = b"\x88\xcc"


def tlv(kind: int, value: bytes) -> bytes:
    """One TLV: 7 bits of type, 9 bits of length, the value."""
    if len(value) > 511:
        raise ValueError("an LLDP TLV holds at most 511 bytes")
    return struct.pack(">H", (kind << 9) | len(value)) + value


def lldpdu(mac: bytes, name: str, ifname: str, ttl: int) -> bytes:
    """The Ethernet frame: chassis ID subtype 4 (MAC), port ID subtype 5 (interface name),
    TTL, port description, system name, system description, end."""
    body = b"".join(
        [
            tlv(1, b"\x04" + mac),
            tlv(2, b"\x05" + ifname.encode()),
            tlv(3, struct.pack(">H", ttl)),
            tlv(4, f"{name} {ifname}".encode()),
            tlv(5, name.encode()),
            tlv(6, b"rdma-fabric lab leaf (LLDP stand-in)"),
            tlv(0, b""),
        ]
    )
    frame = LLDP_GROUP + mac + ETHERTYPE + body
    return frame + b"\0" * max(0, 60 - len(frame))  # the Ethernet minimum


def leaf_mac(name: str) -> bytes:
    """A locally administered unicast MAC made from the leaf's name (stable across runs)."""
    digest = sum((i + 1) * b for i, b in enumerate(name.encode())) & 0xFFFFFFFF
    return b"\x02\x1a" + digest.to_bytes(4, "big")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plug", required=True, help="vde_plug's URL: SOCKET[PORT]")
    parser.add_argument("--name", required=True, help="the leaf's system name")
    parser.add_argument("--ifname", default="swp1", help="the port ID sent")
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--ttl", type=int, default=8, help="seconds a neighbour is kept")
    args = parser.parse_args()
    frame = lldpdu(leaf_mac(args.name), args.name, args.ifname, args.ttl)
    plug = subprocess.Popen(
        ["vde_plug", args.plug],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while plug.poll() is None:
            plug.stdin.write(struct.pack(">H", len(frame)) + frame)
            plug.stdin.flush()
            time.sleep(args.interval)
    except (BrokenPipeError, OSError):
        pass
    finally:
        plug.terminate()
    return 1


if __name__ == "__main__":
    sys.exit(main())
