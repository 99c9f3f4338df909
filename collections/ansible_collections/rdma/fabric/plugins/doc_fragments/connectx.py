# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The device options of the modules that run a ConnectX firmware tool."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  device:
    description:
      - The ConnectX device, as a PCI address (C(0000:3b:00.0) or C(3b:00.0)), an RDMA
        device name (C(mlx5_0), resolved through C(/sys/class/infiniband/NAME/device)) or
        a device path such as C(/dev/mst/mt4125_pciconf0).
      - Exactly one of O(device) and O(devices) is required.
    type: str
  devices:
    description:
      - Several devices, each given as O(device) is, in one call. Different cards are
        done side by side (at most O(parallel) at a time); the PCI functions of one card
        (C(0000:3b:00.0) and C(0000:3b:00.1)), which share its flash and configuration,
        one after another.
      - The result then lists each device's result in RV(cards); a device that fails is
        named with its PCI address in the message, and the other devices' results are
        still returned.
    type: list
    elements: str
  parallel:
    description: With O(devices), how many cards at most are worked on at the same time.
    type: int
    default: 8
"""
