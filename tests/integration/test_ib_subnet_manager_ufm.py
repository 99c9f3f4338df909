"""ib_subnet_manager in mode ufm: the inventory's partitions as UFM Enterprise PKeys.

The role runs for real (ansible-playbook, ansible.builtin.uri with certificates
validated) against the UFM REST STAND-IN (tests/standins/ufm_rest.py) on 127.0.0.1,
with a CA and server certificate generated here: never a real UFM. What a real UFM must
still confirm is listed in the role README.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO_ROOT
from role_play import failure_messages, recap

sys.path.insert(0, str(REPO_ROOT / "tests" / "standins"))
from ufm_rest import UfmRest, make_ca  # noqa: E402

HOST = "ufm-1"
PLAY = """\
- name: UFM's PKeys
  hosts: ufm
  gather_facts: false
  roles:
    - role: ib_subnet_manager
"""
PARTITIONS = [
    {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
    {
        "name": "storage",
        "pkey": "0x0010",
        "ipoib": True,
        "members": ["0x0002c90300000001=full", "0x0002c90300000002=limited"],
    },
    {"name": "compute", "pkey": 0x20, "defmember": "full", "members": ["0x0002c90300000003"]},
]
STORAGE = {
    "partition": "api_pkey_0x10",
    "ip_over_ib": True,
    "guids": [
        {"guid": "0002c90300000001", "membership": "full", "index0": False},
        {"guid": "0002c90300000002", "membership": "limited", "index0": False},
    ],
}

# What UFM holds for storage's QoS after the role: MTU 5 (4096, ib_subnet_manager_ipoib_mtu
# for an IPoIB partition without mtu), UFM's defaults for the rest (rate 2.5, SL 0).
QOS_STORAGE = {"mtu_limit": 5, "rate_limit": 2.5, "service_level": 0}


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_ca(tmp_path_factory.mktemp("ufm-ca"))


@pytest.fixture
def ufm(certs):
    server = UfmRest(certs[1], certs[2])
    server.port = server.start()
    yield server
    server.stop()


@pytest.fixture
def run_ufm(run_playbook, tmp_path, ufm, certs):
    (tmp_path / "play.yml").write_text(PLAY)

    def run(host_vars=None, check=False):
        host = {
            "ansible_connection": "local",
            "ansible_python_interpreter": "{{ ansible_playbook_python }}",
            "ib_subnet_manager_mode": "ufm",
            "ib_subnet_manager_ufm_url": f"https://127.0.0.1:{ufm.port}",
            "ib_subnet_manager_ufm_user": "admin",
            "ib_subnet_manager_ufm_password": "123456",
            "ib_subnet_manager_ufm_ca_path": str(certs[0]),
            "ib_subnet_manager_partitions": PARTITIONS,
        } | (host_vars or {})
        inventory = {"all": {"children": {"ufm": {"hosts": {HOST: host}}}}}
        (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
        args = ["-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml")]
        proc = run_playbook(*args, *(["--check"] if check else []), timeout=240)
        return proc, proc.output

    return run


def changes(ufm):
    return [
        (m + (" qos" if p.endswith("/qos_conf") else ""), b["pkey"])
        for m, p, b in ufm.requests
        if m != "GET"
    ]


def test_check_mode_predicts_then_create_then_nothing(run_ufm, ufm):
    proc, output = run_ufm(check=True)
    assert proc.returncode == 0, output
    assert recap(proc, HOST)["changed"] == 1, output
    assert "POST 0x10" in output and "POST 0x20" in output
    assert changes(ufm) == [] and set(ufm.pkeys) == {"0x7fff"}

    proc, output = run_ufm()
    assert proc.returncode == 0, output
    assert recap(proc, HOST)["changed"] == 1, output
    # storage is an IPoIB partition: its MTU (ib_subnet_manager_ipoib_mtu) goes to UFM too.
    assert changes(ufm) == [("POST", "0x10"), ("POST", "0x20"), ("PUT qos", "0x10")]
    assert ufm.pkeys["0x10"] == STORAGE | QOS_STORAGE
    assert ufm.pkeys["0x20"]["guids"] == [
        {"guid": "0002c90300000003", "membership": "full", "index0": False}
    ]
    assert ufm.pkeys["0x20"]["ip_over_ib"] is False

    proc, output = run_ufm()
    assert proc.returncode == 0, output
    assert recap(proc, HOST)["changed"] == 0, output
    assert len(changes(ufm)) == 3


def test_a_differing_pkey_is_set_others_left_alone(run_ufm, ufm):
    ufm.pkeys["0x10"] = (
        STORAGE
        | QOS_STORAGE
        | {
            "guids": STORAGE["guids"][:1]
            + [{"guid": "0002c903000000ff", "membership": "full", "index0": False}]
        }
    )
    ufm.pkeys["0x30"] = {"partition": "tenant", "ip_over_ib": False, "guids": []}
    proc, output = run_ufm()
    assert proc.returncode == 0, output
    assert changes(ufm) == [("PUT", "0x10"), ("POST", "0x20")]
    assert ufm.pkeys["0x10"] == STORAGE | QOS_STORAGE and "0x30" in ufm.pkeys


# UFM's PKey QoS (REST API Guide, PKey GUIDs Rest API: pkeys/add takes mtu_limit,
# service_level, rate_limit; "Update QoS for PKey" is PUT /ufmRest/resources/pkeys/qos_conf):
# mtu_limit is the IB MTU enum (OpenSM's mtu=), rate_limit in Gb/s (OpenSM's rate= is the
# PathRecord rate enum: 16 is 100 Gb/s, include/iba/ib_types.h), service_level the SL.
def test_partition_qos_goes_to_ufm_and_stays(run_ufm, ufm):
    parts = [
        PARTITIONS[0],
        {"name": "gpu", "pkey": 0x40, "mtu": 5, "rate": 16, "sl": 3,
         "members": ["0x0002c90300000004=full"]},
    ]  # fmt: skip
    proc, output = run_ufm({"ib_subnet_manager_partitions": parts})
    assert proc.returncode == 0, output
    assert changes(ufm) == [("POST", "0x40"), ("PUT qos", "0x40")]
    qos = {k: ufm.pkeys["0x40"][k] for k in ("mtu_limit", "rate_limit", "service_level")}
    assert qos == {"mtu_limit": 5, "rate_limit": 100.0, "service_level": 3}

    ufm.pkeys["0x40"]["service_level"] = 0  # changed behind the inventory's back
    proc, output = run_ufm({"ib_subnet_manager_partitions": parts})
    assert proc.returncode == 0, output
    assert changes(ufm)[2:] == [("PUT qos", "0x40")]
    assert ufm.pkeys["0x40"]["service_level"] == 3

    proc, output = run_ufm({"ib_subnet_manager_partitions": parts})
    assert recap(proc, HOST)["changed"] == 0, output
    assert len(changes(ufm)) == 3


def test_a_certificate_from_another_ca_is_refused(run_ufm, ufm, tmp_path):
    other = make_ca(tmp_path)
    proc, output = run_ufm({"ib_subnet_manager_ufm_ca_path": str(other[0])})
    assert proc.returncode != 0, output
    assert "CERTIFICATE_VERIFY_FAILED" in output or "certificate verify failed" in output, output
    assert ufm.requests == []


@pytest.mark.parametrize(
    ("host_vars", "message"),
    [
        ({"ib_subnet_manager_ufm_url": ""},
         "ib_subnet_manager_ufm_url must be UFM's https:// address, got (empty)"),
        ({"ib_subnet_manager_ufm_url": "http://127.0.0.1"}, "ib_subnet_manager_ufm_url must be"),
        ({"ib_subnet_manager_ufm_password": ""},
         "ib_subnet_manager_ufm_user and ib_subnet_manager_ufm_password"),
        ({"ib_subnet_manager_partitions": PARTITIONS[:1] + [
            {"name": "p", "pkey": 2, "members": ["ALL=full"]}]},
         "ib_subnet_manager_partitions[1] (p): member ALL is not a port GUID"),
    ],
)  # fmt: skip
def test_bad_input_fails_before_any_request(run_ufm, ufm, host_vars, message):
    proc, output = run_ufm(host_vars)
    assert proc.returncode != 0, output
    errors = " ".join(failure_messages(proc))
    assert message in errors and HOST in errors, errors
    assert ufm.requests == []
