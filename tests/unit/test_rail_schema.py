"""rdma_rails: one argument-spec schema (fabric_schema.RAIL_OPTIONS), the same verdicts.

ansible-core's ArgumentSpecValidator checks the keys, types and choices of every rail
and P_Key child; rails.normalize_rails keeps the rules that compare fields. The plans of
rails_corpus fill and are refused as the hand validator before the schema did
(tests/fixtures/rails/hand_validator.json), and every role that reads rdma_rails
declares the schema's options.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest
import rails_corpus as corpus
import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema
from ansible_collections.rdma.fabric.plugins.module_utils.rails import normalize_rails

REPO = pathlib.Path(__file__).resolve().parents[2]
HAND_VALIDATOR = json.loads((REPO / "tests/fixtures/rails/hand_validator.json").read_text())

# Bad plans whose message is knowingly not the hand validator's (the changelog fragment
# says so): index in rails_corpus.BAD -> the message now.
CHANGED = {
    # The hand validator crashed (ValueError) on a gateway that is no address.
    71: ["rdma_rails[0] (r0).gateway must be an IPv4 address or 'peer'; got 'nope'"],
    # A subnet that is not a string: refused by its type, without ipaddress's words about
    # the string the hand validator made of it.
    57: ["rdma_rails[0] (r0).subnet must be an IPv4 network in CIDR form; got 5"],
    58: ["rdma_rails[0] (r0).subnet must be an IPv4 network in CIDR form; got ['10.0.0.0/24']"],
    62: ["rdma_rails[0] (r0).subnet6 must be an IPv6 network in CIDR form; got 5"],
}


# Keys a filled rail has gained since the hand validator, with the value of a rail that
# does not set them (no plan of rails_corpus does): compared, then left out.
ADDED = {"gateway6": None}


def _paths(errors):
    """The paths errors name, the rail's name in parentheses left out."""
    out = []
    for error in errors:
        match = re.match(r"^(rdma_rails(?:\[\d+\])?)(?: \([^)]*\))?((?:\.\w+|\[\d+\])*)", error)
        out.append(match.group(1) + match.group(2))
    return sorted(out)


@pytest.mark.parametrize(("index", "plan"), list(enumerate(corpus.VALID)))
def test_valid_plans_fill_as_before_the_schema(index, plan):
    filled, errors = normalize_rails(*plan)
    assert errors == []
    for rail in filled:
        assert {key: rail.pop(key) for key in ADDED} == ADDED
    assert json.loads(json.dumps(filled)) == HAND_VALIDATOR["valid"][index]


@pytest.mark.parametrize(("index", "plan"), list(enumerate(corpus.BAD)))
def test_bad_plans_refused_as_before_the_schema(index, plan):
    filled, errors = normalize_rails(*plan)
    assert filled is None
    before = HAND_VALIDATOR["bad"][index]
    if isinstance(before, str):  # the hand validator crashed: now a refusal
        assert errors == CHANGED[index], errors
        return
    assert _paths(errors) == _paths(before), errors
    assert errors == CHANGED.get(index, before)


def test_a_gateway_that_is_no_address_is_refused_not_a_crash():
    """The hand validator appended the error, then parsed the gateway again and raised
    ValueError out of the rail_plan action."""
    rail = {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "nope"}
    filled, errors = normalize_rails([rail])
    assert filled is None
    assert errors == ["rdma_rails[0] (r0).gateway must be an IPv4 address or 'peer'; got 'nope'"]


ROLES = REPO / "collections/ansible_collections/rdma/fabric/roles"


def _reads_rails(role):
    for sub in ("tasks", "templates", "vars", "defaults", "handlers"):
        for path in (role / sub).rglob("*"):
            text = path.read_text(errors="replace") if path.is_file() else ""
            if re.search(r"\brdma_rails\b(?!_)", text) and "{{" in text:
                return True
    return False


RAIL_READERS = sorted(p.name for p in ROLES.iterdir() if p.is_dir() and _reads_rails(p))


def _entries(role):
    specs = yaml.safe_load((ROLES / role / "meta/argument_specs.yml").read_text())
    return specs["argument_specs"].items()


def test_the_rails_have_readers():
    assert {"rdma_rails", "rdma_verify", "roce_switch_qos"} <= set(RAIL_READERS), RAIL_READERS


@pytest.mark.parametrize("role", RAIL_READERS)
def test_every_role_that_reads_the_rails_declares_the_schema(role):
    """Each entry point declares rdma_rails with the schema's keys (written by
    tests/harness/fabric_spec.py), a P_Key child's too."""
    for entry, spec in _entries(role):
        option = spec.get("options", {}).get("rdma_rails")
        assert option is not None, f"{role} entry point {entry} does not declare rdma_rails"
        assert (option["type"], option["elements"]) == ("list", "dict")
        assert set(option.get("options", {})) == set(fabric_schema.RAIL_OPTIONS), (role, entry)
        pkeys = option["options"]["pkeys"]["options"]
        assert set(pkeys) == set(fabric_schema.RAIL_OPTIONS["pkeys"]["options"]), (role, entry)
        assert all("default" not in o for o in option["options"].values()), (role, entry)


# Valid plans a role's argument spec refuses before its tasks: ansible-core's int cannot
# take a quoted empty string, which the rail plan reads as unset. Index in corpus.VALID.
ROLE_SPEC_REFUSES = {50: "mtu"}


@pytest.mark.parametrize("role", RAIL_READERS)
def test_a_role_spec_takes_every_plan_the_rail_plan_takes(role):
    """ansible-core checks a role's argument spec before its tasks: a plan normalize_rails
    takes (a key left blank, link_layer InfiniBand, a P_Key child by its bare name) must
    pass it too."""
    for entry, spec in _entries(role):
        validator = ArgumentSpecValidator({"rdma_rails": spec["options"]["rdma_rails"]})
        for index, (rails, _mtu) in enumerate(corpus.VALID):
            if rails in (None, ""):
                continue
            result = validator.validate({"rdma_rails": rails})
            if index in ROLE_SPEC_REFUSES:
                assert [
                    f"argument '{ROLE_SPEC_REFUSES[index]}'" in m for m in result.error_messages
                ] == [True]
                continue
            assert not result.error_messages, (role, entry, index, result.error_messages)


def test_a_role_spec_refuses_an_unknown_rail_key():
    ((_, spec),) = _entries("rdma_rails")
    validator = ArgumentSpecValidator({"rdma_rails": spec["options"]["rdma_rails"]})
    rail = {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "vlan": 5}
    result = validator.validate({"rdma_rails": [rail]})
    assert result.unsupported_parameters == {("rdma_rails", "vlan")}
