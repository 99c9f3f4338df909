"""Report and render directories stay inside the project or are absolute without `..`:
the filter, and each role failing before any change."""

from __future__ import annotations

import os

import pytest
from ansible_collections.rdma.fabric.plugins.filter.contained_path_errors import (
    contained_path_errors,
)
from role_play import play


@pytest.mark.parametrize(
    "path",
    [
        "reports",
        "reports/latest/../x",
        "./out",
        "/srv/reports",
        "/work/rdma/reports/roce_switch_qos",
    ],
)
def test_contained_paths_pass(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert contained_path_errors(path, "rdma_verify_report_dir", str(tmp_path)) == []


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../../../../etc/cron.d", "outside the project"),
        ("reports/../../x", "outside the project"),
        ("/srv/reports/../../etc/cron.d", "must not contain '..'"),
        ("", "must be a directory"),
        (None, "must be a directory"),
    ],
)
def test_escapes_fail_naming_the_variable(path, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [msg] = contained_path_errors(path, "rdma_verify_report_dir", str(tmp_path))
    assert msg.startswith("rdma_verify_report_dir")
    assert says in msg


def test_a_symbolic_link_out_of_the_project_is_an_escape(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    os.symlink("/etc", project / "reports")
    monkeypatch.chdir(project)
    [msg] = contained_path_errors("reports/cron.d", "roce_switch_qos_render_dir", str(project))
    assert "resolves to /etc/cron.d" in msg


def test_relative_paths_resolve_where_ansible_playbook_runs(tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / "playbooks").mkdir(parents=True)
    monkeypatch.chdir(project / "playbooks")
    assert contained_path_errors("../reports", "rdma_verify_report_dir", str(project)) == []
    monkeypatch.chdir(tmp_path)
    [msg] = contained_path_errors("reports", "rdma_verify_report_dir", str(project))
    assert "outside the project" in msg


SWITCH_PLAY = """\
- name: Render the switch configuration
  hosts: switches
  gather_facts: false
  roles:
    - role: roce_switch_qos
"""


def test_rdma_verify_report_dir_escape_fails_before_any_test(run_cli, tmp_path):
    playbook = tmp_path / "verify.yml"
    playbook.write_text(play("rdma_verify"))
    escape = "../../../../../../../../etc/cron.d"
    proc = run_cli(
        "ansible-playbook",
        "-i",
        "localhost,",
        str(playbook),
        "-e",
        f"rdma_verify_report_dir={escape}",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert (
        f"localhost: rdma_verify_report_dir '{escape}' resolves to /etc/cron.d, outside the project"
        in out
    )
    assert "Gather the RDMA ports" not in out


def test_roce_switch_qos_render_dir_escape_fails_before_anything_is_written(run_cli, tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        "all:\n  children:\n    switches:\n      hosts:\n        leaf1:\n"
        "          ansible_connection: local\n          rdma_switch_os: cumulus\n"
        "          roce_switch_qos_ports: [swp1]\n"
    )
    playbook = tmp_path / "render.yml"
    playbook.write_text(SWITCH_PLAY)
    escape = f"{tmp_path}/rendered/../../escaped"
    args = ("-e", "roce_switch_qos_state=rendered", "-e", f"roce_switch_qos_render_dir={escape}")
    proc = run_cli("ansible-playbook", "-i", str(inv), str(playbook), *args)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert (
        f"leaf1: roce_switch_qos_render_dir must not contain '..' components; got '{escape}'" in out
    )
    assert not (tmp_path / "rendered").exists()
    assert not (tmp_path.parent / "escaped").exists()
