# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""OpenSM's own files: opensm.conf (read) and partitions.conf (checked, rendered).

opensm.conf is "key value" per line, "#" comments. What OpenSM re-reads on SIGHUP is
marked can_update in its option table (opensm_options.py, from opensm/osm_subnet.c
opt_tbl); everything else takes a restart. The files named by partition_config_file,
root_guid_file and cn_guid_file are re-read on every heavy sweep, so a change of their
content is a reload; a change of the path is a restart.

partitions.conf (man 5 partitions.conf, OpenSM 3.3):
    Name[=PKey][,ipoib][,mtu=N][,rate=N][,defmember=full|limited|both] : members ;
    member: GUID[=full|limited|both] | ALL | ALL_CAS | ALL_SWITCHES | ALL_ROUTERS | SELF
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.opensm_options import (
    is_reloadable,
    max_rate,
)

MEMBER_KEYWORDS = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
MEMBERSHIPS = ("full", "limited", "both")
DEFAULT_PKEY = 0x7FFF
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")


def parse_opensm_conf(text):
    """{'key': 'value'} of an opensm.conf; comments and blank lines are dropped."""
    options = {}
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _sep, value = line.partition(" ")
        options[key] = value.strip()
    return options


def restart_keys(old, new, version=None):
    """Keys whose change needs a restart, sorted; every key when there was no file.

    `version` is the installed OpenSM's (such as 3.3.23-2+b1); a key its option table
    lacks counts as restart-only, and so does a key removed from the file. Values
    compare as the text opensm.conf holds.
    """
    old = {k: str(v) for k, v in (old or {}).items()}
    new = {k: str(v) for k, v in (new or {}).items()}
    keys = set(old) | set(new)
    # A removed key takes a restart even when SIGHUP re-reads it: the rescan parses only
    # the lines present (osm_subn_rescan_conf_files), so the old value stays in force.
    return sorted(
        k
        for k in keys
        if old.get(k) != new.get(k) and (k not in new or not is_reloadable(k, version))
    )


def _pkey(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip(), 16 if str(value).strip().lower().startswith("0x") else 10)
    except ValueError:
        return None


def _member(entry):
    """A member as given (str 'GUID=full' / 'ALL', or dict guid/membership) -> dict."""
    if isinstance(entry, dict):
        who, membership = entry.get("guid"), entry.get("membership")
    elif isinstance(entry, int) and not isinstance(entry, bool):
        return entry, None
    else:
        who, _sep, membership = str(entry).partition("=")
    if isinstance(who, int) and not isinstance(who, bool):
        return who, (str(membership).strip().lower() or None) if membership else None
    who = str(who).strip() if who is not None else ""
    membership = (str(membership).strip().lower() or None) if membership else None
    return who, membership


# OpenSM reads a member GUID with strtoull(name, &end, 0) (osm_prtn_config.c,
# partition_add_port): 0x... is hex, a leading 0 octal, other digits decimal; GUID 0
# is "bad PortGUID", after which OpenSM drops the whole file for the default partition.
# The role writes every GUID 0x-prefixed, so what counts is what the inventory meant:
# digits alone are decimal as OpenSM reads them (a YAML integer reaches here as its
# decimal text), hex digits with letters or colons are the ibstat/sysfs spelling, and
# digits with a leading 0 (octal to OpenSM, hex to ibstat) are refused as ambiguous.
_DECIMAL_RE = re.compile(r"^[1-9][0-9]*$")
_LEADING_ZERO_DIGITS_RE = re.compile(r"^0[0-9]+$")
RESERVED_GUIDS = {
    0: "GUID 0, which OpenSM refuses ('bad PortGUID') and then keeps only the default partition",
    (1 << 64) - 1: "the all-ones GUID, which no port has (reserved)",
}


# An unquoted GUID with a leading 0 and no 8 or 9 (0002100000001003) is an octal
# integer to YAML 1.1: it arrives as a number below 2**40. No EUI-64 port GUID is that
# small (its top 24 bits are the vendor's OUI, 0x0002c9 for Mellanox), so such an
# integer is refused; quoted, the text is read by the rules above.
_OUI_FLOOR = 1 << 40


def member_guid(who):
    """A member's GUID as OpenSM reads it, in the ibstat spelling; None if not a GUID."""
    if isinstance(who, int) and not isinstance(who, bool):
        return normalize_guid(who)
    text = str(who).strip().lower()
    if _DECIMAL_RE.match(text):
        number = int(text)
        return f"0x{number:016x}" if number < 1 << 64 else None
    if _LEADING_ZERO_DIGITS_RE.match(text):
        return None
    return normalize_guid(text)


