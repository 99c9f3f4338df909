# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Partitions as PKeys of NVIDIA UFM Enterprise's REST API.

Input: the partition records ib_subnet_manager writes partitions.conf from for OpenSM
(module_utils/opensm.py normalize_partitions), so UFM gets the same partitions.

API, from "NVIDIA UFM Enterprise REST API Guide v6.19.3", PKey GUIDs Rest API
(https://docs.nvidia.com/networking/display/ufmenterpriserestapiv6193/PKey+GUIDs+Rest+API):
- GET  /ufmRest/resources/pkeys?guids_data=true   every PKey, as
       {"0x7fff": {"partition": "management", "ip_over_ib": true,
                   "guids": [{"guid": "...", "membership": "full", "index0": false}]}, ...}
- POST /ufmRest/resources/pkeys   {"pkey", "guids", "memberships", "ip_over_ib", "index0"}:
       adds GUIDs to a PKey (creating it); a GUID is 16-20 hex digits, pkey "0x1"-"0x7ffe"
- PUT  /ufmRest/resources/pkeys   same body: sets the PKey's GUIDs (replaces the list)
- PUT  /ufmRest/resources/pkeys/qos_conf   {"pkey", "mtu_limit", "service_level",
       "rate_limit"} ("Update QoS for PKey"); GET ...&qos_conf=true returns the three per
       PKey. POST pkeys/add takes them too ("optional and take the default": the guide's
       example 2, 0, 2.5). mtu_limit is the IB MTU enum (OpenSM's mtu=), service_level
       the SL, rate_limit in Gb/s: OpenSM's rate= is the PathRecord rate enum, converted
       with IB_PATH_RECORD_RATE_* (include/iba/ib_types.h).
Basic authentication (REST API Complementary Information). The default PKey 0x7fff is
UFM's management PKey ("Management key 0x7fff with Read permissions only", UFM
Enterprise User Manual, PKeys Window): left to UFM. PKeys the inventory lacks are left
alone (UFM may serve other tenants). A partition's mtu, rate and sl go to UFM; a
partition without any of them leaves UFM's QoS for that PKey as it is, and one that sets
some sends UFM's current values (else its defaults) for the others.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

PKEYS_PATH = "/ufmRest/resources/pkeys"
QOS_PATH = PKEYS_PATH + "/qos_conf"
QOS_DEFAULTS = {"mtu_limit": 2, "service_level": 0, "rate_limit": 2.5}
# IB_PATH_RECORD_RATE_<Gb/s> = enum (include/iba/ib_types.h, 3.3.24).
RATE_GBPS = {
    2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56,
    13: 112, 14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400,
    22: 600, 23: 800, 24: 1200,
}  # fmt: skip
MANAGEMENT_PKEY = 0x7FFF
MEMBERSHIPS = ("full", "limited")


def _pkey(text):
    try:
        return int(str(text), 16)
    except ValueError:
        return None


def _guid(value):
    guid = normalize_guid(value)
    return guid[2:] if guid else None


def ufm_errors(records):
    """What UFM's PKey API cannot take of the partitions."""
    errors = []
    for index, rec in enumerate(records or []):
        if rec["pkey"] == MANAGEMENT_PKEY:
            continue
        where = f"ib_subnet_manager_partitions[{index}] ({rec['name']})"
        for member in rec["members"]:
            if _guid(member["guid"]) is None:
                errors.append(f"{where}: member {member['guid']} is not a port GUID, all UFM takes")
            kind = member["membership"] or rec.get("defmember") or "limited"
            if kind not in MEMBERSHIPS:
                errors.append(
                    f"{where}: membership of {member['guid']} in UFM must be full or limited"
                )
    return errors


def wanted(records):
    """{pkey int: {"ip_over_ib": bool, "members": {guid: membership}}}, 0x7fff left out."""
    out = {}
    for rec in records or []:
        if rec["pkey"] == MANAGEMENT_PKEY:
            continue
        members = {
            _guid(m["guid"]): m["membership"] or rec.get("defmember") or "limited"
            for m in rec["members"]
        }
        out[rec["pkey"]] = {"ip_over_ib": bool(rec.get("ipoib")), "members": members}
        qos = {
            "mtu_limit": rec.get("mtu"),
            "service_level": rec.get("sl"),
            "rate_limit": RATE_GBPS.get(rec.get("rate")) if rec.get("rate") else None,
        }
        qos = {field: value for field, value in qos.items() if value is not None}
        if qos:
            out[rec["pkey"]]["qos"] = qos
    return out


def _qos(entry):
    """The QoS fields of a GET entry (with qos_conf=true), numbers as numbers."""
    qos = {}
    for field in QOS_DEFAULTS:
        value = entry.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            qos[field] = float(value) if field == "rate_limit" else int(value)
    return qos


def parse_pkeys(data):
    """The GET answer -> {pkey int: {"ip_over_ib", "members"}}."""
    out = {}
    for key, entry in (data or {}).items():
        pkey = _pkey(key)
        if pkey is None or not isinstance(entry, dict):
            continue
        members = {}
        for port in entry.get("guids") or []:
            guid = _guid(port.get("guid"))
            if guid:
                members[guid] = str(port.get("membership") or "full").lower()
        out[pkey] = {
            "ip_over_ib": bool(entry.get("ip_over_ib")),
            "members": members,
            "qos": _qos(entry),
        }
    return out


def requests(data, records):
    """REST requests ({method, path, body}) that bring UFM's PKeys to the records.

    GUIDs first (creating a PKey), then its QoS (qos_conf needs the PKey to exist).
    """
    have = parse_pkeys(data)
    out = []
    qos_out = []
    for pkey, want in sorted(wanted(records).items()):
        now = have.get(pkey, {})
        if (now.get("ip_over_ib"), now.get("members")) != (want["ip_over_ib"], want["members"]):
            guids = sorted(want["members"])
            body = {
                "pkey": f"0x{pkey:x}",
                "guids": guids,
                "memberships": [want["members"][g] for g in guids],
                "ip_over_ib": want["ip_over_ib"],
                "index0": False,
            }
            method = "PUT" if pkey in have else "POST"
            out.append({"method": method, "path": PKEYS_PATH, "body": body})
        if "qos" in want:
            current = {**QOS_DEFAULTS, **now.get("qos", {})}
            target = {**current, **want["qos"]}
            if any(now.get("qos", {}).get(f) != target[f] for f in want["qos"]) or (
                pkey not in have
            ):
                body = {"pkey": f"0x{pkey:x}", **target}
                qos_out.append({"method": "PUT", "path": QOS_PATH, "body": body})
    return out + qos_out
