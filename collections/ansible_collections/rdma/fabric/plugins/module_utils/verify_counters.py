# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's counters judge: a limit per delta counter (a count, a bit error rate or
none), and the errors of one side's port during a test.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

# The increase a counter may show during one test, per port (first match wins; a
# counter no pattern names may not increase). Discards, drops, link downs and transport
# errors: none. Symbol and CRC errors: "ber", a bit error rate (counter_max_ber) of the
# bits the test moved. Congestion signals (PFC pause, CNPs, ECN marks): None, reported
# only - a pair at line rate may legitimately pause or mark; a limit can be set.
COUNTER_LIMITS = (
    ("symbol_error", "ber"),
    ("*symbol_err*", "ber"),
    ("*crc_err*", "ber"),
    ("*pause*", None),
    ("*pfc*", None),
    ("np_cnp_sent", None),
    ("rp_cnp_handled", None),
    ("np_ecn_marked_roce_packets", None),
    ("*_marked", None),
    ("*", 0),
)


DEFAULT_MAX_BER = 1e-12


SATURATED_FIX = "clear it (rdma_verify_clear_counters, or perfquery -x -R)"


def counter_limit(name, limits=None):
    """The limit of one counter: rdma_verify_counter_limits (a name or a glob), then
    COUNTER_LIMITS; an int, "ber" or None (no limit)."""
    for pattern, limit in [*(limits or {}).items(), *COUNTER_LIMITS]:
        if fnmatchcase(name, pattern):
            return limit
    return 0


def counter_limit_errors(limits):
    """rdma_verify_counter_limits: each value a count >= 0, 'ber' or null."""
    errors = []
    for name, value in (limits or {}).items():
        count = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not (count or value is None or value == "ber"):
            errors.append(
                f"rdma_verify_counter_limits: {name} must be a count >= 0, 'ber' or null; "
                f"got {value!r}"
            )
    return errors


def delta_errors(side, host, device, port, outcome, options, bits):
    """Each counter of one side's port over its limit during the test, and each
    counter stuck at its maximum (its delta reads 0 whatever happens)."""
    where = f"{side} {host} {device} port {port}"
    errors = []
    for name, value in sorted(((outcome or {}).get("deltas") or {}).items()):
        limit = counter_limit(name, options.get("counter_limits"))
        if limit is None or not value:
            continue
        if limit == "ber":
            ber = float(options.get("max_ber") or DEFAULT_MAX_BER)
            allowed = int(ber * bits)
            if value > allowed:
                errors.append(
                    f"{where}: {name} +{value} during the test (limit {allowed}: bit error "
                    f"rate {ber:g} of {bits:.3g} bits)"
                )
        elif value > limit:
            errors.append(f"{where}: {name} +{value} during the test (limit {limit})")
    for name in (outcome or {}).get("saturated") or []:
        errors.append(f"{where}: {name} at max: {SATURATED_FIX}")
    return errors
