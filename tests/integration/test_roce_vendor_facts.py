"""The lossless RoCE renderings read against the vendors' own sources.

Each test names the fact it holds the rendering to; each failed against the code before
the fix (the finding it pins down is in its docstring).
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    switch_policy_errors,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    eos_config,
    nvue_config,
    render,
    sonic_tables,
    sonic_wred_note,
)

PORTS = ["Ethernet0", "Ethernet4"]


def policy(**changes):
    filled, errors = normalize_policy(changes)
    assert not errors, errors
    return filled


def errors_of(**changes):
    return normalize_policy(changes)[1]


# --- SONiC: PFC priority -> PG, TC -> PG -------------------------------------------------


@pytest.mark.parametrize("roce", [3, 4, 5])
def test_sonic_pfc_priority_maps_to_the_roce_pg_and_is_bound(roce):
    """pfc_to_pg_map was never written: the platform's AZURE map ({3: 3, 4: 4},
    sonic-buildimage qos_config.j2) left priority 5's pause without a PG."""
    tables = sonic_tables(policy(roce_priority=roce), PORTS, 40, "dynamic")
    assert tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"RDMA_FABRIC": {str(roce): str(roce)}}
    tc_pg = tables["TC_TO_PRIORITY_GROUP_MAP"]["RDMA_FABRIC"]
    want = {str(tc): "0" for tc in range(8)} | {str(roce): str(roce), "7": "7"}
    assert tc_pg == want
    for port in PORTS:
        row = tables["PORT_QOS_MAP"][port]
        assert row["pfc_to_pg_map"] == "RDMA_FABRIC"
        assert row["tc_to_pg_map"] == "RDMA_FABRIC"
        assert row["pfc_enable"] == str(roce)
        assert tables["BUFFER_PG"][f"{port}|{roce}"] == {"profile": "NULL"}


def test_sonic_lossy_policy_binds_no_pfc_to_pg_map():
    tables = sonic_tables(policy(pfc_priorities=[]), PORTS, 40)
    assert tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"RDMA_FABRIC": None}
    assert tables["PORT_QOS_MAP"]["Ethernet0"]["pfc_to_pg_map"] is None


def test_sonic_roce_priority_0_is_refused_naming_it():
    errors = switch_policy_errors(policy(roce_priority=0, cnp_priority=6), "sonic")
    assert len(errors) == 1 and errors[0].startswith("rdma_roce_policy.roce_priority ")
    assert "sonic" in errors[0]


# --- ECN marking without WRED drop, the same on every OS ---------------------------------


