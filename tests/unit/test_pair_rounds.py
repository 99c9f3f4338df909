"""rdma.fabric.pair_rounds: schedule properties for N = 1..64 (hypothesis), and isolate."""

from __future__ import annotations

import itertools

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.filter.pair_rounds import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.pair_rounds import (
    isolate_rounds,
    pair_rounds,
)
from hypothesis import given
from hypothesis import strategies as st

hosts_lists = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=8),
    min_size=1,
    max_size=64,
    unique=True,
)


def no_host_twice_in_a_round(rounds):
    for pairs in rounds:
        members = [h for pair in pairs for h in pair]
        assert len(members) == len(set(members)), pairs


@given(hosts_lists)
def test_full_every_pair_exactly_once(hosts):
    rounds = pair_rounds(hosts, mode="full")
    pairs = [frozenset(p) for pairs in rounds for p in pairs]
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == {frozenset(p) for p in itertools.combinations(hosts, 2)}
    assert all(len(p) == 2 for p in pairs)
    no_host_twice_in_a_round(rounds)


@given(hosts_lists)
def test_full_round_count(hosts):
    n = len(hosts)
    expected = 0 if n < 2 else (n - 1 if n % 2 == 0 else n)
    rounds = pair_rounds(hosts, mode="full")
    assert len(rounds) == expected
    # every round is as full as it can be: n // 2 disjoint pairs
    assert all(len(pairs) == n // 2 for pairs in rounds)


@given(hosts_lists, st.integers(min_value=2, max_value=3))
def test_quick_bounded_and_every_host_tested(hosts, k):
    rounds = pair_rounds(hosts, mode="quick", rounds=k)
    assert len(rounds) <= k
    no_host_twice_in_a_round(rounds)
    tested = {h for pairs in rounds for p in pairs for h in p}
    assert tested == (set(hosts) if len(hosts) > 1 else set())
    pairs = [frozenset(p) for pairs in rounds for p in pairs]
    assert len(pairs) == len(set(pairs)), "a host meets different peers in every round"


@given(hosts_lists)
def test_pairs_keep_the_input_order(hosts):
    position = {h: i for i, h in enumerate(hosts)}
    for pairs in pair_rounds(hosts):
        assert all(position[a] < position[b] for a, b in pairs)


@given(
    st.lists(st.integers(0, 200), unique=True, max_size=30),
    st.lists(st.integers(201, 400), unique=True, max_size=30),
)
def test_isolate_pairs_each_suspect_with_a_good_host(suspects, good):
    rounds = isolate_rounds(suspects, good)
    no_host_twice_in_a_round(rounds)
    pairs = [p for pairs in rounds for p in pairs]
    if not good:
        assert rounds == []
        return
    assert [s for s, _ in pairs] == suspects
    assert all(g in good for _, g in pairs)


def test_the_filter_and_its_errors():
    pair_rounds_filter = FilterModule().filters()["pair_rounds"]
    assert pair_rounds_filter(["a", "b", "c", "d"], mode="quick") == pair_rounds(
        ["a", "b", "c", "d"], "quick"
    )
    with pytest.raises(AnsibleFilterError, match="repeated: a"):
        pair_rounds_filter(["a", "b", "a"])
    with pytest.raises(AnsibleFilterError, match="mode must be one of full, quick"):
        pair_rounds_filter(["a", "b"], mode="ring")
    with pytest.raises(AnsibleFilterError, match="rounds >= 2"):
        pair_rounds_filter(["a", "b"], mode="quick", rounds=1)


def test_small_examples():
    assert pair_rounds([]) == [] and pair_rounds(["a"]) == []
    assert pair_rounds(["a", "b"]) == [[["a", "b"]]]
    assert len(pair_rounds(["a", "b", "c"])) == 3
