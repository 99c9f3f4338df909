#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Apply the lossless RoCE policy to one host netdev (DCB and RoCE knobs)
description:
  - Reads the netdev's DCB state with C(mlnx_qos -i IF) (NVIDIA mlnx-tools) or
    C(dcb -j show) (inbox iproute2), compares it with the fabric policy (trust, DSCP to
    priority, PFC, ETS) and runs only the commands that fix what differs.
  - Finds the kernel's RoCE knobs where this kernel has them, never assuming one
    layout - OFED sysfs C(/sys/class/net/IF/ecn/roce_{rp,np}) (DCQCN enable per
    priority, CNP DSCP and priority), mainline mlx5 debugfs C(cc_params/np_cnp_*),
    C(/sys/class/infiniband/DEV/tc/PORT/traffic_class) and configfs
    C(rdma_cm/DEV/ports/PORT/default_roce_tos) - and writes only values that differ.
  - A netdev without DCB support (virtio, veth, a Soft-RoCE parent) fails the task, or
    with I(require_hw=false) is reported as unsupported and its DCB state left alone;
    the kernel's RoCE knobs of its RDMA port (the RDMA-CM default ToS above all) are
    still set and kept in C(boot_steps), as they mark its RoCE packets with the
    policy's DSCP, which the switches classify by. NIC PFC storm prevention is not,
    without DCB there is no PFC.
  - Returns the commands and writes that re-apply the whole policy from any state
    (C(boot_steps)), for a boot-time unit.
  - I(state=gathered) only reads and reports drift; it is the read-back for verification.
    With I(interfaces) it reads several netdevs in one call (C(gathered), one entry per
    netdev) and reports a netdev without DCB, or a host without mlnx_qos and dcb, as
    unsupported unless I(require_hw) is true.
  - I(state=present) with I(interfaces) applies the policy to the netdevs one after the
    other, in their order, in one call (C(results), one entry per netdev); with
    I(link_wait) each must be up again before the next is changed. A refusal stops
    there and leaves the netdevs after it as they are.
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  interface:
    description:
      - The netdev of a RoCE port. One of I(interface) and I(interfaces) is required.
    type: str
  interfaces:
    description:
      - Several netdevs, handled in one call, in this order. With I(state=gathered) the
        result's C(gathered) holds one entry per netdev; with I(state=present),
        C(results) does.
    type: list
    elements: str
  policy:
    description:
      - The fabric policy (C(rdma_roce_policy)); unset keys take their defaults and bad
        keys fail by name (see the C(rdma.fabric.roce_policy) filter for the keys).
    type: dict
    default: {}
  backend:
    description:
      - C(auto) uses C(mlnx_qos) when it is installed, else C(dcb).
    type: str
    choices: [auto, mlnx_qos, dcb]
    default: auto
  require_hw:
    description:
      - Fail when the netdev has no DCB support. When false, report it as unsupported
        (C(supported=false)) with a warning, change no DCB state and set only the
        kernel's RoCE knobs of its RDMA port (with I(knobs)).
    type: bool
    default: true
  knobs:
    description: Also set the sysfs/configfs/debugfs RoCE knobs this kernel exposes.
    type: bool
    default: true
  state:
    description:
      - C(present) makes the netdev follow the policy; C(gathered) only reads and
        reports what differs (C(drift)).
    type: str
    choices: [present, gathered]
    default: present
  link_wait:
    description:
      - Seconds to wait, after changing a port whose link was up, for it to be up again
        (mlx5 toggles the link on a PFC or buffer change); the task fails when it is not.
        Looping this module over a host's ports then changes them one at a time. 0 does
        not wait.
    type: int
    default: 0
  sysfs_root:
    description:
      - Directory that holds C(sys/) (sysfs, configfs, debugfs). Tests point it at a
        tree of their own.
    type: path
    default: /
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
notes:
  - No machine the project tests on has a NIC with DCB; the backends are tested
    against recorded tool outputs and a documented stand-in for mlnx_qos.
"""

EXAMPLES = r"""
- name: Apply the fabric policy to a ConnectX port
  rdma.fabric.roce_qos:
    interface: enp27s0f0np0
    policy: "{{ rdma_roce_policy | default({}) }}"

- name: Report drift without changing anything
  rdma.fabric.roce_qos:
    interface: enp27s0f0np0
    policy: "{{ rdma_roce_policy | default({}) }}"
    state: gathered
  register: qos

