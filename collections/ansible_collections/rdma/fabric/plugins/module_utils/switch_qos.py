# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lossless RoCE policy rendered for switches, and the diffs that push it.

One filled policy (``roce_policy.normalize_policy``) in, one configuration per switch OS
out:

- Cumulus Linux 5.x: an NVUE object tree (the JSON of ``nv set ...``; the NVUE REST API
  takes it as a PATCH body at ``/nvue_v1/?rev=ID``);
- SONiC: CONFIG_DB tables (what ``config apply-patch`` converges CONFIG_DB to);
- Arista EOS: CLI text (pushed with arista.eos.eos_config).

In the NVUE tree and the CONFIG_DB tables a value of ``None`` means "absent": NVUE's
PATCH removes a value given as JSON null, and the SONiC patch removes the key. The diff
helpers below compare a desired tree with the current one under that rule, so a second
run against a switch that already follows the policy finds nothing to do.
"""

from __future__ import annotations

import copy
import json
import re
import traceback

from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    CUMULUS_ROCE_TC,
    SWITCH_WATCHDOG_ACTIONS,
    nvue_watchdog_timers,
)
from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import buffer_tables

# jsonpatch applies the patch for the check-mode prediction, as SONiC's generic config
# updater simulates `config apply-patch` with it: a switch that has `config apply-patch`
# has jsonpatch (sonic-utilities depends on it). Not in ansible-core: a module that calls
# apply_json_patch checks HAS_JSONPATCH and fails with missing_required_lib.
try:
    import jsonpatch
    from jsonpointer import JsonPointerException
except ImportError:
    HAS_JSONPATCH = False
    JSONPATCH_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_JSONPATCH = True
    JSONPATCH_IMPORT_ERROR = None

# Names this role owns on a switch (maps, profiles, schedulers).
SONIC_NAME = "RDMA_FABRIC"
EOS_PROFILE = "RDMA_FABRIC_ROCE"
# SONiC tables whose rows orchagent reads only when they are created: a SCHEDULER's
# type and weight do not change in place (an ETS change needs the row deleted and
# re-created), so the patch removes such a row and adds it again in one apply-patch.
SONIC_CREATE_ONLY = frozenset({"SCHEDULER"})
# The ASIC types whose platform QoS binds a PFC priority to PG map
# (sonic-buildimage files/build_templates/qos_config.j2 pfc_to_pg_map_supported_asics).
SONIC_PFC_TO_PG_ASICS = ("mellanox", "barefoot")
# The platform's lossless WRED profile (sonic-buildimage files/build_templates/qos_config.j2),
# the only one `config apply-patch` 202205-202505 may tune (see sonic_tables).
SONIC_WRED_PROFILE = "AZURE_LOSSLESS"
# SONiC's CABLE_LENGTH table has one key (the buffer template's, "AZURE" on most images).
SONIC_CABLE_KEY = "AZURE"


# Front-panel port names per OS (breakouts included): what `roce_switch_qos_ports: all`
# takes from the switch's own list (NVUE interfaces, CONFIG_DB PORT, EOS interfaces),
# leaving out management, loopback, bond/port-channel and VLAN interfaces.
PORT_PATTERNS = {
    "cumulus": r"^swp[0-9]+(s[0-9]+)?$",
    "sonic": r"^Ethernet[0-9]+$",
    "eos": r"^Ethernet[0-9]+(/[0-9]+)*$",
}


def _natural(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"([0-9]+)", name)]


def switch_ports(switch_os, listing):
    """Every front-panel port in a switch's own interface listing, in port order.

    ``listing`` is what the switch reports, keyed by interface name: NVUE's
    ``GET /nvue_v1/interface``, CONFIG_DB's PORT table, or EOS facts'
    ``ansible_net_interfaces`` (a list of names also works).
    """
    pattern = re.compile(PORT_PATTERNS[switch_os])
    return sorted((name for name in listing if pattern.match(name)), key=_natural)


def _switch_wide(config):
    """A dict configuration without its per-port parts (for ports unknown when rendering)."""
    kept = {}
    for key, value in config.items():
        if isinstance(value, dict) and value and all(v == {} for v in value.values()):
            continue  # CABLE_LENGTH {"AZURE": {}}
        if value != {}:
            kept[key] = value
    return kept


def _bytes(kb):
    # The policy's KB are 1000 bytes: Cumulus' RoCE default "150 KB" is 150000 bytes
    # (`nv show qos roce`: min-threshold 146.48 KB, i.e. KiB).
    return kb * 1000


def _ecn_tcs(policy):
    return sorted({policy["prio_tc"][p] for p in policy["ecn_priorities"]})


def _pfc_tcs(policy):
    return sorted({policy["prio_tc"][p] for p in policy["pfc_priorities"]})


def cable_lengths(ports, cable_length, per_port=None):
    """{port: meters}: ``per_port`` where it names the port, ``cable_length`` elsewhere."""
    per_port = per_port or {}
    return {port: int(per_port.get(port, cable_length)) for port in ports}


def sonic_lossy_pgs(policy):
    """PGs the policy's named traffic reaches without PFC, other than the shared PG 0: CNP
    on TC 7 lands on PG 7 (TC_TO_PRIORITY_GROUP_MAP keeps TC 7 -> PG 7), which NVIDIA's
    buffer defaults give no BUFFER_PG row."""
    cnp_tc = policy["prio_tc"][policy["cnp_priority"]]
    return [7] if cnp_tc == 7 and 7 not in _pfc_tcs(policy) else []


def roce_pg(policy):
    """The RoCE priority group: its traffic class (TC_TO_PRIORITY_GROUP_MAP is identity
    on lossless classes; the switch checks make it the RoCE priority)."""
    return policy["prio_tc"][policy["roce_priority"]]


def _watchdog_on(policy):
    return bool(policy["pfc_watchdog"]["enabled"] and policy["pfc_priorities"])


# --- Cumulus Linux (NVUE) ---------------------------------------------------------------

# The key that turns NVIDIA's RoCE profile on, per release (first release, key, value):
# Cumulus Linux 5.15 renamed `nv set qos roce enable on|off` to `nv set qos roce state
# enabled|disabled` (CumulusNetworks/docs content/cumulus-linux-515/Whats-New/
# New-and-Changed-NVUE-Commands.md, "Changes to Command Syntax"); 5.6-5.14 take `enable`.
NVUE_ROCE_ON = (((5, 15), "state", "enabled"), ((0, 0), "enable", "on"))


def release_tuple(release):
    """(major, minor) of a release string ("5.15.0", "Cumulus Linux 5.9.1"); (0, 0) if none."""
    found = re.search(r"([0-9]+)\.([0-9]+)", str(release or ""))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def nvue_roce_on(release=None):
    """{key: value} that turns `qos roce` on in ``release`` (unknown: before 5.15)."""
    version = release_tuple(release)
    _first, key, value = next(row for row in NVUE_ROCE_ON if version >= row[0])
    return {key: value}


def cumulus_policy(policy):
    """The policy with RoCE on traffic class 3, as NVIDIA's "Change RoCE Configuration"
    keeps it (the roce-reserved pools serve TC 3): the RoCE priority's class and class 3
    trade places in prio_tc, tc_bw and tc_tsa, so shares, ECN and strictness follow."""
    roce_tc = policy["prio_tc"][policy["roce_priority"]]
    if roce_tc == CUMULUS_ROCE_TC:
        return policy
    swap = {roce_tc: CUMULUS_ROCE_TC, CUMULUS_ROCE_TC: roce_tc}
    out = copy.deepcopy(policy)
    out["prio_tc"] = [swap.get(tc, tc) for tc in policy["prio_tc"]]
    for key in ("tc_bw", "tc_tsa"):
        out[key] = [policy[key][swap.get(tc, tc)] for tc in range(8)]
    return out


def nvue_config(policy, ports, cable_length, lossless_pool_percent=None, release=None):
    """The NVUE tree (root keys ``qos`` and ``interface``) for a filled policy.

    ``qos roce mode lossless`` (or lossy without PFC) brings NVIDIA's RoCE defaults the
    policy has no words for (LLDP application TLV for UDP 4791, the lossless buffer
    pools per ASIC); every policy value is then set explicitly on top, the way NVIDIA's
    "Change RoCE Configuration" examples do, so it holds even where the policy departs
    from those defaults. Sets of priorities name every other member as None (absent).
    """
    policy = cumulus_policy(policy)
    prio_tc = policy["prio_tc"]
    pfc = policy["pfc_priorities"]

    def members(chosen):
        return {str(p): ({} if p in chosen else None) for p in range(8)}

    # Trust is always DSCP (l3): the policy refuses pcp.
    # Every DSCP is mapped (the one classification, roce_policy.dscp_priority): NVUE's
    # default puts DSCP 24-31 on switch priority 3, the lossless one.
    mapping = {
        "trust": "l3",
        "dscp": {
            str(dscp): {"switch-priority": prio}
            for dscp, prio in enumerate(policy["dscp_priority"])
        },
    }
    scheduler = {}
    for tc, bandwidth in enumerate(policy["tc_bw"]):
        if bandwidth:
            scheduler[str(tc)] = {"mode": "dwrr", "bw-percent": bandwidth}
        else:
            scheduler[str(tc)] = {"mode": "strict", "bw-percent": None}
    ecn = {
        "ecn": "enable",
        "red": "enable" if policy["wred_drop"] else "disable",
        "min-threshold": _bytes(policy["ecn_min_threshold_kb"]),
        "max-threshold": _bytes(policy["ecn_max_threshold_kb"]),
        "probability": policy["ecn_mark_probability"],
    }
    qos = {
        # `qos roce enable` (5.15: `state`) is off by default (NVUE command reference);
        # NVIDIA's procedure turns it on and picks the mode.
        "roce": {**nvue_roce_on(release), "mode": "lossless" if pfc else "lossy"},
        "mapping": {"default-global": mapping},
        "egress-queue-mapping": {
            "default-global": {
                "switch-priority": {str(sp): {"traffic-class": tc} for sp, tc in enumerate(prio_tc)}
            }
        },
        "egress-scheduler": {"default-global": {"traffic-class": scheduler}},
        "congestion-control": {
            "default-global": {"traffic-class": {str(tc): dict(ecn) for tc in _ecn_tcs(policy)}}
        },
    }
    # The RoCE ports carry the policy's MTU (NVUE `interface swpN link mtu`, Linux
    # netdev MTU semantics, the same number the hosts use).
    interfaces = {port: {"link": {"mtu": policy["mtu"]}} for port in ports}
    if pfc:
        qos["pfc"] = {
            "default-global": {
                "switch-priority": members(pfc),
                "cable-length": cable_length,
                "rx": "enable",
                "tx": "enable",
            }
        }
        pool = {"switch-priority": members(pfc)}
        if lossless_pool_percent is not None:
            pool["memory-percent"] = lossless_pool_percent
        qos["traffic-pool"] = {"roce-lossless": pool}
        if lossless_pool_percent is not None:
            qos["traffic-pool"]["default-lossy"] = {"memory-percent": 100 - lossless_pool_percent}
        watchdog = policy["pfc_watchdog"]
        if watchdog["enabled"]:
            poll, robustness = nvue_watchdog_timers(watchdog["detection_time_ms"])
            qos["pfc-watchdog"] = {"polling-interval": poll, "robustness": robustness}
        state = "enable" if watchdog["enabled"] else "disable"
        for port in ports:
            interfaces[port]["qos"] = {"pfc-watchdog": {"state": state}}
    return {"qos": qos, "interface": interfaces}


def _same_scalar(want, have):
    # NVUE may return numbers as numbers or as strings ("100"), booleans as words.
    return want == have or str(want) == str(have)


def merge_diff(desired, current):
    """The part of ``desired`` that ``current`` does not already have (None = absent).

    The result is a PATCH body: applied with JSON merge semantics it makes ``current``
    agree with ``desired``; an empty dict means they already agree.
    """
    out = {}
    current = current if isinstance(current, dict) else {}
    for key, want in desired.items():
        have = current.get(key)
        if want is None:
            if have is not None:
                out[key] = None
        elif isinstance(want, dict):
            if not want:
                # {}: a member of a set (switch-priority 3); present is enough.
                if have is None:
                    out[key] = {}
                continue
            if not isinstance(have, dict):
                pruned = _prune(want)
                if pruned is not None:
                    out[key] = pruned
                continue
            sub = merge_diff(want, have)
            if sub:
                out[key] = sub
        elif have is None or not _same_scalar(want, have):
            out[key] = want
    return out


def merge_apply(current, patch):
    """``current`` after a merge PATCH (None removes), as NVUE stages it."""
    out = copy.deepcopy(current) if isinstance(current, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            out[key] = merge_apply(out.get(key), value)
        else:
            out[key] = value
    return out


def subset(tree, shape):
    """The parts of ``tree`` that ``shape`` names (for before/after views)."""
    if not isinstance(tree, dict):
        return tree
    out = {}
    for key, sub in shape.items():
        if key in tree:
            out[key] = subset(tree[key], sub) if isinstance(sub, dict) and sub else tree[key]
    return out


def diff_view(before, after):
    """Ansible's diff of two configuration views (sorted, indented JSON)."""
    return {
        "before": json.dumps(before, indent=2, sort_keys=True) + "\n",
        "after": json.dumps(after, indent=2, sort_keys=True) + "\n",
    }