# Root and CN GUID files are read with strtoull(p, &e, 0) too (complib/cl_nodenamemap.c
# parse_node_map_wrap): every GUID the inventory gives follows the member rules.
inventory_guid = member_guid


def _member_guid_error(who):
    """Why `who` is no usable member GUID (None when it is one)."""
    text = str(who).strip().lower()
    if _LEADING_ZERO_DIGITS_RE.match(text) and not isinstance(who, int):
        return (
            f"member {who!r} is ambiguous: OpenSM reads digits with a leading 0 as octal, "
            "ibstat prints hex; write it 0x-prefixed"
        )
    guid = member_guid(who)
    if guid is None:
        return f"member {who!r} is not a port GUID nor one of {', '.join(MEMBER_KEYWORDS)}"
    reserved = RESERVED_GUIDS.get(int(guid, 16))
    if reserved:
        return f"member {who!r} is {reserved}"
    if isinstance(who, int) and not isinstance(who, bool) and who < _OUI_FLOOR:
        return (
            f"member {who!r} is a YAML integer below 2**40, which no port GUID is (an "
            f"unquoted GUID with a leading 0 is octal to YAML, here 0o{who:o}): quote it"
        )
    return None


def guid_errors(guids, variable):
    """Messages for GUIDs of an inventory list (root/CN GUIDs, a port GUID), named by variable."""
    errors = []
    for guid in guids or []:
        problem = _member_guid_error(guid)
        if problem and " is not a port GUID nor one of " in problem:
            problem = f"{guid!r} is not a GUID (0x and up to 16 hex digits, or decimal digits)"
        if problem:
            text = problem[len("member ") :] if problem.startswith("member ") else problem
            errors.append(f"{variable}: {text}")
    return errors


def partition_errors(partitions, version=None, qos=None, allow_both_pkeys=None):
    """Messages for each bad partition; [] when every one is good.

    With `qos` False a partition sl other than 0 is refused (OpenSM overrides it to 0);
    with `allow_both_pkeys` False the membership both is (OpenSM makes it full only).

    The highest rate is IB_MAX_RATE of the OpenSM `version` (opensm_options.max_rate).
    """
    errors = []
    seen_pkeys = {}
    seen_names = set()
    for index, part in enumerate(partitions or []):
        where = f"ib_subnet_manager_partitions[{index}]"
        if not isinstance(part, dict):
            errors.append(f"{where} must be a mapping with name, pkey and members")
            continue
        name = part.get("name")
        where = f"{where} ({name})" if name else where
        if not isinstance(name, str) or not _NAME_RE.match(name):
            errors.append(f"{where}: name must be letters, digits, '_', '.' or '-'")
        elif name in seen_names:
            errors.append(f"{where}: name {name} is used twice")
        else:
            seen_names.add(name)
        raw = part.get("pkey")
        shown = f"0x{raw:04x}" if isinstance(raw, int) and not isinstance(raw, bool) else repr(raw)
        pkey = _pkey(raw)
        if pkey is None or not 0x0001 <= pkey <= 0x7FFF:
            errors.append(
                f"{where}: pkey must be 0x0001-0x7fff (the full-membership bit 0x8000 is "
                f"set by the membership, not in the pkey); got {shown}"
            )
        elif pkey in seen_pkeys:
            errors.append(
                f"{where}: duplicate pkey 0x{pkey:04x}, already used by {seen_pkeys[pkey]}"
            )
        else:
            seen_pkeys[pkey] = name
        # A string "no" is true to Python's bool(): a flag must be a YAML boolean.
        if part.get("ipoib") is not None and not isinstance(part["ipoib"], bool):
            errors.append(f"{where}: ipoib must be true or false; got {part['ipoib']!r}")
        for key in ("defmember",):
            if part.get(key) is not None and str(part[key]).lower() not in MEMBERSHIPS:
                errors.append(f"{where}: {key} must be one of {', '.join(MEMBERSHIPS)}")
        for key, low, high in (("mtu", 1, 5), ("rate", 2, max_rate(version)), ("sl", 0, 15)):
            value = part.get(key)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
            ):
                limit = f" (IB_MAX_RATE of OpenSM {version or 'upstream'})" if key == "rate" else ""
                errors.append(
                    f"{where}: {key} must be an integer {low}-{high}{limit}; got {value!r}"
                )
        if qos is False and isinstance(part.get("sl"), int) and part["sl"] not in (0, False):
            errors.append(
                f"{where}: sl {part['sl']} needs ib_subnet_manager_qos: true (without QoS "
                "OpenSM overrides a partition's SL to 0)"
            )
        both = "membership both is full only unless ib_subnet_manager_extra_options sets "
        both += "allow_both_pkeys: true (OpenSM adds the limited P_Key only then)"
        if allow_both_pkeys is False and str(part.get("defmember") or "").lower() == "both":
            errors.append(f"{where}: defmember both: {both}")
        members = part.get("members")
        if not isinstance(members, list) or not members:
            errors.append(f"{where}: members must be a non-empty list")
            continue
        for entry in members:
            who, membership = _member(entry)
            problem = None if who in MEMBER_KEYWORDS else _member_guid_error(who)
            if problem:
                errors.append(f"{where}: {problem}")
            if membership is not None and membership not in MEMBERSHIPS:
                errors.append(
                    f"{where}: membership of {who} must be one of {', '.join(MEMBERSHIPS)}"
                )
            elif membership == "both" and allow_both_pkeys is False:
                errors.append(f"{where}: member {who}: {both}")
    if isinstance(partitions, list) and not errors and DEFAULT_PKEY not in seen_pkeys:
        errors.append(
            "ib_subnet_manager_partitions has no default partition (pkey 0x7fff), "
            "which every port needs for SA access: add {name: Default, pkey: 0x7fff, "
            "members: [ALL=full]}"
        )
    return errors


