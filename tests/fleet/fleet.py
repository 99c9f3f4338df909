#!/usr/bin/env python3
"""The fleet: N containers as 8-rail "GPU servers" and 8 stand-in leaf switches, for
site.yml at rack scale. A test world, not a rack: no RDMA, no switch ASIC.

    fleet.py up N          build the world (containers, rail networks, leaves, inventory)
    fleet.py run [--faults] site.yml first run, second run, --check --diff; with --faults,
                           the fault plan is planted and verify.yml judged (report)
    fleet.py down          remove every container, network and process the harness made
    fleet.py all N         up, run (and faults with --faults), down; prints the figures
    fleet.py ci N          make test's budget run: up, first run, one fault planted (a slow
                           rail), second run (changed=0, the fault judged), down
    fleet.py slices N      a sliced job as AWX runs one (--slices K, 4): up, the per-host
                           stages once per slice side by side, each slice on its own part
                           of the inventory; verify in a slice (refused); then site.yml on
                           the whole inventory (the hosts unchanged, verify green); down

What a host is (each fact from the recorded shapes of tests/support/sysfs_tree.py and
tests/harness/recorded_roce_host.py):
  - a systemd container of rdma-fabric/fleet:bookworm (tests/fleet/build-fleet-image.sh:
    the project's Debian image + the packages site.yml installs, fetched once), with the
    capabilities/tmpfs/cgroup mounts of the Molecule scenarios (--privileged fails here);
  - a recorded sysfs tree of 8 ConnectX-6 Dx RoCE ports (one per rail), bind-mounted at
    /var/lib/rdma-fabric-recorded and read by the roles through their *_sysfs_root;
    every 4th host has DGX-style device names (the DGX H100 compute NICs mlx5_0, 3-6, 9-11,
    bound per host with rdma_rail_devices), the 3rd host has its rails in reverse order;
  - one real netdev per rail: the container's interface on the docker network of that
    rail (created by the harness, --internal: the rails reach only each other), renamed
    to the recorded netdev name, so rdma_rails' networkd configures a real link;
  - the stand-ins of tests/standins on PATH: mlnx_qos, dcb, ethtool, ibv_devinfo and
    ib_write_bw (perftest_standin.py: the rate of each port comes from the fault plan).
The leaves (leaf k serves rail k): NVUE REST stand-ins for leaf0-3 (processes on
127.0.0.1 with their own CA), SONiC CLI stand-ins for leaf4-5 (containers), and EOS eAPI
stand-ins for leaf6-7 (tests/standins/eos_eapi.py, processes on 127.0.0.1, reached over
Ansible's httpapi connection as an Arista switch is).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO / "tests/support"), str(REPO / "tests/harness")]

import recorded_roce_host  # noqa: E402
import sysfs_tree as st  # noqa: E402

PREFIX = "rf-fleet"
LABEL = "rdma-fabric.fleet"
IMAGE = "rdma-fabric/fleet:bookworm"
RAILS = 8
# Rail k is 10.246.k.0/24 (a documentation-free private range no other world here uses);
# docker's bridge of the rail network takes .1, hosts start at .11 (rdma_rail_host_index).
RAIL_SUBNET = "10.246.{k}.0/24"
FIRST_INDEX = 11
# PCI buses of the 8 NICs of a host (the layout of an 8-GPU server: one NIC per PCIe
# switch), the netdev name follows the kernel's predictable naming (enp<bus>s0np0).
BUSES = [0x0C, 0x12, 0x1B, 0x23, 0x8C, 0x92, 0x9B, 0xA3]
# DGX H100: the 8 compute ConnectX-7 ports are mlx5_0, mlx5_3-6 and mlx5_9-11 (the
# storage/in-band ports take the other numbers; NVIDIA DGX H100 User Guide, "Network
# Ports"). The names only matter here: the harness records them as RoCE ports.
DGX_NAMES = [0, 3, 4, 5, 6, 9, 10, 11]
LEAVES = [
    ("leaf0", "cumulus"),
    ("leaf1", "cumulus"),
    ("leaf2", "cumulus"),
    ("leaf3", "cumulus"),
    ("leaf4", "sonic"),
    ("leaf5", "sonic"),
    ("leaf6", "eos"),
    ("leaf7", "eos"),
]
NORMAL_GBPS = 0.09  # what perftest_standin.py prints for a healthy port
MIN_GBPS = 0.05  # rdma_verify_min_gbps of the fleet: 10% and 30% ports fail, 100% pass
DEFAULT_STATE = REPO / ".cache/fleet"
HOST_ROOT = "/var/lib/rdma-fabric-recorded"
STANDINS = "/opt/rdma-fabric-standins"


def sh(*argv: str, check: bool = True, capture: bool = True) -> str:
    done = subprocess.run(argv, check=False, text=True, capture_output=capture)
    if check and done.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    return (done.stdout or "").strip()


def host_names(count: int) -> list[str]:
    return [f"gpu{i:03d}" for i in range(1, count + 1)]


def host_layout(position: int) -> list[tuple[str, int, str]]:
    """(device, bus, netdev) of rail 0..7 of the host at this 0-based position."""
    names = [f"mlx5_{n}" for n in (DGX_NAMES if position % 4 == 3 else range(RAILS))]
    nics = [(names[k], BUSES[k], f"enp{BUSES[k]}s0np0") for k in range(RAILS)]
    return nics[::-1] if position == 2 else nics


def rail_address(k: int, index: int) -> str:
    return f"10.246.{k}.{index}"


def fault_plan(hosts: list[str]) -> dict:
    """The planted faults (a slow rail, dead ports, a leaf half, a lost host), on hosts
    chosen by position (any N >= 8)."""
    half = hosts[len(hosts) // 2 : -1]
    return {
        "slow": {"host": hosts[4], "rail": 3, "fraction": 0.10},
        "dead": [{"host": hosts[5], "rail": 5}, {"host": hosts[6], "rail": 5}],
        # Half of leaf1's ports (the second half of the hosts, but the silent one) at 30 %.
        "leaf_half": {"leaf": "leaf1", "rail": 1, "hosts": half, "fraction": 0.30},
        "silent": {"host": hosts[-1]},
    }


def record_host(root: Path, name: str, position: int, faults: dict | None = None) -> None:
    """Write the host's recorded tree, ibv_devinfo output and perftest stand-in map."""
    # Emptied, not removed: the directory is bind-mounted into the running container.
    root.mkdir(parents=True, exist_ok=True)
    for entry in root.iterdir():
        shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    index = FIRST_INDEX + position
    devinfo, perftest = [], {}
    dead = {d["rail"] for d in (faults or {}).get("dead", []) if d["host"] == name}
    for k, (device, bus, netdev) in enumerate(host_layout(position)):
        guid = f"946d:ae03:00c2:{position:02x}{k:02x}"
        st.add_cx6dx_roce(
            root,
            device,
            pci=f"0000:{bus:02x}:00.0",
            netdev=netdev,
            up=k not in dead,
            node_guid=guid,
            gids=st.roce_gids(f"966d:aeff:fe03:{position:02x}{k:02x}", rail_address(k, index)),
            mtu=9000,
            counters={"symbol_error": 0, "link_downed": 0, "port_rcv_errors": 0},
        )
        devinfo.append(recorded_roce_host.DEVINFO_HCA.format(name=device, guid=guid))
        gbps = NORMAL_GBPS
        for key in ("slow", "leaf_half"):
            fault = (faults or {}).get(key)
            if (
                fault
                and fault["rail"] == k
                and name in ([fault.get("host")] + fault.get("hosts", []))
            ):
                gbps = round(NORMAL_GBPS * fault["fraction"], 4)
        perftest[device] = {
            "address": rail_address(k, index),
            "sysfs_root": HOST_ROOT,
            "faults": [],
            "gbps": gbps,
        }
    boot = root / "proc/sys/kernel/random/boot_id"
    boot.parent.mkdir(parents=True, exist_ok=True)
    boot.write_text(f"5e1f0000-0000-4000-8000-{position:012d}\n")
    (root / "ibv_devinfo.txt").write_text("".join(devinfo))
    (root / "perftest.json").write_text(json.dumps(perftest, indent=1))


