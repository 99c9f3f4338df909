# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rail plan of one host rendered for the OS's own network stack.

Input: a host's rails after ``rails.resolve_rails`` (each with its ``netdev``) and
``rails.bind_pkeys``. ``rail_links`` turns them into links (the rail netdev, and an
IPoIB P_Key child per partition), each with its addresses, the routes of its rail's
table and the ``ip rule from <address> table <rail>`` that makes replies leave by the
NIC they came in on (NVIDIA's multi-homed RoCE setup: one table per rail,
arp_ignore=1, arp_announce=2, rp_filter=2). The renderers write:

- systemd-networkd: one .network per link, one .netdev per P_Key child;
- netplan: one YAML file (renderer networkd; no P_Key children: netplan has none);
- NetworkManager: one keyfile per link (EL);
- the per-netdev sysctl.d file and /etc/nccl.conf.

``live_drift`` compares links with the kernel's state (``ip -j addr``, ``ip -j rule``,
/proc/sys values), so a run repairs a rail whose files are right but whose live
state is not.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json

MANAGED = "# Managed by rdma-fabric (rdma_rails): do not edit; change rdma_rails instead."
SYSCTLS = (("arp_ignore", 1), ("arp_announce", 2), ("rp_filter", 2))
PREFIX = "40-rdma-rail-"


def _block_routes(address, prefix_length, subnet, gateway, table):
    """Routes of one rail address (IPv4 or IPv6): its own block and, on an L3 rail (a
    /31, /30 or /127 per host), the rail's subnet via the leaf (also in the main table);
    a gateway is the table's default. An IPv6 route has no scope (the kernel keeps none;
    systemd-networkd warns "Scope= is specified for IPv6 route. It will be ignored.",
    src/network/networkd-route.c)."""
    block = ipaddress.ip_interface(f"{address}/{prefix_length}").network
    routes = [{"to": str(block), "table": table}]
    if block.version == 4:
        routes[0]["scope"] = "link"
    if gateway and str(block) != subnet:
        routes.append({"to": subnet, "via": gateway, "table": table})
        routes.append({"to": subnet, "via": gateway, "table": None})
    if gateway:
        default = "0.0.0.0/0" if block.version == 4 else "::/0"
        routes.append({"to": default, "via": gateway, "table": table})
    return routes


def rail_links(entries):
    """Links of one host's rails, in rail order: dicts with rail, netdev, kind
    (ethernet | ipoib | ipoib_child), parent, mode, pkey, mtu, addresses (CIDR),
    routes ({to, via?, table (None: main), scope?}), rules ({from, table, priority}),
    children (netdevs of P_Key children)."""
    links = []
    for entry in entries:
        table = entry["table"]
        infiniband = entry["link_layer"] == "infiniband"
        addresses, routes, rules = [], [], []
        if entry.get("address"):
            addresses.append(f"{entry['address']}/{entry['prefix_length']}")
            routes += _block_routes(
                entry["address"], entry["prefix_length"], entry["subnet"], entry["gateway"], table
            )
            rules.append({"from": entry["address"], "table": table, "priority": table})
        if entry.get("address6"):
            # An L3 rail's /127 (rails.py), else the shared subnet6's prefix.
            prefix6 = (
                entry.get("prefix_length6") or ipaddress.ip_network(entry["subnet6"]).prefixlen
            )
            addresses.append(f"{entry['address6']}/{prefix6}")
            routes += _block_routes(
                entry["address6"], prefix6, entry["subnet6"], entry.get("gateway6"), table
            )
            rules.append({"from": entry["address6"], "table": table, "priority": table})
        children = []
        for pkey in entry.get("pkeys") or []:
            child = f"{entry['netdev']}.{pkey['netdev_suffix']}"
            children.append(child)
            child_addresses, child_routes, child_rules = [], [], []
            if pkey.get("address"):
                net = ipaddress.ip_network(pkey["subnet"])
                child_addresses.append(f"{pkey['address']}/{net.prefixlen}")
                child_routes.append({"to": str(net), "table": table, "scope": "link"})
                child_rules.append({"from": pkey["address"], "table": table, "priority": table})
            links.append(
                {
                    "rail": entry["name"],
                    "partition": pkey["partition"],
                    "netdev": child,
                    "kind": "ipoib_child",
                    "parent": entry["netdev"],
                    "mode": entry["ipoib_mode"],
                    "pkey": f"0x{pkey['pkey']:04x}",
                    "mtu": pkey.get("mtu") or entry["mtu"],
                    "addresses": child_addresses,
                    "routes": child_routes,
                    "rules": child_rules,
                    "children": [],
                }
            )
        links.insert(
            len(links) - len(children),
            {
                "rail": entry["name"],
                "partition": None,
                "netdev": entry["netdev"],
                "kind": "ipoib" if infiniband else "ethernet",
                "parent": None,
                "mode": entry["ipoib_mode"],
                "pkey": None,
                "mtu": entry["mtu"],
                "addresses": addresses,
                "routes": routes,
                "rules": rules,
                "children": children,
            },
        )
    return links


