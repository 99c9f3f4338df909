# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fabric's rail plan (``rdma_rails``): one definition, read by every consumer.

A GPU server has one RDMA NIC per rail: NIC k of every server reaches leaf k. The
inventory names each rail once, fabric-wide, in ``rdma_rails`` (group_vars/all.yml)::

    rdma_rails:
      - {name: rail0, device: mlx5_0, subnet: 10.0.0.0/24, leaf: leaf-rail0}
      - {name: rail1, netdev: ens2f0np0, subnet: 10.0.1.0/24, prefix_length: 31,
         gateway: peer, mtu: 4200}
      - {name: ib0, pci: "0000:9a:00.0", link_layer: infiniband, ipoib_mode: datagram,
         pkeys: [{partition: storage, subnet: 10.9.0.0/24}]}

A rail's keys, their types, choices and defaults are one schema,
fabric_schema.RAIL_OPTIONS, checked with ansible-core's ArgumentSpecValidator and
written into every reading role's argument spec (``ansible-doc -t role
rdma.fabric.rdma_rails`` shows them). normalize_rails keeps what a schema cannot say:
ranges, formats (names, CIDRs, PCI addresses) and the rules that compare fields (one of
device, netdev or pci; ipoib_mode and pkeys on infiniband rails only; prefix_length
against the subnet; a gateway inside it; names, selectors, tables and subnets unique).

Each host says where it sits, in host_vars or the inventory::

    rdma_rail_host_index: 7                    # address = subnet + 7 on every rail
    rdma_rail_addresses: {rail0: 10.0.0.77,    # or explicitly, per rail (wins); a
                          ib0.storage: 10.9.0.7}  #   P_Key child's as RAIL.PARTITION
    rdma_rail_devices: {rail3: mlx5_7,         # a host whose names differ maps a rail
                        rail4: {pci: "0000:9a:00.0"}}   # by device, netdev or pci

Addresses: on a shared (L2) rail subnet, host index i gets subnet + i (i from 1 to the
last usable address). With ``prefix_length: 31`` each host owns the i-th /31 of the
subnet: the leaf has its even address, the host the odd one (gateway ``peer`` = the
leaf); with ``prefix_length: 30`` the i-th /30: leaf first usable, host second. IPv6
follows: on such an L3 rail with ``subnet6`` host index i owns the i-th /127 of subnet6
(RFC 6164), the leaf the first address, the host the second (gateway ``peer``: the leaf).
A shared rail's IPv6 gateway is ``gateway6`` (an address of subnet6, or the router's
link-local address), as ``gateway`` is its IPv4 one: the rail's table gets ``::/0`` via
it. No IPv6 input takes a zone ID (``%ens1``): the rail's netdev is its link.

P_Keys: ``bind_pkeys`` checks each rail's ``pkeys`` against ib_subnet_manager_partitions
(an unknown partition is an error naming both variables) and adds ``pkey`` (the child's
full-member P_Key, e.g. 0x8010) and ``netdev_suffix`` ("8010": the child is ib0.8010);
``host_rails`` gives each pkey with a subnet the host's ``address`` on it.

Consumers: the rdma_rails role (addresses, MTU, routing, IPoIB, /etc/nccl.conf),
rdma_verify (rail k is tested with rail k, by name; per-rail address/MTU checks),
roce_host_qos/roce_switch_qos (the policy's MTU). Every error names the variable, and
the host(s) when one is at fault.
"""

from __future__ import annotations

import ipaddress
import re

from ansible_collections.rdma.fabric.plugins.module_utils import fabric_schema
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import mtu_errors

# The keys and choices are fabric_schema.RAIL_OPTIONS' (one schema for every reader).
RAIL_KEYS = tuple(fabric_schema.RAIL_OPTIONS)
SELECTORS = ("device", "netdev", "pci")
LINK_LAYERS = tuple(fabric_schema.RAIL_OPTIONS["link_layer"]["choices"])
IPOIB_MODES = tuple(fabric_schema.RAIL_OPTIONS["ipoib_mode"]["choices"])
# Netdev MTU limits. Ethernet: 1280 (IPv6's minimum) to 9216, the largest MTU the
# supported switch OSes carry (Cumulus, SONiC, EOS). IPoIB: datagram mode carries at
# most the IB MTU minus the 4-byte IPoIB header (4092 on a 4096 fabric); connected
# mode up to 65520 (Linux ipoib, Documentation/infiniband/ipoib.rst).
MTU_RANGES = {
    ("ethernet", None): (1280, 9216),
    ("infiniband", "datagram"): (1280, 4092),
    ("infiniband", "connected"): (1280, 65520),
}
IPOIB_DEFAULT_MTU = {"datagram": 4092, "connected": 65520}
# OpenSM partition mtu codes (partitions.conf, IBTA MTU enumeration) in bytes. A datagram
# IPoIB netdev carries the partition's broadcast-group IB MTU minus the 4-byte IPoIB
# header (2048 -> 2044, 4096 -> 4092); the kernel caps a larger MTU to that.
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
IPOIB_HEADER = 4
# A partition without mtu: OpenSM's default broadcast-group MTU, 4 (2048 bytes:
# OSM_DEFAULT_MGRP_MTU, include/opensm/osm_base.h; doc/partition-config.txt), also what
# an SM this inventory does not configure (a switch, UFM) is assumed to run; a
# partition with `ipoib: true` gets ib_subnet_manager_ipoib_mtu's default, 5 (4096),
# which the ib_subnet_manager role writes for it.
DEFAULT_PARTITION_MTU = 4
IPOIB_PARTITION_MTU = 5
DEFAULT_PKEY = 0x7FFF
# RoCE (rdma_roce_policy) default when no policy MTU is given.
ROCE_DEFAULT_MTU = 9000
# Hosts a fabric-wide error names before "and N more": one line at 1,000 hosts.
HOSTS_SHOWN = 10
TABLE_BASE = 100
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,12}$")
PCI_RE = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
PKEY_RE = re.compile(r"^(0x)?[0-9a-fA-F]{1,4}$")


# IPv6 on an L3 rail: one /127 per host (RFC 6164), as the IPv4 /31 or /30.
P2P6 = 127


def is_l3(prefix_length):
    """Whether a rail with this IPv4 prefix_length is an L3 rail: a /31 or /30 block per
    host, routed per leaf port. IPv6 follows: an L3 rail is L3 in both families."""
    return prefix_length in (30, 31)


class RailPlanError(ValueError):
    """Raised by ``*_or_raise``; the message lists every error, one a line."""


def natural_key(text):
    """Sort key that orders mlx5_2 before mlx5_10 and rail2 before rail10."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", str(text))
        if part
    ]


