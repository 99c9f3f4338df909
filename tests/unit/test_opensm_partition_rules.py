"""Partitions and inventory GUIDs as OpenSM 3.3.23 reads them (osm_prtn_config.c, cl_nodenamemap.c).

- A partition's sl is overridden to 0 when QoS is off (osm_prtn_config.c,
  partition_create: "Overriding SL ... as QoS is not enabled").
- Membership both is full only unless allow_both_pkeys is TRUE (partition_add_port /
  partition_add_all add the limited entry only with allow_both_pkeys).
- mtu/rate/sl are integers: YAML true is an int to Python, not to OpenSM's strtoul.
- Root/CN GUID files are read with strtoull(p, &e, 0) (complib/cl_nodenamemap.c
  parse_node_map_wrap), like partition members: bare digits are decimal there too, so
  every GUID the inventory gives is read by one rule (opensm.member_guid).
- An unquoted GUID with a leading 0 and no 8/9 (0002100000001003) is a YAML 1.1 octal
  integer: it arrives as a number below 2**40, which no EUI-64 port GUID is (its top 24
  bits are the vendor's OUI); such an integer is refused.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    guid_errors,
    inventory_guid,
    partition_errors,
)

DEFAULT = {"name": "Default", "pkey": 0x7FFF, "members": ["ALL=full"]}


def errors_of(part, **kwargs):
    return partition_errors([DEFAULT, part], "3.3.23", **kwargs)


def test_sl_without_qos_is_refused():
    part = {"name": "storage", "pkey": 0x10, "sl": 3, "members": ["ALL=full"]}
    errors = errors_of(part, qos=False)
    assert any("sl 3 needs ib_subnet_manager_qos: true" in e for e in errors), errors
    assert errors_of(part, qos=True) == []
    assert errors_of(dict(part, sl=0), qos=False) == []


@pytest.mark.parametrize(
    "part",
    [
        {"name": "s", "pkey": 0x10, "members": ["0x0002c90000001021=both"]},
        {"name": "s", "pkey": 0x10, "defmember": "both", "members": ["0x0002c90000001021"]},
        {"name": "s", "pkey": 0x10, "members": [{"guid": "ALL", "membership": "both"}]},
    ],
)
def test_both_needs_allow_both_pkeys(part):
    errors = errors_of(part, allow_both_pkeys=False)
    assert any("allow_both_pkeys" in e and "full only" in e for e in errors), errors
    assert errors_of(part, allow_both_pkeys=True) == []


@pytest.mark.parametrize("key", ["mtu", "rate", "sl"])
def test_boolean_is_no_number(key):
    part = {"name": "s", "pkey": 0x10, key: True, "members": ["ALL"]}
    errors = errors_of(part, qos=True)
    assert any(f"{key} must be an integer" in e and "True" in e for e in errors), errors


@pytest.mark.parametrize(
    ("given", "guid"),
    [
        ("0x0002c90000001003", "0x0002c90000001003"),
        ("0002:c900:0000:1003", "0x0002c90000001003"),
        ("2c90000001003", "0x0002c90000001003"),
        # Bare digits: decimal, as strtoull(..., 0) reads them (root_guid_file too).
        ("775978479931395", "0x0002c1bf91a65003"),
        (0x0002C90000001003, "0x0002c90000001003"),
    ],
)
def test_inventory_guids_read_one_way(given, guid):
    assert inventory_guid(given) == guid
    assert guid_errors([given], "ib_subnet_manager_root_guids") == []


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("0002100000001003", "is ambiguous: OpenSM reads digits with a leading 0 as octal"),
        (0o0002100000001003, "is a YAML integer below 2**40"),
        ("0x0", "GUID 0"),
        ("zz", "'zz' is not a GUID"),
    ],
)
def test_bad_inventory_guids_are_named(given, message):
    errors = guid_errors([given], "ib_subnet_manager_root_guids")
    assert len(errors) == 1 and message in errors[0], errors
    assert errors[0].startswith("ib_subnet_manager_root_guids: ")


def test_octal_yaml_member_is_refused():
    part = {"name": "s", "pkey": 0x10, "members": [0o0002100000001003]}
    assert any("is a YAML integer below 2**40" in e for e in errors_of(part))


def test_the_roles_guid_filter_reads_as_opensm_and_partitions_do():
    # Root/CN GUID files, the port GUID and sm_key go through the ib_guid filter; a bare
    # number read as hex there but decimal in partitions named two ports for one text.
    from ansible_collections.rdma.fabric.plugins.filter.ib_guid import FilterModule

    ib_guid = FilterModule().filters()["ib_guid"]
    for text in ("775978479931395", "0x0002c90000001003", "2c90000001003", "0002:c900:0000:1003"):
        assert ib_guid(text) == inventory_guid(text)
    assert ib_guid("0002100000001003") is None