def _file_stem(link):
    name = link["rail"] + (f".{link['partition']}" if link["partition"] else "")
    return PREFIX + name


def network_file(link):
    """The file name of the link's .network (systemd-networkd backend)."""
    return _file_stem(link) + ".network"


def _ini(sections):
    """INI text from [(section, [(key, value), ...]), ...]; None values are left out."""
    out = [MANAGED]
    for section, pairs in sections:
        out.append("")
        out.append(f"[{section}]")
        out += [f"{key}={value}" for key, value in pairs if value is not None]
    return "\n".join(out) + "\n"


def networkd_ipoib(systemd_version):
    """Whether networkd knows IPoIB: [IPoIB] in .netdev (P_Key children) and .network
    (Mode=), IPoIB= in [Network] - systemd 250 and later (systemd NEWS, v250). Ubuntu
    22.04 and DGX OS 6 ship 249, which ignores them with a warning. None: unknown (the
    rendered mode), taken as new enough."""
    return systemd_version is None or int(systemd_version) >= 250


def networkd_files(links, systemd_version=None):
    """{file name: text} for /etc/systemd/network. Before systemd 250 a P_Key child has
    no .netdev and its parent no IPoIB= or [IPoIB] (networkd ignores them): a oneshot
    unit creates the child (pkey_units) and networkd configures it by its .network."""
    ipoib = networkd_ipoib(systemd_version)
    files = {}
    for link in links:
        stem = _file_stem(link)
        network = [
            ("Match", [("Name", link["netdev"])]),
            ("Link", [("MTUBytes", link["mtu"]), ("RequiredForOnline", "no")]),
            (
                "Network",
                [("Description", f"rdma-fabric rail {link['rail']}")]
                + [("Address", a) for a in link["addresses"]]
                + [("DHCP", "no"), ("IPv6AcceptRA", "no"), ("ConfigureWithoutCarrier", "yes")]
                + [("IPoIB", child) for child in link["children"] if ipoib],
            ),
        ]
        if link["kind"] == "ipoib" and ipoib:
            network.append(("IPoIB", [("Mode", link["mode"])]))
        for route in link["routes"]:
            network.append(
                (
                    "Route",
                    [
                        ("Destination", route["to"]),
                        ("Gateway", route.get("via")),
                        ("Table", route["table"]),
                        ("Scope", route.get("scope")),
                    ],
                )
            )
        for rule in link["rules"]:
            network.append(
                (
                    "RoutingPolicyRule",
                    [
                        ("From", rule["from"]),
                        ("Table", rule["table"]),
                        ("Priority", rule["priority"]),
                    ],
                )
            )
        files[stem + ".network"] = _ini(network)
        if link["kind"] == "ipoib_child" and ipoib:
            files[stem + ".netdev"] = _ini(
                [
                    ("NetDev", [("Name", link["netdev"]), ("Kind", "ipoib")]),
                    ("IPoIB", [("PartitionKey", link["pkey"]), ("Mode", link["mode"])]),
                ]
            )
    return files


UNIT_PREFIX = "rdma-rails-"


def _device_unit(netdev):
    """The systemd device unit of a netdev (systemd-escape --path of its sysfs path)."""
    escaped = "".join(
        c if c.isascii() and (c.isalnum() or c in ":_.") else f"\\x{ord(c):02x}" for c in netdev
    )
    if escaped.startswith("."):
        escaped = "\\x2e" + escaped[1:]
    return f"sys-subsystem-net-devices-{escaped}.device"


