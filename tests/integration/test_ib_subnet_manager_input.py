"""ib_subnet_manager: bad input fails before any change, with a message naming the variable.

Each case runs the real role with ansible-playbook --check and only its validation tag
(the argument spec check is tagged always) against inventory hosts on this machine
(connection local), from the repository root.
"""

from __future__ import annotations

import re

import pytest
from role_play import arg_spec_task, failure_messages, pre_validation, recap, tasks_run

ROLE = "ib_subnet_manager"
# The shared run_play (tests/conftest.py) applies the role to this group.
HOSTS = "subnet_managers"
UPDN_WITH_ROOT = {
    "ib_subnet_manager_routing_engines": ["updn"],
    "ib_subnet_manager_root_guids": ["0x0002c90000000a01"],
}
ALLOWED = pre_validation(ROLE)
ARG_SPEC_TASK = arg_spec_task(ROLE)


def validate(
    run_play, extra_vars: dict, host_vars: dict | None = None, outside: dict | None = None
):
    """Run the role's validation on sm-a of a two-SM group (this machine); host_vars per
    host, `outside` hosts outside the group (an SM host elsewhere, a switch, a UFM server)."""
    host_vars = host_vars or {}
    inventory = {
        "all": {
            "hosts": outside or {},
            "children": {
                "subnet_managers": {
                    "hosts": {
                        name: {"ansible_python_interpreter": "{{ ansible_playbook_python }}"}
                        | host_vars.get(name, {})
                        for name in ("sm-a", "sm-b")
                    }
                }
            },
        }
    }
    return run_play(
        extra_vars, "--limit", "sm-a", "--tags", f"{ROLE}-validate", inventory=inventory
    )


def assert_failed_in_validation(proc, output, task=None):
    assert proc.returncode != 0, output
    ran = tasks_run(proc)
    late = [n for n in ran if n not in ALLOWED and not n.startswith(ARG_SPEC_TASK)]
    assert not late, f"tasks ran after validation failed: {late}"
    counts = recap(proc, "sm-a")
    assert (counts["failed"], counts["changed"]) == (1, 0), counts
    if task:
        assert ran[-1] == f"{ROLE} : {task}", ran
    return " ".join(failure_messages(proc))


def test_priority_16(run_play):
    proc, output = validate(run_play, {"ib_subnet_manager_priority": 16})
    errors = assert_failed_in_validation(proc, output, "Validate ib_subnet_manager_priority")
    assert "ib_subnet_manager_priority must be 0-15" in errors and "got 16" in errors


DEFAULT_PARTITION = {"name": "Default", "pkey": 0x7FFF, "members": ["ALL=full"]}


@pytest.mark.parametrize(
    ("partitions", "messages"),
    [
        pytest.param(
            [{"name": "storage", "pkey": 0x8000, "members": ["ALL"]}],
            ["ib_subnet_manager_partitions[1] (storage): pkey must be 0x0001-0x7fff", "got 0x8000"],
            id="pkey-0x8000",
        ),
        pytest.param(
            [
                {"name": "storage", "pkey": "0x0010", "members": ["ALL"]},
                {"name": "compute", "pkey": 16, "members": ["ALL_CAS"]},
            ],
            ["ib_subnet_manager_partitions[2] (compute): duplicate pkey 0x0010", "used by storage"],
            id="duplicate-pkey",
        ),
    ],
)
def test_bad_partitions(run_play, partitions, messages):
    proc, output = validate(
        run_play, {"ib_subnet_manager_partitions": [DEFAULT_PARTITION, *partitions]}
    )
    errors = assert_failed_in_validation(proc, output, "Validate ib_subnet_manager_partitions")
    for message in messages:
        assert message in errors, errors


def test_duplicate_sm_priority(run_play):
    proc, output = validate(
        run_play,
        {},
        {"sm-a": {"ib_subnet_manager_priority": 9}, "sm-b": {"ib_subnet_manager_priority": 9}},
    )
    errors = assert_failed_in_validation(proc, output, "Refuse two SMs with one priority")
    assert "ib_subnet_manager_priority must differ between every SM of the fabric" in errors
    assert "duplicate priority 9 on sm-a and sm-b" in errors


