"""roles/ib_subnet_manager/files/policy-rc.d: the answer it gives while OpenSM is installed.

Debian's opensm postinst asks it twice (init-system-helpers 1.65/1.69, as read in the
bookworm and trixie packages): `deb-systemd-invoke start opensm.service` calls
`policy-rc.d opensm.service start`, and `invoke-rc.d --skip-systemd-native opensm start`
calls `policy-rc.d [--quiet] opensm start <runlevel>`. 101 is "action forbidden by
policy"; 0 lets the start go ahead (both helpers treat 0 and 104 alike).
"""

from __future__ import annotations

import os
import subprocess

import pytest
import yaml
from conftest import ROLES_DIR

ROLE = ROLES_DIR / "ib_subnet_manager"
SCRIPT = ROLE / "files" / "policy-rc.d"


def answer(*args: str) -> int:
    return subprocess.run(["/bin/sh", str(SCRIPT), *args], check=False).returncode


@pytest.mark.parametrize(
    "args",
    [
        ("opensm.service", "start"),
        ("opensm.service", "restart"),
        ("opensm", "start", "5"),
        ("--quiet", "opensm", "start", "5"),
        ("opensm@0x0002c90000001011.service", "start"),
    ],
)
def test_opensm_may_not_start(args):
    assert answer(*args) == 101


@pytest.mark.parametrize(
    "args",
    [
        ("ssh.service", "start"),
        ("ibacm", "start", "5"),
        ("--quiet", "rdma-ndd.service", "restart"),
        ("opensmd", "start"),
        (),
    ],
)
def test_other_services_may(args):
    assert answer(*args) == 0


def test_the_role_recognises_its_own_file():
    marker = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())[
        "__ib_subnet_manager_policy_marker"
    ]
    assert marker in SCRIPT.read_text()
    assert SCRIPT.read_text().startswith("#!/bin/sh\n")
    assert os.access(SCRIPT, os.X_OK)