# Run inside each host once it is up: the rail interfaces get their recorded names, the
# stand-ins go on PATH and get their per-port state. /proc/sys is made writable as
# rdma_rails' Molecule scenario does (docker mounts it read-only; the role sets sysctls).
HOST_SETUP = r"""
set -e
mount -o remount,rw /proc/sys
for spec in $RAILS; do
    addr=${spec%%=*}; name=${spec#*=}
    dev=$(ip -o -4 addr show | awk -v a="$addr" '$4 ~ "^"a"/" {print $2; exit}')
    dev=${dev%%@*}
    if [ -n "$dev" ] && [ "$dev" != "$name" ]; then
        ip link set dev "$dev" down
        ip link set dev "$dev" name "$name"
    fi
    ip link set dev "$name" up
done
S=/opt/rdma-fabric-standins
ln -sf $S/mlnx_qos /usr/local/sbin/mlnx_qos
ln -sf $S/ethtool /usr/local/sbin/ethtool
ln -sf $S/ibv_devinfo /usr/local/bin/ibv_devinfo
[ -e /usr/sbin/dcb.iproute2 ] || cp -p /usr/sbin/dcb /usr/sbin/dcb.iproute2
ln -sf $S/dcb /usr/local/sbin/dcb
cat > /usr/local/bin/ib_write_bw <<EOF
#!/bin/sh
# STAND-IN: tests/standins/perftest_standin.py (no RDMA traffic)
RDMA_PERFTEST_STANDIN=/var/lib/rdma-fabric-recorded/perftest.json \\
    exec python3 $S/perftest_standin.py "\$@"
EOF
chmod 755 /usr/local/bin/ib_write_bw
mkdir -p /var/lib/ibv-devinfo-standin
ln -sf /var/lib/rdma-fabric-recorded/ibv_devinfo.txt /var/lib/ibv-devinfo-standin/output.txt
for spec in $RAILS; do
    name=${spec#*=}
    [ -e /var/lib/mlnx-qos-standin/$name.json ] || mlnx_qos --standin-init "$name"
    [ -e /var/lib/ethtool-standin/$name.storm ] || ethtool --standin-init "$name"
done
"""