def pkey_units(links, systemd_version=None):
    """{unit file name: text} for /etc/systemd/system: before systemd 250 (no [IPoIB] in
    networkd), one oneshot unit per P_Key child that creates it with iproute2
    (`ip link add link PARENT name CHILD type ipoib pkey P mode M`, ip-link(8)) when its
    parent appears, and deletes it when stopped; and one per IPoIB parent whose mode is
    not the kernel's default (datagram), writing /sys/class/net/PARENT/mode. networkd
    then configures the child by its .network (it manages links it did not create).
    Nothing from systemd 250 on (the .netdev does it)."""
    if networkd_ipoib(systemd_version):
        return {}
    units = {}
    for link in links:
        if link["kind"] == "ipoib_child":
            parent, child = link["parent"], link["netdev"]
            start = (
                f"/bin/sh -c 'ip link show dev {child} >/dev/null 2>&1 || ip link add link "
                f"{parent} name {child} type ipoib pkey {link['pkey']} mode {link['mode']}'"
            )
            stop = f"-/bin/sh -c 'ip link delete dev {child}'"
            what = f"P_Key {link['pkey']} child {child} of {parent}"
        elif link["kind"] == "ipoib" and link["mode"] != "datagram":
            parent = link["netdev"]
            start = f"/bin/sh -c 'echo {link['mode']} > /sys/class/net/{parent}/mode'"
            stop = None
            what = f"IPoIB mode {link['mode']} of {parent}"
        else:
            continue
        device = _device_unit(parent)
        units[f"{UNIT_PREFIX}{link['netdev']}.service"] = _ini(
            [
                (
                    "Unit",
                    [
                        (
                            "Description",
                            f"rdma-fabric rail {link['rail']}: {what} "
                            "(systemd-networkd before 250 has no [IPoIB])",
                        ),
                        ("BindsTo", device),
                        ("After", device),
                        ("Before", "systemd-networkd.service"),
                    ],
                ),
                (
                    "Service",
                    [
                        ("Type", "oneshot"),
                        ("RemainAfterExit", "yes"),
                        ("ExecStart", start),
                        ("ExecStop", stop),
                    ],
                ),
                ("Install", [("WantedBy", device)]),
            ]
        )
    return units


def netplan_errors(links):
    """What netplan cannot express: IPoIB P_Key child interfaces."""
    return [
        f"rail {link['rail']}: netplan has no IPoIB P_Key child interfaces "
        f"({link['netdev']}); use rdma_rails_backend: networkd on this host"
        for link in links
        if link["kind"] == "ipoib_child"
    ]


def netplan_config(links):
    """The netplan document (a dict; dump it as YAML) for /etc/netplan."""
    ethernets = {}
    for link in links:
        config = {
            "renderer": "networkd",
            "mtu": link["mtu"],
            "dhcp4": False,
            "dhcp6": False,
            "accept-ra": False,
            "ignore-carrier": True,
            "optional": True,
        }
        if link["addresses"]:
            config["addresses"] = list(link["addresses"])
        if link["kind"] == "ipoib":
            config["infiniband-mode"] = link["mode"]
        routes = []
        for route in link["routes"]:
            item = {"to": "default" if route["to"] in ("0.0.0.0/0", "::/0") else route["to"]}
            if route.get("via"):
                item["via"] = route["via"]
            if route.get("scope"):
                item["scope"] = route["scope"]
            if route["table"] is not None:
                item["table"] = route["table"]
            routes.append(item)
        if routes:
            config["routes"] = routes
        if link["rules"]:
            config["routing-policy"] = [
                {"from": r["from"], "table": r["table"], "priority": r["priority"]}
                for r in link["rules"]
            ]
        ethernets[link["netdev"]] = config
    # The renderer on each rail, never global: netplan gives a global `renderer` of the
    # last file to every definition without its own, in every file (parse.c), so a global
    # one here would hand a NetworkManager host's other links to networkd.
    return {"network": {"version": 2, "ethernets": ethernets}}


