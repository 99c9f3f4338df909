# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's fabric step: each rail's expected rate (the majority, or ambiguous),
the firmware checks across hosts.
"""

from __future__ import annotations

from collections import Counter

from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    natural_key,
)
from ansible_collections.rdma.fabric.plugins.module_utils.verify_common import (
    gc_paused,
)


def _majority(values):
    counts = Counter(values)
    (value, count), *_rest = counts.most_common(1) or [(None, 0)]
    return value, count


def _width_lanes(width):
    try:
        return int(str(width).rstrip("Xx"))
    except ValueError:
        return None


def firmware_checks(health, hosts):
    """One firmware version per PSID (board_id) across the fabric: a NIC left on old
    firmware behaves differently from its twins."""
    by_psid = {}
    for host in hosts:
        for device in (health[host] or {}).get("devices") or []:
            if device.get("board_id") and device.get("fw_ver"):
                by_psid.setdefault(device["board_id"], {}).setdefault(device["fw_ver"], []).append(
                    f"{host} {device['name']}"
                )
    checks = []
    for psid, versions in sorted(by_psid.items()):
        detail = "; ".join(
            f"{v}: {', '.join(sorted(where, key=natural_key))}"
            for v, where in sorted(versions.items())
        )
        checks.append(
            {
                "check": f"firmware of {psid}",
                "host": "fabric",
                "ok": len(versions) == 1,
                "device": None,
                "port": None,
                "detail": detail if len(versions) > 1 else f"{next(iter(versions))} everywhere",
            }
        )
    return checks


@gc_paused()
def _rate_label(rate):
    gbps, width, speed = rate[:3]
    return f"{gbps:g} Gb/s ({width} {speed})"


# The share of a rail's ports that must report one rate for it to be the rail's expected
# rate when rdma_verify_expected_rate_gbps is not set; a tie is never enough.
RATE_MAJORITY = 0.5


def _ambiguous_rate(name, rates, share):
    """'rail X: ambiguous: ...' when no rate of the rail wins by more than a tie and at
    least `share` of its ports; else None."""
    top = Counter(r for _h, r in rates).most_common()
    if not top:
        return None
    tie = len(top) > 1 and top[1][1] == top[0][1]
    if not tie and top[0][1] / len(rates) >= share:
        return None
    by_rate = {}
    for host, rate in rates:
        by_rate.setdefault(rate, []).append(host)
    seen = "; ".join(
        f"{_rate_label(rate)}: {', '.join(sorted(hosts, key=natural_key))}"
        for rate, hosts in sorted(by_rate.items(), key=lambda kv: (kv[0][0], str(kv[0][1:])))
    )
    return f"rail {name}: ambiguous: set rdma_verify_expected_rate_gbps ({seen})"


def fabric(health, expected_rate_gbps=0, majority_share=RATE_MAJORITY):
    """Checks across hosts and the expectation per rail.

    Returns {checks, rails: {rail: {gbps, width, speed, usable_gbps, ports, agree}},
    same_machine: [messages]}. Two inventory names with one boot id or one node GUID
    are one machine: refused, naming both. A port whose rate or width is below what
    most ports of its rail report fails a "rate" check; a host without a rail the
    others have fails a "rails" check on that rail. Without rdma_verify_expected_rate_gbps,
    a rail whose ports tie, or whose most common rate has less than majority_share of
    them, has no expected rate: a failed "rail rate" check says "ambiguous", never a
    guess by host order.
    """
    checks = []
    hosts = sorted(health, key=natural_key)
    same = []
    for what, key in (("boot id", "boot_id"), ("node GUID", "node_guids")):
        owners = {}
        for host in hosts:
            values = (health[host] or {}).get(key)
            for value in values if isinstance(values, list) else [values]:
                if value:
                    owners.setdefault(value, []).append(host)
        for value, names in sorted(owners.items()):
            if len(names) > 1:
                same.append(
                    f"{' and '.join(names)} are one machine (the same {what} {value}): list "
                    "each server once in the inventory"
                )
    for message in dict.fromkeys(same):
        checks.append(
            {
                "check": "one machine, one name",
                "host": "fabric",
                "ok": False,
                "device": None,
                "port": None,
                "detail": message,
            }
        )
    versions = {}
    for host in hosts:
        versions.setdefault((health[host] or {}).get("perftest_version") or "missing", []).append(
            host
        )
    detail = "; ".join(f"{v}: {', '.join(h)}" for v, h in sorted(versions.items()))
    checks += firmware_checks(health, hosts)
    checks.append(
        {
            "check": "same perftest version",
            "host": "fabric",
            "ok": len(versions) <= 1,
            "device": None,
            "port": None,
            "detail": detail,
        }
    )
    by_rail = {}
    for host in hosts:
        for rail in (health[host] or {}).get("rails") or []:
            by_rail.setdefault(rail["rail"], {})[host] = rail
    rails = {}
    for name in sorted(by_rail, key=natural_key):
        members = by_rail[name]
        rates = [
            (r["rate"]["gbps"], r["rate"]["width"], r["rate"]["speed"], r["rate"]["usable_gbps"])
            for r in members.values()
            if r.get("device") and r.get("rate")
        ]
        (gbps, width, speed, usable), count = _majority(rates) if rates else ((None,) * 4, 0)
        ambiguous = (
            None
            if expected_rate_gbps
            else _ambiguous_rate(
                name,
                [
                    (h, (r["rate"]["gbps"], r["rate"]["width"], r["rate"]["speed"]))
                    for h, r in members.items()
                    if r.get("device") and r.get("rate")
                ],
                majority_share,
            )
        )
        if ambiguous:
            gbps = width = speed = usable = None
            checks.append(
                {
                    "check": "rail rate",
                    "host": "fabric",
                    "ok": False,
                    "device": None,
                    "port": None,
                    "detail": ambiguous,
                }
            )
        if expected_rate_gbps:
            usable = expected_rate_gbps * (usable / gbps if usable and gbps else 1.0)
            gbps = expected_rate_gbps
        rails[name] = {
            "gbps": gbps,
            "width": width,
            "speed": speed,
            "usable_gbps": round(usable, 3) if usable else None,
            "ports": len(rates),
            "agree": count,
            "ambiguous": bool(ambiguous),
        }
        for host in hosts:
            rail = members.get(host)
            if rail is None:
                checks.append(
                    {
                        "check": "rails",
                        "host": host,
                        "ok": False,
                        "device": None,
                        "port": None,
                        "detail": f"no RDMA port for rail {name} (the rail of "
                        f"{', '.join(sorted(members, key=natural_key))})",
                    }
                )
                continue
            rate = rail.get("rate")
            if not rail.get("device") or not rate or gbps is None:
                continue
            slow = rate["gbps"] < gbps
            lanes, want_lanes = _width_lanes(rate["width"]), _width_lanes(width)
            narrow = bool(lanes and want_lanes and lanes < want_lanes)
            label = f"{rate['gbps']:g} Gb/s ({rate['width']} {rate['speed']})"
            want = f"{gbps:g} Gb/s ({width} {speed})"
            source = (
                "rdma_verify_expected_rate_gbps"
                if expected_rate_gbps
                else f"{count} of {len(rates)} ports of rail {name}"
            )
            checks.append(
                {
                    "check": "rail rate",
                    "host": host,
                    "device": rail["device"],
                    "port": rail["port"],
                    "ok": not slow and not narrow,
                    "detail": f"{label}, expected {want} ({source})"
                    + ("; trained at a lower width" if narrow else ""),
                }
            )
    return {"checks": checks, "rails": rails, "same_machine": list(dict.fromkeys(same))}
