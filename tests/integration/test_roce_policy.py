"""rdma_roce_policy: defaults, derived values and validation, defined once.

The library checks run in-process; the role checks run the real roce_host_qos role with
ansible-playbook --check on localhost and prove that a bad policy fails in validation,
before any task that could change the host, with a message naming the key.
"""

from __future__ import annotations

import json

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    DEFAULTS,
    normalize_policy,
)
from role_play import assert_failed_before_any_change, failure_messages, tasks_run

# The bad inputs the issue names, each with the key its error must name.
BAD = [
    pytest.param({"roce_priority": 8}, "rdma_roce_policy.roce_priority", id="priority-8"),
    pytest.param({"roce_dscp": 64}, "rdma_roce_policy.roce_dscp", id="dscp-64"),
    pytest.param({"cnp_priority": 3}, "rdma_roce_policy.cnp_priority", id="roce-and-cnp-on-3"),
    pytest.param(
        {"ets_bandwidth": {0: 40, 3: 50}}, "rdma_roce_policy.ets_bandwidth", id="ets-sums-to-90"
    ),
    pytest.param(
        {"pfc_priorities": [3, 4]}, "rdma_roce_policy.pfc_priorities", id="pfc-without-roce"
    ),
    pytest.param(
        {"roce_priority": 4, "ecn_priorities": [3]},
        "rdma_roce_policy.ecn_priorities",
        id="ecn-not-on-roce",
    ),
    pytest.param({"trust": "pcp"}, "rdma_roce_policy.trust", id="trust-pcp"),
]