def nm_keyfiles(links):
    """{file name: text} for /etc/NetworkManager/system-connections (mode 0600)."""
    files = {}
    for link in links:
        conn_id = "rdma-" + link["rail"] + (f"-{link['partition']}" if link["partition"] else "")
        infiniband = link["kind"] != "ethernet"
        kind = "infiniband" if infiniband else "ethernet"
        sections = [
            (
                "connection",
                [
                    ("id", conn_id),
                    ("type", kind),
                    ("interface-name", link["netdev"]),
                    ("autoconnect", "true"),
                ],
            ),
            (
                kind,
                [
                    ("mtu", link["mtu"]),
                    ("transport-mode", link["mode"] if infiniband else None),
                    ("parent", link["parent"]),
                    ("p-key", link["pkey"]),
                ],
            ),
        ]
        v4 = [a for a in link["addresses"] if ":" not in a]
        v6 = [a for a in link["addresses"] if ":" in a]
        ipv4 = [("method", "manual" if v4 else "disabled"), ("never-default", "true")]
        ipv4 += [(f"address{i}", a) for i, a in enumerate(v4, 1)]
        routes = [r for r in link["routes"] if ":" not in r["to"]]
        for i, route in enumerate(routes, 1):
            ipv4.append(
                (f"route{i}", route["to"] + (f",{route['via']}" if route.get("via") else ""))
            )
            if route["table"] is not None:
                ipv4.append((f"route{i}_options", f"table={route['table']}"))
        rules4 = [r for r in link["rules"] if ":" not in r["from"]]
        ipv4 += [
            (f"routing-rule{i}", f"priority {r['priority']} from {r['from']} table {r['table']}")
            for i, r in enumerate(rules4, 1)
        ]
        ipv6 = [("method", "manual" if v6 else "link-local"), ("never-default", "true")]
        ipv6 += [(f"address{i}", a) for i, a in enumerate(v6, 1)]
        routes6 = [r for r in link["routes"] if ":" in r["to"]]
        for i, route in enumerate(routes6, 1):
            ipv6.append(
                (f"route{i}", route["to"] + (f",{route['via']}" if route.get("via") else ""))
            )
            if route["table"] is not None:
                ipv6.append((f"route{i}_options", f"table={route['table']}"))
        rules6 = [r for r in link["rules"] if ":" in r["from"]]
        ipv6 += [
            (f"routing-rule{i}", f"priority {r['priority']} from {r['from']} table {r['table']}")
            for i, r in enumerate(rules6, 1)
        ]
        sections += [("ipv4", ipv4), ("ipv6", ipv6)]
        files[f"{conn_id}.nmconnection"] = _ini(sections)
    return files


def _sysctl_key(netdev, name):
    # sysctl.d: a netdev name with a dot (ib0.8010) needs the slash form.
    if "." in netdev:
        return f"net/ipv4/conf/{netdev}/{name}"
    return f"net.ipv4.conf.{netdev}.{name}"


def sysctl_conf(links):
    """/etc/sysctl.d text: arp_ignore=1, arp_announce=2, rp_filter=2 per rail netdev."""
    lines = [
        MANAGED,
        "# Several RDMA NICs on one host (NVIDIA's multi-homed RoCE setup): answer ARP only",
        "# on the NIC that owns the address, announce that address, loose reverse path.",
    ]
    for link in links:
        lines += [f"{_sysctl_key(link['netdev'], k)} = {v}" for k, v in SYSCTLS]
    return "\n".join(lines) + "\n"


def sysctl_paths(links):
    """/proc/sys paths live_drift reads (``grep -H '' PATH...`` prints path:value)."""
    return [
        f"/proc/sys/net/ipv4/conf/{link['netdev']}/{k}" for link in links for k, _value in SYSCTLS
    ]


