"""Code that runs on the managed hosts stays within their Python.

modules/ and the module_utils they import are shipped to the hosts. ansible-core 2.19's
module_utils/basic.py refuses a target Python older than 3.8 (_PY_MIN), so 3.8 is the floor
this collection can honour on any platform; the controller's Python (3.11) is not. Syntax is
checked by parsing with feature_version=(3, 8); the newer built-in keywords and methods that
parse fine but fail at run time are checked by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = (
    Path(__file__).resolve().parents[2] / "collections/ansible_collections/rdma/fabric/plugins"
)
HOST_CODE = sorted([*PLUGINS.glob("modules/*.py"), *PLUGINS.glob("module_utils/*.py")])
FLOOR = (3, 8)

# Call keywords and methods newer than the floor (Python docs, "What's New" 3.9 and 3.10).
NEWER_KEYWORDS = {("zip", "strict"): "3.10"}
NEWER_METHODS = {"removeprefix": "3.9", "removesuffix": "3.9", "bit_count": "3.10"}


def _newer_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name):
            for keyword in node.keywords:
                version = NEWER_KEYWORDS.get((node.func.id, keyword.arg))
                if version:
                    found.append(
                        f"line {node.lineno}: {node.func.id}({keyword.arg}=) is Python {version}+"
                    )
        if isinstance(node.func, ast.Attribute) and node.func.attr in NEWER_METHODS:
            version = NEWER_METHODS[node.func.attr]
            found.append(f"line {node.lineno}: .{node.func.attr}() is Python {version}+")
    return found


@pytest.mark.parametrize("path", HOST_CODE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_host_code_runs_on_the_floor_python(path):
    source = path.read_text()
    tree = ast.parse(source, filename=str(path), feature_version=FLOOR)
    assert _newer_calls(tree) == []


def test_the_check_sees_a_newer_call():
    assert _newer_calls(ast.parse("dict(zip(a, b, strict=True))"))
    assert _newer_calls(ast.parse("s.removeprefix('x')"))
    assert not _newer_calls(ast.parse("dict(zip(a, b))"))
