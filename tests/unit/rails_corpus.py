"""Rail plans whose normalize_rails result is pinned (tests/fixtures/rails/hand_validator.json).

Each entry is (rdma_rails, policy_mtu). VALID fill identically and BAD are refused with
the same messages as the hand validator of commit 2bbd6b0, before ansible-core's
ArgumentSpecValidator took the types, choices and key sets (fabric_schema.RAIL_OPTIONS).
The plans the unit tests of that commit gave normalize_rails come first, then more.
"""

VALID = [
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "leaf": "leaf-rail0"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.1.0.0/24", "leaf": "leaf-rail1"},
            {"name": "rail2", "device": "mlx5_2", "subnet": "10.2.0.0/24", "leaf": "leaf-rail2"},
            {"name": "rail3", "device": "mlx5_3", "subnet": "10.3.0.0/24", "leaf": "leaf-rail3"},
            {"name": "x", "device": "mlx5_9", "subnet": "10.9.0.0/24", "leaf_group": "x_leaves"},
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "leaf": "leaf0",
            },
            {
                "name": "rail1",
                "device": "mlx5_1",
                "subnet": "10.0.1.0/24",
                "prefix_length": 31,
                "mtu": 4200,
                "leaf": "leaf1",
            },
        ],
        9000,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "leaf": "leaf0",
            },
            {
                "name": "rail1",
                "device": "mlx5_1",
                "subnet": "10.0.1.0/24",
                "prefix_length": 31,
                "mtu": 4200,
                "leaf": "leaf1",
            },
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 30,
                "gateway": None,
                "leaf": "leaf0",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": None,
                "gateway": None,
                "leaf": "leaf0",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "leaf": "leaf0",
            },
            {
                "name": "rail1",
                "device": "mlx5_1",
                "subnet": "10.0.1.0/24",
                "prefix_length": 31,
                "mtu": 4200,
                "leaf": "leaf0",
            },
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "leaf": None,
                "leaf_group": "rail0_leaves",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "leaf": "leaf0",
                "subnet6": "fd00::/64",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "ibp65s0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "subnet": "10.8.0.0/24",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx4_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "subnet": "10.8.0.0/24",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "subnet": "10.8.0.0/24",
                "pkeys": [],
            }
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24"},
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "datagram",
                "pkeys": [{"partition": "storage"}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "datagram",
                "pkeys": [{"partition": "storage", "mtu": 4092}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "datagram",
                "mtu": 4092,
                "pkeys": [{"partition": "storage"}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "pkeys": [],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx4_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "pkeys": [],
            }
        ],
        None,
    ),
    (
        [{"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "gateway": "10.0.1.254"}],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 30,
                "gateway": "peer",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "subnet6": "fd00:0:0:10::/64",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
                "subnet6": "fd00:0:0:10::/64",
            }
        ],
        None,
    ),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "127.0.0.0/24"}], None),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "169.254.0.0/24"}], None),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "224.0.0.0/24"}], None),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "0.0.0.0/24"}], None),
    (
        [{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": "fe80::/64"}],
        None,
    ),
    (
        [{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": "ff02::/64"}],
        None,
    ),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": "::1/128"}], None),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "subnet6": "fd00:0:0:10::/64",
            },
            {
                "name": "rail1",
                "device": "mlx5_1",
                "subnet": "10.0.1.0/24",
                "mtu": 4200,
                "gateway": "10.0.1.254",
            },
            {
                "name": "l3r2",
                "device": "mlx5_2",
                "subnet": "10.2.0.0/16",
                "prefix_length": 31,
                "gateway": "peer",
            },
            {
                "name": "ib0",
                "device": "mlx4_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "subnet": "10.9.0.0/24",
                "pkeys": [{"partition": "storage", "subnet": "10.19.0.0/24", "mtu": 4092}],
            },
        ],
        9000,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "subnet6": "fd00:0:0:10::/64",
            }
        ],
        9000,
    ),
    ([{"name": "r0", "netdev": "ens17np0", "subnet": "10.0.0.0/24"}], None),
    (
        [
            {
                "name": "ib0",
                "device": "mlx4_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "subnet": "10.9.0.0/24",
                "pkeys": [{"partition": "storage", "subnet": "10.19.0.0/24", "mtu": 4092}],
            }
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "mtu": 4200},
        ],
        9000,
    ),
    (
        [
            {"name": "r0", "netdev": "ens1", "subnet": "10.0.0.0/24"},
            {"name": "ib0", "device": "mlx5_4", "link_layer": "infiniband"},
            {
                "name": "ib1",
                "device": "mlx5_5",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
            },
        ],
        4200,
    ),
    (None, None),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "mtu": 4200},
        ],
        None,
    ),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.1.0.0/24",
                "prefix_length": 31,
                "gateway": "peer",
            }
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/16"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.1.0.0/16"},
            {"name": "rail2", "device": "mlx5_2", "subnet": "10.2.0.0/16"},
            {"name": "rail3", "device": "mlx5_3", "subnet": "10.3.0.0/16"},
            {"name": "rail4", "device": "mlx5_4", "subnet": "10.4.0.0/16"},
            {"name": "rail5", "device": "mlx5_5", "subnet": "10.5.0.0/16"},
            {"name": "rail6", "device": "mlx5_6", "subnet": "10.6.0.0/16"},
            {"name": "rail7", "device": "mlx5_7", "subnet": "10.7.0.0/16"},
        ],
        None,
    ),
    (
        [
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "r1", "pci": "0000:2a:00.0", "subnet": "10.0.1.0/24"},
            {"name": "r2", "netdev": "ens3np0", "subnet": "10.0.2.0/24"},
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "netdev": "ens2np0", "subnet": "10.0.1.0/24"},
            {"name": "rail2", "device": "mlx5_2", "subnet": "10.0.2.0/24"},
        ],
        None,
    ),
    ([{"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 9000}], None),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "port": "1",
                "mtu": "4200",
                "table": "101",
                "prefix_length": "31",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "port": 2,
                "table": 252,
                "prefix_length": 24,
            }
        ],
        "9000",
    ),
    (
        [{"name": "ib0", "device": "mlx5_0", "link_layer": "InfiniBand", "subnet": "10.8.0.0/24"}],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "link_layer": "Ethernet"}], None),
    ([{"name": "ib0", "device": "mlx5_0", "link_layer": "infiniband", "pkeys": ["storage"]}], None),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "",
                "pkeys": [{"partition": "s", "mtu": "2044", "subnet": ""}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": None,
                "mtu": None,
                "pkeys": None,
                "subnet6": None,
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "mtu": None,
                "subnet6": None,
                "gateway": "",
                "prefix_length": None,
                "pkeys": None,
                "ipoib_mode": None,
            }
        ],
        4200,
    ),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "mtu": "",
                "gateway": None,
                "subnet6": "",
            }
        ],
        None,
    ),
    ([{"name": "r-0_A", "device": "", "netdev": "ens1", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "pci": "17:00.0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "pci": "0000:AB:00.1", "subnet": "10.0.0.0/24", "netdev": None}], None),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "leaf_group": "g",
                "leaf": None,
            }
        ],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "leaf": 5}], None),
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "subnet6": "fd00::/64",
                "gateway": "10.0.0.1",
            }
        ],
        None,
    ),
    ([], None),
    ("", None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "pkeys": []}], None),
    (
        [
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "r1", "device": "mlx5_0", "subnet": "10.0.1.0/24", "port": 2},
        ],
        None,
    ),
    # An L3 rail with subnet6: the /127s follow from prefix_length (no key of its own).
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 30,
                "gateway": "peer",
                "subnet6": "2001:db8::/120",
            }
        ],
        None,
    ),
]