def nccl_gid_index(entries, devices):
    """(index, None) when the RoCE v2 GID of every RoCE rail's IPv4 address has one
    index on every rail (NCCL_IB_GID_INDEX is one number for all HCAs of a process),
    else (None, why). devices: rdma_devices_info's, read after the addresses are live
    (the kernel adds a RoCE GID per address; never assume an index)."""
    by_device = {d["name"]: d for d in devices or []}
    found = {}
    for entry in entries:
        if entry["link_layer"] != "ethernet" or not entry.get("address"):
            continue
        device = by_device.get(entry.get("device")) or {}
        port = next((p for p in device.get("ports") or [] if p.get("port") == entry["port"]), {})
        index = next(
            (
                g["index"]
                for g in port.get("gids") or []
                if g.get("type") == "RoCE v2" and g.get("ipv4") == entry["address"]
            ),
            None,
        )
        found[entry["name"]] = index
    if not found:
        return None, "no RoCE rail"
    missing = [name for name, index in found.items() if index is None]
    if missing:
        return None, f"no RoCE v2 GID of the rail address yet on {', '.join(missing)}"
    if len(set(found.values())) > 1:
        detail = ", ".join(f"{name}: {index}" for name, index in found.items())
        return None, f"the RoCE v2 GID index differs between rails ({detail})"
    return next(iter(found.values())), None


def nccl_gid_warning(entries, devices, host="this host", extra=None):
    """Why /etc/nccl.conf gets no NCCL_IB_GID_INDEX on this host (the RoCE v2 GID index
    differs between rails, or a rail's address has no RoCE v2 GID yet), naming the host,
    the rails and what to set; None when one index fits, the operator pinned one in
    rdma_rails_nccl_extra, or no rail is RoCE. NCCL_IB_GID_INDEX is one number for every
    HCA of a process; NCCL 2.21 and later select the RoCE v2 IPv4 GID per HCA themselves
    (NCCL_IB_GID_INDEX default -1), older NCCL uses index 0 (net_ib.cc, NCCL_PARAM)."""
    if "NCCL_IB_GID_INDEX" in (extra or {}):
        return None
    index, why = nccl_gid_index(entries, devices)
    if index is not None or why == "no RoCE rail":
        return None
    return (
        f"rdma_rails: {host}: /etc/nccl.conf gets no NCCL_IB_GID_INDEX: {why}. NCCL 2.21 "
        "and later select the RoCE v2 IPv4 GID of each rail themselves; an older NCCL "
        "uses GID index 0 (RoCE v1, link-local, never routed across a leaf): there, give "
        "every rail's address the same RoCE v2 GID index (the same addresses in the same "
        "order on every rail netdev) or set NCCL_IB_GID_INDEX in rdma_rails_nccl_extra."
    )


def nccl_conf(entries, traffic_class=None, socket_ifname=None, extra=None, gid_index=None):
    """/etc/nccl.conf text: NCCL_IB_HCA (rail devices in rail order, exact match),
    NCCL_IB_TC (RoCE rails only), NCCL_SOCKET_IFNAME (exact: "=" prefixed unless the
    value already starts with "=" or "^"), NCCL_IB_GID_INDEX when one RoCE v2 GID index
    fits every rail (else nothing: nccl_gid_warning says why), then extra settings (an
    extra key wins)."""
    extra = dict(extra or {})
    hca = ",".join(f"{e['device']}:{e['port']}" for e in entries if e.get("device"))
    lines = [MANAGED]
    if hca:
        lines.append(f"NCCL_IB_HCA=={hca}")
    roce = any(e["link_layer"] == "ethernet" for e in entries)
    if traffic_class is not None and roce:
        lines.append(f"NCCL_IB_TC={int(traffic_class)}")
    if socket_ifname:
        exact = socket_ifname if socket_ifname[0] in "=^" else f"={socket_ifname}"
        lines.append(f"NCCL_SOCKET_IFNAME={exact}")
    # No NCCL_IB_ROCE_VERSION_NUM fallback: NCCL before 2.21 has no such variable (its
    # NCCL_IB_GID_INDEX defaults to 0), 2.21 and later default it to 2 already.
    if roce and gid_index is not None and not {"NCCL_IB_GID_INDEX"} & set(extra):
        lines.append(f"NCCL_IB_GID_INDEX={int(gid_index)}")
    for key, value in sorted(extra.items()):
        lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


def _json(value):
    if isinstance(value, str):
        value = json.loads(value or "[]")
    return value or []


