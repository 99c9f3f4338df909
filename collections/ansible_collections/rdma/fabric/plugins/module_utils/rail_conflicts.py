# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Other network configuration that would also configure a rail netdev.

Before the rdma_rails role writes anything, the host's existing files are read and
every one that matches a rail netdev is named (file and netdev), so the role refuses
instead of merging silently (netplan merges two files' addresses on one interface;
networkd applies the first .network in lexical order, and 10-netplan-* sorts before
40-rdma-rail-*). A rail netdev is known by its name, MAC, alternative names (``ip -j
link``), kind (ethernet, ipoib) and, for the networkd backends, the file name of the
.network that configures it. What is read, and how each format names an interface:

- systemd-networkd .network / .link (/etc and /run/systemd/network) and .network.d
  drop-ins: ``[Match]`` conditions all hold (AND); ``Name=`` (.network, also matching
  alternative names) or ``OriginalName=`` (.link; a .link matching by neither name nor
  MAC is not judged) are space-separated shell globs,
  several lines add up, an empty one resets the list, a leading ``!`` inverts it;
  ``MACAddress=``/``PermanentMACAddress=`` by MAC; other conditions (Type=, Driver=,
  Path=) cannot be judged here and count as matching. A .network without conditions
  matches every link. networkd applies only the first matching .network in lexical
  order of file names (systemd.network(5)): one that sorts after the rail's own file
  is never applied and is no conflict. A drop-in adds to its .network (a ``[Match]`` in
  it too); a drop-in of the role's own file changes a rail and is a conflict. netplan's
  own output (10-netplan-*) is left to its YAML.
- netplan YAML (/etc, /run, /lib/netplan): network.<type>.<id>; the id is the interface
  name unless ``match:`` (name glob, macaddress, driver: all must hold); ``set-name:``
  renames the matched interface, so a set-name equal to a rail netdev conflicts too.
- NetworkManager keyfiles (/etc, /run, /usr/lib/NetworkManager/system-connections):
  ``[connection] interface-name=`` (exact), ``[match] interface-name=`` (globs, ``!``
  excludes), ``[ethernet]``/``[infiniband] mac-address=``; a profile bound to none of
  them autoconnects on any device of its type (nm-settings-keyfile(5)).
