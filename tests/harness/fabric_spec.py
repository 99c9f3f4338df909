#!/usr/bin/env python3
"""Write the fabric-wide variables' schemas (fabric_schema) where ansible-doc reads them.

- every role's meta/argument_specs.yml that declares rdma_roce_policy or rdma_rails: the
  entry's ``options:`` (ROCE_POLICY_OPTIONS; RAIL_OPTIONS, one rail of the list); its own
  description, type and default stay the role's;
- the rdma.fabric.roce_policy filter's DOCUMENTATION: ``_input``'s ``suboptions:``.

One schema per variable, so the roles, the filter and the validators cannot disagree. `--check`
changes nothing and exits 1 naming the files out of date (tests/unit/test_fabric_schema.py
runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = ROOT / "collections/ansible_collections/rdma/fabric"
FILTER = COLLECTION / "plugins/filter/roce_policy.py"
sys.path.insert(0, str(ROOT / "collections"))

from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema  # noqa: E402
from role_vars_table import write_or_check  # noqa: E402  (this directory, sys.path[0])

# Each variable: its options and what a role's entry says otherwise (None: left out).
# ansible-core validates a role's argument specs before its tasks, and would refuse
# trust pcp as "must be one of: dscp" before the role's own validation says why pcp
# cannot work (roce_policy.PCP_REFUSED), a rail's link_layer InfiniBand (the rail plan
# reads any case), a blank ipoib_mode (ansible-core checks the choices of a null too;
# the plan takes it as unset) and a P_Key child given by its bare name (ansible-core
# takes a dict only): the descriptions say the values, the schema and filter doc keep
# the choices.
VARIABLES = {
    "rdma_roce_policy": (
        {**fabric_schema.ROCE_POLICY_OPTIONS, **fabric_schema.ROCE_POLICY_DERIVED_OPTIONS},
        {"trust": {"choices": None}},
    ),
    "rdma_rails": (
        fabric_schema.RAIL_OPTIONS,
        {
            "link_layer": {"choices": None},
            "ipoib_mode": {"choices": None},
            "pkeys": {"elements": "raw"},
        },
    ),
}

# The order each option's keys are written in.
ORDER = ("description", "type", "elements", "choices", "default", "required", "version_added")


class _Dumper(yaml.SafeDumper):
    """Block sequences indented under their key (yamllint's indentation rule)."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def _said(description, default):
    """The description with the default said in words (a role entry has no default:)."""
    shown = str(default).lower() if isinstance(default, bool) else default
    words = f"Default: C({shown})." if isinstance(shown, str) else f"Default: C({shown!r})."
    if isinstance(description, list):
        return [*description, words]
    return f"{description} {words}" if description else words


def _doc_options(options, sub_key, role=None):
    out = {}
    for name, spec in options.items():
        changed = (role or {}).get(name, {})
        spec = {**spec, **changed}
        left = tuple(key for key, value in changed.items() if value is None)
        if sub_key == "options":
            # A role entry declares no default: ansible-core type-checks a null only for
            # an option whose default is not null, and a key left blank in group_vars
            # (mtu:) is unset to the policy (the filter fills the schema's default).
            left = (*left, "default")
        doc = {
            key: spec[key]
            for key in ORDER
            if key in spec and spec[key] is not None and key not in left
        }
        if sub_key == "options" and spec.get("default") is not None:
            doc["description"] = _said(doc.get("description"), spec["default"])
        if "options" in spec:
            doc[sub_key] = _doc_options(spec["options"], sub_key, role)
        out[name] = doc
    return out


def block(variable: str, indent: int, sub_key: str) -> list[str]:
    """``sub_key:`` and the variable's options under it, as lines indented by ``indent``."""
    options, role = VARIABLES[variable]
    text = yaml.dump(
        {sub_key: _doc_options(options, sub_key, role if sub_key == "options" else None)},
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=72 - indent,
        indent=2,
    )
    return [(" " * indent + line) if line else line for line in text.splitlines()]


def _replace_sub_block(lines: list[str], start: int, variable: str, sub_key: str) -> list[str]:
    """Lines with the entry at ``start``'s ``sub_key:`` block replaced by the schema's."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
    ):
        end += 1
    entry = lines[start + 1 : end]
    child = indent + 2
    kept, skipping = [], False
    for line in entry:
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth == child:
            skipping = line.strip() == f"{sub_key}:"
        if not skipping:
            kept.append(line)
    return lines[: start + 1] + kept + block(variable, child, sub_key) + lines[end:]


def _declares(variable: str, text: str) -> list[int]:
    """Lines of ``text`` where an entry point's options declare ``variable``."""
    pattern = re.compile(rf"^      {variable}:\s*$")
    return [i for i, line in enumerate(text.splitlines()) if pattern.match(line)]


def render_spec(text: str) -> str:
    for variable in VARIABLES:
        lines = text.splitlines()
        for start in reversed(_declares(variable, text)):
            lines = _replace_sub_block(lines, start, variable, "options")
        text = "\n".join(lines) + "\n"
    return text


def render_filter(text: str) -> str:
    lines = text.splitlines()
    start = lines.index("  _input:")
    return "\n".join(_replace_sub_block(lines, start, "rdma_roce_policy", "suboptions")) + "\n"


def targets():
    for spec in sorted(COLLECTION.glob("roles/*/meta/argument_specs.yml")):
        if any(_declares(variable, spec.read_text()) for variable in VARIABLES):
            yield spec, render_spec
    yield FILTER, render_filter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    wanted = {path: render(path.read_text()) for path, render in targets()}
    return write_or_check(wanted, args.check, "tests/harness/fabric_spec.py")


if __name__ == "__main__":
    sys.exit(main())
