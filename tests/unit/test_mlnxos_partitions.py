"""module_utils/mlnxos_partitions.py: the partitions of an MLNX-OS switch SM, from the
records ib_subnet_manager writes OpenSM's partitions.conf from.

Running configurations are shaped as the MLNX-OS stand-in prints them (the commands,
indented, under "##" comments): what a real switch prints is still to be confirmed.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.mlnxos_partitions import (
    commands,
    parse_running,
    switch_errors,
    wanted_lines,
)
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    normalize_partitions,
    partition_line,
)

PARTITIONS = [
    {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
    {
        "name": "storage",
        "pkey": "0x0010",
        "defmember": "limited",
        "members": ["0x0002c90300000001=full", "0x0002c90300000002"],
    },
]
RECORDS = normalize_partitions(PARTITIONS, ipoib_mtu=5)
LINES = [
    "ib partition Default pkey 0x7fff",
    "ib partition Default ipoib",
    "ib partition Default mtu 4K",
    "ib partition Default member ALL type full",
    "ib partition storage pkey 0x0010",
    "ib partition storage defmember limited",
    "ib partition storage member 00:02:c9:03:00:00:00:01 type full",
    "ib partition storage member 00:02:c9:03:00:00:00:02 type limited",
]


def running(lines):
    return "##\n## Partitions configuration\n##\n" + "".join(f"   {line}\n" for line in lines)


def test_the_same_records_as_opensm_partitions_conf():
    assert partition_line(RECORDS[1]) == (
        "storage=0x0010, defmember=limited : 0x0002c90300000001=full, 0x0002c90300000002 ;"
    )
    assert wanted_lines(RECORDS) == LINES


def test_parse_running_normalizes_the_forms():
    text = running(
        [
            "ib partition storage pkey 0x10",
            "ib partition storage member 00:02:C9:03:00:00:00:01 type FULL force",
        ]
    )
    assert parse_running(text) == {
        "storage": {
            "pkey": 0x10,
            "defmember": None,
            "ipoib": False,
            "mtu": None,
            "members": {"00:02:c9:03:00:00:00:01": "full"},
        }
    }


def test_everything_missing_then_nothing():
    assert commands(RECORDS, "") == LINES
    assert commands(RECORDS, running(LINES)) == []


def test_changes_and_removals():
    have = [
        "ib partition Default pkey 0x7fff",
        "ib partition Default ipoib",
        "ib partition Default mtu 2K",
        "ib partition Default member ALL type full",
        "ib partition Default member 00:00:00:00:00:00:00:09 type full",
        "ib partition storage pkey 0x0010",
        "ib partition storage ipoib",
        "ib partition storage member 00:02:c9:03:00:00:00:01 type limited",
        "ib partition storage member 00:02:c9:03:00:00:00:03 type full",
        "ib partition old pkey 0x0020",
    ]
    assert commands(RECORDS, running(have)) == [
        "ib partition Default mtu 4K",
        "ib partition storage defmember limited",
        "no ib partition storage ipoib",
        "ib partition storage member 00:02:c9:03:00:00:00:01 type full",
        "ib partition storage member 00:02:c9:03:00:00:00:02 type limited",
        "no ib partition storage member 00:02:c9:03:00:00:00:03",
        "no ib partition old",
    ]


@pytest.mark.parametrize(
    ("partition", "message"),
    [
        ({"rate": 7}, "rate has no documented MLNX-OS partition command"),
        ({"sl": 1}, "sl has no documented MLNX-OS partition command"),
        ({"members": ["SELF=full"]}, "member SELF has no MLNX-OS form"),
        ({"members": ["ALL=both"]}, "membership of ALL on a switch SM must be full or limited"),
        ({"defmember": "both"}, "defmember on a switch SM must be full or limited"),
    ],
)
def test_what_a_switch_sm_cannot_take(partition, message):
    records = normalize_partitions([{"name": "p", "pkey": 2, "members": ["ALL"]} | partition])
    errors = switch_errors(records)
    assert len(errors) == 1 and message in errors[0]
    assert errors[0].startswith("ib_subnet_manager_partitions[0] (p)")
    assert switch_errors(RECORDS) == []
