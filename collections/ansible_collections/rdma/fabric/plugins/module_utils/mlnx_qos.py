# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse the output of ``mlnx_qos -i IF`` (NVIDIA mlnx-tools; MLNX_OFED / DOCA-OFED).

Every ``mlnx_qos -i IF [--set options]`` prints the full current state:

    DCBX mode: OS controlled                      (newer releases; or Firmware controlled)
    Priority trust state: dscp                    (absent on legacy ConnectX-3 releases)
    dscp2prio mapping:                            (only with trust dscp)
            prio:0 dscp:07,06,05,04,03,02,01,00,  (8 DSCPs a line; a priority may wrap
            prio:6 dscp:48,                        onto a second line)
    Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   0   0   1   0   0   0   0
    tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%
             priority:  0                         (one line per priority of the TC;
    tc: 6 ratelimit: unlimited, tsa: vendor        TCs without priorities may be absent)
             priority:  6
    (legacy releases add "skprio: N (tos: T)" lines under a TC)

Indentation and spacing vary between releases and copies: lines are matched stripped.
"""

from __future__ import annotations

import re

_TC_RE = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]+),\s*tsa:\s*(\w+)(?:,\s*bw:\s*(\d+)%)?")
_PRIO_DSCP_RE = re.compile(r"^prio:\s*(\d+)\s+dscp:\s*([0-9,\s]*)$")
_PRIORITY_RE = re.compile(r"^priority:\s*(\d+)$")


def _ints(text):
    return [int(tok) for tok in re.split(r"[,\s]+", text.strip()) if tok.isdigit()]


def parse_mlnx_qos(text):
    """The state mlnx_qos prints, as a dict.

    Keys: dcbx ("os", "firmware" or None), trust ("dscp", "pcp" or None when the
    release does not print it), dscp2prio ({dscp: priority}, {} without trust dscp),
    receive_buffer_size (list of bytes or None), max_buffer_size, cable_len,
    pfc (8 ints), prio2buffer (8 ints or None), tcs ({tc: {"ratelimit", "tsa",
    "bw", "priorities"}}), prio_tc (8 entries, None for a priority no TC lists),
    tc_tsa and tc_bw (8 entries each, None for a TC mlnx_qos does not print).
    """
    state = {
        "dcbx": None,
        "trust": None,
        "dscp2prio": {},
        "receive_buffer_size": None,
        "max_buffer_size": None,
        "cable_len": None,
        "pfc": None,
        "prio2buffer": None,
        "tcs": {},
    }
    current_tc = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _sep, value = line.partition(":")
        value = value.strip()
        if key == "DCBX mode":
            lowered = value.lower()
            state["dcbx"] = "firmware" if lowered.startswith("firmware") else "os"
        elif key == "Priority trust state":
            state["trust"] = value.lower()
        elif key == "Receive buffer size (bytes)":
            sizes, _sep, maximum = value.partition("max_buffer_size=")
            state["receive_buffer_size"] = _ints(sizes)
            state["max_buffer_size"] = int(maximum) if maximum.strip().isdigit() else None
        elif key == "Cable len":
            state["cable_len"] = int(value) if value.isdigit() else value
        elif line.startswith("enabled"):
            state["pfc"] = _ints(line[len("enabled") :])
        elif line.startswith("buffer") and not line.startswith("buffer_size"):
            state["prio2buffer"] = _ints(line[len("buffer") :])
        elif (match := _PRIO_DSCP_RE.match(line)) is not None:
            prio = int(match.group(1))
            for dscp in _ints(match.group(2)):
                state["dscp2prio"][dscp] = prio
        elif (match := _TC_RE.match(line)) is not None:
            current_tc = int(match.group(1))
            state["tcs"][current_tc] = {
                "ratelimit": match.group(2).strip(),
                "tsa": match.group(3).lower(),
                "bw": int(match.group(4)) if match.group(4) is not None else None,
                "priorities": [],
            }
        elif (match := _PRIORITY_RE.match(line)) is not None and current_tc is not None:
            state["tcs"][current_tc]["priorities"].append(int(match.group(1)))
    prio_tc = [None] * 8
    tc_tsa = [None] * 8
    tc_bw = [None] * 8
    for tc, info in state["tcs"].items():
        if 0 <= tc < 8:
            tc_tsa[tc] = info["tsa"]
            tc_bw[tc] = info["bw"] if info["bw"] is not None else 0
            for prio in info["priorities"]:
                if 0 <= prio < 8:
                    prio_tc[prio] = tc
    state["prio_tc"] = prio_tc
    state["tc_tsa"] = tc_tsa
    state["tc_bw"] = tc_bw
    return state
