#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rdma_health_info
short_description: Gather what a fabric health check needs from one host, in one call
description:
  - Every RDMA port (as M(rdma.fabric.rdma_devices_info) reads it from sysfs) with, added,
    its netdev MTU, its active and maximum MTU (from C(ibv_devinfo)), its port counters
    (C(/sys/class/infiniband/DEV/ports/N/counters), the counters perfquery reads) and
    its RoCE v2 IPv4 GID.
  - The perftest version (C(ib_write_bw --version)), to compare across hosts.
  - Each device's node GUID, firmware version and PSID (C(board_id)), PCI function,
    PCIe link (current against capable speed and width), local CPUs and NUMA node
    (-1 - none given, as on one socket or in a VM), and whether C(numactl) is installed; the
    NVIDIA GPUs on the PCI bus and whether C(nvidia_peermem) is loaded; the kernel's
    boot id, so that two inventory names of one machine are found.
  - Reads only; never changes the host. Runs in check mode.
version_added: 0.2.0
author: rdma-fabric contributors (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.sysfs
  - rdma.fabric.sysfs.read_only
"""

EXAMPLES = r"""
- name: Gather the health facts of the RDMA ports
  rdma.fabric.rdma_health_info:
  register: health
"""

RETURN = r"""
ports:
  description: Every port of every device, sorted by device and port.
  returned: always
  type: list
  elements: dict
  sample:
    - device: rxe0
      port: 1
      state: ACTIVE
      phys_state: LinkUp
      rate_gbps: 10.0
      link_layer: Ethernet
      netdev: eth1
      netdev_mtu: 1500
      active_mtu: 1024
      max_mtu: 4096
      sm_lid: "0"
      roce_v2_gid: {index: 1, gid: "0000:0000:0000:0000:0000:ffff:c000:020b", ipv4: 192.0.2.11}
      counters: {}
perftest_version:
  description: What C(ib_write_bw --version) reports, or null when perftest is missing.
  returned: always
  type: str
  sample: "6.15"
devices:
  description: Every RDMA device, its ports' link layer and netdev (what rails bind to).
  returned: always
  type: list
  elements: dict
  sample:
    - name: mlx5_0
      node_guid: "b8ce:f603:00a1:2b3c"
      fw_ver: "28.39.1002"
      hca_type: MT4129
      board_id: MT_0000000838
      pci_address: "0000:17:00.0"
      pcie: {speed_gts: 32.0, width: 16, max_speed_gts: 32.0, max_width: 16}
      local_cpulist: "0-55,112-167"
      numa_node: 0
      ports: [{port: 1, link_layer: InfiniBand, netdev: ibp23s0}]
gpus:
  description:
    - NVIDIA GPUs on the PCI bus, whether nvidia_peermem is loaded, whether perftest was
      built with CUDA (its help lists C(--use_cuda)), and per RDMA device the nearest GPU
      from C(nvidia-smi topo -m) (PIX < PXB < PHB < NODE < SYS).
  returned: always
  type: dict
  sample:
    nvidia_gpus: [{pci: "0000:18:00.0", numa_node: 0}]
    nvidia_peermem: true
    perftest_cuda: true
    nearest: {mlx5_0: {gpu: 0, link: PXB}}
numactl:
  description:
    - Where C(numactl) is on this host, or null; with it and a device's C(numa_node),
      rdma_verify binds each perftest's CPUs and memory to the HCA's NUMA node.
  returned: always
  type: str
  sample: /usr/bin/numactl
boot_id:
  description: C(/proc/sys/kernel/random/boot_id), one value per running kernel.
  returned: always
  type: str
  sample: 5f0c3f2e-3c1b-4f7e-9a55-0d8f6f4f2a10
problems:
  description: Tools that could not run, each as one line.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.ibv_devinfo import parse_ibv_devinfo
from ansible_collections.rdma.fabric.plugins.module_utils.nvidia_topo import (
    nearest_gpus,
    parse_topo,
)
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_version
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    SYSFS_IB,
    flat_ports,
    read_attr,
    read_devices,
    read_gpus,
    read_int,
    roce_v2_ipv4_gid,
)


def _one_line(text):
    """A tool's message as one line: its non-blank lines joined by '; '."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return "; ".join(lines) or "no output"


def _counters(root, device, port):
    folder = os.path.join(root, SYSFS_IB, device, "ports", str(port), "counters")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    values = {name: read_int(os.path.join(folder, name)) for name in names}
    return {name: value for name, value in values.items() if value is not None}


def _device_summary(device):
    keys = (
        "name",
        "node_guid",
        "fw_ver",
        "hca_type",
        "board_id",
        "pci_address",
        "pcie",
        "local_cpulist",
        "numa_node",
    )
    out = {key: device.get(key) for key in keys}
    out["ports"] = [
        {"port": p["port"], "link_layer": p["link_layer"], "netdev": p["netdev"]}
        for p in device["ports"]
    ]
    return out


def main():
    module = AnsibleModule(
        argument_spec={"sysfs_root": {"type": "path", "default": "/"}},
        supports_check_mode=True,
    )
    root = module.params["sysfs_root"]
    problems = []
    devinfo = {}
    ibv_devinfo = module.get_bin_path("ibv_devinfo")
    if ibv_devinfo:
        rc, out, err = module.run_command([ibv_devinfo])
        devinfo = parse_ibv_devinfo(out)
        if rc != 0 and not devinfo:
            problems.append(f"ibv_devinfo failed (rc {rc}): {_one_line(err or out)}")
    else:
        problems.append("ibv_devinfo not found (libibverbs-utils / rdma-core)")
    version = None
    perftest_cuda = None
    perftest = module.get_bin_path("ib_write_bw")
    if perftest:
        # perftest exits 1 after printing its version.
        _rc, out, err = module.run_command([perftest, "--version"])
        version = parse_version(out + "\n" + err)
        # perftest lists --use_cuda in its help only when built with CUDA.
        _rc, out, err = module.run_command([perftest, "--help"])
        perftest_cuda = "use_cuda" in out + err
    else:
        problems.append("ib_write_bw not found (perftest)")
    ports = []
    devices = read_devices(root)
    for port in flat_ports(devices):
        info = devinfo.get(port["device"], {}).get("ports", {}).get(port["port"], {})
        netdev = port["netdev"]
        ports.append(
            dict(
                port,
                netdev_mtu=read_int(os.path.join(root, "sys/class/net", netdev or "-", "mtu")),
                active_mtu=info.get("active_mtu"),
                max_mtu=info.get("max_mtu"),
                roce_v2_gid=roce_v2_ipv4_gid(port),
                counters=_counters(root, port["device"], port["port"]),
            )
        )
    boot_id = read_attr(os.path.join(root, "proc/sys/kernel/random/boot_id"))
    gpus = read_gpus(root)
    gpus["perftest_cuda"] = perftest_cuda
    gpus["nearest"] = {}
    nvidia_smi = module.get_bin_path("nvidia-smi") if gpus["nvidia_gpus"] else None
    if nvidia_smi:
        rc, out, err = module.run_command([nvidia_smi, "topo", "-m"])
        if rc == 0:
            gpus["nearest"] = nearest_gpus(parse_topo(out))
        else:
            problems.append(f"nvidia-smi topo -m failed (rc {rc}): {_one_line(err or out)}")
    module.exit_json(
        changed=False,
        ports=ports,
        devices=[_device_summary(device) for device in devices],
        gpus=gpus,
        boot_id=boot_id,
        numactl=module.get_bin_path("numactl"),
        perftest_version=version,
        problems=problems,
    )


if __name__ == "__main__":
    main()
