"""ib_subnet_manager in switch mode: the SM of an NVIDIA Quantum switch (MLNX-OS).

The role runs for real (ansible-playbook, ansible.netcommon.network_cli with the
rdma.fabric.mlnxos terminal and cliconf plugins, paramiko) against the MLNX-OS CLI
STAND-IN (tests/standins/mlnxos_cli.py) on 127.0.0.1: never a real switch. What a real
Quantum switch must still confirm is listed in the role README.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO_ROOT
from role_play import failure_messages, recap, tasks_run

sys.path.insert(0, str(REPO_ROOT / "tests" / "standins"))
from mlnxos_cli import MlnxOsCli  # noqa: E402

ROLE = "ib_subnet_manager"
SWITCH = "ib-spine-1"
PLAY = f"""\
- name: The switch SMs
  hosts: ib_switches
  gather_facts: false
  roles:
    - role: {ROLE}
"""
# How the role reaches the stand-in (network_cli, MLNX-OS cliconf, enable mode).
SWITCH_VARS = {
    "ansible_connection": "ansible.netcommon.network_cli",
    "ansible_network_os": "rdma.fabric.mlnxos",
    "ansible_user": "admin",
    "ansible_password": "admin",
    "ansible_become": True,
    "ansible_become_method": "enable",
    "ib_subnet_manager_mode": "switch",
    "ib_subnet_manager_mlnxos_version": "3.11.2016",
}
NETWORK_ENV = {
    "ANSIBLE_HOST_KEY_CHECKING": "False",
    "ANSIBLE_NETWORK_CLI_SSH_TYPE": "paramiko",
    "ANSIBLE_PERSISTENT_CONNECT_TIMEOUT": "20",
    "ANSIBLE_PERSISTENT_COMMAND_TIMEOUT": "20",
}


@pytest.fixture
def standin():
    cli = MlnxOsCli(hostname=SWITCH, release="3.11.2016")
    cli.port = cli.start()
    yield cli
    cli.stop()


@pytest.fixture
def run_switch(run_playbook, tmp_path, standin):
    (tmp_path / "play.yml").write_text(PLAY)

    def run(switch_vars=None, hosts=None, extra=None, check=False):
        switch = {
            "ansible_host": "127.0.0.1",
            "ansible_port": standin.port,
            **SWITCH_VARS,
            "ib_subnet_manager_priority": 14,
            "ib_subnet_manager_switch_render_dir": str(tmp_path / "rendered"),
        } | (switch_vars or {})
        inventory = {
            "all": {
                "children": {
                    "subnet_managers": {"hosts": hosts or {}},
                    "ib_switches": {
                        "children": {
                            "mlnxos_switches": {
                                "hosts": {SWITCH: switch},
                                "vars": {"rdma_ib_switch_os": "mlnxos"},
                            }
                        }
                    },
                }
            }
        }
        (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
        args = ["-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")]
        args += ["-e", json.dumps(extra)] if extra else []
        args += ["--check"] if check else []
        proc = run_playbook(*args, env=NETWORK_ENV, timeout=240)
        return proc, proc.output

    return run


def config_commands(standin):
    """What the stand-in got in configuration mode (not shows, not mode changes)."""
    return [c for c in standin.commands if c.startswith(("ib ", "no ib "))]


# The role's default partition (defaults/main.yml) with the default IPoIB MTU 5 (4K).
DEFAULT_PARTITION = [
    "ib partition Default pkey 0x7fff",
    "ib partition Default ipoib",
    "ib partition Default mtu 4K",
    "ib partition Default member ALL type full",
]
EMPTY = {"pkey": None, "defmember": None, "ipoib": False, "mtu": None, "members": {}}
DEFAULT_STATE = {
    "Default": EMPTY | {"pkey": 0x7FFF, "ipoib": True, "mtu": "4K", "members": {"ALL": "full"}}
}
STORAGE = {
    "name": "storage",
    "pkey": "0x0010",
    "members": ["0x0002c90300000001=full", "0x0002c90300000002=limited"],
}


def test_enable_and_priority_then_nothing(run_switch, standin):
    proc, output = run_switch()
    assert proc.returncode == 0, output
    assert recap(proc, SWITCH)["changed"] == 1, output
    assert standin.state == {SWITCH: {"enabled": True, "priority": 14}}
    assert standin.partitions == DEFAULT_STATE
    assert config_commands(standin) == [
        f"ib smnode {SWITCH} sm-priority 14",
        f"ib smnode {SWITCH} enable",
        *DEFAULT_PARTITION,
    ]
    assert "no cli session paging enable" in standin.commands and "enable" in standin.commands

    before = len(standin.commands)
    proc, output = run_switch()
    assert proc.returncode == 0, output
    assert recap(proc, SWITCH)["changed"] == 0, output
    assert config_commands(standin)[6:] == [] and len(standin.commands) > before


def test_a_change_is_saved_and_survives_a_reboot(run_switch, standin):
    proc, output = run_switch()
    assert proc.returncode == 0, output
    assert standin.commands.count("configuration write") == 1
    # Written after the change, not before it.
    last_change = max(i for i, c in enumerate(standin.commands) if c.startswith("ib "))
    assert standin.commands.index("configuration write") > last_change
    standin.reboot()
    assert standin.state == {SWITCH: {"enabled": True, "priority": 14}}
    assert standin.partitions == DEFAULT_STATE
    # Nothing to change after the reboot: nothing sent, nothing written.
    proc, output = run_switch()
    assert proc.returncode == 0, output
    assert recap(proc, SWITCH)["changed"] == 0, output
    assert standin.commands.count("configuration write") == 1


def test_partitions_from_the_inventorys_definitions(run_switch, standin):
    partitions = {
        "ib_subnet_manager_partitions": [
            {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
            STORAGE,
        ]
    }
    proc, output = run_switch(partitions)
    assert proc.returncode == 0, output
    assert standin.partitions["storage"] == {
        "pkey": 0x10,
        "defmember": None,
        "ipoib": False,
        "mtu": None,
        "members": {"00:02:c9:03:00:00:00:01": "full", "00:02:c9:03:00:00:00:02": "limited"},
    }
    proc, output = run_switch(partitions)
    assert proc.returncode == 0, output
    assert recap(proc, SWITCH)["changed"] == 0, output

    # One member gone from the inventory, one partition added on the switch by hand.
    standin.partitions["old"] = EMPTY | {"pkey": 0x20}
    partitions["ib_subnet_manager_partitions"][1] = STORAGE | {"members": STORAGE["members"][:1]}
    before = len(config_commands(standin))
    proc, output = run_switch(partitions, check=True)
    assert proc.returncode == 0 and recap(proc, SWITCH)["changed"] == 1, output
    assert len(config_commands(standin)) == before and "old" in standin.partitions
    proc, output = run_switch(partitions)
    assert proc.returncode == 0, output
    assert config_commands(standin)[before:] == [
        "no ib partition storage member 00:02:c9:03:00:00:00:02",
        "no ib partition old",
    ]
    assert set(standin.partitions) == {"Default", "storage"}


def test_check_mode_sends_no_configuration(run_switch, standin):
    proc, output = run_switch(check=True)
    assert proc.returncode == 0, output
    assert recap(proc, SWITCH)["changed"] == 1, output
    assert config_commands(standin) == [] and standin.state == {}


def test_priority_change_and_disable(run_switch, standin):
    standin.state = {SWITCH: {"enabled": True, "priority": 3}}
    proc, output = run_switch()
    assert proc.returncode == 0, output
    assert config_commands(standin) == [f"ib smnode {SWITCH} sm-priority 14", *DEFAULT_PARTITION]
    proc, output = run_switch({"ib_subnet_manager_switch_sm": False})
    assert proc.returncode == 0, output
    assert config_commands(standin)[-1] == f"no ib smnode {SWITCH} enable"
    assert standin.state[SWITCH]["enabled"] is False


def test_rendered_writes_the_lines_without_connecting(run_switch, standin, tmp_path):
    proc, output = run_switch({"ib_subnet_manager_switch_state": "rendered"})
    assert proc.returncode == 0, output
    assert standin.commands == []
    rendered = (tmp_path / "rendered" / f"{SWITCH}.cfg").read_text()
    assert rendered.splitlines() == [
        f"ib smnode {SWITCH} enable",
        f"ib smnode {SWITCH} sm-priority 14",
        *DEFAULT_PARTITION,
    ]


@pytest.mark.parametrize(
    ("switch_vars", "message"),
    [
        ({"ansible_password": ""}, "no credentials: set ansible_user and ansible_password"),
        ({"ib_subnet_manager_mlnxos_version": "3.6.8012"}, "mlnxos_version 3.6.8012 is not"),
        ({"ib_subnet_manager_mlnxos_version": ""}, "mlnxos_version (empty) is not"),
        ({"ib_subnet_manager_partitions": [
            {"name": "Default", "pkey": 0x7FFF, "rate": 7, "members": ["ALL=full"]}]},
         "partitions[0] (Default): rate has no documented MLNX-OS partition command"),
    ],
)  # fmt: skip
def test_bad_switch_input_fails_before_connecting(run_switch, standin, switch_vars, message):
    proc, output = run_switch(switch_vars)
    assert proc.returncode != 0, output
    errors = " ".join(failure_messages(proc))
    assert message in errors and SWITCH in errors, errors
    assert standin.commands == []


def test_same_priority_on_a_host_and_a_switch(run_switch, standin):
    host = {"ansible_connection": "local", "ib_subnet_manager_priority": 14}
    proc, output = run_switch(hosts={"sm-a": host})
    assert proc.returncode != 0, output
    errors = " ".join(failure_messages(proc))
    assert "duplicate priority 14 on sm-a and ib-spine-1" in errors, errors
    assert f"{ROLE} : Refuse two SMs with one priority" in tasks_run(proc)
    assert standin.commands == []


def test_a_release_other_than_the_inventorys_is_refused(run_switch, standin):
    standin.release = "3.12.3006"
    proc, output = run_switch()
    assert proc.returncode != 0, output
    assert "runs MLNX-OS 3.12.3006; ib_subnet_manager_mlnxos_version says 3.11.2016" in output
    assert config_commands(standin) == []


def test_an_ha_cluster_is_configured_through_its_vip(run_playbook, tmp_path, standin):
    """MLNX-OS SM HA: the SM of every member is configured on the cluster's master,
    reached at the management cluster's virtual IP (MLNX-OS User Manual, Subnet Manager
    HA). The members' own addresses (127.0.0.2, .3) have no CLI behind them: a
    connection there fails the run. One connection, one configuration write."""
    (tmp_path / "play.yml").write_text(PLAY)
    common = {
        **SWITCH_VARS,
        "ansible_port": standin.port,
        "rdma_ib_switch_os": "mlnxos",
        "ib_subnet_manager_switch_ha_vip": "127.0.0.1",
    }
    members = {
        "ib-sm-a": {"ansible_host": "127.0.0.2", "ib_subnet_manager_priority": 14},
        "ib-sm-b": {"ansible_host": "127.0.0.3", "ib_subnet_manager_priority": 13},
    }
    inventory = {"all": {"children": {"ib_switches": {"children": {"mlnxos_switches": {
        "hosts": members, "vars": common}}}}}}  # fmt: skip
    (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
    args = ["-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")]
    proc = run_playbook(*args, env=NETWORK_ENV, timeout=240)
    assert proc.returncode == 0, proc.output
    assert standin.state == {
        "ib-sm-a": {"enabled": True, "priority": 14},
        "ib-sm-b": {"enabled": True, "priority": 13},
    }
    assert standin.partitions == DEFAULT_STATE
    assert standin.commands.count("configuration write") == 1
    assert config_commands(standin).count(DEFAULT_PARTITION[0]) == 1
    proc = run_playbook(*args, env=NETWORK_ENV, timeout=240)
    assert proc.returncode == 0, proc.output
    assert [recap(proc, h)["changed"] for h in members] == [0, 0], proc.output
    assert standin.commands.count("configuration write") == 1
