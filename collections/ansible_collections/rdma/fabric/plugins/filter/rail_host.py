# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma.fabric.rail_conflicts: a host's other network configuration that matches a rail
netdev (module_utils/rail_conflicts.py), refused naming the file and the netdev."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import rail_conflicts as rc


def _mac(facts, netdev):
    """The netdev's MAC from gathered facts (ansible_facts keys use _ for - . :)."""
    key = netdev.replace("-", "_").replace(".", "_").replace(":", "_")
    entry = (facts or {}).get(key)
    return entry.get("macaddress") if isinstance(entry, dict) else None


def rail_conflicts(probe, links, host="this host", own=(), facts=None, refuse=True):
    """Files of the probe text that configure a rail netdev: [{path, netdev}]; with
    refuse (the default) an error naming host, files and netdevs instead. facts: the
    host's ansible_facts (each rail netdev's MAC, for files that match by MAC)."""
    netdevs = [link["netdev"] for link in links or [] if link.get("netdev")]
    found = rc.conflicts(
        rc.split_probe(probe or ""), {n: _mac(facts, n) for n in netdevs}, list(own or [])
    )
    if found and refuse:
        raise AnsibleFilterError(
            "rdma_rails: other network configuration matches the rails (nothing changed):\n"
            + "\n".join(rc.conflict_errors(host, found))
        )
    return found


class FilterModule:
    def filters(self):
        return {"rail_conflicts": rail_conflicts}
