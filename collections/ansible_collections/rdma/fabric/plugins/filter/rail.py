# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of the rdma_rails role: bind a host's rails, render them, compare with the
live state. Documentation: rail_*.yml beside this file."""

from __future__ import annotations

import json
import re

import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.rails import resolve_rails

DIRS = {
    "networkd": "/etc/systemd/network",
    "netplan": "/etc/netplan",
    "networkmanager": "/etc/NetworkManager/system-connections",
}
NETPLAN_FILE = "60-rdma-rails.yaml"


def rail_resolve(entries, devices, host="this host", management=None, ipoib_enhanced=None):
    """A host's rails bound to its RDMA ports; fails naming the host and what is
    missing, a rail on a management interface, or connected mode on enhanced IPoIB
    (ipoib_enhanced: ib_ipoib's parameter as read on the host, None when unknown)."""
    resolved, errors = resolve_rails(entries or [], devices or [], host, ipoib_enhanced)
    if not errors:
        errors = [
            f"{host}: rail {e['name']} is on netdev {e['netdev']}, the management interface "
            "(rdma_rails never touches it: check rdma_rails / rdma_rail_devices)"
            for e in resolved
            if e["netdev"] and e["netdev"] in (management or [])
        ]
    if errors:
        raise AnsibleFilterError("invalid rail plan:\n" + "\n".join(errors))
    return resolved


def rail_links(entries):
    return rail_render.rail_links(entries or [])


UNIT_DIR = "/etc/systemd/system"


def systemd_version(text):
    """The version `systemctl --version` prints first ("systemd 249 (249.11-0ubuntu3)"),
    or None."""
    match = re.match(r"\s*systemd (\d+)", text or "")
    return int(match.group(1)) if match else None


def rail_files(links, backend, systemctl_version=None):
    """{path: {content, mode}} of the backend's files for these links, on the host whose
    `systemctl --version` printed systemctl_version (see backend_files)."""
    return backend_files(links, backend, systemd_version(systemctl_version))


def backend_files(links, backend, version=None):
    """{path: {content, mode}} of the backend's files for these links. networkd: with a
    systemd version (int) before 250, the P_Key children's oneshot units in
    /etc/systemd/system too (rail_render.pkey_units); None: the 250 form."""
    units = {}
    if backend == "networkd":
        files = rail_render.networkd_files(links, version)
        units = rail_render.pkey_units(links, version)
        mode = "0644"
    elif backend == "netplan":
        errors = rail_render.netplan_errors(links)
        if errors:
            raise AnsibleFilterError("\n".join(errors))
        text = (
            rail_render.MANAGED
            + "\n"
            # Plain JSON types first: Ansible's values are subclasses (tagged str, int)
            # that yaml.safe_dump refuses.
            + yaml.safe_dump(
                json.loads(json.dumps(rail_render.netplan_config(links))),
                sort_keys=False,
                default_flow_style=False,
            )
        )
        files = {NETPLAN_FILE: text} if links else {}
        mode = "0600"
    elif backend == "networkmanager":
        files = rail_render.nm_keyfiles(links)
        mode = "0600"
    else:
        raise AnsibleFilterError(f"rdma_rails_backend: unknown backend {backend!r}")
    out = {
        f"{DIRS[backend]}/{name}": {"content": text, "mode": mode} for name, text in files.items()
    }
    out.update(
        {f"{UNIT_DIR}/{name}": {"content": text, "mode": "0644"} for name, text in units.items()}
    )
    return out


def rail_drift(links, probe):
    """{netdev: [what differs]}. probe: the role's probe output: ip -j addr, ip -j -4
    rule, ip -j -6 rule, ip -j -4 route and ip -j -6 route of every table (one JSON
    document a line, blank lines between), then path:value lines of /proc/sys. Without
    the route documents routes are not compared."""
    docs, sysctl = [], []
    for line in (probe or "").splitlines():
        if not line.strip():
            continue
        if len(docs) < 5 and line.lstrip().startswith("["):
            docs.append(json.loads(line))
        else:
            sysctl.append(line)
    routes = docs[3] + docs[4] if len(docs) == 5 else None
    docs += [[]] * (3 - len(docs))
    return rail_render.live_drift(links, docs[0], docs[1] + docs[2], "\n".join(sysctl), routes)


def rail_nccl(entries, traffic_class=None, socket_ifname=None, extra=None, devices=None):
    """devices: rdma_devices_info's, read after the rails are live (their GID tables)."""
    gid_index, _why = rail_render.nccl_gid_index(entries or [], devices)
    return rail_render.nccl_conf(entries or [], traffic_class, socket_ifname, extra, gid_index)


RENDER_PATHS = {
    "sysctl": "/etc/sysctl.d/60-rdma-rails.conf",
    "nccl": "/etc/nccl.conf",
    "networkd_conf": "/etc/systemd/networkd.conf.d/60-rdma-rails.conf",
}


def _given_systemd_version(value):
    """rdma_rails_systemd_version as an int, or None when unset. The role's argument
    check does not convert what it accepts: -e and INI inventories give "249"."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or not 1 <= int(text) <= 999:
        raise AnsibleFilterError(
            f"rdma_rails_systemd_version {value!r}: the hosts' systemd major version, "
            "such as 249 (the first number of `systemctl --version`)"
        )
    return int(text)


def rail_rendered(
    entries,
    backend,
    traffic_class=None,
    socket_ifname=None,
    extra=None,
    nccl=False,
    paths=None,
    systemd=None,
):
    """{path: text} of every file the role would write on this host (rendered mode),
    from the plan alone: the backend's files, the sysctl file, the networkd.conf drop-in
    (networkd backends) and /etc/nccl.conf (with nccl; no GID index: the GID tables are
    read on the host). systemd: the host's systemd version (rdma_rails_systemd_version),
    which applied mode reads on the host: before 250 the P_Key children are oneshot
    units, and the drop-in has the keys that version knows; None: the 250 form and every
    key."""
    paths = dict(RENDER_PATHS, **(paths or {}))
    version = _given_systemd_version(systemd)
    resolved = rail_render.offline_entries(entries)
    links = rail_render.rail_links(resolved)
    files = {path: v["content"] for path, v in backend_files(links, backend, version).items()}
    files[paths["sysctl"]] = rail_render.sysctl_conf(links)
    if backend in ("networkd", "netplan"):
        files[paths["networkd_conf"]] = rail_render.networkd_conf(version)
    if nccl:
        files[paths["nccl"]] = rail_render.nccl_conf(
            resolved, traffic_class, socket_ifname, extra, None
        )
    return {path: rail_render.RENDERED + "\n" + text for path, text in sorted(files.items())}


def rail_nccl_gid_warning(entries, devices=None, host="this host", extra=None):
    return rail_render.nccl_gid_warning(entries or [], devices, host, extra)


def rail_networkd_conf(probe):
    """The networkd.conf.d drop-in for the networkd version of the role's probe."""
    return rail_render.networkd_conf(rail_render.networkd_probe(probe)["version"])


def rail_networkd_action(probe, rails, conf_changed=False, bus_changed=False, allow_restart=False):
    return rail_render.networkd_action(
        probe, list(rails or []), bool(conf_changed), bool(bus_changed), bool(allow_restart)
    )


class FilterModule:
    def filters(self):
        return {
            "rail_networkd_conf": rail_networkd_conf,
            "rail_nccl_gid_warning": rail_nccl_gid_warning,
            "rail_rendered": rail_rendered,
            "rail_networkd_action": rail_networkd_action,
            "rail_resolve": rail_resolve,
            "rail_links": rail_links,
            "rail_files": rail_files,
            "rail_drift": rail_drift,
            "rail_nccl": rail_nccl,
            "rail_sysctl": rail_render.sysctl_conf,
            "rail_sysctl_paths": rail_render.sysctl_paths,
        }
