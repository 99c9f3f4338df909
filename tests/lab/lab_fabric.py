"""The lab's fabric: one vde_switch, one VLAN per rail, a leaf LLDP stand-in per rail.

Each rail is a VLAN of one Debian vde_switch (over a unix socket, never a multicast
group): rail k is VLAN k+1, its leaf's port is ``leaf_port(k)`` and VM i's NIC for rail
k plugs into ``vm_port(i, k)``, an untagged port of that VLAN. A "cable" is which VLAN a
port is in, set through the switch's management socket, so ``swap`` moves a VM's two
fabric NICs onto each other's rail while it runs, as swapped cables would (no reboot,
no carrier change: the hosts' lldpd learns the new leaf within the leaf's TTL).

The leaf of rail k (``leaf_name(k)``, leaf-rail0, leaf-rail1) sends LLDP on its rail's
VLAN (tests/lab/leaf_lldp.py, the stand-in for a switch's LLDP agent).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORTS_PER_RAIL = 32
LEAF_IFNAME = "swp1"
# The leaves' LLDP: sent every 2 s, kept 8 s, so that a swap shows within seconds.
LLDP_INTERVAL = 2
LLDP_TTL = 8


def leaf_name(rail: int) -> str:
    return f"leaf-rail{rail}"


def leaf_port(rail: int) -> int:
    return rail * PORTS_PER_RAIL + 1


def vm_port(i: int, rail: int) -> int:
    return rail * PORTS_PER_RAIL + 1 + i


def vlan(rail: int) -> int:
    return rail + 1


def socket_path(state: Path) -> Path:
    return state / "fabric.vde"


def plug_url(state: Path, port: int) -> str:
    """vdeplug4's URL of one switch port (``vde_plug -p`` is a pid file there)."""
    return f"{socket_path(state)}[{port}]"


def _mgmt_path(state: Path) -> Path:
    return state / "fabric.mgmt"


def mgmt(state: Path, *commands: str) -> list[str]:
    """Run vde_switch management commands; each one's reply (raises on a failed one)."""
    replies = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(_mgmt_path(state)))
        buffer = b""

        def reply() -> str:
            nonlocal buffer
            while b"vde$ " not in buffer:
                data = sock.recv(4096)
                if not data:
                    break
                buffer += data
            text, _, buffer = buffer.partition(b"vde$ ")
            return text.decode(errors="replace")

        reply()  # the banner
        for command in commands:
            sock.sendall(command.encode() + b"\n")
            text = reply()
            if "1000 Success" not in text:
                raise RuntimeError(f"vde_switch {command!r}: {text.strip()}")
            replies.append(text)
    return replies


def _wait_for_port(state: Path, port: int) -> None:
    for _ in range(100):
        try:
            mgmt(state, f"port/print {port}")
            return
        except (RuntimeError, OSError):
            time.sleep(0.1)
    raise SystemExit(f"rdmalab: nothing plugged into the fabric switch's port {port}")


def start(state: Path, rails: int, pids: dict) -> None:
    """Start the switch, its VLANs and one leaf LLDP stand-in per rail, each pid put in
    ``pids`` (switch_pid, speaker_pids) as soon as it is known, so that a failed start
    can be stopped."""
    pidfile = state / "vde_switch.pid"
    subprocess.run(
        [
            "vde_switch", "-d", "-n", str(PORTS_PER_RAIL * rails + 1),
            "-s", str(socket_path(state)), "-p", str(pidfile), "-M", str(_mgmt_path(state)),
        ],
        check=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    for _ in range(50):
        if pidfile.exists() and pidfile.read_text().strip() and _mgmt_path(state).exists():
            break
        time.sleep(0.1)
    else:
        raise SystemExit("rdmalab: vde_switch did not start")
    pids["switch_pid"] = int(pidfile.read_text())
    pids["speaker_pids"] = []
    mgmt(state, *(f"vlan/create {vlan(rail)}" for rail in range(rails)))
    for rail in range(rails):
        log = (state / f"{leaf_name(rail)}.log").open("w")
        speaker = subprocess.Popen(
            [
                sys.executable, str(HERE / "leaf_lldp.py"), "--plug",
                plug_url(state, leaf_port(rail)), "--name", leaf_name(rail),
                "--ifname", LEAF_IFNAME, "--interval", str(LLDP_INTERVAL), "--ttl", str(LLDP_TTL),
            ],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, cwd=state,
        )  # fmt: skip
        pids["speaker_pids"].append(speaker.pid)
        _wait_for_port(state, leaf_port(rail))
        mgmt(state, f"port/setvlan {leaf_port(rail)} {vlan(rail)}")


# The fabric NICs' virtio rings without event index (VIRTIO_RING_F_EVENT_IDX off): with
# it, under TCG on a loaded 2-core host, a rail NIC's transmit queue stopped for good in
# minutes of two-rail perftest (the guest's NETDEV WATCHDOG "transmit queue 0 timed out"
# every 5 s, tx_packets frozen, its qdisc backlog growing; link down/up did not help, a
# reboot did): 3 of 6 NICs in 120 s of tests/lab traffic with two host CPU hogs, 0 of 6
# with event_idx=off, twice. That was the lab's flake, a rail named bad that was not.
FABRIC_NIC_OPTIONS = "event_idx=off"


def qemu_nics(state: Path, i: int, rails: int) -> list[str]:
    """The qemu arguments of VM i's fabric NICs: rail k's is eth(k+1), on port vm_port."""
    args = []
    for rail in range(rails):
        mac = f"52:54:00:{rail + 1:02x}:00:{i:02x}"
        args += [
            "-netdev", f"vde,id=rail{rail},sock={plug_url(state, vm_port(i, rail))}",
            "-device", f"virtio-net-pci,netdev=rail{rail},mac={mac},{FABRIC_NIC_OPTIONS}",
        ]  # fmt: skip
    return args


def cable(state: Path, i: int, rails: int, swapped: bool) -> None:
    """Put VM i's fabric ports on their rails' VLANs, or (swapped) each on the next rail's."""
    mgmt(
        state,
        *(
            f"port/setvlan {vm_port(i, rail)} {vlan((rail + 1) % rails if swapped else rail)}"
            for rail in range(rails)
        ),
    )
