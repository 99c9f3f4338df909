# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `dkms status` output.

Lines look like (dkms 3.x, then 2.x):
  mlnx-ofed-kernel/24.10.OFED.24.10.1.1.4.1, 6.8.0-45-generic, x86_64: installed
  mlnx-ofed-kernel, 5.8, 5.15.0-56-generic, x86_64: installed
  mlnx-ofed-kernel/24.10, 6.8.0-45-generic, x86_64: built
  mlnx-ofed-kernel/24.10: added
and may carry a trailing warning in parentheses: "installed (WARNING! Diff between
built and installed module!)".
"""

from __future__ import annotations


def parse_dkms_status(text):
    records = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or ":" not in line:
            continue
        head, _sep, state = line.rpartition(":")
        fields = [field.strip() for field in head.split(",")]
        if "/" in fields[0]:
            module, _sep, version = fields[0].partition("/")
            rest = fields[1:]
        else:
            module = fields[0]
            version = fields[1] if len(fields) > 1 else None
            rest = fields[2:]
        state = state.strip()
        records.append(
            {
                "module": module,
                "version": version or None,
                "kernel": rest[0] if rest else None,
                "arch": rest[1] if len(rest) > 1 else None,
                "state": state.split(" ", 1)[0].split("(", 1)[0].strip(),
                "warning": state.partition("(")[2].rstrip(")").strip() or None,
            }
        )
    return records


def modules_for_kernel(records, kernel, state="installed"):
    """Module names with `state` for `kernel`."""
    return sorted({r["module"] for r in records if r["kernel"] == kernel and r["state"] == state})
