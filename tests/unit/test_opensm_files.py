"""module_utils/opensm.py: opensm.conf reading, SIGHUP-or-restart, partitions.conf.

The opensm.conf text is shaped like what `opensm -c` writes (key value, '#' comments);
the reloadable keys follow can_update in OpenSM's option table (opensm/osm_subnet.c).
The partitions follow partitions.conf(5) of OpenSM 3.3.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    expected_pkeys,
    normalize_partitions,
    parse_opensm_conf,
    partition_errors,
    partition_line,
    restart_keys,
)

CONF = """\
#
# DEVICE ATTRIBUTES OPTIONS
#
# The port GUID on which the OpenSM is running
guid 0x0002c90000001011

# SM priority used for deciding who is the master
# Range goes from 0 (lowest priority) to 15 (highest).
sm_priority 15

routing_engine updn
root_guid_file /etc/opensm/root-guids.conf
log_file /var/log/opensm.log
qos FALSE
"""

DEFAULT = {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]}


def test_parse_opensm_conf():
    assert parse_opensm_conf(CONF) == {
        "guid": "0x0002c90000001011",
        "sm_priority": "15",
        "routing_engine": "updn",
        "root_guid_file": "/etc/opensm/root-guids.conf",
        "log_file": "/var/log/opensm.log",
        "qos": "FALSE",
    }
    assert parse_opensm_conf("") == {}


@pytest.mark.parametrize(
    ("change", "restart"),
    [
        ({"sm_priority": 7}, []),
        ({"sweep_interval": "5", "qos": "TRUE", "qos_sl2vl": "0,1", "sm_key": "0x2"}, []),
        # can_update 0 in OpenSM 3.3.23's opt_tbl: a SIGHUP never applies these.
        ({"lmc": 1}, ["lmc"]),
        (
            {"subnet_prefix": "0xfe80000000000001", "lmc_esp0": "TRUE"},
            ["lmc_esp0", "subnet_prefix"],
        ),
        (
            {"transaction_timeout": 300, "transaction_retries": 5},
            ["transaction_retries", "transaction_timeout"],
        ),
        # A key OpenSM does not know: restart, to be safe (validation refuses it first).
        ({"no_such_key": "1"}, ["no_such_key"]),
        ({"routing_engine": "ftree"}, ["routing_engine"]),
        ({"guid": "0x0002c90000001021", "sm_priority": 3}, ["guid"]),
        (
            {"log_file": "/var/log/osm.log", "cn_guid_file": "/etc/opensm/cn.conf"},
            ["cn_guid_file", "log_file"],
        ),
    ],
)
def test_restart_keys(change, restart):
    old = parse_opensm_conf(CONF)
    assert restart_keys(old, {**old, **change}) == restart


def test_removed_key_restarts_even_when_sighup_reads_it():
    # SIGHUP re-reads only the lines present: a removed sm_priority / qos_sl2vl would
    # keep its old value until a restart.
    old = {**parse_opensm_conf(CONF), "qos_sl2vl": "0,1", "sweep_interval": "5"}
    new = {k: v for k, v in old.items() if k not in ("qos_sl2vl", "sweep_interval")}
    assert restart_keys(old, new) == ["qos_sl2vl", "sweep_interval"]


def test_max_rate_enum_reloads_from_3_3_24_only():
    old = parse_opensm_conf(CONF)
    new = {**old, "max_rate_enum": "21"}
    assert restart_keys(old, new, "3.3.24-1") == []
    assert restart_keys(old, new, "3.3.23-2+b1") == ["max_rate_enum"]


def test_no_file_means_restart_everything_unreloadable():
    new = parse_opensm_conf(CONF)
    assert restart_keys({}, new) == ["guid", "log_file", "root_guid_file", "routing_engine"]


def test_unchanged_values_of_other_types_are_not_changes():
    assert (
        restart_keys({"sm_priority": "15", "guid": "0x1"}, {"sm_priority": 15, "guid": "0x1"}) == []
    )


def test_good_partitions_render():
    parts = [
        DEFAULT,
        {
            "name": "storage",
            "pkey": "0x0010",
            "ipoib": True,
            "mtu": 4,
            "rate": 7,
            "members": [
                "0x0002c90000001011=full",
                {"guid": "0x2c90000001041", "membership": "limited"},
            ],
        },
        {"name": "compute", "pkey": 0x20, "defmember": "full", "members": ["ALL_CAS", "SELF=both"]},
    ]
    assert partition_errors(parts) == []
    lines = [partition_line(r) for r in normalize_partitions(parts)]
    assert lines == [
        "Default=0x7fff, ipoib : ALL=full ;",
        "storage=0x0010, ipoib, mtu=4, rate=7 : "
        "0x0002c90000001011=full, 0x0002c90000001041=limited ;",
        "compute=0x0020, defmember=full : ALL_CAS, SELF=both ;",
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"name": "big", "pkey": 0x8000, "members": ["ALL"]}, "(big): pkey must be 0x0001-0x7fff"),
        ({"name": "big", "pkey": 0x8000, "members": ["ALL"]}, "got 0x8000"),
        (
            {"name": "zero", "pkey": "0x0000", "members": ["ALL"]},
            "(zero): pkey must be 0x0001-0x7fff",
        ),
        ({"name": "word", "pkey": "storage", "members": ["ALL"]}, "got 'storage'"),
        (
            {"name": "dup", "pkey": 0x7FFF, "members": ["ALL"]},
            "duplicate pkey 0x7fff, already used by Default",
        ),
        ({"name": "Default", "pkey": 0x10, "members": ["ALL"]}, "name Default is used twice"),
        (
            {"name": "m", "pkey": 0x10, "members": ["ALL=owner"]},
            "membership of ALL must be one of full, limited, both",
        ),
        ({"name": "m", "pkey": 0x10, "members": ["node7"]}, "member 'node7' is not a port GUID"),
        ({"name": "m", "pkey": 0x10, "members": []}, "members must be a non-empty list"),
        (
            {"name": "m", "pkey": 0x10, "ipoib": "no", "members": ["ALL"]},
            "(m): ipoib must be true or false; got 'no'",
        ),
        (
            {"name": "rails", "pkey": 0x10, "members": ["0x0002c90000001041", "0x0=full"]},
            "(rails): member '0x0' is GUID 0, which OpenSM refuses ('bad PortGUID')",
        ),
        (
            {"name": "rails", "pkey": 0x10, "members": [{"guid": 0, "membership": "full"}]},
            "(rails): member 0 is GUID 0",
        ),
        (
            {"name": "rails", "pkey": 0x10, "members": ["0xffffffffffffffff"]},
            "member '0xffffffffffffffff' is the all-ones GUID",
        ),
        (
            {"name": "rails", "pkey": 0x10, "members": ["0002000000001003=full"]},
            "member '0002000000001003' is ambiguous: OpenSM reads digits with a leading 0 as octal",
        ),
        (
            {"name": "rails", "pkey": 0x10, "members": ["18446744073709551616"]},
            "member '18446744073709551616' is not a port GUID",
        ),
        ({"name": "m", "pkey": 0x10, "mtu": 6, "members": ["ALL"]}, "mtu must be an integer 1-5"),
        ({"name": "bad name", "pkey": 0x10, "members": ["ALL"]}, "name must be letters"),
        (
            {"name": "r", "pkey": 0x10, "rate": 25, "members": ["ALL"]},
            "(r): rate must be an integer 2-24 (IB_MAX_RATE of OpenSM upstream); got 25",
        ),
    ],
)
def test_bad_partitions(bad, message):
    errors = partition_errors([DEFAULT, bad])
    assert any(message in e for e in errors), errors


@pytest.mark.parametrize(
    ("version", "rate", "good"),
    [
        # include/iba/ib_types.h IB_MAX_RATE: 22 (600 Gb/s) in 3.3.23 (Debian 12 and 13).
        ("3.3.23-2+b1", 22, True),
        ("3.3.23-3.1", 23, False),
        ("3.3.23-3.1", 24, False),
        # 3.3.24 adds 23 (800 Gb/s) and 24 (1200 Gb/s).
        ("3.3.24-1", 23, True),
        ("3.3.24-1", 24, True),
        ("3.3.24-1", 25, False),
        ("3.3.23", 1, False),
    ],
)
def test_partition_rate_follows_the_opensm_version(version, rate, good):
    part = {"name": "fast", "pkey": 0x10, "rate": rate, "members": ["ALL"]}
    errors = partition_errors([DEFAULT, part], version)
    assert (errors == []) is good, errors
    if not good:
        assert "ib_subnet_manager_partitions[1] (fast): rate must be an integer 2-" in errors[0]
        assert f"of OpenSM {version}); got {rate}" in errors[0]


def test_ipoib_partitions_get_the_default_mtu_unless_set():
    parts = [DEFAULT, {"name": "s", "pkey": 0x10, "ipoib": True, "mtu": 4, "members": ["ALL"]}]
    parts.append({"name": "c", "pkey": 0x20, "members": ["ALL"]})
    lines = [partition_line(r) for r in normalize_partitions(parts, 5)]
    assert lines == [
        "Default=0x7fff, ipoib, mtu=5 : ALL=full ;",
        "s=0x0010, ipoib, mtu=4 : ALL ;",
        "c=0x0020 : ALL ;",
    ]
    line = partition_line(normalize_partitions([DEFAULT])[0])
    assert line == "Default=0x7fff, ipoib : ALL=full ;"


def test_the_default_partition_is_required():
    errors = partition_errors([{"name": "storage", "pkey": 0x10, "members": ["ALL"]}])
    assert errors == [
        "ib_subnet_manager_partitions has no default partition (pkey 0x7fff), which every port "
        "needs for SA access: add {name: Default, pkey: 0x7fff, members: [ALL=full]}"
    ]


def test_expected_pkeys_per_port():
    records = normalize_partitions(
        [
            DEFAULT,
            {
                "name": "storage",
                "pkey": 0x10,
                "members": ["0x0002c90000001011=full", "0x0002c90000001041"],
            },
            {"name": "compute", "pkey": 0x20, "members": ["ALL_CAS=full"]},
            {"name": "sm", "pkey": 0x30, "defmember": "full", "members": ["SELF"]},
        ]
    )
    master = "0x0002c90000001011"
    # The master's own port: full in storage, compute and (as SELF) sm.
    assert expected_pkeys(records, master, master) == [0x8010, 0x8020, 0x8030, 0xFFFF]
    # Hca4: a limited member of storage (no membership given and no defmember).
    assert expected_pkeys(records, "0x2c90000001041", master) == [0x0010, 0x8020, 0xFFFF]
    # A switch port: not in ALL_CAS partitions.
    assert expected_pkeys(records, "0x0002c90000000a01", master, "Switch") == [0xFFFF]


def test_long_partition_goes_on_continuation_lines_under_opensm_line_size():
    # OpenSM: fgets(line, sizeof(line) - 1) into char line[4096] (osm_prtn_config.c).
    guids = [f"0x0002c9000010{i:04x}" for i in range(1024)]
    part = {"name": "rails", "pkey": 0x10, "ipoib": True, "members": [f"{g}=full" for g in guids]}
    text = partition_line(normalize_partitions([part], 5)[0])
    lines = text.split("\n")
    assert lines[0] == "rails=0x0010, ipoib, mtu=5 :"
    assert all(len(line.encode()) + 1 < 4094 for line in lines)
    assert all(line.endswith(",") for line in lines[1:-1]) and lines[-1].endswith(" ;")
    body = " ".join(lines[1:]).rstrip(" ;")
    assert [m.strip() for m in body.split(",") if m.strip()] == [f"{g}=full" for g in guids]


def test_short_partition_stays_on_one_line():
    part = {"name": "p", "pkey": 0x10, "members": [f"0x{i:016x}=full" for i in range(1, 100)]}
    assert "\n" not in partition_line(normalize_partitions([part])[0])


@pytest.mark.parametrize(
    "given, guid",
    [
        # strtoull(name, &end, 0) as OpenSM's partition_add_port reads a member.
        ("1234", "0x00000000000004d2"),
        ("783951790608391=full", "0x0002c90000001007"),
        (783951790608391, "0x0002c90000001007"),  # a YAML integer
        ({"guid": 0x0002C90000001007, "membership": "full"}, "0x0002c90000001007"),
        ("0x2C90000001007", "0x0002c90000001007"),
        ("0002:c900:0000:1007", "0x0002c90000001007"),
        ("2c90000001007", "0x0002c90000001007"),
    ],
)
def test_member_guids_read_as_opensm_reads_them(given, guid):
    part = {"name": "p", "pkey": 0x10, "members": [given]}
    assert partition_errors([DEFAULT, part]) == []
    assert normalize_partitions([part])[0]["members"][0]["guid"] == guid
