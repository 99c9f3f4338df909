# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read RDMA devices from sysfs (/sys/class/infiniband and /sys/class/net).

The kernel exposes, per device ``DEV`` and port ``N``:
  /sys/class/infiniband/DEV/node_type            "1: CA"
  /sys/class/infiniband/DEV/node_guid            "b8ce:f603:00a1:2b3c"
  /sys/class/infiniband/DEV/fw_ver, hca_type
  /sys/class/infiniband/DEV/ports/N/state        "4: ACTIVE"
  /sys/class/infiniband/DEV/ports/N/phys_state   "5: LinkUp"
  /sys/class/infiniband/DEV/ports/N/rate         "400 Gb/sec (4X NDR)"
  /sys/class/infiniband/DEV/ports/N/link_layer   "InfiniBand" | "Ethernet"
  /sys/class/infiniband/DEV/ports/N/gid_attrs/ndevs/I   netdev of GID I (RoCE)
  /sys/class/infiniband/DEV/device/net/NETDEV    netdevs of the PCI function
  /sys/class/infiniband/DEV/parent               parent netdev of an rxe device
Every reader takes a ``root`` so tests can point it at a tree of their own.
"""

from __future__ import annotations

import os
import re

SYSFS_IB = "sys/class/infiniband"

_RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*Gb/sec")


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


# The same reader for other module_utils (roce_qos reads RoCE knobs with it).
read_attr = _read


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def bond_members(root, iface):
    """The members of a bond master (RoCE LAG: DCB is set on them), else []."""
    text = _read(os.path.join(root, "sys/class/net", iface, "bonding", "slaves"))
    return text.split() if text else []


def read_bonds(root="/"):
    """Every bond master of the host with its members, {"bond0": ["eth2", "eth3"]}."""
    net = os.path.join(root, "sys/class/net")
    return {
        name: bond_members(root, name)
        for name in _listdir(net)
        if os.path.isdir(os.path.join(net, name, "bonding"))
    }


def split_numbered(value):
    """'4: ACTIVE' -> (4, 'ACTIVE'); None or junk -> (None, value)."""
    if value is None:
        return None, None
    number, sep, name = value.partition(":")
    if sep and number.strip().isdigit():
        return int(number.strip()), name.strip()
    return None, value.strip()


def parse_rate(value):
    """'400 Gb/sec (4X NDR)' -> 400.0; '2.5 Gb/sec (1X SDR)' -> 2.5; else None."""
    if not value:
        return None
    match = _RATE_RE.match(value)
    return float(match.group(1)) if match else None


_RATE_DETAIL_RE = re.compile(r"\((\d+X)\s+([A-Z0-9]+)\)")

# Data rate per lane after line encoding, over the rate sysfs prints. SDR/DDR/QDR use
# 8b/10b (sysfs prints the signalling rate: 4X QDR "40 Gb/sec" carries 32 Gb/s); FDR
# signals at 14.0625 Gb/s with 64b/66b (sysfs "56 Gb/sec" for 4X: 54.5 Gb/s of data).
# FDR10 and EDR onwards: sysfs already prints the data rate (4X EDR 25.78125 Gb/s lanes
# -> "100 Gb/sec"), see ib_query_port / ib_speed in the kernel's ib_verbs.h.
ENCODING = {"SDR": 0.8, "DDR": 0.8, "QDR": 0.8, "FDR": 64 / 66}


def parse_rate_detail(value):
    """'200 Gb/sec (4X HDR)' -> {gbps: 200.0, width: '4X', speed: 'HDR', usable_gbps: 200.0};
    '40 Gb/sec (4X QDR)' -> usable 32.0. None when the text has no rate."""
    gbps = parse_rate(value)
    if gbps is None:
        return None
    match = _RATE_DETAIL_RE.search(value)
    width, speed = (match.group(1), match.group(2)) if match else (None, None)
    usable = round(gbps * ENCODING.get(speed or "", 1.0), 3)
    return {"gbps": gbps, "width": width, "speed": speed, "usable_gbps": usable}


def _port_netdev(dev_dir, port, link_layer, pci_netdevs):
    """The netdev that carries this port's traffic, or None."""
    ndev = _read(os.path.join(dev_dir, "ports", str(port), "gid_attrs", "ndevs", "0"))
    if ndev:
        return ndev
    parent = _read(os.path.join(dev_dir, "parent"))
    if parent:
        return parent
    # PCI function: pick the netdev whose dev_port (0-based) matches this port.
    for netdev, dev_port in pci_netdevs:
        if dev_port is None or dev_port == port - 1:
            return netdev
    return None


