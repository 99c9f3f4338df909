"""fabric_schema: one argument-spec schema for rdma_roce_policy, read by every role.

The key set is checked with ansible-core's ArgumentSpecValidator; the defaults the hand
validator fills come from the same spec; every role that reads the policy declares it.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema
from ansible_collections.rdma.fabric.plugins.module_utils.rails import normalize_rails
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (
    DEFAULTS,
    normalize_policy,
)

ROLES = (
    pathlib.Path(__file__).resolve().parents[2]
    / "collections/ansible_collections/rdma/fabric/roles"
)


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
    ("policy", "unknown"),
    [
        ({"roce_priorty": 3}, ["roce_priorty"]),
        ({"pfc_watchdog": {"enabeld": True}}, ["pfc_watchdog.enabeld"]),
        ({"pfc_watchdog": 5, "mtu": 9000}, []),  # not a dict: the hand validator's
        ({"roce_tos": 106, "tc_bw": [50, 0, 0, 50, 0, 0, 0, 0]}, []),  # derived, accepted back
    ],
)
def test_unknown_keys_come_from_the_validator(policy, unknown):
    assert fabric_schema.unknown_keys(policy) == unknown


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
        description = option.get("description") or ""
        if isinstance(description, list):
            description = " ".join(description)
        # The keys are documented once, by the filter's doc (ansible-doc -t filter).
        assert "rdma.fabric.roce_policy" in re.sub(r"\s+", " ", description), (role, entry)


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
