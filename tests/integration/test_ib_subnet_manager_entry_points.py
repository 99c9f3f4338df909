"""ib_subnet_manager's switch and ufm modes as entry points of their own
(include_role tasks_from: switch / ufm): each checks its input against its own argument
spec before anything else, then runs alone, validation included.

Runs ansible-playbook on this machine: switch mode in `rendered` state (nothing
connects), UFM mode against the UFM REST stand-in (tests/standins/ufm_rest.py) on
127.0.0.1, in --check.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO_ROOT
from role_play import failure_messages, outcomes, recap, tasks_run

sys.path.insert(0, str(REPO_ROOT / "tests" / "standins"))
from ufm_rest import UfmRest, make_ca  # noqa: E402

ROLE = "ib_subnet_manager"
HOST = "sm-1"
# How ansible-runner names the role's tasks when included by its FQCN.
TASK = f"rdma.fabric.{ROLE} : "
PLAY = """\
- name: One mode of the SM role on its own
  hosts: all
  gather_facts: false
  tasks:
    - name: The {entry} entry point
      ansible.builtin.include_role:
        name: rdma.fabric.{role}
        tasks_from: {entry}
"""
# A switch whose inventory does not say ib_subnet_manager_mode: the entry point does.
SWITCH = {
    "ansible_connection": "local",
    "ansible_python_interpreter": "{{ ansible_playbook_python }}",
    "rdma_ib_switch_os": "mlnxos",
    "ib_subnet_manager_mlnxos_version": "3.11.2016",
    "ib_subnet_manager_switch_state": "rendered",
    "ib_subnet_manager_switch_node": HOST,
}


@pytest.fixture
def run_entry(run_playbook, tmp_path):
    def run(entry: str, host_vars: dict, *args: str):
        (tmp_path / "play.yml").write_text(PLAY.format(entry=entry, role=ROLE))
        inventory = {"all": {"hosts": {HOST: host_vars}}}
        (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
        proc = run_playbook("-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml"), *args)
        return proc, proc.output

    return run


def spec_task(entry: str) -> str:
    return f"{TASK}Validating arguments against arg spec '{entry}'"


@pytest.mark.parametrize(
    ("entry", "bad", "message"),
    [
        ("switch", {"ib_subnet_manager_switch_state": "pushed"},
         "value of ib_subnet_manager_switch_state must be one of: applied, rendered, got: pushed"),
        ("switch", {"ib_subnet_manager_switch_sm": "maybe"}, "ib_subnet_manager_switch_sm"),
        ("ufm", {"ib_subnet_manager_ipoib_mtu": 7},
         "value of ib_subnet_manager_ipoib_mtu must be one of: 1, 2, 3, 4, 5, got: 7"),
        ("ufm", {"ib_subnet_manager_partitions": "Default"}, "ib_subnet_manager_partitions"),
    ],
)  # fmt: skip
def test_bad_input_fails_in_the_entry_points_argument_spec(
    run_entry, tmp_path, entry, bad, message
):
    host = (
        (SWITCH if entry == "switch" else {"ansible_connection": "local"})
        | {"ib_subnet_manager_switch_render_dir": str(tmp_path / "rendered")}
        | bad
    )
    proc, output = run_entry(entry, host)
    assert proc.returncode != 0, output
    ran = tasks_run(proc)
    assert ran[-1].startswith(spec_task(entry)), ran
    errors = " ".join(failure_messages(proc))
    assert message in errors, errors
    assert not (tmp_path / "rendered").exists()


def test_switch_alone_validates_then_renders(run_entry, tmp_path):
    proc, output = run_entry(
        "switch", SWITCH | {"ib_subnet_manager_switch_render_dir": str(tmp_path / "rendered")}
    )
    assert proc.returncode == 0, output
    ran = tasks_run(proc)
    assert ran[1].startswith(spec_task("switch")), ran
    # validate.yml ran as in switch mode: the priorities, not OpenSM's dpkg probe.
    assert outcomes(proc, f"{TASK}Give every SM of this subnet its priority") == {HOST: "ok"}
    assert outcomes(proc, f"{TASK}Ask dpkg for the installed OpenSM's version") == {HOST: "skipped"}
    rendered = (tmp_path / "rendered" / f"{HOST}.cfg").read_text().splitlines()
    assert rendered[:2] == [f"ib smnode {HOST} enable", f"ib smnode {HOST} sm-priority 15"]


@pytest.fixture
def ufm(tmp_path_factory):
    ca, cert, key = make_ca(tmp_path_factory.mktemp("ufm-ca"))
    server = UfmRest(cert, key)
    server.port = server.start()
    server.ca = ca
    yield server
    server.stop()


def test_ufm_alone_validates_then_predicts(run_entry, ufm):
    host = {
        "ansible_connection": "local",
        "ansible_python_interpreter": "{{ ansible_playbook_python }}",
        "ib_subnet_manager_ufm_url": f"https://127.0.0.1:{ufm.port}",
        "ib_subnet_manager_ufm_user": "admin",
        "ib_subnet_manager_ufm_password": "123456",
        "ib_subnet_manager_ufm_ca_path": str(ufm.ca),
        "ib_subnet_manager_partitions": [
            {"name": "Default", "pkey": 0x7FFF, "members": ["ALL=full"]},
            {"name": "storage", "pkey": "0x0010", "members": ["0x0002c90300000001=full"]},
        ],
    }
    proc, output = run_entry("ufm", host, "--check")
    assert proc.returncode == 0, output
    assert tasks_run(proc)[1].startswith(spec_task("ufm")), tasks_run(proc)
    assert outcomes(proc, f"{TASK}Validate ib_subnet_manager_partitions") == {HOST: "ok"}
    assert outcomes(proc, f"{TASK}Predict the PKey changes") == {HOST: "ok"}
    assert recap(proc, HOST)["changed"] == 1, output
    assert [m for m, _, _ in ufm.requests] == ["GET"]