_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def read_gids(port_dir):
    """Populated GID table entries: [{index, gid, type, netdev, ipv4}], by index.

    RoCE ports fill gids/N with IPv6 or IPv4-mapped (::ffff:a.b.c.d) addresses and
    gid_attrs/types/N with "IB/RoCE v1" or "RoCE v2"; never assume an index.
    """
    entries = []
    names = [n for n in _listdir(os.path.join(port_dir, "gids")) if n.isdigit()]
    for index in sorted(names, key=int):
        gid = _read(os.path.join(port_dir, "gids", index))
        if not gid or gid == _ZERO_GID:
            continue
        groups = gid.split(":")
        ipv4 = None
        if len(groups) == 8 and groups[:5] == ["0000"] * 5 and groups[5] == "ffff":
            raw = groups[6] + groups[7]
            ipv4 = ".".join(str(int(raw[i : i + 2], 16)) for i in range(0, 8, 2))
        entries.append(
            {
                "index": int(index),
                "gid": gid,
                "type": _read(os.path.join(port_dir, "gid_attrs", "types", index)),
                "netdev": _read(os.path.join(port_dir, "gid_attrs", "ndevs", index)),
                "ipv4": ipv4,
            }
        )
    return entries


def roce_v2_ipv4_gids(port):
    """Every RoCE v2 GID carrying an IPv4 address of a port record, by index."""
    return [
        entry
        for entry in port.get("gids") or []
        if entry["ipv4"] and (entry["type"] or "").lower() == "roce v2"
    ]


def roce_v2_ipv4_gid(port):
    """The first RoCE v2 GID carrying an IPv4 address of a port record, or None."""
    gids = roce_v2_ipv4_gids(port)
    return gids[0] if gids else None


def _pci_address(dev_dir):
    """The PCI function behind an RDMA device (``0000:17:00.0``); None for software devices."""
    target = os.path.basename(os.path.realpath(os.path.join(dev_dir, "device")))
    return target.lower() if PCI_ADDRESS_RE.match(target) and ":" in target[:5] else None


def _driver(dev_dir):
    """The kernel driver of the device's PCI function (mlx5_core, mlx4_core), or None."""
    link = os.path.join(dev_dir, "device", "driver")
    return os.path.basename(os.path.realpath(link)) if os.path.islink(link) else None


