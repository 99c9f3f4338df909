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
