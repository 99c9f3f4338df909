# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_nic's derived values as filters (module_utils/nic_policy.py)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.nic_policy import (
    host_images,
    policy_settings,
)


def rdma_nic_policy_settings(policy, dcbx=True):
    return policy_settings(dict(policy), dcbx=bool(dcbx))


def rdma_nic_host_images(images, devices, targets):
    return host_images(list(images or []), list(devices or []), list(targets or []))


class FilterModule:
    def filters(self):
        return {
            "rdma_nic_policy_settings": rdma_nic_policy_settings,
            "rdma_nic_host_images": rdma_nic_host_images,
        }
