# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The leaf side of L3 rails: each leaf port's address and MTU, from the rail plan.

On an L3 rail (``prefix_length: 31``, or 30) every host owns one /31 of the rail's
subnet: the host has the odd address, its leaf port the even one (rails.py,
``leaf_address``). The leaf and the port come from the cabling plan: the rail's ``leaf``
or ``leaf_group`` and ``rdma_cabling_ports`` ({leaf: {host index: port}}), read by
cabling.expected_cabling, the same reading rdma_verify's cabling check and preflight
use. Nothing here computes an address a second way: the host's entry comes from
rails.fabric_rails and the leaf's end from rails.leaf_address.

``leaf_plan`` gives {leaf: {port: {address, address6, mtu, host, rail}}} for the leaves
asked for (``switches``: the managed ones), and refuses, naming the variable:

- a managed leaf of an L3 rail without a port map (rdma_cabling_ports.LEAF);
- a port given twice on one leaf (two host indexes, or two rails on one leaf);
- a host whose rdma_rail_host_index the leaf's port map lacks (cabling.py).

IPv6: on an L3 rail with ``subnet6`` each host owns one /127 of it (RFC 6164, rails.py
``_host_address6``): the host has the second address, its leaf port the first
(rails.leaf_address6), in ``address6`` ("2001:db8::2/127"; None without subnet6).
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.cabling import (
    expected_cabling,
    port_key,
    switch_key,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    fabric_rails,
    leaf_address,
    leaf_address6,
    natural_key,
    normalize_rails,
)

L3_PREFIXES = (30, 31)


def leaf_plan(rails, hosts_vars, port_maps=None, groups=None, policy_mtu=None, switches=None):
    """({leaf: {port: {address, address6, mtu, host, rail}}}, errors, notes (none today:
    kept for the role's warning task)).

    rails: rdma_rails as written. hosts_vars: {host: {rdma_rail_host_index,
    rdma_rail_addresses, rdma_rail_devices}}. port_maps: rdma_cabling_ports. groups:
    the inventory's groups (for leaf_group). switches: the managed switches (inventory
    names); only their ports are planned (None: every leaf). ``address`` is
    "10.0.0.0/31", ``address6`` "2001:db8::/127" or None; leaves and ports keep the
    spelling of rdma_rails / rdma_cabling_ports.
    """
    filled, errors = normalize_rails(rails, policy_mtu, hosts_vars)
    if errors:
        return None, errors, []
    l3 = {r["name"]: r for r in filled if r["subnet"] and r["prefix_length"] in L3_PREFIXES}
    if not l3:
        return {}, [], []
    managed = None if switches is None else {switch_key(s) for s in switches}
    groups = groups or {}
    notes = []
    # The rails that name their leaf, as cabling.py reads them; an L3 rail without one
    # has no leaf to configure.
    named = [r for r in rails if isinstance(r, dict) and (r.get("leaf") or r.get("leaf_group"))]
    maps = port_maps if isinstance(port_maps, dict) else {}
    for rail in named:
        if rail.get("name") not in l3:
            continue
        leaf, group = rail.get("leaf"), rail.get("leaf_group")
        members = [leaf] if leaf else list(groups.get(group) or [])
        for member in members:
            if managed is not None and switch_key(member) not in managed:
                continue
            if member not in maps:
                errors.append(
                    f"rdma_cabling_ports.{member} is missing: rail {rail['name']} is an L3 "
                    f"rail (prefix_length {l3[rail['name']]['prefix_length']}) and {member} "
                    "is a managed leaf, whose ports get each host's gateway address "
                    "(set roce_switch_qos_l3_ports: false to leave them alone)"
                )
    if errors:
        return None, errors, notes
    cabling, errors = expected_cabling(named, hosts_vars, port_maps, groups, "auto")
    if errors:
        return None, errors, notes
    hosts, errors = fabric_rails(rails, hosts_vars, policy_mtu)
    if errors:
        return None, errors, notes
    plan = {}
    taken = {}
    for host in sorted(hosts, key=natural_key):
        for entry in hosts[host]:
            row = (cabling.get(host) or {}).get(entry["name"])
            if entry["name"] not in l3 or not row or not row["leaf"] or row["port"] is None:
                continue
            leaf, port = row["leaf"], row["port"]
            if managed is not None and switch_key(leaf) not in managed:
                continue
            prefix = entry["prefix_length"]
            address = f"{leaf_address(entry['address'], prefix)}/{prefix}"
            address6 = None
            if entry.get("address6"):
                address6 = f"{leaf_address6(entry['address6'])}/{entry['prefix_length6']}"
            key = (switch_key(leaf), port_key(port))
            if key in taken:
                errors.append(
                    f"rdma_cabling_ports.{leaf}: port {port} is given twice ({taken[key]} and "
                    f"{host} on rail {entry['name']}): one port carries one host's /{prefix}"
                )
                continue
            taken[key] = f"{host} on rail {entry['name']}"
            plan.setdefault(leaf, {})[port] = {
                "address": address,
                "address6": address6,
                "mtu": entry["mtu"],
                "host": host,
                "rail": entry["name"],
            }
    if errors:
        return None, errors, notes
    return plan, [], notes


def switch_ports(plan, switch):
    """The ports of one switch in a leaf_plan ({} when it is no L3 leaf)."""
    key = switch_key(switch)
    out = {}
    for leaf, ports in (plan or {}).items():
        if switch_key(leaf) == key:
            out.update(ports)
    return out


HOST_VARS = ("rdma_rail_host_index", "rdma_rail_addresses", "rdma_rail_devices")


def for_switch(
    rails, hostvars, hosts, switch, switches, port_maps=None, groups=None, policy_mtu=None
):
    """{ports, notes} of one managed switch, the whole fabric's leaves checked first
    (so a bad plan stops the first batch, not the one whose leaf is at fault). Reads
    each host's rail variables from hostvars; raises ValueError with every error."""
    hosts_vars = {}
    for host in hosts:
        values = hostvars.get(host) or {}
        hosts_vars[host] = {key: values.get(key) for key in HOST_VARS}
    plan, errors, notes = leaf_plan(rails, hosts_vars, port_maps, groups, policy_mtu, switches)
    if errors:
        raise ValueError("the leaf ports of the L3 rails are refused:\n" + "\n".join(errors))
    return {"ports": switch_ports(plan, switch), "notes": notes}
