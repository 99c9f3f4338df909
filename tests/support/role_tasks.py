"""A role's tasks as Ansible would reach them from a task file: import_tasks and
include_tasks of a file name expanded in place (a templated name through `files`, e.g.
{"{{ __rdma_rails_backend }}.yml": "networkd.yml"}), blocks walked. Each task comes with
the chain of includes, imports and blocks above it, so that a test can ask which
conditions skip it and whether Ansible evaluates them once (a conditional include_tasks)
or once per task (an import or a block, whose `when` is copied onto every task)."""

from __future__ import annotations

from pathlib import Path

import yaml

INCLUDE = "ansible.builtin.include_tasks"
IMPORT = "ansible.builtin.import_tasks"


def _target(task):
    for key in (INCLUDE, IMPORT):
        if key in task:
            value = task[key]
            return key, value["file"] if isinstance(value, dict) else value
    return None, None


def walk(tasks_dir: Path, name: str, files: dict | None = None, _chain=()):
    """Yield (task, chain, file) for every task reached from tasks_dir/name, includes and
    imports too; chain is the tuple of (entry, file) above it, outermost first (entries:
    includes, imports, blocks)."""
    tasks = yaml.safe_load((Path(tasks_dir) / name).read_text()) or []
    yield from _walk_list(tasks_dir, tasks, files or {}, _chain, name)


def _walk_list(tasks_dir, tasks, files, chain, name):
    for task in tasks:
        _, target = _target(task)
        if target is not None:
            yield task, chain, name
            yield from walk(tasks_dir, files.get(target, target), files, (*chain, (task, name)))
        elif "block" in task:
            for part in ("block", "rescue", "always"):
                inner = task.get(part, [])
                yield from _walk_list(tasks_dir, inner, files, (*chain, (task, name)), name)
        else:
            yield task, chain, name


def flat(tasks_dir: Path, name: str, files: dict | None = None) -> list[dict]:
    """The tasks that do the work (no include, import or block entries), in order."""
    return [task for task, _, _ in walk(tasks_dir, name, files) if _target(task)[0] is None]


def nearest_condition(chain) -> tuple[dict, str] | None:
    """The innermost include, import or block above a task that carries a `when`."""
    for entry, file in reversed(chain):
        if "when" in entry:
            return entry, file
    return None
