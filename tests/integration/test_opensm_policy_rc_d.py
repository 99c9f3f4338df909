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
from pathlib import Path

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


def _install_tasks():
    tasks = []
    for task in yaml.safe_load((ROLE / "tasks" / "install.yml").read_text()):
        tasks.extend(task.get("block", [task]))
    return tasks


def test_a_first_installation_is_held_off_and_disabled_until_configured():
    """Debian's postinst enables opensm.service (policy-rc.d governs starts, not enabling).

    Before the package: /etc/default/opensm says PORTS=NONE (opensm.service's
    ExecCondition refuses it); right after: opensm.service disabled. service.yml enables.
    """
    tasks = _install_tasks()
    names = [task["name"] for task in tasks]
    hold = next(t for t in tasks if "PORTS=NONE" in str(t.get("ansible.builtin.copy", {})))
    apt = next(t for t in tasks if "ansible.builtin.apt" in t)
    disable = next(
        t for t in tasks if t.get("ansible.builtin.systemd_service", {}).get("enabled") is False
    )
    assert names.index(hold["name"]) < names.index(apt["name"]) < names.index(disable["name"])
    assert hold["ansible.builtin.copy"]["dest"] == "{{ __ib_subnet_manager_defaults_file }}"
    enable = yaml.safe_load((ROLE / "tasks" / "service.yml").read_text())[0]
    assert enable["ansible.builtin.systemd_service"]["enabled"] is True


@pytest.mark.skipif(
    not os.path.exists("/lib/systemd/system/opensm.service"), reason="Debian's opensm not here"
)
def test_debians_opensm_service_refuses_ports_none():
    """The package's own ExecCondition, run with PORTS=NONE, exits non-zero (no start)."""
    unit = Path("/lib/systemd/system/opensm.service").read_text()
    [condition] = [ln for ln in unit.splitlines() if ln.startswith("ExecCondition=")]
    argv = condition.split("=", 1)[1]
    assert argv.startswith("/bin/sh -c '") and argv.endswith("'")
    script = argv[len("/bin/sh -c '") : -1]
    env = dict(os.environ, PORTS="NONE")
    assert subprocess.run(["/bin/sh", "-c", script], env=env, check=False).returncode != 0
    env["PORTS"] = "ALL"
    assert subprocess.run(["/bin/sh", "-c", script], env=env, check=False).returncode == 0