def read_device(root, name):
    dev_dir = os.path.join(root, SYSFS_IB, name)
    net_dir = os.path.join(dev_dir, "device", "net")
    pci_netdevs = []
    for netdev in _listdir(net_dir):
        dev_port = _read(os.path.join(net_dir, netdev, "dev_port"))
        pci_netdevs.append((netdev, int(dev_port) if dev_port and dev_port.isdigit() else None))
    node_type_num, node_type = split_numbered(_read(os.path.join(dev_dir, "node_type")))
    ports = []
    # Numeric order: a device with 10+ ports (mlx5 representors) lists "10" before "2".
    port_names = [p for p in _listdir(os.path.join(dev_dir, "ports")) if p.isdigit()]
    for port_name in sorted(port_names, key=int):
        port = int(port_name)
        port_dir = os.path.join(dev_dir, "ports", port_name)
        state_num, state = split_numbered(_read(os.path.join(port_dir, "state")))
        phys_num, phys_state = split_numbered(_read(os.path.join(port_dir, "phys_state")))
        rate_text = _read(os.path.join(port_dir, "rate"))
        link_layer = _read(os.path.join(port_dir, "link_layer"))
        ports.append(
            {
                "port": port,
                "state": state,
                "state_num": state_num,
                "phys_state": phys_state,
                "phys_state_num": phys_num,
                "rate": rate_text,
                "rate_gbps": parse_rate(rate_text),
                "link_layer": link_layer,
                "lid": _read(os.path.join(port_dir, "lid")),
                "sm_lid": _read(os.path.join(port_dir, "sm_lid")),
                "netdev": _port_netdev(dev_dir, port, link_layer, pci_netdevs),
                "gids": read_gids(port_dir) if link_layer == "Ethernet" else [],
            }
        )
    return {
        "name": name,
        "node_type": node_type,
        "node_type_num": node_type_num,
        "node_guid": _read(os.path.join(dev_dir, "node_guid")),
        "fw_ver": _read(os.path.join(dev_dir, "fw_ver")),
        "hca_type": _read(os.path.join(dev_dir, "hca_type")),
        # mlx5's board_id is the PSID (the firmware image's board identity).
        "board_id": _read(os.path.join(dev_dir, "board_id")),
        "pcie": read_pcie_link(os.path.join(dev_dir, "device")),
        "local_cpulist": _read(os.path.join(dev_dir, "device", "local_cpulist")),
        "numa_node": read_int(os.path.join(dev_dir, "device", "numa_node")),
        "pci_address": _pci_address(dev_dir),
        "driver": _driver(dev_dir),
        "netdevs": [netdev for netdev, _unused in pci_netdevs],
        "ports": ports,
    }


_GTS_RE = re.compile(r"([0-9.]+)\s*GT/s")


def read_pcie_link(function_dir):
    """{speed_gts, width, max_speed_gts, max_width} of a PCI function (LnkSta and
    LnkCap as the kernel shows them: current_link_speed "16.0 GT/s PCIe"), or None."""

    def speed(name):
        match = _GTS_RE.search(_read(os.path.join(function_dir, name)) or "")
        return float(match.group(1)) if match else None

    link = {
        "speed_gts": speed("current_link_speed"),
        "width": read_int(os.path.join(function_dir, "current_link_width")),
        "max_speed_gts": speed("max_link_speed"),
        "max_width": read_int(os.path.join(function_dir, "max_link_width")),
    }
    return link if any(v is not None for v in link.values()) else None


NVIDIA_VENDOR = "0x10de"


def read_gpus(root="/"):
    """NVIDIA GPUs on the PCI bus ({pci, numa_node}) and whether nvidia_peermem is loaded."""
    bus = os.path.join(root, "sys/bus/pci/devices")
    gpus = []
    for function in _listdir(bus):
        vendor = _read(os.path.join(bus, function, "vendor"))
        klass = _read(os.path.join(bus, function, "class")) or ""
        if vendor == NVIDIA_VENDOR and klass.startswith(("0x0300", "0x0302")):
            gpus.append(
                {"pci": function, "numa_node": read_int(os.path.join(bus, function, "numa_node"))}
            )
    return {
        "nvidia_gpus": gpus,
        "nvidia_peermem": os.path.isdir(os.path.join(root, "sys/module/nvidia_peermem")),
    }


def read_devices(root="/"):
    """All RDMA devices under root, sorted by name; [] when there are none."""
    return [read_device(root, name) for name in _listdir(os.path.join(root, SYSFS_IB))]


def flat_ports(devices):
    """Every port of every device, each with its device's name added as `device`."""
    return [dict(port, device=device["name"]) for device in devices for port in device["ports"]]


def read_int(path):
    """An integer sysfs attribute, or None when it is missing or not a number."""
    try:
        return int(_read(path))
    except (TypeError, ValueError):
        return None


def netdevs_by_link_layer(devices):
    """{'InfiniBand': [...], 'Ethernet': [...]} of device/port/netdev records."""
    out = {}
    for device in devices:
        for port in device["ports"]:
            out.setdefault(port["link_layer"] or "unknown", []).append(
                {"device": device["name"], "port": port["port"], "netdev": port["netdev"]}
            )
    return out


PCI_ADDRESS_RE = re.compile(r"^(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])$")


class DeviceNotFound(ValueError):
    """The device a firmware tool should open is not on this host; the message says why."""


