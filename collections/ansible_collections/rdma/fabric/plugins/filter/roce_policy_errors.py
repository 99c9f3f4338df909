# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    switch_policy,
)

DOCUMENTATION = r"""
---
name: roce_policy_errors
short_description: List what is wrong with a lossless RoCE policy
version_added: 0.1.0
author: rdma-fabric contributors
description:
  - Returns one message per bad key of C(rdma_roce_policy), each naming the key
    ("rdma_roce_policy.roce_dscp must be a DSCP value (0-63); got 64"); an empty list
    when the policy is good. Keys and defaults are those of C(rdma.fabric.roce_policy).
  - With I(switch_os), also what that switch OS cannot express (the roce_switch_qos
    role's check), for example a PFC watchdog action the OS does not have.
positional: _input
options:
  _input:
    description: The C(rdma_roce_policy) dictionary.
    type: dict
    required: true
  switch_os:
    description: A switch OS (C(rdma_switch_os)) whose limits apply too; unknown names fail by name.
    type: str
    choices: [cumulus, sonic, eos]
"""

EXAMPLES = r"""
- name: Validate the policy before any change
  ansible.builtin.assert:
    that: rdma_roce_policy | default({}) | rdma.fabric.roce_policy_errors | length == 0
    fail_msg: "{{ rdma_roce_policy | default({}) | rdma.fabric.roce_policy_errors | join('; ') }}"

- name: Also what this switch cannot express
  ansible.builtin.assert:
    that: >-
      rdma_roce_policy | default({})
      | rdma.fabric.roce_policy_errors(switch_os=rdma_switch_os) | length == 0
"""

RETURN = r"""
_value:
  description: Error messages, one per bad key.
  type: list
  elements: str
"""


def roce_policy_errors(policy, switch_os=None):
    if switch_os is None:
        return normalize_policy(policy)[1]
    return switch_policy(policy, switch_os)[1]


class FilterModule:
    def filters(self):
        return {"roce_policy_errors": roce_policy_errors}