- name: Read back every RoCE netdev of a host in one call (rdma_verify does this)
  rdma.fabric.roce_qos:
    interfaces: [enp27s0f0np0, enp27s0f1np1]
    policy: "{{ rdma_roce_policy | default({}) }}"
    state: gathered
    require_hw: false
  register: qos_all

- name: Apply the policy to every RoCE port of a host in one call (roce_host_qos does)
  rdma.fabric.roce_qos:
    interfaces: [enp27s0f0np0, enp27s0f1np1]
    policy: "{{ rdma_roce_policy | default({}) }}"
    link_wait: 30

- name: Skip NICs without DCB (virtio in a lab)
  rdma.fabric.roce_qos:
    interface: ens4
    require_hw: false
"""

RETURN = r"""
interface:
  description: The netdev.
  returned: with I(interface)
  type: str
  sample: enp27s0f0np0
gathered:
  description:
    - One entry per netdev of I(interfaces), each with the keys this module returns for
      one I(interface) (C(interface), C(device), C(backend), C(supported), C(reason),
      C(drift), C(knobs), C(global_tos), C(expected), C(before), C(after)).
  returned: with I(interfaces) and I(state=gathered)
  type: list
  elements: dict
results:
  description:
    - One entry per netdev of I(interfaces), in order, each with the keys this module
      returns for one I(interface) but C(diff) (the task's C(diff) is the list of them).
  returned: with I(interfaces) and I(state=present)
  type: list
  elements: dict
device:
  description: The RDMA device and port behind the netdev, when there is one.
  returned: always
  type: dict
  sample: {name: mlx5_1, port: 1}
backend:
  description: The tool that reads and sets DCB state.
  returned: when the host has mlnx_qos or dcb
  type: str
  sample: mlnx_qos
supported:
  description: Whether the netdev supports DCB.
  returned: always
  type: bool
reason:
  description: Why the netdev is unsupported (the tool's error).
  returned: when supported is false
  type: str
  sample: "Attribute read: Operation not supported"
drift:
  description: One line per setting that differs(ed) from the policy; empty when in line.
  returned: always
  type: list
  elements: str
  sample: ["pfc: 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0", "traffic_class: None -> 106"]
commands:
  description: The commands run (in check mode, that would run), as argument lists.
  returned: always
  type: list
  elements: list
  sample: [["mlnx_qos", "-i", "enp27s0f0np0", "--pfc", "0,0,0,1,0,0,0,0"]]
writes:
  description: The knob files written (or that would be), with values.
  returned: always
  type: list
  elements: dict
  sample: [{path: /sys/class/infiniband/mlx5_1/tc/1/traffic_class, before: null, after: "106"}]
global_tos:
  description:
    - Whether this kernel has a knob that marks all of the port's RoCE traffic with the
      policy's ToS (OFED's C(traffic_class)). A mainline kernel has none - only
      RDMA-CM users (configfs C(default_roce_tos)) and applications that set a ToS
      themselves (NCCL through C(NCCL_IB_TC)) send on the lossless class. None when
      I(knobs) is false or no RDMA port is behind the netdev.
  returned: when the netdev was read
  type: bool
knobs:
  description: The RoCE knobs this kernel exposes for the netdev, by name, with their values.
  returned: always
  type: dict
  sample: {traffic_class: "106", rdma_cm_default_roce_tos: "106"}
before:
  description: DCB state and knobs before the task.
  returned: always
  type: dict
expected:
  description:
    - What the policy asks for, in the shape of C(before) - the DCB state and the value
      of each knob this kernel exposes.
  returned: when supported
  type: dict
after:
  description: DCB state and knobs after the task (read back; predicted in check mode).
  returned: always
  type: dict
boot_steps:
  description:
    - Every command (C(argv)), directory (C(mkdir)) and write (C(write), C(value))
      that applies the whole policy from any state; the role's boot unit runs them.
  returned: always
  type: list
  elements: dict
lldpad_commands:
  description:
    - lldptool commands that make lldpad (DCBX) advertise the policy and not accept a
      peer's; the role runs them when it keeps lldpad (C(roce_host_qos_lldpad=configure)).
  returned: always
  type: list
  elements: list
policy:
  description: The filled policy, derived values included.
  returned: always
  type: dict
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import bond_members
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    BACKENDS,
    BUFFER_ASPECTS,
    boot_commands,
    desired_qos,
    find_knobs,
    knob_drift,
    knob_step,
    lldpad_commands,
    operstate,
    plan,
    rdma_port_of,
    state_text,
    storm_knob,
    wait_link_up,
    write_knob,
)

