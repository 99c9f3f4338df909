# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a verify run covered of its fabric: a ``--limit`` run, or one slice of a sliced
job (AWX/AAP job slicing gives each slice a part of the inventory), verifies only the
hosts in its play. Its report must say so, naming who was not verified, and a slice that
cannot see its whole fabric must not pass it.

partial(fabric, tested) -> None when the run covered the fabric, else {tested, of,
missing}; partial_line(...) says it in one bounded line; slice_refusal(...) is the
message that refuses a run whose inventory holds fewer hosts of the fabric's group than
the fabric has (rdma_verify_fabric_size), before any test.
"""

from __future__ import annotations

# missing_names: 'gpu017, gpu018 and 40 more', at most ten names (the report and the
# summary stay one line at 1,000 hosts), as the rail plan's errors name hosts.
from ansible_collections.rdma.fabric.plugins.module_utils.rails import natural_key
from ansible_collections.rdma.fabric.plugins.module_utils.rails import some_names as missing_names


def partial(fabric_hosts, tested_hosts):
    """{tested, of, missing} when some of the fabric's hosts were not in this run (sorted
    naturally), else None. Hosts tested that the fabric group lacks do not count."""
    fabric = list(dict.fromkeys(fabric_hosts or []))
    tested = set(tested_hosts or [])
    missing = sorted((h for h in fabric if h not in tested), key=natural_key)
    if not fabric or not missing:
        return None
    return {"tested": len(fabric) - len(missing), "of": len(fabric), "missing": missing}


def partial_text(scope):
    """'2 of 3 hosts verified; not verified: lab3' (report.md, report.html)."""
    return (
        f"{scope['tested']} of {scope['of']} hosts verified; not verified: "
        f"{missing_names(scope['missing'])}"
    )


def partial_line(scope, group="rdma_hosts"):
    """One line for the summary and the report, or '' for a whole-fabric run."""
    if not scope:
        return ""
    return (
        f"partial: {scope['tested']} of {scope['of']} hosts of {group} verified; "
        f"not in this run: {missing_names(scope['missing'])}"
    )


def slice_refusal(group_hosts, size, group="rdma_hosts"):
    """The refusal of a run that sees fewer of the fabric's hosts than it has, or ''.

    group_hosts: the inventory's hosts of ``group`` as this run sees them (a sliced job's
    slice holds only its part); size: rdma_verify_fabric_size (0: not declared, nothing
    refused). A --limit run sees the whole inventory and is never refused here."""
    try:
        size = int(size or 0)
    except (TypeError, ValueError):
        return f"rdma_verify_fabric_size must be a whole number of hosts; got {size!r}"
    if size < 0:
        return f"rdma_verify_fabric_size must be 0 (not declared) or more; got {size}"
    count = len(list(dict.fromkeys(group_hosts or [])))
    if not size or count >= size:
        return ""
    return (
        f"rdma_verify_fabric_size is {size} but this run's inventory holds {count} hosts "
        f"of {group}: a sliced job (AWX/AAP job slicing) gives each slice part of the "
        "inventory, and a slice cannot test its hosts against the rest of the fabric. Run "
        "rdma.fabric.verify as one job over the whole inventory (use --limit to verify part "
        "of it: the report then says which hosts were not verified)."
    )
