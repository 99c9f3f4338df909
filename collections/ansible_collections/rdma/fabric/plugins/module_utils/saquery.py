# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `saquery` (infiniband-diags) record dumps.

Every record type prints the same shape (saquery.c): a "<Type>Record dump:" line, then
one "\t\tName....value" line per field. Some records nest a heading ("SMInfo dump:",
"PKey Table:") followed by rows of values:

    SMInfoRecord dump:
            RID
            LID...................1
            SMInfo dump:
            GUID..................0x0000000000100001
            Priority..............14
            SMState...............3
    PKeyTableRecord dump:
            LID........................7
            Port.......................1
            Block......................0
            PKey Table:
            0xffff 0x8010 0x8020 0x0000 0x0000 0x0000 0x0000 0x0000

Each record becomes a dict: field names lowercased (`lid`, `guid`, `smstate`,
`node_type` ...), numbers as int (decimal or 0x), GUID-like fields in the 16-digit
spelling, and `pkey_table` a list of int for a PKeyTableRecord. `record` names the type.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

_HEAD_RE = re.compile(r"^(?P<type>[A-Za-z0-9]+)Record dump:\s*$")
_FIELD_RE = re.compile(r"^\s+(?P<key>[A-Za-z_][A-Za-z0-9_ ]*?)\.{2,}\s*(?P<value>.*?)\s*$")
_ROW_RE = re.compile(r"^\s+(0x[0-9a-fA-F]+\s*)+$")
_NUMBER_RE = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")


def _value(key, value):
    if "guid" in key and value.lower().startswith("0x"):
        return normalize_guid(value)
    if _NUMBER_RE.match(value):
        return int(value, 0)
    return value


def parse_saquery(text):
    """A list of records in the order saquery printed them."""
    records = []
    record = None
    for line in (text or "").splitlines():
        match = _HEAD_RE.match(line.strip())
        if match:
            record = {"record": match["type"]}
            records.append(record)
            continue
        if record is None:
            continue
        match = _FIELD_RE.match(line)
        if match:
            key = match["key"].strip().lower().replace(" ", "_")
            record[key] = _value(key, match["value"])
        elif _ROW_RE.match(line):
            record.setdefault("pkey_table", []).extend(int(v, 16) for v in line.split())
    return records


def pkeys(records):
    """Non-zero P_Keys of PKeyTableRecords, in table order, without duplicates."""
    seen = []
    for record in records:
        for pkey in record.get("pkey_table", []):
            if pkey and pkey not in seen:
                seen.append(pkey)
    return seen
