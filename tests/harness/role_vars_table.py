#!/usr/bin/env python3
"""Write each role README's variables table from its meta/argument_specs.yml.

The table sits between `<!-- BEGIN VARIABLES -->` and `<!-- END VARIABLES -->`.
`--check` changes nothing and exits 1 when a README is out of date.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

COLLECTION_ROLES = (
    Path(__file__).resolve().parents[2] / "collections/ansible_collections/rdma/fabric/roles"
)

BEGIN, END = "<!-- BEGIN VARIABLES -->", "<!-- END VARIABLES -->"


def _cell(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return " ".join(str(text).split()).replace("|", "\\|")


def table(spec_file: Path) -> str:
    options = yaml.safe_load(spec_file.read_text())["argument_specs"]["main"]["options"]
    rows = [
        "| variable | type | default | choices | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, opt in options.items():
        description = opt.get("description", "")
        if isinstance(description, list):
            description = " ".join(description)
        kind = opt.get("type", "str")
        if opt.get("elements"):
            kind += f" of {opt['elements']}"
        rows.append(
            f"| `{name}` | {kind} | `{_cell(opt.get('default', ''))}` "
            f"| {_cell(opt.get('choices', ''))} | {_cell(description)} |"
        )
    return "\n".join(rows)


def render(readme: Path, spec_file: Path) -> str:
    text = readme.read_text()
    head, sep, rest = text.partition(BEGIN)
    if not sep or END not in rest:
        raise SystemExit(f"{readme}: no {BEGIN} ... {END} block")
    tail = rest.split(END, 1)[1]
    return f"{head}{BEGIN}\n{table(spec_file)}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("roles_dir", nargs="?", default=COLLECTION_ROLES)
    args = parser.parse_args()
    wanted = {}
    for role in sorted(Path(args.roles_dir).iterdir()):
        spec, readme = role / "meta/argument_specs.yml", role / "README.md"
        if spec.is_file():
            wanted[readme] = render(readme, spec)
    return write_or_check(wanted, args.check, "tests/harness/role_vars_table.py")


def write_or_check(wanted: dict, check: bool, script: str) -> int:
    """Write each file its wanted text (path -> text), or with ``check`` only name the
    files out of date and return 1 (also used by fabric_spec.py)."""
    stale = [path for path, text in wanted.items() if path.read_text() != text]
    if check and stale:
        print(f"out of date (run {script}):", *map(str, stale), sep="\n  ")
        return 1
    for path in stale:
        path.write_text(wanted[path])
    return 0


if __name__ == "__main__":
    sys.exit(main())
