# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of rdma.fabric.inventory_check: reads the inventory on the controller
(no connection to any host) and fails on typos in variable and group names."""

from __future__ import annotations

import os
import re

from ansible import constants as C
from ansible.inventory.helpers import sort_groups
from ansible.plugins.action import ActionBase
from ansible.vars.plugins import get_vars_from_inventory_sources, get_vars_from_path
from ansible_collections.rdma.fabric.plugins.plugin_utils import (
    inventory_connections,
    inventory_names,
    inventory_rules,
)

COLLECTION = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
COLLECTION_ROLES = os.path.join(COLLECTION, "roles")
COLLECTION_PLAYBOOKS = os.path.join(COLLECTION, "playbooks")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(
        (
            "groups",
            "model_groups",
            "variables",
            "allow_unknown_vars",
            "allow_placements",
            "roles_paths",
            "playbooks_dir",
            "linux_groups",
            "selectors",
        )
    )

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(
            argument_spec={
                "groups": {"type": "list", "elements": "str", "default": []},
                "model_groups": {"type": "list", "elements": "str", "default": []},
                "variables": {"type": "list", "elements": "str", "default": []},
                "allow_unknown_vars": {"type": "raw", "default": []},
                "allow_placements": {"type": "raw", "default": []},
                "roles_paths": {"type": "list", "elements": "path"},
                "playbooks_dir": {"type": "path"},
                "linux_groups": {"type": "list", "elements": "str", "default": []},
                "selectors": {"type": "list", "elements": "str", "default": []},
            },
        )
        allow = args["allow_unknown_vars"]
        if allow is not True and not isinstance(allow, list):
            return {
                **result,
                "failed": True,
                "msg": "rdma_fabric_allow_unknown_vars must be true or a list of names or patterns",
            }

        placements_allowed = args["allow_placements"]
        if placements_allowed is not True and not isinstance(placements_allowed, list):
            return {
                **result,
                "failed": True,
                "msg": "rdma_fabric_allow_placements must be true or a list of names or patterns",
            }

        hostvars = task_vars["hostvars"]
        inventory = hostvars._inventory
        basedir = self._loader.get_basedir()
        roles_paths = args["roles_paths"] or [
            *C.DEFAULT_ROLES_PATH,
            os.path.join(basedir, "roles"),
            COLLECTION_ROLES,
        ]
        known = inventory_names.declared_names(roles_paths) | set(args["variables"])

        sources = self._sources(inventory, hostvars._variable_manager.extra_vars, basedir)
        var_findings = inventory_names.unknown_vars(sources, known, allow)
        hosts_by_group = {name: len(group.get_hosts()) for name, group in inventory.groups.items()}
        group_findings = inventory_names.group_typos(
            args["groups"], hosts_by_group, args["model_groups"]
        )

        value_findings = inventory_rules.value_problems(sources, known)
        rule_findings = self._rules(inventory, sources, roles_paths, known, args)
        rule_findings["shared_connections"] = self._shared_connections(inventory, sources)

        result.update(
            changed=False,
            unknown_vars=var_findings,
            group_typos=group_findings,
            bad_values=value_findings,
            **rule_findings,
            known_vars=len(known),
            hosts=len(inventory.hosts),
        )
        lines = inventory_names.messages(var_findings, group_findings)
        if lines:
            result["failed"] = True
            result["msg"] = (
                "The inventory has names no role knows (set rdma_fabric_allow_unknown_vars "
                "to a list of your own variables or patterns to keep them):\n" + "\n".join(lines)
            )
        rule_lines = inventory_rules.messages(
            value_findings,
            rule_findings["unread_settings"],
            rule_findings["shared_hosts"],
            rule_findings["selector_conflicts"],
            rule_findings["misplaced_values"],
            rule_findings["keyword_settings"],
        ) + [inventory_connections.message(f) for f in rule_findings["shared_connections"]]
        if rule_lines:
            head = result["msg"] + "\n" if lines else ""
            result["failed"] = True
            result["msg"] = (
                head + "The inventory has settings that cannot work as placed (a placement you"
                " mean to keep: rdma_fabric_allow_placements, names or patterns):\n"
                + "\n".join(rule_lines)
            )
        if not lines and not rule_lines:
            result["msg"] = (
                f"{len(inventory.hosts)} hosts, {len(inventory.groups)} groups: no unknown names,"
                " no misplaced settings"
            )
        return result

    def _rules(self, inventory, sources, roles_paths, known, args):
        """Settings no play reads where they are set; hosts in groups that exclude each
        other; a selector (rdma_switch_os) set two ways for one host."""
        plays = inventory_rules.stage_plays(args["playbooks_dir"] or COLLECTION_PLAYBOOKS)
        reads_by_role = {}
        for role in {r for play in plays for r in play["roles"]}:
            for roles_path in roles_paths:
                role_dir = os.path.join(roles_path, role)
                if os.path.isdir(role_dir):
                    reads_by_role[role] = inventory_rules.role_reads(role_dir, known)
                    break
        read_by = inventory_rules.readers(plays, reads_by_role)
        kinds = inventory_rules.exclusive_kinds(plays, args["linux_groups"])
        patterns = set(kinds) | {p for ps in read_by.values() for p in ps}
        hosts_of_pattern = {p: self._hosts_of_pattern(inventory, p) for p in patterns}
        hosts_of = {
            f"group {name}": {h.name for h in group.get_hosts()}
            for name, group in inventory.groups.items()
        }
        hosts_of.update({f"host {name}": {name} for name in inventory.hosts})
        unread = inventory_rules.unread_settings(sources, hosts_of, read_by, hosts_of_pattern)
        owners = inventory_rules.value_owners(plays)
        hosts_of_pattern.update(
            {p: self._hosts_of_pattern(inventory, p) for ps in owners.values() for p in ps}
        )
        misplaced = inventory_rules.misplaced_values(sources, hosts_of, owners, hosts_of_pattern)
        shared = inventory_rules.shared_hosts(kinds, hosts_of_pattern)

        selectors = args["selectors"]
        group_values = {
            name: {
                s: sources[f"group {name}"][s] for s in selectors if s in sources[f"group {name}"]
            }
            for name in inventory.groups
        }
        group_values = {name: values for name, values in group_values.items() if values}
        groups_of_host = {}
        for name in group_values:
            for host in hosts_of[f"group {name}"]:
                groups_of_host.setdefault(host, []).append(name)
        ancestors = {
            name: {g.name for g in inventory.groups[name].get_ancestors()} for name in group_values
        }
        conflicts = inventory_rules.selector_conflicts(
            selectors, group_values, groups_of_host, ancestors
        )
        placements_allowed = args["allow_placements"]
        unread = [f for f in unread if not inventory_names.allowed(f["name"], placements_allowed)]
        misplaced = [
            f for f in misplaced if not inventory_names.allowed(f["name"], placements_allowed)
        ]
        return {
            "keyword_settings": inventory_rules.keyword_settings(sources, plays),
            "unread_settings": unread,
            "shared_hosts": shared,
            "selector_conflicts": conflicts,
            "misplaced_values": misplaced,
        }

    @staticmethod
    def _shared_connections(inventory, sources):
        """Hosts Ansible would reach through one persistent connection; each host's
        connection variables from its groups (Ansible's order), itself, then extra vars."""
        names = inventory_connections.CONNECTION_VARS
        of_entity = {
            where: {n: v for n, v in values.items() if n in names}
            for where, values in sources.items()
        }
        values_of_host = {
            host.name: inventory_connections.effective(
                [
                    *(of_entity[f"group {g.name}"] for g in sort_groups(host.get_groups())),
                    of_entity[f"host {host.name}"],
                    of_entity["extra vars"],
                ],
                names,
            )
            for host in inventory.hosts.values()
        }
        return inventory_connections.shared_connections(values_of_host)

    @staticmethod
    def _hosts_of_pattern(inventory, pattern):
        """A play's hosts, whatever --limit says; a group the inventory lacks has none."""
        if pattern in inventory.groups:
            return {h.name for h in inventory.groups[pattern].get_hosts()}
        if re.fullmatch(r"[\w.-]+", pattern):
            return set()
        hosts = inventory.get_hosts(pattern, ignore_limits=True, ignore_restrictions=True)
        return {h.name for h in hosts}

    def _sources(self, inventory, extra_vars, basedir):
        """Where each name is defined: inventory files, group_vars/host_vars next to the
        inventory or the playbook, extra vars."""

        def names_of(entity):
            """The variables set on the entity itself (name -> value as written)."""
            names = dict(entity.get_vars())
            names.update(
                get_vars_from_inventory_sources(self._loader, inventory._sources, [entity], "task")
            )
            names.update(get_vars_from_path(self._loader, basedir, [entity], "task"))
            return names

        sources = {f"group {name}": names_of(group) for name, group in inventory.groups.items()}
        sources.update({f"host {host.name}": names_of(host) for host in inventory.hosts.values()})
        sources["extra vars"] = dict(extra_vars)
        return sources
