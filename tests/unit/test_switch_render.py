"""The switch renderings of the default policy, compared with the vendors' own published
lossless RoCE configurations, and the SONiC JSON Patch against CONFIG_DB fixtures.

Expected values are written here from the vendors' documents (each cited); nothing
here talks to a switch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_collections.ansible.netcommon.plugins.module_utils.network.common.config import (
    NetworkConfig,
    dumps,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    normalize_policy,
    switch_policy_errors,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    PatchError,
    apply_json_patch,
    eos_config,
    json_patch,
    merge_apply,
    merge_diff,
    nvue_config,
    render,
    sonic_tables,
    switch_ports,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "switch_qos"
DEFAULT, _ = normalize_policy({})


def policy(**changes):
    filled, errors = normalize_policy(changes)
    assert not errors, errors
    return filled


# --- Cumulus Linux ----------------------------------------------------------------------

# NVIDIA's own commands for lossless RoCE with explicit values: Cumulus Linux docs,
# "RDMA over Converged Ethernet - RoCE" (5.12: "Change RoCE Configuration") and the
# NVUE command reference (QoS set commands, 5.3-5.6), for the policy's defaults.
NVIDIA_NV_SET = """
nv set qos roce mode lossless
nv set qos mapping default-global trust l3
nv set qos mapping default-global dscp 26 switch-priority 3
nv set qos mapping default-global dscp 48 switch-priority 6
nv set qos pfc default-global switch-priority 3
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos pfc default-global cable-length 100
nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3
nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6
nv set qos egress-queue-mapping default-global switch-priority 0 traffic-class 0
nv set qos egress-scheduler default-global traffic-class 0 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0 bw-percent 50
nv set qos egress-scheduler default-global traffic-class 3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set qos congestion-control default-global traffic-class 3 ecn enable
nv set qos congestion-control default-global traffic-class 3 min-threshold 150000
nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000
nv set qos congestion-control default-global traffic-class 3 probability 100
nv set qos traffic-pool roce-lossless switch-priority 3
nv set qos pfc-watchdog polling-interval 100
nv set qos pfc-watchdog robustness 2
nv set interface swp1 qos pfc-watchdog state enable
"""
# Leaves that are sets in NVUE's object model: `switch-priority 3` adds member "3".
SET_LEAVES = {
    ("pfc", "default-global", "switch-priority"),
    ("traffic-pool", "roce-lossless", "switch-priority"),
}


def nv_set_tree(text):
    """The NVUE JSON tree of `nv set` lines (the object model the REST API serves)."""
    tree = {}
    for line in text.strip().splitlines():
        *path, value = line.split()[2:]
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
        if tuple(path[1:]) in SET_LEAVES:
            node.setdefault(path[-1], {})[value] = {}
        else:
            node[path[-1]] = int(value) if value.isdigit() else value
    return tree


def test_cumulus_default_policy_is_nvidias_lossless_roce():
    rendered = nvue_config(DEFAULT, ["swp1"], 100)
    expected = nv_set_tree(NVIDIA_NV_SET)
    assert merge_diff(expected, rendered) == {}, "a published value is missing or differs"
    # ... and nothing published is contradicted by what the rendering adds: the only
    # other PFC/pool members are explicitly absent.
    pfc = rendered["qos"]["pfc"]["default-global"]["switch-priority"]
    assert {k for k, v in pfc.items() if v is not None} == {"3"}


def test_cumulus_default_matches_nv_show_qos_roce():
    # `nv show qos roce` of a lossless switch (Cumulus Linux 5.12 docs): SP->TC 3->3, 6->6,
    # every other SP -> TC 0; TC6 strict, TC0/TC3 DWRR 50 %; ECN 146.48 KB (150000 B) to
    # 1.43 MB (1500000 B), probability 100; PFC on priority 3.
    qos = nvue_config(DEFAULT, ["swp1"], 100)["qos"]
    sp_tc = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    assert {int(sp): v["traffic-class"] for sp, v in sp_tc.items()} == {
        0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0,
    }  # fmt: skip
    sched = qos["egress-scheduler"]["default-global"]["traffic-class"]
    weights = {tc: (s["mode"], s["bw-percent"]) for tc, s in sched.items() if tc in "036"}
    assert weights == {"0": ("dwrr", 50), "3": ("dwrr", 50), "6": ("strict", None)}
    ecn = qos["congestion-control"]["default-global"]["traffic-class"]["3"]
    assert round(ecn["min-threshold"] / 1024, 2) == 146.48
    assert round(ecn["max-threshold"] / 1024 / 1024, 2) == 1.43


def test_cumulus_watchdog_timers_and_pool():
    rendered = nvue_config(policy(pfc_watchdog={"detection_time_ms": 250}), ["swp1"], 5, 60)
    assert rendered["qos"]["pfc-watchdog"] == {"polling-interval": 125, "robustness": 2}
    pools = rendered["qos"]["traffic-pool"]
    assert pools["roce-lossless"]["memory-percent"] == 60
    assert pools["default-lossy"] == {"memory-percent": 40}
    off = nvue_config(policy(pfc_watchdog={"enabled": False}), ["swp1"], 5)
    assert "pfc-watchdog" not in off["qos"]
    assert off["interface"]["swp1"]["qos"]["pfc-watchdog"]["state"] == "disable"


def test_cumulus_lossy_policy():
    rendered = nvue_config(policy(pfc_priorities=[]), ["swp1"], 5)
    assert rendered["qos"]["roce"] == {"enable": "on", "mode": "lossy"}
    assert "pfc" not in rendered["qos"]
    assert rendered["interface"] == {"swp1": {"link": {"mtu": 9000}}}  # no watchdog state


def test_merge_diff_is_what_a_patch_must_carry():
    desired = {"qos": {"a": 1, "set": {"3": {}, "4": None}, "gone": None, "sub": {"x": "y"}}}
    current = {"qos": {"a": "1", "set": {"4": {}}, "gone": 5, "other": 7}}
    patch = merge_diff(desired, current)
    assert patch == {"qos": {"set": {"3": {}, "4": None}, "gone": None, "sub": {"x": "y"}}}
    after = merge_apply(current, patch)
    assert after == {"qos": {"a": "1", "set": {"3": {}}, "other": 7, "sub": {"x": "y"}}}
    assert merge_diff(desired, after) == {}


# --- SONiC ------------------------------------------------------------------------------


def load(name):
    return json.loads((FIXTURES / name).read_text())


def test_sonic_tables_use_sonics_own_field_names():
    # Field names and value forms as SONiC renders them (sonic-buildimage qos.json.j2
    # sample output for the Arista 7800R3 linecard; PFC_WD per port as in sonic-buildimage
    # issue 24577's apply-patch body).
    sample = load("configdb_qos_sample.json")
    tables = sonic_tables(DEFAULT, ["Ethernet0", "Ethernet4"], 40)
    # pfc_to_pg_map too, which the sample (a platform default) leaves to the AZURE map.
    assert set(tables["PORT_QOS_MAP"]["Ethernet0"]) == set(sample["PORT_QOS_MAP"]["Ethernet0"]) | {
        "pfc_to_pg_map"
    }
    # Only the fields `config apply-patch` may replace (gcu_field_operation_validators).
    wred = tables["WRED_PROFILE"]["AZURE_LOSSLESS"]
    assert set(wred) < set(sample["WRED_PROFILE"]["AZURE_LOSSLESS"])
    assert set(wred) == {"green_min_threshold", "green_max_threshold", "green_drop_probability"}
    assert set(tables["PFC_WD"]["Ethernet0"]) == set(sample["PFC_WD"]["Ethernet0"])
    assert tables["PFC_WD"]["Ethernet0"] == {
        "action": "drop",
        "detection_time": "200",
        "restoration_time": "200",
    }
    assert {k for k, v in tables["QUEUE"]["Ethernet0|3"].items() if v} == {
        "scheduler",
        "wred_profile",
    }
    port = tables["PORT_QOS_MAP"]["Ethernet0"]
    assert port["pfc_enable"] == "3" and port["pfcwd_sw_enable"] == "3"
    for table in tables.values():
        for row in table.values():
            assert all(v is None or isinstance(v, str) for v in (row or {}).values())


def test_sonic_dscp_map_overrides_the_default_map():
    # SONiC's AZURE map sends DSCP 26 to TC 1 (FACTS.md; the sample above): the policy's
    # map sends it to the lossless TC 3 and CNP (48) to TC 6 like AZURE does.
    sample = load("configdb_qos_sample.json")
    assert sample["DSCP_TO_TC_MAP"]["AZURE"]["26"] == "1"
    mine = sonic_tables(DEFAULT, ["Ethernet0"], 40)["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]
    assert (mine["26"], mine["48"]) == ("3", sample["DSCP_TO_TC_MAP"]["AZURE"]["48"])
    assert len(mine) == 64 and {v for k, v in mine.items() if k not in ("26", "48")} == {"0"}


def test_sonic_patch_against_a_configured_switch():
    configdb = load("configdb_qos_sample.json")
    desired = sonic_tables(DEFAULT, ["Ethernet0", "Ethernet4"], 40)
    patch = json_patch(configdb, desired)
    ops = {(op["op"], op["path"]): op.get("value") for op in patch}
    assert ops[("replace", "/PORT_QOS_MAP/Ethernet0/pfc_enable")] == "3"
    assert ops[("replace", "/PORT_QOS_MAP/Ethernet0/dscp_to_tc_map")] == "RDMA_FABRIC"
    assert ("add", "/DSCP_TO_TC_MAP/RDMA_FABRIC") in ops
    # CABLE_LENGTH keeps the key CONFIG_DB has; the port's length is replaced.
    assert ops[("replace", "/CABLE_LENGTH/AZURE/Ethernet0")] == "40m"
    # Rows the policy does not name stay: AZURE maps, other ports (the platform's lossless
    # WRED profile is tuned, the one WRED_PROFILE `config apply-patch` may change).
    assert not [p for _, p in ops if "AZURE" in p and "CABLE_LENGTH" not in p and "WRED" not in p]
    assert not [p for _, p in ops if "Ethernet8" in p]
    after = apply_json_patch(configdb, patch)
    assert json_patch(after, desired) == [], "a second run must find nothing to do"
    assert after["PORT_QOS_MAP"]["Ethernet8"] == configdb["PORT_QOS_MAP"]["Ethernet8"]


def test_sonic_patch_on_a_fresh_switch_adds_whole_tables():
    configdb = load("configdb_fresh.json")
    desired = sonic_tables(DEFAULT, ["Ethernet0"], 5)
    patch = json_patch(configdb, desired)
    # Every table is added; only the port's MTU (9100 at boot) is replaced.
    assert [op["path"] for op in patch if op["op"] != "add"] == ["/PORT/Ethernet0/mtu"]
    assert "/CABLE_LENGTH" in {op["path"] for op in patch}
    after = apply_json_patch(configdb, patch)
    assert after["CABLE_LENGTH"] == {"AZURE": {"Ethernet0": "5m"}}
    assert json_patch(after, desired) == []


def test_sonic_ets_change_deletes_and_recreates_the_scheduler():
    """SCHEDULER type/weight are read at creation only: replace is not enough."""
    configdb = load("configdb_fresh.json")
    first = sonic_tables(DEFAULT, ["Ethernet0"], 5)
    configdb = apply_json_patch(configdb, json_patch(configdb, first))
    changed = sonic_tables(policy(ets_bandwidth={0: 40, 3: 60}), ["Ethernet0"], 5)
    patch = json_patch(configdb, changed)
    assert [op for op in patch if op["op"] == "replace" and "/SCHEDULER/" in op["path"]] == []
    for name, weight in (("RDMA_FABRIC_TC0", "40"), ("RDMA_FABRIC_TC3", "60")):
        remove = patch.index({"op": "remove", "path": f"/SCHEDULER/{name}"})
        add = patch.index(
            {"op": "add", "path": f"/SCHEDULER/{name}", "value": {"type": "DWRR", "weight": weight}}
        )
        assert remove < add
    assert not [op for op in patch if "RDMA_FABRIC_TC6" in op["path"]]
    after = apply_json_patch(configdb, patch)
    assert json_patch(after, changed) == []


def test_sonic_watchdog_off_removes_the_rows_and_empty_tables():
    configdb = load("configdb_qos_sample.json")
    desired = sonic_tables(policy(pfc_watchdog={"enabled": False}), ["Ethernet0"], 40)
    patch = json_patch(configdb, desired)
    assert {"op": "remove", "path": "/PORT_QOS_MAP/Ethernet0/pfcwd_sw_enable"} in patch
    assert {"op": "remove", "path": "/PFC_WD/Ethernet0"} in patch
    only = {"PFC_WD": {"Ethernet0": {"action": "drop"}}}
    assert json_patch(only, {"PFC_WD": {"Ethernet0": None}}) == [
        {"op": "remove", "path": "/PFC_WD"}
    ]


def test_json_pointer_escapes_and_patch_errors():
    ops = json_patch({}, {"T": {"a/b~c": {"f": "1"}}})
    assert ops == [{"op": "add", "path": "/T", "value": {"a/b~c": {"f": "1"}}}]
    ops = json_patch({"T": {"x": {}}}, {"T": {"a/b~c": {"f": "1"}}})
    assert ops[0]["path"] == "/T/a~1b~0c"
    assert apply_json_patch({"T": {}}, ops) == {"T": {"a/b~c": {"f": "1"}}}
    # jsonpatch's own refusals, as `config apply-patch` reports them; nothing applied.
    document = {"T": {}}
    with pytest.raises(PatchError, match="member 'T' not found"):
        apply_json_patch({}, [{"op": "add", "path": "/T/k/f", "value": "1"}])
    with pytest.raises(PatchError, match="can't replace a non-existent object 'k'"):
        apply_json_patch(document, [{"op": "replace", "path": "/T/k", "value": {}}])
    with pytest.raises(PatchError, match="can't remove a non-existent object 'k'"):
        apply_json_patch(document, [{"op": "add", "path": "/T/a", "value": "1"},
                                    {"op": "remove", "path": "/T/k"}])  # fmt: skip
    assert document == {"T": {}}, "the document given is left as it was"


# --- Arista EOS -------------------------------------------------------------------------

# Published EOS lossless RoCE configuration: the DCQCN example for an Arista 7388
# (AMD ROCm cluster networking guide) and AVD's eos_cli_config_gen qos intended config;
# (parent, line) pairs, parent None at the top level.
ARISTA_PUBLISHED = [
    (None, "qos map dscp 26 to traffic-class 3"),
    ("qos profile RDMA_FABRIC_ROCE", "qos trust dscp"),
    ("qos profile RDMA_FABRIC_ROCE", "priority-flow-control on"),
    ("qos profile RDMA_FABRIC_ROCE", "priority-flow-control priority 3 no-drop"),
    ("qos profile RDMA_FABRIC_ROCE", "priority-flow-control pause watchdog"),
    ("qos profile RDMA_FABRIC_ROCE", "priority-flow-control pause watchdog port action drop"),
    ("tx-queue 3", "no priority"),
    ("tx-queue 3", "bandwidth percent 50"),
    ("interface Ethernet1/1", "service-profile RDMA_FABRIC_ROCE"),
]


def parsed(text):
    config = NetworkConfig(indent=3, contents=text)
    return {(line.parents[-1] if line.parents else None, line.text) for line in config.items}


def test_eos_default_policy_has_the_published_lines():
    text = eos_config(DEFAULT, ["Ethernet1/1"])
    lines = parsed(text)
    missing = [pair for pair in ARISTA_PUBLISHED if pair not in lines]
    assert not missing, text
    ecn = [t for p, t in lines if p == "tx-queue 3" and t.startswith("random-detect ecn")]
    assert ecn == [
        "random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes "
        "max-mark-probability 100"
    ]
    timer = (
        "priority-flow-control pause watchdog port timer timeout 0.2 "
        "polling-interval auto recovery-time 0.2"
    )
    assert ("qos profile RDMA_FABRIC_ROCE", timer) in lines
    assert eos_config(DEFAULT, ["Ethernet1"], "uc-tx-queue").count("uc-tx-queue ") == 2


def test_eos_dscp_map_is_rendered_as_eos_prints_it():
    """One `qos map dscp` line per traffic class, DSCPs ascending, each DSCP once, the
    mappings EOS has by default left out (it does not print them, so match=line would
    send them every run); no `priority strict` (EOS' default for a tx-queue, not printed)
    and no block for a queue left at its defaults (the CNP queue)."""
    text = eos_config(DEFAULT, ["Ethernet1"])
    maps = [line for line in text.splitlines() if line.startswith("qos map dscp")]
    assert maps == [
        "qos map dscp "
        + " ".join(str(d) for d in range(64) if d not in (26, 48))
        + " to traffic-class 0",
        "qos map dscp 26 to traffic-class 3",
        "qos map dscp 48 to traffic-class 6",
    ]
    assert "priority strict" not in text
    assert "tx-queue 6" not in text, "the strict CNP queue has nothing to set"
    # DSCP 46 is on traffic class 5 by default (the one default mapping a source proves):
    # a policy sending it there renders no line for it.
    cnp46 = policy(cnp_dscp=46, cnp_priority=5)
    maps = [line for line in eos_config(cnp46, ["Ethernet1"]).splitlines() if " dscp " in line]
    assert maps == [
        "qos map dscp "
        + " ".join(str(d) for d in range(64) if d not in (26, 46))
        + " to traffic-class 0",
        "qos map dscp 26 to traffic-class 3",
    ]


def test_eos_diff_is_what_eos_config_would_send():
    # eos_config (match: line) sends candidate.difference(running): against a running
    # config that lacks the policy, the profile and the port lines; once they are there,
    # nothing (a second run reports no change).
    running = (FIXTURES / "eos_running_config.cfg").read_text()
    candidate = NetworkConfig(indent=3, contents=eos_config(DEFAULT, ["Ethernet1/1"]))
    commands = dumps(candidate.difference(NetworkConfig(indent=3, contents=running)), "commands")
    assert "qos map dscp 26 to traffic-class 3" in commands
    assert "interface Ethernet1/1\nmtu 9000\nservice-profile RDMA_FABRIC_ROCE" in commands
    assert "qos map dscp 48 to traffic-class 6" not in commands, "already in the running config"
    merged = running + "\n" + eos_config(DEFAULT, ["Ethernet1/1"])
    again = candidate.difference(NetworkConfig(indent=3, contents=merged))
    assert dumps(again, "commands") == ""


# --- what each OS cannot express --------------------------------------------------------


WD = "rdma_roce_policy.pfc_watchdog."


@pytest.mark.parametrize(
    ("changes", "switch_os", "key"),
    [
        (
            {"pfc_watchdog": {"action": "forward"}},
            "cumulus",
            "rdma_roce_policy.pfc_watchdog.action",
        ),
        ({"pfc_watchdog": {"action": "forward"}}, "eos", "rdma_roce_policy.pfc_watchdog.action"),
        (
            {"pfc_watchdog": {"detection_time_ms": 50}, "host_pfc_storm_timeout_ms": 100},
            "cumulus",
            "rdma_roce_policy.pfc_watchdog.detection_time_ms",
        ),
        (
            {"pfc_watchdog": {"restoration_time_ms": 5}},
            "eos",
            "rdma_roce_policy.pfc_watchdog.restoration_time_ms",
        ),
        (
            {"prio_tc": [0, 0, 0, 4, 3, 0, 6, 0], "ets_bandwidth": {0: 50, 4: 50}},
            "sonic",
            "rdma_roce_policy.prio_tc[3]",
        ),
        (
            {"prio_tc": [0, 0, 0, 4, 3, 0, 6, 0], "ets_bandwidth": {0: 50, 4: 50}},
            "eos",
            "rdma_roce_policy.prio_tc[3]",
        ),
        # Limits found only at push time before.
        ({"pfc_watchdog": {"detection_time_ms": 125}}, "eos", WD + "detection_time_ms"),
        ({"pfc_watchdog": {"detection_time_ms": 6000}}, "sonic", WD + "detection_time_ms"),
        ({"pfc_watchdog": {"restoration_time_ms": 50}}, "sonic", WD + "restoration_time_ms"),
    ],
)
def test_policy_the_switch_cannot_express(changes, switch_os, key):
    errors = switch_policy_errors(policy(**changes), switch_os)
    assert len(errors) == 1 and errors[0].startswith(key + " "), errors
    assert switch_os in errors[0]


def test_more_lossless_priorities_than_the_os_has():
    # The shared policy already allows PFC on the RoCE priority only; the per-OS limit
    # still guards a filled policy that lists more (cumulus: one lossless PG per port).
    two = dict(DEFAULT, pfc_priorities=[3, 4])
    [error] = switch_policy_errors(two, "cumulus")
    assert error.startswith("rdma_roce_policy.pfc_priorities asks for 2 lossless priorities")
    assert switch_policy_errors(two, "sonic") == []


def test_unknown_switch_os_is_named():
    assert switch_policy_errors(DEFAULT, "junos") == [
        "rdma_switch_os must be one of cumulus, sonic, eos; got 'junos'"
    ]
    for name in ("cumulus", "sonic", "eos"):
        assert switch_policy_errors(DEFAULT, name) == []


@pytest.mark.parametrize(
    ("switch_os", "ports", "where"),
    [
        ("cumulus", ["swp1"], lambda c, mtu: c["interface"]["swp1"]["link"]["mtu"] == mtu),
        ("sonic", ["Ethernet0"], lambda c, mtu: c["PORT"]["Ethernet0"]["mtu"] == str(mtu)),
        ("eos", ["Ethernet1/1"], lambda c, mtu: f"interface Ethernet1/1\n   mtu {mtu}\n" in c),
    ],
)
def test_the_roce_ports_get_the_policy_mtu(switch_os, ports, where):
    """Renderings for MTU 1500 and 9216 were identical (no MTU on switches)."""
    small = render(policy(mtu=1500), switch_os, ports, 5)
    jumbo = render(policy(mtu=9216), switch_os, ports, 5)
    assert small != jumbo
    assert where(small, 1500) and where(jumbo, 9216)


def test_sonic_config_patch_without_jsonpatch_fails_naming_it(module_with_tool, monkeypatch):
    """jsonpatch is not in ansible-core: a switch without it fails before reading anything."""
    from ansible_collections.rdma.fabric.plugins.modules import sonic_config_patch

    class NoCommand:
        tool = ("sonic-cfggen", "config")

        @staticmethod
        def run(argv):
            pytest.fail(f"ran {argv} without jsonpatch")

    monkeypatch.setattr(sonic_config_patch, "HAS_JSONPATCH", False)
    result = module_with_tool(sonic_config_patch, NoCommand())(config={"PORT": {}})
    assert result["failed"] and "jsonpatch" in result["msg"], result


# --- roce_switch_qos_ports: all ---------------------------------------------------------


@pytest.mark.parametrize(
    ("switch_os", "listing", "ports"),
    [
        (
            "cumulus",  # NVUE GET /interface: swp ports with breakouts, mgmt, loopback, bond
            {
                "swp10": {},
                "swp2": {},
                "swp1s1": {},
                "swp1s0": {},
                "eth0": {},
                "lo": {},
                "bond0": {},
            },
            ["swp1s0", "swp1s1", "swp2", "swp10"],
        ),
        (
            "sonic",  # CONFIG_DB PORT
            {"Ethernet8": {}, "Ethernet0": {}, "Ethernet124": {}, "Ethernet4": {}},
            ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet124"],
        ),
        (
            "eos",  # ansible_net_interfaces
            {
                "Ethernet1/1": {},
                "Ethernet10/1": {},
                "Ethernet2/1": {},
                "Management1": {},
                "Port-Channel10": {},
                "Vlan100": {},
                "Loopback0": {},
            },
            ["Ethernet1/1", "Ethernet2/1", "Ethernet10/1"],
        ),
    ],
)
def test_all_ports_are_the_switchs_front_panel_ports(switch_os, listing, ports):
    assert switch_ports(switch_os, listing) == ports


def test_all_rendered_without_the_switch_is_the_switch_wide_part_only():
    ports = ["swp1", "swp51"]
    cumulus = render(DEFAULT, "cumulus", [], 100, {"cable_lengths": {"swp51": 300}})
    assert "interface" not in cumulus
    assert (
        cumulus["qos"]
        == render(DEFAULT, "cumulus", ports, 100, {"cable_lengths": {"swp51": 300}})["qos"]
    )
    assert cumulus["qos"]["pfc"]["default-global"]["cable-length"] == 300, "the longest length"

    sonic = render(DEFAULT, "sonic", [], 100, {"sonic_buffer_model": "dynamic"})
    full = render(DEFAULT, "sonic", ["Ethernet0"], 100, {"sonic_buffer_model": "dynamic"})
    per_port = {"PORT_QOS_MAP", "QUEUE", "PFC_WD", "PORT", "CABLE_LENGTH", "BUFFER_PG"}
    assert per_port <= set(full)
    assert set(sonic) == set(full) - per_port
    assert all(sonic[table] == full[table] for table in sonic)

    eos = render(DEFAULT, "eos", [], 100)
    assert "interface" not in eos and "service-profile" not in eos
    assert render(DEFAULT, "eos", ["Ethernet1/1"], 100).startswith(eos)
