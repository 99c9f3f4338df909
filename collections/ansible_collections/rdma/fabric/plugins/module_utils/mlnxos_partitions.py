# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""InfiniBand partitions of an MLNX-OS switch's embedded SM, as CLI lines.

Input: the partition records ib_subnet_manager writes partitions.conf from for OpenSM
(module_utils/opensm.py normalize_partitions), so a switch SM and an OpenSM host get
the same partitions from one definition.

Commands, from NVIDIA's documentation of the MLNX-OS SM partition CLI:
- "NVIDIA MLNX-GW User Manual for NVIDIA Skyway Appliance v8.2.2500 LTS", section
  Configuring Partition Keys (PKEYs), "Configuring partition keys on the subnet
  manager" (https://docs.nvidia.com/networking/display/NVIDIAMLNXGWUserManualforNVIDIASkywayAppliancev822500LTS/Configuring+Partition+Keys+(PKEYs)):
      ib partition <name> pkey 0x<pkey>
      ib partition <name> ipoib
      ib partition <name> member ALL type full
- "NVIDIA WinOF-2 Documentation v3.10.51000 LTS", InfiniBand Network, PKey Membership
  Types (https://docs.nvidia.com/networking/display/winof2v310LTS/InfiniBand+Network):
      ib partition <partition name> member all type full|limited
- "NVIDIA MLNX-OS User Manual v3.11.3002", SM Commands
  (https://docs.nvidia.com/networking/display/mlnxosv3113002/SM+Commands): the
  partition subcommands `defmember` and `member` (related commands of
  `ib sm allow-both-pkeys`); "The default partition is created by the SM
  unconditionally" (Subnet Manager chapter).
- `ib partition <name> mtu 4K` (the IPoIB broadcast group's MTU, 256 to 4K) and
  `no` forms resetting a parameter: MLNX-OS CLI convention ("The no form of the
  command resets the parameter to its default value"); member GUIDs written as eight
  colon-separated byte pairs, as MLNX-OS prints them.

Not found in that documentation, so refused in switch mode rather than guessed: a
partition rate or SL, the member keywords ALL_CAS/ALL_SWITCHES/ALL_ROUTERS/SELF and
"both" membership.

`show running-config` is taken to list partitions as the same commands (MLNX-OS prints
its non-default configuration as commands); a real switch must confirm it.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

DEFAULT_NAME = "Default"
MEMBERSHIPS = ("full", "limited")
# IBTA MTU enumeration (partitions.conf mtu=) -> MLNX-OS `ib partition <name> mtu`.
MTU_NAMES = {1: "256", 2: "512", 3: "1K", 4: "2K", 5: "4K"}
_LINE_RE = re.compile(r"^\s*(?P<no>no\s+)?ib\s+partition\s+(?P<name>\S+)(?:\s+(?P<rest>.*?))?\s*$")


def _cli_member(who):
    """'ALL' or a GUID in any form -> 'ALL' or aa:bb:cc:dd:ee:ff:00:11; None if neither."""
    if str(who).upper() == "ALL":
        return "ALL"
    guid = normalize_guid(who)
    if guid is None:
        return None
    digits = guid[2:]
    return ":".join(digits[i : i + 2] for i in range(0, 16, 2))


def switch_errors(records):
    """What the switch SM cannot take of the partitions (documented grammar only)."""
    errors = []
    for index, rec in enumerate(records or []):
        where = f"ib_subnet_manager_partitions[{index}] ({rec['name']})"
        for key in ("rate", "sl"):
            if rec.get(key) is not None:
                errors.append(
                    f"{where}: {key} has no documented MLNX-OS partition command; "
                    "leave it out for a switch SM"
                )
        if rec.get("defmember") not in (None, *MEMBERSHIPS):
            errors.append(f"{where}: defmember on a switch SM must be full or limited")
        for member in rec["members"]:
            if _cli_member(member["guid"]) is None:
                errors.append(
                    f"{where}: member {member['guid']} has no MLNX-OS form (ALL or a port GUID)"
                )
            if member["membership"] not in (None, *MEMBERSHIPS):
                errors.append(
                    f"{where}: membership of {member['guid']} on a switch SM "
                    "must be full or limited"
                )
    return errors


def _empty():
    return {"pkey": None, "defmember": None, "ipoib": False, "mtu": None, "members": {}}


def wanted_state(records):
    """{name: state} the records come down to on the switch."""
    state = {}
    for rec in records or []:
        entry = _empty()
        entry["pkey"] = rec["pkey"]
        entry["defmember"] = rec.get("defmember")
        entry["ipoib"] = bool(rec.get("ipoib"))
        if entry["ipoib"] and rec.get("mtu"):
            entry["mtu"] = MTU_NAMES.get(rec["mtu"])
        for member in rec["members"]:
            who = _cli_member(member["guid"])
            entry["members"][who] = member["membership"] or entry["defmember"] or "limited"
        state[rec["name"]] = entry
    return state


def _apply(entry, negate, words):
    if words[:1] == ["pkey"] and len(words) == 2:
        entry["pkey"] = None if negate else int(words[1], 16)
    elif words[:1] == ["defmember"]:
        entry["defmember"] = None if negate or len(words) < 2 else words[1].lower()
    elif words == ["ipoib"]:
        entry["ipoib"] = not negate
    elif words[:1] == ["mtu"]:
        entry["mtu"] = None if negate or len(words) < 2 else words[1].upper()
    elif words[:1] == ["member"] and len(words) >= 2:
        who = _cli_member(words[1])
        if negate:
            entry["members"].pop(who, None)
        elif len(words) == 4 and words[2] == "type":
            entry["members"][who] = words[3].lower()


def parse_running(text):
    """{name: state} of the `ib partition` lines of `show running-config`."""
    state = {}
    for line in (text or "").splitlines():
        match = _LINE_RE.match(line)
        if not match:
            continue
        name, words = match["name"], (match["rest"] or "").split()
        if match["no"] and not words:
            state.pop(name, None)
            continue
        words = [w for w in words if w != "force"]
        _apply(state.setdefault(name, _empty()), bool(match["no"]), words)
    return state


def _lines(name, entry):
    prefix = f"ib partition {name}"
    lines = [f"{prefix} pkey 0x{entry['pkey']:04x}"] if entry["pkey"] is not None else []
    if entry["defmember"]:
        lines.append(f"{prefix} defmember {entry['defmember']}")
    if entry["ipoib"]:
        lines.append(f"{prefix} ipoib")
    if entry["mtu"]:
        lines.append(f"{prefix} mtu {entry['mtu']}")
    lines += [f"{prefix} member {who} type {kind}" for who, kind in entry["members"].items()]
    return lines


def wanted_lines(records):
    """The running-config lines the records come down to, in the order they are sent."""
    return [line for name, entry in wanted_state(records).items() for line in _lines(name, entry)]


def _value_command(prefix, key, want, have):
    if want[key] and have[key] != want[key]:
        return [f"{prefix} {key} {want[key]}"]
    if not want[key] and have[key]:
        return [f"no {prefix} {key}"]
    return []


def _entry_commands(name, want, have):
    prefix = f"ib partition {name}"
    out = []
    if have["pkey"] != want["pkey"]:
        out.append(f"{prefix} pkey 0x{want['pkey']:04x}")
    out += _value_command(prefix, "defmember", want, have)
    if want["ipoib"] != have["ipoib"]:
        out.append(f"{prefix} ipoib" if want["ipoib"] else f"no {prefix} ipoib")
    out += _value_command(prefix, "mtu", want, have)
    for who, kind in want["members"].items():
        if have["members"].get(who) != kind:
            out.append(f"{prefix} member {who} type {kind}")
    # Removing a member of the default partition asks for a confirmation (an
    # interactive prompt): its extra members are left alone.
    if name != DEFAULT_NAME:
        gone = [who for who in have["members"] if who not in want["members"]]
        out += [f"no {prefix} member {who}" for who in gone]
    return out


def commands(records, running_text):
    """Config-mode commands that bring the switch's partitions from running to wanted.

    Partitions the records lack are removed, except the default one (the SM creates
    it unconditionally).
    """
    want, have = wanted_state(records), parse_running(running_text)
    out = []
    for name, entry in want.items():
        out += _entry_commands(name, entry, have.get(name, _empty()))
    out += [f"no ib partition {name}" for name in have if name not in want and name != DEFAULT_NAME]
    return out
