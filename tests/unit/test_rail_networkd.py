"""networkd beside the host's own networking.

Finding 1: restarting a running systemd-networkd releases the DHCP leases of the links it
manages (systemd.network(5) KeepConfiguration= defaults to "no"; on stop the DHCP client
stops, sends RELEASE and drops the address), and networkd reads networkd.conf only when
it starts (systemd 252: `networkctl reload` re-reads .network/.netdev files, not
networkd.conf). So the drop-in is read at networkd's first start; a running networkd
that manages other links is never restarted by the role (unless
rdma_rails_networkd_restart), the setting waits for its next start and the run says so.

Finding 2: ManageForeignNextHops= (systemd >= 256, networkd.conf(5) "Added in version
256") keeps foreign nexthops; a key an older networkd does not know is logged as
"Unknown key", so each key is written only for the versions that have it.
"""

from __future__ import annotations

import configparser

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.rail_render import (
    networkd_action,
    networkd_conf,
    networkd_probe,
)
from conftest import ROLES_DIR
from role_tasks import INCLUDE, flat

ROLE = ROLES_DIR / "rdma_rails"
RAILS = ["ens17np0", "ens18np0"]

# The shape of the role's probe (tasks/networkd_service.yml): key=value lines, then
# `networkctl list --no-legend` reduced to "link NAME SETUP" (columns IDX LINK TYPE
# OPERATIONAL SETUP, networkctl(1)).
RUNNING_WITH_MGMT = """version=252
active=active
started=1764885600
dropin=
link lo unmanaged
link eno1 configured
link ens17np0 unmanaged
link docker0 unmanaged
"""


def _keys(text):
    conf = configparser.ConfigParser()
    conf.optionxform = str
    conf.read_string(text)
    return dict(conf["Network"])


@pytest.mark.parametrize(
    ("version", "keys"),
    [
        (245, {}),
        (246, {"ManageForeignRoutes": "no"}),
        (249, {"ManageForeignRoutes": "no", "ManageForeignRoutingPolicyRules": "no"}),
        (252, {"ManageForeignRoutes": "no", "ManageForeignRoutingPolicyRules": "no"}),
        (
            256,
            {
                "ManageForeignRoutes": "no",
                "ManageForeignRoutingPolicyRules": "no",
                "ManageForeignNextHops": "no",
            },
        ),
        (
            257,
            {
                "ManageForeignRoutes": "no",
                "ManageForeignRoutingPolicyRules": "no",
                "ManageForeignNextHops": "no",
            },
        ),
    ],
)
def test_dropin_keys_follow_the_networkd_version(version, keys):
    assert _keys(networkd_conf(version)) == keys


def test_unknown_version_writes_every_key():
    assert set(_keys(networkd_conf(None))) == {
        "ManageForeignRoutes",
        "ManageForeignRoutingPolicyRules",
        "ManageForeignNextHops",
    }


def test_probe_is_parsed():
    probe = networkd_probe(RUNNING_WITH_MGMT)
    assert probe["version"] == 252
    assert probe["active"] is True
    assert probe["started"] == 1764885600
    assert probe["dropin"] is None
    assert probe["links"]["eno1"] == "configured"


def test_a_stopped_networkd_is_started_and_reads_the_dropin_then():
    stopped = "version=252\nactive=inactive\nstarted=\ndropin=\n"
    assert networkd_action(stopped, RAILS, conf_changed=True)["action"] == "start"


def test_a_running_networkd_managing_a_management_link_is_never_restarted():
    got = networkd_action(RUNNING_WITH_MGMT, RAILS, conf_changed=True)
    assert got["action"] == "defer"
    assert got["others"] == ["eno1"]
    assert "eno1" in got["msg"] and "rdma_rails_networkd_restart" in got["msg"]
    assert "DHCP" in got["msg"] and "next start" in got["msg"]


def test_a_new_dbus_does_not_restart_it_either():
    got = networkd_action(RUNNING_WITH_MGMT, RAILS, conf_changed=False, bus_changed=True)
    assert got["action"] == "defer"


def test_the_operator_may_allow_the_restart():
    got = networkd_action(RUNNING_WITH_MGMT, RAILS, conf_changed=True, allow_restart=True)
    assert got["action"] == "restart"


def test_a_networkd_that_manages_only_the_rails_is_restarted():
    text = RUNNING_WITH_MGMT.replace("link eno1 configured", "link eno1 unmanaged").replace(
        "link ens17np0 unmanaged", "link ens17np0 configured"
    )
    assert networkd_action(text, RAILS, conf_changed=True)["action"] == "restart"


def test_a_dropin_older_than_networkds_start_is_in_effect():
    text = RUNNING_WITH_MGMT.replace("dropin=", "dropin=1764885000")
    assert networkd_action(text, RAILS, conf_changed=False)["action"] == "none"


def test_a_dropin_written_after_networkds_start_is_still_pending():
    # An earlier run deferred: the file is unchanged now, but networkd has not read it.
    text = RUNNING_WITH_MGMT.replace("dropin=", "dropin=1764886000")
    got = networkd_action(text, RAILS, conf_changed=False)
    assert got["action"] == "defer"


def _tasks(name):
    return yaml.safe_load((ROLE / "tasks" / name).read_text())


def test_the_role_restarts_networkd_only_when_the_decision_says_so():
    tasks = flat(ROLE / "tasks", "networkd_service.yml")
    service = [
        t
        for t in tasks
        if t.get("ansible.builtin.systemd_service", {}).get("name") == "systemd-networkd.service"
        and "state" in t["ansible.builtin.systemd_service"]
    ]
    assert len(service) == 2, service  # started, restarted
    for task in service:
        state = task["ansible.builtin.systemd_service"]["state"]
        if state == "restarted" or "restart" in state:
            assert "__rdma_rails_networkd.action == 'restart'" in task["when"], task
        else:
            assert state == "started", task
    # The apply block (reload + reconfigure) waits too: with the drop-in not yet read,
    # a reconfigure would drop foreign rules (ManageForeignRoutingPolicyRules=yes).
    apply_now = next(t for t in _tasks("apply.yml") if t.get(INCLUDE) == "apply_now.yml")
    assert any("defer" in cond for cond in apply_now["when"]), apply_now["when"]


def test_the_dropin_content_comes_from_the_version():
    tasks = _tasks("networkd_service.yml")
    [write] = [t for t in tasks if "rdma.fabric.managed_files" in t]
    assert "rail_networkd_conf" in write["rdma.fabric.managed_files"]["files"]
