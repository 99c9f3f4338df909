"""SONiC lossless buffers: BUFFER_PG rows for the RoCE PG in both buffer models.

Against CONFIG_DB fixtures of a dynamic and a traditional switch (row shapes from
sonic-buildimage's buffers_config.j2 and sonic-swss buffermgr/buffermgrdyn; see
fixtures/switch_qos/README.md). Without these rows `pfc_enable` sends PAUSE with no
headroom behind it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import (
    buffer_model,
    buffer_tables,
    lookup_path,
    parse_pg_lookup,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    apply_json_patch,
    json_patch,
    render,
    sonic_tables,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "switch_qos"
PORTS = ["Ethernet0", "Ethernet4"]
LOOKUP = parse_pg_lookup((FIXTURES / "pg_profile_lookup.ini").read_text())


def configdb(model):
    return json.loads((FIXTURES / f"configdb_buffers_{model}.json").read_text())


def lengths(meters):
    return dict.fromkeys(PORTS, meters)


def test_lookup_file_parsed_like_buffermgr():
    assert LOOKUP[("100000", "40m")] == {
        "size": "41984",
        "xon": "18432",
        "xoff": "23552",
        "threshold": "0",
        "xon_offset": "2496",
    }
    assert ("100000", "100m") not in LOOKUP


def test_lookup_file_found_from_platform_and_hwsku():
    assert lookup_path(configdb("traditional")) == (
        "/usr/share/sonic/device/x86_64-standin/ACS-MSN2700/pg_profile_lookup.ini"
    )


def test_buffer_model_from_device_metadata():
    assert buffer_model(configdb("dynamic")) == "dynamic"
    assert buffer_model(configdb("traditional")) == "traditional"
    assert buffer_model({"DEVICE_METADATA": {"localhost": {}}}) == "traditional"


def test_dynamic_model_roce_on_5_replaces_the_3_4_rows():
    """The issue's case: roce_priority 5 rendered pfc_enable "5" with no headroom."""
    db = configdb("dynamic")
    tables, errors = buffer_tables(PORTS, 5, lengths(100), "dynamic", db)
    assert errors == []
    assert tables["BUFFER_PG"] == {
        "Ethernet0|5": {"profile": "NULL"},
        "Ethernet4|5": {"profile": "NULL"},
        "Ethernet0|3-4": None,
        "Ethernet4|3-4": None,
    }
    after = apply_json_patch(db, json_patch(db, tables))
    assert after["BUFFER_PG"]["Ethernet0|0"] == {"profile": "ingress_lossy_profile"}, "lossy kept"
    assert after["BUFFER_PG"]["Ethernet8|3-4"] == {"profile": "NULL"}, "other ports kept"
    assert "Ethernet0|3-4" not in after["BUFFER_PG"]
    assert json_patch(after, tables) == []


def test_traditional_model_leaves_a_missing_profile_to_buffermgr_and_removes_stale_rows():
    """`config apply-patch` refuses a new BUFFER_PROFILE (gcu_field_operation_validators):
    buffermgr writes the profile and the row of pfc_enable itself."""
    db = configdb("traditional")
    notes = []
    tables, errors = buffer_tables(PORTS, 3, lengths(40), "traditional", db, LOOKUP, notes)
    assert errors == []
    assert "Ethernet0|3" not in tables["BUFFER_PG"] and "BUFFER_PROFILE" not in tables
    assert tables["BUFFER_PG"]["Ethernet0|3-4"] is None
    assert "Ethernet0|3 (pg_lossless_100000_40m_profile)" in notes[0]
    patch = json_patch(db, tables)
    after = apply_json_patch(db, patch)
    assert after["BUFFER_PG"]["Ethernet8|3-4"] == db["BUFFER_PG"]["Ethernet8|3-4"]
    assert "pg_lossless_100000_300m_profile" in after["BUFFER_PROFILE"], "still used by Ethernet8"
    assert json_patch(after, tables) == []


def test_traditional_model_reuses_an_existing_profile():
    tables, errors = buffer_tables(PORTS, 3, lengths(300), "traditional", configdb("traditional"))
    assert errors == [] and "BUFFER_PROFILE" not in tables
    assert tables["BUFFER_PG"]["Ethernet4|3"] == {"profile": "pg_lossless_100000_300m_profile"}


def test_traditional_model_refuses_a_length_the_lookup_lacks():
    tables, errors = buffer_tables(
        PORTS, 3, lengths(100), "traditional", configdb("traditional"), LOOKUP
    )
    assert tables is None
    assert errors[0].startswith("roce_switch_qos_cable_length: 100 m at speed 100000 (Ethernet0)")


def test_rendered_rows_per_model_and_cable_length_per_port():
    policy, _ = normalize_policy({})
    per_port = {"Ethernet0": 5, "Ethernet4": 300}
    dynamic = sonic_tables(policy, PORTS, per_port, "dynamic")
    assert dynamic["BUFFER_PG"] == {f"{p}|3": {"profile": "NULL"} for p in PORTS}
    assert dynamic["CABLE_LENGTH"] == {"AZURE": {"Ethernet0": "5m", "Ethernet4": "300m"}}
    traditional = sonic_tables(policy, PORTS, per_port, "traditional")
    assert traditional["BUFFER_PG"]["Ethernet4|3"] == {
        "profile": "pg_lossless_<speed>_300m_profile"
    }
    assert "BUFFER_PG" not in sonic_tables(policy, PORTS, 40), "applied: the module's job"
    lossy, _ = normalize_policy({"pfc_priorities": []})
    assert "BUFFER_PG" not in sonic_tables(lossy, PORTS, 40, "dynamic")
    options = {"cable_lengths": {"Ethernet4": 300}, "sonic_buffer_model": "dynamic"}
    assert render(policy, "sonic", PORTS, 5, options)["CABLE_LENGTH"] == dynamic["CABLE_LENGTH"]
    assert (
        render(policy, "cumulus", ["swp1", "swp2"], 5, {"cable_lengths": {"swp2": 300}})["qos"][
            "pfc"
        ]["default-global"]["cable-length"]
        == 300
    )


@pytest.mark.parametrize("model", ["dynamic", "traditional"])
def test_lossy_rows_and_unparseable_keys_are_left_alone(model):
    db = configdb(model)
    db["BUFFER_PG"]["Ethernet0|x"] = {"profile": "NULL"}
    tables, _ = buffer_tables(["Ethernet0"], 3, {"Ethernet0": 300}, model, db, LOOKUP)
    assert set(tables["BUFFER_PG"]) == {"Ethernet0|3", "Ethernet0|3-4"}
