# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two devices Ansible would reach through one persistent connection.

ansible-core keeps one persistent connection (network_cli, httpapi, netconf) per local
socket, and names the socket after the play context's remote address, port, user and
connection (plugins/connection/ssh.py ``_create_control_path``, called by
``ansible-connection`` and ``Connection._update_connection_state``). The port there is
``ansible_port`` (or ``ansible_ssh_port``), never a connection's own port option such as
``ansible_httpapi_port``. Two switches behind one address that differ only by
``ansible_httpapi_port`` (stand-ins on 127.0.0.1, a console server's port forwards) share
a socket: when they run side by side, one switch's tasks run on the other switch, and
the first one's push reports "ok" with nothing sent to it.

Pure functions over plain data (the variables each inventory entity sets, the host's
groups in Ansible's order); rdma.fabric.inventory_check feeds them the inventory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ansible_collections.rdma.fabric.plugins.module_utils.rails import some_names

PERSISTENT = ("network_cli", "httpapi", "netconf")
# The play context's attributes, each from the first of its variables a host sets
# (ansible.constants.MAGIC_VARIABLE_MAPPING).
IDENTITY = {
    "connection": ("ansible_connection",),
    "address": ("ansible_ssh_host", "ansible_host"),
    "port": ("ansible_ssh_port", "ansible_port"),
    "user": ("ansible_ssh_user", "ansible_user"),
}
CONNECTION_VARS = frozenset(name for names in IDENTITY.values() for name in names)


def effective(layers: Iterable[Mapping[str, object]], names: Iterable[str]) -> dict:
    """The value of each name after the layers (lowest precedence first: group all, the
    other groups in Ansible's sort order, the host, extra vars) override each other."""
    wanted = set(names)
    found: dict = {}
    for layer in layers:
        found.update({name: value for name, value in layer.items() if name in wanted})
    return found


def identity(host: str, values: Mapping[str, object]) -> tuple | None:
    """The persistent connection's key for a host, None when its connection is not one
    Ansible keeps open (ssh, docker, local ...) or a value is a template (only Ansible
    knows what it renders to)."""
    connection = str(values.get("ansible_connection", ""))
    if connection.rsplit(".", 1)[-1] not in PERSISTENT:
        return None
    if any("{{" in str(values[name]) for name in CONNECTION_VARS if name in values):
        return None
    key = [connection]
    for attr in ("address", "port", "user"):
        value = next((values[n] for n in IDENTITY[attr] if n in values), None)
        key.append(host if attr == "address" and value is None else value)
    return tuple(None if v is None else str(v) for v in key)


def shared_connections(values_of_host: Mapping[str, Mapping[str, object]]) -> list[dict]:
    """Hosts whose persistent connections would be one: connection, address, port, user
    and the hosts that share them."""
    by_key: dict[tuple, list[str]] = {}
    for host, values in values_of_host.items():
        key = identity(host, values)
        if key is not None:
            by_key.setdefault(key, []).append(host)
    return [
        {
            "connection": key[0],
            "address": key[1],
            "port": key[2],
            "user": key[3],
            "hosts": sorted(hosts),
        }
        for key, hosts in sorted(by_key.items(), key=lambda kv: sorted(kv[1]))
        if len(hosts) > 1
    ]


def message(item: Mapping) -> str:
    port = "no ansible_port" if item["port"] is None else f"ansible_port {item['port']}"
    user = "no user" if item["user"] is None else f"user {item['user']}"
    reached = f"{item['connection']} to {item['address']}, {port}, {user}"
    return (
        f"{some_names(item['hosts'])} share one persistent connection ({reached}):"
        " Ansible keys it by address, ansible_port and user, so one host's tasks would run"
        " on the other; give each its own ansible_port (the port it listens on, e.g. the"
        " value of ansible_httpapi_port) or its own ansible_host"
    )
