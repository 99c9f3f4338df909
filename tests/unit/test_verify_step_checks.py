"""verify_step's refusals before any test (plugins/action/verify_step.py)."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.action import verify_step


def test_a_synchronous_schedule_with_more_hosts_than_forks_is_refused(monkeypatch):
    """With rdma_verify_async false, Ansible runs forks hosts at a time: the later batch
    starts after its peers' rounds and every test between the batches fails (session
    26's review). auto goes async there; false is refused before any test."""
    monkeypatch.setattr(verify_step, "_forks", lambda: 5)
    assert verify_step._check_async("false", 5) is False
    assert verify_step._check_async("auto", 6) is True
    assert verify_step._check_async("true", 2) is True
    refused = "rdma_verify_async is false but the phase has 6 hosts and forks is 5"
    with pytest.raises(ValueError, match=refused):
        verify_step._check_async("false", 6)


def test_an_async_grid_starts_the_launchs_own_length_after_every_host_is_launched(monkeypatch):
    """The start of an async phase's grid was predicted (10 s + 2 s a batch of forks: 18 s
    for 64 hosts at forks 16) and the fleet's launch took 130 s: the hosts launched last
    lost round 0 against healthy peers. Measured now: run again once every host is
    launched, the start is 1.5 times the launch's own length (now - after) plus 10 s
    ahead: the releases go fork by fork as the launches did (48 s after a 43 s launch)."""
    monkeypatch.setattr(verify_step, "_forks", lambda: 16)
    assert verify_step.grid_start(64, now=1000.0) == (1018.0, 1000.0)  # the prediction
    assert verify_step.grid_start(64, after=1000.0, now=1130.0) == (1335.0, 1130.0)
    assert verify_step.grid_start(3, after="1000.5", now=1002.5) == (1015.5, 1002.5)
    # A controller clock stepped back between the two steps: no negative margin.
    assert verify_step.grid_start(3, after=1010.0, now=1000.0) == (1010.0, 1000.0)


def test_a_launch_too_long_for_the_launch_timeout_fails_naming_it(monkeypatch):
    """The first host launched waits from `after` to the start (2.5 launches + 10 s), and
    its async limit counts from its launch (session 43's review): a 400 s launch with
    rdma_verify_launch_timeout 900 would start the grid 1,010 s after the first launch,
    past the wait. Refused at the start step, naming the variable; 300 s fits (760 s)."""
    monkeypatch.setattr(verify_step, "_forks", lambda: 16)
    assert verify_step.grid_start(64, after=0.0, now=300.0, start_wait=900) == (760.0, 300.0)
    with pytest.raises(ValueError, match=r"rdma_verify_launch_timeout \(900 s\)"):
        verify_step.grid_start(64, after=0.0, now=400.0, start_wait=900)
    # Without start_wait (a direct call), no bound.
    assert verify_step.grid_start(64, after=0.0, now=400.0) == (1010.0, 400.0)