def normalize_partitions(partitions, ipoib_mtu=None):
    """Good partitions (see partition_errors) -> records the templates and checks use.

    An IPoIB partition without mtu gets `ipoib_mtu` (OpenSM's own default for the
    broadcast group is 4, 2048 bytes: OSM_DEFAULT_MGRP_MTU in include/opensm/osm_base.h).
    """
    records = []
    for part in partitions or []:
        members = []
        for entry in part["members"]:
            who, membership = _member(entry)
            members.append(
                {
                    "guid": who if who in MEMBER_KEYWORDS else member_guid(who),
                    "membership": membership,
                }
            )
        pkey = _pkey(part["pkey"])
        records.append(
            {
                "name": part["name"],
                "pkey": pkey,
                "pkey_hex": f"0x{pkey:04x}",
                "ipoib": bool(part.get("ipoib", False)),
                "mtu": part.get("mtu") or (ipoib_mtu if part.get("ipoib") else None),
                "rate": part.get("rate"),
                "sl": part.get("sl"),
                "defmember": str(part["defmember"]).lower() if part.get("defmember") else None,
                "members": members,
            }
        )
    return records


# OpenSM reads partitions.conf with fgets(line, sizeof(line) - 1) into char line[4096]
# (osm_prtn_config.c, osm_prtn_config_parse_file): a longer line is cut at 4,094
# bytes and its rest read as the next line, which splits a GUID (a wrong member, or a
# "bad PortGUID" parse error after which OpenSM keeps only the default partition). A
# partition is open until its ';' (the parser keeps the half-read definition across
# lines and skips the header for the continuation), so members may go on any number
# of lines. A line that fits stays whole; a longer one is written as the header line
# and member lines of at most PARTITION_MEMBER_WIDTH bytes, each ending with ','
# (the empty token after it is no member: partition_add_port returns 0 for it).
PARTITION_LINE_MAX = 4000
PARTITION_MEMBER_WIDTH = 100


def partition_line(record):
    """partitions.conf text for a normalized record: one line, or more when long.

    Every line is shorter than PARTITION_LINE_MAX bytes; lines are joined with '\n'.
    """
    flags = [f"{record['name']}={record['pkey_hex']}"]
    if record["ipoib"]:
        flags.append("ipoib")
    for key in ("mtu", "rate", "sl", "defmember"):
        if record.get(key) is not None:
            flags.append(f"{key}={record[key]}")
    members = [
        m["guid"] + (f"={m['membership']}" if m["membership"] else "") for m in record["members"]
    ]
    header = ", ".join(flags)
    whole = f"{header} : {', '.join(members)} ;"
    if len(whole.encode()) < PARTITION_LINE_MAX:
        return whole
    lines = [f"{header} :"]
    current = []
    for member in members:
        candidate = ", ".join([*current, member]) + ","
        if current and len(candidate) + 4 > PARTITION_MEMBER_WIDTH:
            lines.append("    " + ", ".join(current) + ",")
            current = []
        current.append(member)
    lines.append("    " + ", ".join(current) + " ;")
    return "\n".join(lines)