def some_names(names, shown=HOSTS_SHOWN):
    """'gpu017, gpu018 and 40 more': at most ``shown`` names."""
    names = list(names or [])
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _rail_name(index, rail=None):
    name = rail.get("name") if isinstance(rail, dict) else None
    return f"rdma_rails[{index}]" + (f" ({name})" if isinstance(name, str) and name else "")


def _selector(value, where, errors):
    """{'device'|'netdev'|'pci': str} from a rail or a host's rdma_rail_devices value."""
    if isinstance(value, str) and value:
        return {"device": value}
    if not isinstance(value, dict):
        errors.append(
            f"{where} must be a device name or one of {{device|netdev|pci: NAME}}; got {value!r}"
        )
        return None
    given = {k: value[k] for k in SELECTORS if value.get(k) not in (None, "")}
    if len(given) != 1:
        errors.append(
            f"{where} needs exactly one of device, netdev or pci; got {sorted(given) or 'none'}"
        )
        return None
    ((key, name),) = given.items()
    if not isinstance(name, str):
        errors.append(f"{where}.{key} must be a string; got {name!r}")
        return None
    if key == "pci":
        if not PCI_RE.match(name):
            errors.append(f"{where}.pci must be a PCI address like 0000:17:00.0; got {name!r}")
            return None
        name = name.lower() if len(name) > 7 else "0000:" + name.lower()
    return {key: name}


def _network(value, version, where, errors):
    try:
        net = ipaddress.ip_network(str(value), strict=True)
    except ValueError as exc:
        errors.append(
            f"{where} must be an IPv{version} network in CIDR form; got {value!r} ({exc})"
        )
        return None
    if net.version != version:
        errors.append(f"{where} must be an IPv{version} network; got {value!r}")
        return None
    if _zone_id(net):
        errors.append(_zone_error(where, value, _zone_id(net)))
        return None
    return net


def _zone_id(value):
    """The zone ID of a parsed IPv6 address, interface or network (``eth0`` of
    ``fe80::1%eth0``, which Python's ipaddress takes since 3.9), or None."""
    return getattr(getattr(value, "network_address", value), "scope_id", None)


def _zone_error(where, value, zone):
    """A rail address given with a zone ID: the rail's netdev is its link, and the zone
    would be written into the network files (`netplan generate` fails on it,
    systemd-networkd and NetworkManager drop the setting)."""
    return (
        f"{where} must be given without a zone ID (%{zone}); got {value!r}: the rail's "
        "netdev is its link, and netplan, systemd-networkd and NetworkManager refuse an "
        "address with one"
    )


def special_network_errors(rails):
    """Errors for rail subnets (subnet, subnet6, P_Key subnets) that are loopback,
    link-local, multicast, unspecified or 0.0.0.0/8: no host address there can carry a
    rail. Checked by rail_plan (the rdma_rails role), not by normalize_rails: rdma_verify's
    tests stand rails in on loopback addresses."""
    errors = []
    for where, net in _rail_networks(rails):
        kind = _special_network(net)
        if kind:
            errors.append(
                f"{where} {net} is a {kind} network: a rail needs routable unicast addresses"
            )
    return errors


def _special_network(net):
    """What makes a network unfit for a rail (loopback, link-local, ...), or None."""
    for attr, kind in (
        ("is_loopback", "loopback"),
        ("is_link_local", "link-local"),
        ("is_multicast", "multicast"),
        ("is_unspecified", "unspecified"),
    ):
        if getattr(net, attr):
            return kind
    if net.version == 4 and net.subnet_of(ipaddress.ip_network("0.0.0.0/8")):
        return "this-network (0.0.0.0/8)"
    return None


# How a rail's key is described when the schema refuses its type or a range check its
# value (the same words either way).
MUST = {
    "name": "1-12 of A-Z a-z 0-9 _ -",
    "port": "an RDMA port number (1-2)",
    "table": "a routing table number (1-252)",
    "link_layer": f"one of {', '.join(LINK_LAYERS)}",
    "ipoib_mode": f"one of {', '.join(IPOIB_MODES)}",
    "subnet": "an IPv4 network in CIDR form",
    "subnet6": "an IPv6 network in CIDR form",
    "gateway": "an IPv4 address or 'peer'",
    "gateway6": "an IPv6 address",
    "device": "a string",
    "netdev": "a string",
    "pci": "a string",
    "pkeys": "a list of {partition: NAME, subnet: CIDR}",
}


def _in_range(value, low, high):
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _mtu_words(link_layer, ipoib_mode, pkey=False):
    limits = MTU_RANGES.get((link_layer, ipoib_mode if link_layer == "infiniband" else None))
    what = f"{link_layer} {ipoib_mode or ''}".strip()
    span = f"{limits[0]}-{limits[1]}" if limits else "a number"
    child = " (a P_Key child runs in its parent's mode)" if pkey else ""
    return limits, f"{span} on an {what} rail{child}"


class _Rail:
    """One rail's checks that the schema cannot make: ranges, formats and the rules that
    compare fields. Keys the schema refused (``refused``) are said once, in the same
    words as a range check of that key."""

    def __init__(self, rail, where, problems, errors):
        self.rail, self.where, self.errors = rail, where, errors
        self.refused = {path for path, kind, _spec in problems if kind != "unknown"}
        unknown = [path for path, kind, _spec in problems if kind == "unknown" and "." not in path]
        if unknown:
            errors.append(
                f"{where} has unknown keys {sorted(unknown)} (known: {', '.join(RAIL_KEYS)})"
            )

    def bad(self, key, what=None):
        got = fabric_schema.value_at(self.rail, key)
        self.errors.append(f"{self.where}.{key} must be {what or MUST[key]}; got {got!r}")

    def refuses(self, key):
        """Whether the schema refused ``key`` (then said so here)."""
        if key in self.refused:
            self.bad(key)
            return True
        return False


