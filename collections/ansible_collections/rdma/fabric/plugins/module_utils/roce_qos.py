# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Host RoCE QoS: read one netdev's state, compare it with the policy, plan commands.

Two backends set the netdev's DCB state:
  mlnx_qos  NVIDIA mlnx-tools (MLNX_OFED / DOCA-OFED), parsed by module_utils/mlnx_qos
  dcb       inbox iproute2 dcb, parsed by module_utils/dcb
Kernel knobs are found where the running kernel has them, never assumed:
  OFED sysfs    /sys/class/net/IF/ecn/roce_{rp,np}/enable/N, ecn/roce_np/cnp_{dscp,802p_prio}
  debugfs       /sys/kernel/debug/mlx5/PCI/cc_params/np_cnp_{dscp,prio} (mainline mlx5)
  OFED sysfs    /sys/class/infiniband/DEV/tc/PORT/traffic_class
  configfs      /sys/kernel/config/rdma_cm/DEV/ports/PORT/default_roce_tos
Everything here is pure but for the filesystem reads of ``find_knobs``; a ``run``
callable (argv -> (rc, stdout, stderr)) executes the tools, so tests replay recorded
outputs.
"""

from __future__ import annotations

import json
import os
import re
import time

from ansible_collections.rdma.fabric.plugins.module_utils.dcb import parse_app, parse_ets, parse_pfc
from ansible_collections.rdma.fabric.plugins.module_utils.mlnx_qos import parse_mlnx_qos
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    read_attr,
    read_devices,
)

ASPECTS = ("dcbx", "trust", "dscp2prio", "pfc", "ets", "cable_len", "prio2buffer", "buffer_size")
# Receive-buffer aspects: set only when the policy gives them, only by backends that read
# them (mlnx_qos all three; dcb the cable length, as `dcb pfc ... delay`); None in the
# desired state means "leave the NIC's own".
BUFFER_ASPECTS = {
    "cable_len": "host_cable_length_m",
    "prio2buffer": "host_prio2buffer",
    "buffer_size": "host_buffer_size",
}


def _csv(values):
    return ",".join(str(v) for v in values)


def desired_qos(policy):
    """What the netdev's DCB state must be under a filled policy (trust is always dscp:
    the policy refuses pcp)."""
    # All 64 DSCPs (the one classification, roce_policy.dscp_priority): mlx5's default
    # with trust dscp is priority DSCP >> 3 (DSCP 24-31 on priority 3, the lossless one).
    dscp2prio = {dscp: [prio] for dscp, prio in enumerate(policy["dscp_priority"])}
    return {
        "dcbx": "os",
        "willing": False,
        "trust": policy["trust"],
        "dscp2prio": dscp2prio,
        "pfc": [1 if p in policy["pfc_priorities"] else 0 for p in range(8)],
        "prio_tc": list(policy["prio_tc"]),
        "tc_tsa": list(policy["tc_tsa"]),
        "tc_bw": list(policy["tc_bw"]),
        **{aspect: policy.get(key) for aspect, key in BUFFER_ASPECTS.items()},
    }


def _buffer_differs(current, desired, aspect):
    want = desired.get(aspect)
    return want is not None and aspect in current and current[aspect] != want


def _ets_differences(current, desired):
    """What differs in ETS, in words; empty when ETS follows the policy."""
    out = []
    if current.get("prio_tc") != desired["prio_tc"]:
        out.append(
            f"priority->TC {_csv(current.get('prio_tc') or []) or 'unknown'}, "
            f"policy wants {_csv(desired['prio_tc'])}"
        )
    # Only traffic classes that carry a priority matter (mlnx_qos may not print others).
    for tc in sorted(set(desired["prio_tc"])):
        tsa = (current.get("tc_tsa") or [None] * 8)[tc]
        bw = (current.get("tc_bw") or [None] * 8)[tc]
        want_tsa, want_bw = desired["tc_tsa"][tc], desired["tc_bw"][tc]
        want = f"ets {want_bw}%" if want_tsa == "ets" else want_tsa
        if tsa != want_tsa:
            have = f"ets {bw}%" if tsa == "ets" else (tsa or "unset")
            out.append(f"TC {tc} {have}, policy wants {want}")
        elif tsa == "ets" and bw != want_bw:
            out.append(f"TC {tc} ets {bw}%, policy wants {want}")
    if current.get("willing"):
        out.append("willing (takes a DCBX peer's settings), policy wants not willing")
    return out


def _ets_differs(current, desired):
    return bool(_ets_differences(current, desired))


def differing(current, desired):
    """The aspects (ASPECTS order) where current differs from desired."""
    out = []
    if current.get("dcbx") == "firmware":
        out.append("dcbx")
    # dcb has no trust object (None): the DSCP app entries are the trust.
    if current.get("trust") is not None and current["trust"] != desired["trust"]:
        out.append("trust")
    have = current.get("dscp2prio") or {}
    if any(have.get(d) != p for d, p in desired["dscp2prio"].items()):
        out.append("dscp2prio")
    if current.get("pfc") != desired["pfc"]:
        out.append("pfc")
    if _ets_differs(current, desired):
        out.append("ets")
    out += [a for a in BUFFER_ASPECTS if _buffer_differs(current, desired, a)]
    return out


def describe(current, desired, aspects):
    """One line per differing aspect: 'pfc: 0,0,0,0,0,0,0,0 -> 0,0,0,1,0,0,0,0'."""
    lines = []
    for aspect in aspects:
        if aspect == "dcbx":
            lines.append("dcbx: firmware -> os")
        elif aspect == "trust":
            lines.append(f"trust: {current.get('trust')} -> {desired['trust']}")
        elif aspect == "dscp2prio":
            have = current.get("dscp2prio") or {}
            want = desired["dscp2prio"]
            parts = [
                f"{_ranges(dscps)}:{old}->{new}" for dscps, old, new in _dscp_groups(have, want)
            ]
            lines.append("dscp2prio: " + (", ".join(parts) or f"{sorted(have)} -> none"))
        elif aspect == "pfc":
            lines.append(f"pfc: {_csv(current.get('pfc') or [])} -> {_csv(desired['pfc'])}")
        elif aspect == "ets":
            lines.append(
                "ets: prio_tc {} tsa {} bw {} -> prio_tc {} tsa {} bw {}".format(
                    _csv(current.get("prio_tc") or []),
                    _csv(current.get("tc_tsa") or []),
                    _csv(current.get("tc_bw") or []),
                    _csv(desired["prio_tc"]),
                    _csv(desired["tc_tsa"]),
                    _csv(desired["tc_bw"]),
                )
            )
        elif aspect in BUFFER_ASPECTS:
            lines.append(f"{aspect}: {_text(current.get(aspect))} -> {_text(desired[aspect])}")
    return lines


def _ranges(numbers):
    """[1, 2, 3, 5] -> '1-3,5'."""
    out, start, prev = [], None, None
    for n in sorted(numbers):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev > start else str(start))
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev > start else str(start))
    return ",".join(out)


def _dscp_groups(have, want):
    """The differing DSCPs grouped by (what they have, what the policy wants), in DSCP
    order of each group's first: 64 entries read as a few lines."""
    groups = {}
    for dscp, prios in sorted(want.items()):
        if have.get(dscp) != prios:
            key = (tuple(have.get(dscp) or ()), tuple(prios))
            groups.setdefault(key, []).append(dscp)
    return [(dscps, list(old) or None, list(new)) for (old, new), dscps in groups.items()]


