# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.dkms import parse_dkms_status

DOCUMENTATION = r"""
---
name: dkms_status
short_description: Parse C(dkms status) output into records
version_added: 0.1.0
author: rdma-fabric contributors
description:
  - Turns the text of C(dkms status) (dkms 2.x and 3.x formats) into a list of
    records with module, version, kernel, arch, state and warning.
positional: _input
options:
  _input:
    description: The stdout of C(dkms status).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Modules DKMS installed for the running kernel
  ansible.builtin.set_fact:
    built: "{{ dkms.stdout | rdma.fabric.dkms_status
               | selectattr('kernel', 'equalto', ansible_facts.kernel)
               | selectattr('state', 'equalto', 'installed') | map(attribute='module') }}"
"""

RETURN = r"""
_value:
  description: One record per status line.
  type: list
  elements: dict
"""


class FilterModule:
    def filters(self):
        return {"dkms_status": parse_dkms_status}