def docker_common(name: str, hostname: str) -> list[str]:
    return [
        "--name", name, "--hostname", hostname, "--label", f"{LABEL}=1",
        "--cap-add", "SYS_ADMIN", "--cap-add", "NET_ADMIN",
        "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
        "-e", "container=docker", "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        "--tmpfs", "/run", "--tmpfs", "/run/lock",
    ]  # fmt: skip


def make_networks() -> None:
    # One left by an earlier fleet (dockerd kept an endpoint: down() could not remove it)
    # is the same network: kept.
    have = set(sh("docker", "network", "ls", "--format", "{{.Name}}").split())
    if f"{PREFIX}-mgmt" not in have:
        sh("docker", "network", "create", "--label", f"{LABEL}=1", f"{PREFIX}-mgmt")
    for k in range(RAILS):
        if f"{PREFIX}-rail{k}" in have:
            continue
        sh(
            "docker", "network", "create", "--internal", "--label", f"{LABEL}=1",
            "--subnet", RAIL_SUBNET.format(k=k), "-o", "com.docker.network.driver.mtu=9000",
            f"{PREFIX}-rail{k}",
        )  # fmt: skip


def start_host(state: Path, name: str, position: int) -> None:
    container = f"{PREFIX}-{name}"
    index = FIRST_INDEX + position
    sh(
        "docker", "create", *docker_common(container, name), "--network", f"{PREFIX}-mgmt",
        "-v", f"{state / 'hosts' / name}:{HOST_ROOT}:rw",
        "-v", f"{REPO / 'tests/standins'}:{STANDINS}:ro",
        IMAGE, "/lib/systemd/systemd",
    )  # fmt: skip
    for k in range(RAILS):
        sh(
            "docker",
            "network",
            "connect",
            "--ip",
            rail_address(k, index),
            f"{PREFIX}-rail{k}",
            container,
        )
    sh("docker", "start", container)


def ready_host(name: str, position: int) -> None:
    wait_systemd(f"{PREFIX}-{name}")
    setup_host(name, position)


def setup_host(name: str, position: int) -> None:
    index = FIRST_INDEX + position
    rails = " ".join(
        f"{rail_address(k, index)}={nic[2]}" for k, nic in enumerate(host_layout(position))
    )
    sh("docker", "exec", "-e", f"RAILS={rails}", f"{PREFIX}-{name}", "sh", "-c", HOST_SETUP)


def make_tls(state: Path) -> None:
    tls = state / "tls"
    tls.mkdir(parents=True, exist_ok=True)
    sh(
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", str(tls / "nvue.key"), "-out", str(tls / "nvue.crt"), "-days", "1",
        "-subj", "/CN=nvue-standin", "-addext", "subjectAltName=IP:127.0.0.1",
        "-addext", "basicConstraints=critical,CA:TRUE",
    )  # fmt: skip


def serve(state: Path, leaf: str, standin: str, port: int, *extra) -> int:
    """Start an HTTPS stand-in (tests/standins) on 127.0.0.1:port with the fleet's
    certificate; return its pid (its own session: down() stops its group)."""
    log = open(state / f"{leaf}.log", "w")  # noqa: SIM115 the process keeps it
    tls = state / "tls"
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "tests/standins" / standin), "--bind", "127.0.0.1",
         "--port", str(port), "--cert", str(tls / "nvue.crt"), "--key", str(tls / "nvue.key"),
         *map(str, extra)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    return proc.pid


