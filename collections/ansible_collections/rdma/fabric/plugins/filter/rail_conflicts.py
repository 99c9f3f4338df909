# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma.fabric.rail_conflicts: a host's other network configuration that matches a rail
netdev (module_utils/rail_conflicts.py), refused naming the file and the netdev."""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import rail_conflicts as rc
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render

# The probe's record of `ip -j link show` (alternative names of the rail netdevs).
IP_LINK = "@ip-link"


def _mac(facts, netdev):
    """The netdev's MAC from gathered facts (ansible_facts keys use _ for - . :)."""
    key = netdev.replace("-", "_").replace(".", "_").replace(":", "_")
    entry = (facts or {}).get(key)
    return entry.get("macaddress") if isinstance(entry, dict) else None


def _altnames(text):
    try:
        links = json.loads(text or "[]")
    except ValueError:
        return {}
    return {
        link.get("ifname"): list(link.get("altnames") or [])
        for link in links
        if isinstance(link, dict)
    }


def _network_file(link, backend):
    """The .network that configures the link (networkd applies the first matching one)."""
    if backend == "networkd":
        return rail_render.network_file(link)
    if backend == "netplan":
        return f"10-netplan-{link['netdev']}.network"
    return None


def rail_conflicts(probe, links, host="this host", own=(), facts=None, refuse=True, backend=None):
    """Files of the probe text that configure a rail netdev: [{path, netdev}]; with
    refuse (the default) an error naming host, files and netdevs instead. facts: the
    host's ansible_facts (each rail netdev's MAC, for files that match by MAC); backend:
    the role's (the rail's own .network file name: a .network sorting after it is never
    applied)."""
    files = rc.split_probe(probe or "")
    altnames = _altnames(files.pop(IP_LINK, None))
    netdevs = {
        link["netdev"]: {
            "mac": _mac(facts, link["netdev"]),
            "altnames": altnames.get(link["netdev"], []),
            "kind": link.get("kind"),
            "network_file": _network_file(link, backend),
        }
        for link in links or []
        if link.get("netdev")
    }
    found = rc.conflicts(files, netdevs, list(own or []))
    if found and refuse:
        raise AnsibleFilterError(
            "rdma_rails: other network configuration matches the rails (nothing changed):\n"
            + "\n".join(rc.conflict_errors(host, found))
        )
    return found


class FilterModule:
    def filters(self):
        return {"rail_conflicts": rail_conflicts}
