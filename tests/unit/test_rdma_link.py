"""`rdma link show` parser (module_utils/rdma_link.py).

Inputs are written after the layouts iproute2 printed across eras in public material:
the old "<idx>/<port>: <dev>/<port>:" prefix (iproute2 4.x, with IB lid fields), the
newer "link <dev>/<port>" lines (mlx5 subfunction docs, rxe patch reviews), padded
columns, and `rdma -j link show` JSON.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_link import parse_rdma_link

OLD = """0/1: i40iw0/1: state DOWN physical_state NOP
2/1: mlx5_0/1: state DOWN physical_state DISABLED netdev ens803f0
3/1: mlx5_1/1: state ACTIVE physical_state LINK_UP netdev ens803f1
"""

OLD_IB = "0/1: ibp0s9/1: subnet_prefix fe80:0000:0000:0000 lid 13397 sm_lid 49151 lmc 0 state ACTIVE physical_state LINK_UP\n"  # noqa: E501

NEW = """link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth1
link rocep1s0f0/1    state ACTIVE physical_state LINK_UP netdev enp1s0f0np0
"""

JSON = (
    '[{"ifindex":0,"ifname":"rxe0","port":1,"state":"ACTIVE","physical_state":"LINK_UP",'
    '"netdev":"eth1","netdev_index":3}]'
)


def test_old_format():
    links = parse_rdma_link(OLD)
    assert [(l["device"], l["port"], l["state"], l["netdev"]) for l in links] == [  # noqa: E741
        ("i40iw0", 1, "DOWN", None),
        ("mlx5_0", 1, "DOWN", "ens803f0"),
        ("mlx5_1", 1, "ACTIVE", "ens803f1"),
    ]


def test_old_infiniband_fields_are_kept():
    [link] = parse_rdma_link(OLD_IB)
    assert link["device"] == "ibp0s9" and link["lid"] == "13397" and link["sm_lid"] == "49151"
    assert link["physical_state"] == "LINK_UP" and link["netdev"] is None


def test_new_format_with_padding():
    links = parse_rdma_link("# rdma link\n\n" + NEW)
    assert [(l["device"], l["netdev"]) for l in links] == [  # noqa: E741
        ("rxe0", "eth1"),
        ("rocep1s0f0", "enp1s0f0np0"),
    ]


def test_json():
    [link] = parse_rdma_link(JSON)
    assert link == {
        "device": "rxe0",
        "port": 1,
        "state": "ACTIVE",
        "physical_state": "LINK_UP",
        "netdev": "eth1",
        "ifindex": 0,
        "netdev_index": 3,
    }


def test_nothing():
    assert parse_rdma_link("") == [] and parse_rdma_link("[]") == []