def test_duplicate_priority_with_an_sm_outside_the_group(run_play):
    # sm-c runs OpenSM too (its inventory says so) but is not in subnet_managers.
    outside = {"sm-c": {"ib_subnet_manager_mode": "opensm", "ib_subnet_manager_priority": 15}}
    proc, output = validate(run_play, {}, outside=outside)
    errors = assert_failed_in_validation(proc, output, "Refuse two SMs with one priority")
    assert "duplicate priority 15 on sm-a and sm-c" in errors


def test_duplicate_priority_with_ufm(run_play):
    # sm-b is second in the group: 14; the UFM server's SM has 14 in the inventory.
    outside = {"ufm-1": {"ib_subnet_manager_mode": "ufm", "ib_subnet_manager_priority": 14}}
    proc, output = validate(run_play, {}, outside=outside)
    errors = assert_failed_in_validation(proc, output, "Refuse two SMs with one priority")
    assert "duplicate priority 14 on sm-b and ufm-1" in errors


# One subnet per rail (multi-plane): each plane elects its own master, so priorities
# repeat across planes; ib_subnet_manager_subnet names the plane.
def test_planes_reuse_priorities(run_play):
    planes = {
        "sm-a": {"ib_subnet_manager_subnet": "plane0"},
        "sm-b": {"ib_subnet_manager_subnet": "plane1"},
    }
    outside = {
        "sm-c": {
            "ib_subnet_manager_mode": "opensm",
            "ib_subnet_manager_subnet": "plane1",
            "ib_subnet_manager_priority": 15,
        }
    }
    proc, output = validate(run_play, {"ib_subnet_manager_priority": 15}, planes, outside=outside)
    assert proc.returncode == 0, output
    assert f"{ROLE} : Refuse two SMs with one priority" in tasks_run(proc)


def test_duplicate_priority_within_a_plane(run_play):
    planes = {"sm-a": {"ib_subnet_manager_subnet": "plane0"}}
    outside = {
        "sm-c": {
            "ib_subnet_manager_mode": "opensm",
            "ib_subnet_manager_subnet": "plane0",
            "ib_subnet_manager_priority": 15,
        }
    }
    proc, output = validate(run_play, {}, planes, outside=outside)
    errors = assert_failed_in_validation(proc, output, "Refuse two SMs with one priority")
    assert "duplicate priority 15 on sm-a and sm-c" in errors and "subnet plane0" in errors


def test_managed_key_in_extra_options(run_play):
    proc, output = validate(
        run_play,
        {"ib_subnet_manager_extra_options": {"sm_priority": "20", "force_log_flush": "yes"}},
    )
    errors = assert_failed_in_validation(
        proc, output, "Validate ib_subnet_manager_extra_options as OpenSM reads them"
    )
    assert "ib_subnet_manager_extra_options.sm_priority is written by the role: set " in errors
    assert "ib_subnet_manager_priority instead" in errors
    assert "force_log_flush must be a boolean" in errors and "on sm-a" in errors


def test_explicit_priority_clashing_with_inventory_order(run_play):
    # sm-a is first in the group: 15 from the inventory order; sm-b asks for 15 too.
    proc, output = validate(run_play, {}, {"sm-b": {"ib_subnet_manager_priority": 15}})
    errors = assert_failed_in_validation(proc, output, "Refuse two SMs with one priority")
    assert "duplicate priority 15 on sm-a and sm-b" in errors


@pytest.mark.parametrize("engine", ["fat-tree", "ar_updn", "UPDN"])
def test_unknown_routing_engine(run_play, engine):
    proc, output = validate(run_play, {"ib_subnet_manager_routing_engines": ["minhop", engine]})
    errors = assert_failed_in_validation(proc, output, "Validate ib_subnet_manager_routing_engines")
    assert f"ib_subnet_manager_routing_engines: '{engine}' is not a routing engine of" in errors
    assert "dfsssp" in errors and "no_fallback" in errors and "on sm-a" in errors