def _text(value):
    return _csv(value) if isinstance(value, list) else str(value)


def _priorities(prios):
    """[3] -> 'priority 3'; [3, 4] -> 'priorities 3,4'; [] or None -> 'no priority'."""
    if not prios:
        return "no priority"
    return ("priority " if len(prios) == 1 else "priorities ") + _csv(prios)


def mismatches(current, desired, knobs=()):
    """What differs from the policy, in words, one line per setting: the read-back a
    verifier reports ("PFC on 0,0,0,0,0,0,0,0, policy wants priority 3").

    current: a backend's read (as ``read`` returns it, or after a JSON round trip, whose
    DSCP keys are strings); desired: ``desired_qos(policy)``; knobs: dicts with name,
    have and want (``find_knobs``). The decision is ``differing``'s and ``knob_drift``'s:
    this only words it.
    """
    current = dict(current)
    current["dscp2prio"] = {int(d): p for d, p in (current.get("dscp2prio") or {}).items()}
    lines = []
    for aspect in differing(current, desired):
        if aspect == "dcbx":
            lines.append(
                "DCBX firmware-controlled (a switch's DCBX can overwrite the host's QoS), "
                "policy wants OS-controlled"
            )
        elif aspect == "trust":
            lines.append(f"trust {current.get('trust')}, policy wants {desired['trust']}")
        elif aspect == "dscp2prio":
            for dscps, old, new in _dscp_groups(current["dscp2prio"], desired["dscp2prio"]):
                lines.append(
                    f"DSCP {_ranges(dscps)} -> {_priorities(old)}, policy wants priority {new[0]}"
                )
        elif aspect == "pfc":
            have = current.get("pfc")
            lines.append(
                f"PFC on {_csv(have) if have else 'unknown'}, "
                f"policy wants {_priorities([p for p, on in enumerate(desired['pfc']) if on])}"
            )
        elif aspect == "ets":
            lines += [f"ETS {text}" for text in _ets_differences(current, desired)]
        elif aspect in BUFFER_ASPECTS:
            lines.append(
                f"{aspect} {_text(current.get(aspect))}, policy wants {_text(desired[aspect])}"
            )
    return lines + knob_mismatches(knobs)


