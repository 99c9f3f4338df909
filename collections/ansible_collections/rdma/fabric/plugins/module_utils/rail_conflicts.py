# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Other network configuration that would also configure a rail netdev.

Before the rdma_rails role writes anything, the host's existing files are read and
every one that matches a rail netdev is named (file and netdev), so the role refuses
instead of merging silently (netplan merges two files' addresses on one interface;
networkd applies the first .network in lexical order, and 10-netplan-* sorts before
40-rdma-rail-*). What is read, and how each format names an interface:

- systemd-networkd .network / .link (/etc/systemd/network, /run/systemd/network):
  ``[Match] Name=`` (.network) or ``OriginalName=`` (.link), space-separated shell
  globs, a leading ``!`` inverts the list (systemd.network(5), systemd.link(5)). A
  .network whose [Match] names no interface (empty, or only Type=/Driver=/MACAddress=)
  is reported as matching every netdev: this code cannot tell. netplan's own output
  (10-netplan-*) is left to its YAML.
- netplan YAML (/etc/netplan, /run/netplan, /lib/netplan): network.<type>.<id>, the
  id is the interface name unless ``match: {name: GLOB}`` (netplan(5)).
- NetworkManager keyfiles: ``[connection] interface-name=`` (nm-settings-keyfile(5)).
- cloud-init network config (/etc/cloud/cloud.cfg.d/*.cfg): version 1
  ``config: [{type: physical, name: X}]`` or version 2 like netplan.
- ifupdown (/etc/network/interfaces, interfaces.d): ``iface X``, ``auto X``,
  ``allow-hotplug X`` (interfaces(5)).
"""

from __future__ import annotations

import configparser
import fnmatch
import posixpath

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


def _glob_match(spec, netdev):
    """systemd's Name= list: space-separated globs, a leading '!' inverts the list."""
    words = spec.split()
    invert = bool(words) and words[0].startswith("!")
    if invert:
        words[0] = words[0][1:]
    hit = any(fnmatch.fnmatchcase(netdev, w) for w in words if w)
    return hit != invert


def _by_mac(spec, netdevs):
    macs = {m.lower() for m in str(spec).split()}
    return [n for n, mac in netdevs.items() if mac and mac.lower() in macs]


def _networkd(path, text, netdevs):
    parser = _ini(text)
    if parser is None or not parser.has_section("Match"):
        return list(netdevs) if path.endswith(".network") else []
    key = "Name" if path.endswith(".network") else "OriginalName"
    spec = parser.get("Match", key, fallback=None)
    if spec is None:
        mac = parser.get("Match", "MACAddress", fallback=None) or parser.get(
            "Match", "PermanentMACAddress", fallback=None
        )
        if mac is not None:
            return _by_mac(mac, netdevs)
        # networkd matches every link when [Match] names none (by type or driver).
        return list(netdevs) if path.endswith(".network") else []
    return [n for n in netdevs if _glob_match(spec, n)]


def _netplan_network(network, netdevs):
    found = []
    if not isinstance(network, dict):
        return found
    for kind in NETPLAN_TYPES:
        for ident, conf in (network.get(kind) or {}).items():
            glob = None
            if isinstance(conf, dict) and isinstance(conf.get("match"), dict):
                match = conf["match"]
                glob = match.get("name") or conf.get("set-name")
                if glob is None:
                    # By MAC (cloud-init's usual form) or by driver only.
                    names = (
                        _by_mac(match["macaddress"], netdevs)
                        if match.get("macaddress")
                        else list(netdevs)
                    )
                    found.extend(n for n in names if n not in found)
                    continue
            names = [n for n in netdevs if fnmatch.fnmatchcase(n, str(glob or ident))]
            found.extend(n for n in names if n not in found)
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
    if str(network.get("version")) == "1":
        names = {
            c.get("name")
            for c in network.get("config") or []
            if isinstance(c, dict) and c.get("type") == "physical"
        }
        return [n for n in netdevs if n in names]
    return _netplan_network(network, netdevs)


def _nm(text, netdevs):
    parser = _ini(text)
    if parser is None:
        return []
    name = parser.get("connection", "interface-name", fallback=None)
    return [n for n in netdevs if n == name]


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
    """The rail netdevs (of ``netdevs``) that the file at ``path`` would configure."""
    name = posixpath.basename(path)
    folder = posixpath.dirname(path)
    if name.endswith((".network", ".link")) and "systemd/network" in folder:
        if name.startswith("10-netplan-"):
            return []  # netplan's own output: its YAML is read instead
        return _networkd(path, text, netdevs)
    if name.endswith(".yaml") and folder.endswith("netplan"):
        doc = _yaml(text)
        return _netplan_network(doc.get("network") if isinstance(doc, dict) else None, netdevs)
    if name.endswith(".nmconnection"):
        return _nm(text, netdevs)
    if name.endswith(".cfg") and "cloud" in folder:
        return _cloud_init(text, netdevs)
    if folder.startswith("/etc/network"):
        return _ifupdown(text, netdevs)
    return []


def conflicts(files, netdevs, own=()):
    """[{path, netdev}] for each file (``{path: text}``) that configures a rail netdev;
    ``netdevs``: names, or {name: MAC} so files matching by MAC address are judged;
    ``own``: the role's own paths (or globs), never reported."""
    if not isinstance(netdevs, dict):
        netdevs = dict.fromkeys(netdevs)
    out = []
    for path in sorted(files):
        if any(fnmatch.fnmatchcase(path, pattern) for pattern in own):
            continue
        for netdev in matching_netdevs(path, files[path], netdevs):
            out.append({"path": path, "netdev": netdev})
    return out


def conflict_errors(host, found):
    """Messages naming the host, each file and the netdev it would configure."""
    return [
        f"{host}: {c['path']} also configures rail netdev {c['netdev']}: remove or narrow "
        "it (rdma_rails never overwrites it)"
        for c in found
    ]
