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

# (key, can_update, parser) in opt_tbl order, tag 3.3.23. The parser is opt_tbl's
# opts_parse_<parser> (how OpenSM reads the value; see option_errors).
_TABLE_3_3_23 = (
    ("guid", False, "net64"),
    ("m_key", True, "net64"),
    ("sm_key", True, "net64"),
    ("sa_key", True, "net64"),
    ("subnet_prefix", False, "net64"),
    ("m_key_lease_period", True, "net16"),
    ("m_key_protection_level", True, "uint8"),
    ("m_key_lookup", True, "boolean"),
    ("sweep_interval", True, "uint32"),
    ("max_wire_smps", True, "uint32"),
    ("max_wire_smps2", True, "uint32"),
    ("max_smps_timeout", True, "uint32"),
    ("console", False, "charp"),
    ("console_port", False, "uint16"),
    ("transaction_timeout", False, "uint32"),
    ("transaction_retries", False, "uint32"),
    ("long_transaction_timeout", False, "uint32"),
    ("max_msg_fifo_timeout", True, "uint32"),
    ("sm_priority", True, "uint8"),
    ("lmc", False, "uint8"),
    ("lmc_esp0", False, "boolean"),
    ("max_op_vls", True, "uint8"),
    ("force_link_speed", True, "uint8"),
    ("force_link_speed_ext", True, "uint8"),
    ("force_link_width", True, "uint8"),
    ("fdr10", True, "uint8"),
    ("reassign_lids", True, "boolean"),
    ("ignore_other_sm", True, "boolean"),
    ("single_thread", False, "boolean"),
    ("disable_multicast", True, "boolean"),
    ("subnet_timeout", True, "uint8"),
    ("packet_life_time", True, "uint8"),
    ("vl_stall_count", True, "uint8"),
    ("leaf_vl_stall_count", True, "uint8"),
    ("head_of_queue_lifetime", True, "uint8"),
    ("leaf_head_of_queue_lifetime", True, "uint8"),
    ("local_phy_errors_threshold", True, "uint8"),
    ("overrun_errors_threshold", True, "uint8"),
    ("use_mfttop", True, "boolean"),
    ("sminfo_polling_timeout", True, "uint32"),
    ("polling_retry_number", True, "uint32"),
    ("force_heavy_sweep", True, "boolean"),
    ("port_prof_ignore_file", False, "charp"),
    ("hop_weights_file", False, "charp"),
    ("dimn_ports_file", False, "charp"),
    ("port_search_ordering_file", False, "charp"),
    ("port_profile_switch_nodes", True, "boolean"),
    ("sweep_on_trap", True, "boolean"),
    ("routing_engine", False, "charp"),
    ("avoid_throttled_links", False, "boolean"),
    ("connect_roots", True, "boolean"),
    ("use_ucast_cache", False, "boolean"),
    ("log_file", False, "charp"),
    ("log_max_size", True, "uint32"),
    ("log_flags", True, "uint8"),
    ("force_log_flush", True, "boolean"),
    ("accum_log_file", True, "boolean"),
    ("partition_config_file", False, "charp"),
    ("no_partition_enforcement", True, "boolean"),
    ("part_enforce", True, "charp"),
    ("allow_both_pkeys", False, "boolean"),
    ("keep_pkey_indexes", True, "boolean"),
    ("sm_assigned_guid", True, "uint8"),
    ("qos", True, "boolean"),
    ("qos_policy_file", False, "charp"),
    ("suppress_sl2vl_mad_status_errors", True, "boolean"),
    ("dump_files_dir", False, "charp"),
    ("lid_matrix_dump_file", False, "charp"),
    ("lfts_file", False, "charp"),
    ("root_guid_file", False, "charp"),
    ("cn_guid_file", False, "charp"),
    ("io_guid_file", False, "charp"),
    ("port_shifting", True, "boolean"),
    ("scatter_ports", True, "uint32"),
    ("max_reverse_hops", False, "uint16"),
    ("ids_guid_file", False, "charp"),
    ("guid_routing_order_file", False, "charp"),
    ("guid_routing_order_no_scatter", False, "boolean"),
    ("sa_db_file", False, "charp"),
    ("sa_db_dump", True, "boolean"),
    ("torus_config", True, "charp"),
    ("do_mesh_analysis", True, "boolean"),
    ("exit_on_fatal", True, "boolean"),
    ("honor_guid2lid_file", True, "boolean"),
    ("daemon", False, "boolean"),
    ("sm_inactive", True, "boolean"),
    ("babbling_port_policy", True, "boolean"),
    ("drop_event_subscriptions", True, "boolean"),
    ("ipoib_mcgroup_creation_validation", True, "boolean"),
    ("mcgroup_join_validation", True, "boolean"),
    ("use_original_extended_sa_rates_only", True, "boolean"),
    ("use_optimized_slvl", True, "boolean"),
    ("fsync_high_avail_files", True, "boolean"),
    ("perfmgr", False, "boolean"),
    ("perfmgr_redir", False, "boolean"),
    ("perfmgr_sweep_time_s", False, "uint16"),
    ("perfmgr_max_outstanding_queries", False, "uint32"),
    ("perfmgr_ignore_cas", False, "boolean"),
    ("event_db_dump_file", False, "charp"),
    ("perfmgr_rm_nodes", False, "boolean"),
    ("perfmgr_log_errors", False, "boolean"),
    ("perfmgr_query_cpi", False, "boolean"),
    ("perfmgr_xmit_wait_log", False, "boolean"),
    ("perfmgr_xmit_wait_threshold", False, "uint32"),
    ("event_plugin_name", False, "charp"),
    ("event_plugin_options", False, "charp"),
    ("node_name_map_name", False, "charp"),
    ("qos_max_vls", True, "uint32"),
    ("qos_high_limit", True, "int32"),
    ("qos_vlarb_high", True, "charp"),
    ("qos_vlarb_low", True, "charp"),
    ("qos_sl2vl", True, "charp"),
    ("qos_ca_max_vls", True, "uint32"),
    ("qos_ca_high_limit", True, "int32"),
    ("qos_ca_vlarb_high", True, "charp"),
    ("qos_ca_vlarb_low", True, "charp"),
    ("qos_ca_sl2vl", True, "charp"),
    ("qos_sw0_max_vls", True, "uint32"),
    ("qos_sw0_high_limit", True, "int32"),
    ("qos_sw0_vlarb_high", True, "charp"),
    ("qos_sw0_vlarb_low", True, "charp"),
    ("qos_sw0_sl2vl", True, "charp"),
    ("qos_swe_max_vls", True, "uint32"),
    ("qos_swe_high_limit", True, "int32"),
    ("qos_swe_vlarb_high", True, "charp"),
    ("qos_swe_vlarb_low", True, "charp"),
    ("qos_swe_sl2vl", True, "charp"),
    ("qos_rtr_max_vls", True, "uint32"),
    ("qos_rtr_high_limit", True, "int32"),
    ("qos_rtr_vlarb_high", True, "charp"),
    ("qos_rtr_vlarb_low", True, "charp"),
    ("qos_rtr_sl2vl", True, "charp"),
    ("congestion_control", True, "boolean"),
    ("cc_key", False, "net64"),
    ("cc_max_outstanding_mads", False, "uint32"),
    ("cc_sw_cong_setting_control_map", True, "net32"),
    ("cc_sw_cong_setting_victim_mask", True, "256bit"),
    ("cc_sw_cong_setting_credit_mask", True, "256bit"),
    ("cc_sw_cong_setting_threshold", True, "uint8"),
    ("cc_sw_cong_setting_packet_size", True, "uint8"),
    ("cc_sw_cong_setting_credit_starvation_threshold", True, "uint8"),
    ("cc_sw_cong_setting_credit_starvation_return_delay", True, "cct_entry"),
    ("cc_sw_cong_setting_marking_rate", True, "net16"),
    ("cc_ca_cong_setting_port_control", True, "net16"),
    ("cc_ca_cong_setting_control_map", True, "net16"),
    ("cc_ca_cong_setting_ccti_timer", True, "ccti_timer"),
    ("cc_ca_cong_setting_ccti_increase", True, "ccti_increase"),
    ("cc_ca_cong_setting_trigger_threshold", True, "trigger_threshold"),
    ("cc_ca_cong_setting_ccti_min", True, "ccti_min"),
    ("cc_cct", True, "cc_cct"),
    ("enable_quirks", True, "boolean"),
    ("no_clients_rereg", True, "boolean"),
    ("prefix_routes_file", False, "charp"),
    ("consolidate_ipv6_snm_req", True, "boolean"),
    ("lash_start_vl", True, "uint8"),
    ("sm_sl", True, "uint8"),
    ("nue_max_num_vls", True, "uint8"),
    ("nue_include_switches", False, "boolean"),
    ("log_prefix", True, "charp"),
    ("per_module_logging_file", False, "charp"),
    ("quasi_ftree_indexing", True, "boolean"),
)
# Rows later tags add: {version: ((key, can_update, parser), ...)}.
_ADDED = {(3, 3, 24): (("max_rate_enum", True, "uint8"),)}
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
    # The major alone counts: "5" is how the role judges DOCA's OpenSM before installing it.
    major = re.match(r"^(?:\d+:)?(\d+)", str(version or "").strip())
    return major is None or int(major[1]) < 5


