#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rail_neighbors_info
short_description: Read the LLDP neighbours of a host's rail netdevs (lldpcli)
description:
  - Runs C(lldpcli -f json show neighbors ports <netdevs>) (lldpd) and returns, per
    rail netdev, the switch (LLDP SysName) and the switch port it reaches. This is the
    host side of rdma_verify's cabling check on RoCE rails.
  - Waits up to O(wait) seconds for every netdev to have a neighbour (a switch sends
    LLDP every 30 s by default, so a freshly started lldpd may not know it yet).
  - Reads only; never changes the host. Runs in check mode.
  - lldpd missing (no lldpcli) or not running is returned in RV(problems), not an error,
    so that the check can say so.
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  netdevs:
    description: The rail netdevs to read.
    type: list
    elements: str
    required: true
  wait:
    description: Seconds to wait for every netdev to have a neighbour (0 = read once).
    type: int
    default: 0
  lldpcli:
    description: The lldpcli command.
    type: str
    default: lldpcli
"""

EXAMPLES = r"""
- name: Read what each rail netdev is cabled to
  rdma.fabric.rail_neighbors_info:
    netdevs: [ens1f0np0, ens2f0np0]
    wait: 40
  register: lldp
"""

RETURN = r"""
neighbors:
  description: Per netdev, the neighbours lldpd knows (an empty list when none).
  returned: always
  type: dict
  sample: {"ens1f0np0": [{"switch": "leaf-rail0", "port": "swp7", "port_descr": "swp7"}]}
system_name:
  description:
    - This host's name as lldpd sends it by default (the kernel's host name), by which the
      switches' own LLDP tables name this host; the cabling check matches it beside the
      inventory name (an inventory of addresses or aliases).
  returned: always
  type: str
  sample: gpu-b07
problems:
  description: Why nothing could be read (lldpcli missing, lldpd not running).
  returned: always
  type: list
  elements: str
"""

import socket
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.cabling import parse_lldpcli_json


def read(module, netdevs):
    """(neighbors, problem)."""
    binary = module.get_bin_path(module.params["lldpcli"])
    if not binary:
        return {}, (
            "lldpcli not found: lldpd is not installed (rdma_rails installs it on "
            "RoCE rails whose plan names a leaf)"
        )
    rc, out, err = module.run_command(
        [binary, "-f", "json", "show", "neighbors", "ports", ",".join(netdevs)]
    )
    if rc != 0:
        return {}, f"lldpcli failed (rc {rc}): {(err or out).strip()} (is lldpd running?)"
    try:
        parsed = parse_lldpcli_json(out or "{}")
    except ValueError as exc:
        return {}, f"lldpcli printed no JSON: {exc}"
    return parsed, None


def main():
    module = AnsibleModule(
        argument_spec={
            "netdevs": {"type": "list", "elements": "str", "required": True},
            "wait": {"type": "int", "default": 0},
            "lldpcli": {"type": "str", "default": "lldpcli"},
        },
        supports_check_mode=True,
    )
    netdevs = module.params["netdevs"]
    deadline = time.monotonic() + max(module.params["wait"], 0)
    while True:
        parsed, problem = read(module, netdevs) if netdevs else ({}, None)
        complete = all(parsed.get(n) for n in netdevs)
        if problem or complete or time.monotonic() >= deadline:
            break
        time.sleep(2)
    module.exit_json(
        changed=False,
        neighbors={n: parsed.get(n) or [] for n in netdevs},
        system_name=socket.gethostname(),
        problems=[problem] if problem else [],
    )


if __name__ == "__main__":
    main()