SBIN = ["/usr/sbin", "/sbin", "/usr/local/sbin"]


def _view(qos, knobs, key):
    return {"qos": qos, "knobs": {k["name"]: k[key] for k in knobs}}


def pick_backend(module, required=True):
    """The backend whose tool is installed; None when there is none and not required."""
    choice = module.params["backend"]
    names = ["mlnx_qos", "dcb"] if choice == "auto" else [choice]
    for name in names:
        binary = module.get_bin_path(name, opt_dirs=SBIN)
        if binary:
            return BACKENDS[name](binary)
    if not required:
        return None
    module.fail_json(
        msg=f"roce_qos: no {' or '.join(names)} on this host: install mlnx-tools "
        "(DOCA-OFED/MLNX_OFED) or iproute2 with dcb",
        interface=module.params["interface"],
        interfaces=module.params["interfaces"],
    )
    return None


def all_knobs(module, run, iface, device, port, policy, dcb=True):
    """The kernel knobs (find_knobs) plus, on a DCB netdev, the NIC's PFC storm
    prevention (ethtool): without DCB there is no PFC to protect."""
    if not module.params["knobs"]:
        return []
    knobs = find_knobs(module.params["sysfs_root"], iface, device, port, policy)
    ethtool = module.get_bin_path("ethtool", opt_dirs=SBIN) if dcb else None
    storm = storm_knob(run, ethtool, iface, policy) if ethtool else None
    return knobs + ([storm] if storm else [])


def _global_tos(module, device, knobs):
    """Whether the kernel marks all of the port's RoCE traffic with the policy's ToS (OFED's
    traffic_class); None when the knobs were not read or no RDMA port is behind the netdev."""
    if not module.params["knobs"] or device is None:
        return None
    return any(k["name"] == "traffic_class" for k in knobs)


def read_one(module, backend, iface, policy, desired):
    """(entry, current DCB state or None, knobs, commands): one netdev read, nothing
    changed; commands are those plan() gives to apply the policy.

    entry holds what the module returns for the netdev; current is None when the
    netdev (or the host, without a backend) cannot do DCB, and entry says why.
    """
    root = module.params["sysfs_root"]
    entry = {"interface": iface, "supported": False, "drift": [], "knobs": {}}
    device, port = rdma_port_of(root, iface)
    entry["device"] = {"name": device, "port": port} if device else None

    def run(argv):
        return module.run_command(argv)

    if backend is None:
        choice = module.params["backend"]
        tools = "mlnx_qos or dcb" if choice == "auto" else choice
        current, reason = None, f"no {tools} on this host"
    else:
        entry["backend"] = backend.name
        current, reason = backend.read(run, iface)
    if current is None:
        # No DCB here, but the kernel's RoCE knobs (the RDMA-CM ToS above all) still mark
        # the port's RoCE packets with the policy's DSCP, which the switches classify by.
        knobs = all_knobs(module, run, iface, device, port, policy, dcb=False)
        entry.update(
            reason=reason,
            drift=knob_drift(knobs),
            knobs={k["name"]: k["have"] for k in knobs},
            before=_view({}, knobs, "have") if knobs else {},
            after={},
        )
        if knobs:
            entry["expected"] = _view({}, knobs, "want")
        entry["global_tos"] = _global_tos(module, device, knobs)
        return entry, None, knobs, []
    entry["supported"] = True
    knobs = all_knobs(module, run, iface, device, port, policy)
    entry["global_tos"] = _global_tos(module, device, knobs)
    _aspects, commands, drift = plan(backend, iface, current, desired)
    entry.update(
        drift=drift + knob_drift(knobs),
        knobs={k["name"]: k["have"] for k in knobs},
        before=_view(current, knobs, "have"),
        expected=_view(desired, knobs, "want"),
    )
    return entry, current, knobs, commands


def predict(current, desired):
    """The DCB state check mode reports: current with what the commands would set."""
    predicted = dict(current, **{k: desired[k] for k in ("pfc", "prio_tc", "tc_tsa", "tc_bw")})
    predicted.update(
        {k: desired[k] for k in BUFFER_ASPECTS if k in current and desired[k] is not None}
    )
    predicted["dscp2prio"] = {**current["dscp2prio"], **desired["dscp2prio"]}
    if current.get("trust") is not None:
        predicted["trust"] = desired["trust"]
    if current.get("dcbx") is not None:
        predicted["dcbx"] = "os"
    return predicted


