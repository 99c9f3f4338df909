"""ib_subnet_manager_ports: every listed port must be an InfiniBand port of the host.

port.yml runs against an ibstat stand-in printing tests/fixtures/ibsim_ibstat.txt
(captured from ibsim: one CA, port GUID 0x0002c90000001003). A listed GUID the host
lacks fails naming the variable, the GUID and the ports there are.
"""

from __future__ import annotations

from pathlib import Path

from role_play import recap

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ibsim_ibstat.txt"

PLAY = """\
- name: Resolve the ports of ib_subnet_manager_ports
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Run the port resolution
      ansible.builtin.include_role:
        name: rdma.fabric.ib_subnet_manager
        tasks_from: port.yml
      vars:
        ib_subnet_manager_ports:
          - {port_guid: "0x0002c90000001003", subnet: plane0, priority: 15}
          - {port_guid: "SECOND", subnet: plane1, priority: 15}
        __ib_subnet_manager_priorities: {localhost: 15}
        ib_subnet_manager_diag_environment:
          PATH: "BIN:/usr/bin:/bin"
"""


def run(run_playbook, tmp_path, second):
    fakebin = tmp_path / "bin"
    fakebin.mkdir()
    (fakebin / "ibstat").write_text(f"#!/bin/sh\ncat {FIXTURE}\n")
    (fakebin / "ibstat").chmod(0o755)
    playbook = tmp_path / "port.yml"
    playbook.write_text(PLAY.replace("BIN", str(fakebin)).replace("SECOND", second))
    return run_playbook("-i", "localhost,", str(playbook))


def test_a_listed_port_the_host_lacks_is_refused(run_playbook, tmp_path):
    proc = run(run_playbook, tmp_path, "0x0002c90000002003")
    assert recap(proc)["failed"] == 1, proc.output
    refused = "ib_subnet_manager_ports[1]: port 0x0002c90000002003 is not an InfiniBand port of"
    assert f"{refused} localhost" in proc.output
    assert "0x0002c90000001003" in proc.output
