# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric-wide lossless RoCE policy: defaults, validation, derived values.

One definition for every consumer: the roce_host_qos role and the roce_qos module
(hosts) and the switch role read ``rdma_roce_policy`` through ``normalize_policy``
(or the ``rdma.fabric.roce_policy`` filter), so a key is spelled, defaulted and
checked in one place only.

Defaults follow NVIDIA's published lossless RoCEv2 configuration (RoCE on priority 3
with DSCP 26, CNP on priority 6 with DSCP 48, trust DSCP, PFC on 3 only, ECN on 3,
ETS 50/50 between the default class and RoCE with CNP strict, RDMA-CM ToS 106) and
Cumulus' `nv set qos roce` (ECN marking 150 KB to 1500 KB).
"""

from __future__ import annotations

import copy

from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema

PRIORITIES = range(8)
TRAFFIC_CLASSES = range(8)

# The keys, types and defaults are fabric_schema.ROCE_POLICY_OPTIONS (one schema for
# every reader); what a None default derives and why each default holds:
# - pfc_priorities, ecn_priorities None: the RoCE priority (PFC, ECN and the RoCE class's
#   ETS share follow roce_priority, so changing it changes them all).
# - ets_bandwidth: percent per ETS traffic class, every other class strict priority;
#   None: 50 for class 0 and 50 for the RoCE priority's class.
# - prio_tc: priority -> traffic class; None: RoCE and CNP priorities keep their own
#   class (same number), every other priority shares class 0.
# - cable_length_m: the fabric's cable length in meters for PFC headroom, one value for
#   both ends: the switches' (roce_switch_qos_cable_length's default) and the hosts'
#   (unless host_cable_length_m sets the hosts apart). 100 m is NVIDIA's RoCE default
#   (the switches' role default); the NIC's own (mlx5: 7 m) would disagree with the switch.
# - host_cable_length_m, host_prio2buffer, host_buffer_size: host NIC receive buffers
#   (mlnx_qos --cable_len/--prio2buffer/--buffer_size; the dcb backend sets the cable
#   length as `dcb pfc set delay`). None follows cable_length_m; the buffer split None
#   leaves the NIC's own.
# - nic_firmware_dcbx: DCBX in the NIC firmware (ConnectX LLDP_NB_DCBX_P1/P2, set by
#   rdma_nic, next boot). None leaves the card's setting. False: the firmware never
#   negotiates DCB with the switch, so the host's settings hold from power-on
#   (roce_host_qos sets DCBX host mode at run time and boot either way). True: the
#   firmware runs DCBX, for NICs whose DCB a DCBX switch is meant to drive.
# - host_pfc_storm_timeout_ms: host PFC storm prevention (ethtool pfc-prevention-tout)
#   in ms: None derives it from pfc_watchdog.detection_time_ms (0, off, when the watchdog
#   is off); a number sets the host apart from the switches' watchdog (80-8000, or 0).
# - wred_drop: WRED drop beside ECN marking in the ECN classes: false marks ECN-capable
#   packets and tail-drops only when the queue is full (Cumulus' and EOS' RoCE defaults);
#   true also drops non-ECN-capable packets early, the same on every switch OS.
DEFAULTS = fabric_schema.defaults(fabric_schema.ROCE_POLICY_OPTIONS)

DERIVED = ("roce_tos", "tc_tsa", "tc_bw", "dscp_priority")
# mlx5: the cable lengths it takes (en_dcbnl.c mlx5e_dcbnl_ieee_setpfc uses pfc->delay
# only when non-zero and below MLX5E_MAX_CABLE_LENGTH, 1000; others are ignored silently).
HOST_CABLE_M = (1, 999)
# The switches' cable lengths (roce_switch_qos_cable_length's range).
SWITCH_CABLE_M = (1, 10000)
# mlx5 refuses a pfc-prevention-tout outside 80-8000 ms with -EINVAL (drivers/net/
# ethernet/mellanox/mlx5/core/en_ethtool.c mlx5e_set_pfc_prevention_tout:
# MLX5E_PFC_PREVEN_TOUT_MIN_MSEC 80, MLX5E_PFC_PREVEN_TOUT_MAX_MSEC 8000); 0 turns it off.
HOST_STORM_MS = (80, 8000)
# The MTU every RoCE port of the fabric carries (Linux netdev MTU): IPv6's minimum up
# to the largest a Cumulus/SONiC port takes (9216; EOS ports 9214, checked per OS).
MTU_RANGE = (1280, 9216)
TRUST_CHOICES = tuple(fabric_schema.ROCE_POLICY_OPTIONS["trust"]["choices"])
# Why trust pcp is refused: a host puts an 802.1p priority on a frame only through a
# VLAN's egress-qos-map (or a tagged kernel path); the roles configure neither, so RoCE
# would leave untagged in priority 0 and land in the lossy class of every switch.
PCP_REFUSED = (
    "must be dscp: trust pcp needs every RoCE frame VLAN-tagged with the RoCE priority "
    "(a VLAN interface with an egress-qos-map on each host), which these roles do not "
    "configure; untagged RoCE would travel in priority 0, lossy and without ECN"
)
WATCHDOG_ACTIONS = tuple(
    fabric_schema.ROCE_POLICY_OPTIONS["pfc_watchdog"]["options"]["action"]["choices"]
)
# (roce_dscp, cnp_dscp) refused: the convention (26, 48) swapped, a typing slip that puts
# RoCE data in the CNP class (strict priority on every OS) and CNPs in the lossless one.
SWAPPED_DSCPS = (48, 26)
# ToS ECN field value of ECT(0): the RoCE packets RDMA-CM sends are ECN-capable.
ECT0 = 2


def _name(key, index=None):
    suffix = f"[{index}]" if index is not None else ""
    return f"rdma_roce_policy.{key}{suffix}"


def _as_int(value):
    """An int from an int or a string of digits; None for anything else (bools too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


# What the schema's types mean in a message (fabric_schema.check_policy's "type" problems).
TYPE_WORDS = {
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "dict": "a dictionary",
    "list": "a list",
}
ELEMENT_WORDS = {"int": "integers", "str": "strings"}
TYPE_WORDS_BY_KEY = {
    "wred_drop": "true or false (a boolean, not a string)",
    "nic_firmware_dcbx": "true, false or unset (null)",
}


class _Checker:
    def __init__(self):
        self.errors = []
        # Paths the schema refused (type, elements, choices): the hand checks of the same
        # value would only say it again.
        self.refused = set()

    def fail(self, name, message, got):
        base = name.split("[", 1)[0][len(_name("")) :]
        if any(base == path or base.startswith(path + ".") for path in self.refused):
            return
        self.errors.append(f"{name} {message}; got {got!r}")

    def schema(self, policy, path, kind, spec):
        """One problem of fabric_schema.check_policy, as a message naming its path."""
        if path is None:
            self.errors.append(f"rdma_roce_policy: {spec}")
            return
        name = path.split("[", 1)[0]
        got = fabric_schema.value_at(policy, name)
        if name != path:
            got = got[int(path[len(name) + 1 : -1])]
        if kind == "unknown":
            parent, key = path.rpartition(".")[::2]
            known = fabric_schema.ROCE_POLICY_OPTIONS[parent]["options"] if parent else DEFAULTS
            what = "a watchdog key" if parent == "pfc_watchdog" else "a policy key"
            self.fail(_name(path), f"is not {what} (known: {', '.join(known)})", key)
            return
        if kind == "choices" and path == "trust" and got == "pcp":
            message = PCP_REFUSED
        elif kind == "choices":
            message = f"must be one of {', '.join(str(c) for c in spec['choices'])}"
        elif kind == "elements" and name != path:
            message = f"must be {TYPE_WORDS.get(spec['elements'], 'valid')}"
        elif spec.get("elements"):
            message = f"must be a list of {ELEMENT_WORDS.get(spec['elements'], 'values')}"
        else:
            words = TYPE_WORDS_BY_KEY.get(name) or TYPE_WORDS.get(spec.get("type"), "valid")
            message = f"must be {words}"
        self.fail(_name(path), message, got)
        self.refused.add(name)

    def integer(self, name, value, low, high, what):
        number = _as_int(value)
        if number is None or not low <= number <= high:
            self.fail(name, f"must be {what} ({low}-{high})", value)
            return None
        return number

    def int_list(self, key, value, low, high, what):
        if not isinstance(value, (list, tuple)):
            self.fail(_name(key), f"must be a list of {what}s ({low}-{high})", value)
            return None
        out = []
        for index, item in enumerate(value):
            number = self.integer(_name(key, index), item, low, high, what)
            if number is not None:
                out.append(number)
        if len(set(out)) != len(out):
            self.fail(_name(key), "must not repeat a value", value)
        return sorted(set(out)) if len(out) == len(value) else None


def _mtu(check, value):
    return check.integer(_name("mtu"), value, *MTU_RANGE, "an MTU in bytes")


def mtu_errors(value):
    """The errors of ``rdma_roce_policy.mtu`` alone, in normalize_policy's words: for a
    reader that takes only the policy's MTU (the rail plan), so the range is checked in
    one place."""
    check = _Checker()
    _mtu(check, value)
    return check.errors


def derive_prio_tc(policy):
    """Priority -> traffic class when the policy does not give one."""
    prio_tc = [0] * 8
    prio_tc[policy["roce_priority"]] = policy["roce_priority"]
    prio_tc[policy["cnp_priority"]] = policy["cnp_priority"]
    return prio_tc


def roce_tos(policy):
    """RDMA-CM / traffic_class ToS: DSCP shifted left 2, plus ECT(0) when ECN is on."""
    ect = ECT0 if policy["roce_priority"] in policy["ecn_priorities"] else 0
    return (policy["roce_dscp"] << 2) | ect


def normalize_policy(policy):
    """(filled policy, errors). Unset keys take DEFAULTS; errors name their key.

    The filled policy carries derived values too: ``prio_tc`` (8 entries),
    ``tc_tsa`` and ``tc_bw`` (8 entries each) and ``roce_tos``.
    """
    if policy is None:
        policy = {}
    if not isinstance(policy, dict):
        return None, [f"rdma_roce_policy must be a dictionary; got {policy!r}"]
    check = _Checker()
    # Key set, types (coerced: "3" from extra vars is 3), choices and the defaults: the
    # schema, with ansible-core's ArgumentSpecValidator. Ranges and the rules that
    # compare fields: below, by hand.
    params, problems = fabric_schema.check_policy(policy)
    for path, kind, spec in problems:
        check.schema(policy, path, kind, spec)
    merged = {key: copy.deepcopy(params[key]) for key in DEFAULTS}

    out = {}
    for key in ("roce_priority", "cnp_priority"):
        out[key] = check.integer(_name(key), merged[key], 0, 7, "a priority")
    for key in ("roce_dscp", "cnp_dscp"):
        out[key] = check.integer(_name(key), merged[key], 0, 63, "a DSCP value")
    out["trust"] = merged["trust"]  # choices: the schema's (pcp refused with PCP_REFUSED)
    for key in ("pfc_priorities", "ecn_priorities"):
        if merged[key] is None:
            roce = out["roce_priority"]
            out[key] = None if roce is None else [roce]
        else:
            out[key] = check.int_list(key, merged[key], 0, 7, "priority")
    ecn, roce = out["ecn_priorities"], out["roce_priority"]
    if ecn is not None and roce is not None and roce not in ecn:
        check.fail(
            _name("ecn_priorities"),
            f"must include the RoCE priority (rdma_roce_policy.roce_priority = {roce}): "
            "without ECN on the RoCE class RoCE packets are not ECN-capable, hosts turn "
            "DCQCN off for it and switches mark an empty class (PFC only, no congestion "
            "control); leave it unset to follow roce_priority",
            merged["ecn_priorities"],
        )

    if out["roce_priority"] is not None and out["roce_priority"] == out["cnp_priority"]:
        check.fail(
            _name("cnp_priority"),
            "must differ from rdma_roce_policy.roce_priority (CNPs need their own priority)",
            merged["cnp_priority"],
        )
    if out["roce_dscp"] is not None and out["roce_dscp"] == out["cnp_dscp"]:
        check.fail(
            _name("cnp_dscp"), "must differ from rdma_roce_policy.roce_dscp", merged["cnp_dscp"]
        )
    if (out["roce_dscp"], out["cnp_dscp"]) == SWAPPED_DSCPS:
        check.fail(
            _name("roce_dscp"),
            f"and rdma_roce_policy.cnp_dscp ({SWAPPED_DSCPS[1]}) swap the convention (RoCE "
            "DSCP 26, CNP DSCP 48, NVIDIA's and every switch OS's RoCE default): RoCE would "
            "ride the CS6 class meant for CNPs and CNPs the RoCE class; set roce_dscp 26 and "
            "cnp_dscp 48, or other values that do not mirror it",
            out["roce_dscp"],
        )
    if out["pfc_priorities"] is not None and out["roce_priority"] is not None:
        stray = [p for p in out["pfc_priorities"] if p != out["roce_priority"]]
        if stray:
            check.fail(
                _name("pfc_priorities"),
                f"may enable PFC only on the priority that carries RoCE "
                f"(rdma_roce_policy.roce_priority = {out['roce_priority']}); "
                f"no RoCE on {stray}",
                merged["pfc_priorities"],
            )

    # prio_tc: explicit, or derived from the RoCE and CNP priorities.
    if merged["prio_tc"] is None:
        if out["roce_priority"] is not None and out["cnp_priority"] is not None:
            out["prio_tc"] = derive_prio_tc(out)
        else:
            out["prio_tc"] = None
    else:
        raw = merged["prio_tc"]
        if not isinstance(raw, (list, tuple)) or len(raw) != 8:
            check.fail(_name("prio_tc"), "must list 8 traffic classes, one per priority", raw)
            out["prio_tc"] = None
        else:
            out["prio_tc"] = [
                check.integer(_name("prio_tc", i), tc, 0, 7, "a traffic class")
                for i, tc in enumerate(raw)
            ]
            if None in out["prio_tc"]:
                out["prio_tc"] = None

    if (
        out["prio_tc"]
        and out["roce_priority"] is not None
        and out["cnp_priority"] not in (None, out["roce_priority"])
    ):
        roce_tc = out["prio_tc"][out["roce_priority"]]
        if out["prio_tc"][out["cnp_priority"]] == roce_tc:
            check.fail(
                _name("prio_tc", out["cnp_priority"]),
                f"must differ from the RoCE priority's traffic class {roce_tc}: CNPs queued "
                "behind the RoCE traffic they throttle arrive too late",
                merged["prio_tc"][out["cnp_priority"]],
            )

    # ETS: {tc: percent}; keys may arrive as strings (JSON, extra vars).
    bandwidth = merged["ets_bandwidth"]
    if bandwidth is None and out["prio_tc"] and out["roce_priority"] is not None:
        roce_tc = out["prio_tc"][out["roce_priority"]]
        bandwidth = {0: 100} if roce_tc == 0 else {0: 50, roce_tc: 50}
    tc_bw = None
    if bandwidth is None:
        pass  # derived, and what it derives from is already reported as bad
    elif not isinstance(bandwidth, dict) or not bandwidth:
        check.fail(_name("ets_bandwidth"), "must map traffic classes to percent", bandwidth)
    else:
        tc_bw = [0] * 8
        for tc_key, percent in bandwidth.items():
            tc = check.integer(f"{_name('ets_bandwidth')}[{tc_key}]", tc_key, 0, 7, "a class")
            value = check.integer(f"{_name('ets_bandwidth')}[{tc_key}]", percent, 1, 100, "percent")
            if tc is None or value is None:
                tc_bw = None
                break
            tc_bw[tc] = value
        if tc_bw is not None and sum(tc_bw) != 100:
            check.fail(
                _name("ets_bandwidth"), f"must sum to 100 percent (sums to {sum(tc_bw)})", bandwidth
            )
            tc_bw = None
    out["ets_bandwidth"] = {tc: bw for tc, bw in enumerate(tc_bw) if bw} if tc_bw else None
    out["tc_bw"] = tc_bw
    out["tc_tsa"] = ["ets" if bw else "strict" for bw in tc_bw] if tc_bw else None
    if tc_bw and out["prio_tc"] and out["roce_priority"] is not None:
        roce_tc = out["prio_tc"][out["roce_priority"]]
        if not tc_bw[roce_tc]:
            check.fail(
                _name("ets_bandwidth"),
                f"must give the RoCE traffic class {roce_tc} a share (a strict class "
                "carrying bulk RoCE starves every other class)",
                bandwidth,
            )

    out["ecn_min_threshold_kb"] = check.integer(
        _name("ecn_min_threshold_kb"), merged["ecn_min_threshold_kb"], 1, 1048576, "KB"
    )
    out["ecn_max_threshold_kb"] = check.integer(
        _name("ecn_max_threshold_kb"), merged["ecn_max_threshold_kb"], 1, 1048576, "KB"
    )
    if (
        out["ecn_min_threshold_kb"] is not None
        and out["ecn_max_threshold_kb"] is not None
        and out["ecn_min_threshold_kb"] > out["ecn_max_threshold_kb"]
    ):
        check.fail(
            _name("ecn_min_threshold_kb"),
            "must not exceed rdma_roce_policy.ecn_max_threshold_kb",
            merged["ecn_min_threshold_kb"],
        )
    out["ecn_mark_probability"] = check.integer(
        _name("ecn_mark_probability"), merged["ecn_mark_probability"], 1, 100, "percent"
    )

    # A dict with every key (the schema fills the defaults; its keys, enabled's type and
    # action's choices are the schema's).
    watchdog = merged["pfc_watchdog"]
    enabled = watchdog["enabled"] if isinstance(watchdog["enabled"], bool) else None
    out["pfc_watchdog"] = {
        "enabled": enabled,
        "detection_time_ms": check.integer(
            _name("pfc_watchdog.detection_time_ms"),
            watchdog["detection_time_ms"],
            1,
            60000,
            "milliseconds",
        ),
        "restoration_time_ms": check.integer(
            _name("pfc_watchdog.restoration_time_ms"),
            watchdog["restoration_time_ms"],
            1,
            60000,
            "milliseconds",
        ),
        "action": watchdog["action"],
    }
    out["mtu"] = _mtu(check, merged["mtu"])
    # Booleans: the schema's (wred_drop a boolean only, a string such as "yes" refused
    # rather than read; nic_firmware_dcbx also None).
    out["wred_drop"] = merged["wred_drop"] if isinstance(merged["wred_drop"], bool) else None
    dcbx = merged["nic_firmware_dcbx"]
    out["nic_firmware_dcbx"] = dcbx if isinstance(dcbx, bool) else None
    _host_buffers(check, merged, out)

    if check.errors:
        return None, check.errors
    out["roce_tos"] = roce_tos(out)
    out["dscp_priority"] = dscp_priority(out)
    # Derived keys are accepted back (a filled policy normalizes to itself) only when
    # they agree: ToS and ETS are never typed twice.
    for key in DERIVED:
        if key in policy and policy[key] != out[key]:
            check.fail(_name(key), f"is derived from the policy (it is {out[key]!r})", policy[key])
    if check.errors:
        return None, check.errors
    return out, []


def dscp_priority(policy):
    """The one classification of every OS: 64 priorities, one per DSCP. The RoCE and CNP
    DSCPs go to their priorities, every other DSCP to priority 0 (the default, lossy
    class), so no unnamed DSCP lands in a lossless class (mlx5's and Cumulus' defaults
    put DSCP 24-31 on priority 3)."""
    out = [0] * 64
    out[policy["roce_dscp"]] = policy["roce_priority"]
    out[policy["cnp_dscp"]] = policy["cnp_priority"]
    return out


def host_storm_timeout(policy):
    """Host PFC storm prevention (ethtool pfc-prevention-tout), alongside the switches'
    PFC watchdog: its detection time when the watchdog is on, else 0 (off)."""
    watchdog = policy["pfc_watchdog"]
    if not watchdog["enabled"] or not policy["pfc_priorities"]:
        return 0
    return watchdog["detection_time_ms"]


def _eight(check, key, value, low, high, what):
    if not isinstance(value, (list, tuple)) or len(value) != 8:
        check.fail(_name(key), f"must list 8 {what}s, one per priority or buffer", value)
        return None
    out = [check.integer(_name(key, i), v, low, high, what) for i, v in enumerate(value)]
    return None if None in out else out


def _host_buffers(check, merged, out):
    """host_cable_length_m, host_prio2buffer, host_buffer_size (each None or checked)."""
    fabric = merged["cable_length_m"]
    out["cable_length_m"] = (
        None
        if fabric is None
        else check.integer(_name("cable_length_m"), fabric, *SWITCH_CABLE_M, "meters")
    )
    cable = merged["host_cable_length_m"]
    if cable is not None:
        out["host_cable_length_m"] = check.integer(
            _name("host_cable_length_m"), cable, *HOST_CABLE_M, "meters"
        )
    elif out["cable_length_m"] is not None and out["cable_length_m"] > HOST_CABLE_M[1]:
        check.fail(
            _name("cable_length_m"),
            f"is above the {HOST_CABLE_M[1]} m a host NIC takes (mlx5 ignores a longer "
            "cable length); set rdma_roce_policy.host_cable_length_m apart for the hosts",
            fabric,
        )
        out["host_cable_length_m"] = None
    else:
        out["host_cable_length_m"] = out["cable_length_m"]
    p2b = merged["host_prio2buffer"]
    out["host_prio2buffer"] = (
        None if p2b is None else _eight(check, "host_prio2buffer", p2b, 0, 7, "buffer")
    )
    size = merged["host_buffer_size"]
    out["host_buffer_size"] = (
        None if size is None else _eight(check, "host_buffer_size", size, 0, 1 << 30, "byte count")
    )
    p2b, roce, pfc = out["host_prio2buffer"], out["roce_priority"], out["pfc_priorities"]
    if p2b and roce is not None and pfc is not None:
        shared = [p for p in range(8) if p not in pfc and p2b[p] == p2b[roce]]
        if roce in pfc and shared:
            check.fail(
                _name("host_prio2buffer"),
                f"must give the RoCE priority {roce} a buffer of its own: lossy priorities "
                f"{shared} share buffer {p2b[roce]} and would be paused with it",
                merged["host_prio2buffer"],
            )
    size = out["host_buffer_size"]
    if size and p2b and roce is not None and not size[p2b[roce]]:
        check.fail(
            _name("host_buffer_size"),
            f"must give the RoCE priority's buffer {p2b[roce]} a size",
            merged["host_buffer_size"],
        )
    low, high = HOST_STORM_MS
    storm = merged["host_pfc_storm_timeout_ms"]
    watchdog = out.get("pfc_watchdog")
    if storm is not None:
        value = _as_int(storm)
        if value is None or not (value == 0 or low <= value <= high):
            check.fail(
                _name("host_pfc_storm_timeout_ms"),
                f"must be 0 (off) or {low}-{high} ms on hosts: mlx5 refuses any other "
                "pfc-prevention-tout (ethtool) with EINVAL",
                storm,
            )
            value = None
        out["host_pfc_storm_timeout_ms"] = value
    elif watchdog and watchdog["enabled"] is not None and out.get("pfc_priorities") is not None:
        derived = host_storm_timeout(out)
        if derived and not low <= derived <= high:
            check.fail(
                _name("pfc_watchdog.detection_time_ms"),
                f"must be {low}-{high} ms to serve as the hosts' PFC storm prevention "
                "timeout (ethtool pfc-prevention-tout; mlx5 refuses any other with EINVAL); "
                "or set rdma_roce_policy.host_pfc_storm_timeout_ms apart for the hosts",
                watchdog["detection_time_ms"],
            )
        out["host_pfc_storm_timeout_ms"] = derived
    else:
        out["host_pfc_storm_timeout_ms"] = None


class PolicyError(ValueError):
    """Raised by ``policy_or_raise``; the message lists every error, one a line."""


def policy_or_raise(policy):
    filled, errors = normalize_policy(policy)
    if errors:
        raise PolicyError("invalid rdma_roce_policy:\n" + "\n".join(errors))
    return filled


# --- switches ---------------------------------------------------------------------------
# What a switch OS can express of the policy. The roce_switch_qos role checks the filled
# policy against it (filter rdma.fabric.roce_policy_errors with switch_os) before it
# renders or pushes anything; every message names the key and the switch OS.

SWITCH_OS = ("cumulus", "sonic", "eos")
# Lossless (PFC) priorities a port can have. Cumulus: one lossless priority group per
# port (Cumulus Linux 5.x Buffer and Queue Management; `roce mode lossless`). SONiC: the
# default buffer templates (sonic-buildimage qos_config.j2) reserve lossless priority
# groups for priorities 3 and 4. EOS: PFC on all 8 priorities ("The hardware supports
# PFC on priorities 0 1 2 3 4 5 6 7", `show priority-flow-control`).
SWITCH_LOSSLESS_PRIORITIES = {"cumulus": 1, "sonic": 2, "eos": 8}
# PFC watchdog actions by OS (policy name -> the OS's own word).
SWITCH_WATCHDOG_ACTIONS = {
    "cumulus": {"drop": "drop"},
    "sonic": {"drop": "drop", "forward": "forward", "alert": "alert"},
    "eos": {"drop": "drop", "alert": "notify-only"},
}
# Cumulus: detection = polling-interval (100-5000 ms) x robustness (1-1000).
NVUE_WATCHDOG_POLL_MS = (100, 5000)
NVUE_WATCHDOG_ROBUSTNESS = (1, 1000)
# EOS: watchdog timeout and recovery-time accept 0.01 to 60 seconds, two decimals
# (`priority-flow-control pause watchdog port timer timeout <0.01-60>`): milliseconds
# must be a multiple of 10 (125 ms would render 0.125, refused at push time).
EOS_WATCHDOG_MS = (10, 60000)
EOS_WATCHDOG_STEP_MS = 10
# SONiC: the PFC watchdog ranges of sonic-utilities pfcwd/main.py (`pfcwd start`:
# detection-time click.IntRange(100, 5000), --restoration-time click.IntRange(100, 60000)).
SONIC_WATCHDOG_MS = {"detection_time_ms": (100, 5000), "restoration_time_ms": (100, 60000)}
# EOS: the largest interface MTU is 9214 (`mtu <68-9214>`; aristanetworks/avd
# eos_cli_config_gen's ethernet_interfaces mtu, max 9214).
EOS_MTU_MAX = 9214
# Cumulus: NVIDIA's RoCE profile keeps RoCE on traffic class 3, where `qos roce` puts the
# roce-reserved buffer pools (Cumulus Linux "RDMA over Converged Ethernet - RoCE",
# "Change RoCE Configuration": a new RoCE switch priority is remapped to TC 3).
CUMULUS_ROCE_TC = 3


def nvue_watchdog_timers(detection_ms):
    """(polling-interval ms, robustness) whose product is detection_ms, or None.

    The largest robustness wins (the shortest poll, closest to NVUE's default 100 ms)."""
    low, high = NVUE_WATCHDOG_POLL_MS
    for robustness in range(NVUE_WATCHDOG_ROBUSTNESS[1], NVUE_WATCHDOG_ROBUSTNESS[0] - 1, -1):
        poll, rest = divmod(detection_ms, robustness)
        if not rest and low <= poll <= high:
            return poll, robustness
    return None


def switch_policy_errors(policy, switch_os):
    """Errors for a filled policy (normalize_policy's output) that switch_os cannot express."""
    if switch_os not in SWITCH_OS:
        return [f"rdma_switch_os must be one of {', '.join(SWITCH_OS)}; got {switch_os!r}"]
    check = _Checker()
    pfc = policy["pfc_priorities"]
    limit = SWITCH_LOSSLESS_PRIORITIES[switch_os]
    if len(pfc) > limit:
        check.fail(
            _name("pfc_priorities"),
            f"asks for {len(pfc)} lossless priorities; {switch_os} supports at most {limit}",
            pfc,
        )
    roce = policy["roce_priority"]
    roce_tc = policy["prio_tc"][roce]
    if switch_os in ("sonic", "eos") and pfc and roce_tc != roce:
        check.fail(
            _name("prio_tc", roce),
            f"must equal the RoCE priority {roce} on {switch_os}: its PFC priority is the "
            "traffic class number (SONiC pfc_enable / EOS cos-to-traffic-class map)",
            roce_tc,
        )
    if switch_os == "sonic" and pfc and roce_tc == 0:
        check.fail(
            _name("roce_priority"),
            "must not be 0 on sonic: traffic class 0 is priority group 0, the lossy PG every "
            "other class shares (TC_TO_PRIORITY_GROUP_MAP), so PFC on it would pause them all",
            roce,
        )
    if switch_os == "eos" and policy["mtu"] > EOS_MTU_MAX:
        check.fail(
            _name("mtu"),
            f"must be at most {EOS_MTU_MAX} on eos (interface mtu 68-9214)",
            policy["mtu"],
        )
    watchdog = policy["pfc_watchdog"]
    if watchdog["enabled"] and pfc:
        actions = SWITCH_WATCHDOG_ACTIONS[switch_os]
        if watchdog["action"] not in actions:
            check.fail(
                _name("pfc_watchdog.action"),
                f"must be one of {', '.join(actions)} on {switch_os}",
                watchdog["action"],
            )
        detection = watchdog["detection_time_ms"]
        if switch_os == "cumulus" and nvue_watchdog_timers(detection) is None:
            check.fail(
                _name("pfc_watchdog.detection_time_ms"),
                "must be a polling interval of 100-5000 ms times a robustness of 1-1000 on cumulus",
                detection,
            )
        for key in ("detection_time_ms", "restoration_time_ms"):
            value = watchdog[key]
            if switch_os == "eos":
                low, high = EOS_WATCHDOG_MS
                if not low <= value <= high or value % EOS_WATCHDOG_STEP_MS:
                    check.fail(
                        _name("pfc_watchdog." + key),
                        f"must be {low}-{high} ms in steps of {EOS_WATCHDOG_STEP_MS} ms on eos "
                        "(0.01-60 s, two decimals)",
                        value,
                    )
            if switch_os == "sonic":
                low, high = SONIC_WATCHDOG_MS[key]
                if not low <= value <= high:
                    check.fail(
                        _name("pfc_watchdog." + key), f"must be {low}-{high} ms on sonic", value
                    )
    return check.errors


def host_qos_policy_errors(policy):
    """Errors for a filled policy on a host whose DCB roce_host_qos sets.

    roce_host_qos takes every RoCE port to DCBX host mode (``dcb dcbx set dev IF host`` or
    ``mlnx_qos --dcbx os``), at run time and at boot; ``nic_firmware_dcbx: true`` asks the
    firmware to negotiate DCB with the switch instead. Both cannot hold, so the pair is
    refused rather than one of them winning silently.
    """
    if policy.get("nic_firmware_dcbx") is True:
        return [
            f"{_name('nic_firmware_dcbx')} must not be true on a host roce_host_qos manages "
            "(a roce_hosts member): roce_host_qos sets DCB from the host and puts every RoCE "
            "port in DCBX host mode, while true has the NIC firmware negotiate DCB with the "
            "switch (LLDP_NB_DCBX); set it false or leave it unset; got True"
        ]
    return []


def switch_policy(policy, switch_os):
    """(filled policy, errors) for a switch: the policy's own checks, then the OS's."""
    filled, errors = normalize_policy(policy)
    if errors:
        return None, errors
    errors = switch_policy_errors(filled, switch_os)
    return (None if errors else filled), errors
