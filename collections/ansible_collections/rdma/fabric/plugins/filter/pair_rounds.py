# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import pair_rounds as schedule

DOCUMENTATION = r"""
---
name: pair_rounds
short_description: Rounds of disjoint host pairs for pairwise fabric tests
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - C(full) pairs every host with every other exactly once, in rounds of disjoint pairs
    that can run in parallel (the circle method), N-1 rounds for an even number of
    hosts, N for an odd number (one host sits out each round).
  - C(quick) is the first O(rounds) rounds of that schedule, so every host meets that
    many different peers (one fewer when it sits out), for a fast first answer on a
    big rack.
  - In each pair (a, b), a comes before b in the input list.
positional: _input
options:
  _input:
    description: The hosts, each once.
    type: list
    elements: str
    required: true
  mode:
    description: The schedule.
    type: str
    choices: [full, quick]
    default: full
  rounds:
    description: Rounds of the quick schedule (at least 2, so that every host is tested).
    type: int
    default: 2
"""

EXAMPLES = r"""
- name: Every pair once
  ansible.builtin.debug:
    msg: "{{ groups['rdma_hosts'] | rdma.fabric.pair_rounds(mode='full') }}"
"""

RETURN = r"""
_value:
  description: A list of rounds, each a list of [a, b] pairs; no host twice in a round.
  type: list
  elements: list
"""


def pair_rounds(hosts, mode="full", rounds=2):
    try:
        return schedule.pair_rounds(hosts, mode=mode, rounds=rounds)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule:
    def filters(self):
        return {"pair_rounds": pair_rounds}
