"""module_utils/mlnxos_sm.py: MLNX-OS subnet manager lines, parsed and compared.

Running configurations are shaped as MLNX-OS prints them (indented commands under
"##" comments); the commands are the MLNX-OS User Manual's (Subnet Manager chapter).
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.mlnxos_sm import (
    commands,
    parse_running,
    release_supported,
    wanted_lines,
)

RUNNING = """\
##
## Running database "initial"
## Generated at 2026/12/03 08:00:00 +0000
## Hostname: ib-spine-1
##

##
## Subnet Manager configuration
##
   ib smnode ib-spine-1 enable
   ib smnode ib-spine-1 sm-priority 14
   ib smnode ib-spine-2 enable
"""


def test_parse_running():
    assert parse_running(RUNNING, "ib-spine-1") == {"enabled": True, "priority": 14}
    assert parse_running(RUNNING, "ib-spine-2") == {"enabled": True, "priority": 0}
    assert parse_running(RUNNING, "ib-leaf-1") == {"enabled": False, "priority": 0}
    assert parse_running("", "ib-spine-1") == {"enabled": False, "priority": 0}


@pytest.mark.parametrize(
    ("node", "enabled", "priority", "expected"),
    [
        ("ib-spine-1", True, 14, []),
        ("ib-spine-1", True, 15, ["ib smnode ib-spine-1 sm-priority 15"]),
        ("ib-spine-1", False, 14, ["no ib smnode ib-spine-1 enable"]),
        ("ib-leaf-1", True, 7, ["ib smnode ib-leaf-1 sm-priority 7", "ib smnode ib-leaf-1 enable"]),
        ("ib-leaf-1", False, 0, []),
        ("ib-spine-2", True, 0, []),
    ],
)
def test_commands(node, enabled, priority, expected):
    assert commands(node, enabled, priority, RUNNING) == expected


def test_wanted_lines():
    assert wanted_lines("sw", True, 3) == ["ib smnode sw enable", "ib smnode sw sm-priority 3"]
    assert wanted_lines("sw", True, 0) == ["ib smnode sw enable"]
    assert wanted_lines("sw", False, 3) == []


@pytest.mark.parametrize(
    ("version", "ok"),
    [("3.11.2016", True), ("3.10", True), ("3.12.3006", True), ("3.6.8012", False), ("4.0", False),
     ("", False), ("onyx", False)],
)  # fmt: skip
def test_release_supported(version, ok):
    assert release_supported(version) is ok
