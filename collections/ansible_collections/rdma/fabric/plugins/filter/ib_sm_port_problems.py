# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter: what InfiniBand ports lack from their subnet manager."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.sm_check import ports_problems

DOCUMENTATION = r"""
---
name: ib_sm_port_problems
short_description: What InfiniBand ports lack from their subnet manager
version_added: 0.3.0
author: rdma-fabric contributors
description:
  - For each port, a MASTER SM answering through it (C(sminfo -C CA -P PORT) output) and
    the P_Keys the declared partitions give it in its table (C(saquery PKTR LID) output).
positional: _input, partitions
options:
  _input:
    description:
      - A list of dicts with C(port) (an C(rdma.fabric.ibstat) record), C(sminfo) and
        C(pktr) (the outputs of sminfo and saquery PKTR for that port).
    type: list
    required: true
  partitions:
    description: Normalized partitions (C(rdma.fabric.opensm_partitions)).
    type: list
    required: true
"""

EXAMPLES = r"""
- name: Every port has a master SM and its partitions
  ansible.builtin.assert:
    that: results | rdma.fabric.ib_sm_port_problems(partitions) | length == 0
"""

RETURN = r"""
_value:
  description: One message per port that lacks something, naming the port and what is missing.
  type: list
"""


class FilterModule:
    def filters(self):
        return {"ib_sm_port_problems": ports_problems}