def _pkeys(check, value, problems, ipoib_mode):
    """The rail's P_Key children (schema-checked dicts), each refusal said once."""
    where = f"{check.where}.pkeys"
    if check.refuses("pkeys") or not value:
        return []
    known = fabric_schema.RAIL_OPTIONS["pkeys"]["options"]
    out = []
    for index, item in enumerate(value):
        item_where = f"{where}[{index}]"
        path = f"pkeys[{index}]"
        if path in check.refused or f"{path}.partition" in check.refused:
            got = check.rail["pkeys"][index]
            check.errors.append(
                f"{item_where} needs a partition name (of ib_subnet_manager_partitions); got "
                f"{got!r}"
            )
            continue
        entry = {"partition": item["partition"], "subnet": None, "mtu": item["mtu"]}
        if f"{path}.mtu" in check.refused:
            entry["mtu"] = check.rail["pkeys"][index]["mtu"]  # refused with the mode's range
        if item["subnet"] is not None:
            net = _network(item["subnet"], 4, f"{item_where}.subnet", check.errors)
            entry["subnet"] = str(net) if net else None
        unknown = sorted(
            p.rpartition(".")[2]
            for p, kind, _spec in problems
            if kind == "unknown" and p.startswith(path + ".")
        )
        if unknown:
            check.errors.append(
                f"{item_where} has unknown keys {unknown} (known: {', '.join(known)})"
            )
        out.append(entry)
    if ipoib_mode in IPOIB_MODES:
        limits, what = _mtu_words("infiniband", ipoib_mode, pkey=True)
        for index, pkey in enumerate(out):
            if pkey["mtu"] is not None and not _in_range(pkey["mtu"], *limits):
                check.errors.append(f"{where}[{index}].mtu must be {what}; got {pkey['mtu']!r}")
    return out


def _normalize_rail(rail, position, where, policy_mtu, errors, seen):
    """One rail filled (a dict), or None with its errors added. The schema
    (fabric_schema.check_rail) takes the keys, types and choices first; seen: name ->
    position of the rails before."""
    before = len(errors)
    params, problems = fabric_schema.check_rail(rail)
    check = _Rail(rail, where, problems, errors)
    name = params["name"]
    if "name" in check.refused or not NAME_RE.match(name or ""):
        check.bad("name")
    elif name in seen:
        errors.append(f"{where}.name {name!r} is also rdma_rails[{seen[name]}]'s name")
    else:
        seen[name] = position
    given = {k: params[k] for k in SELECTORS if params[k] is not None}
    for key in given:
        check.refuses(key)
    selector = None
    if not any(k in check.refused for k in given):
        selector = _selector(given, where, errors)
    port = params["port"]
    if not check.refuses("port") and not _in_range(port, 1, 2):
        check.bad("port")
    link_layer = params["link_layer"]
    if check.refuses("link_layer"):
        link_layer = None
    ipoib_mode = params["ipoib_mode"]
    if link_layer == "ethernet" and (rail.get("ipoib_mode") is not None or rail.get("pkeys")):
        errors.append(f"{where}: ipoib_mode and pkeys are for infiniband rails only")
    if link_layer == "infiniband":
        ipoib_mode = ipoib_mode or "datagram"
        if check.refuses("ipoib_mode"):
            ipoib_mode = None
    subnet = subnet6 = None
    if check.refuses("subnet"):
        pass
    elif params["subnet"] is not None:
        subnet = _network(params["subnet"], 4, f"{where}.subnet", errors)
    elif link_layer == "ethernet":
        errors.append(
            f"{where}.subnet is required on an ethernet (RoCE) rail: RoCE v2 needs an IPv4 GID"
        )
    if not check.refuses("subnet6") and params["subnet6"] is not None:
        subnet6 = _network(params["subnet6"], 6, f"{where}.subnet6", errors)
    mtu = params["mtu"]
    limits, what = _mtu_words(link_layer, ipoib_mode)
    if mtu is None:
        if link_layer == "ethernet":
            mtu = _int(policy_mtu) or ROCE_DEFAULT_MTU
        elif ipoib_mode:
            mtu = IPOIB_DEFAULT_MTU[ipoib_mode]
    elif "mtu" in check.refused or not _in_range(mtu, *(limits or (0, 1 << 31))):
        check.bad("mtu", what)
    prefix_length = params["prefix_length"]
    if prefix_length is not None:
        if subnet is None:
            errors.append(f"{where}.prefix_length needs a subnet")
        elif "prefix_length" in check.refused or not (
            prefix_length == subnet.prefixlen
            or (prefix_length in (30, 31) and subnet.prefixlen <= prefix_length)
        ):
            check.bad(
                "prefix_length",
                f"30 or 31 (a block per host) or the subnet's own {subnet.prefixlen}",
            )
            prefix_length = None
    elif subnet is not None:
        prefix_length = subnet.prefixlen
    gateway = params["gateway"]
    if check.refuses("gateway"):
        gateway = None
    elif gateway == "peer":
        if not is_l3(prefix_length):
            errors.append(f"{where}.gateway 'peer' needs prefix_length 30 or 31")
    elif gateway is not None:
        gateway = _fixed_gateway(check, "gateway", gateway, subnet, prefix_length)
    gateway6 = None
    if not check.refuses("gateway6") and params["gateway6"] is not None:
        if params["subnet6"] is None:
            errors.append(f"{where}.gateway6 needs a subnet6 (the rail's IPv6 network)")
        gateway6 = _fixed_gateway(check, "gateway6", params["gateway6"], subnet6, prefix_length)
    if subnet6 is not None and is_l3(prefix_length) and subnet6.prefixlen > P2P6:
        errors.append(
            f"{where}.subnet6 {subnet6} holds no /{P2P6}: on an L3 rail (prefix_length "
            f"{prefix_length}) each host gets its own /{P2P6} of subnet6 (RFC 6164), so "
            f"subnet6 needs a prefix of {P2P6} or shorter"
        )
    # A table left out follows the rail's position; one given blank is refused.
    table = params["table"] if "table" in rail else TABLE_BASE + position
    if not check.refuses("table") and not _in_range(table, 1, 252):
        check.bad("table")
    pkeys = _pkeys(check, params["pkeys"], problems, ipoib_mode)
    if len(errors) > before:
        return None
    return {
        "name": name,
        "position": position,
        "selector": selector,
        "device": selector.get("device"),
        "netdev": selector.get("netdev"),
        "pci": selector.get("pci"),
        "port": port,
        "link_layer": link_layer,
        "subnet": str(subnet) if subnet else None,
        "subnet6": str(subnet6) if subnet6 else None,
        "mtu": mtu,
        "mtu_given": params["mtu"] is not None,
        "prefix_length": prefix_length,
        "gateway": gateway or None,
        "gateway6": gateway6,
        "ipoib_mode": ipoib_mode if link_layer == "infiniband" else None,
        "pkeys": pkeys,
        "table": table,
    }


def policy_mtu_errors(policy_mtu, hosts=None):
    """``rdma_roce_policy.mtu`` refused (outside roce_policy's RoCE MTU range, or no
    integer), naming the hosts whose ethernet rails take it as their default MTU."""
    if policy_mtu is None:
        return []
    names = some_names(sorted(hosts or [], key=natural_key))
    where = f" of {names}" if names else ""
    return [
        f"{error}; it is the default MTU of the ethernet rails (rdma_rails){where}"
        for error in mtu_errors(policy_mtu)
    ]


