#!/usr/bin/env python3
"""Stand-in for lldpd's lldpcli (only `lldpcli -f json show neighbors [ports A,B]`).

NOT lldpd: it answers from a JSON file, RDMA_LLDP_STANDIN = {host: {netdev: [switch,
port]}}, for the host named by RDMA_LLDP_HOST (tests run several inventory hosts on one
machine). Output contract (lldpd tests/integration/test_lldpcli.py, the "json" format):
{"lldp": {"interface": ...}} where one interface is an object {name: {...}} and several
are a list of one-key objects; each has "via", "chassis" keyed by the neighbour's SysName
(with its "id"), and "port" with "id" {type, value} ("ifname" for an interface name)
and "descr". No neighbour at all prints {"lldp": {}} (lldpd prints an empty lldp object).
"""

from __future__ import annotations

import json
import os
import sys


def entry(switch, port):
    return {
        "via": "LLDP",
        "rid": "1",
        "age": "0 day, 00:00:31",
        "chassis": {switch: {"id": {"type": "mac", "value": "02:00:00:00:00:01"}}},
        "port": {"id": {"type": "ifname", "value": port}, "descr": port, "ttl": "120"},
    }


def main(argv):
    if argv[:4] != ["-f", "json", "show", "neighbors"]:
        print(f"lldpcli stand-in: unsupported arguments {argv}", file=sys.stderr)
        return 2
    wanted = argv[5].split(",") if argv[4:5] == ["ports"] and len(argv) > 5 else None
    with open(os.environ["RDMA_LLDP_STANDIN"]) as handle:
        table = json.load(handle).get(os.environ.get("RDMA_LLDP_HOST", ""), {})
    found = [
        {netdev: entry(*table[netdev])}
        for netdev in sorted(table)
        if wanted is None or netdev in wanted
    ]
    if not found:
        doc = {"lldp": {}}
    elif len(found) == 1:
        doc = {"lldp": {"interface": found[0]}}
    else:
        doc = {"lldp": {"interface": found}}
    print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
