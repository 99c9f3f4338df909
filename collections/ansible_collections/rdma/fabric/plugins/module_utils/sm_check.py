# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What an InfiniBand port lacks from its subnet manager, whoever runs it.

Used where the SM is not this host's (OpenSM elsewhere, a switch, UFM): per port, the
master SM as `sminfo -C CA -P PORT` reports it and the port's P_Key table as the SA
gives it (`saquery PKTR LID`), against the partitions the inventory declares.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import expected_pkeys
from ansible_collections.rdma.fabric.plugins.module_utils.saquery import parse_saquery
from ansible_collections.rdma.fabric.plugins.module_utils.sminfo import parse_sminfo


def _pkeys(values):
    return " ".join(f"0x{pkey:04x}" for pkey in values) or "none"


def port_problems(port, sminfo_text, pktr_text, records):
    """Messages for one port ({ca, port, port_guid, lid}); [] when it has all it needs.

    `records` are normalized partitions (opensm.normalize_partitions); SELF members
    count for the master SM's port.
    """
    where = f"{port['ca']}/{port['port']} {port['port_guid']}"
    sm = parse_sminfo(sminfo_text)
    if sm["state"] != 3:
        said = (sminfo_text or "").strip() or "no answer"
        return [
            f"{where} ({port.get('state')}): no MASTER subnet manager answers through this "
            f"port (sminfo: {said})"
        ]
    wanted = expected_pkeys(records, port["port_guid"], sm["guid"])
    table = [
        pkey
        for record in parse_saquery(pktr_text)
        for pkey in record.get("pkey_table") or []
        if pkey != 0
    ]
    missing = [pkey for pkey in wanted if pkey not in table]
    if not missing:
        return []
    names = sorted({r["name"] for r in records if r["pkey"] in {p & 0x7FFF for p in missing}})
    return [
        f"{where}: the master SM {sm['guid']} has not given it P_Keys {_pkeys(missing)} "
        f"(partitions {', '.join(names)}; 0x8000 set: full member); its table: {_pkeys(table)}"
    ]


def ports_problems(results, records):
    """port_problems of each {port, sminfo, pktr} result, flattened."""
    problems = []
    for result in results or []:
        problems += port_problems(
            result["port"], result.get("sminfo", ""), result.get("pktr", ""), records
        )
    return problems
