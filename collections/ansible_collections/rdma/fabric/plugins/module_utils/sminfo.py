# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse `sminfo` (infiniband-diags) output.

    sminfo: sm lid 37 sm guid 0x7cfe90030016aef1, activity count 4484381 priority 14 ...
        ... state 3 SMINFO_MASTER          (one line, wrapped here)
    sminfo: sm lid 0x1 sm guid 0x2c9010b7c2ae1, activity count 20 priority 1
    sminfo: iberror: failed: query

Old releases print the LID in hex and no state; a mail client may wrap the line, so
the whole text is searched, not one line. SM states: 0 not active, 1 discovering,
2 standby, 3 master.
"""

from __future__ import annotations

import re

from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid

SM_STATES = {0: "NOTACT", 1: "DISCOVER", 2: "STANDBY", 3: "MASTER"}

_SMINFO_RE = re.compile(
    r"sm lid\s+(?P<lid>0x[0-9a-fA-F]+|[0-9]+)\s+sm guid\s+(?P<guid>0x[0-9a-fA-F]+),?\s+"
    r"activity count\s+(?P<activity>[0-9]+)\s+priority\s+(?P<priority>[0-9]+)"
    r"(?:\s+state\s+(?P<state>[0-9]+)(?:\s+SMINFO_(?P<name>[A-Z_]+))?)?"
)
_ERROR_RE = re.compile(r"iberror:\s*(?P<error>.*)$", re.MULTILINE)


def parse_sminfo(text):
    """{'lid', 'guid', 'activity_count', 'priority', 'state', 'state_name', 'error'}.

    Values are None when sminfo did not report them; `error` holds an iberror message.
    """
    text = text or ""
    joined = " ".join(line.strip(" >") for line in text.splitlines())
    match = _SMINFO_RE.search(joined)
    error = _ERROR_RE.search(text)
    if not match:
        return {
            "lid": None,
            "guid": None,
            "activity_count": None,
            "priority": None,
            "state": None,
            "state_name": None,
            "error": error["error"].strip() if error else (text.strip() or None),
        }
    state = int(match["state"]) if match["state"] is not None else None
    return {
        "lid": int(match["lid"], 0),
        "guid": normalize_guid(match["guid"]),
        "activity_count": int(match["activity"]),
        "priority": int(match["priority"]),
        "state": state,
        "state_name": match["name"] or SM_STATES.get(state),
        "error": None,
    }
