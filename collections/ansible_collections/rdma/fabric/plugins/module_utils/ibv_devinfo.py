# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `ibv_devinfo` (libibverbs-utils / rdma-core) output.

    hca_id:	mlx5_0
        transport:			InfiniBand (0)
        fw_ver:				28.39.2048
                port:	1
                        state:			PORT_ACTIVE (4)
                        max_mtu:		4096 (5)
                        active_mtu:		4096 (5)
                        link_layer:		Ethernet
Tabs or spaces, depending on the build. `-v` adds GID[ n]: lines (not parsed here:
the GID table comes from sysfs). Values with "(n)" keep the text; *_mtu become ints.
`-v` also prints capability blocks at the device's indent whose keys repeat earlier
ones (the tag-matching caps' max_sge after the device's max_sge): the first value wins.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_ ]*?):\s*(.*?)\s*$")
_INT_KEYS = {"max_mtu", "active_mtu", "phys_port_cnt", "sm_lid", "port_lid"}


def _value(key, value):
    if key in _INT_KEYS:
        match = re.match(r"([0-9]+)", value)
        return int(match.group(1)) if match else None
    return value


def parse_ibv_devinfo(text):
    """{device: {fields..., ports: {port number: {fields...}}}} in output order."""
    devices = {}
    device = port = None
    for line in (text or "").splitlines():
        match = _KEY.match(line)
        if not match:
            continue
        key, value = match.group(1).strip(), match.group(2)
        if key == "hca_id":
            device = devices.setdefault(value, {"ports": {}})
            port = None
        elif device is None:
            continue
        elif key == "port" and value.isdigit():
            port = device["ports"].setdefault(int(value), {})
        elif key.startswith("GID"):
            continue
        else:
            fields = device if port is None else port
            fields.setdefault(key, _value(key, value))
    return devices
