# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma.fabric.rail_conflicts: a host's other network configuration that matches a rail
netdev (module_utils/rail_conflicts.py), refused naming the file and the netdev."""

from __future__ import annotations

import fnmatch
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


def _links(text):
    """{ifname: {mac, altnames, kind}} from `ip -j link show`; None when not read."""
    try:
        links = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(links, list):
        return None
    return {
        link.get("ifname"): {
            "mac": link.get("address"),
            "altnames": list(link.get("altnames") or []),
            "kind": "ipoib" if link.get("link_type") == "infiniband" else "ethernet",
        }
        for link in links
        if isinstance(link, dict) and link.get("ifname")
    }


def _network_file(link, backend):
    """The .network that configures the link (networkd applies the first matching one)."""
    if backend == "networkd":
        return rail_render.network_file(link)
    if backend == "netplan":
        return f"10-netplan-{link['netdev']}.network"
    return None


def _others(path, files, others, own):
    """The host's other interfaces a file configures; a .network.d drop-in counts with
    the .network it extends (none when that is the role's own file)."""
    parent_name = rc.dropin_parent(path)
    if parent_name is None:
        return rc.matching_netdevs(path, files[path], others)
    parent = next((p for p in sorted(files) if p.endswith("/" + parent_name)), None)
    if parent is None or any(fnmatch.fnmatchcase(parent, pattern) for pattern in own):
        return []
    return rc.matching_netdevs(parent, files[parent] + "\n" + files[path], others)


def rail_conflicts(
    probe, links, host="this host", own=(), facts=None, refuse=True, backend=None, take_over=False
):
    """Files of the probe text that configure a rail netdev: [{path, netdev}]; with
    refuse (the default) an error naming host, files and netdevs instead. facts: the
    host's ansible_facts (each rail netdev's MAC, for files that match by MAC); backend:
    the role's (the rail's own .network file name: a .network sorting after it is never
    applied).

    take_over (rdma_rails_take_over): each item also gets ``others``, the host's other
    interfaces the file configures; only files without others may be moved aside, the
    rest are still refused (naming those interfaces), and the movable ones are returned.
    """
    files = rc.split_probe(probe or "")
    host_links = _links(files.pop(IP_LINK, None))
    if backend == "networkmanager":
        # NetworkManager's own run-time profiles (a rail's automatic "Wired connection
        # N"): the role's keyfile for the netdev takes their place.
        files = {path: text for path, text in files.items() if not rc.nm_generated(path, text)}
    netdevs = {
        link["netdev"]: {
            "mac": _mac(facts, link["netdev"])
            or (host_links or {}).get(link["netdev"], {}).get("mac"),
            "altnames": (host_links or {}).get(link["netdev"], {}).get("altnames", []),
            "kind": link.get("kind"),
            "network_file": _network_file(link, backend),
        }
        for link in links or []
        if link.get("netdev")
    }
    found = rc.conflicts(files, netdevs, list(own or []))
    if not take_over:
        if found and refuse:
            raise AnsibleFilterError(
                "rdma_rails: other network configuration matches the rails (nothing changed):\n"
                + "\n".join(rc.conflict_errors(host, found))
            )
        return found
    if found and host_links is None:
        raise AnsibleFilterError(
            f"rdma_rails: {host}: rdma_rails_take_over cannot tell which other interfaces "
            "the conflicting files configure (ip -j link was not read); nothing changed:\n"
            + "\n".join(rc.conflict_errors(host, found))
        )
    others = {
        name: dict(info, network_file=None)
        for name, info in (host_links or {}).items()
        if name not in netdevs
    }
    for item in found:
        item["others"] = _others(item["path"], files, others, list(own or []))
    blocked = sorted({(c["path"], ", ".join(c["others"])) for c in found if c["others"]})
    if blocked and refuse:
        raise AnsibleFilterError(
            "rdma_rails: other network configuration matches the rails (nothing changed):\n"
            + "\n".join(
                f"{host}: {path} also configures {names}: rdma_rails_take_over cannot move it "
                "aside without taking their configuration away; narrow it to leave the rails"
                for path, names in blocked
            )
        )
    return found


class FilterModule:
    def filters(self):
        return {"rail_conflicts": rail_conflicts}
