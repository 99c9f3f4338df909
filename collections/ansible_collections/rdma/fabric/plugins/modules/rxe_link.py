#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: rxe_link
short_description: Create or remove a Soft-RoCE (rxe) RDMA link
description:
  - Creates an rxe link on a netdev with C(rdma link add NAME type rxe netdev NETDEV), or
    removes it with C(rdma link delete NAME).
  - Reads C(rdma link show) first and acts only on a difference; a link that exists on
    another netdev is re-created on the requested one.
  - Fails, naming the netdev, when it does not exist or lives in another network
    namespace (rxe only works on a netdev of the initial namespace).
  - The rdma_rxe kernel module must be loaded; the soft_roce role does that.
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  name:
    description: The RDMA device name of the link, such as C(rxe0).
    type: str
    required: true
  netdev:
    description: The Ethernet netdev the link runs over. Required with I(state=present).
    type: str
  state:
    description: Whether the link exists.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
requirements:
  - iproute2 with the C(rdma) tool
"""

EXAMPLES = r"""
- name: Soft-RoCE on the fabric NIC
  rdma.fabric.rxe_link:
    name: rxe0
    netdev: eth1

- name: Remove it
  rdma.fabric.rxe_link:
    name: rxe0
    state: absent
"""

RETURN = r"""
link:
  description: The link after the change (null when absent).
  returned: always
  type: dict
  sample:
    device: rxe0
    port: 1
    state: ACTIVE
    physical_state: LINK_UP
    netdev: eth1
commands:
  description: The rdma commands run (or that would run in check mode).
  returned: always
  type: list
  elements: str
  sample: ["rdma link add rxe0 type rxe netdev eth1"]
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_link import parse_rdma_link


def read_links(module):
    rdma = module.get_bin_path("rdma", required=True)
    rc, out, err = module.run_command([rdma, "-j", "link", "show"])
    if rc != 0 or not out.strip().startswith("["):
        rc, out, err = module.run_command([rdma, "link", "show"])
        if rc != 0:
            module.fail_json(
                msg=f"rdma link show failed: {err.strip() or out.strip()} "
                "(no RDMA netlink: is the RDMA core, ib_core, in this kernel?)"
            )
    return parse_rdma_link(out)


def netdev_namespace(module, netdev):
    """The named network namespace that holds netdev, or None."""
    ip = module.get_bin_path("ip")
    if not ip:
        return None
    rc, out, _err = module.run_command([ip, "netns", "list"])
    if rc != 0:
        return None
    for line in out.splitlines():
        namespace = line.split()[0] if line.split() else ""
        if (
            namespace
            and module.run_command([ip, "-n", namespace, "link", "show", "dev", netdev])[0] == 0
        ):
            return namespace
    return None


def check_netdev(module, netdev):
    if os.path.exists(os.path.join("/sys/class/net", netdev)):
        return
    namespace = netdev_namespace(module, netdev)
    if namespace:
        module.fail_json(
            msg=f"netdev {netdev} is in network namespace {namespace}; an rxe link needs a "
            "netdev of the initial network namespace"
        )
    present = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    module.fail_json(
        msg=f"netdev {netdev} does not exist on this host (netdevs: {', '.join(present)})"
    )


def run(module, argv, commands):
    commands.append(" ".join(argv))
    if module.check_mode:
        return
    rdma = module.get_bin_path("rdma", required=True)
    rc, out, err = module.run_command([rdma, *argv[1:]])
    if rc != 0:
        module.fail_json(
            msg=f"{' '.join(argv)} failed: {err.strip() or out.strip()}", commands=commands
        )


def main():
    module = AnsibleModule(
        argument_spec={
            "name": {"type": "str", "required": True},
            "netdev": {"type": "str"},
            "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        },
        required_if=[("state", "present", ["netdev"])],
        supports_check_mode=True,
    )
    name, netdev, state = (module.params[k] for k in ("name", "netdev", "state"))
    if state == "present":
        check_netdev(module, netdev)
    links = read_links(module)
    current = next((link for link in links if link["device"] == name), None)
    commands = []

    if state == "present":
        other = next(
            (link for link in links if link["netdev"] == netdev and link["device"] != name), None
        )
        if other:
            module.fail_json(msg=f"netdev {netdev} already carries RDMA device {other['device']}")
        if current and current["netdev"] != netdev:
            run(module, ["rdma", "link", "delete", name], commands)
            current = None
        if current is None:
            run(module, ["rdma", "link", "add", name, "type", "rxe", "netdev", netdev], commands)
    elif current is not None:
        run(module, ["rdma", "link", "delete", name], commands)

    changed = bool(commands)
    after = current
    if changed and not module.check_mode:
        after = next((link for link in read_links(module) if link["device"] == name), None)
    elif changed:
        after = {"device": name, "netdev": netdev} if state == "present" else None
    before_text = f"{name} netdev {current['netdev']}\n" if current else ""
    after_text = f"{name} netdev {netdev}\n" if state == "present" else ""
    module.exit_json(
        changed=changed,
        link=after,
        commands=commands,
        diff={
            "before": before_text,
            "after": after_text,
            "before_header": "rdma link",
            "after_header": "rdma link",
        },
    )


if __name__ == "__main__":
    main()
