# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The device option of the modules that run a ConnectX firmware tool."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  device:
    description:
      - The ConnectX device, as a PCI address (C(0000:3b:00.0) or C(3b:00.0)), an RDMA
        device name (C(mlx5_0), resolved through C(/sys/class/infiniband/NAME/device)) or
        a device path such as C(/dev/mst/mt4125_pciconf0).
    type: str
    required: true
"""