def _must_be_netdev(module, iface, result):
    if not os.path.isdir(os.path.join(module.params["sysfs_root"], "sys/class/net", iface)):
        module.fail_json(msg=f"roce_qos: {iface} is not a network interface on this host", **result)


def _unsupported(module, entry, result, verb):
    """Fail on a netdev without DCB (require_hw), else warn."""
    message = f"{entry['interface']} does not support DCB ({entry.get('backend') or 'no tool'}: "
    message += f"{entry['reason']})"
    if module.params["require_hw"]:
        module.fail_json(
            msg=f"roce_qos: {message}. A lossless RoCE port needs a DCB-capable NIC; "
            "set require_hw=false (roce_host_qos_require_hw) to skip such NICs.",
            **result,
        )
    module.warn(f"{message}: {verb}")


def gather_all(module, policy, desired, result):
    """state=gathered with interfaces: every netdev read in one call."""
    ifaces = module.params["interfaces"]
    for iface in ifaces:
        _must_be_netdev(module, iface, result)
    backend = pick_backend(module, required=module.params["require_hw"])
    gathered = []
    result["gathered"] = gathered
    for iface in ifaces:
        entry = read_one(module, backend, iface, policy, desired)[0]
        gathered.append(entry)
        if not entry["supported"]:
            _unsupported(module, entry, result, "not read")
    if backend is not None:
        result["backend"] = backend.name
    module.exit_json(**result)


ARGUMENT_SPEC = {
    "interface": {"type": "str"},
    "interfaces": {"type": "list", "elements": "str"},
    "policy": {"type": "dict", "default": {}},
    "backend": {"type": "str", "default": "auto", "choices": ["auto", "mlnx_qos", "dcb"]},
    "require_hw": {"type": "bool", "default": True},
    "knobs": {"type": "bool", "default": True},
    "state": {"type": "str", "default": "present", "choices": ["present", "gathered"]},
    "sysfs_root": {"type": "path", "default": "/"},
    "link_wait": {"type": "int", "default": 0},
}


def _first_result(iface, policy):
    return {
        "changed": False,
        "interface": iface,
        "policy": policy,
        "supported": False,
        "drift": [],
        "commands": [],
        "writes": [],
        "knobs": {},
        "boot_steps": [],
        "lldpad_commands": lldpad_commands(iface, policy),
    }


def _refuse_bond(module, iface, result):
    members = bond_members(module.params["sysfs_root"], iface)
    if members:
        module.fail_json(
            msg=f"roce_qos: {iface} is a bond (RoCE LAG); DCB is set on its members "
            f"{', '.join(members)}, one at a time: give those",
            members=members,
            **result,
        )


def _warn_no_buffer_split(module, backend, iface, desired):
    """dcb sets the cable length (`dcb pfc set ... delay`), not the buffer split."""
    left_to_nic = [
        key
        for aspect, key in BUFFER_ASPECTS.items()
        if desired[aspect] is not None and aspect != "cable_len"
    ]
    if backend.name == "dcb" and left_to_nic and module.params["state"] == "present":
        module.warn(
            f"roce_qos: {iface}: the dcb backend sets no host buffer split; "
            + ", ".join(f"rdma_roce_policy.{key}" for key in left_to_nic)
            + " left to the NIC's own (mlnx_qos, from mlnx-tools, sets them)"
        )


def _apply(module, iface, commands, stale, result):
    """Run the DCB commands and write the stale knobs; wait for a link that was up."""
    was_up = operstate(module.params["sysfs_root"], iface) == "up"
    for argv in commands:
        rc, out, err = module.run_command(argv)
        if rc != 0:
            module.fail_json(msg=f"roce_qos: {' '.join(argv)} failed: {err or out}", **result)
    for knob in stale:
        try:
            write_knob(knob, module.run_command)
        except OSError as exc:
            module.fail_json(msg=f"roce_qos: cannot write {knob['path']}: {exc}", **result)
    wait = module.params["link_wait"]
    if commands and was_up and wait and not wait_link_up(module.params["sysfs_root"], iface, wait):
        module.fail_json(
            msg=f"roce_qos: {iface} was not up again {wait} s after the change "
            "(link_wait, roce_host_qos_link_wait)",
            **result,
        )


