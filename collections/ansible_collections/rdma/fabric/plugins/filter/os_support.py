# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.os_support import (
    os_support as _os_support,
)

DOCUMENTATION = r"""
---
name: os_support
short_description: Whether a host role goes on on this operating system, with its message
version_added: 0.4.0
author: rdma-fabric contributors
description:
  - >-
    The gate of the host roles' C(tasks/set_vars.yml), one decision for all of them.
    C(tested) when the host's distribution and major version are in I(supported) (a test
    runs the role there); C(untested) when they are in I(untested) (the role has code
    paths there that no test runs, so it warns and goes on); C(refused) otherwise, or
    when a fact it reads is missing.
  - >-
    The message is empty for C(tested); for C(untested) the warning's text ("rdma_nic has
    code paths for Ubuntu 24.04 but no test runs them; tested on Debian 12/13 only. ...");
    for C(refused) the refusal, naming the role, the system and what is tested
    ("rdma_nic: Fedora 40 is not supported. Tested: Debian 12/13; untested code paths:
    Ubuntu 22/24, ...").
positional: _input, supported, untested, role
options:
  _input:
    description:
      - The host's C(ansible_facts); reads distribution, distribution_version and
        distribution_major_version.
    type: dict
    required: true
  supported:
    description: Distribution name -> major versions a test runs the role on.
    type: dict
    required: true
  untested:
    description: Distribution name -> major versions with code paths no test runs.
    type: dict
    required: true
  role:
    description: The role's name, for the messages.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Refuse an operating system the role has no code path for
  ansible.builtin.assert:
    that: __os.status != 'refused'
    fail_msg: "{{ __os.message }}"
    quiet: true
  vars:
    __os: >-
      {{ ansible_facts
         | rdma.fabric.os_support({'Debian': ['12', '13']}, {'Ubuntu': ['24']}, 'my_role') }}
"""

RETURN = r"""
_value:
  description: The decision and what to say.
  type: dict
  contains:
    status:
      description: C(tested), C(untested) or C(refused).
      type: str
    message:
      description: Empty when tested; the warning (untested) or the refusal (refused).
      type: str
"""


def os_support(facts, supported, untested, role):
    return _os_support(dict(facts or {}), supported, untested, role)


class FilterModule:
    def filters(self):
        return {"os_support": os_support}
