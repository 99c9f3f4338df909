"""module_utils/ufm_pkeys.py: UFM PKey requests from the records OpenSM's
partitions.conf is written from. Answers shaped as UFM Enterprise's REST API Guide
documents GET /ufmRest/resources/pkeys?guids_data=true&qos_conf=true (the QoS fields
mtu_limit, service_level, rate_limit with qos_conf=true)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import normalize_partitions
from ansible_collections.rdma.fabric.plugins.module_utils.ufm_pkeys import (
    parse_pkeys,
    requests,
    ufm_errors,
)

RECORDS = normalize_partitions(
    [
        {"name": "Default", "pkey": 0x7FFF, "ipoib": True, "members": ["ALL=full"]},
        {"name": "storage", "pkey": 0x10, "ipoib": True, "members": ["0x2c90300000001=full"]},
    ],
    ipoib_mtu=5,
)
MANAGEMENT = {"0x7fff": {"partition": "management", "ip_over_ib": True, "guids": []}}


def test_a_missing_pkey_is_posted_the_management_one_left_to_ufm():
    assert requests(MANAGEMENT, RECORDS) == [
        {
            "method": "POST",
            "path": "/ufmRest/resources/pkeys",
            "body": {
                "pkey": "0x10",
                "guids": ["0002c90300000001"],
                "memberships": ["full"],
                "ip_over_ib": True,
                "index0": False,
            },
        },
        # storage is IPoIB: its MTU (ipoib_mtu 5) is the PKey's QoS, UFM's defaults the rest.
        {
            "method": "PUT",
            "path": "/ufmRest/resources/pkeys/qos_conf",
            "body": {"pkey": "0x10", "mtu_limit": 5, "service_level": 0, "rate_limit": 2.5},
        },
    ]


def test_same_pkey_nothing_differing_pkey_put():
    port = {"guid": "0002C90300000001", "membership": "full", "index0": False}
    qos = {"mtu_limit": 5, "service_level": 0, "rate_limit": 2.5}
    same = MANAGEMENT | {"0x0010": {"partition": "s", "ip_over_ib": True, "guids": [port]} | qos}
    assert parse_pkeys(same)[0x10] == {
        "ip_over_ib": True,
        "members": {"0002c90300000001": "full"},
        "qos": qos,
    }
    assert requests(same, RECORDS) == []
    limited = MANAGEMENT | {
        "0x10": {"ip_over_ib": True, "guids": [port | {"membership": "limited"}]} | qos
    }
    assert [r["method"] for r in requests(limited, RECORDS)] == ["PUT"]
    other = same | {"0x30": {"partition": "tenant", "ip_over_ib": False, "guids": []}}
    assert requests(other, RECORDS) == []


def test_what_ufm_cannot_take():
    records = normalize_partitions([{"name": "p", "pkey": 2, "members": ["SELF=full", "0x1=both"]}])
    assert ufm_errors(records) == [
        "ib_subnet_manager_partitions[0] (p): member SELF is not a port GUID, all UFM takes",
        "ib_subnet_manager_partitions[0] (p): membership of 0x0000000000000001 in UFM "
        "must be full or limited",
    ]
    assert ufm_errors(RECORDS) == []
