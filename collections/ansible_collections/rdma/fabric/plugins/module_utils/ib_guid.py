# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand GUIDs in one spelling.

The tools print the same GUID three ways: ibstat and saquery zero-pad it
("0x0002c90000001003"), sminfo does not ("0x2c90000001003"), sysfs groups it
("0002:c900:0000:1003"). Every parser returns the ibstat spelling: 0x + 16 lowercase
hex digits.
"""

from __future__ import annotations

import re

_HEX_RE = re.compile(r"^(0x)?[0-9a-f]{1,16}$")


def normalize_guid(value):
    """'0x2C90000001003' / 2c90000001003 / '0002:c900:0000:1003' -> '0x0002c90000001003'.

    Returns None for None or text that is not a 64-bit GUID.
    """
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        text = str(value).strip().lower().replace(":", "")
        if not _HEX_RE.match(text):
            return None
        number = int(text, 16)
    if not 0 <= number < 1 << 64:
        return None
    return f"0x{number:016x}"