def test_ecn_marks_without_wred_drop_by_default_on_every_os():
    """SONiC's WRED profile enabled WRED drop beside ECN (wred_*_enable true): non-ECT
    packets in the RoCE queue were dropped where Cumulus and EOS only mark. SONiC's patch
    cannot change wred_*_enable (gcu_field_operation_validators): it tunes the platform's
    AZURE_LOSSLESS and says where its drop differs from the policy (sonic_wred_note)."""
    default = policy()
    wred = sonic_tables(default, PORTS, 40)["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert not [f for f in wred if f.startswith("wred_") or f == "ecn"]
    stock = {"WRED_PROFILE": {"AZURE_LOSSLESS": {"wred_green_enable": "true"}}}
    assert "non-ECN packets in the RoCE queue are dropped" in sonic_wred_note(stock, False)
    assert sonic_wred_note(stock, True) is None
    ecn = nvue_config(default, ["swp1"], 100)["qos"]["congestion-control"]["default-global"]
    assert ecn["traffic-class"]["3"]["red"] == "disable"
    assert "random-detect drop" not in eos_config(default, ["Ethernet1"])


def test_wred_drop_when_the_policy_asks_on_every_os():
    drop = policy(wred_drop=True)
    ecn_only = {"WRED_PROFILE": {"AZURE_LOSSLESS": {"wred_green_enable": "false"}}}
    assert "without WRED drop" in sonic_wred_note(ecn_only, True)
    ecn = nvue_config(drop, ["swp1"], 100)["qos"]["congestion-control"]["default-global"]
    assert ecn["traffic-class"]["3"]["red"] == "enable"
    assert (
        "      random-detect drop minimum-threshold 150000 bytes maximum-threshold 1500000 "
        "bytes drop-probability 100\n" in eos_config(drop, ["Ethernet1"])
    )
    assert errors_of(wred_drop="maybe")[0].startswith("rdma_roce_policy.wred_drop ")


# --- one classification: all 64 DSCPs -----------------------------------------------------


def test_every_unnamed_dscp_goes_to_the_lossy_class_on_every_os():
    """Cumulus and EOS remapped only DSCP 26 and 48 and kept their defaults (DSCP 24-31
    on priority/TC 3, the lossless class); SONiC sent the rest to TC 0."""
    default = policy()
    assert len(default["dscp_priority"]) == 64
    assert default["dscp_priority"][26] == 3 and default["dscp_priority"][48] == 6
    assert {p for d, p in enumerate(default["dscp_priority"]) if d not in (26, 48)} == {0}
    sonic = sonic_tables(default, PORTS, 40)["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]
    assert sonic == {str(d): ("3" if d == 26 else "6" if d == 48 else "0") for d in range(64)}
    nvue = nvue_config(default, ["swp1"], 100)["qos"]["mapping"]["default-global"]["dscp"]
    assert nvue == {
        str(d): {"switch-priority": 3 if d == 26 else 6 if d == 48 else 0} for d in range(64)
    }
    eos = [
        line for line in eos_config(default, ["Ethernet1"]).splitlines() if "qos map dscp" in line
    ]
    mapped = {}
    for line in eos:
        words = line.split()
        for dscp in words[3 : words.index("to")]:
            mapped[int(dscp)] = int(words[-1])
    assert mapped == {d: (3 if d == 26 else 6 if d == 48 else 0) for d in range(64)}


# --- Cumulus: the RoCE profile on, RoCE on TC 3 -------------------------------------------


def test_cumulus_turns_the_roce_profile_on():
    """NVUE's `qos roce enable` defaults to off; the PATCH set only the mode."""
    assert nvue_config(policy(), ["swp1"], 100)["qos"]["roce"] == {
        "enable": "on",
        "mode": "lossless",
    }


@pytest.mark.parametrize("roce", [4, 5])
def test_cumulus_other_roce_priority_stays_on_tc3(roce):
    """roce_priority 4/5 moved RoCE to TC 4/5, away from the roce-reserved pools;
    NVIDIA's "Change RoCE Configuration" remaps the switch priority to TC 3."""
    qos = nvue_config(policy(roce_priority=roce), ["swp1"], 100)["qos"]
    egress = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    assert egress[str(roce)] == {"traffic-class": 3}
    assert egress["3"] == {"traffic-class": 0}  # priority 3 is an ordinary one now
    assert egress["6"] == {"traffic-class": 6}
    sched = qos["egress-scheduler"]["default-global"]["traffic-class"]
    assert sched["3"] == {"mode": "dwrr", "bw-percent": 50}
    assert sched[str(roce)] == {"mode": "strict", "bw-percent": None}
    assert set(qos["congestion-control"]["default-global"]["traffic-class"]) == {"3"}
    assert qos["pfc"]["default-global"]["switch-priority"][str(roce)] == {}
    assert qos["mapping"]["default-global"]["dscp"]["26"] == {"switch-priority": roce}


# --- limits -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"pfc_watchdog": {"detection_time_ms": 50}}, "pfc_watchdog.detection_time_ms"),
        ({"pfc_watchdog": {"detection_time_ms": 9000}}, "pfc_watchdog.detection_time_ms"),
        ({"host_pfc_storm_timeout_ms": 79}, "host_pfc_storm_timeout_ms"),
        ({"host_pfc_storm_timeout_ms": 8001}, "host_pfc_storm_timeout_ms"),
        ({"host_pfc_storm_timeout_ms": "soon"}, "host_pfc_storm_timeout_ms"),
        ({"mtu": 100}, "mtu"),
        ({"mtu": 12000}, "mtu"),
    ],
)
def test_host_limits_are_refused_naming_the_variable(changes, key):
    """mlx5 refuses pfc-prevention-tout < 80 or > 8000 ms (en_ethtool.c); the policy
    passed detection times from 10 ms to ethtool."""
    errors = errors_of(**changes)
    assert len(errors) == 1 and errors[0].startswith(f"rdma_roce_policy.{key} "), errors


