# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse perftest output (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat).

The settings block is "Key : value" pairs, two per line; the result table starts at a
header such as
   #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
   #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ...
followed by numeric rows. With --report_gbits the unit is Gb/sec (10^9 bit/s); without
it perftest prints MB/sec (up to 24.04) or MiB/sec (later), both 2^20 bytes/s. With -D
(duration) the peak column prints 0.00. A row may be cut short by the warning perftest
writes to stderr. Errors ("Couldn't connect", "Failed to modify QP") are collected.
"""

from __future__ import annotations

import re

_COLUMN = re.compile(r"#\w+|[A-Za-z0-9%.][^\[#]*?\[[^\]]*\]")
_SETTING = re.compile(
    r"([A-Za-z][A-Za-z0-9 .*_-]*?)\s*:\s*(\S[^:]*?)(?=\s{2,}[A-Za-z][A-Za-z0-9 .*_-]*?\s*:|$)"
)
_ERROR = re.compile(
    r"(couldn't|could not|failed|unable|error|not supported|no such)", re.IGNORECASE
)
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")

_UNIT_TO_GBPS = {"Gb/sec": 1.0, "MB/sec": 8 * 2**20 / 1e9, "MiB/sec": 8 * 2**20 / 1e9}


def _key(column):
    name, _, unit = column.partition("[")
    name = name.strip().lstrip("#").lower()
    name = re.sub(r"[^a-z0-9]+", "_", name).strip("_")
    unit = unit.rstrip("]")
    if name.startswith("bw_"):
        return name, unit
    if unit and unit not in ("Mpps",):
        return f"{name}_{re.sub(r'[^a-z0-9]+', '', unit.lower())}", unit
    if unit == "Mpps":
        return f"{name}_mpps", unit
    return name, unit


def _number(text):
    return float(text) if "." in text else int(text)


def parse_perftest(text):
    result = {"test": None, "settings": {}, "columns": [], "unit": None, "rows": [], "errors": []}
    header = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or set(line) <= {"-", "*"}:
            continue
        if line.startswith("#bytes"):
            header = [_key(col) for col in _COLUMN.findall(line)]
            result["columns"] = [name for name, _ in header]
            units = {unit for name, unit in header if name.startswith("bw_")}
            result["unit"] = units.pop() if len(units) == 1 else None
            continue
        fields = line.split()
        if header and fields and all(_NUMBER.match(f) for f in fields):
            result["rows"].append(
                {name: _number(v) for (name, _), v in zip(header, fields, strict=False)}
            )
            continue
        if result["test"] is None and line.endswith(" Test") and ":" not in line:
            result["test"] = line
            continue
        if (
            ":" in line
            and not header
            and not line.startswith(("local address", "remote address", "GID:"))
        ):
            for key, value in _SETTING.findall(line):
                result["settings"][key.strip()] = value.strip()
        if _ERROR.search(line) and "warning" not in line.lower():
            result["errors"].append(line)
    result["bw_average_gbps"] = bw_average_gbps(result)
    return result


def bw_average_gbps(result):
    """Average bandwidth of the last complete row in Gb/s (10^9 bit/s), or None."""
    factor = _UNIT_TO_GBPS.get(result.get("unit") or "")
    for row in reversed(result.get("rows") or []):
        if "bw_average" in row and factor is not None:
            return round(row["bw_average"] * factor, 4)
    return None