def start_leaves(state: Path, count: int) -> dict:
    """Start the NVUE and SONiC stand-ins; return {leaf: inventory vars}."""
    make_tls(state)
    leaves = {}
    pids = []
    base = 28765
    seed = json.loads(
        (REPO / "tests/fixtures/switch_qos/configdb_buffers_dynamic.json").read_text()
    )
    for number, (leaf, os_name) in enumerate(LEAVES):
        # One port per host (Ethernet0, 4, 8 ... on SONiC; swp1.. on Cumulus, Ethernet1/1..
        # on EOS) and two uplinks after them.
        if os_name == "cumulus":
            ports = [f"swp{i}" for i in range(1, count + 3)]
            applied = state / f"{leaf}.applied.json"
            applied.write_text(
                json.dumps({"system": {"build": "Cumulus Linux 5.9.1", "hostname": leaf}})
            )
            pids.append(serve(state, leaf, "nvue_api.py", base + number, "--applied", applied))
            leaves[leaf] = {
                "ansible_connection": "local",
                "roce_switch_qos_nvue_host": "127.0.0.1",
                "roce_switch_qos_nvue_port": base + number,
                "roce_switch_qos_nvue_password": "CumulusLinux!",
                "roce_switch_qos_ca_path": str(state / "tls/nvue.crt"),
                "roce_switch_qos_use_proxy": False,
            }
        elif os_name == "sonic":
            ports = [f"Ethernet{4 * i}" for i in range(count + 2)]
            db = json.loads(json.dumps(seed))
            template = db["PORT"]["Ethernet0"]
            db["PORT"] = {
                p: dict(template, alias=f"etp{i}", lanes=str(4 * i)) for i, p in enumerate(ports)
            }
            path = state / f"{leaf}.config_db.json"
            path.write_text(json.dumps(db, indent=1))
            container = f"{PREFIX}-{leaf}"
            sh(
                "docker", "run", "-d", "--name", container, "--hostname", leaf,
                "--label", f"{LABEL}=1", "--network", f"{PREFIX}-mgmt",
                "-e", "SONIC_STANDIN_DB=/var/lib/sonic-standin/config_db.json",
                "-v", f"{REPO / 'tests/standins/sonic'}:/opt/sonic-standin:ro",
                IMAGE, "sleep", "infinity",
            )  # fmt: skip
            sh("docker", "exec", container, "sh", "-c",
               "mkdir -p /var/lib/sonic-standin && for t in show config sonic-cfggen; do "
               "ln -sf /opt/sonic-standin/$t /usr/local/bin/$t; done")  # fmt: skip
            sh("docker", "cp", str(path), f"{container}:/var/lib/sonic-standin/config_db.json")
            leaves[leaf] = {
                "ansible_connection": "docker",
                "ansible_host": container,
                "roce_switch_qos_sonic_become": False,
            }
        else:
            ports = [f"Ethernet{i}/1" for i in range(1, count + 3)]
            running = state / f"{leaf}.running-config"
            running.write_text(
                f"! Command: show running-config\nhostname {leaf}\n!\n"
                + "".join(f"interface {p}\n!\n" for p in ports)
                + "end\n"
            )
            pids.append(serve(state, leaf, "eos_eapi.py", base + number, "--running", running))
            leaves[leaf] = {
                "ansible_connection": "ansible.netcommon.httpapi",
                "ansible_network_os": "arista.eos.eos",
                "ansible_host": "127.0.0.1",
                "ansible_httpapi_port": base + number,
                # Ansible keys a persistent connection by address, ansible_port and user:
                # without it the two EOS leaves on 127.0.0.1 would share one.
                "ansible_port": base + number,
                "ansible_httpapi_use_ssl": True,
                "ansible_httpapi_validate_certs": True,
                "ansible_httpapi_ca_path": str(state / "tls/nvue.crt"),
                "ansible_httpapi_use_proxy": False,
                "ansible_user": "admin",
                "ansible_password": "arista",
            }
        leaves[leaf]["roce_switch_qos_ports"] = ports
        leaves[leaf]["roce_switch_qos_uplinks"] = ports[-2:]
    (state / "pids").write_text("".join(f"{p}\n" for p in pids))
    return leaves


def write_inventory(state: Path, hosts: list[str], leaves: dict) -> Path:
    inv = state / "inventory"
    (inv / "group_vars").mkdir(parents=True, exist_ok=True)
    host_vars = {}
    for position, name in enumerate(hosts):
        layout = host_layout(position)
        entry = {"ansible_host": f"{PREFIX}-{name}", "rdma_rail_host_index": FIRST_INDEX + position}
        devices = {f"rail{k}": nic[0] for k, nic in enumerate(layout) if nic[0] != f"mlx5_{k}"}
        if devices:
            entry["rdma_rail_devices"] = devices
        host_vars[name] = entry
    groups = {"cumulus": {}, "sonic": {}, "eos": {}}
    for leaf, os_name in LEAVES:
        groups[os_name][leaf] = leaves[leaf]
    inventory = {
        "all": {
            "children": {
                "rdma_hosts": {"children": {"roce_hosts": {"hosts": host_vars}, "ib_hosts": {}}},
                "gpu_hosts": {"hosts": {name: {} for name in hosts}},
                "subnet_managers": {},
                "switches": {
                    "children": {
                        "cumulus_switches": {
                            "hosts": groups["cumulus"],
                            "vars": {"rdma_switch_os": "cumulus"},
                        },
                        "sonic_switches": {
                            "hosts": groups["sonic"],
                            "vars": {"rdma_switch_os": "sonic"},
                        },
                        "eos_switches": {"hosts": groups["eos"], "vars": {"rdma_switch_os": "eos"}},
                    }
                },
            }
        }
    }
    (inv / "hosts.yml").write_text(json.dumps(inventory, indent=1))
    group_all = {
        "rdma_rails": [
            {
                "name": f"rail{k}",
                "device": f"mlx5_{k}",
                "subnet": RAIL_SUBNET.format(k=k),
                "mtu": 9000,
            }
            for k in range(RAILS)
        ],
        "roce_switch_qos_render_dir": str(state / "reports/roce_switch_qos"),
        "rdma_verify_report_dir": str(state / "reports"),
    }
    group_roce = {
        # docker: community.docker.docker (ansible-core's routing), or Mitogen's own
        # docker transport under its strategy (it takes the short name only).
        "ansible_connection": "docker",
        "rdma_stack_provider": "inbox",
        "rdma_stack_gpudirect": "false",
        "rdma_stack_load_modules": False,
        "rdma_nic_install_tools": False,
        "rdma_rails_sysfs_root": HOST_ROOT,
        "roce_host_qos_sysfs_root": HOST_ROOT,
        "roce_host_qos_require_hw": False,
        "rdma_verify_sysfs_root": HOST_ROOT,
        "rdma_verify_expected_device_count": RAILS,
        "rdma_verify_min_gbps": MIN_GBPS,
        "rdma_verify_duration": 2,
        "rdma_verify_check_qos": False,
    }
    (inv / "group_vars/all.yml").write_text(json.dumps(group_all, indent=1))
    (inv / "group_vars/roce_hosts.yml").write_text(json.dumps(group_roce, indent=1))
    return inv


