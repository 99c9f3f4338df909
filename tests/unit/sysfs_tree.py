"""Build small sysfs trees that look like the RDMA part of real hosts.

The layout follows the kernel's:

    sys/class/infiniband/DEV -> ../../devices/<bus path>/infiniband/DEV   (symlink)
    sys/devices/<bus path>/infiniband/DEV/{node_type,node_guid,fw_ver,hca_type}
    sys/devices/<bus path>/infiniband/DEV/device -> ../../../<pci function>
    sys/devices/<bus path>/infiniband/DEV/ports/N/{state,phys_state,rate,link_layer,lid,sm_lid}
    sys/devices/<bus path>/infiniband/DEV/ports/N/gid_attrs/ndevs/I   (RoCE GIDs)
    sys/devices/<pci function>/net/NETDEV/dev_port
    sys/devices/virtual/infiniband/rxeN/parent                          (Soft-RoCE)

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
    # GID index -> (gid, type) for gids/N and gid_attrs/types/N.
    gids: dict[int, tuple[str, str]] = field(default_factory=dict)


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
) -> Path:
    """Create one RDMA device under root; return its (real) directory.

    pci: PCI function ("0000:1a:00.0") that owns the device, or None for a virtual
    device such as rxe. netdevs: netdev name -> dev_port (None: no dev_port file),
    created under the PCI function's net/ directory.
    """
    sys_dir = root / "sys"
    if pci is not None:
        func_dir = sys_dir / "devices" / PCI_DOMAIN / pci
        dev_dir = func_dir / "infiniband" / name
        dev_dir.mkdir(parents=True)
        _symlink(dev_dir / "device", func_dir)
        for netdev, dev_port in (netdevs or {}).items():
            net_dir = func_dir / "net" / netdev
            net_dir.mkdir(parents=True)
            _write(net_dir / "dev_port", None if dev_port is None else str(dev_port))
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
    return dev_dir


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
    )


def add_cx6dx_roce(
    root: Path,
    name: str = "mlx5_1",
    pci: str = "0000:1b:00.0",
    netdev: str = "enp27s0f0np0",
    *,
    up: bool = True,
    node_guid: str = "946d:ae03:00c2:b690",
) -> Path:
    """ConnectX-6 Dx (MT4125) RoCE port: link layer Ethernet, GIDs carry the netdev."""
    port = Port(
        state="4: ACTIVE" if up else "1: DOWN",
        phys_state="5: LinkUp" if up else "3: Disabled",
        rate="100 Gb/sec (2X HDR)" if up else "40 Gb/sec (4X QDR)",
        link_layer="Ethernet",
        gid_ndevs={0: netdev, 1: netdev},
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
    )


def add_rxe(root: Path, name: str = "rxe0", parent: str = "ens4", *, with_gids: bool = False):
    """Soft-RoCE link: a virtual device with a `parent` file and no device/net.

    In a VM on virtio-net (speed unknown) rxe reports the 1X SDR rate.
    """
    port = Port(
        rate="2.5 Gb/sec (1X SDR)",
        link_layer="Ethernet",
        gid_ndevs={0: parent} if with_gids else {},
    )
    return add_device(
        root,
        name,
        {1: port},
        parent=parent,
        node_guid="5054:00ff:fe12:3456",
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