def normalize_rails(rails, policy_mtu=None, hosts=None):
    """(filled rails, errors) for ``rdma_rails``; errors name ``rdma_rails[i].key``.

    policy_mtu: ``rdma_roce_policy.mtu`` (the default MTU of ethernet rails), refused
    out of range naming ``hosts`` (the hosts planned).
    Filled rails have every key of RAIL_KEYS plus ``selector`` ({kind: name}),
    ``position`` and, for IPv4, ``network`` (str).
    """
    if rails in (None, ""):
        return [], []
    if not isinstance(rails, list):
        return None, [f"rdma_rails must be a list of rails; got {rails!r}"]
    errors = policy_mtu_errors(policy_mtu, hosts)
    out = []
    seen = {}
    for position, rail in enumerate(rails):
        where = _rail_name(position, rail)
        if not isinstance(rail, dict):
            errors.append(f"{where} must be a dictionary; got {rail!r}")
            continue
        entry = _normalize_rail(rail, position, where, policy_mtu, errors, seen)
        if entry is not None:
            out.append(entry)
    # Two rails may not select the same device port, netdev or PCI function.
    taken = {}
    for rail in out:
        kind, value = next(iter(rail["selector"].items()))
        key = (kind, value, rail["port"] if kind != "netdev" else None)
        if key in taken:
            errors.append(f"rdma_rails: {rail['name']} and {taken[key]} both select {kind} {value}")
        taken[key] = rail["name"]
    tables = {}
    for rail in out:
        if rail["table"] in tables:
            errors.append(
                f"rdma_rails: {rail['name']} and {tables[rail['table']]} share routing table "
                f"{rail['table']}"
            )
        tables[rail["table"]] = rail["name"]
    errors.extend(subnet_overlaps(out))
    return (None, errors) if errors else (out, [])


def _link_local6(address):
    """Whether an address is IPv6 link-local (fe80::/10): a router's usual address as a
    next hop (RFC 4861 4.2 and 8), reached on the rail's own link."""
    return address.version == 6 and address.is_link_local


def _fixed_gateway(check, key, value, net, prefix_length):
    """A rail's fixed gateway (``gateway`` in subnet, ``gateway6`` in subnet6 or
    link-local) as text, or None with its errors said: an address without a zone ID,
    inside the rail's network (when it has one) or, for gateway6, link-local, that
    gateway_errors accepts. value: the key's value as the schema read it."""
    try:
        gw = ipaddress.ip_address(value if isinstance(value, str) else "-")
    except ValueError:
        check.bad(key)
        return None
    where = f"{check.where}.{key}"
    if _zone_id(gw):
        check.errors.append(_zone_error(where, value, _zone_id(gw)))
        return None
    if net is None:
        return str(gw)
    if gw not in net and not _link_local6(gw):
        network = "subnet6" if net.version == 6 else "subnet"
        check.errors.append(f"{where} {gw} is outside the rail's {network} {net}")
        return None
    before = len(check.errors)
    gateway_errors(where, gw, net, prefix_length, check.errors)
    return str(gw) if len(check.errors) == before else None


def gateway_errors(where, gateway, subnet, prefix_length, errors):
    """A fixed gateway (``where``: the variable) must be a host address of the rail's
    subnet (or subnet6), and only on a shared (L2) rail: on a /31 or /30 rail every host
    has its own block (its own /127 of subnet6), so one gateway fits at most one host
    (the kernel refuses the route on every other one) and the leaf's end of each block
    is the gateway (gateway: peer)."""
    gw = ipaddress.ip_address(gateway)
    if gw.version == 6:
        block, shared = P2P6, not is_l3(prefix_length)
        reserved = {subnet.network_address: "subnet-router anycast"}
    else:
        block, shared = prefix_length, not is_l3(prefix_length) or prefix_length == subnet.prefixlen
        reserved = {subnet.network_address: "network", subnet.broadcast_address: "broadcast"}
    if not shared and _link_local6(gw):
        errors.append(
            f"{where} {gateway}: on a /{prefix_length} rail the leaf's end of each host's "
            f"/{block} is its IPv6 gateway (gateway: peer); a link-local gateway6 is for "
            "shared rails"
        )
    elif not shared:
        errors.append(
            f"{where} {gateway}: a /{prefix_length} rail gives each host its own /{block}, "
            "so one fixed gateway fits at most one host; use gateway: peer"
        )
    elif subnet.prefixlen < subnet.max_prefixlen - 1 and gw in reserved:
        errors.append(f"{where} {gateway} is the {reserved[gw]} address of {subnet}")
    elif gw.version == 6 and getattr(_reserved_iid(gw), "shared", False):
        errors.append(f"{where} {gateway} is {_reserved_iid(gw).what} of its /64")


def _rail_networks(rails):
    """(where, network) of every subnet a rail plan uses: subnet, subnet6, pkey subnets."""
    for rail in rails:
        where = _rail_name(rail["position"], rail)
        if rail["subnet"]:
            yield f"{where}.subnet", ipaddress.ip_network(rail["subnet"])
        if rail["subnet6"]:
            yield f"{where}.subnet6", ipaddress.ip_network(rail["subnet6"])
        for index, pkey in enumerate(rail["pkeys"]):
            if pkey.get("subnet"):
                yield f"{where}.pkeys[{index}].subnet", ipaddress.ip_network(pkey["subnet"])


def subnet_overlaps(rails):
    """Errors for two rails (or P_Key children) on one subnet: each needs its own, or
    the policy routing (one table per rail) cannot tell them apart."""
    errors = []
    seen = []
    for where, net in _rail_networks(rails):
        for other_where, other in seen:
            if net.version == other.version and net.overlaps(other):
                errors.append(
                    f"{where} {net} overlaps {other_where} {other}: every rail and P_Key child "
                    "needs its own subnet"
                )
                break
        seen.append((where, net))
    return errors


def management_overlaps(rails, management):
    """Errors for rail subnets that overlap a host's management network.

    management: {host: CIDR of the network on its default route's interface}.
    One error per rail subnet and management network, naming the hosts.
    """
    by_network = {}
    for host, cidr in (management or {}).items():
        try:
            net = ipaddress.ip_network(str(cidr), strict=False)
        except ValueError:
            continue
        by_network.setdefault(net, []).append(host)
    errors = []
    for where, net in _rail_networks(rails):
        for mgmt, hosts in sorted(by_network.items(), key=lambda kv: str(kv[0])):
            if net.version == mgmt.version and net.overlaps(mgmt):
                names = ", ".join(sorted(hosts, key=natural_key))
                errors.append(
                    f"{where} {net} overlaps the management network {mgmt} (the default "
                    f"route's interface) of {names}"
                )
    return errors