def up(count: int, state: Path) -> None:
    with contextlib.suppress(SystemExit):  # a network dockerd still holds is kept
        down(state, quiet=True)
    sh(str(HERE / "build-fleet-image.sh"), capture=False)
    state.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(state / "facts", ignore_errors=True)  # an earlier fleet's hosts
    hosts = host_names(count)
    for position, name in enumerate(hosts):
        record_host(state / "hosts" / name, name, position)
    raise_inotify_instances(count)
    make_networks()
    # Created and attached one by one (network connects side by side left dockerd with an
    # endpoint of a removed container, and the network then could not be removed); then
    # they boot and are set up side by side.
    for position, name in enumerate(hosts):
        start_host(state, name, position)
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda item: ready_host(item[1], item[0]), enumerate(hosts)))
    leaves = start_leaves(state, count)
    write_inventory(state, hosts, leaves)
    (state / "fleet.json").write_text(json.dumps({"count": count, "hosts": hosts}))


# Each host's systemd (PID 1, journald, networkd, logind...) holds about 6 inotify
# instances, all under root's one per-user limit, fs.inotify.max_user_instances: Debian's
# 128 ends at about 21 hosts, where the next container's systemd exits 255 at once.
INOTIFY_PER_HOST = 8
INOTIFY_SPARE = 128
INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_instances")


def raise_inotify_instances(count: int) -> None:
    """Raise the machine's inotify instance limit for COUNT systemd hosts (never lower it)."""
    needed = INOTIFY_PER_HOST * (count + len(LEAVES)) + INOTIFY_SPARE
    have = int(INOTIFY_LIMIT.read_text())
    if have >= needed:
        return
    try:
        INOTIFY_LIMIT.write_text(f"{needed}\n")
    except OSError as err:
        raise SystemExit(
            f"{count} hosts need fs.inotify.max_user_instances >= {needed} (it is {have}: each "
            f"host's systemd holds about 6); as root: sysctl -w fs.inotify.max_user_instances="
            f"{needed} ({err})"
        ) from err
    print(f"fleet: fs.inotify.max_user_instances {have} -> {needed} for {count} hosts")


def wait_systemd(container: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = sh("docker", "exec", container, "systemctl", "is-system-running", check=False)
        if out in ("running", "degraded"):
            return
        state = sh("docker", "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", container)
        if not state.startswith("running"):
            raise SystemExit(f"{container}: its systemd exited ({state}), see docker logs")
        time.sleep(1)
    raise SystemExit(f"{container}: systemd not up after {timeout} s ({out})")


def down(state: Path, quiet: bool = False) -> None:
    pids = state / "pids"
    if pids.exists():
        for line in pids.read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(line), signal.SIGTERM)
        pids.unlink()
    containers = sh("docker", "ps", "-aq", "--filter", f"label={LABEL}").split()
    # One at a time: containers removed side by side (one `docker rm -f` of them all, or
    # of 8 at a time) left dockerd 20.10 counting an endpoint on 1 to 3 of the fleet's
    # networks that no container holds and `docker network inspect` does not show
    # ("has active endpoints" until dockerd restarts; after make fleet FLEET=64 and in
    # two of two `fleet.py up 64` + down; none one at a time: 19 s for 66 containers).
    for container in containers:
        sh("docker", "rm", "-f", container)
    networks = sh("docker", "network", "ls", "-q", "--filter", f"label={LABEL}").split()
    # dockerd can still hold a removed container's endpoint for a moment ("has active
    # endpoints"): a few tries, then the error.
    left = networks
    for attempt in range(10):
        if not left:
            break
        done = subprocess.run(["docker", "network", "rm", *left], capture_output=True, text=True)
        if done.returncode == 0:
            break
        if attempt == 9:
            raise SystemExit(f"docker network rm: exit {done.returncode}\n{done.stderr}")
        time.sleep(1)
        left = sh("docker", "network", "ls", "-q", "--filter", f"label={LABEL}").split()
    if not quiet:
        print(f"fleet down: {len(containers)} containers, {len(networks)} networks removed")


def fleet_ids() -> list[str]:
    return sh("docker", "ps", "-q", "--no-trunc", "--filter", f"label={LABEL}").split()


def cgroup_dirs(cid: str, v1_controller: str) -> tuple[Path, Path]:
    """A container's cgroup directory under cgroup v1 (one per controller) and v2."""
    return (
        Path("/sys/fs/cgroup", v1_controller, "docker", cid),
        Path("/sys/fs/cgroup/system.slice", f"docker-{cid}.scope"),
    )


