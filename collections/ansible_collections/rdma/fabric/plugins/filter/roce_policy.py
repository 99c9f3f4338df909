# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy

DOCUMENTATION = r"""
---
name: roce_policy
short_description: Validate the fabric-wide lossless RoCE policy and fill its defaults
version_added: 0.1.0
author: rdma-fabric contributors
description:
  - Takes C(rdma_roce_policy) (only the keys a site changes; C(none) or C({}) for all
    defaults) and returns the complete policy, with the derived values C(prio_tc),
    C(tc_tsa), C(tc_bw) and C(roce_tos) filled in.
  - Fails naming every bad key, for example "rdma_roce_policy.roce_priority must be a
    priority (0-7); got 8". M(rdma.fabric.roce_qos) and the host and switch roles use
    the same code (C(plugins/module_utils/roce_policy.py)), so they cannot disagree.
  - Defaults follow NVIDIA's published lossless RoCEv2 configuration.
  - The companion filter C(rdma.fabric.roce_policy_errors) returns the list of errors
    instead of failing (empty when the policy is good), for C(assert) tasks.
positional: _input
options:
  _input:
    description: The C(rdma_roce_policy) dictionary.
    type: dict
    required: true
    suboptions:
      roce_priority:
        description:
          - 802.1p priority (0-7) of RoCE traffic.
        type: int
        default: 3
      roce_dscp:
        description:
          - DSCP (0-63) of RoCE traffic.
          - 48 with I(cnp_dscp) 26 (the RoCE/CNP convention swapped) is refused.
        type: int
        default: 26
      cnp_priority:
        description:
          - Priority (0-7) of congestion notification packets; must differ
            from C(roce_priority).
        type: int
        default: 6
      cnp_dscp:
        description:
          - DSCP (0-63) of congestion notification packets; must differ from
            C(roce_dscp).
        type: int
        default: 48
      trust:
        description:
          - Which marking classifies received packets. Only C(dscp) - C(pcp)
            is refused with the reason - it needs every RoCE frame VLAN-tagged
            with the RoCE priority (a VLAN egress-qos-map on each host), which
            these roles do not configure, so RoCE would travel untagged in
            priority 0 (lossy).
        type: str
        choices:
          - dscp
        default: dscp
      pfc_priorities:
        description:
          - Priorities (0-7) with PFC; only the RoCE priority may be listed
            ([] is lossy RoCE). Unset, C([roce_priority]).
        type: list
        elements: int
      ets_bandwidth:
        description:
          - Percent of bandwidth per ETS traffic class, summing to 100. Every
            traffic class not listed is strict priority. The RoCE traffic
            class needs a share.
          - 'Unset, 50 for class 0 and 50 for the RoCE priority''s class (C({0:
            50, 3: 50}) with the other defaults).'
        type: dict
      prio_tc:
        description:
          - Eight traffic classes (0-7), one per priority. Unset, RoCE and
            CNP priorities keep their own class (same number) and every other
            priority uses class 0.
        type: list
        elements: int
      ecn_priorities:
        description:
          - Priorities ECN-marked by switches and reacting to it on hosts
            (DCQCN). Unset, C([roce_priority]); a list without the RoCE priority
            is refused (RoCE without ECN has no congestion control).
        type: list
        elements: int
      ecn_min_threshold_kb:
        description:
          - Switch queue depth (1-1048576 KB) where ECN marking starts; at
            most C(ecn_max_threshold_kb).
        type: int
        default: 150
      ecn_max_threshold_kb:
        description:
          - Switch queue depth (1-1048576 KB) where marking reaches C(ecn_mark_probability).
        type: int
        default: 1500
      ecn_mark_probability:
        description:
          - Marking probability (1-100 percent) at the maximum threshold.
        type: int
        default: 100
      pfc_watchdog:
        description:
          - Switch PFC watchdog; keys not given keep their defaults.
        type: dict
        default: {}
        suboptions:
          enabled:
            description:
              - Run the PFC watchdog on the switches' lossless queues.
            type: bool
            default: true
          detection_time_ms:
            description:
              - Milliseconds (1-60000) a queue may stay paused before the
                watchdog acts; also the hosts' PFC storm prevention timeout
                unless I(host_pfc_storm_timeout_ms) is set (then 80-8000).
                Each switch OS narrows the range (checked per OS).
            type: int
            default: 200
          restoration_time_ms:
            description:
              - Milliseconds (1-60000) without pause frames before the queue
                is restored.
            type: int
            default: 200
          action:
            description:
              - What the watchdog does to a stormed queue (Cumulus takes C(drop)
                only, EOS C(drop) or C(alert)).
            type: str
            choices:
              - drop
              - forward
              - alert
            default: drop
      mtu:
        description:
          - IP MTU of RoCE interfaces (1280-9216, EOS ports at most 9214).
            The switches' RoCE ports get the same.
        type: int
        default: 9000
      cable_length_m:
        description:
          - The fabric's cable length (1-10000 m) for PFC headroom, one value
            for both ends - the switches' (the default of roce_switch_qos_cable_length)
            and the hosts' (unless I(host_cable_length_m) sets them apart;
            a host NIC takes at most 999 m, so a longer one needs I(host_cable_length_m)).
            100 m is NVIDIA's RoCE default; the NIC's own (mlx5 - 7 m) is
            not kept.
        type: int
        default: 100
      host_cable_length_m:
        description:
          - Cable length (1-999 m, mlx5 ignores 1000 and above) the host NIC
            sizes its PFC headroom for (C(mlnx_qos --cable_len), or C(dcb
            pfc set dev IF delay N) on the dcb backend, which mlx5 takes as
            the cable length). Unset follows I(cable_length_m).
        type: int
      host_prio2buffer:
        description:
          - Eight receive-buffer numbers (0-7), one per priority (C(mlnx_qos
            --prio2buffer)). The RoCE priority needs a buffer no lossy priority
            shares. Unset leaves the NIC's.
        type: list
        elements: int
      host_buffer_size:
        description:
          - Eight receive-buffer sizes in bytes (C(mlnx_qos --buffer_size));
            the RoCE priority's buffer needs a size. Unset leaves the NIC's.
        type: list
        elements: int
      nic_firmware_dcbx:
        description:
          - DCBX in the ConnectX firmware (C(LLDP_NB_DCBX_P1/P2), set by the
            rdma_nic role, effective after the next boot). Unset leaves the
            card's setting.
          - C(false) - the firmware never negotiates DCB with a switch, so
            the host's settings hold from power-on (roce_host_qos takes each
            port to DCBX host mode at run time and at boot either way).
          - C(true) - the firmware runs DCBX, for NICs whose DCB a DCBX switch
            is meant to drive. Refused on hosts roce_host_qos manages (C(roce_hosts)),
            because it puts every RoCE port in DCBX host mode, the opposite.
        type: bool
        version_added: 0.3.0
      host_pfc_storm_timeout_ms:
        description:
          - The hosts' PFC storm prevention timeout (C(ethtool --set-tunable
            IF pfc-prevention-tout N)), 0 (off) or 80-8000 ms, the range mlx5
            accepts.
          - Unset derives it from I(pfc_watchdog.detection_time_ms) (0 when
            the watchdog is off), which must then be 80-8000 ms; set it to
            keep the hosts apart.
        type: int
      wred_drop:
        description:
          - Also drop non-ECN-capable packets early (WRED) in the ECN classes.
            C(false) marks ECN-capable packets only, on Cumulus (C(red)) and
            EOS (C(random-detect drop)). A boolean; a string such as C("yes")
            is refused.
          - SONiC keeps the WRED drop of its platform profile C(AZURE_LOSSLESS)
            (C(config apply-patch) 202205-202505 may change only its green
            thresholds and probability); the role warns where it differs from
            this value.
        type: bool
        default: false
      roce_tos:
        description:
          - Derived from the policy; accepted back only equal to what it derives.
            RDMA-CM ToS (DSCP << 2, ECT(0)).
        type: int
      tc_tsa:
        description:
          - Derived from the policy; accepted back only equal to what it derives.
            ets or strict, per traffic class.
        type: list
        elements: str
      tc_bw:
        description:
          - Derived from the policy; accepted back only equal to what it derives.
            ETS percent per traffic class.
        type: list
        elements: int
      dscp_priority:
        description:
          - Derived from the policy; accepted back only equal to what it derives.
            The priority of each of the 64 DSCPs.
        type: list
        elements: int
"""