# updn and ftree find roots themselves, dnup reads none (OpenSM's osm_ucast_*.c).
@pytest.mark.parametrize(
    "engines", [["updn"], ["dnup"], ["ftree", "updn", "no_fallback"], ["ftree,minhop"]]
)
def test_engines_without_roots_pass(run_play, engines):
    proc, output = validate(run_play, {"ib_subnet_manager_routing_engines": engines})
    assert proc.returncode == 0, output
    assert f"{ROLE} : Validate ib_subnet_manager_routing_engines" in tasks_run(proc)


# Debian 12 and 13 ship OpenSM 3.3.23, whose IB_MAX_RATE is 22 (600 Gb/s); 23 (800
# Gb/s) and 24 (1200 Gb/s) come with 3.3.24.
@pytest.mark.parametrize("rate", [23, 24])
def test_partition_rate_beyond_the_packaged_opensm(run_play, rate):
    parts = [DEFAULT_PARTITION, {"name": "fast", "pkey": 0x10, "rate": rate, "members": ["ALL"]}]
    proc, output = validate(run_play, {"ib_subnet_manager_partitions": parts})
    errors = assert_failed_in_validation(proc, output, "Validate ib_subnet_manager_partitions")
    assert "ib_subnet_manager_partitions[1] (fast): rate must be an integer 2-22" in errors
    # 3.3.23 when OpenSM is not installed here (the packaged version), else dpkg's
    # 3.3.23-2+b1 (install-deps.sh installs it for the ibsim tests).
    assert re.search(rf"\(IB_MAX_RATE of OpenSM 3\.3\.23(-\S+)?\); got {rate}", errors), errors


def test_doca_source_judges_rates_by_docas_opensm(run_play):
    # DOCA's OpenSM (5.x) replaces whatever is installed: rate 23 (800 Gb/s) is fine.
    parts = [DEFAULT_PARTITION, {"name": "fast", "pkey": 0x10, "rate": 23, "members": ["ALL"]}]
    proc, output = validate(
        run_play, {"ib_subnet_manager_partitions": parts, "ib_subnet_manager_opensm_source": "doca"}
    )
    assert proc.returncode == 0, output
    assert f"{ROLE} : Validate ib_subnet_manager_partitions" in tasks_run(proc)


# Files OpenSM reads must be there before the role changes anything: OpenSM would log
# an error and run without them (no QoS policy, no node names ...).
def test_missing_option_file_on_the_host(run_play):
    extra = {"qos_policy_file": "/nonexistent/rdma-fabric-qos.conf", "torus_config": "/etc/passwd"}
    proc, output = validate(run_play, {"ib_subnet_manager_extra_options": extra})
    errors = assert_failed_in_validation(proc, output, "Refuse option files missing on the host")
    assert "ib_subnet_manager_extra_options.qos_policy_file" in errors
    assert "/nonexistent/rdma-fabric-qos.conf" in errors and "on sm-a" in errors
    assert "torus_config" not in errors


def test_unknown_extra_option(run_play):
    proc, output = validate(
        run_play, {"ib_subnet_manager_extra_options": {"force_log_flush": "TRUE", "sm_prioirty": 3}}
    )
    errors = assert_failed_in_validation(proc, output, "Refuse extra options OpenSM does not know")
    assert "ib_subnet_manager_extra_options on sm-a has sm_prioirty," in errors
    assert re.search(r"OpenSM 3\.3\.23(-\S+)? does not know", errors), errors
    assert "force_log_flush" not in errors


def test_bad_root_guid(run_play):
    proc, output = validate(
        run_play, {**UPDN_WITH_ROOT, "ib_subnet_manager_root_guids": ["spine-01"]}
    )
    errors = assert_failed_in_validation(proc, output, "Validate the GUIDs and the SM_Key")
    assert "ib_subnet_manager_root_guids: 'spine-01' is not a GUID" in errors