def knob_mismatches(knobs):
    """The knobs that differ from the policy, in words ("rdma_cm_default_roce_tos is 0,
    policy wants 106")."""
    return [
        f"{k['name']} is {k['have']}, policy wants {k['want']}"
        for k in knobs
        if k["have"] != k["want"]
    ]


def state_text(view, dscps):
    """A one-line-per-setting rendering of a before/after view, for --diff."""
    qos, lines = view.get("qos") or {}, []
    for key in ("dcbx", "trust", "pfc", "prio_tc", "tc_tsa", "tc_bw", *BUFFER_ASPECTS):
        value = qos.get(key)
        if value is not None:
            lines.append(f"{key}: {_csv(value) if isinstance(value, list) else value}")
    if qos:  # a netdev without DCB has only its knobs
        have = qos.get("dscp2prio") or {}
        lines.append("dscp2prio: " + " ".join(f"{d}:{_csv(have.get(d) or ['-'])}" for d in dscps))
    lines += [f"{name}: {value}" for name, value in sorted((view.get("knobs") or {}).items())]
    return "\n".join(lines) + "\n"


class MlnxQos:
    """Backend: NVIDIA mlnx_qos."""

    name = "mlnx_qos"

    def __init__(self, binary="mlnx_qos"):
        self.binary = binary

    def read(self, run, iface):
        """(state or None, error text)."""
        rc, out, err = run([self.binary, "-i", iface])
        if rc != 0:
            return None, (err or out).strip() or f"mlnx_qos exited {rc}"
        parsed = parse_mlnx_qos(out)
        if parsed["pfc"] is None:
            return None, "mlnx_qos printed no PFC configuration"
        state = {key: parsed[key] for key in ("dcbx", "pfc", "prio_tc", "tc_tsa", "tc_bw")}
        # Legacy releases (ConnectX-3 era) print no trust line: they trust PCP only.
        state["trust"] = parsed["trust"] or "pcp"
        state["dscp2prio"] = {d: [p] for d, p in parsed["dscp2prio"].items()}
        state["cable_len"] = parsed["cable_len"]
        state["prio2buffer"] = parsed["prio2buffer"]
        state["buffer_size"] = (parsed["receive_buffer_size"] or [])[:8] or None
        state["backend"] = self.name
        return state, ""

    def commands(self, iface, current, desired, aspects):
        # Every command line this returns (each aspect, and boot_commands' full set) was
        # parsed by the real option parser of mlnx-tools python/mlnx_qos (v2607.0.6,
        # commit 8fbfd9cfff34) without error or stray arguments, 2026-12-03.
        base = [self.binary, "-i", iface]
        cmds = []
        if "dcbx" in aspects:
            cmds.append(base + ["--dcbx", "os"])
        if "trust" in aspects:
            cmds.append(base + ["--trust", desired["trust"]])
        if "dscp2prio" in aspects:
            # --dscp2prio is an append option (mlnx-tools python/mlnx_qos: optparse
            # action="append"): every changed DSCP in one command, not 64 runs.
            have = current.get("dscp2prio") or {}
            sets = []
            for dscp, prios in desired["dscp2prio"].items():
                if have.get(dscp) != prios:
                    sets += ["--dscp2prio", f"set,{dscp},{prios[0]}"]
            if sets:
                cmds.append(base + sets)
        if "pfc" in aspects:
            cmds.append(base + ["--pfc", _csv(desired["pfc"])])
        if "ets" in aspects:
            cmds.append(
                base
                + ["--prio_tc", _csv(desired["prio_tc"])]
                + ["--tsa", _csv(desired["tc_tsa"])]
                + ["--tcbw", _csv(desired["tc_bw"])]
            )
        # One option a command: with both, mlnx_qos (sysfs buffers) sets only
        # buffer_size and ignores prio2buffer (mlnx-tools python/mlnx_qos).
        for aspect, option in (
            ("cable_len", "--cable_len"),
            ("prio2buffer", "--prio2buffer"),
            ("buffer_size", "--buffer_size"),
        ):
            if aspect in aspects and desired.get(aspect) is not None:
                cmds.append(base + [option, _text(desired[aspect])])
        return cmds


