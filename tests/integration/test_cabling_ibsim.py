"""InfiniBand: the cabling check on what the real tools read.

ibsim (ibsim-utils) runs tests/ibsim/rails-swapped.net, where gpu-a02's two rail cables
are swapped between the leaves; the real ibnetdiscover and iblinkinfo (infiniband-diags)
read the fabric from the SM host's node (libumad2sim, SIM_HOST), one fabric-wide read
each as the role does from an SM host; module_utils/cabling.py parses and judges.
Needs ibsim-utils and infiniband-diags (tests/harness/install-deps.sh); skipped
without them. No SM is needed: both tools walk the fabric with directed-route SMPs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.cabling import (
    expected_cabling,
    judge_host,
    observed_from_ib,
    parse_iblinkinfo,
    parse_ibnetdiscover,
)
from ibsim_fabric import UMAD2SIM, ibsim_running

NET = Path(__file__).resolve().parents[1] / "ibsim" / "rails-swapped.net"

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("ibsim", "ibnetdiscover", "iblinkinfo"))
    or not os.path.exists(UMAD2SIM),
    reason="needs ibsim-utils and infiniband-diags (tests/harness/install-deps.sh)",
)

RAILS = [
    {"name": "rail0", "device": "mlx5_0", "link_layer": "infiniband", "leaf": "leaf-rail0"},
    {"name": "rail1", "device": "mlx5_1", "link_layer": "infiniband", "leaf": "leaf-rail1"},
]
HOSTS = {"gpu-a01": {"rdma_rail_host_index": 1}, "gpu-a02": {"rdma_rail_host_index": 2}}
# IB leaf ports are numbers; host index i on port i of each leaf.
PORTS = {"leaf-rail0": {1: 1, 2: 2}, "leaf-rail1": {1: 1, 2: 2}}
NODE_GUIDS = {
    "gpu-a01": {"mlx5_0": "0x0002c90000001010", "mlx5_1": "0x0002c90000001020"},
    "gpu-a02": {"mlx5_0": "0002:c900:0000:1030", "mlx5_1": "0002:c900:0000:1040"},
}


@pytest.fixture(scope="module")
def reads(tmp_path_factory):
    """{tool: stdout} of ibnetdiscover and iblinkinfo on the swapped fabric."""
    workdir = tmp_path_factory.mktemp("ibsim-cabling")
    with ibsim_running(NET, workdir, "rdma-fabric-cabling") as env:
        sim = dict(env, SIM_HOST="sm1 mlx5_0", LD_PRELOAD=UMAD2SIM)
        yield {
            tool: subprocess.run(
                [tool], env=sim, capture_output=True, text=True, timeout=60, check=True
            ).stdout
            for tool in ("ibnetdiscover", "iblinkinfo")
        }


def host_rails(host):
    return [
        {"rail": "rail0", "device": "mlx5_0", "port": 1, "netdev": None},
        {"rail": "rail1", "device": "mlx5_1", "port": 1, "netdev": None},
    ]


def judge(links, host, guids=True):
    plan, errors = expected_cabling(RAILS, HOSTS, PORTS)
    assert errors == []
    observed = observed_from_ib(links, host_rails(host), host, NODE_GUIDS[host] if guids else {})
    return judge_host(host, plan[host], observed, host_rails(host))


@pytest.mark.parametrize("tool", ["ibnetdiscover", "iblinkinfo"])
def test_the_swapped_host_is_one_finding_and_the_other_is_as_planned(reads, tool):
    parse = {"ibnetdiscover": parse_ibnetdiscover, "iblinkinfo": parse_iblinkinfo}[tool]
    links = parse(reads[tool])
    # Five CA ports in the fabric, each on its leaf.
    assert len(links) == 5
    guids = tool == "ibnetdiscover"  # iblinkinfo prints no node GUID of a CA
    good = judge(links, "gpu-a01", guids)
    assert [c["detail"] for c in good["checks"]] == [
        "cabled to MF0;leaf-rail0:MQM9700/U1 1 as planned",
        "cabled to MF0;leaf-rail1:MQM9700/U1 1 as planned",
    ]
    bad = judge(links, "gpu-a02", guids)
    failed = [c for c in bad["checks"] if not c["ok"]]
    assert [c["detail"] for c in failed] == [
        "gpu-a02 rail0 (mlx5_0) reaches MF0;leaf-rail1:MQM9700/U1 2; the plan says "
        "leaf-rail0: rails 0 and 1 look swapped"
    ]
    assert bad["miscabled"] == {
        "rail0": "cabling: rails 0 and 1 look swapped",
        "rail1": "cabling: rails 0 and 1 look swapped",
    }


def test_ibnetdiscover_links_carry_node_and_switch_guids(reads):
    links = {link["ca_desc"]: link for link in parse_ibnetdiscover(reads["ibnetdiscover"])}
    assert links["gpu-a02 mlx5_0"] == {
        "ca_guid": "0x0002c90000001030",
        "ca_desc": "gpu-a02 mlx5_0",
        "ca_port": 1,
        "port_guid": "0x0002c90000001031",
        "switch_guid": "0x0002c90000000b02",
        "switch": "MF0;leaf-rail1:MQM9700/U1",
        "port": 2,
    }


def test_iblinkinfo_links_carry_switch_guids(reads):
    links = {link["ca_desc"]: link for link in parse_iblinkinfo(reads["iblinkinfo"])}
    assert links["gpu-a02 mlx5_1"]["switch_guid"] == "0x0002c90000000b01"
    assert links["gpu-a02 mlx5_1"]["port"] == 2
    assert links["gpu-a02 mlx5_1"]["port_guid"] == "0x0002c90000001041"