# --- SONiC (CONFIG_DB) ------------------------------------------------------------------


def _s(value):
    return str(value)


def sonic_tables(policy, ports, cable_length, buffer_model=None, asic_type="mellanox"):
    """CONFIG_DB tables for a filled policy: maps named RDMA_FABRIC bound to the RoCE
    ports (not the platform's AZURE map, whose DSCP 26 goes to TC 1), WRED with ECN,
    schedulers, per-queue bindings, PFC watchdog, port MTU and cable length per port
    (``cable_length``: meters, or {port: meters}). Values are strings.

    With ``buffer_model`` (dynamic or traditional) the lossless BUFFER_PG rows of the
    RoCE PG are rendered too (``sonic_buffers.buffer_tables``, no switch read); the
    sonic_config_patch module computes them against the switch's CONFIG_DB instead.

    ``asic_type`` (``show version`` ASIC): PFC_PRIORITY_TO_PRIORITY_GROUP_MAP and the
    port's pfc_to_pg_map only on the ASICs qos_config.j2 writes them for."""
    pfc_to_pg = asic_type in SONIC_PFC_TO_PG_ASICS
    lengths = cable_length if isinstance(cable_length, dict) else cable_lengths(ports, cable_length)
    prio_tc = policy["prio_tc"]
    pfc_tcs = _pfc_tcs(policy)
    ecn_tcs = _ecn_tcs(policy)
    name = SONIC_NAME
    dscp_to_tc = {_s(d): _s(prio_tc[p]) for d, p in enumerate(policy["dscp_priority"])}
    identity = {_s(i): _s(i) for i in range(8)}
    pfc = ",".join(_s(p) for p in policy["pfc_priorities"])
    watchdog = policy["pfc_watchdog"]
    wd_on = _watchdog_on(policy)
    port_map = {
        "dscp_to_tc_map": name,
        "tc_to_queue_map": name,
        "tc_to_pg_map": name,
        "pfc_to_queue_map": name,
        "pfc_to_pg_map": name if pfc and pfc_to_pg else None,
        "pfc_enable": pfc or None,
        "pfcwd_sw_enable": pfc if wd_on else None,
    }
    # ECN on the platform's lossless WRED profile: `config apply-patch` 202205-202505 lets a
    # patch change WRED_PROFILE only in AZURE_LOSSLESS's green thresholds and drop
    # probability, by replace (sonic-utilities generic_config_updater
    # gcu_field_operation_validators.conf.json "ECN tuning"); a new profile, another field
    # or colour is refused. RoCE traffic is not policed, so it is green. WRED drop stays as
    # the platform profile has it (wred_*_enable "true" in sonic-buildimage qos_config.j2):
    # the role warns when the policy's wred_drop differs (see sonic_wred_note).
    wred = {
        "green_min_threshold": _s(_bytes(policy["ecn_min_threshold_kb"])),
        "green_max_threshold": _s(_bytes(policy["ecn_max_threshold_kb"])),
        "green_drop_probability": _s(policy["ecn_mark_probability"]),
    }
    schedulers = {}
    for tc, bandwidth in enumerate(policy["tc_bw"]):
        if bandwidth:
            schedulers[f"{name}_TC{tc}"] = {"type": "DWRR", "weight": _s(bandwidth)}
        else:
            schedulers[f"{name}_TC{tc}"] = {"type": "STRICT", "weight": None}
    queues = {}
    for port in ports:
        for tc in range(8):
            queues[f"{port}|{tc}"] = {
                "scheduler": f"{name}_TC{tc}",
                "wred_profile": SONIC_WRED_PROFILE if tc in ecn_tcs else None,
            }
    if wd_on:
        action = SWITCH_WATCHDOG_ACTIONS["sonic"][watchdog["action"]]
        pfc_wd = {
            port: {
                "action": action,
                "detection_time": _s(watchdog["detection_time_ms"]),
                "restoration_time": _s(watchdog["restoration_time_ms"]),
            }
            for port in ports
        }
    else:
        pfc_wd = dict.fromkeys(ports)
    tables = {
        "DSCP_TO_TC_MAP": {name: dscp_to_tc},
        "TC_TO_QUEUE_MAP": {name: identity},
        # Lossless classes on their own PG; TC 7 on PG 7 as the platform maps do
        # (sonic-buildimage files/build_templates/qos_config.j2 TC_TO_PRIORITY_GROUP_MAP
        # AZURE), every other class on PG 0.
        "TC_TO_PRIORITY_GROUP_MAP": {
            name: {_s(tc): (_s(tc) if tc in pfc_tcs or tc == 7 else "0") for tc in range(8)}
        },
        "MAP_PFC_PRIORITY_TO_QUEUE": {name: dict(identity)},
        # The PG a received PFC priority pauses: without it the platform's AZURE map
        # ({3: 3, 4: 4}) holds, and a RoCE priority elsewhere sends no pause.
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {
            name: ({_s(p): _s(prio_tc[p]) for p in policy["pfc_priorities"]} if pfc_to_pg else {})
            or None
        },
        "PORT_QOS_MAP": {port: dict(port_map) for port in ports},
        "WRED_PROFILE": {SONIC_WRED_PROFILE: wred},
        "SCHEDULER": schedulers,
        "QUEUE": queues,
        "PFC_WD": pfc_wd,
        "PORT": {port: {"mtu": _s(policy["mtu"])} for port in ports},
        "CABLE_LENGTH": {SONIC_CABLE_KEY: {port: f"{lengths[port]}m" for port in ports}},
    }
    if pfc_tcs and buffer_model:
        buffers, errors = buffer_tables(
            ports, roce_pg(policy), lengths, buffer_model, lossy_pgs=sonic_lossy_pgs(policy)
        )
        if errors:
            raise ValueError("; ".join(errors))
        tables.update(buffers)
    return tables