def _known(version):
    parsed = parse_version(version) if version else None
    if parsed is None or parsed > NEWEST:
        return NEWEST
    return parsed


def _rows(version=None):
    """{key: (can_update, parser)} for an OpenSM version; unknown or newer: the newest tag's."""
    known = _known(version)
    rows = {key: (can_update, parser) for key, can_update, parser in _TABLE_3_3_23}
    for added_in, added in sorted(_ADDED.items()):
        if known >= added_in:
            rows.update({key: (can_update, parser) for key, can_update, parser in added})
    return rows


def option_table(version=None):
    """{key: can_update} for an OpenSM version; unknown or newer: the newest tag's."""
    return {key: can_update for key, (can_update, _parser) in _rows(version).items()}


def option_parser(key, version=None):
    """opt_tbl's parser of `key` (boolean, charp, uint8 ...); None when the version lacks it."""
    row = _rows(version).get(str(key))
    return row[1] if row else None


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


# NVIDIA's OpenSM (DOCA/MLNX_OFED, 5.x) has upstream's engines and its own: ar_updn (its
# default since MLNXSM 5.10, "Changed the default routing engine to be ar_updn instead of
# minhop", release notes v5.10.0), ar_ftree (adaptive routing, FACTS.md), pqft (quasi
# fat-tree, UFM Enterprise User Manual "Network Management"), dfp and dfp2 (Dragonfly+,
# MLNXSM release notes v5.13/v5.14). {source: engines}; upstream per tag is
# static_routing_modules[] (the same at 3.3.23 and 3.3.24).
NVIDIA_ROUTING_ENGINES = ("ar_updn", "ar_ftree", "pqft", "dfp", "dfp2")


