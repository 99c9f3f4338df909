# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `mstflint query` / `flint query` of a ConnectX device or a firmware image.

The output is one ``Key:   value`` line per field, keys at column 0 padded to a value
column; a field with several values (Rom Info) continues on indented lines. The same
layout is printed for a device (``-d DEV query``) and for an image file (``-i FILE
query``). Across generations:

  FS4/FS3 (ConnectX-4 and later)          FS2 (ConnectX-3)
  Image type:            FS4              Image type:            FS2
  FW Version:            22.39.2048       FW Version:            2.42.5000
  FW Version(Running):   22.36.1010       FW Version(Running):   2.40.5032
  FW Release Date:       29.1.2024        FW Release Date:       5.9.2017
  Part Number:           MCX623106AN-...  Product Version:       02.42.50.00
  Description:           ConnectX-6 Dx... Rom Info:              type=PXE version=...
  Product Version:       22.39.2048       Device ID:             4099
  Rom Info:              type=UEFI ...    Description:           Node Port1 Port2 Sys image
                         type=PXE ...     GUIDs:                 ffff... ffff...
  Description:           UID   GuidsNumber MACs:                      e41d2d... e41d2d...
  Base GUID:             b8cef6...  16    VSD:
  Base MAC:              b8cef6...  16    PSID:                  MT_1090111019
  Image VSD:             N/A
  Device VSD:            N/A
  PSID:                  MT_0000000359
  Security Attributes:   secure-fw

``FW Version`` is what is on the flash (what runs after the next boot or firmware
reset). ``FW Version(Running)`` appears only while the running firmware differs from it
(a burn waiting for its reboot). Some old flint builds print only the Running line.
Errors are ``-E- ...`` lines, warnings ``-W- ...``.
"""

from __future__ import annotations

import re

_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()/_.-]*?):(?:\s+(.*))?$")
# The "Description:" line that heads the GUID table rather than describing the card.
_TABLE_HEADER_RE = re.compile(r"^(UID\b|Node\b)")

KEYS = {
    "Image type": "image_type",
    "FW Version": "fw_version",
    "FW Version(Running)": "running_fw_version",
    "FW Release Date": "release_date",
    "Part Number": "part_number",
    "Product Version": "product_version",
    "Device ID": "device_id",
    "Base GUID": "base_guid",
    "Base MAC": "base_mac",
    "Image VSD": "image_vsd",
    "Device VSD": "device_vsd",
    "VSD": "vsd",
    "PSID": "psid",
    "Orig PSID": "orig_psid",
    "Security Attributes": "security_attributes",
}


class FlintParseError(ValueError):
    """The text is not a flint query (no PSID or no firmware version)."""


def parse_version(text):
    """'22.39.2048' -> (22, 39, 2048); raises ValueError for anything else."""
    parts = str(text).strip().split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts):
        raise ValueError(f"not a firmware version: {text!r}")
    return tuple(int(part) for part in parts)


def messages(text, level="E"):
    """The '-E- ...' (or '-W- ...', '-I- ...') lines of a flint output, without the tag."""
    tag = f"-{level}-"
    return [
        line.strip()[len(tag) :].strip()
        for line in text.splitlines()
        if line.strip().startswith(tag)
    ]


def parse_query(text):
    """A dict of the query's fields; raises FlintParseError when it has no PSID or version.

    Returns the named keys of KEYS (None when absent), plus ``description`` (the card's
    description, not the GUID table header), ``rom_info`` (list), ``guids`` and ``macs``
    (FS2 lists), ``next_boot_version`` (the flash version; the Running line's value when
    flint printed only that), ``reboot_pending`` and ``fields`` (every key as printed).
    """
    fields = {}
    rom_info = []
    last = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("-"):
            last = None
            continue
        if line[0].isspace():
            if last == "Rom Info":
                rom_info.append(line.strip())
            continue
        match = _FIELD_RE.match(line)
        if not match:
            last = None
            continue
        key, value = match.group(1).strip(), (match.group(2) or "").strip()
        last = key
        if key == "Rom Info":
            if value:
                rom_info.append(value)
            continue
        if key == "Description" and _TABLE_HEADER_RE.match(value):
            continue
        fields.setdefault(key, value)

    result = {name: fields.get(key) for key, name in KEYS.items()}
    result["description"] = fields.get("Description")
    result["rom_info"] = rom_info
    result["guids"] = fields.get("GUIDs", "").split()
    result["macs"] = fields.get("MACs", "").split()
    for name in ("base_guid", "base_mac"):
        if result[name]:
            result[name] = result[name].split()[0]
    flash = result["fw_version"] or result["running_fw_version"]
    if not result["psid"] or not flash:
        missing = [
            what for what, value in (("PSID", result["psid"]), ("FW Version", flash)) if not value
        ]
        detail = "; ".join(messages(text)) or " ".join(text.split())[:200] or "no output"
        raise FlintParseError(f"no {' and no '.join(missing)} in the query output ({detail})")
    result["next_boot_version"] = flash
    running = result["running_fw_version"]
    result["reboot_pending"] = bool(
        running and result["fw_version"] and running != result["fw_version"]
    )
    result["fields"] = fields
    return result