def sonic_patch_problems(current, desired):
    """What ``config apply-patch`` 202205-202505 cannot do to ``current`` for ``desired``:
    its field operation validators (sonic-utilities generic_config_updater
    gcu_field_operation_validators.conf.json) refuse a new PFC_WD table (only fields of
    existing rows) and a new WRED profile or field (only AZURE_LOSSLESS green values, by
    replace). Messages say what to do on the switch; [] when the patch can pass."""
    problems = []
    wants_wd = any(row for row in (desired.get("PFC_WD") or {}).values())
    if wants_wd and not current.get("PFC_WD"):
        problems.append(
            "CONFIG_DB has no PFC_WD table and `config apply-patch` refuses to add one (its "
            "field operation validators allow PFC_WD fields of existing rows only): start the "
            "watchdog once on the switch (`pfcwd start_default`), or set "
            "rdma_roce_policy.pfc_watchdog.enabled false"
        )
    for name, fields in (desired.get("WRED_PROFILE") or {}).items():
        have = (current.get("WRED_PROFILE") or {}).get(name)
        wanted = [f for f, v in (fields or {}).items() if v is not None]
        missing = sorted(f for f in wanted if f not in (have or {}))
        if have is None or missing:
            what = "is absent" if have is None else "lacks " + ", ".join(missing)
            problems.append(
                f"WRED_PROFILE {name} {what} "
                "and `config apply-patch` may only replace its green thresholds and probability: "
                "load the platform QoS (`config qos reload`) first"
            )
    return problems


