# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller side of rdma.fabric.rail_plan: the whole fabric's rail plan in one pass.

Runs on the controller only (nothing is sent to a host). Reads each listed host's
rdma_rail_host_index, rdma_rail_addresses and rdma_rail_devices from hostvars once,
so one run_once task checks 1,000 hosts x 8 rails (duplicate addresses across hosts
name both hosts) for the price of reading three variables per host.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    bind_pkeys,
    fabric_rails,
    management_overlaps,
    normalize_rails,
    special_network_errors,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller_action import (
    ControllerAction,
)

HOST_VARS = ("rdma_rail_host_index", "rdma_rail_addresses", "rdma_rail_devices")


def _management_network(values):
    """CIDR of the host's default-route network from its gathered facts, or None."""
    facts = values.get("ansible_facts") or {}
    default = facts.get("default_ipv4") or values.get("ansible_default_ipv4") or {}
    if default.get("network") and default.get("netmask"):
        return f"{default['network']}/{default['netmask']}"
    return None


def build_plan(rails, hosts_vars, policy_mtu=None, partitions=None, management=None):
    """(plan, errors): fabric_rails, then each rail's pkeys bound to the partitions.

    management: {host: CIDR of its management network}; a rail subnet overlapping one
    is an error naming the hosts.
    """
    filled, errors = normalize_rails(rails, policy_mtu, hosts_vars)
    if not errors:
        _bound, errors = bind_pkeys(filled, partitions)
    if not errors:
        errors = special_network_errors(filled) + management_overlaps(filled, management)
    if errors:
        return None, errors
    plan, errors = fabric_rails(rails, hosts_vars, policy_mtu)
    if errors:
        return None, errors
    return {host: bind_pkeys(entries, partitions)[0] for host, entries in plan.items()}, []


class ActionModule(ControllerAction):
    ARGS = {
        "rails": {"type": "list", "elements": "dict", "required": True},
        # Not "int": a value that is no integer is refused naming rdma_roce_policy.mtu.
        "policy_mtu": {"type": "raw"},
        "hosts": {"type": "list", "elements": "str", "required": True},
        "partitions": {"type": "list", "elements": "dict"},
    }

    def outcome(self, args, task_vars):
        hostvars = task_vars["hostvars"]
        hosts_vars = {}
        management = {}
        for host in args["hosts"]:
            values = hostvars.get(host) or {}
            hosts_vars[host] = {key: values.get(key) for key in HOST_VARS}
            network = _management_network(values)
            if network:
                management[host] = network
        plan, errors = build_plan(
            args["rails"], hosts_vars, args["policy_mtu"], args["partitions"], management
        )
        if errors:
            return {
                "failed": True,
                "errors": errors,
                "msg": "invalid rail plan:\n" + "\n".join(errors),
            }
        return {"plan": plan, "hosts": len(plan), "rails": len(args["rails"])}
