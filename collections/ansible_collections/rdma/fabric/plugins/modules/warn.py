#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: warn
short_description: Say a warning through Ansible's own warnings
description:
  - Runs on the controller (an action plugin; nothing runs on a host) and returns O(msg)
    as a warning of the task - C([WARNING]) on stderr with the default callback, the
    C(warnings) of the task's result with the JSON callbacks - where
    M(ansible.builtin.debug) prints an ordinary C(ok) line among the others.
    ansible-core has no warning task or filter of its own.
  - Changes nothing and never fails; use C(run_once) for a warning about the whole play,
    so it is said once, not once per host.
version_added: 0.4.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  msg:
    description: The warning, naming the variable to set and what is not done.
    type: str
    required: true
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
    description: Changes nothing; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
"""

EXAMPLES = r"""
- name: Say that /etc/nccl.conf is not written without a gpu_hosts group
  rdma.fabric.warn:
    msg: no gpu_hosts group, so /etc/nccl.conf is not written; set rdma_rails_nccl.
  run_once: true
  when: groups['gpu_hosts'] is not defined
"""

RETURN = r"""
msg:
  description: The warning.
  returned: always
  type: str
"""
