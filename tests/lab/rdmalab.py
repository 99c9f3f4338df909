#!/usr/bin/env python3
"""The Soft-RoCE lab: N qemu VMs with real RDMA (Debian's rdma_rxe) on two rails.

    rdmalab.py image            build (or reuse) the VM image
    rdmalab.py up [--count N] [--swap-rails NAME]
                                boot N VMs (default 3), write the lab inventory;
                                NAME's two fabric NICs plugged into each other's rail
    rdmalab.py swap-rails NAME [--back]
                                re-plug NAME's fabric NICs while it runs (--back: as planned)
    rdmalab.py down             stop the VMs and remove their state
    rdmalab.py status           one line per VM
    rdmalab.py ssh NAME [CMD]   a shell (or a command) on a lab VM

Each VM has a management NIC (qemu user-mode network, SSH forwarded to a 127.0.0.1
port) and two fabric NICs, one per rail: eth1 on rail0's segment, eth2 on rail1's,
each segment a VLAN of one Debian vde_switch over a unix socket (never a multicast
group), with a leaf LLDP stand-in per rail (leaf-rail0, leaf-rail1: lab_fabric.py).
The lab does not address the fabric NICs: site.yml does, from the
rail plan in inventories/lab (rdma_rails: rail0 192.0.2.0/24, rail1 198.51.100.0/24,
TEST-NET-1 and -2, RFC 5737; each VM's rdma_rail_host_index is written here).
The image and the SSH key are cached under $RDMA_FABRIC_CACHE/lab (default
/var/cache/rdma-fabric/lab), keyed by a hash of their inputs. RDMA_LAB_ACCEL=kvm|tcg
forces the accelerator; otherwise KVM is used only when a timed probe boots the lab
kernel under it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import lab_fabric

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = Path(os.environ.get("RDMA_FABRIC_CACHE", "/var/cache/rdma-fabric")) / "lab"
# RDMA_LAB_STATE lets two checkouts run two labs (with RDMA_LAB_SSH_PORT_BASE apart).
STATE = Path(os.environ.get("RDMA_LAB_STATE", str(CACHE / "state")))
INVENTORY = REPO / "inventories" / "lab" / "hosts.lab.yml"
# One segment (a VLAN of the lab's vde_switch) per rail; the NIC for rail k is
# eth(k+1). The addresses are the rail plan's (inventories/lab/group_vars/all.yml),
# shown by `status`.
RAIL_NETS = ["192.0.2", "198.51.100"]
SSH_PORT_BASE = int(os.environ.get("RDMA_LAB_SSH_PORT_BASE", "2220"))
VM_MEMORY_MB = int(os.environ.get("RDMA_LAB_MEMORY_MB", "1024"))
BOOT_TIMEOUT = int(os.environ.get("RDMA_LAB_BOOT_TIMEOUT", "600"))
IMAGE_INPUTS = ["build-vm-image.sh", "vm-packages.txt", "rdmalab-net"]


def say(msg: str) -> None:
    print(f"rdmalab: {msg}", flush=True)


class Timer:
    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        say(f"{self.what} ...")
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            say(f"{self.what}: done in {time.monotonic() - self.start:.0f} s")


def vm_name(i: int) -> str:
    return f"lab{i}"


def lab_key() -> Path:
    key = CACHE / "ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "rdma-fabric-lab",
                "-f",
                str(key),
            ],
            check=True,
            stdin=subprocess.DEVNULL,
        )
    return key


def image_dir() -> Path:
    digest = hashlib.sha256()
    for name in IMAGE_INPUTS:
        digest.update((HERE / name).read_bytes())
    digest.update(lab_key().with_suffix(".pub").read_bytes())
    digest.update(os.environ.get("RDMA_LAB_SUITE", "bookworm").encode())
    digest.update(os.environ.get("RDMA_FABRIC_DEBIAN_MIRROR", "").encode())
    return CACHE / "images" / digest.hexdigest()[:16]


def build_image() -> Path:
    out = image_dir()
    if (out / "disk.raw").exists():
        say(f"image {out.name} is cached ({out})")
        return out
    with Timer(f"building VM image {out.name} (debootstrap + Debian kernel, a few minutes)"):
        subprocess.run(
            [str(HERE / "build-vm-image.sh"), str(out), str(lab_key().with_suffix(".pub"))],
            check=True,
            stdin=subprocess.DEVNULL,
        )
    for old in out.parent.iterdir():
        if old != out and not old.name.endswith(".tmp"):
            shutil.rmtree(old, ignore_errors=True)
    return out


def probe_kvm(image: Path) -> bool:
    """Boot the lab kernel under KVM without a root disk: it must reach its panic."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    cmd = [
        "qemu-system-x86_64", "-accel", "kvm", "-cpu", "host", "-m", "256",
        "-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio",
        "-kernel", str(image / "vmlinuz"), "-append", "console=ttyS0 panic=-1",
    ]  # fmt: skip
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        ).stdout
    except subprocess.TimeoutExpired:
        return False
    return "Kernel panic" in out or "VFS: Unable to mount root" in out