def test_host_storm_timeout_is_derived_or_set_apart():
    assert policy()["host_pfc_storm_timeout_ms"] == 200
    assert policy(pfc_watchdog={"enabled": False})["host_pfc_storm_timeout_ms"] == 0
    apart = policy(pfc_watchdog={"detection_time_ms": 50}, host_pfc_storm_timeout_ms=80)
    assert apart["host_pfc_storm_timeout_ms"] == 80
    assert apart["pfc_watchdog"]["detection_time_ms"] == 50
    assert policy(host_pfc_storm_timeout_ms=0)["host_pfc_storm_timeout_ms"] == 0
    # A filled policy normalizes to itself.
    assert normalize_policy(apart)[0] == apart


def test_eos_mtu_above_9214_is_refused_and_l2_ports_get_no_mtu():
    """EOS/AVD cap the interface MTU at 9214; 9216 was rendered."""
    big = policy(mtu=9216)
    errors = switch_policy_errors(big, "eos")
    assert len(errors) == 1 and errors[0].startswith("rdma_roce_policy.mtu ") and "eos" in errors[0]
    assert switch_policy_errors(big, "sonic") == []
    assert switch_policy_errors(big, "cumulus") == []
    assert switch_policy_errors(policy(mtu=9214), "eos") == []
    text = render(
        policy(), "eos", ["Ethernet1", "Ethernet2"], 100, {"eos_switchports": ["Ethernet2"]}
    )
    blocks = text.split("!\ninterface ")
    assert "   mtu 9000" in blocks[1] and blocks[1].startswith("Ethernet1")
    assert "mtu" not in blocks[2] and blocks[2].startswith("Ethernet2")


# --- the SONiC stand-in knows which tables have YANG per release ---------------------------