def fleet_cpu_files() -> str:
    """The fleet containers' CPU accounting files, for the stage callback
    ($RDMA_FLEET_CGROUPS): cgroup v1 cpuacct.usage, else v2 cpu.stat."""
    files = []
    for cid in fleet_ids():
        v1, v2 = cgroup_dirs(cid, "cpuacct")
        for path in (v1 / "cpuacct.usage", v2 / "cpu.stat"):
            if path.exists():
                files.append(str(path))
                break
    return ":".join(files)


def fleet_memory() -> dict:
    """Memory of the fleet's containers from their cgroups (docker stats prints 0 B on
    this machine's cgroup v1): usage (page cache included: the conservative figure) and
    RSS, in bytes, summed over every container the harness made."""
    ids = fleet_ids()
    usage = rss = 0
    for cid in ids:
        v1, v2 = cgroup_dirs(cid, "memory")
        if (v1 / "memory.usage_in_bytes").exists():
            usage += int((v1 / "memory.usage_in_bytes").read_text())
            stat = dict(line.split() for line in (v1 / "memory.stat").read_text().splitlines())
            rss += int(stat.get("total_rss", 0))
        elif (v2 / "memory.current").exists():
            usage += int((v2 / "memory.current").read_text())
            stat = dict(line.split() for line in (v2 / "memory.stat").read_text().splitlines())
            rss += int(stat.get("anon", 0))
    return {"containers": len(ids), "usage": usage, "rss": rss}


def mitogen_env() -> dict:
    """Mitogen's strategy, as `make demo` runs the lab, with RDMA_FLEET_MITOGEN=1 only:
    on the fleet (16 containers, 2 cores) it measured slower than Ansible's own linear
    strategy (first + second run 504 s against 354 s, controller CPU up 10 %)."""
    if os.environ.get("RDMA_FLEET_MITOGEN", "0") != "1":
        return {}
    import ansible_mitogen  # noqa: PLC0415 only when asked for

    plugins = Path(ansible_mitogen.__file__).resolve().parent / "plugins/strategy"
    return {"ANSIBLE_STRATEGY_PLUGINS": str(plugins), "ANSIBLE_STRATEGY": "mitogen_linear"}


# All 8 leaves in one batch (the role's default is one leaf at a time, the safe order for
# a production rack): the stand-ins carry no traffic to protect. An extra var: the play's
# `serial` is templated before any host's variables exist, so an inventory value is
# never used (and the preflight refuses one).
SWITCH_BATCH = ["-e", "roce_switch_qos_serial=8"]
SWITCH_PLAY = "Apply the lossless RoCE policy on every managed switch"


def switch_batches(log: str) -> int:
    """How many batches the switch play ran in (one PLAY header each)."""
    header = f"PLAY [{SWITCH_PLAY}]"
    return sum(1 for line in Path(log).read_text().splitlines() if line.startswith(header))


def task_results(log: str, task: str) -> dict:
    """The hosts' results of one task (by its name as the log prints it): status -> count."""
    counts: dict = {}
    inside = False
    for line in Path(log).read_text().splitlines():
        if line.startswith(("TASK [", "PLAY [", "RUNNING HANDLER [")):
            inside = line.startswith(f"TASK [{task}]")
        elif inside and line[:1].isalpha() and ": [" in line:
            status = line.split(":", 1)[0]
            counts[status] = counts.get(status, 0) + 1
    return counts


def playbook(
    state: Path,
    name: str,
    args: list[str],
    playbook: str = "site.yml",
    inventory: Path | None = None,
) -> dict:
    """Run one ansible-playbook; return its figures (the stage callback's and the recap)."""
    stages = state / f"stages-{name}.json"
    env = dict(
        os.environ,
        **mitogen_env(),
        ANSIBLE_CALLBACK_PLUGINS=str(HERE / "callback_plugins"),
        ANSIBLE_CALLBACKS_ENABLED=(
            "fleet_stages,ansible.builtin.timer,ansible.posix.profile_tasks,rdma.fabric.preload"
        ),
        # The containers' connection plugin (community.docker) imported once, not in
        # every worker (rdma.fabric.preload).
        RDMA_FABRIC_PRELOAD_CONNECTIONS="community.docker.docker",
        PROFILE_TASKS_TASK_OUTPUT_LIMIT="25",
        RDMA_FLEET_STAGES=str(stages),
        RDMA_FLEET_CGROUPS=fleet_cpu_files(),
        # The project's own fact cache (ansible.cfg: jsonfile, 2 hours), in the fleet's
        # state: a run after the first finds the hosts' facts and gathers none.
        ANSIBLE_CACHE_PLUGIN="jsonfile",
        ANSIBLE_CACHE_PLUGIN_CONNECTION=str(state / "facts"),
        ANSIBLE_PIPELINING="true",
        ANSIBLE_FORCE_COLOR="0",
        ANSIBLE_NOCOLOR="1",
        PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    )
    log = state / f"{name}.log"
    started = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.run(
            [str(Path(sys.executable).parent / "ansible-playbook"),
             "-i", str(inventory or state / "inventory"), playbook, *SWITCH_BATCH, *args],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, check=False,
        ).returncode  # fmt: skip
    figures = json.loads(stages.read_text()) if stages.exists() else {}
    figures.update(
        rc=rc,
        wall=round(time.monotonic() - started, 1),
        log=str(log),
        switch_batches=switch_batches(log),
    )
    return figures


