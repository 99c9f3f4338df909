# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""terminal/mlnxos.py: which answers network_cli treats as errors.

MLNX-OS prints every CLI error as a line starting with "%" (NVIDIA MLNX-OS User Manual,
CLI overview; the stand-in tests/standins/mlnxos_cli.py answers so).
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.terminal.mlnxos import TerminalModule


def is_error(answer: bytes) -> bool:
    return any(regex.search(answer) for regex in TerminalModule.terminal_stderr_re)


@pytest.mark.parametrize(
    "answer",
    [
        b'% Unrecognized command "ib smnod".\r\nType "?" for help.',
        b'% Ambiguous command "ib s".',
        b"ib partition p1 pkey 0x10\r\n% Partition p1 is in use by the SM",
        b"  % Error: removing a member of the default partition needs confirmation.",
        b"%Invalid input",
    ],
)
def test_any_percent_line_is_an_error(answer):
    assert is_error(answer)


@pytest.mark.parametrize(
    "answer",
    [
        b"##\r\n## Subnet Manager configuration\r\n##\r\n   ib smnode sw1 enable",
        b"CPU load averages: 5% 3% 1%",
        b"",
    ],
)
def test_other_answers_are_not(answer):
    assert not is_error(answer)
