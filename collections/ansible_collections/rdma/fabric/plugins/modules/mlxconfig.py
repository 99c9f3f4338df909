#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mlxconfig
short_description: Set ConnectX firmware configuration (mstconfig / mlxconfig) idempotently
description:
  - Reads the non-volatile firmware configuration of one NVIDIA ConnectX device with
    C(mstconfig) (mstflint, a distribution package) or C(mlxconfig) (NVIDIA MFT), compares
    the requested parameters with the values the device will use after its next boot, and
    sets only those that differ, in one C(set) command.
  - Firmware settings take effect at the next boot (or firmware reset); the module never
    reboots. It returns C(reboot_required) when it set something, or when a requested
    parameter's next-boot value differs from the running one (an earlier change still
    waits for its reboot).
  - Values are compared by meaning, not spelling. V(ETH), V(eth), V(ETH(2\)) and V(2)
    (string or number) are the same link type; V(true), V(yes), V(True(1\)) and V(1) are
    the same boolean.
  - A parameter name the device does not report fails, and the message lists the names
    the device does report. Read-only and array parameters cannot be set.
  - Supports check mode (queries, sets nothing) and diff mode (C(NAME=value) lines).
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
requirements:
  - C(mstconfig) from mstflint, or C(mlxconfig) from NVIDIA MFT, on the managed host; root.
options:
  tool:
    description:
      - Which tool to run. C(auto) uses C(mlxconfig) when installed (NVIDIA MFT knows the
        newest devices), else C(mstconfig).
    type: str
    choices: [auto, mstconfig, mlxconfig]
    default: auto
  link_type_p1:
    description: Port 1 protocol, C(IB) (1), C(ETH) (2) or C(VPI) (3). LINK_TYPE_P1.
    type: raw
  link_type_p2:
    description: Port 2 protocol, as O(link_type_p1). LINK_TYPE_P2.
    type: raw
  sriov_en:
    description: Enable SR-IOV. SRIOV_EN.
    type: raw
  num_of_vfs:
    description: Number of virtual functions per physical function. NUM_OF_VFS.
    type: raw
  ats_enabled:
    description: PCIe Address Translation Services (GPUDirect RDMA with an IOMMU). ATS_ENABLED.
    type: raw
  advanced_pci_settings:
    description: Unlock the advanced PCI parameters such as MAX_ACC_OUT_READ. ADVANCED_PCI_SETTINGS.
    type: raw
  max_acc_out_read:
    description:
      - Maximum outstanding PCIe read requests (needs O(advanced_pci_settings)). MAX_ACC_OUT_READ.
    type: raw
  cnp_dscp_p1:
    description: DSCP of the congestion notification packets port 1 sends (RoCE). CNP_DSCP_P1.
    type: raw
  cnp_dscp_p2:
    description: As O(cnp_dscp_p1), port 2. CNP_DSCP_P2.
    type: raw
  cnp_802p_prio_p1:
    description: 802.1p priority of the congestion notification packets of port 1. CNP_802P_PRIO_P1.
    type: raw
  cnp_802p_prio_p2:
    description: As O(cnp_802p_prio_p1), port 2. CNP_802P_PRIO_P2.
    type: raw
  settings:
    description:
      - Any other parameter, by its firmware name (as C(mstconfig query) prints it), to
        its value. A name also given as a named option must have the same value.
    type: dict
    default: {}
  optional:
    description:
      - Parameter names that are skipped, not failed, when the device does not report
        them (C(CNP_DSCP_P2) on a single-port card). Listed in RV(skipped).
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.connectx
  - rdma.fabric.sysfs
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
notes:
  - A dual-port card has one configuration; both of its PCI functions show it.
  - mstflint 4.26 and later no longer support ConnectX-3; use C(mlxconfig) for those.
seealso:
  - name: mstflint
    description: The open-source firmware tools that ship C(mstconfig).
    link: https://github.com/Mellanox/mstflint
