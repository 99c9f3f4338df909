#!/usr/bin/env python3
"""Write rdma_roce_policy's schema (fabric_schema.ROCE_POLICY_OPTIONS) where ansible-doc reads it.

- every role's meta/argument_specs.yml that declares rdma_roce_policy: the entry's
  ``options:`` (its own description, type and default stay the role's);
- the rdma.fabric.roce_policy filter's DOCUMENTATION: ``_input``'s ``suboptions:``.

One schema, so the roles, the filter and the validator cannot disagree. `--check`
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

# What a role's entry leaves out: ansible-core validates a role's argument specs before
# its tasks, and would refuse trust pcp as "must be one of: dscp" before the role's own
# validation says why pcp cannot work (roce_policy.PCP_REFUSED); the description says
# only dscp is taken, the filter doc keeps the choices.
ROLE_SPEC_LEAVES_OUT = {"trust": ("choices",)}

# The order each option's keys are written in.
ORDER = ("description", "type", "elements", "choices", "default", "version_added")


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


def _doc_options(options, sub_key, leave_out=None):
    out = {}
    for name, spec in options.items():
        left = (leave_out or {}).get(name, ())
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
            doc[sub_key] = _doc_options(spec["options"], sub_key, leave_out)
        out[name] = doc
    return out


def block(key: str, indent: int, sub_key: str) -> list[str]:
    """``key:`` and the schema's options under it, as lines indented by ``indent``."""
    options = {**fabric_schema.ROCE_POLICY_OPTIONS, **fabric_schema.ROCE_POLICY_DERIVED_OPTIONS}
    text = yaml.dump(
        {
            key: _doc_options(
                options, sub_key, ROLE_SPEC_LEAVES_OUT if sub_key == "options" else None
            )
        },
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=72 - indent,
        indent=2,
    )
    return [(" " * indent + line) if line else line for line in text.splitlines()]


def _replace_sub_block(lines: list[str], start: int, key: str, sub_key: str) -> list[str]:
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
    return lines[: start + 1] + kept + block(sub_key, child, sub_key) + lines[end:]


def render_spec(text: str) -> str:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(r"^\s+rdma_roce_policy:\s*$", line)]
    for start in reversed(starts):
        lines = _replace_sub_block(lines, start, "rdma_roce_policy", "options")
    return "\n".join(lines) + "\n"


def render_filter(text: str) -> str:
    lines = text.splitlines()
    start = lines.index("  _input:")
    return "\n".join(_replace_sub_block(lines, start, "_input", "suboptions")) + "\n"


def targets():
    for spec in sorted(COLLECTION.glob("roles/*/meta/argument_specs.yml")):
        if re.search(r"^\s+rdma_roce_policy:\s*$", spec.read_text(), re.M):
            yield spec, render_spec
    yield FILTER, render_filter


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    wanted = {path: render(path.read_text()) for path, render in targets()}
    return write_or_check(wanted, args.check, "tests/harness/roce_policy_spec.py")


if __name__ == "__main__":
    sys.exit(main())
