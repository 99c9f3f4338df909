# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a host role goes on on this operating system, and what it says.

The host roles (rdma_stack, rdma_nic, roce_host_qos, ib_subnet_manager) list in
vars/main.yml the systems a test runs them on (__<role>_supported, distribution ->
major versions) and the systems with code paths no test runs (__<role>_untested).
Their tasks/set_vars.yml asks this one decision before any change: tested (quiet),
untested (a warning, then on) or refused (the task fails with the message).
"""

from __future__ import annotations

TESTED = "tested"
UNTESTED = "untested"
REFUSED = "refused"

# The facts the decision reads (setup's min subset gathers them).
FACTS = ("distribution", "distribution_version", "distribution_major_version")


def systems_text(systems):
    """'Debian 12/13, Ubuntu 22/24' from {distribution: [major, ...]}, in its order."""
    return ", ".join(
        f"{name} {'/'.join(str(major) for major in majors)}"
        for name, majors in (systems or {}).items()
    )


def _majors(systems, distribution):
    return [str(major) for major in (systems or {}).get(distribution) or []]


def os_support(facts, supported, untested, role):
    """{status: tested|untested|refused, message: ...} for the host of `facts`
    (ansible_facts). The message is empty when tested, the warning's text when
    untested, the refusal (naming the role, the system and what is tested) else."""
    facts = facts or {}
    tested = systems_text(supported)
    what_is_tested = f"Tested: {tested}; untested code paths: {systems_text(untested)}."
    missing = [name for name in FACTS if name not in facts]
    if missing:
        return {
            "status": REFUSED,
            "message": f"{role}: the operating system is not known (fact "
            f"{', '.join(missing)} missing). {what_is_tested}",
        }
    distribution = str(facts["distribution"])
    major = str(facts["distribution_major_version"])
    system = f"{distribution} {facts['distribution_version']}"
    if major in _majors(supported, distribution):
        return {"status": TESTED, "message": ""}
    if major in _majors(untested, distribution):
        return {
            "status": UNTESTED,
            "message": f"{role} has code paths for {system} but no test runs them; "
            f"tested on {tested} only. Check the result on one host first.",
        }
    return {"status": REFUSED, "message": f"{role}: {system} is not supported. {what_is_tested}"}