EXAMPLES = r"""
- name: Fill and check the policy once per play
  ansible.builtin.set_fact:
    roce_policy: "{{ rdma_roce_policy | default({}) | rdma.fabric.roce_policy }}"

- name: Fail with every problem named
  ansible.builtin.assert:
    that: rdma_roce_policy | rdma.fabric.roce_policy_errors | length == 0
    fail_msg: "{{ rdma_roce_policy | rdma.fabric.roce_policy_errors | join('; ') }}"
"""

RETURN = r"""
_value:
  description:
    - The complete policy, plus C(prio_tc), C(tc_tsa) (ets or strict per traffic class),
      C(tc_bw) (8 percentages), C(roce_tos) (DSCP << 2, plus ECT(0) when the RoCE
      priority is ECN-marked; 106 by default) and C(host_pfc_storm_timeout_ms) (the
      hosts' PFC storm prevention, ethtool pfc-prevention-tout - the PFC watchdog's
      detection time, 0 when it is off, unless set) and C(dscp_priority) (64 priorities,
      one per DSCP - the RoCE and CNP DSCPs on theirs, every other DSCP on priority 0).
  type: dict
"""


def roce_policy(policy):
    filled, errors = normalize_policy(policy)
    if errors:
        raise AnsibleFilterError("; ".join(errors))
    return filled


class FilterModule:
    def filters(self):
        return {"roce_policy": roce_policy}