def _host_address(rail, host, index, explicit, errors):
    """(address, prefix_length, gateway) of one host on one rail, or None on error."""
    subnet = ipaddress.ip_network(rail["subnet"])
    prefix = rail["prefix_length"]
    gateway = rail["gateway"]
    if explicit is not None:
        text = explicit.get("ipv4") if isinstance(explicit, dict) else explicit
        try:
            iface = ipaddress.ip_interface(str(text))
        except ValueError:
            errors.append(
                f"{host}: rdma_rail_addresses.{rail['name']} must be an IPv4 address; got {text!r}"
            )
            return None
        if iface.version != 4 or iface.ip not in subnet:
            errors.append(
                f"{host}: rdma_rail_addresses.{rail['name']} {iface.ip} is outside rail "
                f"{rail['name']}'s subnet {subnet}"
            )
            return None
        address = iface.ip
        if prefix < 31 and address in (subnet.network_address, subnet.broadcast_address):
            what = "network" if address == subnet.network_address else "broadcast"
            errors.append(
                f"{host}: rdma_rail_addresses.{rail['name']} {address} is the {what} address "
                f"of rail {rail['name']}'s subnet {subnet}"
            )
            return None
        if prefix == 30:
            # A /30 per host: network, the leaf (first usable), the host, broadcast.
            block = ipaddress.ip_network(f"{address}/30", strict=False)
            offset = int(address) - int(block.network_address)
            what = {0: "network", 1: "leaf", 3: "broadcast"}.get(offset)
            if what:
                errors.append(
                    f"{host}: rdma_rail_addresses.{rail['name']} {address} is the {what} "
                    f"address of its /30 {block} (the host's is {block.network_address + 2})"
                )
                return None
    else:
        if prefix in (30, 31):
            size = 2 ** (32 - prefix)
            block = int(subnet.network_address) + index * size
            offset = 1 if prefix == 31 else 2
            address = ipaddress.ip_address(block + offset)
            if index < 0 or block + size - 1 > int(subnet.broadcast_address):
                errors.append(
                    f"{host}: rdma_rail_host_index {index} gives no /{prefix} inside rail "
                    f"{rail['name']}'s "
                    f"subnet {subnet} (0-{subnet.num_addresses // size - 1})"
                )
                return None
        else:
            address = ipaddress.ip_address(int(subnet.network_address) + index)
            last = subnet.num_addresses - 2 if subnet.prefixlen < 31 else subnet.num_addresses - 1
            if not 1 <= index <= last:
                errors.append(
                    f"{host}: rdma_rail_host_index {index} is no usable address of rail "
                    f"{rail['name']}'s subnet "
                    f"{subnet} (1-{last})"
                )
                return None
    if prefix in (30, 31):
        leaf = leaf_address(address, prefix)
        if prefix == 31 and address == leaf:
            errors.append(
                f"{host}: rail {rail['name']} address {address} is the leaf's (even) end of its /31"
            )
            return None
        if gateway == "peer":
            gateway = str(leaf)
    return str(address), prefix, gateway


def leaf_address(address, prefix):
    """The leaf's end of the /31 (its even address) or /30 (its first usable address)
    that holds a host's ``address`` on an L3 rail; the host has the other end."""
    block = ipaddress.ip_network(f"{address}/{prefix}", strict=False)
    return block.network_address + (0 if prefix == 31 else 1)


def host_rails(rails, host, host_vars):
    """(per-rail entries of one host, errors). rails: normalize_rails' output.

    host_vars: the host's rdma_rail_host_index, rdma_rail_addresses, rdma_rail_devices.
    Each entry: name, selector (after rdma_rail_devices), port, link_layer, address,
    prefix_length, gateway, address6, mtu, table, ipoib_mode, pkeys.
    """
    errors = []
    index = host_vars.get("rdma_rail_host_index")
    explicit = host_vars.get("rdma_rail_addresses") or {}
    devices = host_vars.get("rdma_rail_devices") or {}
    names = {rail["name"] for rail in rails}
    pkey_names = {f"{r['name']}.{p['partition']}" for r in rails for p in r.get("pkeys") or []}
    for var, value in (("rdma_rail_addresses", explicit), ("rdma_rail_devices", devices)):
        if not isinstance(value, dict):
            errors.append(
                f"{host}: {var} must be a dictionary of rail name -> value; got {value!r}"
            )
            return None, errors
        allowed = names | pkey_names if var == "rdma_rail_addresses" else names
        for name in sorted(set(value) - allowed):
            errors.append(f"{host}: {var} names rail {name!r}, which rdma_rails does not define")
    if index not in (None, ""):
        parsed = _int(index)
        if parsed is None:
            errors.append(
                f"{host}: rdma_rail_host_index must be a non-negative integer; got {index!r}"
            )
        index = parsed
    else:
        index = None
    out = []
    for rail in rails:
        entry = dict(rail)
        if rail["name"] in devices:
            selector = _selector(
                devices[rail["name"]], f"{host}: rdma_rail_devices.{rail['name']}", errors
            )
            if selector is None:
                continue
            entry.update(
                {"selector": selector, "device": None, "netdev": None, "pci": None}, **selector
            )
        entry.update(address=None, address6=None, prefix_length6=None, gateway6=None)
        if rail["subnet"]:
            if rail["name"] not in explicit and index is None:
                errors.append(
                    f"{host}: no address on rail {rail['name']}: set rdma_rail_host_index or "
                    f"rdma_rail_addresses.{rail['name']}"
                )
                continue
            got = _host_address(rail, host, index, explicit.get(rail["name"]), errors)
            if got is None:
                continue
            entry["address"], entry["prefix_length"], entry["gateway"] = got
            if _own_gateway(host, rail, got, "gateway", errors):
                continue
        if rail["pkeys"]:
            entry["pkeys"] = _pkey_addresses(rail, host, index, explicit, errors)
        if rail["subnet6"]:
            got6 = _host_address6(rail, host, index, explicit.get(rail["name"]), errors)
            if got6 is False:
                continue
            if got6 and _own_gateway(host, rail, got6, "gateway6", errors):
                continue
            if got6:
                entry["address6"], entry["prefix_length6"], entry["gateway6"] = got6
        out.append(entry)
    return (None, errors) if errors else (out, [])


def _own_gateway(host, rail, got, key, errors):
    """Whether a host's (address, prefix length, gateway) on a rail has its own address
    as the gateway (said, naming the rail's ``key``): a host cannot route through
    itself."""
    address, _prefix, gateway = got
    if gateway and gateway == address:
        errors.append(
            f"{host}: rail {rail['name']} address {address} is the rail's gateway "
            f"({_rail_name(rail['position'], rail)}.{key}): a host cannot route through itself"
        )
        return True
    return False