def choose_accel(image: Path) -> str:
    forced = os.environ.get("RDMA_LAB_ACCEL", "").lower()
    if forced in ("kvm", "tcg"):
        say(f"accelerator {forced} (forced by RDMA_LAB_ACCEL)")
        return forced
    # The answer depends on the host kernel, qemu and the lab kernel: cache it per those.
    qemu = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True)
    key = f"{os.uname().release} {qemu.stdout.splitlines()[0] if qemu.stdout else ''} {image.name}"
    cache_file = CACHE / "kvm-probe.json"
    try:
        cached = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cached = {}
    if cached.get("key") == key:
        ok = cached["kvm"]
        say(f"KVM probe result cached ({cache_file}): {'boots' if ok else 'does not boot'}")
    else:
        with Timer("probing KVM (a 30 s timed boot of the lab kernel)"):
            ok = probe_kvm(image)
        cache_file.write_text(json.dumps({"key": key, "kvm": ok}))
    say("accelerator kvm" if ok else "accelerator tcg (KVM did not boot the probe)")
    return "kvm" if ok else "tcg"


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def read_state() -> dict | None:
    try:
        return json.loads((STATE / "state.json").read_text())
    except (OSError, ValueError):
        return None


def ssh_argv(vm: dict, *command: str) -> list[str]:
    return [
        "ssh", "-i", str(lab_key()), "-p", str(vm["port"]),
        "-o", f"UserKnownHostsFile={STATE / 'known_hosts'}", "-o", "StrictHostKeyChecking=yes",
        "-o", "BatchMode=yes", "-o", "ConnectTimeout=15", "-o", "LogLevel=ERROR",
        "root@127.0.0.1", *command,
    ]  # fmt: skip


def serial_tail(name: str, chars: int = 2000) -> str:
    """The end of a VM's serial console: a kernel oops or panic lands there."""
    try:
        return (STATE / f"{name}.serial").read_text(errors="replace")[-chars:]
    except OSError as err:
        return f"(no serial console log: {err})"


def ssh_ok(vm: dict) -> bool:
    try:
        return subprocess.run(ssh_argv(vm, "true"), capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def fabric_pids(state: dict) -> list[int]:
    """The fabric's processes: the vde_switch and the leaves' LLDP stand-ins."""
    return [state["switch_pid"], *state.get("speaker_pids", [])] if "switch_pid" in state else []


def lab_running(state: dict | None) -> bool:
    return (
        bool(state)
        and all(pid_alive(vm["pid"]) for vm in state["vms"])
        and len(state.get("speaker_pids", [])) == len(RAIL_NETS)
        and all(pid_alive(pid) for pid in fabric_pids(state))
    )


def start_vm(i: int, image: Path, accel: str, port: int) -> dict:
    name = vm_name(i)
    disk = STATE / f"{name}.qcow2"
    subprocess.run(
        [
            "qemu-img",
            "create",
            "-q",
            "-f",
            "qcow2",
            "-F",
            "raw",
            "-b",
            str(image / "disk.raw"),
            str(disk),
        ],
        check=True,
    )
    append = f"root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet systemd.hostname={name}"
    fabric_nics = lab_fabric.qemu_nics(STATE, i, len(RAIL_NETS))
    accel_args = (
        ["-accel", "kvm", "-cpu", "host"] if accel == "kvm" else ["-accel", "tcg", "-cpu", "max"]
    )
    cmd = [
        "qemu-system-x86_64", "-name", name, *accel_args, "-m", str(VM_MEMORY_MB), "-smp", "1",
        "-nodefaults", "-display", "none", "-serial", f"file:{STATE / (name + '.serial')}",
        "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"), "-append", append,
        "-drive", f"file={disk},if=virtio,format=qcow2,cache=unsafe",
        "-device", "virtio-rng-pci",
        "-netdev", f"user,id=mgmt,ipv6=off,hostfwd=tcp:127.0.0.1:{port}-:22",
        "-device", f"virtio-net-pci,netdev=mgmt,mac=52:54:00:00:00:{i:02x}",
        *fabric_nics,
        "-daemonize", "-pidfile", str(STATE / f"{name}.pid"),
    ]  # fmt: skip
    # qemu makes the stdio it inherits non-blocking: give it none of ours.
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    pid = int((STATE / f"{name}.pid").read_text())
    return {
        "name": name,
        "index": i,
        "pid": pid,
        "port": port,
        "rail_host_index": 10 + i,
        "fabric_address": f"{RAIL_NETS[0]}.{10 + i}",
        "accel": accel,
    }


