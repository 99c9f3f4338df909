# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenSM's option table: every opensm.conf key and whether SIGHUP re-reads it.

Source: linux-rdma/opensm, opensm/osm_subnet.c, ``opt_tbl[]`` (name, offset, parser,
setup, can_update), copied for tag 3.3.23 (commit d35a20f3be113e03316ca6c3afb7d19975772d8d,
Debian 12's opensm 3.3.23-2) with the one row tag 3.3.24 (commit
844ab3b7edaad983449b5d3a4a773088b8daa299) adds. osm_subn_rescan_conf_files(), which
SIGHUP runs, parses only rows with can_update 1 and logs `Unrecognized token: "KEY"` for
a key not in the table; every other row takes a restart. The perfmgr* rows and
event_db_dump_file exist only in builds with ENABLE_OSM_PERF_MGR (Debian's has it).

Routing engines: opensm/osm_opensm.c static_routing_modules[] at the same tags, plus
the keyword no_fallback (setup_routing_engine(): no fall-back to minhop). Path rates:
include/iba/ib_types.h, IB_MAX_RATE: 22 (600 Gb/s) in 3.3.23; 3.3.24 adds 23 (800
Gb/s) and 24 (1200 Gb/s) with commit bf850acd "Support NDR devices".
"""

from __future__ import annotations

import re

SOURCE = (
    "linux-rdma/opensm opensm/osm_subnet.c opt_tbl, tags 3.3.23 (d35a20f3) and 3.3.24 (844ab3b7)"
)

# (key, can_update) in opt_tbl order, tag 3.3.23.
_TABLE_3_3_23 = (
    ("guid", False),
    ("m_key", True),
    ("sm_key", True),
    ("sa_key", True),
    ("subnet_prefix", False),
    ("m_key_lease_period", True),
    ("m_key_protection_level", True),
    ("m_key_lookup", True),
    ("sweep_interval", True),
    ("max_wire_smps", True),
    ("max_wire_smps2", True),
    ("max_smps_timeout", True),
    ("console", False),
    ("console_port", False),
    ("transaction_timeout", False),
    ("transaction_retries", False),
    ("long_transaction_timeout", False),
    ("max_msg_fifo_timeout", True),
    ("sm_priority", True),
    ("lmc", False),
    ("lmc_esp0", False),
    ("max_op_vls", True),
    ("force_link_speed", True),
    ("force_link_speed_ext", True),
    ("force_link_width", True),
    ("fdr10", True),
    ("reassign_lids", True),
    ("ignore_other_sm", True),
    ("single_thread", False),
    ("disable_multicast", True),
    ("subnet_timeout", True),
    ("packet_life_time", True),
    ("vl_stall_count", True),
    ("leaf_vl_stall_count", True),
    ("head_of_queue_lifetime", True),
    ("leaf_head_of_queue_lifetime", True),
    ("local_phy_errors_threshold", True),
    ("overrun_errors_threshold", True),
    ("use_mfttop", True),
    ("sminfo_polling_timeout", True),
    ("polling_retry_number", True),
    ("force_heavy_sweep", True),
    ("port_prof_ignore_file", False),
    ("hop_weights_file", False),
    ("dimn_ports_file", False),
    ("port_search_ordering_file", False),
    ("port_profile_switch_nodes", True),
    ("sweep_on_trap", True),
    ("routing_engine", False),
    ("avoid_throttled_links", False),
    ("connect_roots", True),
    ("use_ucast_cache", False),
    ("log_file", False),
    ("log_max_size", True),
    ("log_flags", True),
    ("force_log_flush", True),
    ("accum_log_file", True),
    ("partition_config_file", False),
    ("no_partition_enforcement", True),
    ("part_enforce", True),
    ("allow_both_pkeys", False),
    ("keep_pkey_indexes", True),
    ("sm_assigned_guid", True),
    ("qos", True),
    ("qos_policy_file", False),
    ("suppress_sl2vl_mad_status_errors", True),
    ("dump_files_dir", False),
    ("lid_matrix_dump_file", False),
    ("lfts_file", False),
    ("root_guid_file", False),
    ("cn_guid_file", False),
    ("io_guid_file", False),
    ("port_shifting", True),
    ("scatter_ports", True),
    ("max_reverse_hops", False),
    ("ids_guid_file", False),
    ("guid_routing_order_file", False),
    ("guid_routing_order_no_scatter", False),
    ("sa_db_file", False),
    ("sa_db_dump", True),
    ("torus_config", True),
    ("do_mesh_analysis", True),
    ("exit_on_fatal", True),
    ("honor_guid2lid_file", True),
    ("daemon", False),
    ("sm_inactive", True),
    ("babbling_port_policy", True),
    ("drop_event_subscriptions", True),
    ("ipoib_mcgroup_creation_validation", True),
    ("mcgroup_join_validation", True),
    ("use_original_extended_sa_rates_only", True),
    ("use_optimized_slvl", True),
    ("fsync_high_avail_files", True),
    ("perfmgr", False),
    ("perfmgr_redir", False),
    ("perfmgr_sweep_time_s", False),
    ("perfmgr_max_outstanding_queries", False),
    ("perfmgr_ignore_cas", False),
    ("event_db_dump_file", False),
    ("perfmgr_rm_nodes", False),
    ("perfmgr_log_errors", False),
    ("perfmgr_query_cpi", False),
    ("perfmgr_xmit_wait_log", False),
    ("perfmgr_xmit_wait_threshold", False),
    ("event_plugin_name", False),
    ("event_plugin_options", False),
    ("node_name_map_name", False),
    ("qos_max_vls", True),
    ("qos_high_limit", True),
    ("qos_vlarb_high", True),
    ("qos_vlarb_low", True),
    ("qos_sl2vl", True),
    ("qos_ca_max_vls", True),
    ("qos_ca_high_limit", True),
    ("qos_ca_vlarb_high", True),
    ("qos_ca_vlarb_low", True),
    ("qos_ca_sl2vl", True),
    ("qos_sw0_max_vls", True),
    ("qos_sw0_high_limit", True),
    ("qos_sw0_vlarb_high", True),
    ("qos_sw0_vlarb_low", True),
    ("qos_sw0_sl2vl", True),
    ("qos_swe_max_vls", True),
    ("qos_swe_high_limit", True),
    ("qos_swe_vlarb_high", True),
    ("qos_swe_vlarb_low", True),
    ("qos_swe_sl2vl", True),
    ("qos_rtr_max_vls", True),
    ("qos_rtr_high_limit", True),
    ("qos_rtr_vlarb_high", True),
    ("qos_rtr_vlarb_low", True),
    ("qos_rtr_sl2vl", True),
    ("congestion_control", True),
    ("cc_key", False),
    ("cc_max_outstanding_mads", False),
    ("cc_sw_cong_setting_control_map", True),
    ("cc_sw_cong_setting_victim_mask", True),
    ("cc_sw_cong_setting_credit_mask", True),
    ("cc_sw_cong_setting_threshold", True),
    ("cc_sw_cong_setting_packet_size", True),
    ("cc_sw_cong_setting_credit_starvation_threshold", True),
    ("cc_sw_cong_setting_credit_starvation_return_delay", True),
    ("cc_sw_cong_setting_marking_rate", True),
    ("cc_ca_cong_setting_port_control", True),
    ("cc_ca_cong_setting_control_map", True),
    ("cc_ca_cong_setting_ccti_timer", True),
    ("cc_ca_cong_setting_ccti_increase", True),
    ("cc_ca_cong_setting_trigger_threshold", True),
    ("cc_ca_cong_setting_ccti_min", True),
    ("cc_cct", True),
    ("enable_quirks", True),
    ("no_clients_rereg", True),
    ("prefix_routes_file", False),
    ("consolidate_ipv6_snm_req", True),
    ("lash_start_vl", True),
    ("sm_sl", True),
    ("nue_max_num_vls", True),
    ("nue_include_switches", False),
    ("log_prefix", True),
    ("per_module_logging_file", False),
    ("quasi_ftree_indexing", True),
)
# Rows later tags add: {version: ((key, can_update), ...)}.
_ADDED = {(3, 3, 24): (("max_rate_enum", True),)}
# IB_MAX_RATE (the highest PathRecord rate enum) per tag.
_MAX_RATE = {(3, 3, 23): 22, (3, 3, 24): 24}
NEWEST = (3, 3, 24)

# opensm -R / routing_engine: static_routing_modules[] ("none" has no setup function).
ROUTING_ENGINES = (
    "minhop",
    "updn",
    "dnup",
    "file",
    "ftree",
    "lash",
    "dor",
    "torus-2QoS",
    "nue",
    "dfsssp",
    "sssp",
)
NO_FALLBACK = "no_fallback"

_VERSION_RE = re.compile(r"^(?:\d+:)?(\d+)\.(\d+)\.(\d+)")


def parse_version(text):
    """(3, 3, 23) from "3.3.23", "3.3.23-2+b1" or "1:3.3.24-1"; None when not a version."""
    match = _VERSION_RE.match(str(text or "").strip())
    return tuple(int(part) for part in match.groups()) if match else None


def is_upstream(version):
    """True for upstream OpenSM 3.x (or an unknown version, judged as the newest upstream).

    NVIDIA's OpenSM (DOCA/MLNX_OFED, 5.x) has more keys than upstream's table.
    """
    parsed = parse_version(version) if version else None
    return parsed is None or parsed[0] < 5


def _known(version):
    parsed = parse_version(version) if version else None
    if parsed is None or parsed > NEWEST:
        return NEWEST
    return parsed


def option_table(version=None):
    """{key: can_update} for an OpenSM version; unknown or newer: the newest tag's."""
    known = _known(version)
    table = dict(_TABLE_3_3_23)
    for added_in, rows in sorted(_ADDED.items()):
        if known >= added_in:
            table.update(rows)
    return table


def max_rate(version=None):
    """IB_MAX_RATE of the version (the highest partition/multicast rate enum)."""
    known = _known(version)
    return max(rate for added_in, rate in _MAX_RATE.items() if known >= added_in)


def is_reloadable(key, version=None):
    """True when SIGHUP applies a change of the key (can_update 1)."""
    return option_table(version).get(key, False)


def unknown_options(keys, version=None):
    """Keys of `keys` that the version's table lacks, sorted (OpenSM ignores them)."""
    table = option_table(version)
    return sorted(str(key) for key in keys if str(key) not in table)


def routing_engine_errors(engines, variable="ib_subnet_manager_routing_engines"):
    """Messages for a routing engine chain (a list; entries may be comma-separated)."""
    # OpenSM splits routing_engine on ", \t\n" (osm_opensm.c, strtok_r): "updn ftree"
    # is the chain updn, ftree.
    names = [n for entry in engines or [] for n in re.split(r"[,\s]+", str(entry)) if n]
    errors = [
        f"{variable}: {name!r} is not an OpenSM routing engine; "
        f"known: {', '.join(ROUTING_ENGINES)} (and {NO_FALLBACK})"
        for name in names
        if name not in ROUTING_ENGINES and name != NO_FALLBACK
    ]
    if names and all(name == NO_FALLBACK for name in names):
        errors.append(f"{variable}: {NO_FALLBACK} needs a routing engine before it")
    if not names:
        errors.append(f"{variable} is empty: name at least one routing engine (minhop)")
    return errors


# linux-rdma/opensm issue 38 (open): "NDR fabric does not work properly with opensm":
# IPoIB and MPI fail with upstream OpenSM on NDR (Quantum-2) fabrics, and work with
# NVIDIA's OpenSM (MLNX_OFED / DOCA) or a switch SM / UFM.
_NEW_SPEEDS = ("NDR", "XDR")


def fabric_warnings(version, rates):
    """Warnings for running this OpenSM `version` with ports of these sysfs `rates`.

    `rates` are /sys/class/infiniband/DEV/ports/N/rate texts ("400 Gb/sec (4X NDR)").
    """
    fast = sorted({r for r in rates or [] if any(f"X {s})" in str(r) for s in _NEW_SPEEDS)})
    if not fast or not is_upstream(version):
        return []
    return [
        f"Upstream OpenSM {version or ''} on NDR/XDR ports ({', '.join(fast)}): upstream "
        "OpenSM is known not to bring up NDR (Quantum-2) fabrics properly (linux-rdma/opensm "
        "issue 38: IPoIB and MPI traffic fail). Use NVIDIA's OpenSM (rdma_stack_provider: doca "
        "installs DOCA's opensm), or the SM of a Quantum switch or UFM "
        "(ib_subnet_manager_mode: external)."
    ]


# How OpenSM parses each opensm.conf value (opt_tbl's parser column, osm_subnet.c):
# opts_parse_boolean is strcmp("TRUE", value): anything but TRUE is FALSE ("true",
# "yes", "1" too); the integer parsers take strtoul/strtoull(value, 0) up to the type's
# maximum; charp keys take the text. Tighter ranges are those osm_subn_verify_config
# resets to a default (lmc, sm_priority, fdr10), the SL and VL ranges of the IBA spec,
# and QoS limits as opensm.conf documents them (-1 = not set).
BOOLEAN_KEYS = frozenset(
    [
        "m_key_lookup",
        "lmc_esp0",
        "reassign_lids",
        "ignore_other_sm",
        "single_thread",
        "disable_multicast",
        "use_mfttop",
        "force_heavy_sweep",
        "port_profile_switch_nodes",
        "sweep_on_trap",
        "avoid_throttled_links",
        "connect_roots",
        "use_ucast_cache",
        "force_log_flush",
        "accum_log_file",
        "no_partition_enforcement",
        "allow_both_pkeys",
        "keep_pkey_indexes",
        "qos",
        "suppress_sl2vl_mad_status_errors",
        "port_shifting",
        "guid_routing_order_no_scatter",
        "sa_db_dump",
        "do_mesh_analysis",
        "exit_on_fatal",
        "honor_guid2lid_file",
        "daemon",
        "sm_inactive",
        "babbling_port_policy",
        "drop_event_subscriptions",
        "ipoib_mcgroup_creation_validation",
        "mcgroup_join_validation",
        "use_original_extended_sa_rates_only",
        "use_optimized_slvl",
        "fsync_high_avail_files",
        "perfmgr",
        "perfmgr_redir",
        "perfmgr_ignore_cas",
        "perfmgr_rm_nodes",
        "perfmgr_log_errors",
        "perfmgr_query_cpi",
        "perfmgr_xmit_wait_log",
        "congestion_control",
        "enable_quirks",
        "no_clients_rereg",
        "consolidate_ipv6_snm_req",
        "nue_include_switches",
        "quasi_ftree_indexing",
    ]
)
_U8 = """m_key_protection_level sm_priority lmc max_op_vls force_link_speed
    force_link_speed_ext force_link_width fdr10 subnet_timeout packet_life_time
    vl_stall_count leaf_vl_stall_count head_of_queue_lifetime leaf_head_of_queue_lifetime
    local_phy_errors_threshold overrun_errors_threshold log_flags sm_assigned_guid
    max_rate_enum cc_sw_cong_setting_threshold cc_sw_cong_setting_packet_size
    cc_sw_cong_setting_credit_starvation_threshold lash_start_vl sm_sl nue_max_num_vls"""
_U16 = """console_port max_reverse_hops perfmgr_sweep_time_s m_key_lease_period
    cc_sw_cong_setting_marking_rate cc_ca_cong_setting_port_control
    cc_ca_cong_setting_control_map"""
_U32 = """sweep_interval max_wire_smps max_wire_smps2 max_smps_timeout transaction_timeout
    transaction_retries long_transaction_timeout max_msg_fifo_timeout
    sminfo_polling_timeout polling_retry_number log_max_size scatter_ports
    perfmgr_max_outstanding_queries perfmgr_xmit_wait_threshold cc_max_outstanding_mads
    cc_sw_cong_setting_control_map"""
_QOS_SETS = ("qos", "qos_ca", "qos_sw0", "qos_swe", "qos_rtr")
INTEGER_RANGES = {
    **{key: (0, 0xFF) for key in _U8.split()},
    **{key: (0, 0xFFFF) for key in _U16.split()},
    **{key: (0, 0xFFFFFFFF) for key in _U32.split()},
    **{
        key: (0, (1 << 64) - 1)
        for key in ["guid", "m_key", "sm_key", "sa_key", "subnet_prefix", "cc_key"]
    },
    "lmc": (0, 7),
    "sm_priority": (0, 15),
    "fdr10": (0, 2),
    "sm_sl": (0, 15),
    "lash_start_vl": (0, 15),
    **{f"{qos}_max_vls": (1, 15) for qos in _QOS_SETS},
    **{f"{qos}_high_limit": (-1, 255) for qos in _QOS_SETS},
}

# Keys the role writes from its own variables; ib_subnet_manager_extra_options is merged
# last and would override them behind the role's checks (a priority the duplicate check
# never saw, a GUID other than the bound port).
MANAGED_KEYS = {
    "guid": "ib_subnet_manager_port_guid",
    "sm_priority": "ib_subnet_manager_priority",
    "sm_key": "ib_subnet_manager_sm_key",
    "lmc": "ib_subnet_manager_lmc",
    "sweep_interval": "ib_subnet_manager_sweep_interval",
    "routing_engine": "ib_subnet_manager_routing_engines",
    "root_guid_file": "ib_subnet_manager_root_guids",
    "cn_guid_file": "ib_subnet_manager_cn_guids",
    "log_file": "ib_subnet_manager_log_file",
    "partition_config_file": "ib_subnet_manager_partitions",
    "qos": "ib_subnet_manager_qos",
    "qos_max_vls": "ib_subnet_manager_qos_max_vls",
    "qos_high_limit": "ib_subnet_manager_qos_high_limit",
    "qos_vlarb_high": "ib_subnet_manager_qos_vlarb_high",
    "qos_vlarb_low": "ib_subnet_manager_qos_vlarb_low",
    "qos_sl2vl": "ib_subnet_manager_qos_sl2vl",
}
# Keys no variable may set: systemd runs OpenSM in the foreground (Debian's opensm@ is
# Type=simple); daemon TRUE forks, the main process exits and systemd stops the unit.
FORBIDDEN_KEYS = {
    "daemon": "systemd runs OpenSM in the foreground (opensm@.service is Type=simple); "
    "with daemon TRUE OpenSM forks and systemd stops it",
}
_VLARB_RE = re.compile(r"^(\d+):(\d+)$")


def _integer(value):
    """strtoul(value, 0) as OpenSM reads an integer option, strictly; None when not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        if text.lower().startswith(("0x", "-0x")):
            return int(text, 16)
        if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
            return int(text)
    except ValueError:
        return None
    return None


def _qos_string_error(key, value):
    """Why a QoS sl2vl/vlarb value is wrong (None when right); qos_*_sl2vl / qos_*_vlarb_*."""
    text = str(value).strip()
    if key.endswith("_sl2vl"):
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 16 or any(
            _integer(p) is None or not 0 <= _integer(p) <= 15 for p in parts
        ):
            return "must be 16 comma-separated VLs 0-15 (one per SL)"
        return None
    pairs = [p.strip() for p in text.split(",") if p.strip()]
    if not pairs or len(pairs) > 64:
        return "must be 1-64 comma-separated VL:weight pairs"
    for pair in pairs:
        match = _VLARB_RE.match(pair)
        if not match or not 0 <= int(match[1]) <= 14 or not 0 <= int(match[2]) <= 255:
            return f"has {pair!r}: each entry is VL:weight, VL 0-14, weight 0-255"
    return None


def option_errors(options, version=None, variable="ib_subnet_manager_extra_options", managed=True):
    """Messages for opensm.conf options as OpenSM would parse them; [] when all are good.

    `variable` names them in messages: a name ending in '_' is a prefix of the key
    (ib_subnet_manager_ + qos_sl2vl), else `variable.key`. With `managed`, keys the role
    writes from its own variables are refused, naming the variable to use.
    """
    errors = []
    for key, value in (options or {}).items():
        key = str(key)
        where = f"{variable}{key}" if variable.endswith("_") else f"{variable}.{key}"
        if managed and key in MANAGED_KEYS:
            errors.append(f"{where} is written by the role: set {MANAGED_KEYS[key]} instead")
            continue
        if key in FORBIDDEN_KEYS:
            errors.append(f"{where} may not be set: {FORBIDDEN_KEYS[key]}")
            continue
        if value is None or "\n" in str(value):
            errors.append(f"{where} must be one line of text; got {value!r}")
        elif key in BOOLEAN_KEYS:
            if not isinstance(value, bool) and str(value) not in ("TRUE", "FALSE"):
                errors.append(
                    f"{where} must be a boolean (true/false) or TRUE/FALSE; got {value!r} "
                    "(OpenSM reads everything but TRUE as FALSE)"
                )
        elif key in INTEGER_RANGES:
            low, high = INTEGER_RANGES[key]
            number = _integer(value)
            if number is None or not low <= number <= high:
                errors.append(f"{where} must be an integer {low}-{high}; got {value!r}")
        elif any(
            key == f"{qos}_{kind}"
            for qos in _QOS_SETS
            for kind in ("sl2vl", "vlarb_high", "vlarb_low")
        ):
            problem = _qos_string_error(key, value)
            if problem:
                errors.append(f"{where} {problem}; got {value!r}")
        elif key == "routing_engine":
            errors.extend(routing_engine_errors([value], where))
    return errors
