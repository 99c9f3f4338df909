#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: inventory_check
short_description: Fail on typos in an inventory's variable and group names
description:
  - Reads the whole inventory on the controller (no host is contacted) and fails, before
    any change, naming every variable with a project prefix (C(rdma_), C(roce_),
    C(ib_subnet_manager_), C(soft_roce_)) that no role's C(meta/argument_specs.yml)
    declares and that O(variables) does not list, with the closest known name
    (for V(rdma_stack_provder) in the group_vars of C(rdma_hosts), V(rdma_stack_provider)).
  - Looks where Ansible does, per group and per host, and says where each name is
    set; variables set in the inventory files, in C(group_vars)/C(host_vars) next to
    the inventory or the playbook, and extra vars are read; facts are not.
  - Names a group of hosts whose name is close to a group the playbooks target
    (O(groups)) when that targeted group has no hosts (C(rdma_host) for C(rdma_hosts)).
  - Role directories are read from the configured roles path, the playbook's C(roles/)
    and the collection's C(roles/).
version_added: 0.2.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  groups:
    description: The groups the playbooks target.
    type: list
    elements: str
    default: []
  model_groups:
    description:
      - Other groups of the inventory model (such as C(cumulus_switches) or
        C(gpu_hosts)), never taken for a typo of O(groups).
    type: list
    elements: str
    default: []
  variables:
    description: Fabric-wide variables with a project prefix that no role declares.
    type: list
    elements: str
    default: []
  allow_unknown_vars:
    description:
      - V(true) to accept every unknown variable name, or a list of names and
        shell-style patterns (V(rdma_site_*)) of the site's own variables.
    type: raw
    default: []
  roles_paths:
    description: Directories of roles to read instead of the default ones.
    type: list
    elements: path
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin.
  check_mode:
    support: full
    description: Only reads; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is no diff.
  platform:
    platforms: all
    support: full
    description: Reads the controller's inventory.
"""

EXAMPLES = r"""
- name: Fail on variable and group names no role knows
  rdma.fabric.inventory_check:
    groups: [rdma_hosts, roce_hosts, subnet_managers, switches]
    variables: [rdma_fabric_lab]
    allow_unknown_vars: "{{ rdma_fabric_allow_unknown_vars | default([]) }}"
"""

RETURN = r"""
unknown_vars:
  description: Each unknown variable, where it is set, and the closest declared name.
  returned: always
  type: list
  elements: dict
  sample:
    - name: rdma_stack_provder
      where: [group rdma_hosts]
      closest: rdma_stack_provider
group_typos:
  description: Each group that looks like a typo of a targeted group without hosts.
  returned: always
  type: list
  elements: dict
  sample: [{"group": "rdma_host", "hosts": 3, "closest": "rdma_hosts"}]
known_vars:
  description: How many variable names the roles and O(variables) declare.
  returned: always
  type: int
hosts:
  description: How many hosts the inventory has.
  returned: always
  type: int
"""
