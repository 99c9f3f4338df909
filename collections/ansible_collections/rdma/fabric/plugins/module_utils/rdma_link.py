# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse iproute2 `rdma link show` output (plain text of every era, and `rdma -j`).

Plain text, newer iproute2:
  link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth1
older iproute2 (index prefix; IB ports add subnet_prefix/lid/sm_lid/lmc):
  3/1: mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens803f1
JSON (`rdma -j link show`):
  [{"ifindex":3,"ifname":"rxe0","port":1,"state":"ACTIVE","physical_state":"LINK_UP",
    "netdev":"eth1","netdev_index":3}]
Every record: {"device", "port", "state", "physical_state", "netdev", ...extra keys}.
"""

from __future__ import annotations

import json
import re

_OLD_PREFIX = re.compile(r"^\d+/\d+:\s+(\S+?)/(\d+):\s*(.*)$")
_NEW_PREFIX = re.compile(r"^link\s+(\S+?)/(\d+)\s+(.*)$")


def _pairs(rest):
    words = rest.split()
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def parse_rdma_link_text(text):
    links = []
    for raw in (text or "").splitlines():
        line = raw.strip().lstrip(">").strip()
        match = _NEW_PREFIX.match(line) or _OLD_PREFIX.match(line)
        if not match:
            continue
        device, port, rest = match.groups()
        fields = _pairs(rest)
        record = {
            "device": device,
            "port": int(port),
            "state": fields.pop("state", None),
            "physical_state": fields.pop("physical_state", None),
            "netdev": fields.pop("netdev", None),
        }
        record.update(fields)
        links.append(record)
    return links


def parse_rdma_link_json(text):
    links = []
    for item in json.loads(text or "[]"):
        record = {
            "device": item.get("ifname"),
            "port": item.get("port"),
            "state": item.get("state"),
            "physical_state": item.get("physical_state"),
            "netdev": item.get("netdev"),
        }
        for key, value in item.items():
            if key not in ("ifname", "port", "state", "physical_state", "netdev"):
                record[key] = value
        links.append(record)
    return links


def parse_rdma_link(text):
    """Parse either form: JSON when it looks like JSON, else plain text."""
    stripped = (text or "").lstrip()
    if stripped.startswith("["):
        return parse_rdma_link_json(stripped)
    return parse_rdma_link_text(text)