class Dcb:
    """Backend: iproute2 dcb (inbox)."""

    name = "dcb"

    def __init__(self, binary="dcb"):
        self.binary = binary

    def read_dcbx(self, run, iface):
        """The DCBX flags (``dcb -j dcbx show``: {"host": true, "ieee": true}, only the set
        flags, iproute2 dcb/dcb_dcbx.c), or None where the driver has no DCBX (getdcbx)."""
        rc, out, _err = run([self.binary, "-j", "dcbx", "show", "dev", iface])
        if rc != 0:
            return None
        try:
            flags = json.loads(out or "{}")
        except ValueError:
            return None
        return sorted(k for k, v in flags.items() if v is True) if isinstance(flags, dict) else None

    def read(self, run, iface):
        outputs = {}
        for obj, extra in (("pfc", []), ("app", ["dscp-prio"]), ("ets", [])):
            rc, out, err = run([self.binary, "-j", "-N", obj, "show", "dev", iface] + extra)
            if rc != 0:
                return None, (err or out).strip() or f"dcb {obj} show exited {rc}"
            outputs[obj] = out
        pfc, ets = parse_pfc(outputs["pfc"]), parse_ets(outputs["ets"])
        app = parse_app(outputs["app"])
        flags = self.read_dcbx(run, iface)
        return {
            "backend": self.name,
            # Host (OS) controlled DCBX, or the NIC firmware's, which a switch's DCBX can
            # overwrite; None where the driver reports none.
            "dcbx": None if flags is None else ("os" if "host" in flags else "firmware"),
            "dcbx_flags": flags,
            # mlx5 trusts DSCP as soon as a DSCP app entry exists; dcb has no trust
            # object before iproute2 6.2's apptrust: dscp2prio carries it.
            "trust": None,
            "willing": ets["willing"],
            "dscp2prio": app,
            "pfc": pfc["prio_pfc"],
            "prio_tc": ets["prio_tc"],
            "tc_tsa": ets["tc_tsa"],
            "tc_bw": ets["tc_bw"],
            # mlx5 reports and takes its cable length (m) as the IEEE PFC delay
            # (en_dcbnl.c mlx5e_dcbnl_ieee_getpfc/setpfc: dcbx.cable_len, 1-999).
            **({"cable_len": pfc["delay"]} if pfc.get("delay") is not None else {}),
        }, ""

    def commands(self, iface, current, desired, aspects):
        dev = ["dev", iface]
        cmds = []
        if "dcbx" in aspects:
            # As `mlnx_qos --dcbx os` does (get_dcbx() | DCB_CAP_DCBX_HOST): host plus the
            # versions the device reports; `dcb dcbx set` replaces every flag, and older
            # mlx5 (en_dcbnl.c mlx5e_dcbnl_setdcbx) refuse host without cee and ieee.
            versions = [f for f in ("cee", "ieee") if f in (current.get("dcbx_flags") or [])]
            cmds.append(
                [self.binary, "dcbx", "set"] + dev + ["host"] + (versions or ["cee", "ieee"])
            )
        if "dscp2prio" in aspects:
            have = current.get("dscp2prio") or {}
            pairs = [
                f"{dscp}:{prios[0]}"
                for dscp, prios in desired["dscp2prio"].items()
                if have.get(dscp) != prios
            ]
            if pairs:
                # replace, not add: add appends a second priority to the DSCP.
                cmds.append([self.binary, "app", "replace"] + dev + ["dscp-prio"] + pairs)
        pfc = []
        if "pfc" in aspects:
            state = [f"{p}:{'on' if on else 'off'}" for p, on in enumerate(desired["pfc"])]
            pfc += ["prio-pfc"] + state
        if "cable_len" in aspects and desired.get("cable_len") is not None:
            # dcb-pfc(8) `delay`: mlx5 takes it as the cable length for the headroom; dcb
            # pfc set keeps what it does not name (it reads, changes, writes back).
            pfc += ["delay", str(desired["cable_len"])]
        if pfc:
            cmds.append([self.binary, "pfc", "set"] + dev + pfc)
        if "ets" in aspects:
            cmd = [self.binary, "ets", "set"] + dev
            if current.get("willing"):
                cmd += ["willing", "off"]
            cmd += ["prio-tc"] + [f"{p}:{tc}" for p, tc in enumerate(desired["prio_tc"])]
            cmd += ["tc-tsa"] + [f"{tc}:{tsa}" for tc, tsa in enumerate(desired["tc_tsa"])]
            cmd += ["tc-bw"] + [f"{tc}:{bw}" for tc, bw in enumerate(desired["tc_bw"])]
            cmds.append(cmd)
        return cmds