"""

EXAMPLES = r"""
- name: Put both ports of mlx5_0 in Ethernet mode with 8 VFs
  rdma.fabric.mlxconfig:
    device: mlx5_0
    link_type_p1: ETH
    link_type_p2: ETH
    sriov_en: true
    num_of_vfs: 8
  register: nic

- name: GPUDirect RDMA settings and the RoCE CNP marking, by PCI address
  rdma.fabric.mlxconfig:
    device: "0000:3b:00.0"
    ats_enabled: true
    advanced_pci_settings: true
    max_acc_out_read: 44
    cnp_dscp_p1: 48
    cnp_802p_prio_p1: 6
    settings:
      ROCE_CC_PRIO_MASK_P1: 255

- name: Tell the operator
  ansible.builtin.debug:
    msg: "{{ nic.device }} needs a reboot for {{ nic.changes | list }}"
  when: nic.reboot_required
"""

RETURN = r"""
device:
  description: The device as given.
  returned: always
  type: str
  sample: mlx5_0
pci_address:
  description: The PCI address the tool was pointed at (the path itself for a device path).
  returned: always
  type: str
  sample: "0000:3b:00.0"
tool:
  description: The tool that ran.
  returned: always
  type: str
  sample: /usr/bin/mstconfig
device_type:
  description: The device type the tool reports.
  returned: always
  type: str
  sample: ConnectX6DX
before:
  description: Next-boot values of the requested parameters before the run, as the tool prints them.
  returned: always
  type: dict
  sample: {"LINK_TYPE_P1": "IB(1)", "SRIOV_EN": "False(0)"}
after:
  description:
    - Next-boot values after the run (queried again after a set; predicted in check mode).
  returned: always
  type: dict
  sample: {"LINK_TYPE_P1": "ETH(2)", "SRIOV_EN": "True(1)"}
current:
  description: Values the running firmware uses, where the tool shows them (not ConnectX-3).
  returned: always
  type: dict
  sample: {"LINK_TYPE_P1": "IB(1)", "SRIOV_EN": "False(0)"}
changes:
  description: What was set (or would be, in check mode), NAME to the argument given to the tool.
  returned: always
  type: dict
  sample: {"LINK_TYPE_P1": "ETH", "SRIOV_EN": "1"}
skipped:
  description: Names from O(optional) that the device does not report.
  returned: always
  type: list
  elements: str
  sample: [CNP_DSCP_P2, CNP_802P_PRIO_P2]
reboot_required:
  description: Whether the device needs a reboot (or firmware reset) for its next-boot values.
  returned: always
  type: bool
  sample: true
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.connectx import (
    device_target,
    find_tool,
)
from ansible_collections.rdma.fabric.plugins.module_utils.connectx import run_tool as connectx_run
from ansible_collections.rdma.fabric.plugins.module_utils.mlxconfig import (
    MlxconfigParseError,
    next_boot,
    parse,
    parse_query,
    set_argument,
    values_match,
)

NAMED = (
    "link_type_p1",
    "link_type_p2",
    "sriov_en",
    "num_of_vfs",
    "ats_enabled",
    "advanced_pci_settings",
    "max_acc_out_read",
    "cnp_dscp_p1",
    "cnp_dscp_p2",
    "cnp_802p_prio_p1",
    "cnp_802p_prio_p2",
)


def requested_settings(module):
    wanted = {}
    for key, value in module.params["settings"].items():
        if value is None:
            continue
        wanted[str(key).strip().upper()] = value
    for option in NAMED:
        value = module.params[option]
        if value is None:
            continue
        name = option.upper()
        if (
            name in wanted
            and set_argument(wanted[name]).casefold() != set_argument(value).casefold()
        ):
            module.fail_json(
                msg=f"{name} is given twice with different values: {option}={value!r} "
                f"and settings.{name}={wanted[name]!r}"
            )
        wanted[name] = value
    return wanted


def run_tool(module, argv, what):
    return connectx_run(
        module,
        argv,
        f"{what} on {module.params['device']}",
        lambda text: parse(text)["errors"],
        [("Unsupported device", "mstflint 4.26+ dropped ConnectX-3 and older; try tool=mlxconfig")],
    )


