"""SONiC `config apply-patch` field operation validators.

sonic-utilities generic_config_updater/gcu_field_operation_validators.conf.json (branches
202205-202505) lets a patch change WRED_PROFILE only in AZURE_LOSSLESS's green thresholds
and probability (replace), BUFFER_PROFILE only in dynamic_th/xoff (replace), and PFC_WD
only field by field of existing rows; `add /WRED_PROFILE/RDMA_FABRIC`, a new BUFFER_PROFILE
and `add /PFC_WD` on a switch without the table are refused. The stand-in
(tests/standins/sonic/config) carries these facts; the rendering must pass them.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import (
    buffer_tables,
    parse_pg_lookup,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    json_patch,
    sonic_patch_problems,
    sonic_sai_wred,
    sonic_tables,
)

STANDIN = Path(__file__).resolve().parents[1] / "standins" / "sonic" / "config"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "switch_qos"
RELEASES = ["SONiC.202205.7", "SONiC.202305.4", "SONiC.202405.2", "SONiC.202505.1"]
PORTS = ["Ethernet0", "Ethernet4"]


def policy(**changes):
    filled, errors = normalize_policy(changes)
    assert not errors, errors
    return filled


def configdb(name="configdb_buffers_dynamic.json"):
    return json.loads((FIXTURES / name).read_text())


def apply_patch(tmp_path, doc, patch, release="SONiC.202405.2", asic="mellanox"):
    db = tmp_path / "config_db.json"
    db.write_text(json.dumps(doc))
    (tmp_path / "patch.json").write_text(json.dumps(patch))
    env = {
        **os.environ,
        "SONIC_STANDIN_DB": str(db),
        "SONIC_STANDIN_VERSION": release,
        "SONIC_STANDIN_ASIC": asic,
    }
    proc = subprocess.run(
        [sys.executable, str(STANDIN), "apply-patch", str(tmp_path / "patch.json")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return proc, json.loads(db.read_text())


# --- the stand-in knows the validators ------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
def test_standin_refuses_what_the_validators_refuse(tmp_path, release):
    doc = configdb()
    wred = {"ecn": "ecn_all", "green_min_threshold": "150000"}
    refused = [
        [{"op": "add", "path": "/WRED_PROFILE/RDMA_FABRIC", "value": wred}],
        [{"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/wred_green_enable", "value": "0"}],
        [
            {
                "op": "add",
                "path": "/BUFFER_PROFILE/pg_lossless_100000_40m_profile",
                "value": {"pool": "ingress_lossless_pool", "xoff": "1", "size": "1"},
            }
        ],
    ]
    for patch in refused:
        proc, after = apply_patch(tmp_path, doc, patch, release)
        assert proc.returncode == 1, (release, patch)
        assert "table is illegal- validating function" in proc.stderr
        assert after == doc
    no_wd = {k: v for k, v in doc.items() if k != "PFC_WD"}
    row = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
    proc, _ = apply_patch(
        tmp_path, no_wd, [{"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": row}}], release
    )
    assert proc.returncode == 1 and "Modification of PFC_WD table is illegal" in proc.stderr
    allowed = [
        {"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "value": "1"},
        {"op": "replace", "path": "/PFC_WD/Ethernet0/detection_time", "value": "400"},
        {"op": "remove", "path": "/PFC_WD/Ethernet4"},
    ]
    proc, after = apply_patch(tmp_path, doc, allowed, release)
    assert proc.returncode == 0, proc.stderr
    assert after["WRED_PROFILE"]["AZURE_LOSSLESS"]["green_min_threshold"] == "1"


def test_standin_validators_per_release_and_asic(tmp_path):
    doc = configdb()
    add = [{"op": "add", "path": "/WRED_PROFILE/RDMA_FABRIC", "value": {"ecn": "ecn_all"}}]
    # 202211 has no field_operation_validators.py; 202511 dropped WRED_PROFILE from the file.
    for release in ("SONiC.202211.3", "SONiC.202511.1"):
        proc, _ = apply_patch(tmp_path, doc, add, release)
        assert proc.returncode == 0, (release, proc.stderr)
    # An HWSKU the validators' ASIC lists do not name refuses every change of the tables.
    unknown = copy.deepcopy(doc)
    unknown["DEVICE_METADATA"]["localhost"]["hwsku"] = "Some-Other-SKU"
    replace = [
        {"op": "replace", "path": "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold", "value": "1"}
    ]
    proc, _ = apply_patch(tmp_path, unknown, replace)
    assert proc.returncode == 1 and "WRED_PROFILE table is illegal" in proc.stderr
    # 202505 validates WRED by the last path element: any profile's green values.
    other = copy.deepcopy(doc)
    other["WRED_PROFILE"]["OTHER"] = dict(other["WRED_PROFILE"]["AZURE_LOSSLESS"])
    patch = [{"op": "replace", "path": "/WRED_PROFILE/OTHER/green_max_threshold", "value": "2"}]
    assert apply_patch(tmp_path, other, patch, "SONiC.202405.2")[0].returncode == 1
    assert apply_patch(tmp_path, other, patch, "SONiC.202505.1")[0].returncode == 0


# --- the rendering passes them ------------------------------------------------------------


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("roce", [3, 5])
def test_rendered_patch_is_accepted_by_every_release(tmp_path, release, roce):
    """`add /WRED_PROFILE/RDMA_FABRIC` was refused by every release 202205-202505."""
    doc = configdb()
    desired = sonic_tables(policy(roce_priority=roce), PORTS, 40, "dynamic")
    assert sonic_patch_problems(doc, desired) == []
    patch = json_patch(doc, desired)
    proc, after = apply_patch(tmp_path, doc, patch, release)
    assert proc.returncode == 0, proc.stderr
    assert json_patch(after, desired) == []
    wred = after["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert (wred["green_min_threshold"], wred["green_max_threshold"]) == ("150000", "1500000")
    assert after["QUEUE"][f"Ethernet0|{roce}"]["wred_profile"] == "AZURE_LOSSLESS"
    assert set(after["WRED_PROFILE"]) == {"AZURE_LOSSLESS"}


def test_traditional_buffers_add_no_profile_buffermgr_makes_it():
    """A new BUFFER_PROFILE is refused; buffermgr writes pg_lossless_<speed>_<cable>_profile
    and the rows of pfc_enable itself (sonic-swss cfgmgr/buffermgr.cpp doSpeedUpdateTask)."""
    doc = configdb("configdb_buffers_traditional.json")
    lookup = parse_pg_lookup((FIXTURES / "pg_profile_lookup.ini").read_text())
    notes = []
    tables, errors = buffer_tables(
        PORTS, 3, dict.fromkeys(PORTS, 40), "traditional", doc, lookup, notes
    )
    assert errors == []
    assert "BUFFER_PROFILE" not in tables
    assert "Ethernet0|3" not in tables["BUFFER_PG"]
    assert tables["BUFFER_PG"]["Ethernet0|3-4"] is None, "the stale lossless row still goes"
    assert notes and "buffermgr" in notes[0] and "pg_lossless_100000_40m_profile" in notes[0]


def test_switch_states_the_validators_cannot_patch_are_named():
    doc = configdb()
    desired = sonic_tables(policy(), PORTS, 40, "dynamic")
    no_wd = {k: v for k, v in doc.items() if k != "PFC_WD"}
    problems = sonic_patch_problems(no_wd, desired)
    assert len(problems) == 1 and "pfcwd start_default" in problems[0]
    assert "rdma_roce_policy.pfc_watchdog.enabled" in problems[0]
    off = sonic_tables(policy(pfc_watchdog={"enabled": False}), PORTS, 40, "dynamic")
    assert sonic_patch_problems(no_wd, off) == []
    no_wred = copy.deepcopy(doc)
    del no_wred["WRED_PROFILE"]["AZURE_LOSSLESS"]
    problems = sonic_patch_problems(no_wred, desired)
    assert len(problems) == 1 and "AZURE_LOSSLESS" in problems[0]


# --- NVIDIA SAI: no drop probability on a colour without WRED (review finding 2) -----------


def test_standin_refuses_a_drop_probability_without_wred_like_nvidia_sai(tmp_path):
    """The old ECN-only profile (wred_*_enable false with *_drop_probability) passes
    202511's validators and is refused by mlnx_sai_wred.c."""
    doc = configdb()
    old_style = {"ecn": "ecn_all", "wred_green_enable": "false", "green_drop_probability": "100"}
    patch = [{"op": "add", "path": "/WRED_PROFILE/RDMA_FABRIC", "value": old_style}]
    proc, _ = apply_patch(tmp_path, doc, patch, "SONiC.202511.1")
    assert proc.returncode == 1 and "GREEN_DROP_PROBABILITY" in proc.stderr
    assert apply_patch(tmp_path, doc, patch, "SONiC.202511.1", asic="broadcom")[0].returncode == 0


@pytest.mark.parametrize("release", RELEASES)
def test_ecn_only_profile_gets_no_drop_probability(tmp_path, release):
    doc = configdb()
    ecn_only = doc["WRED_PROFILE"]["AZURE_LOSSLESS"]
    for color in ("green", "yellow", "red"):
        ecn_only[f"wred_{color}_enable"] = "false"
        del ecn_only[f"{color}_drop_probability"]
    desired = sonic_sai_wred(doc, sonic_tables(policy(), PORTS, 40, "dynamic"))
    assert "green_drop_probability" not in desired["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert sonic_patch_problems(doc, desired) == []
    proc, after = apply_patch(tmp_path, doc, json_patch(doc, desired), release)
    assert proc.returncode == 0, proc.stderr
    assert "green_drop_probability" not in after["WRED_PROFILE"]["AZURE_LOSSLESS"]