def _route_key(dst, table, via, dev):
    """(network, table, gateway, dev) of a route, planned or live (iproute2 JSON writes
    "default" for 0.0.0.0/0 and ::/0, a host route without /32, no "table" for main)."""
    via = str(via) if via else None
    if dst == "default":
        dst = "::/0" if via and ":" in via else "0.0.0.0/0"
    with contextlib.suppress(ValueError):
        dst = str(ipaddress.ip_network(str(dst), strict=False))
    return dst, str(table) if table not in (None, "") else "main", via, dev


def _planned_route(route, netdev):
    return _route_key(route["to"], route["table"], route.get("via"), netdev)


def live_drift(links, addr_json, rule_json, sysctl_text, route_json=None):
    """{netdev: [what differs]} between the links and the kernel's live state.

    addr_json: ``ip -j addr show`` output; rule_json: ``ip -j rule show`` plus
    ``ip -j -6 rule show`` (lists, or their text); sysctl_text: ``grep -H ''`` over
    sysctl_paths(links); route_json: ``ip -j route show table all`` for IPv4 and IPv6
    (None: routes not compared). Reported: a missing netdev, its MTU, a planned address,
    rule or route missing, a global address that is not planned (added by hand or by
    other software), a sysctl.
    """
    live_routes = None
    if route_json is not None:
        live_routes = {
            _route_key(r.get("dst"), r.get("table"), r.get("gateway"), r.get("dev"))
            for r in _json(route_json)
        }
    by_name = {i.get("ifname"): i for i in _json(addr_json)}
    rules = {(r.get("src"), str(r.get("table"))) for r in _json(rule_json)}
    values = {}
    for line in (sysctl_text or "").splitlines():
        path, _colon, value = line.partition(":")
        values[path] = value.strip()
    drift = {}
    for link in links:
        reasons = []
        live = by_name.get(link["netdev"])
        if live is None:
            drift[link["netdev"]] = ["missing"]
            continue
        if live.get("mtu") != link["mtu"]:
            reasons.append(f"mtu {live.get('mtu')} != {link['mtu']}")
        have = {f"{a.get('local')}/{a.get('prefixlen')}" for a in live.get("addr_info") or []}
        reasons += [f"address {a} missing" for a in link["addresses"] if a not in have]
        reasons += [
            f"extra address {a.get('local')}/{a.get('prefixlen')}"
            for a in live.get("addr_info") or []
            if a.get("scope", "global") == "global"
            and f"{a.get('local')}/{a.get('prefixlen')}" not in link["addresses"]
        ]
        if live_routes is not None:
            for route in link["routes"]:
                if _planned_route(route, link["netdev"]) not in live_routes:
                    via = f" via {route['via']}" if route.get("via") else ""
                    table = route["table"] if route["table"] is not None else "main"
                    reasons.append(f"route to {route['to']}{via} table {table} missing")
        reasons += [
            f"rule from {r['from']} table {r['table']} missing"
            for r in link["rules"]
            if (r["from"], str(r["table"])) not in rules
        ]
        for key, wanted in SYSCTLS:
            path = f"/proc/sys/net/ipv4/conf/{link['netdev']}/{key}"
            if values.get(path) != str(wanted):
                reasons.append(f"{key} {values.get(path)} != {wanted}")
        if reasons:
            drift[link["netdev"]] = reasons
    return drift


# networkd.conf [Network] keys that keep systemd-networkd off the routes, rules and
# nexthops other software (a CNI, a VPN, Docker) configured, with the systemd version
# that added each (networkd.conf(5), "Added in version"). All default to yes. A key an
# older networkd does not know is logged as "Unknown key ... ignoring", so each is
# written only for the versions that have it (all of them when the version is unknown).
NETWORKD_FOREIGN_KEYS = (
    ("ManageForeignRoutingPolicyRules", 249),
    ("ManageForeignRoutes", 246),
    ("ManageForeignNextHops", 256),
)


def networkd_conf(version=None):
    """The role's networkd.conf.d drop-in for a systemd ``version`` (an int, or None)."""
    lines = [
        "# Written by rdma.fabric.rdma_rails: systemd-networkd manages the rail links only and",
        "# leaves the ip rules, routes and nexthops of other software (CNI, VPN, containers)",
        "# alone.",
        "[Network]",
    ]
    lines += [
        f"{key}=no" for key, added in NETWORKD_FOREIGN_KEYS if version is None or version >= added
    ]
    return "\n".join(lines) + "\n"