BACKENDS = {"mlnx_qos": MlnxQos, "dcb": Dcb}


def plan(backend, iface, current, desired):
    """(aspects that differ, commands that fix them, human-readable drift)."""
    aspects = differing(current, desired)
    return (
        aspects,
        backend.commands(iface, current, desired, aspects),
        describe(current, desired, aspects),
    )


def boot_commands(backend, iface, current, desired):
    """Commands that set every aspect from any state (the boot-time re-apply)."""
    aspects = [a for a in ASPECTS if a != "dcbx" or current.get("dcbx") is not None]
    aspects = [a for a in aspects if a not in BUFFER_ASPECTS or a in current]
    blank = {"dcbx": current.get("dcbx"), "willing": current.get("willing")}
    return backend.commands(iface, blank, desired, aspects)


def lldpad_commands(iface, policy):
    """lldptool commands that make lldpad advertise the policy and accept no peer's.

    From lldptool-ets(8), lldptool-pfc(8) and lldptool-app(8); APP selector 5 is DSCP
    (IEEE 802.1Qcd). lldpad keeps them in its own configuration across restarts.
    """
    base = ["lldptool", "-T", "-i", iface, "-V"]
    tsa = _csv(f"{tc}:{kind}" for tc, kind in enumerate(policy["tc_tsa"]))
    up2tc = _csv(f"{prio}:{tc}" for prio, tc in enumerate(policy["prio_tc"]))
    ets = [f"tsa={tsa}", f"up2tc={up2tc}", f"tcbw={_csv(policy['tc_bw'])}"]
    cmds = [
        ["lldptool", "-L", "-i", iface, "adminStatus=rxtx"],
        base + ["ETS-CFG", "enableTx=yes", "willing=no"] + ets,
        base + ["ETS-REC", "enableTx=yes"] + ets,
        base
        + [
            "PFC",
            "enableTx=yes",
            "willing=no",
            "enabled=" + (_csv(policy["pfc_priorities"]) or "none"),
        ],
    ]
    if policy["trust"] == "dscp":
        for prio, dscp in (
            (policy["roce_priority"], policy["roce_dscp"]),
            (policy["cnp_priority"], policy["cnp_dscp"]),
        ):
            cmds.append(base + ["APP", "enableTx=yes", f"app={prio},5,{dscp}"])
    return cmds


