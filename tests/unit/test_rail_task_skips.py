"""rdma_rails: the tasks an ordinary run skips together sit behind one conditional
include_tasks, so Ansible skips them once per host instead of once per task (it forks a
worker per host and task even to skip it: ~15 ms of controller CPU each, the fleet's
bottleneck). An import_tasks or a block with a `when` copies the condition onto every
task and saves nothing. A task in a skipped include leaves its `register` undefined, so
every read of such a variable outside its own file has a default."""

from __future__ import annotations

import re

import pytest
from conftest import ROLES_DIR
from role_tasks import INCLUDE, flat, nearest_condition, walk

TASKS = ROLES_DIR / "rdma_rails" / "tasks"
ROLE = TASKS.parent

# The condition (a part of the include's `when`) that skips each cluster on a host whose
# rails are in place, networkd and D-Bus run, and nothing is taken over or rendered.
CLUSTERS = {
    "rdma_rails_state == 'rendered'": [
        "Render this host's files (nothing connects to the host)",
        "Make the host's directories under rdma_rails_render_dir",
        "Write the files this host would get",
    ],
    "__rdma_rails_takeover_files | length > 0": [
        "Make the directory the other files move to",
        "Keep a copy of each other file there",
        "Move the other files out of the network configuration",
        "Say which files were moved aside",
    ],
    "__rdma_rails_units | length > 0 or __rdma_rails_units_gone | length > 0": [
        "Stop and disable the units of P_Key children that are gone",
        "Remove the units of P_Key children that are gone",
        "Start the P_Key units (a changed unit is restarted)",
    ],
    "__rdma_rails_host_state.missing | length > 0": [
        "Install D-Bus for networkctl",
        "Start D-Bus",
    ],
    "units['systemd-networkd.service'].enabled != 'enabled'": [
        "Enable systemd-networkd",
        "Keep the boot from waiting for networkd's links",
    ],
    "__rdma_rails_networkd.action in ['restart', 'defer']": [
        "Restart systemd-networkd (it manages no link but the rails, "
        "or rdma_rails_networkd_restart)",
        "Say that networkd keeps running as it is until its next start",
    ],
    "__rdma_rails_drift | length > 0": [
        "Reload the network configuration",
        "Reconfigure the rail links",
        "Apply the sysctls to the rail netdevs",
        "Wait until the rails are live as planned",
        "Fail naming what did not come up",
    ],
}


def _reached(backend):
    return list(walk(TASKS, "main.yml", {"{{ __rdma_rails_backend }}.yml": f"{backend}.yml"}))


@pytest.mark.parametrize("condition", CLUSTERS)
def test_a_cluster_skipped_together_is_skipped_once_per_host(condition):
    names = CLUSTERS[condition]
    reached = {task["name"]: chain for task, chain, _ in _reached("networkd")}
    assert set(names) <= set(reached), set(names) - set(reached)
    gates = {id(nearest_condition(reached[n])[0]): nearest_condition(reached[n]) for n in names}
    # One gate for the whole cluster, and it is a conditional include (evaluated once).
    assert len(gates) == 1, [nearest_condition(reached[n])[0]["name"] for n in names]
    [(gate, _)] = gates.values()
    assert INCLUDE in gate, gate
    assert condition in str(gate["when"]), gate["when"]
    # The included file holds that cluster and nothing else.
    target = gate[INCLUDE]["file"] if isinstance(gate[INCLUDE], dict) else gate[INCLUDE]
    assert [t["name"] for t in flat(TASKS, target)] == names


def _register_owners():
    """register name -> the file of its task, for tasks behind a conditional include."""
    owners = {}
    for backend in ("networkd", "netplan", "networkmanager"):
        for task, chain, file in _reached(backend):
            gated = any(INCLUDE in entry and "when" in entry for entry, _ in chain)
            if gated and "register" in task:
                owners[task["register"]] = file
    return owners


def test_a_register_in_a_conditional_include_is_read_elsewhere_with_a_default():
    owners = _register_owners()
    assert "__rdma_rails_taken_over" in owners and "__rdma_rails_dbus" in owners, owners
    dirs = ("tasks", "vars", "defaults", "templates", "handlers")
    sources = [p for d in dirs for p in (ROLE / d).rglob("*") if p.is_file()]
    bare = []
    for name, owner in owners.items():
        for path in sources:
            if path.parent.name == "tasks" and path.name == owner:
                continue
            for line in path.read_text().splitlines():
                if line.lstrip().startswith("#"):
                    continue
                for use in re.finditer(rf"\b{name}\b(?!_)(.{{0,30}})", line):
                    guarded = re.match(r"\s*\|\s*default\(|\s+is\s+(not\s+)?defined", use.group(1))
                    if not guarded:
                        bare.append((path.name, line.strip()))
    assert bare == []


def test_a_tagged_include_passes_its_tags_to_its_tasks():
    """An include_tasks with tags runs under --tags X, but its tasks do not unless the
    include passes the tags on (apply)."""
    for task, _, file in _reached("networkd"):
        if INCLUDE in task and "tags" in task:
            apply = task[INCLUDE].get("apply", {}) if isinstance(task[INCLUDE], dict) else {}
            assert apply.get("tags") == task["tags"], (file, task["name"])
