# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What rdma_nic derives for the ConnectX firmware: the settings the RoCE policy asks of
both ports, and the firmware images a host gets from the controller's catalog."""

from __future__ import annotations

PORTS = ("P1", "P2")


def cc_prio_mask(priorities):
    """DCQCN's priority mask: bit N set for priority N (firmware default 255, all)."""
    return sum(1 << int(p) for p in set(priorities or []))


def policy_settings(policy, dcbx=True):
    """mlxconfig settings of both ports from a normalized rdma_roce_policy: CNP DSCP and
    802.1p priority, DCQCN on the ECN priorities only, and (dcbx) the firmware's DCBX
    agent when the policy says (nic_firmware_dcbx not None)."""
    mask = cc_prio_mask(policy.get("ecn_priorities"))
    out = {}
    for port in PORTS:
        out[f"CNP_DSCP_{port}"] = int(policy["cnp_dscp"])
        out[f"CNP_802P_PRIO_{port}"] = int(policy["cnp_priority"])
        out[f"ROCE_CC_PRIO_MASK_{port}"] = mask
    if dcbx and policy.get("nic_firmware_dcbx") is not None:
        for port in PORTS:
            out[f"LLDP_NB_DCBX_{port}"] = policy["nic_firmware_dcbx"]
    return out


def host_images(images, devices, targets):
    """Paths of the catalog images a host gets: those made for its target devices'
    PSIDs (sysfs board_id) when every target's PSID is known, else every image (a target
    given by PCI address, a device without board_id)."""
    mine = [d for d in devices or [] if d.get("name") in targets]
    known = sum(1 for d in mine if d.get("board_id")) == len(targets or [])
    psids = {d["board_id"] for d in mine if d.get("board_id")}
    return [i["path"] for i in images or [] if not known or i.get("psid") in psids]
