"""ansible-doc over every role, module and filter of the collection (one CLI call per
kind): each has a doc with a short description; a role's entry points show exactly the
options of its meta/argument_specs.yml; a module's doc options are exactly its
argument_spec (caught at the module's own AnsibleModule call) with examples and return
values; every filter a FilterModule exports is documented."""

from __future__ import annotations

import importlib
import json

import pytest
import yaml
from conftest import COLLECTION_DIR, ROLES_DIR

ROLES = sorted(p.parent.parent.name for p in ROLES_DIR.glob("*/meta/argument_specs.yml"))
MODULES = sorted(p.stem for p in (COLLECTION_DIR / "plugins/modules").glob("*.py"))


def _filters():
    names = []
    for path in sorted((COLLECTION_DIR / "plugins/filter").glob("*.py")):
        module = importlib.import_module(
            f"ansible_collections.rdma.fabric.plugins.filter.{path.stem}"
        )
        names += list(module.FilterModule().filters())
    return sorted(names)


FILTERS = _filters()


@pytest.fixture(scope="module")
def docs(run_cli):
    out = {}
    for kind, names in (("role", ROLES), ("module", MODULES), ("filter", FILTERS)):
        proc = run_cli("ansible-doc", "-t", kind, "--json", *(f"rdma.fabric.{n}" for n in names))
        assert proc.returncode == 0, proc.stderr
        assert "[ERROR]" not in proc.stderr and "[WARNING]" not in proc.stderr, proc.stderr
        out[kind] = json.loads(proc.stdout)
    return out


class _Spec(Exception):
    pass


def _argument_spec_keys(name, monkeypatch):
    """The top-level keys of the argument_spec the module's main() gives AnsibleModule
    (caught at the call; nothing runs), or None for a doc-only module whose action
    plugin does the work."""
    module = importlib.import_module(f"ansible_collections.rdma.fabric.plugins.modules.{name}")
    if not hasattr(module, "main"):
        return None

    def capture(*args, **kwargs):
        raise _Spec(kwargs.get("argument_spec", args[0] if args else None))

    monkeypatch.setattr(module, "AnsibleModule", capture)
    with pytest.raises(_Spec) as caught:
        module.main()
    return set(caught.value.args[0])


def test_every_plugin_kind_was_found():
    assert len(ROLES) == len(list(ROLES_DIR.iterdir())) >= 8, ROLES
    assert len(MODULES) >= 15 and len(FILTERS) >= 50


@pytest.mark.parametrize("role", ROLES)
def test_role_doc_shows_every_option_of_every_entry_point(docs, role):
    spec = yaml.safe_load((ROLES_DIR / role / "meta" / "argument_specs.yml").read_text())
    shown = docs["role"][f"rdma.fabric.{role}"]["entry_points"]
    assert set(shown) == set(spec["argument_specs"]), role
    for entry, body in spec["argument_specs"].items():
        assert shown[entry].get("short_description"), (role, entry)
        assert set(shown[entry].get("options") or {}) == set(body.get("options") or {}), entry


@pytest.mark.parametrize("name", MODULES)
def test_module_doc_is_its_argument_spec(docs, name, monkeypatch):
    doc = docs["module"][f"rdma.fabric.{name}"]
    assert doc["doc"]["short_description"] and doc["examples"].strip(), name
    assert doc["return"], f"{name} documents no return values"
    keys = _argument_spec_keys(name, monkeypatch)
    if keys is None:
        assert (COLLECTION_DIR / "plugins/action" / f"{name}.py").is_file(), name
        return
    assert set(doc["doc"].get("options") or {}) == keys, name


@pytest.mark.parametrize("name", FILTERS)
def test_filter_doc(docs, name):
    doc = docs["filter"][f"rdma.fabric.{name}"]["doc"]
    assert doc.get("short_description") and doc.get("description"), name
