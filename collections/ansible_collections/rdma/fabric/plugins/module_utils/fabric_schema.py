# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The schema of the fabric-wide variables, as ansible-core argument-spec options.

One description of ``rdma_roce_policy``'s keys (type, choices, default, sub-options) for
every reader: roce_policy.DEFAULTS is built from it, normalize_policy checks the key set
with ansible-core's ArgumentSpecValidator against it, and a unit test keeps the roles'
meta/argument_specs.yml entries in step with it.

Argument specs have no ranges and no rules that compare fields (ECN must include the
RoCE priority, CNP must differ from RoCE, ETS sums to 100): those stay in the hand
validator (roce_policy.normalize_policy), which also accepts strings of digits from extra
vars. Keys whose None derives a value from another key are ``raw`` so None passes.
"""

from __future__ import annotations

import copy

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ROCE_POLICY_OPTIONS = {
    "roce_priority": {"type": "int", "default": 3},
    "roce_dscp": {"type": "int", "default": 26},
    "cnp_priority": {"type": "int", "default": 6},
    "cnp_dscp": {"type": "int", "default": 48},
    # pcp is refused with its own reason by the hand validator (roce_policy.PCP_REFUSED).
    "trust": {"type": "str", "default": "dscp", "choices": ["dscp"]},
    "pfc_priorities": {"type": "list", "elements": "int", "default": None},
    "ets_bandwidth": {"type": "dict", "default": None},
    "prio_tc": {"type": "list", "elements": "int", "default": None},
    "ecn_priorities": {"type": "list", "elements": "int", "default": None},
    "ecn_min_threshold_kb": {"type": "int", "default": 150},
    "ecn_max_threshold_kb": {"type": "int", "default": 1500},
    "ecn_mark_probability": {"type": "int", "default": 100},
    "pfc_watchdog": {
        "type": "dict",
        "options": {
            "enabled": {"type": "bool", "default": True},
            "detection_time_ms": {"type": "int", "default": 200},
            "restoration_time_ms": {"type": "int", "default": 200},
            "action": {"type": "str", "default": "drop", "choices": ["drop", "forward", "alert"]},
        },
    },
    "mtu": {"type": "int", "default": 9000},
    "cable_length_m": {"type": "int", "default": 100},
    "host_cable_length_m": {"type": "int", "default": None},
    "host_prio2buffer": {"type": "list", "elements": "int", "default": None},
    "host_buffer_size": {"type": "list", "elements": "int", "default": None},
    "nic_firmware_dcbx": {"type": "bool", "default": None},
    "host_pfc_storm_timeout_ms": {"type": "int", "default": None},
    "wred_drop": {"type": "bool", "default": False},
}

# Values the policy derives (roce_policy.DERIVED); a filled policy carries them and
# normalizes to itself, so the schema accepts them back (the hand validator checks that
# they agree with what it derives).
ROCE_POLICY_DERIVED_OPTIONS = {
    "roce_tos": {"type": "int"},
    "tc_tsa": {"type": "list", "elements": "str"},
    "tc_bw": {"type": "list", "elements": "int"},
    "dscp_priority": {"type": "list", "elements": "int"},
}


def defaults(options):
    """The defaults dict an options spec describes (sub-options become nested dicts)."""
    out = {}
    for key, spec in options.items():
        if "options" in spec:
            out[key] = defaults(spec["options"])
        else:
            out[key] = copy.deepcopy(spec.get("default"))
    return out


def _loose(options):
    """The options with every type ``raw``: the key set only, for the unknown-key check
    (types and ranges are the hand validator's, whose messages name the variable)."""
    out = {}
    for key, spec in options.items():
        loose = {"type": "raw"}
        if "options" in spec:
            loose = {"type": "dict", "options": _loose(spec["options"])}
        out[key] = loose
    return out


_POLICY_SPEC = _loose({**ROCE_POLICY_OPTIONS, **ROCE_POLICY_DERIVED_OPTIONS})
_POLICY_KEYS = ArgumentSpecValidator(_POLICY_SPEC)


def unknown_keys(policy):
    """The keys of ``policy`` the schema does not know, as dotted paths under the policy
    (``foo``, ``pfc_watchdog.bar``), sorted."""
    # The validator crashes on a sub-options key holding a non-dict (ansible-core 2.19
    # set_fallbacks iterates it) and on non-string sub-keys (it joins them): probe the
    # first as unset (the hand validator names it) and the second as strings.
    probe = {}
    for key, value in policy.items():
        if "options" in _POLICY_SPEC.get(key, {}):
            value = {str(k): v for k, v in value.items()} if isinstance(value, dict) else None
        probe[str(key)] = value
    found = _POLICY_KEYS.validate(probe).unsupported_parameters
    paths = []
    for item in found:
        if isinstance(item, tuple):
            paths.append(".".join(str(part) for part in item))
        else:
            paths.append(str(item))
    return sorted(paths)


# One rail of ``rdma_rails`` (a list of these). Ranges, the one-selector rule, the
# ethernet/infiniband-only keys, subnets and the per-host addresses are rails.py's
# (normalize_rails), whose messages name rdma_rails[i].key. Defaults given only where
# normalize_rails applies a constant one (mtu follows the policy or the IPoIB mode;
# table follows the rail's position).
RAIL_OPTIONS = {
    "name": {"type": "str", "required": True},
    "device": {"type": "str"},
    "netdev": {"type": "str"},
    "pci": {"type": "str"},
    "port": {"type": "int", "default": 1},
    "link_layer": {"type": "str", "default": "ethernet", "choices": ["ethernet", "infiniband"]},
    "subnet": {"type": "str"},
    "subnet6": {"type": "str"},
    "mtu": {"type": "int"},
    "prefix_length": {"type": "int"},
    "gateway": {"type": "str"},
    "ipoib_mode": {"type": "str", "choices": ["datagram", "connected"]},
    "pkeys": {
        "type": "list",
        "elements": "dict",
        "options": {
            "partition": {"type": "str", "required": True},
            "subnet": {"type": "str"},
            "mtu": {"type": "int"},
        },
    },
    "table": {"type": "int"},
    "leaf": {"type": "str"},
    "leaf_group": {"type": "str"},
}
