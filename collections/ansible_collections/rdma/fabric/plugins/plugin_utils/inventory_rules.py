# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Inputs of the right type that cannot be what they claim, found on the controller.

- URL variables (every option whose name ends in ``_url``) must parse as a URL of an
  allowed scheme with a host; address variables (``_host``, ``_address``) must be a bare
  host name or IP address. The suffix is the one marker: a unit test holds every
  argument_specs option that describes a URL or an address to it.
- A setting placed where no play reads it: which play reads which variable is derived
  from the stage playbooks (each play's hosts and the roles it runs) and from each role's
  own files (the names it declares in meta/argument_specs.yml or mentions).
- Groups that exclude each other: a play with ``become`` configures Linux servers, a play
  without it a device over its API or CLI (a switch, UFM); a host is a server or one kind
  of device, never two.

Pure functions over plain data; rdma.fabric.inventory_check feeds them the inventory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.rails import some_names

URL_SUFFIX = "_url"
ADDRESS_SUFFIXES = ("_host", "_address")
# The schemes each URL variable's consumer takes (the roles' own validation: rdma_stack's
# validate.yml takes http(s) and file for apt/dnf; ib_subnet_manager's ufm_pkeys.yml https only).
URL_SCHEMES: dict[str, tuple[str, ...]] = {"ib_subnet_manager_ufm_url": ("https",)}
DEFAULT_URL_SCHEMES = ("https", "http", "file")
NAME_RE = re.compile(r"\b(?:rdma|roce|ib_subnet_manager|soft_roce)_\w+")
ROLE_TEXT_DIRS = ("defaults", "vars", "tasks", "handlers", "templates", "meta")

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml is missing
    _Loader = yaml.SafeLoader


def _templated(value: str) -> bool:
    return "{{" in value or "{%" in value


def _schemes(name: str) -> tuple[str, ...]:
    return URL_SCHEMES.get(name, DEFAULT_URL_SCHEMES)


def url_problem(name: str, value) -> tuple[str, str] | None:
    """(what is wrong, what to use instead) for a URL variable's value, or None."""
    if not isinstance(value, str) or not value or _templated(value):
        return None
    schemes = _schemes(name)
    first = schemes[0]
    if re.search(r"\s", value):
        return "has white space", first + "://" + re.sub(r"\s+", "", value.split("://")[-1])
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError as exc:
        return f"is not a URL ({exc})", f"{first}://HOST[:PORT]/PATH"
    del port
    if "://" not in value or not parts.scheme:
        rest = value.split(":", 1)[1].lstrip("/") if ":" in value and parts.scheme else value
        return "is not a URL (no scheme)", f"{first}://{rest}"
    if parts.scheme not in schemes:
        allowed = " or ".join(f"{s}://" for s in schemes)
        return (
            f"has scheme {parts.scheme}:// (takes {allowed})",
            f"{first}://{parts.netloc}{parts.path}",
        )
    if parts.scheme == "file":
        if not parts.path or parts.path == "/":
            return "is a file:// URL without a path", "file:///PATH/ON/THE/HOST"
        return None
    if not parts.hostname:
        return "is a URL without a host", f"{parts.scheme}://HOST{parts.path or '/'}"
    return None


def address_problem(name: str, value, known: Iterable[str] = ()) -> tuple[str, str] | None:
    """(what is wrong, what to use instead) for a host-address variable's value, or None."""
    if not isinstance(value, str) or not value or _templated(value):
        return None
    if "://" in value:
        parts = urlsplit(value)
        host = parts.hostname or "HOST"
        use = host
        try:
            port = parts.port
        except ValueError:
            port = None
        port_var = name.rsplit("_", 1)[0] + "_port"
        if port and port_var in set(known):
            use = f"{host} (and {port_var}: {port})"
        return "is a URL, not a host name or address", use
    if "/" in value or re.search(r"\s", value):
        host = re.split(r"[/\s]", value.strip())[0] or "HOST"
        return "is not a host name or address", host
    return None


def value_problems(
    sources: Mapping[str, Mapping[str, object]], known: Iterable[str] = ()
) -> list[dict]:
    """Every URL and address variable, wherever it is set, whose value cannot be one."""
    known = set(known)
    found = []
    for where, variables in sources.items():
        for name, value in variables.items():
            if name.endswith(URL_SUFFIX):
                problem = url_problem(name, value)
            elif name.endswith(ADDRESS_SUFFIXES):
                problem = address_problem(name, value, known)
            else:
                continue
            if problem:
                found.append(
                    {
                        "name": name,
                        "where": where,
                        "value": value,
                        "problem": problem[0],
                        "use": problem[1],
                    }
                )
    return sorted(found, key=lambda f: (f["name"], f["where"]))


# Which play reads which variable ---------------------------------------------------------


def _role_name(entry) -> str | None:
    if isinstance(entry, str):
        name = entry
    elif isinstance(entry, Mapping):
        name = entry.get("role") or entry.get("name")
    else:
        return None
    return str(name).rsplit(".", 1)[-1] if name else None


# `when: ib_subnet_manager_mode | default('') == 'switch'` on a play's include_role.
WHEN_VALUE_RE = re.compile(r"^\s*(\w+)\s*(?:\|\s*default\([^)]*\)\s*)?==\s*['\"]([\w.-]+)['\"]\s*$")


def _included_roles(tasks, values: set | None = None) -> set[str]:
    """Roles the tasks include; values collects (variable, value) of each inclusion's
    `when: VAR == 'value'`."""
    roles: set[str] = set()
    for task in tasks or ():
        if not isinstance(task, Mapping):
            continue
        for key in ("block", "rescue", "always"):
            roles |= _included_roles(task.get(key), values)
        for key, args in task.items():
            if key.rsplit(".", 1)[-1] in ("include_role", "import_role") and args:
                name = _role_name(args)
                if name:
                    roles.add(name)
                    when = task.get("when")
                    for condition in [when] if isinstance(when, str) else when or ():
                        match = WHEN_VALUE_RE.match(str(condition))
                        if match and values is not None:
                            values.add(match.groups())
    return roles


# Play keywords Ansible templates before it picks the hosts of a batch: with play vars,
# vars_files and extra vars only, never an inventory variable (no host yet).
PLAY_KEYWORDS = ("serial", "max_fail_percentage", "strategy", "order", "throttle")


def _keyword_vars(play: Mapping) -> list[list[str]]:
    """[keyword, variable] of each project variable a play keyword reads."""
    found = set()
    for keyword in PLAY_KEYWORDS:
        for name in NAME_RE.findall(str(play.get(keyword, ""))):
            found.add((keyword, name))
    return [list(pair) for pair in sorted(found)]


def stage_plays(playbooks_dir: str) -> list[dict]:
    """Every play of the stage playbooks: its file, name, hosts pattern, roles, become."""
    plays = []
    for file in sorted(os.listdir(playbooks_dir)):
        if not file.endswith((".yml", ".yaml")):
            continue
        with open(os.path.join(playbooks_dir, file), encoding="utf-8") as stream:
            doc = yaml.load(stream, Loader=_Loader) or []
        for play in doc:
            if not isinstance(play, Mapping) or "hosts" not in play:
                continue
            roles = {_role_name(r) for r in play.get("roles") or ()} - {None}
            values: set[tuple[str, str]] = set()
            for key in ("pre_tasks", "tasks", "post_tasks"):
                roles |= _included_roles(play.get(key), values)
            if not roles:
                continue
            plays.append(
                {
                    "playbook": file,
                    "name": play.get("name", ""),
                    "hosts": str(play["hosts"]),
                    "roles": sorted(roles),
                    "become": bool(play.get("become", False)),
                    "only_when": sorted(values),
                    "keyword_vars": _keyword_vars(play),
                }
            )
    return plays


def role_reads(role_dir: str, known: set[str]) -> set[str]:
    """The project variables a role reads: those its argument_specs declare and those its
    defaults, vars, tasks, handlers and templates mention."""
    names: set[str] = set()
    for sub in ROLE_TEXT_DIRS:
        top = os.path.join(role_dir, sub)
        for root, _dirs, files in os.walk(top):
            for file in files:
                try:
                    with open(os.path.join(root, file), encoding="utf-8") as stream:
                        names.update(NAME_RE.findall(stream.read()))
                except (OSError, UnicodeDecodeError):
                    continue
    return names & known


def readers(plays: Iterable[dict], reads_by_role: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """Variable -> the hosts patterns of the plays that read it."""
    found: dict[str, set[str]] = {}
    for play in plays:
        for role in play["roles"]:
            for name in reads_by_role.get(role, ()):
                found.setdefault(name, set()).add(play["hosts"])
    return {name: sorted(patterns) for name, patterns in found.items()}


def unread_settings(
    placements: Mapping[str, Iterable[str]],
    hosts_of: Mapping[str, set[str]],
    read_by: Mapping[str, list[str]],
    hosts_of_pattern: Mapping[str, set[str]],
) -> list[dict]:
    """Variables set on a host, or on a group, none of whose hosts a play that reads the
    variable runs on. placements: "host h"/"group g" -> names set there; hosts_of: the same
    keys -> the hosts they apply to. Group all and extra vars are everyone's."""
    found = []
    for where, names in placements.items():
        hosts = hosts_of.get(where)
        if not hosts:
            continue
        for name in names:
            patterns = read_by.get(name)
            if not patterns:
                continue
            if any(hosts & hosts_of_pattern.get(p, set()) for p in patterns):
                continue
            found.append({"name": name, "where": where, "hosts": len(hosts), "read_on": patterns})
    return sorted(found, key=lambda f: (f["name"], f["where"]))


def value_owners(plays: Iterable[dict]) -> dict[tuple[str, str], list[str]]:
    """(variable, value) -> the hosts patterns of the plays that run a role only for that
    value (ib_subnet_manager_mode: switch on ib_switches, ufm on ufm_servers)."""
    owners: dict[tuple[str, str], set[str]] = {}
    for play in plays:
        for name, value in play.get("only_when", ()):
            owners.setdefault((name, value), set()).add(play["hosts"])
    return {key: sorted(patterns) for key, patterns in owners.items()}


def misplaced_values(
    placements: Mapping[str, Mapping[str, object]],
    hosts_of: Mapping[str, set[str]],
    owners: Mapping[tuple[str, str], list[str]],
    hosts_of_pattern: Mapping[str, set[str]],
) -> list[dict]:
    """A value only the plays of some groups act on, set on hosts outside them."""
    found = []
    for where, variables in placements.items():
        hosts = hosts_of.get(where)
        if not hosts:
            continue
        for name, value in variables.items():
            patterns = owners.get((name, str(value)))
            if not patterns:
                continue
            inside = set().union(*(hosts_of_pattern.get(p, set()) for p in patterns))
            outside = sorted(hosts - inside)
            if outside:
                found.append(
                    {
                        "name": name,
                        "value": value,
                        "where": where,
                        "hosts": outside,
                        "owners": patterns,
                    }
                )
    return sorted(found, key=lambda f: (f["name"], f["where"]))


def keyword_settings(placements: Mapping[str, Iterable[str]], plays: Iterable[dict]) -> list[dict]:
    """A variable a play keyword reads (serial: roce_switch_qos_serial), set in the
    inventory, where that keyword never sees it: only an extra var (-e) reaches it."""
    readers: dict[str, set[tuple[str, str]]] = {}
    for play in plays:
        for keyword, name in play.get("keyword_vars", ()):
            readers.setdefault(name, set()).add((keyword, play["name"]))
    found = []
    for where, names in placements.items():
        if where == "extra vars":
            continue
        for name in names:
            if name in readers:
                keyword, play = sorted(readers[name])[0]
                found.append({"name": name, "where": where, "keyword": keyword, "play": play})
    return sorted(found, key=lambda f: (f["name"], f["where"]))


# Groups that exclude each other ----------------------------------------------------------


def exclusive_kinds(plays: Iterable[dict], linux_groups: Iterable[str] = ()) -> dict[str, str]:
    """hosts pattern -> its kind: "server" for the plays with become (and linux_groups),
    the pattern itself for a play without become (each device kind its own)."""
    kinds = {}
    for play in plays:
        if not play["become"]:
            kinds.setdefault(play["hosts"], play["hosts"])
    for play in plays:
        if play["become"]:
            kinds[play["hosts"]] = "server"
    kinds.update(dict.fromkeys(linux_groups, "server"))
    return kinds


def shared_hosts(kinds: Mapping[str, str], hosts_of_pattern: Mapping[str, set[str]]) -> list[dict]:
    """Pairs of groups of different kinds that share hosts."""
    found = []
    patterns = sorted(kinds)
    for i, first in enumerate(patterns):
        for second in patterns[i + 1 :]:
            if kinds[first] == kinds[second]:
                continue
            both = hosts_of_pattern.get(first, set()) & hosts_of_pattern.get(second, set())
            if both:
                found.append({"groups": [first, second], "hosts": sorted(both)})
    return found


def selector_conflicts(
    selectors: Iterable[str],
    group_values: Mapping[str, Mapping[str, object]],
    groups_of_host: Mapping[str, Iterable[str]],
    ancestors: Mapping[str, set[str]],
) -> list[dict]:
    """A host in two groups that each set a selector (rdma_switch_os) to a different value,
    neither group a parent of the other: Ansible takes one of them by name order."""
    found: dict[tuple, list[str]] = {}
    for host, groups in groups_of_host.items():
        for selector in selectors:
            setting = sorted(
                (g, group_values[g][selector])
                for g in groups
                if selector in group_values.get(g, {})
            )
            for i, (first, one) in enumerate(setting):
                for second, other in setting[i + 1 :]:
                    related = first in ancestors.get(second, ()) or second in ancestors.get(
                        first, ()
                    )
                    if one != other and not related:
                        key = (selector, first, str(one), second, str(other))
                        found.setdefault(key, []).append(host)
    return [
        {"name": k[0], "groups": [k[1], k[3]], "values": [k[2], k[4]], "hosts": sorted(v)}
        for k, v in sorted(found.items())
    ]


def _hosts(hosts: list[str], limit: int = 5) -> str:
    return some_names(hosts, shown=limit)


def messages(
    values: list[dict],
    unread: list[dict],
    shared: list[dict],
    selectors: list[dict] = (),
    misplaced: list[dict] = (),
    keywords: list[dict] = (),
) -> list[str]:
    lines = []
    for item in keywords:
        lines.append(
            f"{item['name']} (set in {item['where']}) is read by the {item['keyword']} of the"
            f" play '{item['play']}', which Ansible sets before any host's variables exist: the"
            f" inventory's value is never used; give it with -e {item['name']}=VALUE"
        )
    for item in values:
        lines.append(
            f"{item['name']} (set in {item['where']}) is {item['value']!r}: it {item['problem']};"
            f" use {item['use']}"
        )
    for item in unread:
        lines.append(
            f"{item['name']} (set in {item['where']}): no play reads it there; the plays that "
            f"read it run on {', '.join(item['read_on'])}: set it there, or remove it"
        )
    for item in misplaced:
        lines.append(
            f"{item['name']}: {item['value']} (set in {item['where']}) reaches "
            f"{_hosts(item['hosts'])}, outside {', '.join(item['owners'])}, the only hosts "
            f"whose play acts on {item['value']}: set it on hosts of {', '.join(item['owners'])}"
        )
    for item in shared:
        first, second = item["groups"]
        lines.append(
            f"groups {first} and {second} exclude each other (a host is a Linux server or one "
            f"kind of device) but share {_hosts(item['hosts'])}: keep each host in one of them"
        )
    for item in selectors:
        first, second = item["groups"]
        lines.append(
            f"{item['name']}: groups {first} ({item['values'][0]}) and {second} "
            f"({item['values'][1]}) exclude each other but share {_hosts(item['hosts'])}: "
            "keep each host in one of them"
        )
    return lines
