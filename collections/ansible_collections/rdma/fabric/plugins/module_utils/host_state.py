# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parsers of what a host has installed and running: dpkg-query, rpm -q and
systemctl show, each for the names asked (module host_state_info).

Only the commands' documented output formats are read:
  - dpkg-query(1) -W -f '${Package}\\t${db:Status-Abbrev}\\t${Version}\\n': the
    abbreviated status is three characters, want / status / error, and a status of
    "i" is an installed package (dpkg-query(1), "db:Status-Abbrev");
  - rpm -q --qf '%{NAME}\\t%{VERSION}-%{RELEASE}\\n': a name that is not installed
    prints "package NAME is not installed" instead (rpm(8));
  - systemctl show -p Id,LoadState,ActiveState,UnitFileState U1 U2...: one block of
    KEY=VALUE lines per unit, in the order asked, blocks apart by an empty line
    (systemctl(1), "show"); it needs a running systemd;
  - systemctl list-unit-files --no-legend --plain U1 U2...: "NAME STATE PRESET" for each
    unit file that exists, sorted; it reads the unit files only, so it also answers where
    systemd does not run (an image build, a chroot: "show" exits 1 there).
"""

from __future__ import annotations

DPKG_FORMAT = "${Package}\\t${db:Status-Abbrev}\\t${Version}\\n"
RPM_FORMAT = "%{NAME}\\t%{VERSION}-%{RELEASE}\\n"
UNIT_PROPERTIES = "Id,LoadState,ActiveState,UnitFileState"


def dpkg_versions(text, names):
    """{name: version or None (not installed)} for each name asked."""
    found = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and len(parts[1]) >= 2 and parts[1][1] == "i":
            found[parts[0]] = parts[2].strip()
    return {name: found.get(name) for name in names}


def rpm_versions(text, names):
    """{name: version-release or None (not installed)} for each name asked."""
    found = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 2 and parts[0] and parts[1]:
            # One name installed more than once (kernel-core): the first, as rpm lists it.
            found.setdefault(parts[0], parts[1].strip())
    return {name: found.get(name) for name in names}


def unit_states(text, names):
    """{name: {load, active, enabled}} for each unit asked, in the order asked; a unit
    systemctl printed no block for reads all None (the callers act as if unknown)."""
    blocks, block = [], {}
    for line in text.splitlines():
        if not line.strip():
            if block:
                blocks.append(block)
            block = {}
            continue
        key, _sep, value = line.partition("=")
        block[key] = value.strip()
    if block:
        blocks.append(block)
    states = {}
    for position, name in enumerate(names):
        block = blocks[position] if position < len(blocks) else {}
        states[name] = {
            "load": block.get("LoadState") or None,
            "active": block.get("ActiveState") or None,
            "enabled": block.get("UnitFileState") or None,
        }
    return states


def unit_files(text, names):
    """{name: {load, active, enabled}} from list-unit-files: a unit file listed is loaded
    (masked when its state says so), one not listed is not-found; whether it runs is not
    known here (active None)."""
    listed = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            listed[parts[0]] = parts[1]
    states = {}
    for name in names:
        state = listed.get(name)
        load = "not-found" if state is None else ("masked" if state == "masked" else "loaded")
        states[name] = {"load": load, "active": None, "enabled": state}
    return states
