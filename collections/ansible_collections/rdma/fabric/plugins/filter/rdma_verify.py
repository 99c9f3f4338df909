# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters the rdma_verify role is built from (module_utils/rdma_verify.py holds the logic).

verify_host_health(info, expect, host)  rdma_health_info result -> checks, rails
verify_qos_check(gathered, policy, require_hw) roce_qos state=gathered -> the RoCE QoS check
verify_report(health, records, isolation, options, stamp) -> the results document
verify_slice_refusal(group_hosts, size, group) -> why a sliced job's slice is refused, or ''

Planning and judging run in the rdma.fabric.verify_step action. Internal to the role:
their interfaces may change. The public filters are rdma.fabric.perftest_parse and
rdma.fabric.pair_rounds.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import rdma_verify, verify_scope


def _wrap(func):
    def call(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (KeyError, TypeError, ValueError) as exc:
            raise AnsibleFilterError(f"{func.__name__}: {exc}") from exc

    return call


class FilterModule:
    def filters(self):
        return {
            "verify_host_health": _wrap(rdma_verify.host_health),
            "verify_qos_check": _wrap(rdma_verify.qos_check),
            "verify_report": _wrap(rdma_verify.report),
            "verify_slice_refusal": _wrap(verify_scope.slice_refusal),
        }
