"""ib_subnet_manager's check.yml never asks sminfo/saquery without -C/-P for a named port.

On a multi-port host (one subnet per rail) a diag without -C/-P asks through the first
port umad finds: another subnet's SM. When the expected port GUID is not among ibstat's
ports the check used to drop -C/-P and ask anyway; it must fail naming the GUID and
the ports there are. ibstat is a stand-in printing tests/fixtures/ibsim_ibstat.txt
(captured from ibsim, port GUID 0x0002c90000001003); sminfo and saquery stand-ins
record their arguments.
"""

from __future__ import annotations

from pathlib import Path

from role_play import recap

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ibsim_ibstat.txt"

PLAY = """\
- name: Check the subnet manager through a port this host lacks
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Run the check
      ansible.builtin.include_role:
        name: rdma.fabric.ib_subnet_manager
        tasks_from: check.yml
      vars:
        ib_subnet_manager_check_expect:
          port_guid: "0x0002c90000009999"
          master_guid: null
          master_priority: null
          priority: null
          partitions: []
        ib_subnet_manager_check_retries: 0
        ib_subnet_manager_check_delay: 0
        ib_subnet_manager_diag_environment:
          PATH: "BIN:/usr/bin:/bin"
"""


def test_unknown_port_fails_before_any_diag_without_port(run_playbook, tmp_path):
    fakebin = tmp_path / "bin"
    fakebin.mkdir()
    calls = tmp_path / "calls"
    (fakebin / "ibstat").write_text(f"#!/bin/sh\ncat {FIXTURE}\n")
    for tool in ("sminfo", "saquery"):
        (fakebin / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {calls}\n')
    for tool in fakebin.iterdir():
        tool.chmod(0o755)
    playbook = tmp_path / "check.yml"
    playbook.write_text(PLAY.replace("BIN", str(fakebin)))
    proc = run_playbook("-i", "localhost,", str(playbook))
    assert recap(proc)["failed"] == 1, proc.output
    assert "0x0002c90000009999" in proc.output and "0x0002c90000001003" in proc.output
    assert not calls.exists() or all("-C" in line for line in calls.read_text().splitlines())
