"""rdma.fabric.preload (the collection's callback): the collection's controller-side
Python is imported in ansible-playbook's main process, so every forked worker inherits
it instead of compiling it again (ansible-core's collection loader keeps no bytecode).

A real ansible-playbook run: a task's action plugin (written here, importing nothing of
rdma.fabric) reports which rdma.fabric modules its worker already holds. With the
callback enabled the worker holds the filters and module_utils before any task used
them; without it, none.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COLLECTIONS = REPO / "collections"

INHERITED = """
import sys
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        prefix = "ansible_collections.rdma.fabric.plugins."
        return {"changed": False, "held": sorted(m for m in sys.modules if m.startswith(prefix))}
"""

PLAY = """
- name: What a worker holds
  hosts: all
  gather_facts: false
  tasks:
    - name: Report the rdma.fabric modules this worker inherited
      inherited:
      register: held

    - name: Write them out
      ansible.builtin.copy:
        content: "{{ held.held | to_json }}"
        dest: "{{ out_dir }}/{{ inventory_hostname }}.json"
        mode: "0644"
      delegate_to: localhost
"""


def _held(tmp_path: Path, callbacks: str) -> dict:
    (tmp_path / "action").mkdir(exist_ok=True)
    (tmp_path / "action/inherited.py").write_text(INHERITED)
    (tmp_path / "play.yml").write_text(PLAY)
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    out = tmp_path / f"out-{callbacks}"
    out.mkdir()
    env = dict(
        os.environ,
        ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(COLLECTIONS),
        ANSIBLE_ACTION_PLUGINS=str(tmp_path / "action"),
        ANSIBLE_CALLBACKS_ENABLED=callbacks,
    )
    ansible = Path(sys.executable).parent / "ansible-playbook"
    proc = subprocess.run(
        [str(ansible), "-i", "gpu01,gpu02,", "-c", "local", str(tmp_path / "play.yml"),
         "-e", f"out_dir={out}", "-e", f"ansible_python_interpreter={sys.executable}"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def test_workers_inherit_the_collection_with_the_callback(tmp_path):
    held = _held(tmp_path, "rdma.fabric.preload")
    assert set(held) == {"gpu01", "gpu02"}
    for modules in held.values():
        assert "ansible_collections.rdma.fabric.plugins.module_utils.verify_plan" in modules
        assert "ansible_collections.rdma.fabric.plugins.filter.rail" in modules
        assert "ansible_collections.rdma.fabric.plugins.action.rail_plan" in modules


def test_without_it_a_worker_starts_with_none(tmp_path):
    held = _held(tmp_path, "ansible.builtin.timer")
    assert held == {"gpu01": [], "gpu02": []}


def test_a_module_that_cannot_be_imported_is_left_to_its_loader(tmp_path, monkeypatch):
    """preload() imports what it can: a broken module is skipped, not an error, and
    leaves nothing of its attempt in sys.modules; sub-packages are walked too."""
    package = tmp_path / "fakecoll"
    (package / "filter").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "filter/__init__.py").write_text("")
    (package / "filter/good.py").write_text("VALUE = 1\n")
    (package / "filter/broken.py").write_text("raise RuntimeError('needs a library')\n")
    # An import cycle whose first module fails: the second finished loading and holds
    # the half-built first; neither may stay behind for the plugin loader to reuse.
    (package / "filter/cycle_a.py").write_text(
        "from fakecoll.filter import cycle_b\nraise RuntimeError('cycle_a')\n"
    )
    (package / "filter/cycle_b.py").write_text("from fakecoll.filter import cycle_a\n")
    (package / "filter/sub").mkdir()
    (package / "filter/sub/__init__.py").write_text("")
    (package / "filter/sub/deep.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = COLLECTIONS / "ansible_collections/rdma/fabric/plugins/callback/preload.py"
    spec = importlib.util.spec_from_file_location("rdma_fabric_preload", source)
    callback = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(callback)
    loaded = callback.preload("fakecoll", ("filter", "action"))
    assert loaded == ["fakecoll.filter.good", "fakecoll.filter.sub", "fakecoll.filter.sub.deep"]
    left = [m for m in sys.modules if m.startswith("fakecoll.filter.cycle")]
    assert left == []