def _host_address6(rail, host, index, explicit, errors):
    """(address, prefix length, gateway) of the host's IPv6 address on a rail, None when
    it has none, False on error.

    Explicit (``rdma_rail_addresses.RAIL.ipv6``) or from rdma_rail_host_index. On a
    shared rail: subnet6 + index, on subnet6's prefix; the subnet's own address (index
    0) is the subnet-router anycast address (RFC 4291 2.6.1), never a host's. On an L3
    rail: index i owns the i-th /127 of subnet6 (RFC 6164), the leaf its first address,
    the host the second (as the IPv4 /31: leaf even, host odd), and ``gateway: peer``
    makes the leaf's end the gateway."""
    net6 = ipaddress.ip_network(rail["subnet6"])
    l3 = is_l3(rail["prefix_length"])
    given = explicit.get("ipv6") if isinstance(explicit, dict) else None
    if given not in (None, ""):
        where = f"{host}: rdma_rail_addresses.{rail['name']}.ipv6"
        try:
            iface = ipaddress.ip_interface(given if isinstance(given, str) else "-")
        except ValueError:
            iface = None
        if iface is None or iface.version != 6:
            errors.append(f"{where} must be an IPv6 address; got {given!r}")
            return False
        if _zone_id(iface):
            errors.append(_zone_error(where, given, _zone_id(iface)))
            return False
        address = iface.ip
        if address not in net6:
            errors.append(f"{where} {address} is outside rail {rail['name']}'s subnet6 {net6}")
            return False
        what = f"rdma_rail_addresses.{rail['name']}.ipv6"
        index = None  # an explicit address wins over the index
    elif index is None:
        return None
    elif l3:
        block = int(net6.network_address) + 2 * index
        if block + 1 > int(net6.broadcast_address):
            errors.append(
                f"{host}: rdma_rail_host_index {index} gives no /{P2P6} inside rail "
                f"{rail['name']}'s subnet6 {net6} (0-{net6.num_addresses // 2 - 1})"
            )
            return False
        address = ipaddress.ip_address(block + 1)
        what = f"rdma_rail_host_index {index}"
    else:
        if not 0 <= index < net6.num_addresses:
            errors.append(
                f"{host}: rdma_rail_host_index {index} gives no address in rail "
                f"{rail['name']}'s subnet6 {net6}"
            )
            return False
        address = ipaddress.ip_address(int(net6.network_address) + index)
        what = f"rdma_rail_host_index {index}"
    if l3:
        return _p2p6(rail, host, address, index, errors)
    if address == net6.network_address:
        errors.append(
            f"{host}: {what} gives rail {rail['name']} the address {address}, the "
            f"subnet-router anycast address of its subnet6 {net6} (RFC 4291 2.6.1): "
            + _anycast_advice(rail, host, index, address + 1)
        )
        return False
    return str(address), net6.prefixlen, rail["gateway6"]


def leaf_address6(address):
    """The leaf's end (the first address) of the /127 that holds a host's IPv6
    ``address`` on an L3 rail; the host has the second."""
    return ipaddress.ip_address(int(ipaddress.ip_address(address)) & ~1)


# Interface identifiers (the rightmost 64 bits) neither end of a /127 gets:
# - all zeros, the Subnet-Router anycast address (RFC 4291 2.6.1; RFC 6164 5.1 (a));
# - RFC 2526's reserved subnet anycast addresses: in an interface identifier of
#   modified EUI-64 format (every unicast address outside ::/3, RFC 4291 2.5.1) the u/l
#   bit is 0, so they are fdff:ffff:ffff:ff80 to fdff:ffff:ffff:ffff (RFC 2526 2; the
#   IANA "Reserved IPv6 Interface Identifiers" registry of RFC 5453; the Linux kernel's
#   ipv6_reserved_interfaceid and NetworkManager's reserved IIDs test the same range);
# - RFC 6164 5.1 (b): "the highest 128 values (i.e., ffff:ffff:ffff:ff7f to
#   ffff:ffff:ffff:ffff)", as it spells them (129 values; RFC 2526 with the u/l bit
#   set): kept off point-to-point links, so refused on a /127 only.
# shared: also refused as a shared rail's gateway6 (RFC 6164 covers point-to-point
# links only; a router at ffff:ffff:ffff:ff7f-ffff of a shared /64 is a unicast one).
IID_MASK = (1 << 64) - 1


class ReservedIids:
    """One range of reserved interface identifiers: low, high (ints of the rightmost 64
    bits), what an address in it is, the clause a /127 refusal adds, where it sits in
    its /64 (for advice), whether a shared rail's gateway6 is refused there too."""

    def __init__(self, low, high, what, p2p, place, shared):
        self.low, self.high, self.what, self.p2p = low, high, what, p2p
        self.place, self.shared = place, shared


RESERVED_IIDS = (
    ReservedIids(
        0,
        0,
        "the subnet-router anycast address (RFC 4291 2.6.1)",
        ", which RFC 6164 5.1 keeps off point-to-point links",
        "the bottom of its /64",
        True,
    ),
    ReservedIids(
        0xFDFF_FFFF_FFFF_FF80,
        0xFDFF_FFFF_FFFF_FFFF,
        "a reserved subnet anycast address (RFC 2526: interface identifiers "
        "fdff:ffff:ffff:ff80 to fdff:ffff:ffff:ffff)",
        "",
        "RFC 2526's reserved subnet anycast identifiers of its /64",
        True,
    ),
    ReservedIids(
        0xFFFF_FFFF_FFFF_FF7F,
        IID_MASK,
        "an interface identifier kept off point-to-point links by RFC 6164 5.1 (b) "
        "(ffff:ffff:ffff:ff7f to ffff:ffff:ffff:ffff)",
        "",
        "the reserved top of its /64",
        False,
    ),
)


def _reserved_iid(address):
    """The ReservedIids range that holds the address's interface identifier, or None."""
    iid = int(address) & IID_MASK
    return next((r for r in RESERVED_IIDS if r.low <= iid <= r.high), None)


def _anycast_advice(rail, host, index, instead):
    """What moves a host off a subnet-router anycast address (the bottom of a /64): the
    next index, or, for an explicit address, ``instead``."""
    explicit = f"rdma_rail_addresses.{rail['name']}.ipv6"
    if index is None:
        what = (
            f"the host end of another /{P2P6}"
            if is_l3(rail["prefix_length"])
            else (f"another address of {rail['subnet6']}")
        )
        return f"set {explicit} to {what} (e.g. {instead})"
    return f"give {host} rdma_rail_host_index {index + 1} or higher, or set {explicit}"


