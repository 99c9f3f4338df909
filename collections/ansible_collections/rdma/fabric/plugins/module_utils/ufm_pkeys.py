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
Basic authentication (REST API Complementary Information). The default PKey 0x7fff is
UFM's management PKey ("Management key 0x7fff with Read permissions only", UFM
Enterprise User Manual, PKeys Window): left to UFM. PKeys the inventory lacks are left
alone (UFM may serve other tenants); the QoS of a PKey (mtu, rate, sl) is UFM's.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

PKEYS_PATH = "/ufmRest/resources/pkeys"
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
    return out


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
        out[pkey] = {"ip_over_ib": bool(entry.get("ip_over_ib")), "members": members}
    return out


def requests(data, records):
    """REST requests ({method, path, body}) that bring UFM's PKeys to the records."""
    have = parse_pkeys(data)
    out = []
    for pkey, want in sorted(wanted(records).items()):
        if have.get(pkey) == want:
            continue
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
    return out