def test_unknown_mode(run_play):
    proc, output = validate(run_play, {"ib_subnet_manager_mode": "subnetd"})
    assert_failed_in_validation(proc, output)
    message = next(line for line in output.splitlines() if "ib_subnet_manager_mode" in line)
    assert all(mode in message for mode in ("opensm", "external", "switch", "ufm", "subnetd"))


def test_good_input_passes_validation(run_play):
    parts = [
        {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
        {"name": "storage", "pkey": 0x10, "mtu": 4, "members": ["0x0002c90000001011=full"]},
    ]
    proc, output = validate(
        run_play,
        {**UPDN_WITH_ROOT, "ib_subnet_manager_partitions": parts},
        {"sm-b": {"ib_subnet_manager_priority": 3}},
    )
    assert proc.returncode == 0, output
    assert f"{ROLE} : Validate ib_subnet_manager_partitions" in tasks_run(proc)
    assert (recap(proc, "sm-a")["failed"], recap(proc, "sm-a")["changed"]) == (0, 0)


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        pytest.param(
            [
                {"port_guid": "0x0002c90000001003", "subnet": "plane0", "priority": 15},
                {"port_guid": "0x0002C90000001003", "subnet": "plane1", "priority": 15},
            ],
            "ib_subnet_manager_ports[1]: port 0x0002c90000001003 is listed twice (ports[0])",
            id="same-guid-twice",
        ),
        pytest.param(
            [
                {"port_guid": "0x0002c90000001003", "subnet": "plane0", "priority": 15},
                {"port_guid": "0x0002c90000002003", "subnet": "plane0", "priority": 14},
            ],
            "ib_subnet_manager_ports[1]: subnet plane0 has an instance already (ports[0])",
            id="two-ports-one-subnet",
        ),
        pytest.param(
            [{"port_guid": "0x0002c90000001003", "subnet": "plane0", "priority": 16}],
            "ib_subnet_manager_ports[0]: priority must be 0-15; got 16",
            id="priority-16",
        ),
    ],
)
def test_bad_ports(run_play, ports, message):
    proc, output = validate(run_play, {"ib_subnet_manager_ports": ports})
    errors = assert_failed_in_validation(proc, output, "Validate ib_subnet_manager_ports")
    assert message in errors and "sm-a" in errors, errors


def test_good_ports_pass_validation(run_play):
    # The role runs one OpenSM per listed port (tasks/ports.yml, Molecule scenario
    # ports): a good list passes validation. The release before refused every list
    # ("not applied yet") rather than reduce it to one instance.
    ports = [
        {"port_guid": "0x0002c90000001003", "subnet": "plane0", "priority": 15},
        {"port_guid": "0x0002c90000002003", "subnet": "plane1", "priority": 14},
    ]
    proc, output = validate(run_play, {}, {"sm-a": {"ib_subnet_manager_ports": ports}})
    assert proc.returncode == 0, output
    assert f"{ROLE} : Validate ib_subnet_manager_ports" in tasks_run(proc)
    assert (recap(proc, "sm-a")["failed"], recap(proc, "sm-a")["changed"]) == (0, 0)


def test_one_priority_twice_on_a_subnet_across_hosts(run_play):
    # Each listed port's subnet elects its master: sm-b's port on plane1 at sm-a's
    # priority there would leave the election to the lowest GUID.
    mine = [
        {"port_guid": "0x0002c90000001003", "subnet": "plane0", "priority": 15},
        {"port_guid": "0x0002c90000002003", "subnet": "plane1", "priority": 14},
    ]
    theirs = [{"port_guid": "0x0002c90000003003", "subnet": "plane1", "priority": 14}]
    proc, output = validate(
        run_play,
        {},
        {"sm-a": {"ib_subnet_manager_ports": mine}, "sm-b": {"ib_subnet_manager_ports": theirs}},
    )
    task = "Refuse two SMs of one subnet with one priority (ib_subnet_manager_ports)"
    errors = assert_failed_in_validation(proc, output, task)
    assert (
        "subnet plane1 priority 14 on sm-a 0x0002c90000002003 and sm-b 0x0002c90000003003" in errors
    ), errors
