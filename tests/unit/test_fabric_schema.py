"""fabric_schema: one argument-spec schema for rdma_roce_policy, read by every role.

The key set is checked with ansible-core's ArgumentSpecValidator; the defaults the hand
validator fills come from the same spec; every role that reads the policy declares it.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest
import roce_policy_corpus as corpus
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema
from ansible_collections.rdma.fabric.plugins.module_utils.rails import normalize_rails
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    DEFAULTS,
    normalize_policy,
)

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLES = REPO / "collections/ansible_collections/rdma/fabric/roles"
FIXTURES = REPO / "tests/fixtures"
HARNESS = REPO / "tests/harness"


def test_defaults_are_the_schema_defaults():
    assert fabric_schema.defaults(fabric_schema.ROCE_POLICY_OPTIONS) == DEFAULTS
    assert DEFAULTS["pfc_watchdog"] == {
        "enabled": True,
        "detection_time_ms": 200,
        "restoration_time_ms": 200,
        "action": "drop",
    }


def test_schema_is_a_valid_argument_spec_and_takes_its_defaults():
    # ArgumentSpecValidator refuses a malformed spec (bad type, choices without the
    # default) only when validating: the defaults must validate with no error.
    result = ArgumentSpecValidator(fabric_schema.ROCE_POLICY_OPTIONS).validate(DEFAULTS)
    assert not result.errors.errors, [str(e) for e in result.errors.errors]


@pytest.mark.parametrize(
    ("policy", "problems"),
    [
        ({"roce_priorty": 3}, [("roce_priorty", "unknown")]),
        ({"pfc_watchdog": {"enabeld": True}}, [("pfc_watchdog.enabeld", "unknown")]),
        ({"pfc_watchdog": 5, "mtu": 9000}, [("pfc_watchdog", "type")]),  # not a dict
        ({"roce_tos": 106, "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]}, []),  # derived, accepted back
        ({"roce_priority": "x"}, [("roce_priority", "type")]),
        ({"pfc_watchdog": {"enabled": "maybe"}}, [("pfc_watchdog.enabled", "type")]),
        ({"ecn_priorities": [3, "x"]}, [("ecn_priorities[1]", "elements")]),
        ({"trust": "pcp"}, [("trust", "choices")]),
        ({"pfc_watchdog": {"action": "panic"}}, [("pfc_watchdog.action", "choices")]),
        ({"wred_drop": "yes"}, [("wred_drop", "type")]),
    ],
)
def test_the_validator_finds_keys_types_and_choices(policy, problems):
    """Each kind of ansible-core error is read back to the path it names: a change of
    ansible-core's wording fails here (then kind "error", the raw message) first."""
    _, found = fabric_schema.check_policy(policy)
    assert [(path, kind) for path, kind, _ in found] == problems


def test_the_validator_fills_and_coerces():
    params, problems = fabric_schema.check_policy(
        {"roce_priority": "4", "pfc_watchdog": {"enabled": "no"}, "mtu": None}
    )
    assert problems == []
    assert params["roce_priority"] == 4 and params["mtu"] == 9000
    assert params["pfc_watchdog"] == {**DEFAULTS["pfc_watchdog"], "enabled": False}


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"roce_priority": "x"}, "rdma_roce_policy.roce_priority must be an integer; got 'x'"),
        ({"ecn_priorities": [3, "x"]}, "rdma_roce_policy.ecn_priorities[1] must be an integer"),
        ({"pfc_priorities": 3}, "rdma_roce_policy.pfc_priorities must be a list of integers"),
        ({"pfc_watchdog": 5}, "rdma_roce_policy.pfc_watchdog must be a dictionary; got 5"),
        ({"pfc_watchdog": {"action": "x"}}, "rdma_roce_policy.pfc_watchdog.action must be one of"),
        ({"pfc_watchdog": {"x": 1}}, "rdma_roce_policy.pfc_watchdog.x is not a watchdog key"),
        ({"trust": "pcp"}, "rdma_roce_policy.trust must be dscp: trust pcp needs"),
        ({"wred_drop": "yes"}, "rdma_roce_policy.wred_drop must be true or false (a boolean"),
        ({"nic_firmware_dcbx": 1}, "rdma_roce_policy.nic_firmware_dcbx must be true, false or"),
    ],
)
def test_schema_errors_name_the_path_once(policy, message):
    errors = normalize_policy(policy)[1]
    assert len(errors) == 1 and errors[0].startswith(message), errors


