# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse ``dcb -j`` (iproute2) output: app, pfc and ets objects of one netdev.

JSON shapes (iproute2 dcb_app.c, dcb_pfc.c, dcb_ets.c; kernel mlxsw selftests):

    dcb -j app show dev IF dscp-prio   {"dscp_prio": [[8, 0, " "], [16, 1, " "]]}
        (released tools print [dscp, prio, " "] triples: the separator leaks into
        the JSON; pairs and {"dscp": D, "prio": P} objects are accepted too)
    dcb -j pfc show dev IF             {"pfc_cap": 8, "macsec_bypass": false, "delay": 0,
                                        "prio_pfc": [false, false, false, true, ...]}
    dcb -j ets show dev IF             {"willing": false, "ets_cap": 8, "cbs": false,
                                        "tc_bw": [50, 0, ...], "tc_tsa": ["ets", ...],
                                        "prio_tc": [0, 0, 0, 3, ...], ...}

Before iproute2 5.11 was released (v1 of the series) arrays were printed as objects
with string indices ({"0": false, ...}) and keys with dashes ("tc-tsa"): both are read.
A netdev without DCB makes dcb exit 1 with "Attribute read: Operation not supported".
"""

from __future__ import annotations

import json

# /etc/iproute2/rt_dsfield names dcb prints without -N (CSn, AFxy, EF).
_DSCP_NAMES = {f"CS{n}": 8 * n for n in range(8)}
_DSCP_NAMES.update({f"AF{x}{y}": 8 * x + 2 * y for x in range(1, 5) for y in range(1, 4)})
_DSCP_NAMES["EF"] = 46


def _load(text):
    text = (text or "").strip()
    if not text:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"dcb printed JSON that is not an object: {text[:80]!r}")
    return {key.replace("-", "_"): value for key, value in data.items()}


def _array(value):
    """A JSON array, or an object with string indices (pre-release format), as a list."""
    if isinstance(value, dict):
        return [value[key] for key in sorted(value, key=int)]
    return list(value or [])


def _bool(value):
    if isinstance(value, str):
        return value.lower() in ("on", "true", "1")
    return bool(value)


def dscp_number(value):
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    return _DSCP_NAMES[text.upper()]


def parse_app(text):
    """{dscp: [priorities]} from ``dcb -j app show dev IF [dscp-prio]``."""
    out = {}
    for entry in _array(_load(text).get("dscp_prio")):
        if isinstance(entry, dict):
            dscp, prio = entry["dscp"], entry["prio"]
        else:
            dscp, prio = entry[0], entry[1]
        out.setdefault(dscp_number(dscp), set()).add(int(prio))
    return {dscp: sorted(prios) for dscp, prios in sorted(out.items())}


def parse_pfc(text):
    """pfc_cap, delay, macsec_bypass and prio_pfc (8 ints) from ``dcb -j pfc show``."""
    data = _load(text)
    return {
        "pfc_cap": data.get("pfc_cap"),
        "delay": data.get("delay"),
        "macsec_bypass": _bool(data["macsec_bypass"]) if "macsec_bypass" in data else None,
        "prio_pfc": [int(_bool(v)) for v in _array(data.get("prio_pfc"))],
    }


def parse_ets(text):
    """willing, ets_cap, prio_tc, tc_tsa and tc_bw from ``dcb -j ets show``."""
    data = _load(text)
    return {
        "willing": _bool(data["willing"]) if "willing" in data else None,
        "ets_cap": data.get("ets_cap"),
        "prio_tc": [int(v) for v in _array(data.get("prio_tc"))],
        "tc_tsa": [str(v).lower() for v in _array(data.get("tc_tsa"))],
        "tc_bw": [int(v) for v in _array(data.get("tc_bw"))],
    }