def test_defaults_are_nvidias_lossless_roce():
    policy, errors = normalize_policy({})
    assert errors == []
    assert (policy["roce_priority"], policy["roce_dscp"]) == (3, 26)
    assert (policy["cnp_priority"], policy["cnp_dscp"]) == (6, 48)
    assert policy["trust"] == "dscp" and policy["pfc_priorities"] == [3]
    assert policy["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert policy["tc_bw"] == [50, 0, 0, 50, 0, 0, 0, 0]
    assert policy["tc_tsa"][6] == "strict"
    assert policy["roce_tos"] == 106  # DSCP 26 << 2 | ECT(0)
    assert normalize_policy(None)[0] == policy


def test_partial_policy_keeps_the_other_defaults():
    policy, _ = normalize_policy({"roce_dscp": 24, "pfc_watchdog": {"action": "forward"}})
    assert policy["roce_dscp"] == 24 and policy["roce_tos"] == 98
    assert policy["cnp_dscp"] == 48
    assert policy["pfc_watchdog"] == {**DEFAULTS["pfc_watchdog"], "action": "forward"}


def test_pfc_ecn_and_ets_follow_the_roce_priority():
    """`roce_priority: 4` alone used to keep ECN (and the ETS share) on 3."""
    policy, errors = normalize_policy({"roce_priority": 4})
    assert errors == []
    assert policy["pfc_priorities"] == [4] and policy["ecn_priorities"] == [4]
    assert policy["prio_tc"][4] == 4 and policy["tc_bw"] == [50, 0, 0, 0, 50, 0, 0, 0]
    assert policy["roce_tos"] == 106  # ECT(0): the RoCE class is ECN-marked


@pytest.mark.parametrize("ecn", [[], [3], [3, 5]], ids=["none", "old-default", "others"])
def test_ecn_without_the_roce_priority_is_refused(ecn):
    policy, errors = normalize_policy({"roce_priority": 4, "ecn_priorities": ecn})
    assert policy is None
    assert len(errors) == 1 and errors[0].startswith("rdma_roce_policy.ecn_priorities must ")
    assert "roce_priority = 4" in errors[0]


def test_ecn_may_cover_more_than_the_roce_priority():
    policy, errors = normalize_policy({"ecn_priorities": [0, 3]})
    assert errors == [] and policy["ecn_priorities"] == [0, 3]


def test_trust_pcp_is_refused_saying_why():
    errors = normalize_policy({"trust": "pcp"})[1]
    assert len(errors) == 1 and errors[0].startswith("rdma_roce_policy.trust must be dscp")
    assert "egress-qos-map" in errors[0] and "priority 0" in errors[0]


def test_cnp_sharing_the_roce_class_is_refused():
    errors = normalize_policy({"prio_tc": [0, 0, 0, 3, 0, 0, 3, 0]})[1]
    assert any(e.startswith("rdma_roce_policy.prio_tc[6] must differ") for e in errors), errors


def test_filled_policy_round_trips_through_json():
    policy, _ = normalize_policy({"ets_bandwidth": {"0": 40, "3": 60}})
    again, errors = normalize_policy(json.loads(json.dumps(policy)))
    assert errors == [] and again == policy


@pytest.mark.parametrize(("bad", "key"), BAD)
def test_bad_input_names_the_key(bad, key):
    policy, errors = normalize_policy(bad)
    assert policy is None
    assert len(errors) == 1 and errors[0].startswith(key + " "), errors


@pytest.mark.parametrize(
    ("bad", "key"),
    [
        ({"roce_prio": 3}, "rdma_roce_policy.roce_prio"),
        ({"roce_tos": 104}, "rdma_roce_policy.roce_tos"),
        ({"trust": "l2"}, "rdma_roce_policy.trust"),
        ({"roce_priority": True}, "rdma_roce_policy.roce_priority"),
        ({"ecn_priorities": [3, 9]}, "rdma_roce_policy.ecn_priorities[1]"),
        ({"ets_bandwidth": {0: 50, 6: 50}}, "rdma_roce_policy.ets_bandwidth"),
        ({"prio_tc": [0, 0, 0]}, "rdma_roce_policy.prio_tc"),
        ({"ecn_min_threshold_kb": 2000}, "rdma_roce_policy.ecn_min_threshold_kb"),
        ({"pfc_watchdog": {"action": "panic"}}, "rdma_roce_policy.pfc_watchdog.action"),
        ({"mtu": 65535}, "rdma_roce_policy.mtu"),
    ],
)
def test_more_bad_input(bad, key):
    errors = normalize_policy(bad)[1]
    assert any(e.startswith(key + " ") for e in errors), errors


def test_filter_doc_shows_the_library_defaults(run_cli):
    """The documented defaults are the ones the code applies (one source, checked)."""
    proc = run_cli("ansible-doc", "-t", "filter", "--json", "rdma.fabric.roce_policy")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["rdma.fabric.roce_policy"]["doc"]
    keys = doc["options"]["_input"]["suboptions"]
    assert set(DEFAULTS) <= set(keys)  # and the derived keys, accepted back
    for name, spec in keys.items():
        want = DEFAULTS.get(name)
        if "suboptions" in spec:
            got = {key: sub.get("default") for key, sub in spec["suboptions"].items()}
        else:
            got = spec.get("default")
        assert got == want, name


# --- the role, for real -----------------------------------------------------------------

ROLE = "roce_host_qos"


@pytest.mark.parametrize(("bad", "key"), BAD)
def test_role_fails_before_any_change(run_play, bad, key):
    proc, output = run_play({"rdma_roce_policy": bad})
    assert_failed_before_any_change(ROLE, proc, output)
    ran = tasks_run(proc)
    assert ran[-1] == "roce_host_qos : Validate rdma_roce_policy", ran
    assert key in output, failure_messages(proc)


def test_role_refuses_lldptool_beside_mlnx_qos(run_play):
    """lldpad `configure` ran lldptool on ports mlnx_qos sets (OS mode)."""
    extra = {"roce_host_qos_lldpad": "configure", "roce_host_qos_backend": "mlnx_qos"}
    proc, output = run_play(extra)
    assert_failed_before_any_change(ROLE, proc, output)
    ran = tasks_run(proc)
    assert ran[-1] == "roce_host_qos : Validate roce_host_qos_lldpad against the backend", ran
    assert "mlnx_qos must not be used alongside another DCBX tool" in output


def test_firmware_dcbx_is_refused_only_where_the_host_sets_dcb():
    """nic_firmware_dcbx: true has the firmware negotiate DCB; roce_host_qos puts every RoCE
    port in DCBX host mode. On a host it manages the pair is refused, named."""
    from ansible_collections.rdma.fabric.plugins.filter.roce_policy_errors import (
        roce_policy_errors,
    )

    assert roce_policy_errors({"nic_firmware_dcbx": True}) == []
    [error] = roce_policy_errors({"nic_firmware_dcbx": True}, host_qos=True)
    assert error.startswith("rdma_roce_policy.nic_firmware_dcbx must not be true")
    assert "DCBX host mode" in error and "roce_hosts" in error
    for value in (False, None, "no"):
        assert roce_policy_errors({"nic_firmware_dcbx": value}, host_qos=True) == []


def test_role_refuses_firmware_dcbx(run_play):
    proc, output = run_play({"rdma_roce_policy": {"nic_firmware_dcbx": True}})
    assert_failed_before_any_change(ROLE, proc, output)
    ran = tasks_run(proc)
    assert ran[-1] == "roce_host_qos : Validate rdma_roce_policy", ran
    assert "rdma_roce_policy.nic_firmware_dcbx must not be true" in output
