# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What check_mode and diff_mode mean; each module says its support level."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
attributes:
  check_mode:
    description: Can run in check mode and tell what would change, changing nothing.
  diff_mode:
    description: Returns what changed (or would change, in check mode) in diff mode.
"""
