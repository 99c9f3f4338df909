# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The logic of the rdma_verify role, kept out of Jinja so it can be tested.

host_health   per-host checks from rdma.fabric.rdma_health_info, and the host's rails
              (by name: the rdma_rails plan's, or the device names)
qos_check     the "RoCE QoS" check: rdma.fabric.roce_qos (state=gathered) against the policy
report        everything the report files are rendered from
The tests themselves are in verify_plan.py (plan), verify_judge.py (judge, retest),
verify_isolation.py (isolation, verdicts) and verify_fabric.py (checks across hosts).
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils import verify_common as vcommon
from ansible_collections.rdma.fabric.plugins.module_utils import verify_counters as vcounters
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_isolation as viso
from ansible_collections.rdma.fabric.plugins.module_utils import verify_scope
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    host_rails,
    natural_key,
    normalize_rails,
    resolve_rails,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    parse_rate_detail,
    roce_v2_ipv4_gids,
    saturated_counters,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.roce_qos import (
    desired_qos,
    knob_mismatches,
    mismatches,
)

# RoCE headers on top of the RDMA MTU (GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28,
# ICRC 4: iboe_get_mtu in the kernel): a 4096 active MTU needs a netdev MTU >= 4192.
ROCE_OVERHEAD = 96


def _check(name, ok, detail, device=None, port=None, skipped=False):
    """One check; skipped (not checked, and not failed) only appears when true."""
    out = {"check": name, "device": device, "port": port, "ok": bool(ok), "detail": detail}
    if skipped:
        out["skipped"] = True
    return out


def device_list(value):
    """rdma_verify_devices as a list: a list of names, or one string of names separated
    by commas or spaces ("mlx5_0,mlx5_1"); anything else is refused naming the variable."""
    if value in (None, ""):
        return []
    if isinstance(value, str):
        return [name for name in re.split(r"[\s,]+", value) if name]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
        return list(value)
    raise ValueError(
        f"rdma_verify_devices must be a list of RDMA device names (or one string "
        f"'mlx5_0,mlx5_1'); got {value!r}"
    )


def _selected(ports, expect):
    wanted = device_list(expect.get("devices"))
    layer = expect.get("link_layer") or ""
    chosen = [p for p in ports if not wanted or p["device"] in wanted]
    if layer:
        chosen = [p for p in chosen if p.get("link_layer") == layer]
    return sorted(chosen, key=lambda p: (natural_key(p["device"]), p["port"]))


def default_rail_name(port):
    """Without a rail plan a rail is its device (plus /port beyond port 1)."""
    return port["device"] if port["port"] == 1 else f"{port['device']}/{port['port']}"


def _planned_rails(info, expect, host):
    """[(rail name, port record or None, problem)] from rdma_rails; (None, errors) when
    the plan itself is unusable for this host."""
    filled, errors = normalize_rails(expect.get("rails"), expect.get("policy_mtu"), [host])
    if errors:
        return None, errors
    entries, errors = host_rails(filled, host, expect.get("rail_vars") or {})
    if errors:
        return None, errors
    devices = info.get("devices") or []
    by_port = {(p["device"], p["port"]): p for p in info.get("ports") or []}
    out = []
    for entry in entries:
        bound, problems = resolve_rails([entry], devices, host)
        if problems:
            out.append((entry["name"], None, "; ".join(problems)))
            continue
        port = by_port.get((bound[0]["device"], bound[0]["port"]))
        if port:
            port = dict(port, planned={"address": entry.get("address"), "mtu": entry.get("mtu")})
        out.append((entry["name"], port, None if port else f"{host}: no port record"))
    return out, []


def _roce_v2_ipv4_gids(port):
    """The port's RoCE v2 IPv4 GIDs (rdma_sysfs), or the one rdma_health_info picked
    when the record carries no GID table."""
    gids = roce_v2_ipv4_gids(port)
    return gids or ([port["roce_v2_gid"]] if port.get("roce_v2_gid") else [])


def _planned_checks(port, dev, num):
    """A planned RoCE rail's netdev has the plan's MTU and its address as a RoCE v2 GID
    (rdma_rails gave them); the GID of that address is the one perftest uses.
    Returns (checks, gid or None); ([], None) for a port without a plan."""
    planned = port.get("planned") or {}
    checks = []
    want_mtu = planned.get("mtu")
    if want_mtu:
        mtu = port.get("netdev_mtu")
        checks.append(
            _check(
                "rail MTU",
                mtu == want_mtu,
                f"{port.get('netdev')} MTU {mtu} (planned {want_mtu})",
                dev,
                num,
            )
        )
    address = planned.get("address")
    if not address:
        return checks, None
    gids = _roce_v2_ipv4_gids(port)
    found = [g for g in gids if g["ipv4"] == address]
    have = ", ".join(g["ipv4"] for g in gids) or "none"
    checks.append(
        _check(
            "rail address",
            bool(found),
            f"{port.get('netdev')} has {address} (planned)"
            if found
            else f"{port.get('netdev')} lacks the planned {address} (RoCE v2 IPv4 GIDs: {have})",
            dev,
            num,
        )
    )
    return checks, (found[0] if found else None)


def _device_checks(devices, by_name, gpus):
    """PCIe link at its capability per device (LnkSta >= LnkCap), and nvidia_peermem
    loaded on a host with NVIDIA GPUs (GPUDirect RDMA needs it)."""
    checks = []
    for name in devices:
        link = (by_name.get(name) or {}).get("pcie") or {}
        if not (link.get("max_width") and link.get("max_speed_gts")):
            continue
        ok = (link.get("width") or 0) >= link["max_width"] and (link.get("speed_gts") or 0) >= link[
            "max_speed_gts"
        ]
        checks.append(
            _check(
                "PCIe link",
                ok,
                f"{link.get('speed_gts')} GT/s x{link.get('width')} (capable "
                f"{link['max_speed_gts']} GT/s x{link['max_width']})",
                name,
            )
        )
    if gpus.get("nvidia_gpus"):
        count = len(gpus["nvidia_gpus"])
        loaded = bool(gpus.get("nvidia_peermem"))
        checks.append(
            _check(
                "nvidia_peermem",
                loaded,
                f"loaded ({count} NVIDIA GPUs)"
                if loaded
                else f"not loaded on a host with {count} NVIDIA GPUs: GPUDirect RDMA needs "
                "it (modprobe nvidia_peermem; rdma_stack loads it)",
            )
        )
    return checks


GPUDIRECT = ("auto", "true", "false")
# The GPU-to-NIC links GPUDirect RDMA is tested over by default: behind one PCIe switch
# (PIX) or a tree of them (PXB), what NVIDIA's ngc_multinode_perf accepts. PHB and NODE
# (through the CPU's host bridges) only with rdma_verify_gpudirect_allow_node; SYS
# (across sockets) never.
GPU_LINKS = ("PIX", "PXB")


def _gpudirect(mode, gpus, checks, allow_node=False, rail_devices=None):
    """({device: {gpu, link}} or None when GPUDirect is off, error text or None,
    {device: {gpu, link}} refused as too far).

    auto: on for hosts with NVIDIA GPUs; true: on (a host without GPUs is an error);
    false: host memory. On, a perftest built without CUDA is a failed check, not a
    silent host-memory test.
    """
    mode = str(mode).lower()
    if mode not in GPUDIRECT:
        raise ValueError(f"rdma_verify_gpudirect must be one of auto, true, false; got {mode!r}")
    has_gpus = bool(gpus.get("nvidia_gpus"))
    if mode == "false" or (mode == "auto" and not has_gpus):
        return None, None, {}
    if not has_gpus:
        checks.append(_check("GPUDirect", False, "rdma_verify_gpudirect is true: no NVIDIA GPU"))
        return {}, "no NVIDIA GPU for GPUDirect", {}
    if gpus.get("perftest_cuda") is False:
        text = (
            "perftest was built without CUDA (ib_write_bw has no --use_cuda): GPUDirect RDMA "
            "cannot be tested (rdma_verify_gpudirect: false tests host memory)"
        )
        checks.append(_check("GPUDirect", False, text))
        return {}, text, {}
    nearest = gpus.get("nearest") or {}
    allowed = GPU_LINKS + (("PHB", "NODE") if allow_node else ())
    # Judged on the rails' NICs only (a storage NIC may well be far from every GPU).
    refused = {
        n: v
        for n, v in nearest.items()
        if v.get("link") not in allowed and (rail_devices is None or n in rail_devices)
    }
    text = ", ".join(
        f"{n}: GPU{v['gpu']} ({v['link']}{': refused' if n in refused else ''})"
        for n, v in sorted(nearest.items())
    )
    checks.append(
        _check("GPUDirect", bool(nearest) and not refused, text or "nvidia-smi topo -m gave no NIC")
    )
    return {n: v for n, v in nearest.items() if n not in refused}, None, refused


def _port_rate(port):
    """The port's rate with its usable share by what the link is: IB SDR/DDR/QDR carry
    8b/10b (rdma_sysfs.ENCODING); on an Ethernet link layer mlx5 names 40GBASE "4X QDR"
    and 10GBASE "1X QDR" (and 56GbE "4X FDR"), but Ethernet's 64b/66b (or PAM4 FEC)
    rates are printed as data rates: usable = the rate."""
    rate = parse_rate_detail(port.get("rate"))
    if rate and port.get("link_layer") == "Ethernet":
        rate["usable_gbps"] = rate["gbps"]
    return rate


def _refused_gpu(dev, near):
    """Why a rail gets no GPU: its nearest one is too far for GPUDirect RDMA."""
    if near["link"] == "SYS":
        why = "across sockets (SYS): GPUDirect RDMA is refused there"
    else:
        why = "set rdma_verify_gpudirect_allow_node: true to test it anyway"
    return f"the GPU nearest {dev} is GPU{near['gpu']} over {near['link']}: {why}"


def host_health(info, expect, host="this host"):
    """{checks, rails, perftest_version, roce_netdevs, boot_id, node_guids} for one host.

    Rails: the rdma_rails plan's entries bound to this host's ports (a rail whose device
    is missing is kept, named, with ``missing`` set), or without a plan every chosen
    port, named by device, in natural order (mlx5_2 before mlx5_10).
    """
    ports = list(info.get("ports") or [])
    checks = []
    if expect.get("rails"):
        planned, errors = _planned_rails(info, expect, host)
        if errors:
            checks.append(_check("rail plan", False, "; ".join(errors)))
            planned = []
        chosen = [port for _name, port, _why in planned if port]
        names = {(port["device"], port["port"]): name for name, port, _why in planned if port}
        for name, _port, problem in planned:
            if problem:
                checks.append(_check(f"rail {name}", False, problem))
    else:
        planned = None
        chosen = _selected(ports, expect)
        names = {(p["device"], p["port"]): default_rail_name(p) for p in chosen}
    devices = sorted({p["device"] for p in chosen}, key=natural_key)
    count = expect.get("device_count") or 0
    found = ", ".join(devices) or "none"
    if count:
        ok, text = len(devices) == count, f"{len(devices)} of {count} ({found})"
    else:
        ok, text = bool(devices), f"found: {found}"
    # A device the inventory asks for must be there (and of the asked link layer).
    present = {p["device"] for p in ports}
    layer = expect.get("link_layer") or ""
    missing = [
        f"{name} (not {layer})" if name in present and layer else name
        for name in device_list(expect.get("devices"))
        if name not in devices
    ]
    if missing:
        ok, text = False, f"{text}; not found: {', '.join(missing)}"
    checks.append(_check("devices", ok, text))
    for problem in info.get("problems") or []:
        checks.append(_check("tools", False, problem))
    by_name = {d["name"]: d for d in info.get("devices") or []}
    gpus = info.get("gpus") or {}
    checks += _device_checks(devices, by_name, gpus)
    cuda, cuda_error, refused = _gpudirect(
        expect.get("gpudirect", "auto"),
        gpus,
        checks,
        str(expect.get("gpudirect_allow_node", False)).lower() in ("true", "yes", "1", "on"),
        {p["device"] for p in chosen},
    )
    rails = []
    for p in chosen:
        dev, num = p["device"], p["port"]
        rail_name = names[(dev, num)]
        active = p.get("state") == "ACTIVE" and p.get("phys_state") == "LinkUp"
        checks.append(
            _check("port state", active, f"{p.get('state')}/{p.get('phys_state')}", dev, num)
        )
        want_rate = expect.get("rate_gbps") or 0
        if want_rate:
            rate = p.get("rate_gbps") or 0
            checks.append(
                _check("rate", rate >= want_rate, f"{rate} Gb/s (expected {want_rate})", dev, num)
            )
        want_mtu = expect.get("active_mtu") or 0
        if want_mtu:
            checks.append(
                _check(
                    "active MTU",
                    p.get("active_mtu") == want_mtu,
                    f"{p.get('active_mtu')} (expected {want_mtu})",
                    dev,
                    num,
                )
            )
        address = None
        gid_index = None
        if p.get("link_layer") == "Ethernet":
            need = (want_mtu or p.get("active_mtu") or 0) + ROCE_OVERHEAD
            mtu = p.get("netdev_mtu")
            checks.append(
                _check(
                    "netdev MTU",
                    mtu is not None and mtu >= need,
                    f"{p.get('netdev')} MTU {mtu} (RoCE needs >= {need})",
                    dev,
                    num,
                )
            )
            gid = p.get("roce_v2_gid")
            planned_address = (p.get("planned") or {}).get("address")
            if p.get("planned"):
                planned_checks, gid = _planned_checks(p, dev, num)
                checks += planned_checks
            if gid:
                gid_index, address = gid["index"], gid["ipv4"]
            if not planned_address:
                checks.append(
                    _check(
                        "RoCE v2 GID",
                        gid,
                        f"index {gid['index']} ({gid['ipv4']})" if gid else "no RoCE v2 IPv4 GID",
                        dev,
                        num,
                    )
                )
        elif p.get("link_layer") == "InfiniBand":
            sm = str(p.get("sm_lid") or "0")
            has_sm = sm not in ("0", "0x0", "0x0000")
            checks.append(_check("subnet manager", has_sm, f"SM LID {sm}", dev, num))
            address = expect.get("address")
        counters = p.get("counters")
        limits = expect.get("counter_max") or {}
        if counters is None:
            checks.append(_check("error counters", True, "no port counters exposed", dev, num))
        else:
            # Since-boot counts (nothing clears them unless rdma_verify_clear_counters):
            # reported; the tests judge their increase. A counter at its maximum counts no
            # more, so it fails; rdma_verify_error_counter_max still sets limits if asked.
            over = {k: counters[k] for k, v in limits.items() if counters.get(k, 0) > v}
            stuck = saturated_counters(counters)
            seen = ", ".join(f"{k}={v}" for k, v in sorted(counters.items()) if v)
            parts = [f"{k} at max ({counters[k]}): {vcounters.SATURATED_FIX}" for k in stuck]
            if over:
                parts.append("over the limit: " + ", ".join(f"{k}={v}" for k, v in over.items()))
            elif limits:
                parts.append("under the limits")
            else:
                parts.append(f"since boot: {seen}" if seen else "all zero")
            ok = not over and not stuck
            checks.append(_check("error counters", ok, "; ".join(parts), dev, num))
        rails.append(
            {
                "rail": rail_name,
                "device": dev,
                "port": num,
                "link_layer": p.get("link_layer"),
                "rate_gbps": p.get("rate_gbps"),
                "rate": _port_rate(p),
                "netdev": p.get("netdev"),
                "gid_index": gid_index,
                "address": address,
                "active": active,
                "missing": None,
                "pci": (by_name.get(dev) or {}).get("pci_address"),
                "local_cpulist": (by_name.get(dev) or {}).get("local_cpulist"),
                "numa_node": (by_name.get(dev) or {}).get("numa_node"),
                # numactl on this host (rdma_health_info found it): bind to numa_node
                "numactl": bool(info.get("numactl")),
                "cuda": (cuda or {}).get(dev, {}).get("gpu") if cuda is not None else None,
                "cuda_error": cuda_error
                or (_refused_gpu(dev, refused[dev]) if dev in refused else None)
                or (
                    f"no GPU near {dev} in nvidia-smi topo -m"
                    if cuda is not None and dev not in cuda
                    else None
                ),
            }
        )
    for name, port, problem in planned or []:
        if not port:
            rails.append({"rail": name, "device": None, "port": None, "missing": problem})
    rails.sort(key=lambda r: natural_key(r["rail"]))
    version = info.get("perftest_version")
    checks.append(_check("perftest", version, f"version {version}" if version else "not found"))
    # The netdevs of the chosen RoCE ports: the ones whose lossless QoS qos_check judges.
    roce = sorted(
        {p["netdev"] for p in chosen if p.get("link_layer") == "Ethernet" and p.get("netdev")}
    )
    return {
        "checks": checks,
        "rails": rails,
        "perftest_version": version,
        "roce_netdevs": roce,
        "boot_id": info.get("boot_id"),
        "devices": [
            {k: (by_name.get(d) or {}).get(k) for k in ("fw_ver", "board_id")} | {"name": d}
            for d in devices
        ],
        "node_guids": sorted(
            {d["node_guid"] for d in info.get("devices") or [] if d.get("node_guid")}
        ),
    }


QOS_CHECK = "RoCE QoS"


def _read_knobs(entry):
    """The knobs of a roce_qos read-back entry: [{name, have, want}], by name."""
    before, expected = entry.get("before") or {}, entry.get("expected") or {}
    want = expected.get("knobs") or {}
    return [
        {"name": name, "have": have, "want": want[name]}
        for name, have in sorted((before.get("knobs") or {}).items())
        if name in want
    ]


def qos_check(gathered, policy, require_hw=True):
    """The "RoCE QoS" check of one host: what rdma.fabric.roce_qos (state=gathered,
    interfaces=the host's RoCE netdevs) read back, against the fabric policy.

    Passes when every netdev matches; fails naming each difference ("eth2: PFC on
    0,0,0,0,0,0,0,0, policy wants priority 3"); a netdev without DCB (virtio, veth) or
    a host without mlnx_qos and dcb is "not checked", a failure only when require_hw
    (the roce_host_qos_require_hw semantics); its RoCE knobs (the ToS) are checked all
    the same. The comparison is roce_qos.mismatches.
    """
    filled, errors = normalize_policy(policy)
    if errors:
        return _check(QOS_CHECK, False, "rdma_roce_policy is invalid: " + "; ".join(errors))
    if "gathered" not in (gathered or {}):
        reason = (gathered or {}).get("msg") or "rdma.fabric.roce_qos returned no read-back"
        return _check(QOS_CHECK, False, f"cannot read the QoS: {vcommon.first_line(reason)}")
    desired = desired_qos(filled)
    differ, unchecked, matched, backends = [], [], [], set()
    for entry in gathered["gathered"]:
        iface = entry["interface"]
        knobs = _read_knobs(entry)
        if not entry.get("supported"):
            if entry.get("backend"):
                why = f"{iface} has no DCB support ({entry['backend']}: {entry.get('reason')})"
            else:
                why = f"{iface}: {entry.get('reason')}"
            # Its RoCE knobs (the ToS the switches classify by) are checked all the same.
            wrong = knob_mismatches(knobs)
            differ += [f"{iface}: {line}" for line in wrong]
            if knobs and not wrong:
                why += f", its RoCE knobs match ({', '.join(k['name'] for k in knobs)})"
            unchecked.append(why)
            continue
        backends.add(entry.get("backend"))
        lines = mismatches((entry.get("before") or {}).get("qos") or {}, desired, knobs)
        if lines:
            differ += [f"{iface}: {line}" for line in lines]
        else:
            matched.append(iface)
    parts = list(differ)
    local_tos = [e["interface"] for e in gathered["gathered"] if e.get("global_tos") is False]
    if local_tos:
        parts.append(
            f"{', '.join(local_tos)}: no global RoCE ToS on this kernel (no OFED "
            "traffic_class): only traffic whose application sets a ToS (NCCL_IB_TC, "
            "RDMA-CM's default_roce_tos) is on the lossless class"
        )
    if unchecked:
        note = "; ".join(unchecked)
        if require_hw:
            parts.append(
                f"{note}: a lossless RoCE port needs a DCB-capable NIC "
                "(rdma_verify_qos_require_hw: false skips such ports)"
            )
        else:
            parts.append(f"not checked: {note}")
    if matched:
        verb = "matches" if len(matched) == 1 else "match"
        tools = ", ".join(sorted(b for b in backends if b))
        parts.append(f"{', '.join(matched)} {verb} rdma_roce_policy ({tools})")
    ok = not differ and not (unchecked and require_hw)
    skipped = ok and not matched
    return _check(QOS_CHECK, ok, "; ".join(parts) or "no RoCE netdev to check", skipped=skipped)


def _matrix(hosts, records, rail, binary=None):
    """The tested directions of one rail, sparse (cost linear in the tests, no N x N
    structure): {hosts, cells: [[sender index, receiver index, Gb/s, measured/expected,
    outcome]]}, the main test of each direction (flaky: its retest). Both directions of
    a pair run: each is its own cell (row = sender, column = receiver)."""
    client_sends = viso.sender_is_client(binary)
    index = {h: i for i, h in enumerate(hosts)}
    cells = {}
    # Cells are tuples, their ratios (a few hundred values) one object each: a rail's
    # map has a cell per test.
    ratios = {}
    for r in records:
        if r["kind"] != "bw" or r["phase"] != "main" or r["rail"] != rail:
            continue
        sender, receiver = (
            (r["client"], r["server"]) if client_sends else (r["server"], r["client"])
        )
        if sender not in index or receiver not in index:
            continue
        gbps, expected = r["measured_gbps"], r["expected_gbps"]
        ratio = round((gbps or 0) / expected, 3) if expected else None
        ratio = ratios.setdefault(ratio, ratio)
        outcome = r.get("outcome", "passed" if r["passed"] else "failed")
        cells[(index[sender], index[receiver])] = (gbps, ratio, outcome)
    return {"hosts": hosts, "cells": [(i, j, *cell) for (i, j), cell in sorted(cells.items())]}


def report(health, records, isolate, options, stamp, fabric=None, hosts=None, fabric_hosts=None):
    """The document results.json holds; report.md/html and junit.xml render from it.

    hosts: every inventory host of the play; one without health (unreachable, or failed
    before its health was read) is an "unreachable" row that fails the run.
    fabric_hosts: the fabric's hosts (rdma_verify_fabric_group): those not in the play
    (a --limit run) make summary.partial {tested, of, missing}.
    """
    hosts = sorted(hosts or health, key=natural_key)
    fabric = fabric if fabric else vfabric.fabric({h: health[h] for h in health if health[h]})
    checks = [dict(c) for c in fabric.get("checks") or []]
    unreachable = []
    for host in hosts:
        if not health.get(host):
            unreachable.append(host)
            checks.append(
                _check("reachable", False, "unreachable, or failed before its health was read")
                | {"host": host}
            )
            continue
        checks += [dict(c, host=host) for c in health[host]["checks"]]
    lost = {h for r in records for h in r.get("lost") or ()}
    for host in hosts:
        if host in lost and host not in unreachable:
            unreachable.append(host)
            checks.append(
                _check("reachable", False, "lost during traffic: no perftest result came back")
                | {"host": host}
            )
    verdict = (isolate or {}).get("verdicts") or {}
    final = [r for r in records if r["phase"] in ("main", "latency")]
    outcome = [r.get("outcome", "passed" if r["passed"] else "failed") for r in final]
    failed_checks = [c for c in checks if not c["ok"]]
    skipped_checks = [c for c in checks if c.get("skipped")]
    failed = outcome.count("failed")
    bad = {k: v for k, v in verdict.items() if v.get("bad")}
    summary = {
        "hosts": len(hosts),
        "checks": len(checks),
        "checks_failed": len(failed_checks),
        "checks_skipped": len(skipped_checks),
        "tests": len(final),
        "tests_passed": outcome.count("passed"),
        "tests_flaky": outcome.count("flaky"),
        "tests_failed": failed,
        "tests_peer_lost": outcome.count("peer lost"),
        "tests_not_run": outcome.count("not run"),
        "retests": sum(r["phase"] == "retest" for r in records),
        "bad_hosts": sorted({v["host"] for v in bad.values()}, key=natural_key),
        "bad_rails": sorted(bad, key=natural_key),
        "unreachable": unreachable,
        # Rail-level verdicts (a leaf half, every pair at a fraction of the rate).
        "rail_verdicts": [v for _r, v in sorted(((isolate or {}).get("rails") or {}).items())],
        "passed": not failed_checks and not failed and not unreachable and "not run" not in outcome,
        "partial": verify_scope.partial(fabric_hosts, hosts),
    }
    live = [h for h in hosts if health.get(h)]
    rails = fabric.get("rails") or {}
    # Who sends: the bandwidth options' binary (the role's), or a plain options dict's.
    binary = (options.get("bandwidth") or {}).get("binary", options.get("binary"))
    return {
        "generated_utc": stamp,
        "options": options,
        "summary": summary,
        "rails": rails,
        "hosts": {
            h: {
                "rails": health[h]["rails"],
                "perftest_version": health[h]["perftest_version"],
            }
            if health.get(h)
            else {"unreachable": True, "rails": []}
            for h in hosts
        },
        "checks": checks,
        "pairs": records,
        "isolation": dict(isolate or {}, verdicts=verdict),
        "matrix": {rail: _matrix(live, records, rail, binary) for rail in rails},
    }
