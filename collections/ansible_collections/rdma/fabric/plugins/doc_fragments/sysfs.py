# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sysfs_root option of the modules that read the host's /sys."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  sysfs_root:
    description:
      - Directory that holds the host's C(sys/) tree (C(sys/class/infiniband),
        C(sys/class/net), C(sys/bus/pci)). Tests point it at a tree of their own.
    type: path
    default: /
"""

    # rdma.fabric.sysfs.read_only: the attributes of modules that only read the host.
    READ_ONLY = r"""
attributes:
  check_mode:
    support: full
    description: Only reads; runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
"""