def query(module, tool, target):
    out = run_tool(module, [tool, "-e", "-d", target, "query"], "query")
    try:
        return parse_query(out)
    except MlxconfigParseError as exc:
        module.fail_json(
            msg=f"cannot read the query output for {module.params['device']}: {exc}", stdout=out
        )


def check_names(module, table, wanted):
    """Drop optional names the device lacks; fail on unknown, read-only or array names."""
    params = table["params"]
    optional = {name.upper() for name in module.params["optional"]}
    skipped = sorted(name for name in wanted if name not in params and name in optional)
    unknown = sorted(name for name in wanted if name not in params and name not in optional)
    if unknown:
        module.fail_json(
            msg=f"unknown parameter(s) {', '.join(unknown)} for {module.params['device']} "
            f"({table['type'] or 'unknown type'}); the device reports: {', '.join(table['order'])}",
            unknown=unknown,
        )
    for name in skipped:
        del wanted[name]
    read_only = sorted(name for name in wanted if params[name]["read_only"])
    if read_only:
        module.fail_json(msg=f"read-only parameter(s) cannot be set: {', '.join(read_only)}")
    unreadable = sorted(
        name
        for name in wanted
        if next_boot(params[name]) is None or next_boot(params[name]).startswith("Array[")
    )
    if unreadable:
        module.fail_json(
            msg=f"parameter(s) {', '.join(unreadable)} have no single next-boot value "
            "(arrays or a truncated query) and cannot be compared"
        )
    return skipped


def as_lines(values):
    return "".join(f"{name}={value}\n" for name, value in sorted(values.items()))


def main():
    spec = {
        "device": {"type": "str", "required": True},
        "tool": {"type": "str", "default": "auto", "choices": ["auto", "mstconfig", "mlxconfig"]},
        "settings": {"type": "dict", "default": {}},
        "optional": {"type": "list", "elements": "str", "default": []},
        "sysfs_root": {"type": "path", "default": "/"},
    }
    spec.update({name: {"type": "raw"} for name in NAMED})
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)

    wanted = requested_settings(module)
    target = address = device_target(module)
    tool = find_tool(
        module, ["mlxconfig", "mstconfig"], "install mstflint (mstconfig) or NVIDIA MFT (mlxconfig)"
    )
    table = query(module, tool, target)
    skipped = check_names(module, table, wanted)

    params = table["params"]
    before = {name: next_boot(params[name]) for name in wanted}
    current = {name: params[name]["current"] for name in wanted if params[name].get("current")}
    changes = {
        name: set_argument(value)
        for name, value in wanted.items()
        if not values_match(before[name], value)
    }
    pending = any(current[name] != before[name] for name in current)
    after = dict(before)
    after.update(changes)

    if changes and not module.check_mode:
        argv = [tool, "-y", "-d", target, "set"]
        argv += [f"{name}={value}" for name, value in sorted(changes.items())]
        run_tool(module, argv, "set")
        table = query(module, tool, target)
        after = {name: next_boot(table["params"].get(name)) for name in wanted}
        wrong = sorted(name for name in changes if not values_match(after[name], wanted[name]))
        if wrong:
            module.fail_json(
                msg=f"{os.path.basename(tool)} accepted the set but the next-boot value of "
                f"{', '.join(wrong)} is {', '.join(str(after[n]) for n in wrong)}",
                before=before,
                after=after,
            )

    result = {
        "changed": bool(changes),
        "device": module.params["device"],
        "pci_address": address,
        "tool": tool,
        "device_type": table["type"],
        "before": before,
        "after": after,
        "current": current,
        "changes": changes,
        "skipped": skipped,
        "reboot_required": bool(changes) or pending,
    }
    if module._diff:
        header = f"{module.params['device']} ({address}) next boot"
        result["diff"] = {
            "before": as_lines(before),
            "after": as_lines(after),
            "before_header": header,
            "after_header": header,
        }
    module.exit_json(**result)


if __name__ == "__main__":
    main()