HAND_VALIDATOR = json.loads((FIXTURES / "roce_policy/hand_validator.json").read_text())


@pytest.mark.parametrize(("index", "policy"), list(enumerate(corpus.VALID)))
def test_valid_policies_fill_as_before_the_validator(index, policy):
    filled, errors = normalize_policy(policy)
    assert errors == []
    assert json.loads(json.dumps(filled)) == HAND_VALIDATOR["valid"][index]


@pytest.mark.parametrize(("index", "policy"), list(enumerate(corpus.BAD)))
def test_bad_policies_refused_naming_the_keys_as_before(index, policy):
    filled, errors = normalize_policy(policy)
    assert filled is None
    named = sorted({re.match(r"^(rdma_roce_policy[^ ]*)", e).group(1) for e in errors})
    assert named == HAND_VALIDATOR["bad"][index], errors


def test_role_specs_and_filter_doc_are_the_schema():
    """Each role's rdma_roce_policy options and the filter's doc are written from the
    schema (tests/harness/fabric_spec.py); an edit to one by hand fails here."""
    proc = subprocess.run(
        [sys.executable, str(HARNESS / "fabric_spec.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_unknown_key_message_names_the_variable():
    filled, errors = normalize_policy({"roce_priorty": 3})
    assert filled is None
    assert errors[0].startswith("rdma_roce_policy.roce_priorty is not a policy key")


def _reads_policy(role):
    for sub in ("tasks", "templates", "vars", "defaults", "handlers"):
        for path in (role / sub).rglob("*"):
            if path.is_file() and "rdma_roce_policy" in path.read_text(errors="replace"):
                return True
    return False


POLICY_READERS = sorted(p.name for p in ROLES.iterdir() if p.is_dir() and _reads_policy(p))


def test_the_policy_has_readers():
    assert {"rdma_nic", "rdma_rails"} <= set(POLICY_READERS), POLICY_READERS


@pytest.mark.parametrize("role", POLICY_READERS)
def test_every_role_that_reads_the_policy_declares_it(role):
    role_dir = ROLES / role
    specs = yaml.safe_load((role_dir / "meta/argument_specs.yml").read_text())
    for entry, spec in specs["argument_specs"].items():
        option = spec.get("options", {}).get("rdma_roce_policy")
        assert option is not None, f"{role} entry point {entry} does not declare rdma_roce_policy"
        assert option["type"] == "dict"
        assert option.get("default") == {}
        # The keys: the schema's (written by tests/harness/fabric_spec.py).
        assert set(option.get("options", {})) == set(fabric_schema.ROCE_POLICY_OPTIONS) | set(
            fabric_schema.ROCE_POLICY_DERIVED_OPTIONS
        ), (role, entry)


def test_rail_schema_is_a_valid_argument_spec():
    rail = {
        "name": "rail0",
        "netdev": "ens1",
        "link_layer": "infiniband",
        "ipoib_mode": "connected",
        "pkeys": [{"partition": "tenant-a", "mtu": 4}],
    }
    result = ArgumentSpecValidator(fabric_schema.RAIL_OPTIONS).validate(rail)
    assert not result.errors.errors, [str(e) for e in result.errors.errors]
    assert result.validated_parameters["port"] == 1


def test_rails_unknown_keys_named_from_the_schema():
    filled, errors = normalize_rails(
        [{"name": "rail0", "netdev": "ens1", "subnet": "10.100.0.0/16", "vlan": 5}]
    )
    assert filled is None or errors
    assert any(e.startswith("rdma_rails[0]") and "unknown keys ['vlan']" in e for e in errors)
    assert "leaf_group" in next(e for e in errors if "unknown keys" in e)


@pytest.mark.parametrize("role", POLICY_READERS)
def test_a_role_spec_takes_every_policy_the_filter_takes(role):
    """ansible-core checks a role's argument spec before its tasks: a policy the filter
    takes (a key left blank in group_vars, mtu:, is unset) must pass it too."""
    specs = yaml.safe_load((ROLES / role / "meta/argument_specs.yml").read_text())
    for entry, spec in specs["argument_specs"].items():
        option = spec["options"]["rdma_roce_policy"]
        validator = ArgumentSpecValidator({"rdma_roce_policy": option})
        for policy in corpus.VALID:
            if policy is None:
                continue
            result = validator.validate({"rdma_roce_policy": policy})
            assert not result.error_messages, (role, entry, policy, result.error_messages)