- cloud-init network config (/etc/cloud/cloud.cfg.d/*.cfg): version 1 ``physical``
  entries by ``name`` or ``mac_address`` (cloud-init renames by MAC), bond, bridge and
  vlan members; version 2 like netplan.
- ifupdown (/etc/network/interfaces, interfaces.d): ``iface X``, ``auto X``,
  ``allow-hotplug X`` (interfaces(5)).
- RHEL ifcfg (/etc/sysconfig/network-scripts/ifcfg-*): ``DEVICE=`` or ``HWADDR=``.

Not read: /usr/lib/systemd/network (the distribution's defaults: 99-default.link
matches every link and only names it).
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath
import re

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML ships with Ansible
    yaml = None

NETPLAN_TYPES = (
    "ethernets",
    "bonds",
    "bridges",
    "vlans",
    "wifis",
    "vrfs",
    "tunnels",
    "modems",
    "dummy-devices",
    "virtual-ethernets",
    "nm-devices",
)


def _ini(text):
    parser = configparser.ConfigParser(strict=False, interpolation=None, allow_no_value=True)
    parser.optionxform = str
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _unit_sections(text):
    """systemd's INI: {section: {key: [values in order]}}; repeated sections and keys
    add up (systemd.syntax(7))."""
    sections = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1].strip(), {})
            continue
        if current is None or "=" not in line:
            continue
        key, _eq, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def _glob_list(values):
    """A systemd glob list from repeated assignments: each adds words, an empty one
    resets; (invert, words)."""
    words = []
    for value in values:
        if not value:
            words = []
        else:
            words += value.split()
    invert = bool(words) and words[0].startswith("!")
    if invert:
        words[0] = words[0][1:]
    return invert, [w for w in words if w]


def _info(value):
    """A netdev's known facts: {mac, altnames, kind, network_file}; a bare value is its MAC."""
    if isinstance(value, dict):
        return {
            "mac": value.get("mac"),
            "altnames": list(value.get("altnames") or []),
            "kind": value.get("kind"),
            "network_file": value.get("network_file"),
        }
    return {"mac": value, "altnames": [], "kind": None, "network_file": None}


def _mac_in(spec, info):
    macs = {m.lower() for m in str(spec).replace(",", " ").split()}
    return bool(info["mac"]) and info["mac"].lower() in macs


# [Match] conditions judged here; any other one (Type=, Driver=, Path=...) counts as true.
_JUDGED = {"Name", "OriginalName", "MACAddress", "PermanentMACAddress"}


def _networkd(path, text, netdevs):
    sections = _unit_sections(text)
    match = sections.get("Match") or {}
    network = path.endswith(".network")
    key = "Name" if network else "OriginalName"
    found = []
    for netdev, info in netdevs.items():
        if not match:
            if network:  # networkd matches every link with a .network without conditions
                found.append(netdev)
            continue
        names = [netdev] + (info["altnames"] if network else [])
        ok = True
        if key in match:
            invert, words = _glob_list(match[key])
            hit = any(fnmatch.fnmatchcase(n, w) for n in names for w in words)
            ok = hit != invert
        for mac_key in ("MACAddress", "PermanentMACAddress"):
            if ok and mac_key in match and " ".join(match[mac_key]).strip():
                ok = _mac_in(" ".join(match[mac_key]), info)
        if not network and not set(match) & (_JUDGED - {"Name"}):
            ok = False  # a .link by Driver=/Type= only: not judged (it names, not configures)
        if ok:
            found.append(netdev)
    return found


def _netplan_network(network, netdevs):
    found = []
    if not isinstance(network, dict):
        return found
    for kind in NETPLAN_TYPES:
        definitions = network.get(kind) or {}
        if not isinstance(definitions, dict):
            continue
        for ident, conf in definitions.items():
            conf = conf if isinstance(conf, dict) else {}
            match = conf.get("match") if isinstance(conf.get("match"), dict) else None
            for netdev, info in netdevs.items():
                if match is None:
                    hit = fnmatch.fnmatchcase(netdev, str(ident))
                elif not match:
                    hit = True  # an empty match takes every interface
                else:
                    hit = True
                    if match.get("name") is not None:
                        hit = fnmatch.fnmatchcase(netdev, str(match["name"]))
                    if hit and match.get("macaddress"):
                        hit = _mac_in(match["macaddress"], info)
                    # driver: not judged here (counts as matching).
                if (hit or conf.get("set-name") == netdev) and netdev not in found:
                    found.append(netdev)
    return found


def _yaml(text):
    if yaml is None:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _cloud_init(text, netdevs):
    doc = _yaml(text)
    network = doc.get("network") if isinstance(doc, dict) else None
    if not isinstance(network, dict):
        return []
    if str(network.get("version")) != "1":
        return _netplan_network(network, netdevs)
    names, macs = set(), set()
    for entry in network.get("config") or []:
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "physical":
            names.add(entry.get("name"))
            if entry.get("mac_address"):
                macs.add(str(entry["mac_address"]))
        for key in ("bond_interfaces", "bridge_interfaces"):
            names.update(str(n) for n in entry.get(key) or [])
        if kind == "vlan" and entry.get("vlan_link"):
            names.add(entry["vlan_link"])
    return [n for n, info in netdevs.items() if n in names or _mac_in(" ".join(macs), info)]


def _nm_list(value):
    return [v.strip() for v in (value or "").replace(",", ";").split(";") if v.strip()]


def _nm(text, netdevs):
    parser = _ini(text)
    if parser is None:
        return []
    kind = parser.get("connection", "type", fallback="") or ""
    name = parser.get("connection", "interface-name", fallback=None)
    globs = _nm_list(parser.get("match", "interface-name", fallback=None))
    mac = None
    for section in ("ethernet", "802-3-ethernet", "infiniband"):
        mac = mac or parser.get(section, "mac-address", fallback=None)
    autoconnect = parser.get("connection", "autoconnect", fallback="true").lower()
    found = []
    for netdev, info in netdevs.items():
        if name:
            hit = netdev == name
        elif globs:
            positive = [g for g in globs if not g.startswith(("!", "~"))]
            excluded = [g[1:] for g in globs if g.startswith("!")]
            hit = (not positive or any(fnmatch.fnmatchcase(netdev, g) for g in positive)) and not (
                any(fnmatch.fnmatchcase(netdev, g) for g in excluded)
            )
        elif mac:
            hit = _mac_in(mac, info)
        else:
            # Unbound: autoconnects on any device of its type.
            wanted = "infiniband" if kind == "infiniband" else "ethernet"
            have = "infiniband" if (info["kind"] or "").startswith("ipoib") else "ethernet"
            hit = autoconnect not in ("false", "no", "0") and kind in (
                "ethernet",
                "802-3-ethernet",
                "infiniband",
            )
            hit = hit and wanted == have
        if hit and mac and (name or globs):
            hit = _mac_in(mac, info)
        if hit:
            found.append(netdev)
    return found


def _ifcfg(path, text, netdevs):
    values = {}
    for line in text.splitlines():
        key, eq, value = line.split("#", 1)[0].strip().partition("=")
        if eq:
            values[key.strip()] = value.strip().strip("'\"")
    device = values.get("DEVICE") or posixpath.basename(path)[len("ifcfg-") :]
    return [
        n
        for n, info in netdevs.items()
        if n == device or (values.get("HWADDR") and _mac_in(values["HWADDR"], info))
    ]


def split_probe(text):
    """{path: text} from the role's probe: each file as RS (0x1e) + path, newline, text."""
    files = {}
    for record in text.split("\x1e")[1:]:
        path, _nl, body = record.partition("\n")
        files[path] = body
    return files


def _ifupdown(text, netdevs):
    names = set()
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] in ("iface", "auto", "allow-hotplug", "allow-auto"):
            names.update(words[1:] if words[0] != "iface" else words[1:2])
    return [n for n in netdevs if n in names]


def matching_netdevs(path, text, netdevs):
    """The rail netdevs (of ``netdevs``: {name: facts}) that the file at ``path`` would
    configure."""
    if not isinstance(netdevs, dict):
        netdevs = dict.fromkeys(netdevs)
    netdevs = {n: _info(v) for n, v in netdevs.items()}
    name = posixpath.basename(path)
    folder = posixpath.dirname(path)
    if name.endswith((".network", ".link")) and "systemd/network" in folder:
        if name.startswith("10-netplan-"):
            return []  # netplan's own output: its YAML is read instead
        found = _networkd(path, text, netdevs)
        if name.endswith(".network"):
            # Only the first matching .network (by file name) is applied.
            found = [
                n
                for n in found
                if not netdevs[n]["network_file"] or name < netdevs[n]["network_file"]
            ]
        return found
    if name.endswith(".yaml") and folder.endswith("netplan"):
        doc = _yaml(text)
        return _netplan_network(doc.get("network") if isinstance(doc, dict) else None, netdevs)
    if name.endswith(".nmconnection"):
        return _nm(text, netdevs)
    if name.endswith(".cfg") and "cloud" in folder:
        return _cloud_init(text, netdevs)
    if folder.endswith("network-scripts") and name.startswith("ifcfg-"):
        return _ifcfg(path, text, netdevs)
    if folder.startswith("/etc/network"):
        return _ifupdown(text, netdevs)
    return []


def dropin_parent(path):
    """The .network a drop-in belongs to (its file name), or None."""
    folder = posixpath.dirname(path)
    if folder.endswith(".network.d") and path.endswith(".conf"):
        return posixpath.basename(folder)[: -len(".d")]
    return None


def _own(path, own):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in own)


def conflicts(files, netdevs, own=()):
    """[{path, netdev}] for each file (``{path: text}``) that configures a rail netdev.

    ``netdevs``: names, {name: MAC} or {name: {mac, altnames, kind, network_file}};
    ``own``: the role's own paths (or globs), never reported themselves (a drop-in that
    changes one of them is)."""
    if not isinstance(netdevs, dict):
        netdevs = dict.fromkeys(netdevs)
    netdevs = {n: _info(v) for n, v in netdevs.items()}
    own = list(own)
    by_name = {}
    for path in sorted(files):
        if path.endswith(".network") and "systemd/network" in path:
            by_name.setdefault(posixpath.basename(path), path)
    out = []
    for path in sorted(files):
        parent_name = dropin_parent(path)
        if parent_name is not None:
            parent = by_name.get(parent_name)
            if parent is None:
                continue
            if _own(parent, own):
                # A drop-in changes the role's own file: every rail that file configures.
                found = _networkd(parent, files[parent], netdevs)
            else:
                found = matching_netdevs(parent, files[parent] + "\n" + files[path], netdevs)
                found = [
                    n for n in found if n not in matching_netdevs(parent, files[parent], netdevs)
                ]
        elif _own(path, own):
            continue
        else:
            found = matching_netdevs(path, files[path], netdevs)
        generated = nm_generated(path, files[path])
        out.extend(
            dict({"path": path, "netdev": netdev}, **({"nm_generated": True} if generated else {}))
            for netdev in found
        )
    return out


NM_RUNTIME = "/run/NetworkManager/system-connections/"


def nm_generated(path, text):
    """Whether a keyfile is one NetworkManager made itself at run time: the automatic
    "Wired connection N" (DHCP, autoconnect-priority -999) of a device without a
    profile, or the profile of a device configured outside it; in /run, marked
    ``[.nmmeta] nm-generated=true``. Nobody wrote it: a profile of the device's own
    takes its place."""
    if not (path.startswith(NM_RUNTIME) and path.endswith(".nmconnection")):
        return False
    return re.search(r"^\[\.nmmeta\][^\[]*^nm-generated\s*=\s*true\s*$", text, re.M) is not None


def conflict_errors(host, found):
    """Messages naming the host, each file and the netdev it would configure."""
    return [
        (
            f"{host}: {c['path']} is NetworkManager's automatic profile for rail netdev "
            f"{c['netdev']} (NetworkManager manages it, and would run DHCP on it): make "
            "NetworkManager leave it alone (unmanaged-devices in NetworkManager.conf) or use "
            "rdma_rails_backend: networkmanager"
            if c.get("nm_generated")
            else f"{host}: {c['path']} also configures rail netdev {c['netdev']}: remove or "
            "narrow it (rdma_rails never overwrites it)"
        )
        for c in found
    ]