def _range_advice(rail, host, index, address, reserved):
    """What moves a host's /127 off a range of reserved identifiers above the bottom of
    its /64 (``reserved``, a ReservedIids): a lower index (the highest that stays below,
    when subnet6 has one there), a subnet6 away from the range, or an explicit address
    below it (or above it, when its /64 has room there)."""
    explicit = f"rdma_rail_addresses.{rail['name']}.ipv6"
    base = int(address) & ~IID_MASK
    # The host end of the last /127 wholly below the range (an odd identifier).
    last_host = ipaddress.ip_address(base | ((reserved.low - 2) | 1))
    if index is None:
        above = (
            f", or above them (from {ipaddress.ip_address(base | (reserved.high + 2))})"
            if reserved.high + 2 <= IID_MASK
            else ""
        )
        return (
            f"set {explicit} to the host end of a /{P2P6} below {reserved.place} (at most "
            f"{last_host}){above}"
        )
    net6 = ipaddress.ip_network(rail["subnet6"])
    highest = (int(last_host) - 1 - int(net6.network_address)) // 2
    # A subnet6 wholly inside the range has no index that helps.
    lower = (
        f"give {host} a lower rdma_rail_host_index ({highest} or lower), " if highest >= 0 else ""
    )
    return (
        f"{lower}move {_rail_name(rail['position'], rail)}.subnet6 ({net6}) away from "
        f"{reserved.place}, or set {explicit}"
    )


def _p2p6(rail, host, address, index, errors):
    """(address, 127, gateway) of a host's end of its /127 on an L3 rail, or False.
    index: the rdma_rail_host_index that gave the address, None when it was explicit."""
    name = rail["name"]
    what = f"rdma_rail_addresses.{name}.ipv6" if index is None else f"rdma_rail_host_index {index}"
    leaf = leaf_address6(address)
    if address == leaf:
        errors.append(
            f"{host}: {what} {address} is the leaf's (first) end of its /{P2P6} "
            f"{leaf}/{P2P6} on rail {name} (the host's is {leaf + 1})"
        )
        return False
    for end, who in ((leaf, "leaf"), (address, "host")):
        reserved = _reserved_iid(end)
        if reserved:
            advice = (
                _anycast_advice(rail, host, index, leaf + 3)
                if reserved.low == 0
                else _range_advice(rail, host, index, end, reserved)
            )
            errors.append(
                f"{host}: {what} gives the {who} end of its /{P2P6} on rail {name} the "
                f"address {end}, {reserved.what}{reserved.p2p}: {advice}"
            )
            return False
    gateway = str(leaf) if rail["gateway"] == "peer" else None
    return str(address), P2P6, gateway


def _pkey_addresses(rail, host, index, explicit, errors):
    """The rail's pkeys, each with the host's ``address`` on its subnet (or None).

    The address is subnet + rdma_rail_host_index, or rdma_rail_addresses given under
    "RAIL.PARTITION" (e.g. ``ib0.storage: 10.9.0.7``).
    """
    out = []
    for pkey in rail.get("pkeys") or []:
        entry = dict(pkey, address=None)
        if pkey.get("subnet"):
            net = ipaddress.ip_network(pkey["subnet"])
            key = f"{rail['name']}.{pkey['partition']}"
            given = explicit.get(key)
            if given not in (None, ""):
                try:
                    address = ipaddress.ip_interface(str(given)).ip
                except ValueError:
                    address = None
                if (
                    address is None
                    or address not in net
                    or address
                    in (
                        net.network_address,
                        net.broadcast_address,
                    )
                ):
                    errors.append(
                        f"{host}: rdma_rail_addresses.{key} must be a host address of {net}; "
                        f"got {given!r}"
                    )
                    continue
            elif index is None:
                errors.append(
                    f"{host}: no address on {key}: set rdma_rail_host_index or "
                    f"rdma_rail_addresses.{key}"
                )
                continue
            else:
                last = net.num_addresses - 2
                if not 1 <= index <= last:
                    errors.append(
                        f"{host}: rdma_rail_host_index {index} is no usable address of {key}'s "
                        f"subnet {net} (1-{last})"
                    )
                    continue
                address = ipaddress.ip_address(int(net.network_address) + index)
            entry["address"] = str(address)
        out.append(entry)
    return out


def bind_pkeys(rails, partitions):
    """(rails whose pkeys carry ``pkey`` (the child's full-member P_Key, an int) and
    ``netdev_suffix`` ("8010"), errors). partitions: ib_subnet_manager_partitions.

    A rail's pkey naming a partition that ib_subnet_manager_partitions does not define
    is an error naming both variables, so the hosts and the subnet manager can't
    disagree.
    """
    known = {}
    ib_mtu = {}
    errors = []
    for position, part in enumerate(partitions or []):
        if isinstance(part, dict) and isinstance(part.get("name"), str):
            value = part.get("pkey")
            try:
                number = int(value, 16) if isinstance(value, str) else int(value)
            except (TypeError, ValueError):
                continue
            known[part["name"]] = number & 0x7FFF
            code = part.get("mtu")
            if code in (None, ""):
                code = IPOIB_PARTITION_MTU if part.get("ipoib") is True else DEFAULT_PARTITION_MTU
            elif _int(code) not in IB_MTU_BYTES:
                # An MTU in bytes (2048) where OpenSM takes a code (4) is refused, never
                # read as something else.
                errors.append(
                    f"ib_subnet_manager_partitions[{position}] ({part['name']}).mtu (read as "
                    "rdma_rails_ib_partitions) must be an IB MTU code 1-5 as in OpenSM's "
                    f"partitions.conf (4 = 2048 bytes, 5 = 4096 bytes); got {code!r}"
                )
                continue
            ib_mtu[part["name"]] = IB_MTU_BYTES[_int(code)]
    if errors:
        return None, errors
    default_partition = next((n for n, k in known.items() if k == DEFAULT_PKEY), None)
    out = []
    for rail in rails:
        where = _rail_name(rail["position"], rail)
        datagram = rail.get("link_layer") == "infiniband" and rail.get("ipoib_mode") == "datagram"
        rail = dict(rail)
        if datagram and default_partition:
            rail["mtu"] = _ipoib_mtu(
                f"{where}.mtu",
                rail["mtu"],
                rail.get("mtu_given", True),
                default_partition,
                ib_mtu[default_partition],
                errors,
            )
        pkeys = []
        for index, pkey in enumerate(rail.get("pkeys") or []):
            name = pkey["partition"]
            if name not in known:
                errors.append(
                    f"{where}.pkeys[{index}].partition {name!r} is "
                    "no partition of ib_subnet_manager_partitions (defined: "
                    f"{', '.join(sorted(known)) or 'none'})"
                )
                continue
            full = known[name] | 0x8000
            pkey = dict(pkey, pkey=full, netdev_suffix=f"{full:04x}")
            if datagram:
                pkey["mtu"] = _ipoib_mtu(
                    f"{where}.pkeys[{index}].mtu",
                    pkey.get("mtu"),
                    pkey.get("mtu") is not None,
                    name,
                    ib_mtu[name],
                    errors,
                )
            pkeys.append(pkey)
        out.append(dict(rail, pkeys=pkeys))
    return (None, errors) if errors else (out, [])