def judged_run(state: Path, name: str, args: list[str], **kwargs) -> dict:
    """playbook(), with its verification's report attached: "report", rdma_verify's
    machine-readable results.json (report.md, junit.xml and report.html beside it), or
    None when this run wrote none. An earlier run's report is removed first: only this
    run's may be judged."""
    report = state / "reports/latest/results.json"
    report.unlink(missing_ok=True)
    figures = playbook(state, name, args, **kwargs)
    figures["report"] = str(report) if report.exists() else None
    return figures


class Silencer(threading.Thread):
    """Stop one host once verify's traffic starts (a perftest test runs on a watched
    host: `ib_write_bw -d DEV`, not the `--version` probe of the health checks).

    The host is killed (docker kill: a server that crashed or lost power): a paused
    container would hang Ansible's docker exec with no timeout at all, where an SSH
    connection to a hung host ends after ansible.cfg's ServerAliveInterval.
    """

    def __init__(self, container: str, watch: list[str]):
        super().__init__(daemon=True)
        self.container, self.watch, self.done = container, watch, threading.Event()
        self.stopped_at = None

    def run(self) -> None:
        while not self.done.is_set():
            for other in self.watch:
                if sh(
                    "docker", "exec", other, "pgrep", "-f", "perftest_standin.py -d ", check=False
                ):
                    sh("docker", "kill", self.container)
                    self.stopped_at = time.time()
                    return
            time.sleep(0.5)


def plant_slow_rail(state: Path, slow: dict) -> None:
    """Only the slow rail of the fault plan: its host's perftest stand-in map says so.
    The recorded tree (the state the roles wrote into it) is left as it is, so a run
    after this one has nothing to change."""
    hosts = json.loads((state / "fleet.json").read_text())["hosts"]
    path = state / "hosts" / slow["host"] / "perftest.json"
    ports = json.loads(path.read_text())
    device = host_layout(hosts.index(slow["host"]))[slow["rail"]][0]
    ports[device]["gbps"] = round(NORMAL_GBPS * slow["fraction"], 4)
    path.write_text(json.dumps(ports, indent=1))


def plant_faults(state: Path, plan: dict) -> None:
    hosts = json.loads((state / "fleet.json").read_text())["hosts"]
    for position, name in enumerate(hosts):
        root = state / "hosts" / name
        # The tree is rewritten in place: keep the stand-ins' state beside it.
        record_host(root, name, position, plan)
    for dead in plan["dead"]:
        position = hosts.index(dead["host"])
        netdev = host_layout(position)[dead["rail"]][2]
        sh("docker", "exec", f"{PREFIX}-{dead['host']}", "ip", "link", "set", "dev", netdev, "down")


def run_harness(args: list[str], folder: Path, keep: str, judged: str) -> dict:
    """For the tests: run this script with ARGS (its figures to a file in FOLDER), keep a
    copy as .cache/KEEP (bench_fleet.py --ingest reads fleet-figures-N.json), and load the
    report of the run JUDGED (read before the state directory's next use) as "results".
    "total_s": the whole of it, the fleet up and down included."""
    out = folder / "figures.json"
    started = time.monotonic()
    subprocess.run([sys.executable, str(Path(__file__)), *args, "--out", str(out)], check=False)
    result = json.loads(out.read_text())
    result["total_s"] = round(time.monotonic() - started, 1)
    shutil.copy(out, DEFAULT_STATE.parent / keep)
    report = (result.get(judged) or {}).get("report")
    result["results"] = json.loads(Path(report).read_text()) if report else None
    return result


def leftovers() -> tuple[str, str]:
    """The containers and networks of a fleet still there (names, one a line)."""
    names = sh("docker", "ps", "-a", "--filter", f"label={LABEL}", "--format", "{{.Names}}")
    networks = sh("docker", "network", "ls", "--filter", f"label={LABEL}", "--format", "{{.Name}}")
    return names, networks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "run", "faults", "down", "all", "ci", "slices"])
    parser.add_argument("count", nargs="?", type=int, default=8)
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE)
    parser.add_argument("--faults", action="store_true", help="with all: also the fault run")
    parser.add_argument("--keep", action="store_true", help="with all: leave the fleet up")
    parser.add_argument("--out", type=Path, help="write the figures (JSON) here")
    parser.add_argument("--slices", type=int, default=4, help="with slices: the job's slices")
    parser.add_argument(
        "--verify-mode", choices=["full", "quick"], default="full",
        help="rdma_verify_mode of every run (full: every pair, N-1 rounds; quick: 2 rounds)",
    )  # fmt: skip
    args = parser.parse_args()
    state = args.state.resolve()
    if args.command == "down":
        down(state)
        return 0
    figures: dict = {}
    try:
        if args.command in ("up", "all", "ci", "slices"):
            if args.count < 8:
                parser.error("count: the fault plan needs at least 8 hosts")
            started = time.monotonic()
            up(args.count, state)
            figures["up"] = round(time.monotonic() - started, 1)
            figures["count"] = args.count
            figures["commit"] = sh("git", "-C", str(REPO), "rev-parse", "--short", "HEAD")
        if args.command in ("run", "all"):
            mode = ["-e", f"rdma_verify_mode={args.verify_mode}"]
            figures["verify_mode"] = args.verify_mode
            figures["first"] = playbook(state, "first", mode)
            figures["memory"] = fleet_memory()
            figures["second"] = playbook(state, "second", mode)
            figures["check"] = playbook(state, "check", [*mode, "--check", "--diff"])
        if args.command == "faults" or (args.command == "all" and args.faults):
            figures["faults"] = run_faults(state, ["-e", f"rdma_verify_mode={args.verify_mode}"])
        if args.command == "ci":
            figures.update(run_ci(state, args.verify_mode))
        if args.command == "slices":
            figures.update(run_slices(state, args.slices, args.verify_mode))
    finally:
        if args.out:
            args.out.write_text(json.dumps(figures, indent=1))
        print(json.dumps(figures, indent=1))
        if args.command in ("all", "ci", "slices") and not args.keep:
            down(state)
    return 0