def pci_target(root, device):
    """What a firmware tool (mstconfig, mstflint) opens for ``device``.

    ``device`` is a PCI address (``0000:3b:00.0`` or ``3b:00.0``), an RDMA device name
    (``mlx5_0``, resolved through ``sys/class/infiniband/NAME/device``) or a device path
    (``/dev/mst/mt4119_pciconf0``). Returns the full PCI address, or the path itself.
    Raises DeviceNotFound naming the device (and the RDMA devices present) otherwise.
    """
    device = device.strip()
    if device.startswith("/"):
        if not os.path.exists(device):
            raise DeviceNotFound(f"device {device}: no such device path")
        return device
    pci = PCI_ADDRESS_RE.match(device)
    if pci:
        address = f"{(pci.group(1) or '0000').lower()}:{pci.group(2).lower()}"
        if not os.path.isdir(os.path.join(root, "sys/bus/pci/devices", address)):
            raise DeviceNotFound(f"device {device}: this host has no PCI function {address}")
        return address
    ib_dir = os.path.join(root, SYSFS_IB)
    if not os.path.isdir(os.path.join(ib_dir, device)):
        present = _listdir(ib_dir)
        raise DeviceNotFound(
            f"device {device}: no such RDMA device and not a PCI address; "
            f"RDMA devices on this host: {', '.join(present) or 'none'}"
        )
    link = os.path.join(ib_dir, device, "device")
    address = os.path.basename(os.path.realpath(link)) if os.path.exists(link) else ""
    if not PCI_ADDRESS_RE.match(address):
        raise DeviceNotFound(f"device {device}: not a PCI device (a Soft-RoCE link?)")
    return address


# Error and congestion counters whose increase during a test is reported (port
# counters: IBA PortCounters as the kernel exposes them; hw_counters: mlx5's names).
DELTA_COUNTERS = (
    "link_downed",
    "link_error_recovery",
    "symbol_error",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_xmit_discards",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
    "rnr_nak_retry_err",
    "implied_nak_seq_err",
    "np_cnp_sent",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
)


# Widths of the IBA PortCounters attribute's error counters (bits), as the kernel's
# ports/N/counters expose them: a counter at its maximum stops counting (saturates), so
# its delta reads 0 whatever happens. perfquery -R (or -x -R) clears them.
COUNTER_BITS = {
    "symbol_error": 16,
    "link_error_recovery": 8,
    "link_downed": 8,
    "port_rcv_errors": 16,
    "port_rcv_remote_physical_errors": 16,
    "port_rcv_switch_relay_errors": 16,
    "port_xmit_discards": 16,
    "port_xmit_constraint_errors": 8,
    "port_rcv_constraint_errors": 8,
    "local_link_integrity_errors": 4,
    "excessive_buffer_overrun_errors": 4,
    "VL15_dropped": 16,
}


def saturated_counters(values):
    """The names, sorted, of the PortCounters error counters at their maximum."""
    return sorted(
        name
        for name, bits in COUNTER_BITS.items()
        if isinstance((values or {}).get(name), int) and values[name] >= (1 << bits) - 1
    )


def read_port_counters(root, ports):
    """{(device, port): {counter: value}} of counters/ and hw_counters/ of each port
    (hw_counters at the device level too, as older kernels keep them there)."""
    out = {}
    for device, port in ports:
        values = {}
        dev_dir = os.path.join(root, SYSFS_IB, device)
        port_dir = os.path.join(dev_dir, "ports", str(port))
        for folder in (
            os.path.join(dev_dir, "hw_counters"),
            os.path.join(port_dir, "counters"),
            os.path.join(port_dir, "hw_counters"),
        ):
            for name in _listdir(folder):
                if name in DELTA_COUNTERS:
                    value = read_int(os.path.join(folder, name))
                    if value is not None:
                        values[name] = value
        out[(device, str(port))] = values
    return out


def port_counter_deltas(before, after):
    """{(device, port): {counter: increase}}, only the counters that increased."""
    out = {}
    for key, values in after.items():
        old = before.get(key) or {}
        grew = {n: v - old[n] for n, v in values.items() if n in old and v > old[n]}
        out[key] = grew
    return out