def sonic_sai_wred(current, desired):
    """``desired`` without the drop probability of a colour the switch's profile runs
    ECN-only (``wred_<colour>_enable`` "false"): NVIDIA's SAI refuses a drop probability
    on a colour whose WRED is disabled (Mellanox/SAI-Implementation mlnx_sai_wred.c)."""
    out = copy.deepcopy(desired)
    for name, fields in (out.get("WRED_PROFILE") or {}).items():
        have = (current.get("WRED_PROFILE") or {}).get(name) or {}
        for color in ("green", "yellow", "red"):
            if have.get(f"wred_{color}_enable") == "false" and fields:
                fields.pop(f"{color}_drop_probability", None)
    return out


def sonic_wred_note(current, policy_drop):
    """A warning when the switch's lossless WRED profile drops otherwise than the policy's
    wred_drop asks, or None; the patch cannot change wred_*_enable (see sonic_tables)."""
    have = (current.get("WRED_PROFILE") or {}).get(SONIC_WRED_PROFILE) or {}
    enabled = have.get("wred_green_enable")
    if enabled is None or (enabled == "true") == bool(policy_drop):
        return None
    return (
        f"WRED_PROFILE {SONIC_WRED_PROFILE} has wred_green_enable {enabled} while "
        f"rdma_roce_policy.wred_drop is {str(bool(policy_drop)).lower()}: `config apply-patch` "
        "may change only its green thresholds and probability, so "
        + (
            "non-ECN packets in the RoCE queue are dropped early (WRED) besides ECN marking"
            if enabled == "true"
            else "the RoCE queue marks ECN without WRED drop"
        )
    )


