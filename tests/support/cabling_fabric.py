"""A synthetic, correctly cabled RoCE fabric at rack scale for the cabling check
(module_utils/cabling.py): the unit test of its cost (tests/unit/test_cabling_index.py)
and its benchmark (tests/bench/bench_cabling.py) judge the same one.

HOSTS hosts x RAILS rails; each rail a leaf_group of LEAVES_PER_RAIL leaves;
rdma_cabling_ports maps every host index to one port per rail. Each host's lldpd hears its
leaf on every rail netdev, and every leaf's own LLDP table (as rdma.fabric.switch_lldp
parses it) names the hosts on its ports: what roles/rdma_verify/tasks/cabling.yml hands
the judge.
"""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils import cabling

RAILS = 8
LEAVES_PER_RAIL = 8


def fabric(hosts, rails=RAILS, leaves_per_rail=LEAVES_PER_RAIL, neighbor=dict):
    """(plan, switch_reads, {host: (health, lldp)}); neighbor: the type of each leaf
    table's neighbour entries (a counting dict, for a test of the work done)."""
    names = [f"gpu{i:04d}" for i in range(hosts)]
    groups = {
        f"rail{r}_leaves": [f"leaf-r{r}-{k}" for k in range(leaves_per_rail)] for r in range(rails)
    }
    rdma_rails = [
        {"name": f"rail{r}", "device": f"mlx5_{r}", "leaf_group": f"rail{r}_leaves"}
        for r in range(rails)
    ]
    per_leaf = -(-hosts // leaves_per_rail)
    ports = {
        f"leaf-r{r}-{k}": {
            i: f"swp{i - k * per_leaf + 1}"
            for i in range(k * per_leaf, min(hosts, (k + 1) * per_leaf))
        }
        for r in range(rails)
        for k in range(leaves_per_rail)
    }
    hosts_vars = {name: {"rdma_rail_host_index": i} for i, name in enumerate(names)}
    plan, errors = cabling.expected_cabling(rdma_rails, hosts_vars, ports, groups)
    assert not errors, errors[:3]
    reads = {leaf: {} for leaf in ports}
    per_host = {}
    for i, name in enumerate(names):
        k = i // per_leaf
        rails_info, neighbors = [], {}
        for r in range(rails):
            leaf, netdev = f"leaf-r{r}-{k}", f"ens{r}np0"
            port = ports[leaf][i]
            reads[leaf][port] = [neighbor(host=name, port=netdev)]
            neighbors[netdev] = [{"switch": leaf, "port": port}]
            rails_info.append(
                {
                    "rail": f"rail{r}",
                    "device": f"mlx5_{r}",
                    "netdev": netdev,
                    "port": 1,
                    "link_layer": "Ethernet",
                    "active": True,
                }
            )
        per_host[name] = (
            {"rails": rails_info, "checks": []},
            {"neighbors": neighbors, "system_name": name},
        )
    return plan, reads, per_host
