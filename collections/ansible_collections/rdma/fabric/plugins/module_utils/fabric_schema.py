# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The schema of the fabric-wide variables, as ansible-core argument-spec options.

One description of ``rdma_roce_policy`` (ROCE_POLICY_OPTIONS) and of one rail of
``rdma_rails`` (RAIL_OPTIONS) - type, choices, default, sub-options and the text
ansible-doc shows - for every reader: roce_policy.DEFAULTS is built from it;
normalize_policy and rails.normalize_rails check types, choices and the key sets with
ansible-core's ArgumentSpecValidator against it (``check_policy``, ``check_rail``: one
``Schema`` checker), and tests/harness/fabric_spec.py writes it into every role's
meta/argument_specs.yml entry and the roce_policy filter's documentation (a unit test
fails when one drifts).

Argument specs have no ranges and no rules that compare fields (ECN must include the
RoCE priority, CNP must differ from RoCE, ETS sums to 100; one of device, netdev or pci,
overlapping subnets, a gateway inside its subnet): those stay in the hand validators
(roce_policy.normalize_policy, rails.normalize_rails). Ranges are not written as
choices: 64 DSCPs or a 1-1048576 KB threshold as choices would make ansible-doc
unreadable and the messages worse than "must be a DSCP value (0-63)"; the descriptions
give them.
"""

from __future__ import annotations

import copy
import re

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

ROCE_POLICY_OPTIONS = {
    "roce_priority": {
        "description": ["802.1p priority (0-7) of RoCE traffic."],
        "type": "int",
        "default": 3,
    },
    "roce_dscp": {
        "description": [
            "DSCP (0-63) of RoCE traffic.",
            "48 with I(cnp_dscp) 26 (the RoCE/CNP convention swapped) is refused.",
        ],
        "type": "int",
        "default": 26,
    },
    "cnp_priority": {
        "description": [
            "Priority (0-7) of congestion notification packets; must differ from C(roce_priority)."
        ],
        "type": "int",
        "default": 6,
    },
    "cnp_dscp": {
        "description": [
            "DSCP (0-63) of congestion notification packets; must differ from C(roce_dscp)."
        ],
        "type": "int",
        "default": 48,
    },
    # pcp is refused with its own reason (roce_policy.PCP_REFUSED).
    "trust": {
        "description": [
            "Which marking classifies received packets. Only C(dscp) - C(pcp) is refused"
            " with the reason - it needs every RoCE frame VLAN-tagged with the RoCE priority"
            " (a VLAN egress-qos-map on each host), which these roles do not configure, so"
            " RoCE would travel untagged in priority 0 (lossy)."
        ],
        "type": "str",
        "choices": ["dscp"],
        "default": "dscp",
    },
    "pfc_priorities": {
        "description": [
            "Priorities (0-7) with PFC; only the RoCE priority may be listed ([] is lossy"
            " RoCE). Unset, C([roce_priority])."
        ],
        "type": "list",
        "elements": "int",
        "default": None,
    },
    "ets_bandwidth": {
        "description": [
            "Percent of bandwidth per ETS traffic class, summing to 100. Every traffic class"
            " not listed is strict priority. The RoCE traffic class needs a share.",
            "Unset, 50 for class 0 and 50 for the RoCE priority's class (C({0: 50, 3: 50})"
            " with the other defaults).",
        ],
        "type": "dict",
        "default": None,
    },
    "prio_tc": {
        "description": [
            "Eight traffic classes (0-7), one per priority. Unset, RoCE and CNP priorities"
            " keep their own class (same number) and every other priority uses class 0."
        ],
        "type": "list",
        "elements": "int",
        "default": None,
    },
    "ecn_priorities": {
        "description": [
            "Priorities ECN-marked by switches and reacting to it on hosts (DCQCN). Unset,"
            " C([roce_priority]); a list without the RoCE priority is refused (RoCE without"
            " ECN has no congestion control)."
        ],
        "type": "list",
        "elements": "int",
        "default": None,
    },
    "ecn_min_threshold_kb": {
        "description": [
            "Switch queue depth (1-1048576 KB) where ECN marking starts; at most"
            " C(ecn_max_threshold_kb)."
        ],
        "type": "int",
        "default": 150,
    },
    "ecn_max_threshold_kb": {
        "description": [
            "Switch queue depth (1-1048576 KB) where marking reaches C(ecn_mark_probability)."
        ],
        "type": "int",
        "default": 1500,
    },
    "ecn_mark_probability": {
        "description": ["Marking probability (1-100 percent) at the maximum threshold."],
        "type": "int",
        "default": 100,
    },
    "pfc_watchdog": {
        "description": ["Switch PFC watchdog; keys not given keep their defaults."],
        "type": "dict",
        "default": {},
        "options": {
            "enabled": {
                "description": ["Run the PFC watchdog on the switches' lossless queues."],
                "type": "bool",
                "default": True,
            },
            "detection_time_ms": {
                "description": [
                    "Milliseconds (1-60000) a queue may stay paused before the watchdog acts;"
                    " also the hosts' PFC storm prevention timeout unless"
                    " I(host_pfc_storm_timeout_ms) is set (then 80-8000). Each switch OS"
                    " narrows the range (checked per OS)."
                ],
                "type": "int",
                "default": 200,
            },
            "restoration_time_ms": {
                "description": [
                    "Milliseconds (1-60000) without pause frames before the queue is restored."
                ],
                "type": "int",
                "default": 200,
            },
            "action": {
                "description": [
                    "What the watchdog does to a stormed queue (Cumulus takes C(drop) only,"
                    " EOS C(drop) or C(alert))."
                ],
                "type": "str",
                "default": "drop",
                "choices": ["drop", "forward", "alert"],
            },
        },
    },
    "mtu": {
        "description": [
            "IP MTU of RoCE interfaces (1280-9216, EOS ports at most 9214). The switches'"
            " RoCE ports get the same."
        ],
        "type": "int",
        "default": 9000,
    },
    "cable_length_m": {
        "description": [
            "The fabric's cable length (1-10000 m) for PFC headroom, one value for both"
            " ends - the switches' (the default of roce_switch_qos_cable_length) and the"
            " hosts' (unless I(host_cable_length_m) sets them apart; a host NIC takes at"
            " most 999 m, so a longer one needs I(host_cable_length_m)). 100 m is NVIDIA's"
            " RoCE default; the NIC's own (mlx5 - 7 m) is not kept."
        ],
        "type": "int",
        "default": 100,
    },
    "host_cable_length_m": {
        "description": [
            "Cable length (1-999 m, mlx5 ignores 1000 and above) the host NIC sizes its"
            " PFC headroom for (C(mlnx_qos --cable_len), or C(dcb pfc set dev IF delay N) on"
            " the dcb backend, which mlx5 takes as the cable length). Unset follows"
            " I(cable_length_m)."
        ],
        "type": "int",
        "default": None,
    },
    "host_prio2buffer": {
        "description": [
            "Eight receive-buffer numbers (0-7), one per priority (C(mlnx_qos --prio2buffer))."
            " The RoCE priority needs a buffer no lossy priority shares. Unset leaves the NIC's."
        ],
        "type": "list",
        "elements": "int",
        "default": None,
    },
    "host_buffer_size": {
        "description": [
            "Eight receive-buffer sizes in bytes (C(mlnx_qos --buffer_size)); the RoCE"
            " priority's buffer needs a size. Unset leaves the NIC's."
        ],
        "type": "list",
        "elements": "int",
        "default": None,
    },
    "nic_firmware_dcbx": {
        "description": [
            "DCBX in the ConnectX firmware (C(LLDP_NB_DCBX_P1/P2), set by the rdma_nic role,"
            " effective after the next boot). Unset leaves the card's setting.",
            "C(false) - the firmware never negotiates DCB with a switch, so the host's"
            " settings hold from power-on (roce_host_qos takes each port to DCBX host mode at"
            " run time and at boot either way).",
            "C(true) - the firmware runs DCBX, for NICs whose DCB a DCBX switch is meant to"
            " drive. Refused on hosts roce_host_qos manages (C(roce_hosts)), because it puts"
            " every RoCE port in DCBX host mode, the opposite.",
        ],
        "type": "bool",
        "default": None,
        "version_added": "0.3.0",
    },
    "host_pfc_storm_timeout_ms": {
        "description": [
            "The hosts' PFC storm prevention timeout (C(ethtool --set-tunable IF"
            " pfc-prevention-tout N)), 0 (off) or 80-8000 ms, the range mlx5 accepts.",
            "Unset derives it from I(pfc_watchdog.detection_time_ms) (0 when the watchdog is"
            " off), which must then be 80-8000 ms; set it to keep the hosts apart.",
        ],
        "type": "int",
        "default": None,
    },
    "wred_drop": {
        "description": [
            "Also drop non-ECN-capable packets early (WRED) in the ECN classes. C(false)"
            " marks ECN-capable packets only, on Cumulus (C(red)) and EOS (C(random-detect"
            ' drop)). A boolean; a string such as C("yes") is refused.',
            "SONiC keeps the WRED drop of its platform profile C(AZURE_LOSSLESS) (C(config"
            " apply-patch) 202205-202505 may change only its green thresholds and"
            " probability); the role warns where it differs from this value.",
        ],
        "type": "bool",
        "default": False,
    },
}

# Values the policy derives (roce_policy.DERIVED); a filled policy carries them and
# normalizes to itself, so the schema accepts them back (the hand validator checks that
# they agree with what it derives).
_DERIVED = "Derived from the policy; accepted back only equal to what it derives."
ROCE_POLICY_DERIVED_OPTIONS = {
    "roce_tos": {"description": [_DERIVED + " RDMA-CM ToS (DSCP << 2, ECT(0))."], "type": "int"},
    "tc_tsa": {
        "description": [_DERIVED + " ets or strict, per traffic class."],
        "type": "list",
        "elements": "str",
    },
    "tc_bw": {
        "description": [_DERIVED + " ETS percent per traffic class."],
        "type": "list",
        "elements": "int",
    },
    "dscp_priority": {
        "description": [_DERIVED + " The priority of each of the 64 DSCPs."],
        "type": "list",
        "elements": "int",
    },
}

# Keys of an option that are documentation only (ansible-doc, argument_specs.yml).
_DOC_KEYS = ("description", "version_added")


def defaults(options):
    """The defaults dict an options spec describes (sub-options become nested dicts)."""
    out = {}
    for key, spec in options.items():
        if "options" in spec:
            out[key] = defaults(spec["options"])
        else:
            out[key] = copy.deepcopy(spec.get("default"))
    return out


def argument_spec(options, types=None, by_key=None):
    """The options as ArgumentSpecValidator takes them: the documentation keys dropped;
    ``types`` (type name -> callable) replaces a named type (elements too), ``by_key``
    (key -> callable) the type of one top-level key."""
    out = {}
    for key, spec in options.items():
        spec = {k: v for k, v in spec.items() if k not in _DOC_KEYS}
        if "options" in spec:
            spec["options"] = argument_spec(spec["options"], types)
        # A dict with sub-options keeps the name "dict": ansible-core validates sub-options
        # only under it (check_policy refuses a non-dict there first).
        for field in ("elements",) if "options" in spec else ("type", "elements"):
            if types and spec.get(field) in types:
                spec[field] = types[spec[field]]
        if by_key and key in by_key:
            spec["type"] = by_key[key]
        out[key] = spec
    return out


# The policy's types, stricter than ansible-core's own checkers, which turn 3.0 into 3,
# "3" or 3 into the list [3], "0=50 3=50" into a dict and 1 into True: the policy refused
# all of those before it used the validator, and still does. Strings of digits ("3" from
# extra vars) and yes/no/on/off booleans stay accepted, as they were.
_BOOL_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def _int(value):
    if isinstance(value, int):  # bools too: the hand range checks refuse them, by name
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise TypeError("not an integer")


def _bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _BOOL_WORDS:
        return _BOOL_WORDS[value.lower()]
    raise TypeError("not a boolean")


def _list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError("not a list")


def _dict(value):
    if isinstance(value, dict):
        return value
    raise TypeError("not a dictionary")


def _strict_bool(value):
    """wred_drop: a boolean only ("yes" is refused, not read; review finding of issue 22)."""
    if not isinstance(value, bool):
        raise TypeError("not a boolean")
    return value


def _str(value):
    """A string only (ansible-core's str turns 5 or [a] into "5" or "['a']")."""
    if isinstance(value, str):
        return value
    raise TypeError("not a string")


POLICY_TYPES = {"int": _int, "bool": _bool, "list": _list, "dict": _dict}

# ansible-core's messages, by error class (ansible/module_utils/common/parameters.py): the
# option's name and its parent (" found in 'a -> b'"). test_fabric_schema pins them.
_TYPE_ERROR = re.compile(
    r"^argument '(?P<key>[^']+)' is of type \S+(?: found in '(?P<ctx>[^']*)'\.)? and we were"
)
_ELEMENT_ERROR = re.compile(
    r"^Elements value for option '(?P<key>[^']+)'(?: found in '(?P<ctx>[^']*)')? is of type"
)
_CHOICE_ERROR = re.compile(
    r"^value of (?P<key>\S+) must be one of: .*, got: .*?(?: found in (?P<ctx>[\w>\- ]+))?$"
)
_REQUIRED_ERROR = re.compile(
    r"^missing required arguments: (?P<key>[\w, ]+?)(?: found in (?P<ctx>[\w>\- ]+))?$"
)
KINDS = ("type", "elements", "choices", "required")


def _error_path(message):
    patterns = (_TYPE_ERROR, _ELEMENT_ERROR, _CHOICE_ERROR, _REQUIRED_ERROR)
    for kind, pattern in zip(KINDS, patterns):
        match = pattern.match(message)
        if match:
            ctx = (match.group("ctx") or "").replace(" -> ", ".")
            return kind, (ctx + "." if ctx else "") + match.group("key")
    return None, None


def value_at(params, path):
    """The value at a dotted path (keys compared as strings, [i] an element), or None."""
    value = params
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("[") and isinstance(value, list):
            index = int(part[1:-1])
            value = value[index] if index < len(value) else None
        elif not part.startswith("[") and isinstance(value, dict):
            value = next((v for k, v in value.items() if str(k) == part), None)
        else:
            return None
    return value


class Schema:
    """One variable's options, checked with ArgumentSpecValidator, each refusal by path.

    types: type name -> callable (POLICY_TYPES ...); by_key: top-level key -> type;
    elements: list key -> how an element becomes a dict (TypeError when it cannot);
    unset(spec, value): whether a key given ``value`` counts as not given. A
    list of dicts with sub-options is checked element by element, so a refusal names
    ``key[i].sub`` (ansible-core names the list only).
    """

    def __init__(self, options, types, by_key=None, elements=None, unset=None):
        self.options = options
        self.types = types
        self.elements = elements or {}
        self.unset = unset or (lambda spec, value: value is None)
        spec = argument_spec(options, types, by_key)
        self.lists = {}
        for key, option in options.items():
            if option.get("type") == "list" and "options" in option:
                self.lists[key] = Schema(option["options"], types, unset=self.unset)
                spec[key] = {"type": types["list"]}
        self.validator = ArgumentSpecValidator(spec)

    def spec_at(self, path):
        spec = {"options": self.options}
        for part in re.sub(r"\[\d+\]", "", path).split("."):
            spec = spec.get("options", {}).get(part, {})
        return spec

    def check(self, value):
        """Check ``value`` (a dict) against the options.

        Returns (params, problems): params are ``value`` with the defaults filled and the
        types coerced (strings of digits to int, "yes" to True ...), a key ``unset`` says
        is not given left out; problems a list of (path, kind, spec) for every
        key the validator refuses (an element's path ends with [index]): kind
        ``unknown``, ``type``, ``elements``, ``choices``, ``required`` or ``error`` (path
        None: an ansible-core message this module does not parse, then spec is that
        message).
        """
        problems = []
        probe = {}
        for key, item in value.items():
            key = str(key)
            if self.unset(self.spec_at(key), item):
                continue
            if "options" in self.spec_at(key) and key not in self.lists:
                # ansible-core 2.19 crashes on a non-dict under a sub-options key and on
                # non-string sub-keys: the first is refused here, the second probed as strings.
                if not isinstance(item, dict):
                    problems.append((key, "type", self.spec_at(key)))
                    continue
                item = {str(k): v for k, v in item.items()}
            probe[key] = item
        result = self.validator.validate(probe)
        params = result.validated_parameters
        for item in result.unsupported_parameters:
            path = ".".join(item) if isinstance(item, tuple) else str(item)
            problems.append((path, "unknown", None))
        for error in result.errors.errors:
            if type(error).__name__ == "UnsupportedError":
                continue  # from unsupported_parameters, structured
            kind, path = _error_path(error.msg)
            if kind is None:
                problems.append((None, "error", error.msg))
            elif kind == "elements":
                problems.append(self._element_problem(probe, path))
            elif kind == "required":
                problems.extend((key, kind, self.spec_at(key)) for key in path.split(", "))
            else:
                problems.append((path, kind, self.spec_at(path)))
        for key, schema in self.lists.items():
            if isinstance(params.get(key), list):
                params[key] = self._check_list(key, schema, params[key], problems)
        return params, sorted(problems, key=lambda p: (p[0] or "", p[1]))

    def _element_problem(self, probe, path):
        spec = self.spec_at(path)
        check = self.types.get(spec.get("elements"), lambda v: v)
        for index, item in enumerate(value_at(probe, path) or []):
            try:
                check(item)
            except TypeError:
                return (f"{path}[{index}]", "elements", spec)
        return (path, "elements", spec)

    def _check_list(self, key, schema, items, problems):
        out = []
        for index, item in enumerate(items):
            try:
                item = self.elements.get(key, self.types["dict"])(item)
            except TypeError:
                problems.append((f"{key}[{index}]", "elements", self.spec_at(key)))
                out.append(item)
                continue
            filled, found = schema.check(item)
            problems.extend((f"{key}[{index}].{p}" if p else p, k, s) for p, k, s in found)
            out.append(filled)
        return out


_POLICY = Schema(
    {**ROCE_POLICY_OPTIONS, **ROCE_POLICY_DERIVED_OPTIONS},
    POLICY_TYPES,
    by_key={"wred_drop": _strict_bool},
)


def check_policy(policy):
    """``policy`` (a dict) checked against ROCE_POLICY_OPTIONS (Schema.check); a None
    value is unset (the default, or derived from another key)."""
    return _POLICY.check(policy)


# One rail of ``rdma_rails`` (a list of these). Ranges, the one-selector rule, the
# ethernet/infiniband-only keys, subnets, overlaps and the per-host addresses are
# rails.py's (normalize_rails), whose messages name rdma_rails[i].key. Defaults given only
# where normalize_rails applies a constant one (mtu follows the policy or the IPoIB mode;
# table follows the rail's position: the descriptions say so).
RAIL_OPTIONS = {
    "name": {
        "description": [
            "The rail's name, fabric-wide (1-12 of C(A-Z a-z 0-9 _ -), unique): verification"
            " tests rail R of a host with rail R of its peer, by this name."
        ],
        "type": "str",
        "required": True,
    },
    "device": {
        "description": [
            "The RDMA device of the rail's port (C(mlx5_0)). Exactly one of I(device),"
            " I(netdev) or I(pci) finds the port on a host; a host whose names differ maps"
            " the rail in C(rdma_rail_devices)."
        ],
        "type": "str",
    },
    "netdev": {
        "description": ["The rail's network interface (C(ens1f0np0)), instead of I(device)."],
        "type": "str",
    },
    "pci": {
        "description": [
            "The rail's PCI function (C(0000:17:00.0) or C(17:00.0)), instead of I(device)."
        ],
        "type": "str",
    },
    "port": {
        "description": ["RDMA port (1-2) of the device."],
        "type": "int",
        "default": 1,
    },
    "link_layer": {
        "description": [
            "C(ethernet) (RoCE) or C(infiniband) (IPoIB); the host's port must be the same."
        ],
        "type": "str",
        "choices": ["ethernet", "infiniband"],
        "default": "ethernet",
    },
    "subnet": {
        "description": [
            "The rail's IPv4 network (CIDR), its own (no overlap with another rail, P_Key"
            " child or a host's management network). Required on an ethernet rail (RoCE v2"
            " needs an IPv4 GID). A host's address is the subnet + C(rdma_rail_host_index),"
            " or C(rdma_rail_addresses)."
        ],
        "type": "str",
    },
    "subnet6": {
        "description": [
            "An IPv6 network (CIDR) of the rail too. On a shared rail a host's address is"
            " subnet6 + C(rdma_rail_host_index) on subnet6's prefix; on an L3 rail"
            " (C(prefix_length) 31 or 30) each host gets the index-th /127 of subnet6"
            " (RFC 6164: the leaf the first address, the host the second, the leaf the"
            " gateway with C(gateway=peer)), so subnet6 needs a prefix of 127 or shorter."
        ],
        "type": "str",
    },
    "mtu": {
        "description": [
            "The netdev MTU. Ethernet 1280-9216, default C(rdma_roce_policy.mtu) (9000);"
            " IPoIB datagram 1280-4092, default 4092 (or the default partition's IB MTU - 4);"
            " IPoIB connected 1280-65520, default 65520."
        ],
        "type": "int",
    },
    "prefix_length": {
        "description": [
            "The hosts' prefix length. Default the subnet's own (a shared L2 rail); 31 or 30"
            " make an L3 rail, each host the I(rdma_rail_host_index)-th /31 (the leaf the even"
            " address) or /30 (the leaf the first usable) of the subnet, and the index-th"
            " /127 of C(subnet6) when set."
        ],
        "type": "int",
    },
    "gateway": {
        "description": [
            "The rail's gateway - an IPv4 host address of a shared subnet, or C(peer) (the"
            " leaf's end of each host's /31 or /30). None by default."
        ],
        "type": "str",
    },
    "gateway6": {
        "description": [
            "The rail's IPv6 gateway on a shared rail - an address of C(subnet6), not a"
            " host's, or the router's link-local address (C(fe80::1)), without a zone ID;"
            " the rail's table gets C(::/0) via it, as it gets C(0.0.0.0/0) via"
            " I(gateway). None by default. On an L3 rail the leaf's end of each host's /127"
            " is the gateway (C(gateway=peer)), so gateway6 is refused there."
        ],
        "type": "str",
    },
    "ipoib_mode": {
        "description": [
            "infiniband rails only - C(datagram) (the default; the only mode of mlx5's"
            " enhanced IPoIB) or C(connected)."
        ],
        "type": "str",
        "choices": ["datagram", "connected"],
    },
    "pkeys": {
        "description": [
            "infiniband rails only - P_Key child interfaces (C(ib0.8010)), by partition of"
            " C(ib_subnet_manager_partitions); a bare name stands for C({partition: NAME})."
        ],
        "type": "list",
        "elements": "dict",
        "options": {
            "partition": {
                "description": ["The partition's name in C(ib_subnet_manager_partitions)."],
                "type": "str",
                "required": True,
            },
            "subnet": {
                "description": [
                    "The child's IPv4 network (CIDR); a host's address there is the subnet +"
                    " C(rdma_rail_host_index), or C(rdma_rail_addresses) under C(RAIL.PARTITION)."
                ],
                "type": "str",
            },
            "mtu": {
                "description": [
                    "The child's MTU, in its parent's IPoIB mode range; datagram default the"
                    " partition's IB MTU - 4."
                ],
                "type": "int",
            },
        },
    },
    "table": {
        "description": [
            "Policy-routing table (1-252) of the rail, one per rail. Default 100 + the rail's"
            " position in the list."
        ],
        "type": "int",
    },
    "leaf": {
        "description": [
            "The rail's leaf switch (an inventory name), for the cabling check and the L3"
            " rails' leaf side. Or I(leaf_group)."
        ],
        "type": "str",
    },
    "leaf_group": {
        "description": ["An inventory group of the rail's leaf switches, instead of I(leaf)."],
        "type": "str",
    },
}


def _lower_str(value):
    """link_layer: any case (C(InfiniBand) as rdma_devices_info says it), read lowercase."""
    return _str(value).lower()


def _pkey(value):
    """A P_Key child: a dict, or a bare partition name."""
    return {"partition": value} if isinstance(value, str) else _dict(value)


def _rail_unset(spec, value):
    """A rail's key left blank (None or "") is not given where nothing else is read
    instead: an optional key without a constant default (a blank port or link_layer is
    refused, as a blank name or table)."""
    return (
        (value is None or value == "")
        and spec.get("default") is None
        and not (spec.get("required"))
    )


_RAIL = Schema(
    RAIL_OPTIONS,
    {**POLICY_TYPES, "str": _str},
    # What the rail plan never read itself: any value, as ansible-core's str takes it.
    by_key={"leaf": "str", "leaf_group": "str", "link_layer": _lower_str},
    elements={"pkeys": _pkey},
    unset=_rail_unset,
)


def check_rail(rail):
    """One rail (a dict) checked against RAIL_OPTIONS (Schema.check): P_Key children by
    path (``pkeys[1].mtu``), a bare name as ``{partition: NAME}``."""
    return _RAIL.check(rail)
