# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Import the collection's controller-side Python once, in ansible-playbook's main
process, before the first task forks a worker.

ansible-core runs each task on each host in a forked worker process. Looking up one
rdma.fabric filter makes its Jinja2 plugin loader load every filter file of the
collection, and the module_utils and plugin_utils those files import go through the
collection loader, which compiles them from source (it keeps no bytecode): measured on
the 16-host fleet (tests/fleet), 464 workers of a site.yml run compiled the same 35
module_utils each, a large share of the controller's CPU. Modules imported in the main
process are inherited by every fork (the plugin loader reuses what ``sys.modules``
holds), so they are compiled once per run.

A module that fails to import is left out, and so is every module its import brought
in (an import cycle can leave a half-built module in ``sys.modules``): its plugin then
loads, and fails, as it would without this callback.

``connections`` (or ``RDMA_FABRIC_PRELOAD_CONNECTIONS``): connection plugins to load
the same way, for a connection plugin that lives in a collection (the docker connection
of the project's labs); ansible-core's own (ssh, local) need none.
"""

from __future__ import annotations

DOCUMENTATION = """
name: preload
type: aggregate
short_description: import rdma.fabric's controller-side plugins once, before workers fork
description:
  - Imports the collection's filter, action, plugin_utils and module_utils Python in the
    main ansible-playbook process at the start of the run, so that forked workers
    inherit them instead of compiling them again for every task on every host.
  - Changes no output and no result; a module that cannot be imported is skipped (its
    plugin then loads as it would without this callback).
requirements:
  - enable it in ansible.cfg (C(callbacks_enabled = rdma.fabric.preload))
options:
  connections:
    description: Connection plugins (fully qualified names) to load before the first fork.
    type: list
    elements: str
    default: []
    env:
      - name: RDMA_FABRIC_PRELOAD_CONNECTIONS
    ini:
      - section: rdma_fabric
        key: preload_connections
"""

import importlib
import pkgutil
import sys

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import connection_loader
from ansible.utils.display import Display

PACKAGE = "ansible_collections.rdma.fabric.plugins"
KINDS = ("module_utils", "plugin_utils", "filter", "test", "action")

display = Display()


def _import(name: str) -> bool:
    """Import one module; on failure, forget every module this attempt added."""
    before = set(sys.modules)
    try:
        importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - its own loader reports it later
        for added in set(sys.modules) - before:
            del sys.modules[added]
        display.vvv(f"rdma.fabric.preload: {name} not preloaded: {exc}")
        return False
    return True


def preload(package: str = PACKAGE, kinds: tuple = KINDS) -> list[str]:
    """Import every Python module of these plugin kinds (sub-packages included); return
    the names imported."""
    loaded = []
    for kind in kinds:
        if not _import(f"{package}.{kind}"):
            continue  # a kind the collection does not have
        parent = sys.modules[f"{package}.{kind}"]
        for info in pkgutil.walk_packages(parent.__path__, f"{package}.{kind}.", lambda _: None):
            if _import(info.name):
                loaded.append(info.name)
    return loaded


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "rdma.fabric.preload"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_start(self, playbook):
        loaded = preload()
        for name in self.get_option("connections") or []:
            try:
                connection_loader.get(name, class_only=True)
            except Exception as exc:  # noqa: BLE001
                display.vvv(f"rdma.fabric.preload: connection {name} not preloaded: {exc}")
        display.vvv(f"rdma.fabric.preload: {len(loaded)} modules imported before the first fork")
