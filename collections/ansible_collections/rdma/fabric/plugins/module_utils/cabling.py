# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cabling proof: every rail NIC reaches its rail's leaf (and the planned leaf port).

The plan (``expected_cabling``) comes from the inventory:

    rdma_rails:
      - name: rail0
        device: mlx5_0
        leaf: leaf-rail0          # the rail's leaf switch (its name as LLDP or the IB
        # leaf_group: rail0_leaves  #   node description shows it), or an inventory group
        ...                       #   whose switches are the rail's leaves
    rdma_cabling_ports:           # optional, per leaf: host index -> leaf port
      leaf-rail0: {1: swp1, 2: swp2}
      leaf-rail0-ib: {1: 1, 2: 2}  # IB leaf ports are numbers

A host's index is ``rdma_rail_host_index`` (the one the L3 rail addressing uses). With a
port map, a host's index picks its leaf among the rail's leaves and its port there.

What each rail port reaches (``observed``: {rail: [{switch, port}]}) comes from LLDP on
the host (lldpcli), from the switches' own LLDP tables (NVUE, SONiC, EOS), or on
InfiniBand from one fabric-wide ibnetdiscover/iblinkinfo read; one parser per tool below.
``judge_host`` turns plan and reading into one row per (host, rail) and the findings; a
swapped pair of cables (rail A on B's leaf and B on A's) is one finding, not two.
"""

from __future__ import annotations

import json
import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.rails import _int, natural_key

CHECK = "cabling"
MODES = ("auto", "true", "false")


def _mode(value):
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return "true"
    if text in ("false", "no", "off", "0"):
        return "false"
    return text


def switch_key(name):
    """How names of one switch compare: the hostname LLDP sends (sysname, maybe an FQDN),
    the inventory name, or an MLNX-OS IB node description ("MF0;leaf-rail0:MQM9700/U1")
    all reduce to the short host name, lower case."""
    text = str(name or "").strip()
    match = re.match(r"^[A-Za-z0-9]+;([^:;]+):", text)
    if match:
        text = match.group(1)
    return text.split(".")[0].lower()


def port_key(port):
    """Leaf ports compare as text without case or blanks (swp7, Ethernet7/1, 7)."""
    return re.sub(r"\s+", "", str(port if port is not None else "")).lower()


def expected_cabling(rails, hosts_vars, port_maps=None, groups=None, mode="auto"):
    """({host: {rail: {leaves, leaf, port}}}, errors) from the inventory.

    rails: rdma_rails as written (each may have ``leaf`` or ``leaf_group``).
    hosts_vars: {host: {rdma_rail_host_index}}. port_maps: rdma_cabling_ports.
    groups: the inventory's groups ({name: [members]}), for ``leaf_group``.
    mode: rdma_verify_cabling (auto: checked when any rail names a leaf; true: every
    rail must; false: not checked, nothing refused).
    Every error names the variable, and the host when one is at fault.
    """
    mode = _mode(mode)
    if mode not in MODES:
        return None, [f"rdma_verify_cabling must be one of auto, true, false; got {mode!r}"]
    if mode == "false":
        return {}, []
    errors = []
    groups = groups or {}
    leaves = {}
    for position, rail in enumerate(rails or []):
        if not isinstance(rail, dict):
            continue
        name = rail.get("name") or f"#{position}"
        where = f"rdma_rails[{position}] ({name})"
        leaf, group = rail.get("leaf"), rail.get("leaf_group")
        if leaf not in (None, "") and group not in (None, ""):
            errors.append(f"{where}: set leaf or leaf_group, not both")
            continue
        if leaf not in (None, ""):
            if not isinstance(leaf, str):
                errors.append(f"{where}.leaf must be a switch name; got {leaf!r}")
                continue
            leaves[name] = [leaf]
        elif group not in (None, ""):
            members = groups.get(group) if isinstance(group, str) else None
            if not members:
                errors.append(
                    f"{where}.leaf_group {group!r} is no inventory group with switches in it"
                )
                continue
            leaves[name] = sorted(members, key=natural_key)
        else:
            leaves[name] = None
    named = [r for r, v in leaves.items() if v]
    if not named and mode == "auto":
        return {}, errors
    for rail, value in leaves.items():
        if value is None:
            errors.append(
                f"rdma_rails: rail {rail} has no leaf (set leaf or leaf_group) while the "
                f"cabling check is on (rdma_verify_cabling: {mode}"
                + (", and other rails name their leaf)" if mode == "auto" else ")")
            )
    maps = _port_maps(port_maps, leaves, errors)
    if errors:
        return None, errors
    plan = {}
    for host in sorted(hosts_vars or {}, key=natural_key):
        host_vars = hosts_vars[host] or {}
        raw = host_vars.get("rdma_rail_host_index")
        index = _int(raw)
        rows = {}
        for rail, rail_leaves in leaves.items():
            mapped = [leaf for leaf in rail_leaves if leaf in maps]
            if not mapped:
                rows[rail] = {"leaves": rail_leaves, "leaf": _one(rail_leaves), "port": None}
                continue
            if index is None:
                errors.append(
                    f"{host}: rdma_rail_host_index is needed (got {raw!r}): "
                    f"rdma_cabling_ports maps the ports of rail {rail}'s leaf"
                )
                break
            hits = [(leaf, maps[leaf][index]) for leaf in mapped if index in maps[leaf]]
            if not hits:
                errors.append(
                    f"{host}: rdma_rail_host_index {index} is missing from rdma_cabling_ports."
                    f"{' / '.join(mapped)} (rail {rail})"
                )
                continue
            if len(hits) > 1:
                errors.append(
                    f"{host}: rdma_rail_host_index {index} is in rdma_cabling_ports of "
                    f"{' and '.join(h[0] for h in hits)}, both leaves of rail {rail}"
                )
                continue
            leaf, port = hits[0]
            rows[rail] = {"leaves": rail_leaves, "leaf": leaf, "port": str(port)}
        plan[host] = rows
    return (None, errors) if errors else (plan, [])


def rail_leaves(rails, groups=None, mode="auto"):
    """The leaves the rails name, as written: each ``leaf`` and every member of each
    ``leaf_group`` (the switches a cabling check reads from their side); none when
    rdma_verify_cabling (mode) is off."""
    if _mode(mode) == "false":
        return []
    out = []
    for rail in rails or []:
        if not isinstance(rail, dict):
            continue
        names = [rail["leaf"]] if rail.get("leaf") else []
        if rail.get("leaf_group"):
            names += list((groups or {}).get(rail["leaf_group"]) or [])
        out += [name for name in names if name not in out]
    return out


def _one(values):
    return values[0] if len(values) == 1 else None


def _port_maps(port_maps, leaves, errors):
    """rdma_cabling_ports checked: {leaf: {index(int): port}}; a port twice is refused."""
    if port_maps in (None, ""):
        return {}
    if not isinstance(port_maps, dict):
        errors.append(
            f"rdma_cabling_ports must be a dictionary of leaf -> {{host index: port}}; "
            f"got {port_maps!r}"
        )
        return {}
    known = {leaf for value in leaves.values() for leaf in value or []}
    out = {}
    for leaf, mapping in port_maps.items():
        where = f"rdma_cabling_ports.{leaf}"
        if leaf not in known:
            errors.append(
                f"{where}: {leaf} is no rail's leaf (rdma_rails leaf/leaf_group name: "
                f"{', '.join(sorted(known, key=natural_key)) or 'none'})"
            )
            continue
        if not isinstance(mapping, dict):
            errors.append(f"{where} must be a dictionary of host index -> port; got {mapping!r}")
            continue
        ports = {}
        seen = {}
        for raw, port in mapping.items():
            index = _int(raw)
            if index is None:
                errors.append(f"{where}: host index {raw!r} is not a non-negative integer")
                continue
            if port in (None, "") or isinstance(port, (bool, dict, list)):
                errors.append(f"{where}.{raw}: a port name or number is needed; got {port!r}")
                continue
            key = port_key(port)
            if key in seen:
                errors.append(
                    f"{where}: port {port} is mapped twice (host indexes {seen[key]} and {index})"
                )
                continue
            seen[key] = index
            ports[index] = port
        out[leaf] = ports
    return out


# ---------------------------------------------------------------- parsers, one per tool


def parse_lldpcli_json(text):
    """{local interface: [{switch, port, port_descr}]} from ``lldpcli -f json show
    neighbors``. lldpd's "json" format writes ``interface`` as an object when there is
    one neighbour and as a list of one-key objects when there are several; the chassis is
    keyed by its SysName (lldpd tests/integration/test_lldpcli.py). "json0" (lists
    everywhere, the name as a field) is read too."""
    data = json.loads(text) if isinstance(text, str) else text
    lldp = (data or {}).get("lldp") or {}
    if isinstance(lldp, list):  # json0
        lldp = lldp[0] if lldp else {}
    interfaces = lldp.get("interface") or []
    pairs = []
    if isinstance(interfaces, dict):
        pairs = list(interfaces.items())
    else:
        for item in interfaces:
            if isinstance(item, dict) and "name" in item and not isinstance(item["name"], dict):
                pairs.append((item["name"], item))  # json0
            elif isinstance(item, dict):
                pairs.extend(item.items())
    out = {}
    for name, entry in pairs:
        out.setdefault(name, []).append(_lldp_entry(entry))
    return out


def _first(value):
    """json0 wraps every value in [{"value": ...}]."""
    while isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict) and "value" in value:
        return value["value"]
    return value


def _lldp_entry(entry):
    chassis = entry.get("chassis") or {}
    if isinstance(chassis, list):  # json0
        chassis = chassis[0] if chassis else {}
        sysname = _first(chassis.get("name"))
    elif "id" in chassis or "name" in chassis:
        sysname = _first(chassis.get("name"))
    else:
        sysname = next(iter(chassis), None)
    port = entry.get("port") or {}
    if isinstance(port, list):
        port = port[0] if port else {}
    port_id = port.get("id") or {}
    if isinstance(port_id, list):
        port_id = port_id[0] if port_id else {}
    return {
        "switch": sysname,
        "port": _port_from(port_id.get("type"), port_id.get("value"), _first(port.get("descr"))),
        "port_descr": _first(port.get("descr")),
    }


def _port_from(kind, value, descr):
    """A leaf port's name: the port ID when it is an interface name or a locally
    assigned one (Cumulus and EOS send ifname, SONiC its port alias as "local"); with a
    MAC port ID (some switches) the port description is the best name there is."""
    if kind in ("ifname", "local", "ifalias") and value:
        return value
    return descr or value


def parse_lldpcli_keyvalue(text):
    """The same from ``lldpcli -f keyvalue show neighbors``: lines
    ``lldp.<if>.chassis.name=...``, ``lldp.<if>.port.<ifname|local|mac>=...``,
    ``lldp.<if>.port.descr=...`` (lldpd tests/integration)."""
    fields = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if not sep or not key.startswith("lldp."):
            continue
        parts = key.split(".")
        if len(parts) < 4:
            continue
        iface, rest = parts[1], ".".join(parts[2:])
        fields.setdefault(iface, {})[rest] = value.strip()
    out = {}
    for iface, kv in fields.items():
        kind = next((k for k in ("ifname", "local", "mac") if f"port.{k}" in kv), None)
        out[iface] = [
            {
                "switch": kv.get("chassis.name"),
                "port": _port_from(kind, kv.get(f"port.{kind}"), kv.get("port.descr")),
                "port_descr": kv.get("port.descr"),
            }
        ]
    return out


_IBND_SWITCH = re.compile(r"^switchguid=(0x[0-9a-fA-F]+)")
_IBND_CA = re.compile(r"^caguid=(0x[0-9a-fA-F]+)")
_IBND_NODE = re.compile(r'^(Switch|Ca)\s+\d+\s+"([^"]*)"\s*(?:#\s*"([^"]*)")?')
_IBND_CA_PORT = re.compile(
    r'^\[(\d+)\](?:\((\w+)\))?\s+"([SH])-([0-9a-fA-F]+)"\[(\d+)\](?:\(\w+\))?\s*'
    r'(?:#.*?"([^"]*)")?'
)


def parse_ibnetdiscover(text):
    """Links of every CA port to a switch from ``ibnetdiscover``: [{ca_guid (node),
    ca_desc, ca_port, port_guid, switch_guid, switch, port}]. A CA block (``caguid=``,
    ``Ca N "H-<guid>" # "<node description>"``) lists its ports as
    ``[1](<port guid>) "S-<switch guid>"[<switch port>] # lid .. "<switch description>"``
    (infiniband-diags ibnetdiscover.c, out_ca/out_ca_port; tabs or spaces)."""
    switches = {}
    links = []
    kind = guid = desc = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        match = _IBND_SWITCH.match(line) or _IBND_CA.match(line)
        if match:
            kind = "switch" if line.startswith("switch") else "ca"
            guid, desc = normalize_guid(match.group(1)), None
            continue
        match = _IBND_NODE.match(line)
        if match and guid:
            desc = match.group(3) if match.group(3) is not None else match.group(2)
            if kind == "switch":
                switches[guid] = desc
            continue
        match = _IBND_CA_PORT.match(line)
        if match and kind == "ca" and match.group(3) == "S":
            links.append(
                {
                    "ca_guid": guid,
                    "ca_desc": desc,
                    "ca_port": int(match.group(1)),
                    "port_guid": normalize_guid(match.group(2)) if match.group(2) else None,
                    "switch_guid": normalize_guid(match.group(4)),
                    "switch": match.group(6),
                    "port": int(match.group(5)),
                }
            )
    for link in links:
        link["switch"] = switches.get(link["switch_guid"]) or link["switch"]
    return links


_IBLI_HEAD = re.compile(r"^(CA|Switch):\s+(?:(0x[0-9a-fA-F]+)\s+)?(.*?):?\s*$")
_IBLI_LINK = re.compile(
    r"^\s*(?:(0x[0-9a-fA-F]+)\s+)?\d+\s+(\d+)\[[^\]]*\]\s+==\(.*?\)==>\s+"
    r'(?:\d+\s+)?(\d+)\[[^\]]*\]\s+"([^"]*)"'
)


def parse_iblinkinfo(text):
    """The same links from ``iblinkinfo`` (infiniband-diags): blocks headed
    ``CA: <node description>:`` with ``<port guid> <lid> <port>[  ] ==( ... )==> <lid>
    <port>[  ] "<remote description>" ( ... )``, and ``Switch: <guid> <description>:``
    blocks (the switch side; used for the switch GUID). CA links only."""
    links = []
    switch_guids = {}
    kind = desc = None
    for raw in (text or "").splitlines():
        head = _IBLI_HEAD.match(raw)
        if head:
            kind, desc = head.group(1), head.group(3)
            if kind == "Switch" and head.group(2):
                switch_guids[desc] = normalize_guid(head.group(2))
            continue
        match = _IBLI_LINK.match(raw)
        if match and kind == "CA" and match.group(4):
            links.append(
                {
                    "ca_guid": None,
                    "ca_desc": desc,
                    "ca_port": int(match.group(2)),
                    "port_guid": normalize_guid(match.group(1)) if match.group(1) else None,
                    "switch_guid": None,
                    "switch": match.group(4),
                    "port": int(match.group(3)),
                }
            )
    for link in links:
        link["switch_guid"] = switch_guids.get(link["switch"])
    return links


def parse_nvue_lldp(switch, interfaces):
    """{switch port: [{host, port}]} from NVUE, {swp: {lldp: {neighbor: {id: {chassis:
    {system-name, chassis-id}, port: {name, description, type}}}}}}: each port's
    ``GET /nvue_v1/interface/{id}/lldp/neighbor?rev=operational`` (NVIDIA Cumulus Linux 5
    NVUE API), gathered per port by roce_switch_qos's lldp_cumulus.yml."""
    data = json.loads(interfaces) if isinstance(interfaces, str) else interfaces
    if isinstance(data, list):
        # The per-port reads as ansible.builtin.uri's loop results: {item: the port,
        # status, json: the port's neighbours}; a port without one answers 404 or {}.
        data = {
            r["item"]: {"lldp": {"neighbor": r.get("json") if r.get("status") == 200 else {}}}
            for r in data
            if isinstance(r, dict) and r.get("item")
        }
    out = {}
    for port, body in (data or {}).items():
        neighbors = ((body or {}).get("lldp") or {}).get("neighbor") or {}
        if not isinstance(neighbors, dict):
            continue
        for _nid, neighbor in neighbors.items():
            chassis = neighbor.get("chassis") or {}
            remote = neighbor.get("port") or {}
            # A MAC port ID (lldpd's default) names no interface: the description does
            # (Cumulus docs, LLDP: "PortID: ifname 48:b0:2d:76:ee:8e", "PortDescr: eth1").
            name = remote.get("name")
            if remote.get("type") == "mac" or not name:
                name = remote.get("description") or name
            out.setdefault(port, []).append(
                {"host": chassis.get("system-name") or chassis.get("chassis-id"), "port": name}
            )
    return out


def parse_sonic_lldp(text):
    """{switch port: [{host, port}]} from SONiC's APPL_DB LLDP_ENTRY_TABLE as JSON
    {"LLDP_ENTRY_TABLE:Ethernet0": {lldp_rem_sys_name, lldp_rem_port_id,
    lldp_rem_port_desc, ...}} (sonic-buildimage dockers/docker-lldp lldp_syncd: the remote
    fields it writes), or as ``redis-dump -d 0 -k 'LLDP_ENTRY_TABLE:*'`` prints it, each
    key's hash under "value" beside its "type", "ttl" and "expireat"."""
    data = json.loads(text) if isinstance(text, str) else text
    out = {}
    for key, fields in (data or {}).items():
        port = key.split(":", 1)[1] if ":" in key else key
        fields = fields or {}
        if isinstance(fields.get("value"), dict) and "type" in fields:  # redis-dump
            fields = fields["value"]
        remote = fields.get("lldp_rem_port_id")
        if fields.get("lldp_rem_port_id_subtype") == "3":  # a MAC address (IEEE 802.1AB)
            remote = fields.get("lldp_rem_port_desc") or remote
        out.setdefault(port, []).append({"host": fields.get("lldp_rem_sys_name"), "port": remote})
    return out


def parse_eos_lldp(text):
    """{switch port: [{host, port}]} from EOS ``show lldp neighbors detail | json``
    (roce_switch_qos's lldp_eos.yml): {"lldpNeighbors": {port: {"lldpNeighborInfo":
    [{systemName, chassisId, neighborInterfaceInfo: {interfaceIdType, interfaceId,
    interfaceId_v2, interfaceDescription}}]}}} (Arista eAPI; the shape of
    aristanetworks/anta's VerifyLLDPNeighbors fixtures). A MAC port ID (interfaceIdType
    macAddress, lldpd's default) names no interface: the port description does, as on
    NVUE and SONiC. Also reads ``show lldp neighbors | json``'s rows ({port,
    neighborDevice, neighborPort, ttl}), which carry the port ID only."""
    data = json.loads(text) if isinstance(text, str) else text
    neighbors = (data or {}).get("lldpNeighbors") or []
    out = {}
    if isinstance(neighbors, list):
        for row in neighbors:
            out.setdefault(row.get("port"), []).append(
                {"host": row.get("neighborDevice"), "port": row.get("neighborPort")}
            )
        return out
    for port, body in neighbors.items():
        for info in (body or {}).get("lldpNeighborInfo") or []:
            remote = info.get("neighborInterfaceInfo") or {}
            name = remote.get("interfaceId_v2") or (remote.get("interfaceId") or "").strip('"')
            if remote.get("interfaceIdType") == "macAddress" or not name:
                name = remote.get("interfaceDescription") or name
            out.setdefault(port, []).append(
                {"host": info.get("systemName") or info.get("chassisId"), "port": name or None}
            )
    return out


SWITCH_OSES = ("cumulus", "sonic", "eos")


def parse_switch_lldp(switch_os, reading, switch=None):
    """{switch port: [{host, port}]} from one leaf's LLDP table, by its rdma_switch_os:
    cumulus (NVUE, per port), sonic (LLDP_ENTRY_TABLE), eos (show lldp neighbors detail)."""
    if switch_os == "cumulus":
        return parse_nvue_lldp(switch, reading)
    if switch_os == "sonic":
        return parse_sonic_lldp(reading)
    if switch_os == "eos":
        return parse_eos_lldp(reading)
    raise ValueError(
        f"rdma_switch_os {switch_os!r}: no LLDP reader (one of {', '.join(SWITCH_OSES)})"
    )


# ------------------------------------------------------- readings bound to a host's rails


def observed_from_lldp(neighbors, rails, index):
    """{rail: [{switch, port}]} of one host from its lldpcli reading.

    neighbors: parse_lldpcli_*; rails: the host's rails ({rail, netdev, ...}, as
    verify_host_health lists them). index: cabling_index's, whose ``planned`` keys are the
    fabric's hosts: a rail netdev hears their own lldpd where the segment floods LLDP (a
    hub, a switch forwarding the nearest-bridge group, the lab's vde segments), and a host
    is not the rail's leaf, so those neighbours are left out (the names reduced once for
    the play, not once per host)."""
    hosts = _Planned(index)
    out = {}
    for rail in rails:
        seen = neighbors.get(rail.get("netdev")) or []
        out[rail["rail"]] = [
            {"switch": n.get("switch"), "port": n.get("port"), "via": "LLDP (host)"}
            for n in seen
            if switch_key(n.get("switch")) not in hosts
        ]
    return out


class _Planned:
    """``key in`` the index's planned hosts, without building a set per host."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __contains__(self, key):
        return key in self.index and bool((self.index[key] or {}).get("planned"))


def observed_from_ib(links, rails, host, node_guids=None):
    """{rail: [{switch, port}]} of one host from one fabric-wide IB read.

    A rail port is found by its device's node GUID (node_guids: {device: GUID}) and
    port, else by the node description rdma-ndd gives it: "<hostname> <device>"
    (rdma-core rdma-ndd, the default "%h %d")."""
    by_guid = {(link["ca_guid"], link["ca_port"]): link for link in links if link["ca_guid"]}
    by_desc = {}
    for link in links:
        desc = (link.get("ca_desc") or "").split()
        if len(desc) >= 2:
            by_desc[(switch_key(desc[0]), desc[1], link["ca_port"])] = link
    out = {}
    for rail in rails:
        link = None
        guid = (node_guids or {}).get(rail.get("device"))
        if guid:
            link = by_guid.get((normalize_guid(guid), rail.get("port") or 1))
        if link is None:
            link = by_desc.get((switch_key(host), rail.get("device"), rail.get("port") or 1))
        out[rail["rail"]] = (
            [{"switch": link["switch"], "port": str(link["port"]), "via": "InfiniBand SMPs"}]
            if link
            else []
        )
    return out


def cabling_index(switch_reads, plan=None):
    """The leaves' LLDP tables and the plan's hosts by host, once for the play:
    {host key: {planned, switch: [{switch, port, netdev, n}]}}.

    A host key is switch_key of a name: of the neighbour a leaf port names (``switch``:
    the leaf, its port, the neighbour's port, i.e. the host's netdev, and ``n``, the
    entry's place in the tables' order), or of a host in ``plan`` (``planned``: a
    neighbour by that name is a fabric host, not a leaf). Each host's judgement then
    reads its own keys: its work is its own entries, not every leaf's whole table
    (O(hosts x entries) for the play; rdma_verify's tasks/cabling.yml builds it
    run_once). switch_reads: {leaf: parse_switch_lldp's {port: [{host, port}]}}."""
    index = {}
    n = 0
    for switch, ports in (switch_reads or {}).items():
        for port, neighbors in (ports or {}).items():
            for neighbor in neighbors:
                row = index.setdefault(switch_key(neighbor.get("host")), {"planned": False})
                row.setdefault("switch", []).append(
                    {"switch": switch, "port": port, "netdev": neighbor.get("port"), "n": n}
                )
                n += 1
    for host in plan or {}:
        index.setdefault(switch_key(host), {})["planned"] = True
    return index


def observed_from_switches(index, rails, host, names=()):
    """{rail: [{switch, port}]} of one host from the switches' own LLDP tables.

    index: cabling_index's, read by key: only this host's entries. A switch port whose
    neighbour is this host (its inventory name, or one of ``names``: the system name its
    lldpd sends) on a rail's netdev is that rail's."""
    by_netdev = {rail.get("netdev"): rail["rail"] for rail in rails if rail.get("netdev")}
    me = {switch_key(n) for n in (host, *names) if n}
    entries = []
    for key in me:
        entries += (index.get(key) or {}).get("switch") or []
    if len(me) > 1:
        entries.sort(key=lambda e: e["n"])  # the tables' order, as one scan gives it
    out = {rail["rail"]: [] for rail in rails}
    for entry in entries:
        rail = by_netdev.get(entry["netdev"])
        if rail:
            out[rail].append(
                {"switch": entry["switch"], "port": entry["port"], "via": "LLDP (switch)"}
            )
    return out


# ------------------------------------------------------------------------------ the judge


def _rail_pair(one, two):
    """ "rails 2 and 3" for rail2/rail3, "rails ib0 and ib1" otherwise."""
    a, b = sorted((one, two), key=natural_key)
    prefix = re.match(r"^(.*?)(\d+)$", a), re.match(r"^(.*?)(\d+)$", b)
    if all(prefix) and prefix[0].group(1) == prefix[1].group(1):
        return f"rails {prefix[0].group(2)} and {prefix[1].group(2)}"
    return f"rails {a} and {b}"


def judge_host(host, expected, observed, rails, owners=None):
    """{rows, checks, miscabled} for one host.

    expected: expected_cabling's rows of this host ({rail: {leaves, leaf, port}}) that are
    judged; owners: every planned rail's rows (default expected), whose leaves a judged
    rail may reach instead of its own ("rail 0's leaf" even when rail 0 is not judged).
    observed: {rail: [{switch, port}]}. rails: the host's rails ({rail, device, netdev}).
    rows: one per planned rail: {host, rail, device, netdev, planned_leaf, planned_port,
    leaf, port, status (planned|swapped|wrong rail|wrong port|unknown switch|no neighbour),
    detail}. checks: rdma_verify checks (a swapped pair is one). miscabled: {rail: why}
    for the rails whose tests are skipped.
    """
    info = {r["rail"]: r for r in rails}
    owner = {}
    for rail, want in (owners or expected).items():
        for leaf in want["leaves"]:
            owner[switch_key(leaf)] = rail
    rows = {}
    for rail in sorted(expected, key=natural_key):
        want = expected[rail]
        got = (observed or {}).get(rail) or []
        dev = info.get(rail, {}).get("device")
        netdev = info.get(rail, {}).get("netdev")
        label = f"{host} {rail}" + (f" ({dev})" if dev else "")
        planned = want["leaf"] or " or ".join(want["leaves"])
        row = {
            "host": host,
            "rail": rail,
            "device": dev,
            "netdev": netdev,
            "planned_leaf": planned,
            "planned_port": want["port"],
            "leaf": None,
            "port": None,
            "reaches": None,
        }
        if not got:
            how = f"netdev {netdev}" if netdev else "its port"
            row.update(status="no neighbour", detail=f"{label}: no neighbour seen on {how}")
        else:
            switches = [n for n in got if n.get("switch")]
            first = switches[0] if switches else got[0]
            row.update(leaf=first.get("switch"), port=first.get("port"))
            where = f"{first.get('switch')} {first.get('port')}".strip()
            reached = owner.get(switch_key(first.get("switch")))
            row["reaches"] = reached
            wanted = {switch_key(leaf) for leaf in want["leaves"]}
            if want["leaf"]:
                wanted = {switch_key(want["leaf"])}
            if len({switch_key(n.get("switch")) for n in got}) > 1:
                names = ", ".join(sorted({str(n.get("switch")) for n in got}))
                row.update(
                    status="several neighbours",
                    detail=f"{label} sees several switches ({names}): a hub or a shared segment",
                )
            elif switch_key(first.get("switch")) in wanted:
                # Any reading of the leaf's port may match the plan: SONiC advertises a
                # port's alias (etp1) by LLDP while its own table and CONFIG_DB name it
                # Ethernet0 (sonic-buildimage lldpmgrd: portidsubtype local <alias>).
                names = {port_key(n.get("port")) for n in got}
                if want["port"] and port_key(want["port"]) not in names:
                    row.update(
                        status="wrong port",
                        detail=f"{label} reaches {where}; the plan says {planned} {want['port']}",
                    )
                else:
                    row.update(status="planned", detail=f"cabled to {where} as planned")
            elif reached:
                row.update(
                    status="wrong rail",
                    detail=f"{label} reaches {where}; the plan says {planned} "
                    f"(rail {reached}'s leaf)",
                )
            else:
                row.update(
                    status="unknown switch",
                    detail=f"{label} reaches {where}, which is no rail's leaf; the plan "
                    f"says {planned}",
                )
        rows[rail] = row
    checks = []
    miscabled = {}
    done = set()
    for rail, row in rows.items():
        if rail in done:
            continue
        other = row.get("reaches") if row["status"] == "wrong rail" else None
        back = rows.get(other) if other else None
        if back and back["status"] == "wrong rail" and back.get("reaches") == rail:
            pair = _rail_pair(rail, other)
            for name in (rail, other):
                one = rows[name]
                reach = one["detail"].split("; the plan")[0]
                one.update(
                    status="swapped",
                    detail=f"{reach}; the plan says {one['planned_leaf']}: {pair} look swapped",
                )
                miscabled[name] = f"cabling: {pair} look swapped"
                done.add(name)
            checks.append(
                _check(False, row["detail"], [row["device"], back["device"]], [info, rail, other])
            )
            continue
        done.add(rail)
        ok = row["status"] == "planned"
        if not ok:
            miscabled[rail] = f"cabling: {row['detail']}"
        checks.append(_check(ok, row["detail"], [row["device"]], [info, rail]))
    return {
        "rows": [rows[r] for r in sorted(rows, key=natural_key)],
        "checks": checks,
        "miscabled": miscabled,
    }


def _check(ok, detail, devices, where=None):
    """One rdma_verify check; where: [rails info, rail names...] for the port column."""
    names = [d for d in devices if d]
    ports = []
    if where:
        info, *rails = where
        ports = sorted({str((info.get(r) or {}).get("port")) for r in rails} - {"None"})
    return {
        "check": CHECK,
        "device": ",".join(names) or None,
        "port": ",".join(ports) or None,
        "ok": bool(ok),
        "detail": detail,
    }


def table_by_leaf(rows):
    """{leaf: [rows]} for the report: each planned leaf with the ports it should carry."""
    out = {}
    for row in rows:
        out.setdefault(row["planned_leaf"], []).append(row)
    return {
        leaf: sorted(items, key=lambda r: (natural_key(r["host"]), natural_key(r["rail"])))
        for leaf, items in sorted(out.items(), key=lambda kv: natural_key(kv[0] or ""))
    }


# ------------------------------------------------------------------- rdma_verify's use


def plan_for_play(rails, hostvars, hosts, port_maps=None, groups=None, mode="auto"):
    """expected_cabling over the play's hosts, reading each one's rdma_rail_host_index
    from hostvars; raises ValueError with every error (one a line)."""
    named = any(isinstance(r, dict) and (r.get("leaf") or r.get("leaf_group")) for r in rails or [])
    if _mode(mode) == "false" or (_mode(mode) == "auto" and not named):
        return {}  # no check: the hosts' variables are not even read (preflight at scale)
    hosts_vars = {}
    for host in hosts:
        value = (hostvars[host] or {}).get("rdma_rail_host_index") if host in hostvars else None
        hosts_vars[host] = {"rdma_rail_host_index": value}
    plan, errors = expected_cabling(rails, hosts_vars, port_maps, groups, mode)
    if errors:
        raise ValueError("the cabling plan is refused:\n" + "\n".join(errors))
    return plan


def _merged(first, second):
    """Both readings of each rail, the second's entries that the first lacks added (a
    leaf port seen from the host and from the switch is one entry)."""
    out = {}
    for rail in set(first) | set(second):
        entries = list(first.get(rail) or [])
        seen = {(switch_key(e.get("switch")), port_key(e.get("port"))) for e in entries}
        for entry in second.get(rail) or []:
            if (switch_key(entry.get("switch")), port_key(entry.get("port"))) not in seen:
                entries.append(entry)
        out[rail] = entries
    return out


def judge_into_health(
    health, plan, host, lldp=None, ib_text=None, node_guids=None, switch_reads=None, index=None
):
    """This host's health with the cabling check(s) added, ``cabling`` ({rows,
    miscabled}) set, and each miscabled rail taken out of the tests: its ``device`` is
    None and ``missing`` says why, as for a rail without a port, so that the planner
    reports those tests as not run with the reason.

    lldp: rail_neighbors_info's result (RoCE); ib_text: one ibnetdiscover read (IB);
    node_guids: {device: node GUID} (rdma_health_info's devices); switch_reads: {leaf:
    {port: [{host, port}]}} from the managed leaves' own LLDP tables (parse_switch_lldp),
    added to the host's reading (RoCE). index: cabling_index(switch_reads, plan), built
    once for the play; given, switch_reads is not read and each host costs its own
    entries (without it, this call indexes switch_reads and plan itself)."""
    expected = (plan or {}).get(host)
    if not expected:
        return health
    planned = [
        r for r in health.get("rails") or [] if r.get("rail") in expected and r.get("device")
    ]
    # A port that is down has no neighbour to read: its port state check is the finding,
    # and its tests are handled as a down port's (not as a miscabled rail's).
    down = [r for r in planned if r.get("active") is False]
    rails = [r for r in planned if r not in down]
    observed = {}
    problems = list((lldp or {}).get("problems") or [])
    ib = [r for r in rails if r.get("link_layer") == "InfiniBand"]
    eth = [r for r in rails if r not in ib]
    if eth:
        neighbors = (lldp or {}).get("neighbors") or {}
        if index is None:
            index = cabling_index(switch_reads, plan)
        # The leaf's own reading first: it names the port as the leaf is configured.
        observed.update(
            _merged(
                observed_from_switches(index, eth, host, [(lldp or {}).get("system_name")]),
                observed_from_lldp(neighbors, eth, index),
            )
        )
    if ib:
        if ib_text:
            observed.update(observed_from_ib(parse_ibnetdiscover(ib_text), ib, host, node_guids))
        else:
            problems.append("no fabric-wide InfiniBand read (ibnetdiscover)")
    judged = judge_host(
        host, {r["rail"]: expected[r["rail"]] for r in rails}, observed, rails, owners=expected
    )
    checks = list(health.get("checks") or [])
    for rail in down:
        check = _check(
            True,
            f"{host} {rail['rail']} ({rail['device']}): not checked, its port is down (see "
            "its port state check)",
            [rail["device"]],
            [{rail["rail"]: rail}, rail["rail"]],
        )
        checks.append(dict(check, skipped=True))
    if problems and not any(observed.values()):
        checks.append(_check(False, "; ".join(problems), []))
    checks += judged["checks"]
    out_rails = []
    for rail in health.get("rails") or []:
        why = judged["miscabled"].get(rail.get("rail"))
        if why and rail.get("device"):
            rail = dict(rail, cabled_device=rail["device"], device=None, missing=why)
        out_rails.append(rail)
    return dict(
        health,
        checks=checks,
        rails=out_rails,
        cabling={"rows": judged["rows"], "miscabled": judged["miscabled"]},
    )
