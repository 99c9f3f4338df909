# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Typos in an inventory, found on the controller before any change.

Every variable with a project prefix must be declared by some role's
meta/argument_specs.yml (or be one of the fabric-wide names the preflight play lists);
every group the playbooks target must exist when the inventory has a group of a
similar name with hosts. Pure functions: the rdma.fabric.inventory_check action
plugin feeds them what the inventory holds.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from collections.abc import Iterable, Mapping

import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.rails import some_names

PREFIXES = ("rdma_", "roce_", "ib_subnet_manager_", "soft_roce_")
# Close enough to be a typo: "rdma_stack_provder" vs "rdma_stack_provider" is 0.97,
# "rdma_host" vs "rdma_hosts" 0.95; two different roles' names stay below.
CUTOFF = 0.8

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml is missing
    _Loader = yaml.SafeLoader


def declared_names(role_dirs: Iterable[str]) -> set[str]:
    """Every option of every entry point of every role's meta/argument_specs.yml."""
    names: set[str] = set()
    for roles_path in role_dirs:
        if not os.path.isdir(roles_path):
            continue
        for role in sorted(os.listdir(roles_path)):
            spec_file = os.path.join(roles_path, role, "meta", "argument_specs.yml")
            if not os.path.isfile(spec_file):
                continue
            with open(spec_file, encoding="utf-8") as stream:
                specs = yaml.load(stream, Loader=_Loader) or {}
            for entry_point in (specs.get("argument_specs") or {}).values():
                names.update((entry_point or {}).get("options") or {})
    return names


def is_project_name(name: str) -> bool:
    return name.startswith(PREFIXES)


def closest(name: str, known: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=CUTOFF)
    return matches[0] if matches else None


def allowed(name: str, allow) -> bool:
    """allow: true (every name), or a list of names and shell-style patterns."""
    if allow is True:
        return True
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in allow or ())


def unknown_vars(sources: Mapping[str, Iterable[str]], known: set[str], allow=()) -> list[dict]:
    """Project-prefixed names no role declares, one entry per name.

    sources: where each set of names is defined ("group_vars of rdma_hosts",
    "host gpu-01", "extra vars") -> the names defined there.
    """
    found: dict[str, list[str]] = {}
    for where, names in sources.items():
        for name in names:
            if is_project_name(name) and name not in known and not allowed(name, allow):
                found.setdefault(name, []).append(where)
    return [
        {"name": name, "where": sorted(found[name]), "closest": closest(name, known)}
        for name in sorted(found)
    ]


def group_typos(
    targeted: Iterable[str], hosts_by_group: Mapping[str, int], model_groups: Iterable[str] = ()
) -> list[dict]:
    """Targeted groups the inventory lacks (or leaves empty) while a group of a similar
    name, not itself a group of the inventory model, has hosts."""
    targeted = sorted(set(targeted))
    model = set(targeted) | set(model_groups) | {"all", "ungrouped"}
    missing = [g for g in targeted if not hosts_by_group.get(g)]
    typos = []
    for group, count in sorted(hosts_by_group.items()):
        if group in model or not count:
            continue
        best = closest(group, targeted)
        if best in missing:
            typos.append({"group": group, "hosts": count, "closest": best})
    return typos


def _where(places: list[str], limit: int = 3) -> str:
    return some_names(places, shown=limit)


def messages(var_findings: list[dict], group_findings: list[dict]) -> list[str]:
    """One line per finding, naming the variable (or group), where, and the closest name."""
    lines = []
    for item in var_findings:
        hint = f"did you mean {item['closest']}?" if item["closest"] else "no role declares it"
        lines.append(f"{item['name']} (set in {_where(item['where'])}): {hint}")
    for item in group_findings:
        lines.append(
            f"group {item['group']} ({item['hosts']} hosts): did you mean {item['closest']}? "
            f"The playbooks target {item['closest']}, which has no hosts in this inventory."
        )
    return lines