# --- links: bonds and the flap a DCB change causes ----------------------------------


def bond_master(root, iface):
    """The bond iface is a member of (its sysfs ``master`` link to a netdev with
    ``bonding/``), else None."""
    link = os.path.join(root, "sys/class/net", iface, "master")
    if not os.path.islink(link):
        return None
    master = os.path.basename(os.path.realpath(link))
    return master if os.path.isdir(os.path.join(root, "sys/class/net", master, "bonding")) else None


def operstate(root, iface):
    return read_attr(os.path.join(root, "sys/class/net", iface, "operstate"))


def wait_link_up(root, iface, seconds, sleep=time.sleep, clock=time.monotonic):
    """True once iface's operstate is up again, False after ``seconds``.

    mlx5 toggles the port link on a PFC or buffer change (en_dcbnl.c
    mlx5e_dcbnl_ieee_setpfc: mlx5_toggle_port_link), so ports are changed one at a time
    and the next waits until this one is back: the legs of a bond never flap together.
    """
    deadline = clock() + seconds
    while True:
        if operstate(root, iface) == "up":
            return True
        if clock() >= deadline:
            return False
        sleep(0.5)


# --- kernel knobs -------------------------------------------------------------------

_LAST_INT = re.compile(r"(-?\d+)\s*$")


def knob_value(text):
    """'Global tclass=106' -> '106'; '1' -> '1'; None -> None."""
    if text is None:
        return None
    match = _LAST_INT.search(text)
    return match.group(1) if match else text


def rdma_port_of(root, iface):
    """(device, port) of the RDMA port whose netdev is iface, else (None, None).

    A RoCE LAG member has no RDMA port of its own: the bond's (mlx5_bond_0, whose
    netdev is the bond) is its, so its ToS knobs are the bond device's.
    """
    ports = {}
    for device in read_devices(root):
        for port in device["ports"]:
            if port["netdev"] and port["link_layer"] == "Ethernet":
                ports.setdefault(port["netdev"], (device["name"], port["port"]))
    return ports.get(iface) or ports.get(bond_master(root, iface)) or (None, None)


