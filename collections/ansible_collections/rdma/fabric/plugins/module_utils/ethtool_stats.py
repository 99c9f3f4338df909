# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``ethtool -S NETDEV``: the NIC's own counters, "NIC statistics:" then "name: value"
lines. rdma_verify keeps the ones a lossless RoCE test moves: PFC pause frames per
priority (mlx5: rx_prio3_pause, tx_prio3_pause, their _duration and _transition) and
global pause (rx_pause_ctrl_phy, tx_pause_ctrl_phy), and discards on the wire
(rx_discards_phy, tx_discards_phy), plus the per-priority PFC counters other drivers name
*_pfc_* (e.g. rx_pfc_frames_prio_3)."""

from __future__ import annotations

import re

_LINE = re.compile(r"^\s*([A-Za-z0-9_.\[\]-]+):\s*(-?\d+)\s*$")
KEEP = re.compile(r"(pause|pfc|discards_phy)", re.IGNORECASE)


def parse_ethtool_stats(text, keep=KEEP):
    """{counter: int} of the kept counters; {} for no output or another format."""
    out = {}
    for line in (text or "").splitlines():
        match = _LINE.match(line)
        if match and (keep is None or keep.search(match.group(1))):
            out[match.group(1)] = int(match.group(2))
    return out
