# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import inventory_guid

DOCUMENTATION = r"""
---
name: ib_guid
short_description: Write an InfiniBand GUID as 0x and 16 lowercase hex digits
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - Accepts 0x-prefixed hex of any width, bare hex with a letter, or the colon-grouped sysfs
    form. Bare digits are decimal, as OpenSM reads GUIDs and keys (strtoull with base 0)
    in partitions.conf, root/CN GUID files and opensm.conf; bare digits with a leading 0
    (octal to OpenSM, hex to a reader of ibstat) give None, as does anything else.
positional: _input
options:
  _input:
    description: A GUID as any tool prints it.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Compare what sminfo and ibstat print
  ansible.builtin.assert:
    that: "'0x2c90000001003' | rdma.fabric.ib_guid == '0x0002c90000001003'"
"""

RETURN = r"""
_value:
  description: The GUID as C(0x0002c90000001003), or None.
  type: str
"""


class FilterModule:
    def filters(self):
        return {"ib_guid": inventory_guid}
