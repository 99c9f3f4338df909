"""soft_roce's boot persistence (tasks/persist.yml) in --check --diff on a host that has
never had it, as on a fresh rack: every file it would write is reported changed with
its diff, nothing is written, and enabling the unit that does not exist yet is left to
the real run (systemd cannot find a unit that is only about to be written).
"""

from __future__ import annotations

from role_play import outcomes, recap, tasks_run

PLAY = """\
- name: Persist Soft-RoCE links on this machine, in check mode
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Run soft_roce's persistence step
      ansible.builtin.include_role:
        name: soft_roce
        tasks_from: persist.yml
      vars:
        soft_roce_links: [{name: rxe0, netdev: eth1}]
        __soft_roce_config: ROOT/etc/rdma-fabric/soft-roce.links
        __soft_roce_script: ROOT/usr/local/sbin/rdma-fabric-soft-roce
"""


def test_persist_in_check_mode_on_a_fresh_host(run_playbook, tmp_path):
    root = tmp_path / "root"
    playbook = tmp_path / "persist.yml"
    playbook.write_text(PLAY.replace("ROOT", str(root)))
    proc = run_playbook("-i", "localhost,", "--check", "--diff", str(playbook))
    output = proc.output
    assert proc.returncode == 0, output
    assert "soft_roce : Enable the unit at boot" in tasks_run(proc)
    assert outcomes(proc, "soft_roce : Enable the unit at boot") == {"localhost": "skipped"}
    assert "Could not find the requested service" not in output
    assert recap(proc)["failed"] == 0
    # The directory, the links file, the script; the unit file too unless this machine
    # happens to have it.
    assert recap(proc)["changed"] >= 3, output
    assert "+rxe0 eth1" in output, output
    assert not root.exists(), "check mode wrote files"