@pytest.mark.parametrize(
    ("release", "ok"),
    [("SONiC.202111.5", False), ("SONiC.202205.1", True), ("SONiC.202405.3", True)],
)
def test_sonic_standin_refuses_tables_without_yang_like_apply_patch(tmp_path, release, ok):
    """202111 was accepted as the minimum, but CABLE_LENGTH and PORT_QOS_MAP's
    pfcwd_sw_enable only have YANG models from 202205: its apply-patch refuses them."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    standins = Path(__file__).resolve().parents[1] / "standins" / "sonic"
    db = tmp_path / "config_db.json"
    db.write_text(json.dumps({"PORT": {"Ethernet0": {"mtu": "9100"}}}))
    for patch in (
        [{"op": "add", "path": "/CABLE_LENGTH", "value": {"AZURE": {"Ethernet0": "40m"}}}],
        [{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfcwd_sw_enable": "3"}}}],
    ):
        (tmp_path / "patch.json").write_text(json.dumps(patch))
        env = {**os.environ, "SONIC_STANDIN_DB": str(db), "SONIC_STANDIN_VERSION": release}
        proc = subprocess.run(
            [sys.executable, str(standins / "config"), "apply-patch", str(tmp_path / "patch.json")],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if ok:
            assert proc.returncode == 0, proc.stderr
        else:
            assert proc.returncode == 1
            assert "changes to tables without YANG models" in proc.stderr
    # The same patch on an unrelated table applies in every release.
    (tmp_path / "patch.json").write_text(
        json.dumps([{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9000"}])
    )
    proc = subprocess.run(
        [sys.executable, str(standins / "config"), "apply-patch", str(tmp_path / "patch.json")],
        capture_output=True,
        text=True,
        env={**os.environ, "SONIC_STANDIN_DB": str(db), "SONIC_STANDIN_VERSION": release},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


# --- host receive buffers follow the fabric's cable length ---------------------------------


def test_host_cable_length_follows_the_policy_unless_set_apart():
    """Host buffers kept mlx5's 7 m while switches got 100 m: nothing linked them.

    The default too is one length for both ends, NVIDIA's RoCE 100 m.
    """
    from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import desired_qos

    default = policy()
    assert (default["cable_length_m"], default["host_cable_length_m"]) == (100, 100)
    assert desired_qos(default)["cable_len"] == 100
    hosts_apart = policy(host_cable_length_m=5)
    assert (hosts_apart["cable_length_m"], hosts_apart["host_cable_length_m"]) == (100, 5)
    linked = policy(cable_length_m=40)
    assert linked["host_cable_length_m"] == 40
    assert desired_qos(linked)["cable_len"] == 40
    apart = policy(cable_length_m=300, host_cable_length_m=7)
    assert (apart["cable_length_m"], apart["host_cable_length_m"]) == (300, 7)
    assert normalize_policy(linked)[0] == linked
    errors = errors_of(cable_length_m=2000)
    assert len(errors) == 1 and errors[0].startswith("rdma_roce_policy.cable_length_m ")
    assert "host_cable_length_m" in errors[0]
    assert policy(cable_length_m=2000, host_cable_length_m=100)["cable_length_m"] == 2000
    # mlx5 ignores a cable length of 1000 m and more (MLX5E_MAX_CABLE_LENGTH).
    assert errors_of(host_cable_length_m=1000)[0].startswith(
        "rdma_roce_policy.host_cable_length_m "
    )


def test_mlx5_standins_refuse_what_mlx5_refuses(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    standins = Path(__file__).resolve().parents[1] / "standins"
    env = {
        **os.environ,
        "ETHTOOL_STANDIN_DIR": str(tmp_path),
        "MLNX_QOS_STANDIN_DIR": str(tmp_path),
    }

    def run(tool, *args):
        return subprocess.run(
            [sys.executable, str(standins / tool), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    assert run("ethtool", "--standin-init", "eth0").returncode == 0
    for value, ok in (("0", True), ("79", False), ("80", True), ("8000", True), ("8001", False)):
        got = run("ethtool", "--set-tunable", "eth0", "pfc-prevention-tout", value)
        assert (got.returncode == 0) is ok, (value, got.stderr)
    assert run("mlnx_qos", "--standin-init", "eth0").returncode == 0
    both = run("mlnx_qos", "-i", "eth0", "--trust", "dscp", "--dscp2prio", "set,26,3")
    assert both.returncode == 1 and "cannot be used at the same time" in both.stdout
    strict_bw = run(
        "mlnx_qos",
        "-i",
        "eth0",
        "--tsa",
        "ets,strict,strict,ets,strict,strict,strict,strict",
        "--tcbw",
        "50,10,0,40,0,0,0,0",
    )
    assert strict_bw.returncode == 1 and "must be 0" in strict_bw.stdout
    run("mlnx_qos", "-i", "eth0", "--cable_len", "1000")
    assert "Cable len: 7" in run("mlnx_qos", "-i", "eth0").stdout  # ignored, as mlx5 does
    run("mlnx_qos", "-i", "eth0", "--cable_len", "40")
    assert "Cable len: 40" in run("mlnx_qos", "-i", "eth0").stdout


# --- SONiC: the RoCE queue in the lossless egress pool; pfc_to_pg_map per ASIC ------------


def _configdb(model="dynamic"):
    import json
    from pathlib import Path

    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "switch_qos"
        / f"configdb_buffers_{model}.json"
    )
    return json.loads(path.read_text())


@pytest.mark.parametrize("model", ["dynamic", "traditional"])
def test_sonic_roce_queue_outside_3_4_gets_a_lossless_buffer_queue(model):
    """roce_priority 5 left queue 5 in the platform's lossy egress row (buffers_config.j2
    BUFFER_QUEUE: 3-4 egress_lossless_profile, 0-2 and 5-6 egress_lossy_profile)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import (
        buffer_tables,
        parse_pg_lookup,
    )
    from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
        apply_json_patch,
        json_patch,
    )

    db = _configdb(model)
    lookup = parse_pg_lookup(
        (
            __import__("pathlib").Path(__file__).resolve().parents[1]
            / "fixtures/switch_qos/pg_profile_lookup.ini"
        ).read_text()
    )
    tables, errors = buffer_tables(PORTS, 5, dict.fromkeys(PORTS, 300), model, db, lookup)
    assert errors == []
    assert tables["BUFFER_QUEUE"] == {
        f"{p}|{k}": v
        for p in PORTS
        for k, v in (
            ("5-6", None),
            ("6", {"profile": "egress_lossy_profile"}),
            ("5", {"profile": "egress_lossless_profile"}),
        )
    }
    after = apply_json_patch(db, json_patch(db, tables))
    assert after["BUFFER_QUEUE"]["Ethernet8|5-6"] == db["BUFFER_QUEUE"]["Ethernet8|5-6"]
    assert json_patch(after, tables) == []
    # RoCE on 3 (the template's lossless row) changes no queue; 7 (no row) gets one.
    assert (
        "BUFFER_QUEUE"
        not in buffer_tables(PORTS, 3, dict.fromkeys(PORTS, 300), model, db, lookup)[0]
    )
    seven = buffer_tables(PORTS, 7, dict.fromkeys(PORTS, 300), model, db, lookup)[0]
    assert seven["BUFFER_QUEUE"] == {
        f"{p}|7": {"profile": "egress_lossless_profile"} for p in PORTS
    }
    # Rendered without a switch: the queue's own row.
    rendered = sonic_tables(policy(roce_priority=5), PORTS, 40, "dynamic")
    assert rendered["BUFFER_QUEUE"] == {
        f"{p}|5": {"profile": "egress_lossless_profile"} for p in PORTS
    }
    assert "BUFFER_QUEUE" not in sonic_tables(policy(), PORTS, 40, "dynamic")


