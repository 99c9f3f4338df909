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
