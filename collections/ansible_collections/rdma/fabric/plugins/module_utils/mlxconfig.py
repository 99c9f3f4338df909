# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse what ``mstconfig`` (mstflint) and ``mlxconfig`` (NVIDIA MFT) print.

Both tools share one front end (mstflint's mlxcfg_ui.cpp) and print, per device:

    Device #1:
    ----------

    Device type:    ConnectX5
    Name:           MCX556A-ECA_Ax
    Description:    ConnectX-5 VPI adapter card; ...
    Device:         0000:02:00.1

    Configurations:                              Default         Current         Next Boot
             MEMIC_BAR_SIZE                      0               0               0
    *        ADVANCED_PCI_SETTINGS               False(0)        True(1)         True(1)

The table's columns depend on the command and the firmware generation: ``q`` shows
"Next Boot"; ``q -e`` shows "Default Current Next Boot" (ConnectX-3: "Default Next
Boot"); ``set`` shows "Next Boot New". The header labels do not line up with the value
columns in newer layouts, so rows are split on whitespace, never on header positions.
A row may start with ``*`` (next-boot value differs from default/current) and may carry
an ``RO`` (read-only) marker after its name. Values are ``NAME(number)`` for enums,
bare numbers, or ``Array[a..b]``. Errors are lines that start with ``-E-``.
"""

from __future__ import annotations

import re

# Column labels in the order the tools print them.
COLUMN_LABELS = (
    ("Default", "default"),
    ("Current", "current"),
    ("Next Boot", "next_boot"),
    ("New", "new"),
)

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[0-9.]+\])?$")
_ENUM_RE = re.compile(r"^(?P<name>[^()\s]+)\((?P<number>-?[0-9]+)\)$")
_ARRAY_RE = re.compile(r"^Array\[[0-9]+\.\.[0-9]+\]$")
_INT_RE = re.compile(r"^(-?[0-9]+|0[xX][0-9a-fA-F]+)$")
_DEVICE_RE = re.compile(r"^\s*Device #(?P<index>[0-9]+):\s*$")
_FIELD_RE = re.compile(
    r"^\s*(?P<key>Device type|Name|Description|Device|PSID|FW Version):\s*(?P<value>.*?)\s*$"
)
# Lines inside a table that are the tool talking, not rows.
_MESSAGE_PREFIXES = ("-E-", "-W-", "-I-", "Apply new Configuration", "Applying...", "The '*' shows")

_BOOL_WORDS = {"true": 1, "yes": 1, "on": 1, "false": 0, "no": 0, "off": 0}


class MlxconfigParseError(ValueError):
    """The text is not a query table this parser understands."""


def _to_int(text):
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def parse_value(raw):
    """'ETH(2)' -> {'raw', 'name': 'ETH', 'number': 2, 'array': False}; '48' -> number 48."""
    if raw is None:
        return None
    raw = raw.strip()
    enum = _ENUM_RE.match(raw)
    if enum:
        return {"raw": raw, "name": enum["name"], "number": int(enum["number"]), "array": False}
    if _INT_RE.match(raw):
        return {"raw": raw, "name": None, "number": _to_int(raw), "array": False}
    return {"raw": raw, "name": raw, "number": None, "array": bool(_ARRAY_RE.match(raw))}


def _columns(header_rest):
    """The value columns named on a 'Configurations:' line, in order."""
    found = []
    for label, key in COLUMN_LABELS:
        # "New" must not match inside another label; all labels are whole words.
        match = re.search(r"(?<![A-Za-z])" + re.escape(label) + r"(?![A-Za-z])", header_rest)
        if match:
            found.append((match.start(), key))
    return [key for _unused, key in sorted(found)]


def _indent(line):
    return len(line) - len(line.lstrip())


def _new_device(index):
    return {
        "index": index,
        "type": None,
        "name": None,
        "description": None,
        "device": None,
        "columns": [],
        "params": {},
        "order": [],
    }


def parse(text):
    """Parse query or set output into {'devices': [...], 'errors': [...], 'messages': [...]}.

    Each device: index, type, name, description, device (as the tool printed them; N/A
    becomes None), columns (e.g. ['default', 'current', 'next_boot']), order (parameter
    names as printed) and params: NAME -> {column: raw value, ..., 'modified': bool,
    'read_only': bool, 'complete': bool}. A table without a 'Device #N:' block (a
    fragment, or one device queried by an older tool) is reported as device index 0.
    """
    devices, errors, messages = [], [], []
    device = None
    table_indent = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("-E-"):
            errors.append(stripped[3:].strip())
            table_indent = None
            continue
        if stripped.startswith(("-I-", "-W-")):
            messages.append(stripped)
            table_indent = None
            continue
        match = _DEVICE_RE.match(line)
        if match:
            device = _new_device(int(match["index"]))
            devices.append(device)
            table_indent = None
            continue
        if stripped.startswith("Configurations:"):
            if device is None:
                device = _new_device(0)
                devices.append(device)
            device["columns"] = _columns(stripped[len("Configurations:") :]) or ["next_boot"]
            table_indent = _indent(line)
            continue
        if table_indent is None:
            field = _FIELD_RE.match(line)
            if field and device is not None:
                key = field["key"].lower().replace(" ", "_")
                key = "type" if key == "device_type" else key
                value = field["value"]
                device[key] = None if value in ("", "N/A") else value
            continue
        if stripped.startswith(_MESSAGE_PREFIXES) or set(stripped) <= {"."}:
            continue
        _add_row(device, line, table_indent)
    return {"devices": devices, "errors": errors, "messages": messages}


def _add_row(device, line, table_indent):
    modified = line.lstrip().startswith("*")
    if not modified and _indent(line) <= table_indent:
        return
    tokens = line.strip().lstrip("*").split()
    if not tokens or not _NAME_RE.match(tokens[0]):
        return
    name, values = tokens[0], tokens[1:]
    read_only = bool(values) and values[0] == "RO"
    if read_only:
        values = values[1:]
    columns = device["columns"]
    row = {"modified": modified, "read_only": read_only, "complete": len(values) == len(columns)}
    for key, raw in zip(columns, values):
        row[key] = raw
    for key in columns[len(values) :]:
        row[key] = None
    if name not in device["params"]:
        device["order"].append(name)
    device["params"][name] = row


def parse_query(text):
    """The one device of a ``-d DEV query``; raises MlxconfigParseError when absent."""
    result = parse(text)
    if result["errors"]:
        raise MlxconfigParseError("; ".join(result["errors"]))
    tables = [d for d in result["devices"] if d["params"]]
    if len(tables) != 1:
        raise MlxconfigParseError(f"expected one device table, found {len(tables)}")
    return tables[0]


def next_boot(row):
    """The value the device will use after the next boot (the last column of a query)."""
    if row is None:
        return None
    return row.get("next_boot")


def normalize_request(value):
    """What a requested value means: {'number': int|None, 'name': str|None}.

    True/False and 'yes'/'no' mean 1/0; '2', 2 and 'ETH(2)' mean 2; 'ETH' means the
    enum named ETH (compared case-insensitively).
    """
    if isinstance(value, bool):
        return {"number": int(value), "name": None}
    if isinstance(value, int):
        return {"number": value, "name": None}
    text = str(value).strip()
    enum = _ENUM_RE.match(text)
    if enum:
        return {"number": int(enum["number"]), "name": None}
    if _INT_RE.match(text):
        return {"number": _to_int(text), "name": None}
    return {"number": None, "name": text}


def values_match(device_raw, requested):
    """Whether the device's value (as printed) already is the requested value."""
    have = parse_value(device_raw)
    want = normalize_request(requested)
    if have is None or have["array"]:
        return False
    if want["number"] is not None:
        return have["number"] == want["number"]
    name = want["name"].casefold()
    if have["name"] is not None and have["name"].casefold() == name:
        return True
    # 'true' / 'no' against a True(1)/False(0) enum.
    if have["name"] in ("True", "False") and name in _BOOL_WORDS:
        return have["number"] == _BOOL_WORDS[name]
    return False


def set_argument(value):
    """The text to put after NAME= on a set command line (numbers where known)."""
    want = normalize_request(value)
    if want["number"] is not None:
        return str(want["number"])
    if want["name"].casefold() in _BOOL_WORDS:
        return str(_BOOL_WORDS[want["name"].casefold()])
    return want["name"]