def write_known_hosts(vms: list[dict], image: Path) -> None:
    hostkey = (image / "ssh_host_ed25519_key.pub").read_text().split()[:2]
    lines = [f"[127.0.0.1]:{vm['port']} {' '.join(hostkey)}" for vm in vms]
    (STATE / "known_hosts").write_text("\n".join(lines) + "\n")


def write_inventory(vms: list[dict]) -> None:
    hosts = {
        vm["name"]: {
            "ansible_host": "127.0.0.1",
            "ansible_port": vm["port"],
            "rdma_lab_fabric_address": vm["fabric_address"],
            "rdma_rail_host_index": vm["rail_host_index"],
        }
        for vm in vms
    }
    inventory = {
        "all": {
            "vars": {
                "ansible_user": "root",
                "ansible_ssh_private_key_file": str(lab_key()),
                "ansible_ssh_common_args": f"-o UserKnownHostsFile={STATE / 'known_hosts'}",
                "rdma_lab_state_dir": str(STATE),
            },
            "children": {"rdma_hosts": {"children": {"roce_hosts": {"hosts": hosts}}}},
        }
    }
    header = "# Written by tests/lab/rdmalab.py up; removed by rdmalab.py down. Do not edit.\n"
    INVENTORY.write_text(header + json.dumps(inventory, indent=2) + "\n")


def wait_for_ssh(vms: list[dict]) -> None:
    deadline = time.monotonic() + BOOT_TIMEOUT
    pending = list(vms)
    while pending:
        for vm in list(pending):
            if not pid_alive(vm["pid"]):
                raise SystemExit(
                    f"rdmalab: {vm['name']} exited during boot; serial console:\n"
                    f"{serial_tail(vm['name'])}"
                )
            if ssh_ok(vm):
                say(f"{vm['name']} answers SSH on 127.0.0.1:{vm['port']}")
                pending.remove(vm)
        if pending and time.monotonic() > deadline:
            names = ", ".join(vm["name"] for vm in pending)
            raise SystemExit(
                f"rdmalab: no SSH from {names} within {BOOT_TIMEOUT} s; see {STATE}/*.serial"
            )
        if pending:
            time.sleep(3)


def recable(state: dict, swapped: list[str]) -> None:
    """Plug every VM's fabric NICs as planned, or swapped for the VMs named."""
    for vm in state["vms"]:
        lab_fabric.cable(STATE, vm["index"], len(RAIL_NETS), vm["name"] in swapped)
    state["swapped"] = sorted(swapped)
    (STATE / "state.json").write_text(json.dumps(state, indent=2))
    if swapped:
        say(f"rails 0 and 1 swapped on {', '.join(sorted(swapped))}")


