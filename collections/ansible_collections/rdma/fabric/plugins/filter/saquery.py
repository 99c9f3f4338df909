# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.saquery import parse_saquery

DOCUMENTATION = r"""
---
name: saquery
short_description: Parse C(saquery) record dumps
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - Turns every C(<Type>Record dump:) block (SMInfoRecord, PKeyTableRecord, NodeRecord ...)
    into a dict of lowercased field names; numbers as int, GUIDs in the 16-digit spelling, a
    PKey table as C(pkey_table), a list of int.
positional: _input
options:
  _input:
    description: The stdout of C(saquery).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: The SMs the SA knows, with their state
  ansible.builtin.debug:
    msg: "{{ smir.stdout | rdma.fabric.saquery | map(attribute='smstate') }}"
"""

RETURN = r"""
_value:
  description: One dict per record with C(record) naming its type.
  type: list
"""


class FilterModule:
    def filters(self):
        return {"saquery": parse_saquery}
