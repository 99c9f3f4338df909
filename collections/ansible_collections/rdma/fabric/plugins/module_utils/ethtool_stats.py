# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ethtool -S NETDEV``: the NIC's own counters, "NIC statistics:" then "name: value"
lines. rdma_verify keeps the ones a lossless RoCE test moves: PFC pause frames per
priority (mlx5: rx_prio3_pause, tx_prio3_pause, their _duration and _transition) and
global pause (rx_pause_ctrl_phy, tx_pause_ctrl_phy), discards on the wire and per
priority (rx_discards_phy, tx_discards_phy, rx_prioN_buf_discard: no receive buffer,
rx_prioN_cong_discard: dropped by congestion), ECN marks (rx_prioN_marked), PHY errors
(rx_symbol_err_phy, rx_crc_errors_phy, link_down_events_phy) and receive-queue drops
(rx_out_of_buffer) - the names of NVIDIA's "Understanding mlx5 ethtool Counters" -
plus the per-priority PFC counters other drivers name *_pfc_* (rx_pfc_frames_prio_3)."""

from __future__ import annotations

import re

_LINE = re.compile(r"^\s*([A-Za-z0-9_.\[\]-]+):\s*(-?\d+)\s*$")
KEEP = re.compile(
    r"(pause|pfc|discard|_marked$|symbol_err|crc_err|link_down|out_of_buffer)", re.IGNORECASE
)


def parse_ethtool_stats(text, keep=KEEP):
    """{counter: int} of the kept counters; {} for no output or another format."""
    out = {}
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if match and (keep is None or keep.search(match.group(1))):
            out[match.group(1)] = int(match.group(2))
    return out
