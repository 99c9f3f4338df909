# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse perftest output (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat): the one parser.

perftest prints a title line ("RDMA_Write BW Test"), a settings block of "Key : value"
pairs (two per line, tab or space separated), the local/remote address lines, then a
result table:
   #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
   #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ...
With --report_gbits the unit is Gb/sec (10^9 bit/s); without it MB/sec (up to 24.04) or
MiB/sec (later), both 2^20 bytes/s: bandwidth is always returned in Gb/s. With -D the
peak column prints 0.00. Warnings go to stderr and can land inside the table, even
inside a row: a row cut short is completed by the numbers that follow the warning.
No reliance on --out_json (its validity has varied by version). Error lines ("Couldn't
connect", "Failed to modify QP", "Completion with error", "Did not detect devices",
...) make the result not ok. "Correlation coefficient r^2: ... < 0.9" (perftest could not
calibrate its cycle counter, seen on loaded VMs: every rate prints 0) is kept apart, in
clock_error: the iteration counts are still right.
"""

from __future__ import annotations

import re

_COLUMN = re.compile(r"#\w+|[A-Za-z0-9%.][^\[#]*?\[[^\]]*\]")
_SETTING = re.compile(
    r"([A-Za-z][A-Za-z0-9 .*/_-]*?)\s*:\s*(\S[^:]*?)(?=\s{2,}[A-Za-z][A-Za-z0-9 .*/_-]*?\s*:|$)"
)
_ERROR = re.compile(
    r"couldn't|could not|failed|unable|error|not supported|no such|did not detect|"
    r"invalid|cannot|can.t|not found|timed out|no device|state is down|unrecognized option|"
    r"requires an argument|without cuda|mismatch",
    re.IGNORECASE,
)
# Lines that match _ERROR but are not a failure of the test.
_NOT_ERROR = re.compile(
    r"warning|^libibverbs:|^\*|waiting for client|^\s*wr_id|conflicting cpu frequency",
    re.IGNORECASE,
)
# perftest prints inf and -nan where it has no sample (a latency server side).
# perftest times with the CPU cycle counter; when it cannot calibrate it (a loaded VM)
# it prints this and reports 0 for every rate, while the iteration counts stay right.
# perftest prints this after its parser refused the options; the reason is the line
# before it (the parser's own message), which is kept even when it matches no pattern.
_PARSER_EXIT = re.compile(r"parser function exited with error", re.IGNORECASE)
_CLOCK = re.compile(r"Correlation coefficient r\^2", re.IGNORECASE)
_NUMBER = re.compile(r"^-?([0-9]+(\.[0-9]+)?|inf|nan)$")
_TITLE = re.compile(r"^\S.*\b(BW|Latency)\s+Test$")

# perftest's MB/sec and MiB/sec are both 2^20 bytes per second.
_TO_GBPS = {"Gb/sec": 1.0, "MB/sec": 8 * 2**20 / 1e9, "MiB/sec": 8 * 2**20 / 1e9}

_BW_COLUMNS = {
    "bytes": "bytes",
    "iterations": "iterations",
    "bw peak": "bw_peak_gbps",
    "bw average": "bw_average_gbps",
    "msgrate": "msg_rate_mpps",
}
_LAT_COLUMNS = {
    "bytes": "bytes",
    "iterations": "iterations",
    "t_min": "t_min_us",
    "t_max": "t_max_us",
    "t_typical": "t_typical_us",
    "t_avg": "t_avg_us",
    "t_stdev": "t_stdev_us",
    "99% percentile": "p99_us",
    "99.9% percentile": "p999_us",
}


def _number(text):
    if text.lstrip("-") in ("inf", "nan"):
        return None
    return float(text) if "." in text else int(text)


def _int_or_none(text):
    match = re.match(r"\s*([0-9]+)", text or "")
    return int(match.group(1)) if match else None


def _header(line):
    """[(key, factor)] for a table header; factor converts bandwidth to Gb/s."""
    columns = []
    for column in _COLUMN.findall(line):
        name, _sep, unit = column.partition("[")
        name = name.strip().lstrip("#").lower()
        unit = unit.rstrip("]")
        key = _BW_COLUMNS.get(name) or _LAT_COLUMNS.get(name) or re.sub(r"\W+", "_", name)
        factor = _TO_GBPS.get(unit) if key.startswith("bw_") else None
        columns.append((key, factor, unit))
    return columns


def _row(columns, fields):
    row = {}
    for (key, factor, _unused), value in zip(columns, fields):
        number = _number(value)
        if factor is not None and number is not None:
            number = round(number * factor, 9)
        row[key] = number
    return row


def _numeric_prefix(fields):
    prefix = []
    for field in fields:
        if not _NUMBER.match(field):
            break
        prefix.append(field)
    return prefix


def parse_perftest(text):
    """The perftest_parse interface: see the filter's documentation."""
    result = {
        "ok": False,
        "error": None,
        "test": None,
        "kind": None,
        "bidirectional": False,
        "device": None,
        "link_type": None,
        "gid_index": None,
        "mtu": None,
        "qps": None,
        "connection_type": None,
        "unit": None,
        "settings": {},
        "rows": [],
        "errors": [],
        "clock_error": None,
    }
    columns = None
    pending = []  # numbers of a row cut short by a warning
    previous = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or set(line) <= {"-", "*"}:
            continue
        before, previous = previous, line
        if _PARSER_EXIT.search(line):
            if before and before not in result["errors"]:
                result["errors"].append(before)
            result["errors"].append(line)
            continue
        if line.startswith("#bytes"):
            if columns is None:
                columns = _header(line)
                units = {unit for key, _unused, unit in columns if key.startswith("bw_")}
                result["unit"] = units.pop() if len(units) == 1 else None
            continue
        fields = line.split()
        if columns and fields and _NUMBER.match(fields[0]):
            numbers = _numeric_prefix(fields)
            if pending and len(numbers) >= len(columns):
                result["rows"].append(_row(columns, pending))  # a row that stayed short
                pending = []
            numbers = pending + numbers
            pending = []
            if len(numbers) >= len(columns):
                result["rows"].append(_row(columns, numbers))
            else:
                pending = numbers  # cut short: by a warning, or by the end of the output
            continue
        if columns and pending and fields and _NUMBER.match(fields[-1]):
            # "<warning text> 97.48 0.185934": the end of a row cut short.
            tail = []
            for field in reversed(fields):
                if not _NUMBER.match(field):
                    break
                tail.insert(0, field)
            result["rows"].append(_row(columns, pending + tail))
            pending = []
            continue
        if result["test"] is None and _TITLE.match(line):
            result["test"] = line
            continue
        if _CLOCK.search(line):
            result["clock_error"] = line
            continue
        if _ERROR.search(line) and not _NOT_ERROR.search(line):
            result["errors"].append(line)
            continue
        if (
            ":" in line
            and columns is None
            and not line.startswith(("local address", "remote address", "GID:"))
        ):
            for key, value in _SETTING.findall(line):
                result["settings"].setdefault(key.strip(), value.strip())
    if pending:
        result["rows"].append(_row(columns, pending))
    settings = result["settings"]
    title = result["test"] or ""
    result["kind"] = "lat" if "Latency" in title else ("bw" if " BW " in f" {title} " else None)
    result["bidirectional"] = "Bidirectional" in title
    result["device"] = settings.get("Device")
    result["link_type"] = settings.get("Link type")
    result["gid_index"] = _int_or_none(settings.get("GID index"))
    result["mtu"] = _int_or_none(settings.get("Mtu"))
    result["qps"] = _int_or_none(settings.get("Number of qps"))
    result["connection_type"] = settings.get("Connection type")
    complete = [row for row in result["rows"] if len(row) == len(columns or [])]
    if result["errors"]:
        result["error"] = "; ".join(result["errors"])
    elif not complete:
        result["error"] = "perftest printed no complete result row"
    result["ok"] = result["error"] is None
    return result


def bw_average_gbps(result):
    """Average bandwidth in Gb/s of the last row that has one (the largest size), or None."""
    for row in reversed(result.get("rows") or []):
        if "bw_average_gbps" in row:
            return row["bw_average_gbps"]
    return None


def lat_typical_us(result):
    """Typical latency in microseconds of the last latency row, or None."""
    for row in reversed(result.get("rows") or []):
        if "t_typical_us" in row:
            return row["t_typical_us"]
    return None


def parse_version(text):
    """'Version: 6.15' (ib_write_bw --version) -> '6.15'; None when absent."""
    match = re.search(r"version:?\s*([0-9][0-9A-Za-z._-]*)", text or "", re.IGNORECASE)
    return match.group(1) if match else None
