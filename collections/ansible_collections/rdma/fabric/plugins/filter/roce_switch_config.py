# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import switch_policy
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import render

DOCUMENTATION = r"""
---
name: roce_switch_config
short_description: Render the lossless RoCE policy for one switch OS
version_added: 0.1.0
author: rdma-fabric contributors
description:
  - Takes C(rdma_roce_policy) (as C(rdma.fabric.roce_policy) fills it) and returns the
    switch configuration that expresses it. C(cumulus) gives the NVUE object tree (root
    keys C(qos) and C(interface)) the NVUE REST API takes as a PATCH body; C(sonic) the
    CONFIG_DB tables C(config apply-patch) converges to; C(eos) CLI text for
    C(arista.eos.eos_config).
  - In the NVUE tree and the CONFIG_DB tables C(null) means "absent" (removed when present).
  - Fails naming the key when the policy is bad or the switch OS cannot express it.
positional: _input, switch_os, ports, cable_length
options:
  _input:
    description: The C(rdma_roce_policy) dictionary (keys as in C(rdma.fabric.roce_policy)).
    type: dict
    required: true
  switch_os:
    description: C(rdma_switch_os).
    type: str
    required: true
    choices: [cumulus, sonic, eos]
  ports:
    description: The RoCE-facing ports.
    type: list
    elements: str
    required: true
  cable_length:
    description: Cable length in meters (Cumulus PFC headroom, SONiC CABLE_LENGTH).
    type: int
    required: true
  options:
    description:
      - OS-specific options - C(lossless_pool_percent) (Cumulus roce-lossless traffic pool),
        C(eos_tx_queue) (C(tx-queue) or C(uc-tx-queue)), C(cable_lengths) (port -> meters
        where a port differs from I(cable_length); Cumulus takes the longest),
        C(sonic_buffer_model) (C(dynamic) or C(traditional) - adds the lossless BUFFER_PG
        rows of the RoCE priority group; empty leaves them to M(rdma.fabric.sonic_config_patch),
        which reads the switch's model).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: What this switch would get
  ansible.builtin.debug:
    msg: "{{ rdma_roce_policy | rdma.fabric.roce_switch_config('sonic', ['Ethernet0'], 5) }}"
"""

RETURN = r"""
_value:
  description: The configuration - a dictionary (cumulus, sonic) or CLI text (eos).
  type: raw
"""


def roce_switch_config(policy, switch_os, ports, cable_length, options=None):
    filled, errors = switch_policy(policy, switch_os)
    if errors:
        raise AnsibleFilterError("; ".join(errors))
    return render(filled, switch_os, list(ports), int(cable_length), options or {})


class FilterModule:
    def filters(self):
        return {"roce_switch_config": roce_switch_config}
