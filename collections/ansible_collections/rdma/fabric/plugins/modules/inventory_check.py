#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: inventory_check
short_description: Fail on typos and misplaced settings in an inventory
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
  - Fails on values of the right type that cannot be what they claim, wherever set
    (group, host, extra vars; templated values are left to the roles). A variable named
    C(*_url) must be a URL with a scheme the role takes and a host (V(https://HOST/PATH);
    V(file:///PATH) where the role takes it); one named C(*_host) or C(*_address) must be a
    host name or address, not a URL. Each finding says what to use instead.
  - Fails on a setting placed on hosts (or a group of hosts) that no play reading it runs
    on, naming the groups those plays target. Which play reads which variable comes from
    the playbooks in O(playbooks_dir) (each play's C(hosts) and the roles it runs or
    includes) and from each role's files (the names its argument specs declare or its
    defaults, vars, tasks, handlers and templates mention).
  - Fails on a value that only the plays of some groups act on, set on other hosts
    (V(ib_subnet_manager_mode=switch) outside C(ib_switches)). A play that includes a role
    under a C(when) of the form C(VAR == 'value') owns that value for its hosts.
  - Fails on a host in two groups that exclude each other, naming both groups and the
    hosts. A play with C(become) configures Linux servers, one without a device over its
    API or CLI (a switch, UFM), so a host is a server or one kind of device. Also on a host
    in two groups that set one of O(selectors) to different values, neither group a
    parent of the other.
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
  allow_placements:
    description:
      - V(true) to skip the placement checks (settings no play reads where set, values
        outside the groups whose play acts on them), or a list of names and shell-style
        patterns to skip them for. URL and address values and exclusive groups are
        always checked.
    type: raw
    default: []
  roles_paths:
    description: Directories of roles to read instead of the default ones.
    type: list
    elements: path
  playbooks_dir:
    description:
      - The stage playbooks whose plays say which groups read which variables; unset, the
        collection's C(playbooks/).
    type: path
  linux_groups:
    description: Groups no play targets whose hosts the roles take for Linux servers.
    type: list
    elements: str
    default: []
  selectors:
    description: Variables a host takes one value of, set per group (V(rdma_switch_os)).
    type: list
    elements: str
    default: []
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
bad_values:
  description: Each C(*_url), C(*_host) or C(*_address) value that cannot be one.
  returned: always
  type: list
  elements: dict
  sample:
    - name: rdma_stack_doca_repo_url
      where: host gpu-02
      value: linux.mellanox.com/public/repo/doca/2.9.1/
      problem: is not a URL (no scheme)
      use: https://linux.mellanox.com/public/repo/doca/2.9.1/
unread_settings:
  description: Each setting placed where no play that reads it runs.
  returned: always
  type: list
  elements: dict
  sample:
    - name: ib_subnet_manager_priority
      where: host gpu-01
      hosts: 1
      read_on: [ib_hosts, ib_switches, subnet_managers, ufm_servers]
shared_hosts:
  description: Pairs of groups that exclude each other and the hosts they share.
  returned: always
  type: list
  elements: dict
  sample: [{"groups": ["rdma_hosts", "switches"], "hosts": ["leaf-09"]}]
selector_conflicts:
  description: Hosts given two values of a selector by sibling groups.
  returned: always
  type: list
  elements: dict
  sample:
    - name: rdma_switch_os
      groups: [cumulus_switches, sonic_switches]
      values: [cumulus, sonic]
      hosts: [leaf-01]
misplaced_values:
  description: Each value set on hosts outside the groups whose play acts on it.
  returned: always
  type: list
  elements: dict
  sample:
    - name: ib_subnet_manager_mode
      value: switch
      where: host sm-01
      hosts: [sm-01]
      owners: [ib_switches]
known_vars:
  description: How many variable names the roles and O(variables) declare.
  returned: always
  type: int
hosts:
  description: How many hosts the inventory has.
  returned: always
  type: int
"""
