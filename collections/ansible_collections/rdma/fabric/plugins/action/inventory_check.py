# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of rdma.fabric.inventory_check: reads the inventory on the controller
(no connection to any host) and fails on typos in variable and group names."""

from __future__ import annotations

import os

from ansible import constants as C
from ansible.plugins.action import ActionBase
from ansible.vars.plugins import get_vars_from_inventory_sources, get_vars_from_path
from ansible_collections.rdma.fabric.plugins.plugin_utils import inventory_names

COLLECTION_ROLES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "roles"
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(
        ("groups", "model_groups", "variables", "allow_unknown_vars", "roles_paths")
    )

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(
            argument_spec={
                "groups": {"type": "list", "elements": "str", "default": []},
                "model_groups": {"type": "list", "elements": "str", "default": []},
                "variables": {"type": "list", "elements": "str", "default": []},
                "allow_unknown_vars": {"type": "raw", "default": []},
                "roles_paths": {"type": "list", "elements": "path"},
            },
        )
        allow = args["allow_unknown_vars"]
        if allow is not True and not isinstance(allow, list):
            return {
                **result,
                "failed": True,
                "msg": "rdma_fabric_allow_unknown_vars must be true or a list of names or patterns",
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

        result.update(
            changed=False,
            unknown_vars=var_findings,
            group_typos=group_findings,
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
        else:
            result["msg"] = (
                f"{len(inventory.hosts)} hosts, {len(inventory.groups)} groups: no unknown names"
            )
        return result

    def _sources(self, inventory, extra_vars, basedir):
        """Where each name is defined: inventory files, group_vars/host_vars next to the
        inventory or the playbook, extra vars."""

        def names_of(entity):
            names = set(entity.get_vars())
            names.update(
                get_vars_from_inventory_sources(self._loader, inventory._sources, [entity], "task")
            )
            names.update(get_vars_from_path(self._loader, basedir, [entity], "task"))
            return names

        sources = {f"group {name}": names_of(group) for name, group in inventory.groups.items()}
        sources.update({f"host {host.name}": names_of(host) for host in inventory.hosts.values()})
        sources["extra vars"] = set(extra_vars)
        return sources
