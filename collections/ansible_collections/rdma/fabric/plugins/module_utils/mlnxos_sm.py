# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The embedded subnet manager of an NVIDIA Quantum switch (MLNX-OS), as CLI lines.

Commands, from NVIDIA's "MLNX-OS User Manual" (v3.10.4500 LTS to v3.12, chapter
InfiniBand Switching > Subnet Manager, and SM Commands):

    switch (config) # ib smnode my-sm enable             Enable the SM (HA procedure)
    switch (config) # ib smnode my-sm sm-priority <priority>   Its priority, 0-15
    switch (config) # no ib smnode my-sm enable          Disable it

`show running-config` lists the non-default configuration as the same commands, one
per line, indented, under "##" section comments; a default (SM disabled, priority 0)
has no line. The lines wanted are compared with those, so a second run sends nothing.

Partitions (module_utils/mlnxos_partitions.py, its documents named there) follow the SM
lines when the SM runs here: "The partitions configuration is applicable and to be
used only when the SM is enabled and running on the system" (Subnet Manager chapter).

The routing engine is not configured: the manual pages found (SM Commands, Subnet
Manager chapter) do not show an `ib sm` routing-engine command's grammar, so the
switch SM keeps its own engine (README: what a real switch must confirm).
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils import mlnxos_partitions

# MLNX-OS releases whose user manual documents the commands above.
SUPPORTED_RELEASES = ("3.9", "3.10", "3.11", "3.12")
_RELEASE_RE = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d+)(?:\.\d+)*$")
_NODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SMNODE_RE = re.compile(r"^\s*(?P<no>no\s+)?ib\s+smnode\s+(?P<node>\S+)\s+(?P<rest>.*?)\s*$")


def release_supported(version):
    """True when the MLNX-OS version (3.11.2016, 3.10) is one the manual covers."""
    match = _RELEASE_RE.match(str(version or "").strip())
    return bool(match) and f"{match['major']}.{match['minor']}" in SUPPORTED_RELEASES


def node_name_ok(node):
    return bool(_NODE_RE.match(str(node or "")))


def wanted_lines(node, enabled, priority, partitions=None):
    """The running-config lines the SM configuration of `node` comes down to.

    `partitions`: records of opensm.normalize_partitions.
    """
    if not enabled:
        return []
    lines = [f"ib smnode {node} enable"]
    if int(priority or 0) != 0:
        lines.append(f"ib smnode {node} sm-priority {int(priority)}")
    return lines + mlnxos_partitions.wanted_lines(partitions)


def parse_running(text, node):
    """{'enabled': bool, 'priority': int} of `node` from `show running-config`."""
    state = {"enabled": False, "priority": 0}
    for line in (text or "").splitlines():
        match = _SMNODE_RE.match(line)
        if not match or match["node"] != node:
            continue
        words = match["rest"].split()
        if words == ["enable"]:
            state["enabled"] = not match["no"]
        elif len(words) == 2 and words[0] == "sm-priority" and words[1].isdigit():
            state["priority"] = 0 if match["no"] else int(words[1])
    return state


def commands(node, enabled, priority, running_text, partitions=None):
    """CLI commands (config mode) that bring `node` from the running config to wanted."""
    have = parse_running(running_text, node)
    out = []
    if enabled:
        if int(priority or 0) != have["priority"]:
            out.append(f"ib smnode {node} sm-priority {int(priority or 0)}")
        if not have["enabled"]:
            out.append(f"ib smnode {node} enable")
        if partitions is not None:
            out += mlnxos_partitions.commands(partitions, running_text)
    elif have["enabled"]:
        out.append(f"no ib smnode {node} enable")
    return out
