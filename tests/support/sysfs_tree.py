"""Build small sysfs trees that look like the RDMA part of real hosts.

The layout follows the kernel's:

    sys/class/infiniband/DEV -> ../../devices/<bus path>/infiniband/DEV   (symlink)
    sys/devices/<bus path>/infiniband/DEV/{node_type,node_guid,fw_ver,hca_type}
    sys/devices/<bus path>/infiniband/DEV/device -> ../../../<pci function>
    sys/devices/<bus path>/infiniband/DEV/ports/N/{state,phys_state,rate,link_layer,lid,sm_lid}
    sys/devices/<bus path>/infiniband/DEV/ports/N/gid_attrs/ndevs/I   (RoCE GIDs)
    sys/devices/<bus path>/infiniband/DEV/ports/N/gids/I, gid_attrs/types/I
    sys/devices/<bus path>/infiniband/DEV/ports/N/counters/NAME         (PMA counters)
    sys/devices/<pci function>/net/NETDEV/{dev_port,mtu}
    sys/devices/virtual/infiniband/rxeN/parent                          (Soft-RoCE)
    sys/class/net/NETDEV -> ../../devices/<device path>/net/NETDEV

Every value ends with a newline, as sysfs attributes do.

The values of the canned hosts below are modelled on real captured outputs
(ibstat, ibstatus, ibdev2netdev, rdma link) of H100/A100 nodes with ConnectX-7
InfiniBand NDR ports and ConnectX-6 Dx Ethernet ports, and of Soft-RoCE links;
sysfs prints the same facts in its own notation (GUID "946d:ae03:00cd:e72c" for
ibstat's 0x946dae0300cde72c, LID "0x4b" for ibstat's Base lid 75).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PCI_DOMAIN = "pci0000:00"


@dataclass
class Port:
    state: str = "4: ACTIVE"
    phys_state: str = "5: LinkUp"
    rate: str | None = "400 Gb/sec (4X NDR)"
    link_layer: str | None = "InfiniBand"
    lid: str = "0x0"
    sm_lid: str = "0x0"
    # GID index -> netdev name (RoCE and rxe ports; the kernel fills these).
    gid_ndevs: dict[int, str] = field(default_factory=dict)
    # InfiniBand ports have gid_attrs/ndevs/N too, but reading them fails (an IB GID
    # has no netdev). A directory in place of the file makes open() fail the same way.
    gid_ndev_unreadable: bool = False
    # GID index -> (gid, type) for gids/N and gid_attrs/types/N; a type of None writes
    # no types/N (the kernel's types/N of an empty, all-zero entry fails to read).
    gids: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    # counter name -> value under ports/N/counters (the PMA counters perfquery reads).
    # None: no counters directory at all, as on Soft-RoCE (rxe has no process_mad, so
    # the kernel creates none). A value of None makes the file unreadable (a directory).
    counters: dict[str, int | str | None] | None = None


def _write(path: Path, value: str | None) -> None:
    if value is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n", encoding="utf-8")


def _symlink(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def add_device(
    root: Path,
    name: str,
    ports: dict[int, Port],
    *,
    pci: str | None = None,
    netdevs: dict[str, int | None] | None = None,
    parent: str | None = None,
    node_type: str = "1: CA",
    node_guid: str | None = None,
    fw_ver: str | None = None,
    hca_type: str | None = None,
    mtu: int | None = None,
    driver: str | None = None,
) -> Path:
    """Create one RDMA device under root; return its (real) directory.

    pci: PCI function ("0000:1a:00.0") that owns the device, or None for a virtual
    device such as rxe. netdevs: netdev name -> dev_port (None: no dev_port file),
    created under the PCI function's net/ directory, each with this mtu (None: no
    mtu file). driver: the PCI function's driver (mlx5_core), a symlink as the kernel
    makes it.
    """
    sys_dir = root / "sys"
    if pci is not None:
        func_dir = sys_dir / "devices" / PCI_DOMAIN / pci
        dev_dir = func_dir / "infiniband" / name
        dev_dir.mkdir(parents=True)
        _symlink(dev_dir / "device", func_dir)
        if driver is not None:
            # /sys/bus/pci/devices/F/driver -> /sys/bus/pci/drivers/mlx5_core
            driver_dir = sys_dir / "bus" / "pci" / "drivers" / driver
            driver_dir.mkdir(parents=True, exist_ok=True)
            _symlink(func_dir / "driver", driver_dir)
        for netdev, dev_port in (netdevs or {}).items():
            net_dir = func_dir / "net" / netdev
            net_dir.mkdir(parents=True)
            _write(net_dir / "dev_port", None if dev_port is None else str(dev_port))
            _write(net_dir / "mtu", None if mtu is None else str(mtu))
            _symlink(sys_dir / "class" / "net" / netdev, net_dir)
    else:
        if netdevs:
            raise ValueError("a virtual device has no PCI function to hold netdevs")
        dev_dir = sys_dir / "devices" / "virtual" / "infiniband" / name
        dev_dir.mkdir(parents=True)
    _symlink(sys_dir / "class" / "infiniband" / name, dev_dir)

    _write(dev_dir / "node_type", node_type)
    _write(dev_dir / "node_guid", node_guid)
    _write(dev_dir / "fw_ver", fw_ver)
    _write(dev_dir / "hca_type", hca_type)
    _write(dev_dir / "parent", parent)
    for number, port in ports.items():
        port_dir = dev_dir / "ports" / str(number)
        port_dir.mkdir(parents=True)
        _write(port_dir / "state", port.state)
        _write(port_dir / "phys_state", port.phys_state)
        _write(port_dir / "rate", port.rate)
        _write(port_dir / "link_layer", port.link_layer)
        _write(port_dir / "lid", port.lid)
        _write(port_dir / "sm_lid", port.sm_lid)
        ndevs_dir = port_dir / "gid_attrs" / "ndevs"
        ndevs_dir.mkdir(parents=True)
        for index, netdev in port.gid_ndevs.items():
            _write(ndevs_dir / str(index), netdev)
        if port.gid_ndev_unreadable:
            (ndevs_dir / "0").mkdir()
        (port_dir / "gids").mkdir()
        (port_dir / "gid_attrs" / "types").mkdir()
        for index, (gid, kind) in port.gids.items():
            _write(port_dir / "gids" / str(index), gid)
            _write(port_dir / "gid_attrs" / "types" / str(index), kind)
        if port.counters is not None:
            counters_dir = port_dir / "counters"
            counters_dir.mkdir()
            for name, value in port.counters.items():
                if value is None:
                    (counters_dir / name).mkdir()
                else:
                    _write(counters_dir / name, str(value))
    return dev_dir


def add_netdev(
    root: Path, name: str, mtu: int, *, device: str = f"{PCI_DOMAIN}/0000:00:04.0/virtio1"
) -> Path:
    """A netdev of no RDMA device (the parent of an rxe link): its mtu and class link.

    device: the path under sys/devices that owns it; the default is where a VM's
    virtio-net NIC sits.
    """
    net_dir = root / "sys" / "devices" / device / "net" / name
    net_dir.mkdir(parents=True)
    _write(net_dir / "mtu", str(mtu))
    _symlink(root / "sys" / "class" / "net" / name, net_dir)
    return net_dir


ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def roce_gids(interface_id: str, ipv4: str | None = None) -> dict[int, tuple[str, str]]:
    """The GID table the kernel fills for a RoCE netdev, as Port.gids.

    Every address of the netdev gets a RoCE v1 entry and a RoCE v2 entry: first the
    IPv6 link-local one (fe80::<interface_id>, present whenever the netdev is up), then
    the IPv4 address, IPv4-mapped (::ffff:a.b.c.d). sysfs prints each GID in full
    (eight groups of four hex digits) and each type as "IB/RoCE v1" or "RoCE v2".
    """
    link_local = f"fe80:0000:0000:0000:{interface_id}"
    gids = {0: (link_local, "IB/RoCE v1"), 1: (link_local, "RoCE v2")}
    if ipv4 is not None:
        a, b, c, d = (int(octet) for octet in ipv4.split("."))
        mapped = f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"
        gids[2] = (mapped, "IB/RoCE v1")
        gids[3] = (mapped, "RoCE v2")
    return gids


def _ndevs(gids: dict[int, tuple[str, str | None]] | None, netdev: str) -> dict[int, str]:
    """gid_attrs/ndevs of a GID table: the netdev of every populated (typed) entry."""
    return {index: netdev for index, (_, kind) in (gids or {}).items() if kind is not None}


# --- canned hosts -------------------------------------------------------------------


def add_cx7_ib(root: Path, name: str = "mlx5_0", pci: str = "0000:1a:00.0") -> Path:
    """ConnectX-7 (MT4129) InfiniBand NDR port, ACTIVE/LinkUp, IPoIB netdev ibp26s0."""
    return add_device(
        root,
        name,
        {
            1: Port(
                rate="400 Gb/sec (4X NDR)",
                link_layer="InfiniBand",
                lid="0x4b",
                sm_lid="0x14e",
                gid_ndev_unreadable=True,
            )
        },
        pci=pci,
        netdevs={"ibp26s0": 0},
        node_guid="946d:ae03:00cd:e72c",
        fw_ver="28.39.1002",
        hca_type="MT4129",
        mtu=4092,
    )


def add_cx6dx_roce(
    root: Path,
    name: str = "mlx5_1",
    pci: str = "0000:1b:00.0",
    netdev: str = "enp27s0f0np0",
    *,
    up: bool = True,
    node_guid: str = "946d:ae03:00c2:b690",
    gids: dict[int, tuple[str, str | None]] | None = None,
    mtu: int = 1500,
    counters: dict[str, int | str | None] | None = None,
) -> Path:
    """ConnectX-6 Dx (MT4125) RoCE port: link layer Ethernet, GIDs carry the netdev.

    gids: the GID table (roce_gids() builds the kernel's); None leaves gids/ empty.
    """
    port = Port(
        state="4: ACTIVE" if up else "1: DOWN",
        phys_state="5: LinkUp" if up else "3: Disabled",
        rate="100 Gb/sec (2X HDR)" if up else "40 Gb/sec (4X QDR)",
        link_layer="Ethernet",
        gid_ndevs={0: netdev, 1: netdev} | _ndevs(gids, netdev),
        gids=gids or {},
        counters=counters,
    )
    return add_device(
        root,
        name,
        {1: port},
        pci=pci,
        netdevs={netdev: 0},
        node_guid=node_guid,
        fw_ver="22.38.1002",
        hca_type="MT4125",
        mtu=mtu,
    )


RXE_NODE_GUID = "5054:00ff:fe12:3456"


def add_rxe(
    root: Path,
    name: str = "rxe0",
    parent: str = "ens4",
    *,
    with_gids: bool = False,
    ipv4: str | None = None,
    mtu: int | None = None,
    state: str = "4: ACTIVE",
    phys_state: str = "5: LinkUp",
):
    """Soft-RoCE link: a virtual device with a `parent` file and no device/net.

    In a VM on virtio-net (speed unknown) rxe reports the 1X SDR rate. ipv4: fill the
    GID table as the kernel does for a parent with this address (implies with_gids).
    mtu: also create the parent netdev with this MTU. rxe has no port counters.
    """
    gids = roce_gids(RXE_NODE_GUID, ipv4) if ipv4 is not None else {}
    port = Port(
        state=state,
        phys_state=phys_state,
        rate="2.5 Gb/sec (1X SDR)",
        link_layer="Ethernet",
        gid_ndevs=_ndevs(gids, parent) if gids else ({0: parent} if with_gids else {}),
        gids=gids,
    )
    if mtu is not None:
        add_netdev(root, parent, mtu)
    return add_device(
        root,
        name,
        {1: port},
        parent=parent,
        node_guid=RXE_NODE_GUID,
        fw_ver="",
    )


def add_dual_port_ib(root: Path, netdevs: dict[str, int] | None = None) -> Path:
    """ConnectX-3 VPI (mlx4, MT4099) with two InfiniBand FDR ports on one PCI function.

    Both IPoIB netdevs sit under the same device/net; the kernel tells them apart
    by dev_port (port number - 1).
    """
    ports = {
        1: Port(rate="56 Gb/sec (4X FDR)", lid="0x5", sm_lid="0x1", gid_ndev_unreadable=True),
        2: Port(rate="56 Gb/sec (4X FDR)", lid="0x6", sm_lid="0x1", gid_ndev_unreadable=True),
    }
    return add_device(
        root,
        "mlx4_0",
        ports,
        pci="0000:05:00.0",
        netdevs=netdevs if netdevs is not None else {"ibp5s0": 0, "ibp5s0d1": 1},
        node_guid="f452:1403:0007:4f10",
        fw_ver="2.42.5000",
        hca_type="MT4099",
    )


def build_mixed_host(root: Path) -> Path:
    """H100-style node: CX-7 IB rails plus a dual-port CX-6 Dx, one Ethernet port down."""
    add_cx7_ib(root, "mlx5_0", "0000:1a:00.0")
    add_cx6dx_roce(root, "mlx5_1", "0000:1b:00.0", "enp27s0f0np0")
    add_cx6dx_roce(
        root, "mlx5_2", "0000:1b:00.1", "enp27s0f1np1", up=False, node_guid="946d:ae03:00c2:b691"
    )
    add_device(
        root,
        "mlx5_10",
        {1: Port(rate="400 Gb/sec (4X NDR)", lid="0x33c", sm_lid="0x14e")},
        pci="0000:cc:00.0",
        netdevs={"ibp204s0": 0},
        node_guid="946d:ae03:00cd:e884",
        fw_ver="28.39.1002",
        hca_type="MT4129",
    )
    return root


def add_pci_bus_entry(root: Path, pci: str) -> Path:
    """sys/bus/pci/devices/PCI -> the function's directory (created if missing)."""
    function = root / "sys/devices" / PCI_DOMAIN / pci
    function.mkdir(parents=True, exist_ok=True)
    link = root / "sys/bus/pci/devices" / pci
    _symlink(link, function)
    return link


def build_connectx_roce_host(root: Path, pci: str = "0000:1b:00.0") -> Path:
    """A host with a ConnectX-6 Dx (mlx5_0 on PCI) on its PCI bus and a Soft-RoCE link rxe0."""
    add_cx6dx_roce(root, "mlx5_0", pci=pci)
    add_rxe(root, "rxe0", "ens4")
    add_pci_bus_entry(root, pci)
    return root