def up(count: int, swapped: list[str]) -> None:
    state = read_state()
    if lab_running(state) and len(state["vms"]) == count and all(ssh_ok(vm) for vm in state["vms"]):
        if sorted(swapped) != state.get("swapped", []):
            recable(state, swapped)
        write_inventory(state["vms"])
        say(f"lab is already up ({count} VMs); inventory {INVENTORY.relative_to(REPO)}")
        return
    if state:
        down(quiet=True)
    image = build_image()
    accel = choose_accel(image)
    STATE.mkdir(parents=True, exist_ok=True)
    ports = [p for p in range(SSH_PORT_BASE, SSH_PORT_BASE + 200) if port_free(p)][:count]
    state = {"image": str(image), "vms": []}
    try:
        with Timer(f"booting {count} VMs ({accel}) and waiting for SSH"):
            lab_fabric.start(STATE, len(RAIL_NETS), state)
            for i in range(1, count + 1):
                state["vms"].append(start_vm(i, image, accel, ports[i - 1]))
            recable(state, swapped)
            write_known_hosts(state["vms"], image)
            wait_for_ssh(state["vms"])
    except BaseException:
        # What started is stopped: a failed `up` leaves no switch or VM behind.
        (STATE / "state.json").write_text(json.dumps(state, indent=2))
        down(quiet=True)
        raise
    write_inventory(state["vms"])
    say(
        f"lab is up: {', '.join(vm['name'] for vm in state['vms'])}; "
        f"inventory {INVENTORY.relative_to(REPO)}"
    )


def down(quiet: bool = False) -> None:
    state = read_state()
    pids = []
    if state:
        pids = [vm["pid"] for vm in state["vms"]] + fabric_pids(state)
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
    for _ in range(50):
        if not any(pid_alive(pid) for pid in pids):
            break
        time.sleep(0.1)
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(STATE, ignore_errors=True)
    INVENTORY.unlink(missing_ok=True)
    # Facts cached for the old VMs (ansible.cfg: .cache/facts) must not outlive them.
    for cached in (REPO / ".cache" / "facts").glob("lab*"):
        cached.unlink(missing_ok=True)
    if not quiet:
        say("lab is down (VMs stopped, state removed)")


def status() -> int:
    state = read_state()
    if not state:
        say("lab is down")
        return 1
    for vm in state["vms"]:
        alive = "running" if pid_alive(vm["pid"]) else "stopped"
        index = vm.get("rail_host_index", 0)
        rails = " ".join(f"rail{k} {net}.{index}" for k, net in enumerate(RAIL_NETS))
        cables = "rails swapped" if vm["name"] in state.get("swapped", []) else "cabled as planned"
        where = f"ssh 127.0.0.1:{vm['port']}"
        print(f"{vm['name']}  {alive}  {where}  {rails}  {vm['accel']}  {cables}")
    return 0 if lab_running(state) else 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("image")
    up_parser = sub.add_parser("up")
    up_parser.add_argument("--count", type=int, default=int(os.environ.get("RDMA_LAB_VMS", "3")))
    up_parser.add_argument(
        "--swap-rails", action="append", default=[], metavar="NAME",
        help="plug NAME's two fabric NICs into each other's rail (repeatable)",
    )  # fmt: skip
    swap_parser = sub.add_parser("swap-rails")
    swap_parser.add_argument("name")
    swap_parser.add_argument("--back", action="store_true", help="plug them as planned again")
    sub.add_parser("down")
    sub.add_parser("status")
    ssh_parser = sub.add_parser("ssh")
    ssh_parser.add_argument("name")
    ssh_parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "image":
        build_image()
    elif args.command == "up":
        if not 2 <= args.count <= 16:
            parser.error("--count must be between 2 and 16")
        names = {vm_name(i) for i in range(1, args.count + 1)}
        unknown = sorted(set(args.swap_rails) - names)
        if unknown:
            parser.error(f"--swap-rails: no lab VM named {', '.join(unknown)}")
        up(args.count, args.swap_rails)
    elif args.command == "swap-rails":
        state = read_state()
        if not lab_running(state):
            parser.error("the lab is down: run `rdmalab.py up` first")
        if args.name not in {vm["name"] for vm in state["vms"]}:
            parser.error(f"no lab VM named {args.name}")
        swapped = set(state.get("swapped", [])) - {args.name}
        recable(state, sorted(swapped if args.back else swapped | {args.name}))
    elif args.command == "down":
        down()
    elif args.command == "status":
        return status()
    elif args.command == "ssh":
        state = read_state() or {"vms": []}
        vm = next((vm for vm in state["vms"] if vm["name"] == args.name), None)
        if vm is None:
            parser.error(f"no lab VM named {args.name}")
        rc = subprocess.run(ssh_argv(vm, *args.cmd)).returncode
        if rc == 255:  # ssh's own failure, not the command's: say what the VM's console says
            print(
                f"rdmalab: ssh to {vm['name']} failed; its serial console ends:\n"
                f"{serial_tail(vm['name'])}",
                file=sys.stderr,
            )
        return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
