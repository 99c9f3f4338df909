# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.sminfo import parse_sminfo

DOCUMENTATION = r"""
---
name: sminfo
short_description: Parse C(sminfo) output
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - Returns lid, guid, activity_count, priority, state (0 not active, 1 discovering, 2
    standby, 3 master), state_name and error (the iberror text when the query failed).
positional: _input
options:
  _input:
    description: The stdout (and stderr) of C(sminfo).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: The master SM
  ansible.builtin.debug:
    msg: "{{ (sm.stdout ~ sm.stderr) | rdma.fabric.sminfo }}"
"""

RETURN = r"""
_value:
  description: The master SM as sminfo reports it; values are None when sminfo did not print them.
  type: dict
"""


class FilterModule:
    def filters(self):
        return {"sminfo": parse_sminfo}
