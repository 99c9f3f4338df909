# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # The read-only modules that gather from /sys: their sysfs_root option, and their
    # attributes (they only read, so check mode is full support).
    DOCUMENTATION = r"""
options:
  sysfs_root:
    description:
      - Directory that holds C(sys/class/infiniband) and C(sys/class/net). Tests point it
        at a tree of their own.
    type: path
    default: /
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
"""