def find_knobs(root, iface, device, port, policy):
    """Knobs this host has, each {name, path, want, kind ('write' or 'mkdir')}.

    A knob the running kernel does not expose is simply absent from the list.
    """
    knobs = []
    tos = str(policy["roce_tos"])
    net = os.path.join(root, "sys/class/net", iface)
    ecn = os.path.join(net, "ecn")
    for point in ("roce_rp", "roce_np"):
        for prio in range(8):
            path = os.path.join(ecn, point, "enable", str(prio))
            if os.path.isfile(path):
                want = "1" if prio in policy["ecn_priorities"] else "0"
                knobs.append({"name": f"ecn_{point}_enable_{prio}", "path": path, "want": want})
    for name, want in (("cnp_dscp", policy["cnp_dscp"]), ("cnp_802p_prio", policy["cnp_priority"])):
        path = os.path.join(ecn, "roce_np", name)
        if os.path.isfile(path):
            knobs.append({"name": f"ecn_roce_np_{name}", "path": path, "want": str(want)})
    pci = os.path.basename(os.path.realpath(os.path.join(net, "device")))
    cc_params = os.path.join(root, "sys/kernel/debug/mlx5", pci, "cc_params")
    for name, want in (
        ("np_cnp_dscp", policy["cnp_dscp"]),
        ("np_cnp_prio", policy["cnp_priority"]),
    ):
        path = os.path.join(cc_params, name)
        if os.path.isfile(path):
            knobs.append({"name": f"debugfs_{name}", "path": path, "want": str(want)})
    if device is not None:
        path = os.path.join(root, "sys/class/infiniband", device, "tc", str(port), "traffic_class")
        if os.path.isfile(path):
            knobs.append({"name": "traffic_class", "path": path, "want": tos})
        rdma_cm = os.path.join(root, "sys/kernel/config/rdma_cm")
        if os.path.isdir(rdma_cm):
            dev_dir = os.path.join(rdma_cm, device)
            knobs.append({"name": "rdma_cm_device", "path": dev_dir, "want": "present"})
            path = os.path.join(dev_dir, "ports", str(port), "default_roce_tos")
            knobs.append({"name": "rdma_cm_default_roce_tos", "path": path, "want": tos})
    for knob in knobs:
        knob["kind"] = "mkdir" if knob["want"] == "present" else "write"
        if knob["kind"] == "mkdir":
            knob["have"] = "present" if os.path.isdir(knob["path"]) else "absent"
        else:
            knob["have"] = knob_value(read_attr(knob["path"]))
    return knobs


# ethtool's tunable for NIC PFC storm prevention (mlx5: ms a port may stay paused by a
# receiver that does not drain before the NIC stops sending PAUSE; 0 disables).
# `ethtool --get-tunable IF pfc-prevention-tout` prints "pfc-prevention-tout: 100"
# (ethtool.c print_tunable); a driver without it fails (Operation not supported).
STORM_TUNABLE = "pfc-prevention-tout"
_STORM_RE = re.compile(r"^pfc-prevention-tout:\s*(\d+)\s*$", re.MULTILINE)


def storm_knob(run, ethtool, iface, policy):
    """The PFC storm prevention knob of iface, or None where the driver has none."""
    rc, out, _err = run([ethtool, "--get-tunable", iface, STORM_TUNABLE])
    match = _STORM_RE.search(out or "") if rc == 0 else None
    if match is None:
        return None
    want = str(policy["host_pfc_storm_timeout_ms"])
    return {
        "name": "ethtool_pfc_prevention_tout",
        "kind": "command",
        "path": f"ethtool {iface} {STORM_TUNABLE}",
        "argv": [ethtool, "--set-tunable", iface, STORM_TUNABLE, want],
        "have": match.group(1),
        "want": want,
    }


def write_knob(knob, run=None):
    """Apply one knob; configfs creates a device group by mkdir; a command knob runs."""
    if knob["kind"] == "command":
        rc, out, err = run(knob["argv"])
        if rc != 0:
            raise OSError(f"{' '.join(knob['argv'])}: {(err or out).strip()}")
    elif knob["kind"] == "mkdir":
        os.mkdir(knob["path"])
    else:
        with open(knob["path"], "w", encoding="utf-8") as handle:
            handle.write(knob["want"] + "\n")


def knob_step(knob):
    if knob["kind"] == "command":
        return {"argv": knob["argv"]}
    return (
        {"mkdir": knob["path"]}
        if knob["kind"] == "mkdir"
        else {"write": knob["path"], "value": knob["want"]}
    )


def knob_drift(knobs):
    return [f"{k['name']}: {k['have']} -> {k['want']}" for k in knobs if k["have"] != k["want"]]