BAD = [
    ([{"name": "rail0", "netdev": "ens1", "subnet": "10.100.0.0/16", "vlan": 5}], None),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.0.0/24"},
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.0.128/25"},
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.0.0/16"},
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "subnet": "10.0.0.0/24",
                "pkeys": [{"partition": "storage", "subnet": "10.0.0.0/24"}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "subnet6": "fd00:1::/64",
            },
            {
                "name": "rail1",
                "device": "mlx5_1",
                "subnet": "10.0.1.0/24",
                "subnet6": "fd00:1::/64",
            },
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "gateway": "10.0.1.0"},
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "gateway": "10.0.1.255"},
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 30,
                "gateway": "10.0.0.0",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "rail0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "gateway": "10.0.0.0",
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "storage", "mtu": 65520}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "storage", "mtu": 100}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "storage", "mtu": "big"}],
            }
        ],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.1/24"}], None),
    ([{"name": "r0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "device": "mlx5_0", "netdev": "ens1", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "pci": "17:00", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 9217}], None),
    ([{"name": "r0", "device": "mlx5_0", "link_layer": "infiniband", "mtu": 9000}], None),
    ([{"name": "r0", "device": "mlx5_0", "link_layer": "roce"}], None),
    ([{"name": "rail zero", "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "vlan": 5}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "prefix_length": 29}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "peer"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "10.9.0.1"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "pkeys": ["x"]}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet6": "10.0.0.0/24", "subnet": "10.0.0.0/24"}], None),
    (
        [
            {"name": "a", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "b", "device": "mlx5_0", "subnet": "10.0.1.0/24", "table": 100},
        ],
        None,
    ),
    (
        [
            {"name": "a", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "b", "device": "mlx5_1", "subnet": "10.0.1.0/24", "table": 100},
        ],
        None,
    ),
    (
        [
            {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "rail1", "device": "mlx5_1", "subnet": "10.0.1.0/24", "mtu": 4200},
            {"name": "rail0", "device": "mlx5_9", "subnet": "10.0.0.0/24"},
        ],
        None,
    ),
    ("rail0", None),
    ([{"name": 5, "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": None, "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "", "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "aaaaaaaaaaaaa", "device": "mlx5_0", "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "device": 5, "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "netdev": ["ens1"], "subnet": "10.0.0.0/24"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "port": "x"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "port": True}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "port": 3}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "port": 1.0}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "port": None}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": "abc"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": [9000]}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": True}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 9000.0}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "mtu": 1279}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "link_layer": 5}], None),
    (
        [{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "link_layer": ["ethernet"]}],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "link_layer": None}], None),
    ([{"name": "ib0", "device": "mlx5_0", "link_layer": "infiniband", "ipoib_mode": "ud"}], None),
    ([{"name": "ib0", "device": "mlx5_0", "link_layer": "infiniband", "ipoib_mode": 5}], None),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "mtu": 65521,
            }
        ],
        None,
    ),
    (
        [{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "ipoib_mode": "connected"}],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "ipoib_mode": ""}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": 5}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": ["10.0.0.0/24"]}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/33"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "fd00::/64"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": "fd00::1/64"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": 5}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "table": "x"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "table": 0}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "table": 253}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "table": None}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "table": True}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "prefix_length": "x"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "prefix_length": True}], None),
    ([{"name": "r0", "device": "mlx5_0", "prefix_length": 31}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "nope"}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": 5}], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "gateway": "fd00::1"}], None),
    ([{"name": "ib0", "device": "mlx5_0", "link_layer": "infiniband", "pkeys": "storage"}], None),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": {"partition": "storage"},
            }
        ],
        None,
    ),
    ([{"name": "ib0", "device": "mlx5_0", "link_layer": "infiniband", "pkeys": [5]}], None),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"subnet": "10.9.0.0/24"}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "s", "vlan": 1}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": 5}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "s", "subnet": "10.9.0.1/24"}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "s", "subnet": 5}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "s", "mtu": [1]}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "ipoib_mode": "connected",
                "pkeys": [{"partition": "s", "mtu": 65521}],
            }
        ],
        None,
    ),
    (
        [
            {
                "name": "ib0",
                "device": "mlx5_0",
                "link_layer": "infiniband",
                "pkeys": [{"partition": "s"}, {"partition": "t", "foo": 1}, "u", 7],
            }
        ],
        None,
    ),
    (["rail0"], None),
    ([None], None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"}, 5], None),
    ({"name": "r0"}, None),
    (5, None),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "vlan": 5, "bond": "x"}], None),
    (
        [
            {
                "name": "r 0",
                "device": None,
                "subnet": "10.0.0.0/24",
                "port": "x",
                "mtu": "y",
                "table": -1,
            }
        ],
        None,
    ),
    (
        [
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "r1", "netdev": "ens1", "subnet": "10.0.1.0/24"},
            {"name": "r2", "netdev": "ens1", "subnet": "10.0.2.0/24"},
        ],
        None,
    ),
    ([{"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "pci": "0000:17:00.0"}], None),
    (
        [
            {"name": "r0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
            {"name": "r1", "device": "mlx5_1", "subnet": "10.0.0.0/24", "table": 100, "mtu": 1},
        ],
        None,
    ),
    # An L3 rail's subnet6 must hold a /127 for each host: a /128 holds none.
    (
        [
            {
                "name": "r0",
                "device": "mlx5_0",
                "subnet": "10.0.0.0/24",
                "prefix_length": 31,
                "subnet6": "2001:db8::1/128",
            }
        ],
        None,
    ),
]
