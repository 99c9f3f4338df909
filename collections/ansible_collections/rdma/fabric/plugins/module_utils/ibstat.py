# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `ibstat` (infiniband-diags) output into one record per port.

    CA 'mlx5_0'
        CA type: MT4129
        Number of ports: 1
        ...
        Node GUID: 0x946dae0300cde72c
        Port 1:
            State: Active
            Physical state: LinkUp
            Rate: 400
            Base lid: 75
            LMC: 0
            SM lid: 334
            Port GUID: 0x946dae0300cde72c
            Link layer: InfiniBand

Hardware prints "Link layer: InfiniBand" or "Ethernet"; the ibsim simulator's
libumad2sim prints "IB". Both spellings come back as "InfiniBand".
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

_CA_RE = re.compile(r"^CA '(?P<name>[^']+)'\s*$")
_PORT_RE = re.compile(r"^\s+Port (?P<port>[0-9]+):\s*$")
_FIELD_RE = re.compile(r"^\s+(?P<key>[A-Za-z][A-Za-z ]*?):\s*(?P<value>.*?)\s*$")

_LINK_LAYERS = {"IB": "InfiniBand", "INFINIBAND": "InfiniBand", "ETHERNET": "Ethernet"}


def _int(value):
    try:
        return int(value, 0)
    except (TypeError, ValueError):
        return None


def parse_ibstat(text):
    """A list of port records, each carrying its CA's name, type and node GUID."""
    ports = []
    ca = None
    port = None
    for line in (text or "").splitlines():
        match = _CA_RE.match(line)
        if match:
            ca = {"ca": match["name"], "ca_type": None, "node_guid": None}
            port = None
            continue
        if ca is None:
            continue
        match = _PORT_RE.match(line)
        if match:
            port = {
                **ca,
                "port": int(match["port"]),
                "state": None,
                "physical_state": None,
                "rate": None,
                "lid": None,
                "lmc": None,
                "sm_lid": None,
                "port_guid": None,
                "link_layer": None,
            }
            ports.append(port)
            continue
        match = _FIELD_RE.match(line)
        if not match:
            continue
        key, value = match["key"].lower(), match["value"]
        if port is None:
            if key == "ca type":
                ca["ca_type"] = value
            elif key == "node guid":
                ca["node_guid"] = normalize_guid(value)
            continue
        if key == "state":
            port["state"] = value
        elif key == "physical state":
            port["physical_state"] = value
        elif key == "rate":
            port["rate"] = _int(value)
        elif key == "base lid":
            port["lid"] = _int(value)
        elif key == "lmc":
            port["lmc"] = _int(value)
        elif key == "sm lid":
            port["sm_lid"] = _int(value)
        elif key == "port guid":
            port["port_guid"] = normalize_guid(value)
        elif key == "link layer":
            port["link_layer"] = _LINK_LAYERS.get(value.upper(), value)
    return ports