def expected_pkeys(records, port_guid, master_guid=None, node_type="CA"):
    """P_Key table entries the SM should give `port_guid`, sorted: pkey | 0x8000 for full.

    SELF is the master SM's port. Membership: the member's own, else the partition's
    defmember, else limited (OpenSM's default). "both" counts as full.
    """
    port_guid = normalize_guid(port_guid)
    wanted = {}
    for record in records:
        for member in record["members"]:
            who = member["guid"]
            if (
                who == port_guid
                or who == "ALL"
                or (who == "ALL_CAS" and node_type == "CA")
                or (who == "SELF" and port_guid == normalize_guid(master_guid))
            ):
                membership = member["membership"] or record["defmember"] or "limited"
                full = membership in ("full", "both")
                wanted[record["pkey"]] = wanted.get(record["pkey"], False) or full
    return sorted(pkey | 0x8000 if full else pkey for pkey, full in wanted.items())


# Unit layouts an opensm package can ship (`systemctl list-unit-files 'opensm*'`):
# Debian's opensm.service + opensm@<port GUID>.service (what this role manages), or the
# MLNX_OFED-style opensmd (an /etc/init.d/opensmd script, listed by systemd as the
# generated opensmd.service, or a native opensmd.service).
def service_layout(unit_files_text):
    """'instances', 'opensmd' or 'unknown' from `systemctl list-unit-files` lines."""
    units = {line.split()[0] for line in (unit_files_text or "").splitlines() if line.split()}
    if "opensm@.service" in units:
        return "instances"
    if "opensmd.service" in units:
        return "opensmd"
    return "unknown"


# Several OpenSM instances on one host, one per port, for ports on different subnets
# (one subnet per rail). Debian's opensm@<GUID>.service runs one OpenSM per port GUID;
# each instance needs its own opensm.conf, partitions.conf, log and cache: OpenSM keeps
# guid2lid and its SA dump under OSM_CACHE_DIR (osm_db_files.c, default
# /var/cache/opensm), which two instances must not share.
def port_instance_errors(ports, version=None, variable="ib_subnet_manager_ports"):
    """Messages for a list of {port_guid, subnet, priority, partitions}; [] when good."""
    errors = []
    if not isinstance(ports, list):
        return [f"{variable} must be a list of ports (port_guid, subnet, priority, partitions)"]
    guids, subnets = {}, {}
    for index, port in enumerate(ports):
        where = f"{variable}[{index}]"
        if not isinstance(port, dict):
            errors.append(f"{where} must be a mapping with port_guid, subnet, priority")
            continue
        bad = guid_errors([port.get("port_guid")], "port_guid")
        errors.extend(f"{where}: {problem}" for problem in bad)
        guid = None if bad else inventory_guid(port.get("port_guid"))
        if guid in guids:
            errors.append(f"{where}: port {guid} is listed twice (ports[{guids[guid]}])")
        elif guid:
            guids[guid] = index
        subnet = port.get("subnet")
        if not isinstance(subnet, str) or not subnet:
            errors.append(f"{where}: subnet must be named (one instance per subnet and host)")
        elif subnet in subnets:
            errors.append(
                f"{where}: subnet {subnet} has an instance already (ports[{subnets[subnet]}]): "
                "two SMs of one host on one subnet only compete"
            )
        else:
            subnets[subnet] = index
        priority = port.get("priority")
        if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 15:
            errors.append(f"{where}: priority must be 0-15; got {priority!r}")
        if port.get("partitions") is not None:
            label = f"{where} ({guid or port.get('port_guid')})"
            errors.extend(
                f"{label}: {problem}" for problem in partition_errors(port["partitions"], version)
            )
    return errors


def port_instances(ports, conf_dir="/etc/opensm", ipoib_mtu=None, partitions=None):
    """Good ports (see port_instance_errors) -> one record per OpenSM instance.

    A port without partitions gets `partitions` (the host's ib_subnet_manager_partitions).
    """
    out = []
    for port in ports or []:
        guid = inventory_guid(port["port_guid"])
        parts = port.get("partitions")
        out.append(
            {
                "port_guid": guid,
                "subnet": port["subnet"],
                "priority": int(port["priority"]),
                "unit": f"opensm@{guid}.service",
                "conf_file": f"{conf_dir}/opensm-{guid}.conf",
                "partitions_file": f"{conf_dir}/partitions-{guid}.conf",
                "log_file": f"/var/log/opensm-{guid}.log",
                "cache_dir": f"/var/cache/opensm/{guid}",
                "partitions": normalize_partitions(
                    parts if parts is not None else partitions, ipoib_mtu
                ),
            }
        )
    return out


def instance_options(instance, options):
    """opensm.conf of one instance: the host's `options` with the instance's own keys."""
    return {
        **(options or {}),
        "guid": instance["port_guid"],
        "sm_priority": str(instance["priority"]),
        "partition_config_file": instance["partitions_file"],
        "log_file": instance["log_file"],
        "dump_files_dir": instance["cache_dir"],
    }