def routing_engines(version=None):
    """The engine names the OpenSM `version` knows (NVIDIA's 5.x: upstream's and its own)."""
    return ROUTING_ENGINES + (() if is_upstream(version) else NVIDIA_ROUTING_ENGINES)


def routing_engine_errors(engines, variable="ib_subnet_manager_routing_engines", version=None):
    """Messages for a routing engine chain (a list; entries may be comma-separated)."""
    known = routing_engines(version)
    # OpenSM splits routing_engine on ", \t\n" (osm_opensm.c, strtok_r): "updn ftree"
    # is the chain updn, ftree.
    names = [n for entry in engines or [] for n in re.split(r"[,\s]+", str(entry)) if n]
    errors = [
        f"{variable}: {name!r} is not a routing engine of OpenSM {version or 'upstream'}; "
        f"known: {', '.join(known)} (and {NO_FALLBACK})"
        for name in names
        if name not in known and name != NO_FALLBACK
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
# maximum (int32: strtol); charp keys take the text. The other parsers (256bit masks,
# the cc_* congestion entries) are left to OpenSM, within the line length.
PARSER_RANGES = {
    "uint8": (0, 0xFF),
    "uint16": (0, 0xFFFF),
    "net16": (0, 0xFFFF),
    "uint32": (0, 0xFFFFFFFF),
    "net32": (0, 0xFFFFFFFF),
    "net64": (0, (1 << 64) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
}
# Then osm_subn_verify_config() resets what it finds out of these (3.3.23, with the
# constants of include/iba/ib_types.h): lmc > 7; sm_priority > 15; fdr10 > 2;
# m_key_protection_level > 3 (to 2); force_link_speed other than 0-7 (the 2.5/5/10 bits,
# IB_LINK_SPEED_2_5_5_OR_10) or 15 (IB_LINK_SPEED_SET_LSS); force_link_speed_ext other
# than 0-7, 30 (disable) or 31 (SET_LSES); force_link_width other than 0-31 or 255
# (SET_LWS); max_wire_smps/max_wire_smps2 > 0x7FFFFFFF; perfmgr_sweep_time_s and
# perfmgr_max_outstanding_queries 0; with qos TRUE, qos_*_max_vls > 15 (0 is the default)
# and qos_*_high_limit > 255 (below 0 is -1, not set). sm_sl and lash_start_vl are SLs/VLs
# (IBA: 0-15). Each entry: the allowed (low, high) spans.
_QOS_SETS = ("qos", "qos_ca", "qos_sw0", "qos_swe", "qos_rtr")
VERIFIED_RANGES = {
    "lmc": ((0, 7),),
    "sm_priority": ((0, 15),),
    "fdr10": ((0, 2),),
    "m_key_protection_level": ((0, 3),),
    "force_link_speed": ((0, 7), (15, 15)),
    "force_link_speed_ext": ((0, 7), (30, 31)),
    "force_link_width": ((0, 31), (255, 255)),
    "max_wire_smps": ((0, 0x7FFFFFFF),),
    "max_wire_smps2": ((0, 0x7FFFFFFF),),
    "perfmgr_sweep_time_s": ((1, 0xFFFF),),
    "perfmgr_max_outstanding_queries": ((1, 0xFFFFFFFF),),
    "sm_sl": ((0, 15),),
    "lash_start_vl": ((0, 15),),
    **{f"{qos}_max_vls": ((0, 15),) for qos in _QOS_SETS},
    **{f"{qos}_high_limit": ((-1, 255),) for qos in _QOS_SETS},
}
# charp keys whose text osm_subn_verify_config() checks, with the words it keeps (others
# become the default: part_enforce both, console off). console's socket and loopback
# exist only with ENABLE_OSM_CONSOLE_SOCKET/_LOOPBACK: Debian's 3.3.23 has loopback
# (`opensm --help`: "--console, -q [off|local|loopback]"), a socket console is off.
# The first word is the default OpenSM falls back to.
TEXT_WORDS = {
    "part_enforce": ("both", "in", "out", "off"),
    "console": ("off", "local", "loopback"),
}
# charp keys naming files OpenSM reads (opensm(8): -M/-U/-S/-X/-m/-G "the file from where
# ... will be loaded", the QoS policy, port profile/ordering files, the node name map,
# prefix routes, per-module logging, torus-2QoS.conf); the role's own (partition,
# root/CN GUID files) are written by it. OpenSM opens them as given, from / under systemd.
# Files OpenSM writes (log_file, dump_files_dir, event_db_dump_file) are not listed.
INPUT_FILE_KEYS = (
    "port_prof_ignore_file",
    "hop_weights_file",
    "dimn_ports_file",
    "port_search_ordering_file",
    "qos_policy_file",
    "lid_matrix_dump_file",
    "lfts_file",
    "io_guid_file",
    "ids_guid_file",
    "guid_routing_order_file",
    "sa_db_file",
    "torus_config",
    "node_name_map_name",
    "prefix_routes_file",
    "per_module_logging_file",
)
# "(null)" is opts_parse_charp's spelling of no file.
NO_FILE = "(null)"


def input_files(options):
    """{key: path} of the options naming a file OpenSM reads (set, not "(null)")."""
    return {
        str(key): str(value)
        for key, value in (options or {}).items()
        if str(key) in INPUT_FILE_KEYS and value is not None and str(value) != NO_FILE
    }


# osm_subn_parse_conf_file reads opensm.conf with fgets(line, 1023): a line (with its
# newline) over 1,022 bytes is cut, its rest read as a line of its own.
CONF_LINE_MAX = 1022


def _spans(spans):
    words = [f"{low}-{high}" if low != high else str(low) for low, high in spans]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


# Keys the role writes from its own variables; ib_subnet_manager_extra_options is merged
# last and would override them behind the role's checks (a priority the duplicate check
# never saw, a GUID other than the bound port).
MANAGED_KEYS = {
    "guid": "ib_subnet_manager_port_guid",
    "sm_priority": "ib_subnet_manager_priority",
    "sm_key": "ib_subnet_manager_sm_key",
    "sa_key": "ib_subnet_manager_sa_key",
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
        parser = option_parser(key, version)
        if value is None or "\n" in str(value):
            errors.append(f"{where} must be one line of text; got {value!r}")
            continue
        text = value if not isinstance(value, bool) else ("TRUE" if value else "FALSE")
        line = len(f"{key} {text}\n".encode())
        if line > CONF_LINE_MAX:
            errors.append(
                f"{where} makes a line of {line:,} bytes in opensm.conf; OpenSM reads "
                f"{CONF_LINE_MAX:,} at most (fgets) and takes the rest for another line"
            )
        elif key in INPUT_FILE_KEYS and str(value) != NO_FILE and not str(value).startswith("/"):
            errors.append(f"{where} must be an absolute path (a file OpenSM reads); got {value!r}")
        elif parser == "boolean":
            if not isinstance(value, bool) and str(value) not in ("TRUE", "FALSE"):
                errors.append(
                    f"{where} must be a boolean (true/false) or TRUE/FALSE; got {value!r} "
                    "(OpenSM reads everything but TRUE as FALSE)"
                )
        elif key in TEXT_WORDS:
            if isinstance(value, bool) or str(value) not in TEXT_WORDS[key]:
                quoting = " (YAML reads an unquoted off/on as a boolean: quote it)"
                errors.append(
                    f"{where} must be one of {', '.join(TEXT_WORDS[key])}; got {value!r}"
                    + (quoting if isinstance(value, bool) else "")
                    + f"; OpenSM replaces any other text with {TEXT_WORDS[key][0]}"
                )
        elif parser in PARSER_RANGES:
            low, high = PARSER_RANGES[parser]
            number = _integer(value)
            spans = VERIFIED_RANGES.get(key)
            if number is None or not low <= number <= high:
                errors.append(f"{where} must be an integer {low}-{high}; got {value!r}")
            elif spans and not any(a <= number <= b for a, b in spans):
                errors.append(
                    f"{where} must be {_spans(spans)}; got {value!r} (OpenSM replaces "
                    "other values with its default: osm_subn_verify_config)"
                )
        elif any(
            key == f"{qos}_{kind}"
            for qos in _QOS_SETS
            for kind in ("sl2vl", "vlarb_high", "vlarb_low")
        ):
            problem = _qos_string_error(key, value)
            if problem:
                errors.append(f"{where} {problem}; got {value!r}")
        elif key == "routing_engine":
            errors.extend(routing_engine_errors([value], where, version))
    return errors
