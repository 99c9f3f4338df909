"""opensm_options: each key parsed as opt_tbl's parser column says, then as OpenSM resets it.

Rows are read off linux-rdma/opensm opensm/osm_subnet.c at tag 3.3.23: opt_tbl's third
column (opts_parse_boolean, _charp, _uint8 ...) and osm_subn_verify_config(), which resets
values the parser took (lmc > 7, m_key_protection_level > 3, force_link_speed 8-14 or
> 15, console and part_enforce words ...). The last test runs the real opensm
(`opensm -F IN -c OUT` parses IN, verifies it and writes what it will use) and checks
that every value the role accepts is kept and every value it refuses is changed.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import parse_opensm_conf
from ansible_collections.rdma.fabric.plugins.module_utils.opensm_options import (
    input_files,
    option_errors,
    option_parser,
    option_table,
    routing_engine_errors,
    routing_engines,
)


@pytest.mark.parametrize(
    ("key", "parser"),
    [
        ("guid", "net64"),
        ("m_key_lease_period", "net16"),
        ("console", "charp"),
        ("console_port", "uint16"),
        ("part_enforce", "charp"),
        ("no_partition_enforcement", "boolean"),
        ("qos_high_limit", "int32"),
        ("qos_max_vls", "uint32"),
        ("cc_sw_cong_setting_control_map", "net32"),
        ("cc_sw_cong_setting_victim_mask", "256bit"),
        ("cc_cct", "cc_cct"),
        ("torus_config", "charp"),
        ("sm_priority", "uint8"),
    ],
)
def test_parser_column_as_in_opt_tbl(key, parser):
    assert option_parser(key, "3.3.23") == parser


def test_every_row_has_a_parser():
    assert all(option_parser(key) for key in option_table())
    assert option_parser("max_rate_enum", "3.3.24") == "uint8"
    assert option_parser("max_rate_enum", "3.3.23") is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        # YAML reads unquoted off/on as booleans; OpenSM's part_enforce is a word.
        ({"part_enforce": False}, "part_enforce must be one of both, in, out, off; got False"),
        ({"part_enforce": "none"}, "part_enforce must be one of both, in, out, off"),
        ({"console": False}, "console must be one of off, local, loopback; got False"),
        ({"console": "socket"}, "console must be one of off, local, loopback"),
        # osm_subn_verify_config resets these after parsing.
        ({"m_key_protection_level": 9}, "m_key_protection_level must be 0-3; got 9"),
        ({"force_link_speed": 200}, "force_link_speed must be 0-7 or 15; got 200"),
        ({"force_link_speed": 8}, "force_link_speed must be 0-7 or 15; got 8"),
        ({"force_link_speed_ext": 29}, "force_link_speed_ext must be 0-7 or 30-31; got 29"),
        ({"force_link_width": 32}, "force_link_width must be 0-31 or 255; got 32"),
        ({"perfmgr_sweep_time_s": 0}, "perfmgr_sweep_time_s must be 1-65535; got 0"),
        ({"max_wire_smps": "0x80000000"}, "max_wire_smps must be 0-2147483647"),
        ({"qos_ca_max_vls": 16}, "qos_ca_max_vls must be 0-15; got 16"),
        ({"qos_rtr_high_limit": 256}, "qos_rtr_high_limit must be -1-255; got 256"),
        # opensm.conf is read with fgets(line, 1023): a longer line is cut.
        ({"cc_cct": ",".join(["1:1"] * 300)}, "cc_cct makes a line of 1,207 bytes"),
    ],
)
def test_refused_as_opensm_would_change_it(options, message):
    errors = option_errors(options, "3.3.23")
    assert any(message in error for error in errors), errors


@pytest.mark.parametrize(
    "options",
    [
        {"part_enforce": "off", "console": "local"},
        {"part_enforce": "in", "console": "loopback"},
        {"qos_ca_max_vls": 0, "qos_sw0_max_vls": "0", "qos_swe_high_limit": -1},
        {"force_link_speed": 15, "force_link_speed_ext": 30, "force_link_width": 255},
        {"m_key_protection_level": 3, "perfmgr_sweep_time_s": 1},
        {"cc_cct": ",".join(["1:1"] * 128)},
    ],
)
def test_accepted_as_opensm_keeps_it(options):
    assert option_errors(options, "3.3.23") == []


# (key, value as the inventory gives it): accepted or refused, both checked against opensm.
PARITY = [
    ("part_enforce", "off"),
    ("part_enforce", "FALSE"),
    ("part_enforce", "out"),
    ("console", "local"),
    ("console", "socket"),
    ("console", "FALSE"),
    ("m_key_protection_level", "3"),
    ("m_key_protection_level", "9"),
    ("force_link_speed", "7"),
    ("force_link_speed", "15"),
    ("force_link_speed", "200"),
    ("force_link_speed_ext", "30"),
    ("force_link_speed_ext", "12"),
    ("force_link_width", "255"),
    ("force_link_width", "40"),
    ("perfmgr_sweep_time_s", "0"),
    ("perfmgr_sweep_time_s", "5"),
    ("perfmgr_max_outstanding_queries", "0"),
    ("qos_ca_max_vls", "0"),
    ("qos_ca_max_vls", "16"),
    ("qos_sw0_high_limit", "300"),
    ("qos_sw0_high_limit", "-1"),
    ("fdr10", "3"),
    ("fdr10", "2"),
    ("max_wire_smps2", "2147483648"),
    ("sm_sl", "4"),
    ("qos", "TRUE"),
]


@pytest.mark.skipif(not shutil.which("opensm"), reason="needs opensm (install-deps.sh)")
def test_the_real_opensm_keeps_what_is_accepted_and_changes_what_is_refused(tmp_path):
    # One file per round, each key once in it; qos TRUE because OpenSM verifies the
    # qos_* sets only with QoS on.
    rounds = []
    for key, value in PARITY:
        free = next((r for r in rounds if key not in r), None)
        if free is None:
            free = {"qos": "TRUE"}
            rounds.append(free)
        free[key] = value
    disagreements = []
    for index, chosen in enumerate(rounds):
        conf_in, conf_out = tmp_path / f"in{index}.conf", tmp_path / f"out{index}.conf"
        conf_in.write_text("".join(f"{k} {v}\n" for k, v in chosen.items()))
        subprocess.run(
            ["opensm", "-F", str(conf_in), "-c", str(conf_out)],
            capture_output=True,
            timeout=30,
            check=True,
        )
        written = parse_opensm_conf(conf_out.read_text())
        for key, value in chosen.items():
            kept = written.get(key) == value
            accepted = option_errors({key: value}, "3.3.23", managed=False) == []
            if kept != accepted:
                disagreements.append((key, value, written.get(key), accepted))
    assert disagreements == []


def test_sa_key_is_a_role_variable_for_every_mode():
    # The P_Key check asks the SA with sa_key; in external mode this host's
    # extra_options describe no SM at all, so the subnet's key is a variable of its own.
    errors = option_errors({"sa_key": "0x2"}, "3.3.23")
    assert errors == [
        "ib_subnet_manager_extra_options.sa_key is written by the role: "
        "set ib_subnet_manager_sa_key instead"
    ]
    from pathlib import Path

    role = Path(__file__).resolve().parents[2] / (
        "collections/ansible_collections/rdma/fabric/roles/ib_subnet_manager"
    )
    vars_text = (role / "vars/main.yml").read_text()
    line = next(x for x in vars_text.splitlines() if x.startswith("__ib_subnet_manager_sa_key:"))
    assert "ib_subnet_manager_sa_key" in line.split(":", 1)[1]
    assert "extra_options" not in line


DOCA_OPENSM = "5.21.0.MLNX20241126.2ab8e7a6-0.1.2412"


@pytest.mark.parametrize("engines", [["ar_updn"], ["ar_ftree", "updn"], ["pqft"], ["dfp2"]])
def test_nvidia_engines_for_nvidias_opensm_only(engines):
    # NVIDIA's OpenSM (DOCA/MLNX_OFED 5.x) defaults to ar_updn (MLNXSM release notes
    # v5.10: "Changed the default routing engine to be ar_updn instead of minhop").
    assert routing_engine_errors(engines, version=DOCA_OPENSM) == []
    assert routing_engine_errors(engines, version="5") == []  # doca source, not installed yet
    assert routing_engine_errors(engines, version="3.3.23-2+b1") != []


def test_engine_lists_are_data_per_source():
    assert "ar_updn" in routing_engines(DOCA_OPENSM)
    assert "ar_updn" not in routing_engines("3.3.24")
    assert set(routing_engines("3.3.23")) <= set(routing_engines(DOCA_OPENSM))


@pytest.mark.parametrize(
    "key",
    ["qos_policy_file", "guid_routing_order_file", "node_name_map_name", "torus_config"],
)
def test_input_files_must_be_absolute(key):
    # OpenSM opens them as given; under systemd the working directory is /.
    errors = option_errors({key: "conf/x.conf"}, "3.3.23")
    assert errors == [
        f"ib_subnet_manager_extra_options.{key} must be an absolute path "
        "(a file OpenSM reads); got 'conf/x.conf'"
    ]
    assert option_errors({key: "/etc/opensm/x.conf"}, "3.3.23") == []
    assert option_errors({key: "(null)"}, "3.3.23") == []


def test_input_files_are_listed_for_the_host_check():
    options = {
        "qos_policy_file": "/etc/opensm/qos-policy.conf",
        "io_guid_file": "(null)",
        "force_log_flush": True,
        # Files OpenSM writes need not exist.
        "event_db_dump_file": "/var/log/opensm-db.dump",
        "dump_files_dir": "/var/log/opensm",
    }
    assert input_files(options) == {"qos_policy_file": "/etc/opensm/qos-policy.conf"}