def _ipoib_mtu(where, mtu, given, partition, ib_bytes, errors):
    """A datagram IPoIB netdev's MTU on a partition: the partition's IB MTU minus the
    IPoIB header unless given; a given MTU above that is an error (the kernel would cap
    it, and the rail would never come up as planned)."""
    ceiling = ib_bytes - IPOIB_HEADER
    if not given or mtu is None:
        return ceiling
    if isinstance(mtu, int) and mtu > ceiling:
        errors.append(
            f"{where} {mtu} is above the datagram IPoIB MTU of partition {partition!r} "
            f"(IB MTU {ib_bytes} - {IPOIB_HEADER} = {ceiling}; the partition's mtu in "
            "ib_subnet_manager_partitions): the kernel caps it there"
        )
    return mtu


def _addresses(entry):
    """(where, address) of every address a host has on one rail: IPv4, IPv6, P_Keys."""
    if entry["address"]:
        yield entry["name"], entry["address"]
    if entry["address6"]:
        yield entry["name"], entry["address6"]
    for pkey in entry["pkeys"]:
        if pkey.get("address"):
            yield f"{entry['name']}.{pkey['partition']}", pkey["address"]


def fabric_rails(rails, hosts_vars, policy_mtu=None):
    """({host: entries}, errors) for every host; cross-host checks included.

    hosts_vars: {host: {rdma_rail_host_index, rdma_rail_addresses, rdma_rail_devices}}.
    An address used by two hosts names both. Linear in hosts x rails.
    """
    filled, errors = normalize_rails(rails, policy_mtu, hosts_vars)
    if errors:
        return None, errors
    plan = {}
    owners = {}
    for host in sorted(hosts_vars, key=natural_key):
        entries, host_errors = host_rails(filled, host, hosts_vars[host] or {})
        errors.extend(host_errors)
        if entries is None:
            continue
        plan[host] = entries
        for entry in entries:
            for where, address in _addresses(entry):
                other = owners.setdefault(address, host)
                if other != host:
                    errors.append(
                        f"{host} and {other} have the same address {address} on rail {where} "
                        "(rdma_rail_host_index / rdma_rail_addresses)"
                    )
    return (None, errors) if errors else (plan, [])


# Enhanced IPoIB (the mlx5 driver: ConnectX-4 and later) offloads IPoIB to the NIC and
# runs datagram mode only; mlx4 (ConnectX-3) and older run connected mode. Judged by the
# device's driver (sysfs), never by its name: persistent names (ibp65s0, rocep65s0f0)
# say nothing. ib_ipoib's ipoib_enhanced parameter (MLNX_OFED/DOCA-OFED only) turns it
# off for mlx5 when 0; it does not apply to other drivers.
ENHANCED_IPOIB_DRIVERS = ("mlx5",)


def _enhanced_ipoib(device, ipoib_enhanced):
    """(enhanced, what says so) for one RDMA device; the name only when no driver is read."""
    driver = device.get("driver")
    mlx5 = (driver or device["name"]).startswith(ENHANCED_IPOIB_DRIVERS)
    what = f"driver {driver}" if driver else "an mlx5 device"
    return mlx5 and ipoib_enhanced is not False, what


def resolve_rails(entries, devices, host="this host", ipoib_enhanced=None):
    """Bind a host's rail entries to its RDMA ports: (entries with device/netdev/port
    record, errors). devices: rdma_devices_info's ``devices``.

    A rail whose device, netdev or PCI function the host lacks is an error naming the
    host and what is missing; so is a rail on a port of the other link layer, and two
    rails on one netdev.
    """
    errors = []
    by_device = {d["name"]: d for d in devices}
    out = []
    netdevs = {}
    for entry in entries:
        kind, wanted = next(iter(entry["selector"].items()))
        device = None
        if kind == "device":
            device = by_device.get(wanted)
        elif kind == "pci":
            device = next((d for d in devices if (d.get("pci_address") or "") == wanted), None)
        else:
            device = next(
                (d for d in devices for p in d["ports"] if p.get("netdev") == wanted),
                None,
            )
        if device is None:
            errors.append(
                f"{host}: rail {entry['name']}: no RDMA device with {kind} {wanted} on this host"
            )
            continue
        port = next((p for p in device["ports"] if p["port"] == entry["port"]), None)
        if kind == "netdev":
            port = next(p for p in device["ports"] if p.get("netdev") == wanted)
        if port is None:
            errors.append(
                f"{host}: rail {entry['name']}: {device['name']} has no port {entry['port']}"
            )
            continue
        link_layer = (port.get("link_layer") or "").lower()
        if link_layer and link_layer != entry["link_layer"]:
            errors.append(
                f"{host}: rail {entry['name']}: {device['name']} port {port['port']} is "
                f"{port['link_layer']}, "
                f"the plan says {entry['link_layer']}"
            )
            continue
        if entry.get("ipoib_mode") == "connected":
            enhanced, what = _enhanced_ipoib(device, ipoib_enhanced)
            if enhanced:
                errors.append(
                    f"{host}: rail {entry['name']}: ipoib_mode connected on {device['name']} "
                    f"({what}), which runs enhanced IPoIB (mlx5: ConnectX-4 and later, unless "
                    "ib_ipoib's ipoib_enhanced=0): datagram mode only; set ipoib_mode: datagram"
                )
                continue
        netdev = port.get("netdev")
        if netdev and netdev in netdevs:
            errors.append(
                f"{host}: rails {netdevs[netdev]} and {entry['name']} are both on netdev {netdev}"
            )
            continue
        if netdev:
            netdevs[netdev] = entry["name"]
        out.append(
            dict(
                entry,
                device=device["name"],
                port=port["port"],
                netdev=netdev,
                pci=device.get("pci_address"),
            )
        )
    return (None, errors) if errors else (out, [])


def plan_or_raise(rails, hosts_vars, policy_mtu=None):
    plan, errors = fabric_rails(rails, hosts_vars, policy_mtu)
    if errors:
        raise RailPlanError("invalid rail plan:\n" + "\n".join(errors))
    return plan