def _epoch(value):
    value = (value or "").strip()
    return int(value) if value.isdigit() else None


def networkd_probe(text):
    """The role's networkd probe (tasks/networkd_service.yml) as a dict: version (int or
    None), active (bool), started and dropin (epoch seconds or None: networkd's start,
    the drop-in's mtime), links ({name: setup state of `networkctl list`})."""
    if isinstance(text, dict):
        return text
    values, links = {}, {}
    for line in (text or "").splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "link":
            links[words[1]] = words[2]
        elif "=" in line:
            key, _eq, value = line.partition("=")
            values[key.strip()] = value.strip()
    return {
        "version": _epoch(values.get("version")),
        "active": values.get("active") == "active",
        "started": _epoch(values.get("started")),
        "dropin": _epoch(values.get("dropin")),
        "links": links,
    }


# `networkctl list` SETUP states of links networkd does not (or no longer) configure.
NETWORKD_UNMANAGED = ("unmanaged", "linger", "n/a", "")


def networkd_action(probe, rails, conf_changed=False, bus_changed=False, allow_restart=False):
    """What to do with systemd-networkd so that it runs with the role's drop-in, without
    touching the links it manages for others: {action, others, msg}.

    action: ``start`` (not running: it reads the drop-in when it starts), ``none``
    (running and has read the drop-in), ``restart`` (the drop-in is new to the running
    networkd and it manages no link but the rails, or ``allow_restart``), ``defer``
    (it manages other links: a restart would release their DHCP leases,
    KeepConfiguration= defaults to no, so the drop-in waits for networkd's next start
    and the rails are not reconfigured now: a reconfigure would let the running networkd
    drop foreign rules). networkd reads networkd.conf only when it starts (systemd 252's
    ``networkctl reload`` re-reads .network and .netdev files only).
    """
    state = networkd_probe(probe)
    if not state["active"]:
        return {"action": "start", "others": [], "msg": ""}
    read_before = (
        state["dropin"] is None or state["started"] is None or state["dropin"] <= state["started"]
    )
    if not (conf_changed or bus_changed or not read_before):
        return {"action": "none", "others": [], "msg": ""}
    rails = set(rails or [])
    others = sorted(
        name
        for name, setup in state["links"].items()
        if name != "lo" and name not in rails and setup not in NETWORKD_UNMANAGED
    )
    if not others or allow_restart:
        return {"action": "restart", "others": others, "msg": ""}
    why = (
        "D-Bus was just installed"
        if bus_changed and not conf_changed
        else ("networkd.conf.d/60-rdma-rails.conf is newer than the running systemd-networkd")
    )
    return {
        "action": "defer",
        "others": others,
        "msg": (
            f"rdma_rails: {why}, which also manages {', '.join(others)}: a restart would "
            "release their DHCP leases (KeepConfiguration= defaults to no), so it is not "
            "restarted and the rails are not applied now (a reconfigure by the running "
            "networkd would drop foreign ip rules and routes). The drop-in and the rail "
            "files are written; they take effect at networkd's next start (the next "
            "reboot), or set rdma_rails_networkd_restart: true to restart it in a "
            "maintenance window."
        ),
    }


RENDERED = (
    "# Rendered by rdma_rails without contacting the host (rdma_rails_state: rendered): "
    "NETDEV(device:port) and DEVICE(netdev) stand for names bound on the host when applied."
)


def offline_entries(entries):
    """A host's plan entries bound without the host (rendered mode): the netdev and
    device the plan names (a netdev selector, rdma_rail_devices), else placeholders
    ``NETDEV(mlx5_0:1)`` / ``DEVICE(ens17np0)`` that a reviewer reads as such."""
    out = []
    for entry in entries or []:
        entry = dict(entry)
        if not entry.get("netdev"):
            entry["netdev"] = f"NETDEV({entry.get('device') or entry.get('pci')}:{entry['port']})"
        if not entry.get("device"):
            entry["device"] = f"DEVICE({entry.get('pci') or entry['netdev']})"
        out.append(entry)
    return out
