# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse ``nvidia-smi topo -m`` and pick, per RDMA NIC, the GPU nearest to it.

The matrix: a header of device columns (GPU0.. then NIC0.. on R515+ drivers, or the
NIC names themselves, mlx5_0.., on older ones) followed by "CPU Affinity", "NUMA
Affinity" and (newer) "GPU NUMA ID"; one row per GPU and per NIC; cells are X (self),
NV# (NVLink, GPU to GPU), PIX, PXB, PHB, NODE, SYS. Then a "Legend:" and, on R515+, a
"NIC Legend:" mapping NIC0 to mlx5_0. Columns are separated by tabs, padded with
spaces: split on whitespace, never on positions. Drivers of R590 wrap the header row in
an underline escape (ESC[4m ... ESC[0m) even when stdout is a pipe: escapes are removed
before anything else.

For GPUDirect RDMA the best GPU for a NIC is the one it reaches through the fewest
PCIe hops: PIX (one switch) < PXB (several switches) < PHB (the host bridge) < NODE
(across host bridges of a NUMA node) < SYS (across sockets).
"""

from __future__ import annotations

import re

RANK = {"PIX": 0, "PXB": 1, "PHB": 2, "NODE": 3, "SYS": 4}
_AFFINITY = ("CPU", "NUMA", "GPU NUMA")
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


def parse_topo(text):
    """{gpus: [GPU0, ...], nics: {name: {GPUk: link}}}; nics keyed by RDMA device name."""
    lines = _ESCAPE.sub("", text or "").splitlines()
    header = None
    rows = {}
    legend = {}
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if header is None and fields[0].startswith("GPU") and fields[0][3:].isdigit():
            header = []
            for field in fields:
                if field in ("CPU", "NUMA"):
                    break
                header.append(field)
            continue
        match = _LEGEND.match(line)
        if match:
            legend[match.group(1)] = match.group(2)
            continue
        if header and fields[0] not in ("Legend:",) and len(fields) > len(header):
            rows[fields[0]] = dict(zip(header, fields[1 : len(header) + 1]))
    if header is None:
        return {"gpus": [], "nics": {}}
    gpus = [c for c in header if c.startswith("GPU") and c[3:].isdigit()]
    nics = {}
    for column in header:
        if column in gpus:
            continue
        row = rows.get(column) or {}
        name = legend.get(column, column)
        nics[name] = {gpu: row.get(gpu) for gpu in gpus}
    return {"gpus": gpus, "nics": nics}


def nearest_gpus(topo, nics=None):
    """{nic: {gpu: index, link: PIX|...}} for each NIC (or the given ones): the GPU with
    the best link; ties go to a GPU no earlier NIC took, then the lowest index."""
    taken = set()
    out = {}
    for nic in nics if nics is not None else sorted(topo["nics"]):
        links = topo["nics"].get(nic)
        if not links:
            continue
        ranked = [
            (RANK[link], gpu in taken, int(gpu[3:]), gpu, link)
            for gpu, link in links.items()
            if link in RANK
        ]
        if not ranked:
            continue
        _rank, _kind, index, gpu, link = min(ranked)
        taken.add(gpu)
        out[nic] = {"gpu": index, "link": link}
    return out
