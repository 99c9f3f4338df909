"""module_utils/opensm_options.py: OpenSM's option table, routing engines and rates.

The table is copied from linux-rdma/opensm opensm/osm_subnet.c opt_tbl (tags 3.3.23 and
3.3.24); these rows are read off that source, so a mistyped copy fails here.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm_options import (
    MANAGED_KEYS,
    SOURCE,
    TEXT_WORDS,
    VERIFIED_RANGES,
    fabric_warnings,
    is_reloadable,
    is_upstream,
    max_rate,
    option_errors,
    option_table,
    parse_version,
    routing_engine_errors,
    unknown_options,
)


def test_source_is_named():
    assert "opensm/osm_subnet.c" in SOURCE and "3.3.23" in SOURCE


@pytest.mark.parametrize(
    ("key", "can_update"),
    [
        # The five: SIGHUP skips them (osm_subn_rescan_conf_files: !can_update).
        ("subnet_prefix", False),
        ("transaction_timeout", False),
        ("transaction_retries", False),
        ("lmc", False),
        ("lmc_esp0", False),
        ("guid", False),
        ("routing_engine", False),
        ("log_file", False),
        ("partition_config_file", False),
        ("root_guid_file", False),
        ("cn_guid_file", False),
        ("qos_policy_file", False),
        ("sm_priority", True),
        ("sm_key", True),
        ("sweep_interval", True),
        ("force_log_flush", True),
        ("qos", True),
        ("qos_sl2vl", True),
        ("qos_ca_vlarb_high", True),
        ("part_enforce", True),
        ("sm_sl", True),
        ("torus_config", True),
    ],
)
def test_can_update_as_in_opt_tbl(key, can_update):
    assert is_reloadable(key, "3.3.23-2+b1") is can_update


def test_table_sizes_per_tag():
    # 161 rows in 3.3.23 (11 of them perfmgr, ENABLE_OSM_PERF_MGR); 3.3.24 adds one.
    assert len(option_table("3.3.23")) == 161
    assert sum(option_table("3.3.23").values()) == 109
    assert set(option_table("3.3.24")) - set(option_table("3.3.23")) == {"max_rate_enum"}
    assert option_table(None) == option_table("3.3.24") == option_table("3.3.99")


def test_the_roles_own_keys_are_all_known():
    role_keys = {
        "guid", "sm_priority", "sm_key", "lmc", "sweep_interval", "routing_engine",
        "root_guid_file", "cn_guid_file", "log_file", "partition_config_file", "qos",
        "qos_max_vls", "qos_high_limit", "qos_vlarb_high", "qos_vlarb_low", "qos_sl2vl",
    }  # fmt: skip
    assert unknown_options(role_keys, "3.3.23") == []


def test_unknown_options_are_named():
    extra = {"force_log_flush": "TRUE", "sm_prio": 3, "max_rate_enum": 21}
    assert unknown_options(extra, "3.3.23-3.1") == ["max_rate_enum", "sm_prio"]
    assert unknown_options(extra, "3.3.24") == ["sm_prio"]


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("3.3.23-2+b1", (3, 3, 23)),
        ("1:3.3.24-1", (3, 3, 24)),
        ("5.21.0.MLNX20241126.2ab8e7a6-0.1.2412", (5, 21, 0)),
        ("", None),
        ("unknown", None),
    ],
)
def test_parse_version(text, version):
    assert parse_version(text) == version


def test_nvidia_opensm_is_not_upstream():
    assert is_upstream("3.3.23-2+b1") and is_upstream(None)
    assert not is_upstream("5.21.0.MLNX20241126.2ab8e7a6-0.1.2412")


def test_max_rate():
    assert (max_rate("3.3.23"), max_rate("3.3.24"), max_rate(None)) == (22, 24, 24)


@pytest.mark.parametrize(
    "engines",
    [
        ["minhop"],
        ["updn", "minhop"],
        ["ftree", "updn", "no_fallback"],
        ["updn,no_fallback"],
        # OpenSM splits on ", \t\n" (osm_opensm.c strtok_r).
        ["updn ftree"],
        ["updn, ftree\tminhop"],
        ["dnup"],
        ["torus-2QoS", "dfsssp", "sssp", "nue", "lash", "dor", "file"],
    ],
)
def test_good_engine_chains(engines):
    assert routing_engine_errors(engines) == []


@pytest.mark.parametrize(
    ("engines", "message"),
    [
        (["fat-tree"], "ib_subnet_manager_routing_engines: 'fat-tree' is not a routing engine"),
        (["updn,ar_updn"], "'ar_updn' is not a routing engine of OpenSM upstream"),
        (["UPDN"], "'UPDN' is not"),
        (["updn fat-tree"], "'fat-tree' is not"),
        (["no_fallback"], "no_fallback needs a routing engine before it"),
        ([], "ib_subnet_manager_routing_engines is empty"),
    ],
)
def test_bad_engine_chains(engines, message):
    errors = routing_engine_errors(engines)
    assert any(message in e for e in errors), errors


NDR = "400 Gb/sec (4X NDR)"
XDR = "800 Gb/sec (4X XDR)"
HDR = "200 Gb/sec (4X HDR)"


@pytest.mark.parametrize(
    ("version", "rates", "warned"),
    [
        ("3.3.23-2+b1", [HDR, NDR], True),
        ("3.3.24-1", [XDR], True),
        (None, [NDR], True),
        ("3.3.23-2+b1", [HDR, "100 Gb/sec (4X EDR)"], False),
        ("5.21.0.MLNX20241126.2ab8e7a6-0.1.2412", [NDR, XDR], False),
        ("3.3.23", [], False),
    ],
)
def test_ndr_warning(version, rates, warned):
    warnings = fabric_warnings(version, rates)
    assert bool(warnings) is warned
    if warned:
        assert "linux-rdma/opensm issue 38" in warnings[0]
        assert "rdma_stack_provider: doca" in warnings[0] and "external" in warnings[0]


@pytest.mark.parametrize(
    "options, message",
    [
        # Managed keys: the role writes them; extra_options would bypass its checks.
        (
            {"sm_priority": "20"},
            "extra_options.sm_priority is written by the role: set ib_subnet_manager_priority",
        ),
        ({"guid": "0x0002c90000001011"}, "set ib_subnet_manager_port_guid instead"),
        ({"log_file": "/tmp/x"}, "set ib_subnet_manager_log_file instead"),
        ({"routing_engine": "bogus"}, "set ib_subnet_manager_routing_engines instead"),
        ({"lmc": 9}, "set ib_subnet_manager_lmc instead"),
        ({"qos_sl2vl": "0"}, "set ib_subnet_manager_qos_sl2vl instead"),
        (
            {"daemon": "TRUE"},
            "extra_options.daemon may not be set: systemd runs OpenSM in the foreground",
        ),
        # Booleans: OpenSM's strcmp("TRUE", value).
        (
            {"force_log_flush": "true"},
            "force_log_flush must be a boolean (true/false) or TRUE/FALSE; got 'true'",
        ),
        ({"sweep_on_trap": "yes"}, "got 'yes' (OpenSM reads everything but TRUE as FALSE)"),
        # Integers within their type and OpenSM's ranges.
        ({"sm_sl": 16}, "extra_options.sm_sl must be 0-15; got 16"),
        ({"fdr10": 3}, "fdr10 must be 0-2"),
        ({"max_wire_smps": "many"}, "max_wire_smps must be an integer 0-4294967295"),
        ({"console_port": 70000}, "console_port must be an integer 0-65535"),
        ({"qos_ca_max_vls": -1}, "qos_ca_max_vls must be an integer 0-4294967295"),
        ({"cc_key": "0x1ffffffffffffffff"}, "cc_key must be an integer 0-18446744073709551615"),
        ({"transaction_timeout": True}, "transaction_timeout must be an integer"),
        # QoS tables of the other port classes.
        ({"qos_ca_sl2vl": "0,1,2"}, "qos_ca_sl2vl must be 16 comma-separated VLs 0-15"),
        (
            {"qos_sw0_vlarb_high": "0:300"},
            "qos_sw0_vlarb_high has '0:300': each entry is VL:weight",
        ),
        ({"qos_swe_vlarb_low": "15:4"}, "has '15:4'"),
        ({"perfmgr_db_file": "a\nb"}, "perfmgr_db_file must be one line of text"),
    ],
)
def test_option_errors_refuse_what_opensm_would_misread(options, message):
    errors = option_errors(options, "3.3.23")
    assert any(message in error for error in errors), errors


@pytest.mark.parametrize(
    "options",
    [
        {"force_log_flush": "TRUE", "sweep_on_trap": "FALSE", "qos_ca_high_limit": -1},
        {"force_log_flush": True, "sm_sl": 3, "cc_key": "0x00000000000000aa"},
        {"max_wire_smps": "0x20", "transaction_timeout": "200", "log_flags": 3},
        {"qos_ca_sl2vl": ",".join(["0"] * 16), "qos_ca_vlarb_high": "0:64,1:64"},
        {"perfmgr_db_file": "/var/log/opensm-db.dump", "max_rate_enum": 22},
    ],
)
def test_option_errors_accept_what_opensm_reads_as_meant(options):
    assert option_errors(options, "3.3.24") == []


def test_named_qos_tables_are_named_by_their_variable():
    errors = option_errors(
        {"qos_sl2vl": "0,1", "qos_vlarb_high": "0:4"}, variable="ib_subnet_manager_", managed=False
    )
    assert errors == [
        "ib_subnet_manager_qos_sl2vl must be 16 comma-separated VLs 0-15 (one per SL); got '0,1'"
    ]


def test_value_kinds_name_only_keys_of_the_option_table():
    table = option_table()
    assert set(TEXT_WORDS) | set(VERIFIED_RANGES) | set(MANAGED_KEYS) <= set(table)