def run_ci(state: Path, verify_mode: str) -> dict:
    """The first run, then the plan's slow rail planted and site.yml run again: the
    second run changes nothing and its verification names exactly that rail."""
    mode = ["-e", f"rdma_verify_mode={verify_mode}"]
    figures = {"verify_mode": verify_mode, "first": playbook(state, "first", mode)}
    hosts = json.loads((state / "fleet.json").read_text())["hosts"]
    slow = fault_plan(hosts)["slow"]
    plant_slow_rail(state, slow)
    figures["second"] = judged_run(state, "second", mode)
    figures["second"]["plan"] = {"slow": slow}
    figures["memory"] = fleet_memory()
    return figures


# The per-host stages (README "Running it from AWX"): what a sliced job may run.
PER_HOST_TAGS = "rdma_stack,rdma_nic,rdma_rails,roce_host_qos"


def slice_inventory(state: Path, number: int, slices: int) -> Path:
    """The inventory AWX gives slice NUMBER of SLICES (awx/main/models/inventory.py,
    get_script_data: every host of the inventory ordered by name, the slice taking
    hosts[number - 1::slices]; each group keeps only the slice's hosts, group variables
    as they are). A restricted inventory, not a --limit: the slice sees no other host."""
    whole = json.loads((state / "inventory/hosts.yml").read_text())

    def groups(node: dict):
        yield node
        for child in (node.get("children") or {}).values():
            yield from groups(child)

    names = sorted({h for g in groups(whole["all"]) for h in g.get("hosts") or {}})
    mine = set(names[number - 1 :: slices])
    for group in groups(whole["all"]):
        if "hosts" in group:
            group["hosts"] = {h: v for h, v in group["hosts"].items() if h in mine}
    inv = state / f"inventory-slice{number}"
    shutil.rmtree(inv, ignore_errors=True)
    shutil.copytree(state / "inventory/group_vars", inv / "group_vars")
    (inv / "hosts.yml").write_text(json.dumps(whole, indent=1))
    return inv


def run_slices(state: Path, slices: int, verify_mode: str) -> dict:
    """A sliced job of the per-host stages, as AWX runs one: site.yml under their tags
    once per slice, the slices side by side, each on its own part of the inventory.
    Then verify.yml in one slice with the fabric's size declared (refused before any
    test), and site.yml on the whole inventory: the sliced stages left nothing to do on
    the hosts, and the whole fabric verifies green."""
    count = json.loads((state / "fleet.json").read_text())["count"]
    inventories = [slice_inventory(state, n, slices) for n in range(1, slices + 1)]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=slices) as pool:
        runs = list(
            pool.map(
                lambda item: playbook(
                    state, f"slice{item[0]}", ["--tags", PER_HOST_TAGS], inventory=item[1]
                ),
                enumerate(inventories, start=1),
            )
        )
    figures: dict = {"slices": runs, "slices_wall": round(time.monotonic() - started, 1)}
    size = ["-e", f"rdma_verify_fabric_size={count}"]
    figures["slice_verify"] = playbook(
        state, "slice-verify", size, playbook="rdma.fabric.verify", inventory=inventories[0]
    )
    figures["whole"] = judged_run(state, "whole", [*size, "-e", f"rdma_verify_mode={verify_mode}"])
    return figures


def run_faults(state: Path, extra: list[str]) -> dict:
    hosts = json.loads((state / "fleet.json").read_text())["hosts"]
    plan = fault_plan(hosts)
    plant_faults(state, plan)
    watch = [f"{PREFIX}-{h}" for h in hosts[:2]]  # the silent host is the last one
    silencer = Silencer(f"{PREFIX}-{plan['silent']['host']}", watch)
    silencer.start()
    try:
        result = judged_run(state, "faults", extra, playbook="rdma.fabric.verify")
    finally:
        silencer.done.set()
        silencer.join(timeout=5)
    result["plan"] = plan
    result["silenced"] = silencer.stopped_at is not None
    return result


if __name__ == "__main__":
    sys.exit(main())