def _pointer(*parts):
    """An RFC 6901 JSON Pointer from path segments."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _prune(value):
    """A desired subtree without its absent (None) members; None when nothing is left."""
    if not isinstance(value, dict) or not value:
        return value  # a scalar, or {} (a set member: present)
    out = {}
    for key, sub in value.items():
        sub = _prune(sub) if sub is not None else None
        if sub is not None:
            out[key] = sub
    return out or None


def json_patch(current, desired, cable_key=None):
    """RFC 6902 operations that make CONFIG_DB ``current`` agree with ``desired`` tables.

    Tables, keys and fields missing are added, differing fields replaced, fields and keys
    desired absent (None) removed; a key or table that would be left empty is removed
    whole (SONiC's config updater refuses empty tables). Nothing else is touched.
    ``cable_key`` renames the CABLE_LENGTH key to the one CONFIG_DB already has.
    """
    desired = copy.deepcopy(desired)
    if "CABLE_LENGTH" in desired and current.get("CABLE_LENGTH"):
        key = cable_key or next(iter(current["CABLE_LENGTH"]))
        desired["CABLE_LENGTH"] = {key: next(iter(desired["CABLE_LENGTH"].values()))}
    ops = []
    for table, rows in desired.items():
        have_table = current.get(table)
        if not isinstance(have_table, dict):
            value = _prune(rows)
            if value is not None:
                ops.append({"op": "add", "path": _pointer(table), "value": value})
            continue
        removed_keys = []
        table_ops = []
        for key, fields in rows.items():
            have_row = have_table.get(key)
            if fields is None:
                if have_row is not None:
                    removed_keys.append(key)
                continue
            if not isinstance(have_row, dict):
                value = _prune(fields)
                if value is not None:
                    table_ops.append({"op": "add", "path": _pointer(table, key), "value": value})
                continue
            field_ops = []
            remaining = dict(have_row)
            for field, want in fields.items():
                have = have_row.get(field)
                if want is None:
                    if field in have_row:
                        field_ops.append({"op": "remove", "path": _pointer(table, key, field)})
                        remaining.pop(field)
                elif field not in have_row:
                    field_ops.append(
                        {"op": "add", "path": _pointer(table, key, field), "value": want}
                    )
                    remaining[field] = want
                elif have != want:
                    field_ops.append(
                        {"op": "replace", "path": _pointer(table, key, field), "value": want}
                    )
                    remaining[field] = want
            # A row desired as {} (an INTERFACE "Ethernet0|10.0.0.0/31" key) is present
            # without fields; only a row emptied by its removals goes.
            if not remaining and fields:
                removed_keys.append(key)
            elif field_ops and table in SONIC_CREATE_ONLY:
                table_ops.append({"op": "remove", "path": _pointer(table, key)})
                table_ops.append({"op": "add", "path": _pointer(table, key), "value": remaining})
            else:
                table_ops.extend(field_ops)
        if removed_keys and not table_ops and set(removed_keys) >= set(have_table):
            ops.append({"op": "remove", "path": _pointer(table)})
        else:
            ops.extend(table_ops)
            ops.extend({"op": "remove", "path": _pointer(table, key)} for key in removed_keys)
    return ops


class PatchError(ValueError):
    """An RFC 6902 operation that cannot apply (the path or its parent is missing)."""


def apply_json_patch(document, patch):
    """``document`` after the RFC 6902 ``patch``, applied by jsonpatch as SONiC's
    ``config apply-patch`` simulates it; the document itself is left as it was."""
    try:
        return jsonpatch.JsonPatch(patch).apply(document)
    except (jsonpatch.JsonPatchException, JsonPointerException) as err:
        raise PatchError(str(err)) from err


def tables_view(configdb, desired):
    """The rows of ``configdb`` that ``desired`` names (for before/after and diff)."""
    out = {}
    for table, rows in desired.items():
        have = configdb.get(table)
        if isinstance(have, dict):
            picked = {key: have[key] for key in rows if key in have}
            if table == "CABLE_LENGTH":
                picked = have
            if picked:
                out[table] = picked
    return out


# --- Arista EOS (CLI) -------------------------------------------------------------------


def _seconds(ms):
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


# EOS' default DSCP to traffic-class map, as far as a source proves it. A 4.35.1F
# running-config (aristanetworks/avd issue "Re sort priority-flow-control as per EOS 4.35
# CLI") prints one `qos map dscp <DSCPs ascending> to traffic-class N` line per traffic
# class, only for DSCPs off their default class, and lacks its intended config's `qos
# map dscp 46 to traffic-class 5`: DSCP 46 is on traffic class 5 by default. The rest of
# the default map is unproven here (said elsewhere: 0-7 on TC 1, 8-15 on TC 0, then
# DSCP // 8, not from an Arista source found), so every other DSCP's mapping is rendered:
# a DSCP EOS in fact has there by default is then left out of its running-config and
# sent again each run (a configuration session whose diff is empty).
EOS_DEFAULT_DSCP_TC = {46: 5}


def eos_dscp_lines(policy):
    """`qos map dscp ... to traffic-class N` as EOS prints it: one line per traffic class
    (ascending), its DSCPs ascending, leaving out the DSCPs on their default class
    (EOS_DEFAULT_DSCP_TC): eos_config's match=line then finds them in the running-config."""
    by_tc = {}
    for dscp, prio in enumerate(policy["dscp_priority"]):
        tc = policy["prio_tc"][prio]
        if EOS_DEFAULT_DSCP_TC.get(dscp) != tc:
            by_tc.setdefault(tc, []).append(str(dscp))
    return [f"qos map dscp {' '.join(by_tc[tc])} to traffic-class {tc}" for tc in sorted(by_tc)]


def eos_config(policy, ports, tx_queue="tx-queue", switchports=(), l3_ports=None):
    """EOS CLI lines (3-space nesting, as EOS prints its running-config): global DSCP to
    traffic-class maps, a qos profile with trust, PFC no-drop, the PFC watchdog, per-queue
    ETS and ECN, and the profile on each RoCE port (service-profile). ``switchports`` (L2
    ports) get no ``mtu``: EOS applies it to routed ports only (aristanetworks/avd
    eos_cli_config_gen renders ``mtu`` for routed and ``l2 mtu`` for switched ports).
    ``l3_ports`` ({port: {address, mtu}}): routed, with the address and the rail's MTU."""
    l3_ports = l3_ports or {}
    lines = [
        *eos_dscp_lines(policy),
        "!",
        f"qos profile {EOS_PROFILE}",
        "   qos trust dscp",
    ]
    if policy["pfc_priorities"]:
        lines.append("   priority-flow-control on")
        lines += [
            f"   priority-flow-control priority {p} no-drop" for p in policy["pfc_priorities"]
        ]
        watchdog = policy["pfc_watchdog"]
        if watchdog["enabled"]:
            action = SWITCH_WATCHDOG_ACTIONS["eos"][watchdog["action"]]
            lines += [
                "   priority-flow-control pause watchdog",
                f"   priority-flow-control pause watchdog port action {action}",
                "   priority-flow-control pause watchdog port timer timeout "
                f"{_seconds(watchdog['detection_time_ms'])} polling-interval auto "
                f"recovery-time {_seconds(watchdog['restoration_time_ms'])}",
            ]
    ecn_tcs = _ecn_tcs(policy)
    # A strict-priority queue without ECN (the CNP queue) has nothing that is not EOS'
    # default, so no block: EOS would not print an empty one.
    queues = sorted({tc for tc, bw in enumerate(policy["tc_bw"]) if bw} | set(ecn_tcs))
    for tc in queues:
        lines += ["   !", f"   {tx_queue} {tc}"]
        bandwidth = policy["tc_bw"][tc]
        if bandwidth:
            lines += ["      no priority", f"      bandwidth percent {bandwidth}"]
        # else strict priority: EOS' default for a tx-queue, not printed in its
        # running-config (a hardware `show session-config diffs` in aristanetworks/avd
        # pull request "Rearrange eos_cli_config_gen config order as per EOS 4.35.0F part
        # 11"), so not rendered: the queue block alone.
        if tc in ecn_tcs:
            lines.append(
                "      random-detect ecn minimum-threshold "
                f"{_bytes(policy['ecn_min_threshold_kb'])} bytes maximum-threshold "
                f"{_bytes(policy['ecn_max_threshold_kb'])} bytes max-mark-probability "
                f"{policy['ecn_mark_probability']}"
            )
            if policy["wred_drop"]:
                lines.append(
                    "      random-detect drop minimum-threshold "
                    f"{_bytes(policy['ecn_min_threshold_kb'])} bytes maximum-threshold "
                    f"{_bytes(policy['ecn_max_threshold_kb'])} bytes drop-probability "
                    f"{policy['ecn_mark_probability']}"
                )
    for port in ports:
        lines += ["!", f"interface {port}"]
        if port in l3_ports:
            lines += eos_l3_lines(l3_ports[port])
        elif port not in switchports:
            lines.append(f"   mtu {policy['mtu']}")
        lines.append(f"   service-profile {EOS_PROFILE}")
    for port in l3_ports:
        if port not in ports:
            lines += ["!", f"interface {port}", *eos_l3_lines(l3_ports[port])]
    return "\n".join(lines) + "\n"


# --- the leaf side of L3 rails (leaf_ports.leaf_plan) -----------------------------------
# Each port: {address: "10.0.0.0/31", address6: "2001:db8::/127" or None, mtu}. These
# addresses are the only ones the role writes on the port; the MTU is the rail's (the
# hosts' netdev MTU), which wins over the policy's on that port.


def l3_addresses(want):
    """The port's prefixes: its IPv4 block's leaf end, then its IPv6 /127's when planned."""
    return [want["address"]] + ([want["address6"]] if want.get("address6") else [])


def nvue_l3(tree, l3_ports):
    """NVUE: `nv set interface <port> ip address <prefix>` (IPv4 and IPv6 prefixes alike)
    and `link mtu` (NVUE command reference: interface <id> ip address is a set of
    prefixes, members take {})."""
    interfaces = tree.setdefault("interface", {})
    for port, want in l3_ports.items():
        node = interfaces.setdefault(port, {})
        node.setdefault("link", {})["mtu"] = want["mtu"]
        node["ip"] = {"address": {prefix: {} for prefix in l3_addresses(want)}}
    return tree


def sonic_l3(tables, l3_ports):
    """SONiC CONFIG_DB: the INTERFACE table's port row and its "PORT|PREFIX" row
    (sonic-buildimage src/sonic-yang-models sonic-interface.yang; what `config interface
    ip add` writes, "Ethernet0|2001:db8::/127" for IPv6 too) and the PORT table's mtu
    (strings, as CONFIG_DB holds them)."""
    interface = tables.setdefault("INTERFACE", {})
    port_table = tables.setdefault("PORT", {})
    for port, want in l3_ports.items():
        interface[port] = {}
        for prefix in l3_addresses(want):
            interface[f"{port}|{prefix}"] = {}
        port_table.setdefault(port, {})["mtu"] = _s(want["mtu"])
    return tables


def eos_l3_lines(want):
    """EOS: the leaf end of an L3 rail is a routed port (`no switchport`) with its
    address (`ip address`, and `ipv6 address` for its /127: aristanetworks/avd
    eos_cli_config_gen ethernet-interfaces), in the 3-space nesting EOS prints its
    running-config with."""
    lines = ["   no switchport", f"   ip address {want['address']}"]
    if want.get("address6"):
        lines.append(f"   ipv6 address {want['address6']}")
    return [*lines, f"   mtu {want['mtu']}"]


def l3_problems(switch_os, l3_ports, options):
    """What the switch cannot take: an EOS port listed as a switchport gets no address."""
    if switch_os != "eos":
        return []
    switchports = set(options.get("eos_switchports") or ())
    return [
        f"roce_switch_qos_eos_switchports lists {port}, which is the leaf end of "
        f"{want.get('host', 'a host')}'s /31 on rail {want.get('rail', '?')} (an L3 port "
        "is routed: no switchport)"
        for port, want in l3_ports.items()
        if port in switchports
    ]


# --- one entry point for the role -------------------------------------------------------


def render(policy, switch_os, ports, cable_length, options=None):
    """The configuration for ``switch_os`` (dict for cumulus/sonic, text for eos), with
    the leaf ports of L3 rails (options ``l3_ports``, leaf_ports.switch_ports) routed."""
    options = options or {}
    l3_ports = options.get("l3_ports") or {}
    problems = l3_problems(switch_os, l3_ports, options)
    if problems:
        raise ValueError("; ".join(problems))
    config = _render(policy, switch_os, ports, cable_length, options)
    if not l3_ports:
        return config
    if switch_os == "cumulus":
        return nvue_l3(config, l3_ports)
    if switch_os == "sonic":
        return sonic_l3(config, l3_ports)
    return config  # eos_config wrote them in the port's own block


def _render(policy, switch_os, ports, cable_length, options):
    lengths = cable_lengths(ports, cable_length, options.get("cable_lengths"))
    if switch_os == "cumulus":
        percent = options.get("lossless_pool_percent")
        percent = None if percent in (None, "") else int(percent)
        # One cable length for the fabric-wide PFC profile: the longest port's headroom
        # (without ports, every port of the switch: the longest length given).
        longest = max(lengths.values()) if ports else _longest(cable_length, options)
        release = options.get("os_release") or None
        return _switch_wide_if(ports, nvue_config(policy, ports, longest, percent, release))
    if switch_os == "sonic":
        model = options.get("sonic_buffer_model") or None
        asic = options.get("sonic_asic_type") or "mellanox"
        return _switch_wide_if(ports, sonic_tables(policy, ports, lengths, model, asic))
    if switch_os == "eos":
        return eos_config(
            policy,
            ports,
            options.get("eos_tx_queue") or "tx-queue",
            options.get("eos_switchports") or (),
            options.get("l3_ports") or {},
        )
    raise ValueError(f"rdma_switch_os must be one of cumulus, sonic, eos; got {switch_os!r}")


def _longest(cable_length, options):
    return max([int(cable_length), *map(int, (options.get("cable_lengths") or {}).values())])


def _switch_wide_if(ports, config):
    # No ports (`roce_switch_qos_ports: all` rendered without the switch): only the
    # switch-wide part, with no empty per-port tables that would read as "no port".
    return config if ports else _switch_wide(config)
