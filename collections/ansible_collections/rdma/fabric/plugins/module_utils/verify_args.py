# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rdma_verify's extra perftest arguments and the flags the role keeps for itself.

rdma_verify_extra_args go to every test's both sides; rdma_verify_rail_extra_args
({rail: "args" or [args]}) go after them on one rail's tests only (main, retest,
isolate; both sides). Neither may carry a flag that verify_plan's side command line
already sets (device, port, TCP port, GID, output format, duration, size, QPs,
direction, traffic class when the role sets one, GPU): given twice, perftest takes the
last one and the two sides no longer meet, or the result is judged on the wrong terms.

perftest reads its command line with getopt_long (src/perftest_parameters.c): short
options cluster ("-bF"); one that takes an argument takes the rest of its word or the
next word ("-dmlx5_0", "-d mlx5_0"); a long option may be abbreviated to a prefix
("--dur=5"); "--" ends the options.
"""

from __future__ import annotations

import shlex

# The short options of perftest's getopt_long optstring that take an argument.
SHORT_WITH_ARGUMENT = frozenset("wypdimsntuSxcqIoMrQAlDfBTLEJjKkXW")

GPUDIRECT = (
    "rdma_verify_gpudirect: it puts each rail's buffers in the GPU nearest its NIC "
    "(--use_cuda here would put every rail's buffers in one GPU)"
)
# (short option or None, long option, what sets it)
OWNED = (
    ("d", "ib-dev", "the rail's device"),
    ("i", "ib-port", "the rail's port"),
    ("p", "port", "the test's TCP port (rdma_verify_base_port, per round and rail)"),
    ("x", "gid-index", "the rail's RoCE v2 GID index"),
    ("F", "CPU-freq", "the role (perftest_run reads its output)"),
    (None, "report_gbits", "the role (perftest_run reads its output in Gb/s)"),
    (None, "out_json", "the role (perftest_run reads its text output)"),
    (None, "out_json_file", "the role (perftest_run reads its text output)"),
    (None, "output", "the role (perftest_run reads its text output)"),
    ("D", "duration", "rdma_verify_duration"),
    (None, "run_infinitely", "rdma_verify_duration"),
    ("s", "size", "rdma_verify_size"),
    ("q", "qp", "rdma_verify_qps"),
    ("b", "bidirectional", "rdma_verify_bidirectional"),
    (None, "use_cuda", GPUDIRECT),
    (None, "use_cuda_bus_id", GPUDIRECT),
)
# Owned only while the role sets the traffic class (rdma_verify_tclass, rdma_roce_policy).
TCLASS = (
    ("T", "tos", "rdma_verify_tclass (from rdma_roce_policy)"),
    (None, "tclass", "rdma_verify_tclass (from rdma_roce_policy)"),
)


def as_args(value, name):
    """A list of perftest words from a list (each item one word) or one string (split as
    a shell would); anything else is refused naming the variable."""
    if value in (None, ""):
        return []
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"{name}: cannot split {value!r}: {exc}") from exc
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
    ):
        return [str(v) for v in value]
    raise ValueError(f"{name} must be a list of perftest arguments or one string; got {value!r}")


def rail_args(value):
    """rdma_verify_rail_extra_args as {rail: [words]}."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ValueError(
            "rdma_verify_rail_extra_args must be a dict of rail name -> perftest arguments; "
            f"got {value!r}"
        )
    return {
        str(rail): as_args(args, f"rdma_verify_rail_extra_args[{rail}]")
        for rail, args in value.items()
    }


def options_seen(words):
    """[(word, short or None, long or None)]: each option perftest would parse."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word == "--":
            break
        if word.startswith("--"):
            out.append((word, None, word[2:].split("=", 1)[0]))
        elif word.startswith("-") and len(word) > 1:
            for k, letter in enumerate(word[1:], 2):
                out.append((word, letter, None))
                if letter in SHORT_WITH_ARGUMENT:
                    skip = k == len(word)  # its argument is the next word
                    break
    return out


def _owner(short, long_, owned):
    for own_short, own_long, why in owned:
        if short is not None and short == own_short:
            return own_short, own_long, why
        # getopt_long takes a unique prefix of a long option as that option.
        if long_ and own_long.startswith(long_):
            return own_short, own_long, why
    return None


def owned_flag_errors(words, name, tclass_set=False):
    """One message per flag in words (the value of variable `name`) that the role sets."""
    owned = OWNED + (TCLASS if tclass_set else ())
    errors = []
    for word, short, long_ in options_seen(words):
        found = _owner(short, long_, owned)
        if not found:
            continue
        own_short, own_long, why = found
        flag = f"-{own_short}/--{own_long}" if own_short else f"--{own_long}"
        exact = word in (f"-{own_short}", f"--{own_long}")
        shown = flag if exact else f"{word} ({flag})"
        if why == GPUDIRECT:
            errors.append(f"{name}: {shown} is refused; GPUDirect is {why}")
        else:
            errors.append(
                f"{name}: {shown} is set by {why}; given twice, perftest takes the last "
                "and the test no longer means what the role planned"
            )
    return errors


def extra_args_errors(extra, per_rail, rails, tclass_set=False):
    """Every problem of rdma_verify_extra_args and rdma_verify_rail_extra_args, naming
    the variable: a rail the fabric does not have, a flag the role sets itself, a value
    that is not arguments. rails: the fabric's rail names (rail plan, or devices)."""
    errors = []
    try:
        words = as_args(extra, "rdma_verify_extra_args")
    except ValueError as exc:
        errors.append(str(exc))
        words = []
    errors += owned_flag_errors(words, "rdma_verify_extra_args", tclass_set)
    if per_rail in (None, ""):
        return errors
    if not isinstance(per_rail, dict):
        return errors + [
            "rdma_verify_rail_extra_args must be a dict of rail name -> perftest arguments; "
            f"got {per_rail!r}"
        ]
    known = list(rails)
    for rail, value in per_rail.items():
        name = f"rdma_verify_rail_extra_args[{rail}]"
        if str(rail) not in known:
            errors.append(
                f"rdma_verify_rail_extra_args: no rail {rail!r} in this fabric (its rails: "
                f"{', '.join(known) or 'none'})"
            )
        try:
            words = as_args(value, name)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        errors += owned_flag_errors(words, name, tclass_set)
    return errors