def _read_back(module, backend, iface, policy, desired, entry, dcb, result):
    """The state after the change, read again; anything still different fails."""
    device, port = (entry["device"] or {}).get("name"), (entry["device"] or {}).get("port")
    left, current = [], None
    if dcb:
        current, reason = backend.read(module.run_command, iface)
        if current is None:
            module.fail_json(
                msg=f"roce_qos: {iface} unreadable after the change: {reason}", **result
            )
        left = plan(backend, iface, current, desired)[2]
    knobs = all_knobs(module, module.run_command, iface, device, port, policy, dcb=dcb)
    left += knob_drift(knobs)
    if left:
        module.fail_json(msg=f"roce_qos: {iface} still differs after the change: {left}", **result)
    return _view(current or {}, knobs, "have")


def _diff(iface, backend, dcb, before, after, desired):
    header = f"{iface} ({backend.name if dcb else 'no DCB'})"
    return {
        "before_header": header,
        "after_header": header,
        "before": state_text(before, sorted(desired["dscp2prio"])),
        "after": state_text(after, sorted(desired["dscp2prio"])),
    }


def apply_one(module, iface, policy, desired):
    """One netdev (state present, or gathered with interface): its result. A refusal
    fails the whole task (module.fail_json)."""
    result = _first_result(iface, policy)
    _must_be_netdev(module, iface, result)
    _refuse_bond(module, iface, result)
    backend = pick_backend(module)
    result["backend"] = backend.name
    _warn_no_buffer_split(module, backend, iface, desired)

    entry, current, knobs, commands = read_one(module, backend, iface, policy, desired)
    result.update(entry)
    gathered = module.params["state"] == "gathered"
    dcb = current is not None
    if not dcb:
        verb = "not read" if gathered else "skipped, no DCB applied"
        if knobs and not gathered:
            names = ", ".join(k["name"] for k in knobs)
            verb += f"; its RoCE knobs follow the policy ({names})"
        _unsupported(module, entry, result, verb)
        if gathered or not knobs:
            return result

    stale = [k for k in knobs if k["have"] != k["want"]]
    boot = boot_commands(backend, iface, current, desired) if dcb else []
    result.update(
        commands=commands,
        writes=[{"path": k["path"], "before": k["have"], "after": k["want"]} for k in stale],
        boot_steps=[{"argv": argv} for argv in boot] + [knob_step(k) for k in knobs],
    )
    if gathered:
        result["commands"], result["writes"] = [], []
        result["after"] = result["before"]
        return result

    result["changed"] = bool(commands or stale)
    after = result["before"]
    if result["changed"] and not module.check_mode:
        _apply(module, iface, commands, stale, result)
        after = _read_back(module, backend, iface, policy, desired, entry, dcb, result)
    elif result["changed"]:
        after = _view(predict(current, desired) if dcb else {}, knobs, "want")
    result["after"] = after
    if module._diff:
        result["diff"] = _diff(iface, backend, dcb, result["before"], after, desired)
    return result


def apply_all(module, policy, desired):
    """state=present with interfaces: the netdevs one after the other, in their order,
    in one call (a loop of one task per netdev costs a module run per rail). mlx5 toggles
    a port's link on a PFC or buffer change: link_wait holds the next netdev until this
    one is up again. A refusal stops there, the netdevs after it untouched; the entries
    of those done before it are in the failed result's C(results)."""
    results = []
    fail_json = module.fail_json

    def fail_with_done(**kwargs):
        fail_json(results=results, **kwargs)

    module.fail_json = fail_with_done
    for iface in module.params["interfaces"]:
        results.append(apply_one(module, iface, policy, desired))
    out = {"changed": any(r["changed"] for r in results), "policy": policy, "results": results}
    if module._diff:
        out["diff"] = [r.pop("diff") for r in results if "diff" in r]
    module.exit_json(**out)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[["interface", "interfaces"]],
        required_one_of=[["interface", "interfaces"]],
        supports_check_mode=True,
    )
    policy, errors = normalize_policy(module.params["policy"])
    if errors:
        module.fail_json(msg="; ".join(errors), errors=errors)
    desired = desired_qos(policy)
    if module.params["interfaces"] is not None:
        if module.params["state"] == "gathered":
            gather_all(
                module,
                policy,
                desired,
                {"changed": False, "policy": policy, "interfaces": module.params["interfaces"]},
            )
        apply_all(module, policy, desired)
    module.exit_json(**apply_one(module, module.params["interface"], policy, desired))


if __name__ == "__main__":
    main()