def test_sonic_pfc_to_pg_map_only_where_the_platform_binds_one():
    """qos_config.j2 writes PFC_PRIORITY_TO_PRIORITY_GROUP_MAP and pfc_to_pg_map only for
    asic_type mellanox and barefoot (pfc_to_pg_map_supported_asics)."""
    for asic in ("mellanox", "barefoot"):
        tables = sonic_tables(policy(roce_priority=5), PORTS, 40, None, asic)
        assert tables["PORT_QOS_MAP"]["Ethernet0"]["pfc_to_pg_map"] == "RDMA_FABRIC"
        assert tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"RDMA_FABRIC": {"5": "5"}}
    tables = sonic_tables(policy(roce_priority=5), PORTS, 40, None, "broadcom")
    assert tables["PORT_QOS_MAP"]["Ethernet0"]["pfc_to_pg_map"] is None
    assert tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"RDMA_FABRIC": None}
    assert tables["PORT_QOS_MAP"]["Ethernet0"]["tc_to_pg_map"] == "RDMA_FABRIC"
    options = {"sonic_asic_type": "broadcom"}
    assert (
        render(policy(), "sonic", PORTS, 40, options)["PORT_QOS_MAP"]["Ethernet0"]["pfc_to_pg_map"]
        is None
    )


# --- priority 7, swapped DSCPs, wred_drop strings (review finding 7) -----------------------


def test_sonic_cnp_on_7_gets_a_lossy_pg_row():
    """CNP on priority 7 landed on PG 7 (TC 7 -> PG 7), which NVIDIA's buffer defaults give
    no BUFFER_PG row (buffers_config.j2: <port>|0 lossy, 3-4 lossless)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import buffer_tables

    cnp7 = policy(cnp_priority=7)
    rendered = sonic_tables(cnp7, PORTS, 40, "dynamic")
    assert rendered["BUFFER_PG"]["Ethernet0|7"] == {"profile": "ingress_lossy_profile"}
    db = _configdb()
    tables, errors = buffer_tables(PORTS, 3, dict.fromkeys(PORTS, 40), "dynamic", db, lossy_pgs=[7])
    assert errors == []
    assert tables["BUFFER_PG"]["Ethernet4|7"] == {"profile": "ingress_lossy_profile"}
    # RoCE on 7 is lossless (its own NULL row); CNP elsewhere adds no lossy row.
    assert sonic_tables(policy(roce_priority=7), PORTS, 40, "dynamic")["BUFFER_PG"][
        "Ethernet0|7"
    ] == {"profile": "NULL"}
    assert "Ethernet0|7" not in sonic_tables(policy(), PORTS, 40, "dynamic")["BUFFER_PG"]
    no_lossy = {**db, "BUFFER_PROFILE": {}}
    errors = buffer_tables(PORTS, 3, dict.fromkeys(PORTS, 40), "dynamic", no_lossy, lossy_pgs=[7])[
        1
    ]
    assert errors and errors[0].startswith("rdma_roce_policy.cnp_priority")


def test_swapped_roce_and_cnp_dscps_are_refused_naming_both():
    errors = errors_of(roce_dscp=48, cnp_dscp=26)
    assert len(errors) == 1
    assert errors[0].startswith("rdma_roce_policy.roce_dscp and rdma_roce_policy.cnp_dscp")
    assert errors_of(roce_dscp=24, cnp_dscp=48) == []


@pytest.mark.parametrize("value", ["yes", "no", "true", "false", "on", 1, 0])
def test_wred_drop_takes_a_boolean_only(value):
    errors = errors_of(wred_drop=value)
    assert len(errors) == 1 and errors[0].startswith(
        "rdma_roce_policy.wred_drop must be true or false"
    )
