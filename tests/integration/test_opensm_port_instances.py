"""Several OpenSM instances on one host, one per port, when the ports are on different
subnets (one subnet per rail): module_utils/opensm.py port_instances / port_instance_errors.

Each instance is opensm@<port GUID> with its own opensm.conf, partitions.conf, log and
cache directory (OpenSM keeps guid2lid and its SA dump under OSM_CACHE_DIR,
opensm/osm_db_files.c; two instances sharing /var/cache/opensm would trade LIDs), its own
priority and partitions. The last test runs two real OpenSM 3.3.23 on ibsim with
tests/ibsim/two-planes.net (two subnets without a common link) from the files these
records describe: each plane's master is its own instance, and each plane's other port
holds only its plane's partition.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    instance_options,
    partition_line,
    port_instance_errors,
    port_instances,
)
from ansible_collections.rdma.fabric.plugins.module_utils.saquery import parse_saquery, pkeys
from ansible_collections.rdma.fabric.plugins.module_utils.sminfo import parse_sminfo

DEFAULT = {"name": "Default", "pkey": 0x7FFF, "members": ["ALL=full", "SELF=full"]}
PORTS = [
    {
        "port_guid": "0x0002c90000002011",
        "subnet": "rail0",
        "priority": 15,
        "partitions": [DEFAULT, {"name": "rail0", "pkey": 0x10, "members": ["ALL=full"]}],
    },
    {
        "port_guid": "0x0002C90000003011",
        "subnet": "rail1",
        "priority": 15,
        "partitions": [DEFAULT, {"name": "rail1", "pkey": 0x20, "members": ["ALL=full"]}],
    },
]


def test_one_instance_per_port_with_its_own_files():
    instances = port_instances(PORTS, "/etc/opensm")
    assert [i["unit"] for i in instances] == [
        "opensm@0x0002c90000002011.service",
        "opensm@0x0002c90000003011.service",
    ]
    second = instances[1]
    assert second["conf_file"] == "/etc/opensm/opensm-0x0002c90000003011.conf"
    assert second["partitions_file"] == "/etc/opensm/partitions-0x0002c90000003011.conf"
    assert second["log_file"] == "/var/log/opensm-0x0002c90000003011.log"
    assert second["cache_dir"] == "/var/cache/opensm/0x0002c90000003011"
    assert second["priority"] == 15 and second["subnet"] == "rail1"
    assert [r["pkey"] for r in second["partitions"]] == [0x7FFF, 0x20]
    options = instance_options(second, {"sweep_interval": "10", "qos": "FALSE"})
    assert options == {
        "sweep_interval": "10",
        "qos": "FALSE",
        "guid": "0x0002c90000003011",
        "sm_priority": "15",
        "partition_config_file": second["partitions_file"],
        "log_file": second["log_file"],
        "dump_files_dir": second["cache_dir"],
    }


P = "ib_subnet_manager_ports"


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ([PORTS[0], PORTS[0]], P + "[1]: port 0x0002c90000002011 is listed twice"),
        ([PORTS[0], dict(PORTS[1], subnet="rail0")],
         P + "[1]: subnet rail0 has an instance already (ports[0])"),
        ([dict(PORTS[0], priority=16)], P + "[0]: priority must be 0-15; got 16"),
        ([dict(PORTS[0], port_guid="0x0")], P + "[0]: port_guid: '0x0' is GUID 0"),
        ([dict(PORTS[0], subnet="")], P + "[0]: subnet must be named"),
        ([dict(PORTS[0], partitions=[{"name": "x", "pkey": 0x10, "members": ["ALL"]}])],
         P + "[0] (0x0002c90000002011): ib_subnet_manager_partitions has no default"),
    ],
)  # fmt: skip
def test_bad_ports_are_named(ports, message):
    errors = port_instance_errors(ports)
    assert any(message in e for e in errors), errors


def test_good_ports_pass():
    assert port_instance_errors(PORTS) == []


UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
NET = Path(__file__).resolve().parents[1] / "ibsim" / "two-planes.net"
# The simulated node of each port (two-planes.net) and the other port of its plane.
SIM_NODE = {"0x0002c90000002011": "HcaA1", "0x0002c90000003011": "HcaB1"}
OTHER = {
    "0x0002c90000002011": ("HcaA2", "0x0002c90000002021", 0x8010),
    "0x0002c90000003011": ("HcaB2", "0x0002c90000003021", 0x8020),
}


@pytest.mark.skipif(
    not all(shutil.which(t) for t in ("opensm", "ibsim", "saquery", "sminfo", "ibaddr"))
    or not os.path.exists(UMAD2SIM),
    reason="needs opensm, ibsim-utils and infiniband-diags (tests/harness/install-deps.sh)",
)
def test_two_instances_run_two_planes_on_ibsim(tmp_path):
    env = dict(os.environ, IBSIM_SOCKNAME=f"rdma-fabric-planes-{os.getpid()}")
    with open(tmp_path / "ibsim.out", "w") as out:
        sim = subprocess.Popen(
            ["ibsim", "-s", "-n", str(NET)], env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    started = []
    try:
        deadline = time.monotonic() + 20
        while "Network simulator ready" not in (tmp_path / "ibsim.out").read_text():
            assert sim.poll() is None and time.monotonic() < deadline, "ibsim did not start"
            time.sleep(0.2)
        instances = port_instances(PORTS, str(tmp_path / "etc"))
        for inst in instances:
            # The files the records name, under tmp_path: /var/log and /var/cache moved too.
            inst["log_file"] = str(tmp_path / Path(inst["log_file"]).name)
            inst["cache_dir"] = str(tmp_path / "cache" / inst["port_guid"])
            Path(inst["cache_dir"]).mkdir(parents=True)
            Path(inst["conf_file"]).parent.mkdir(parents=True, exist_ok=True)
            Path(inst["partitions_file"]).write_text(
                "\n".join(partition_line(r) for r in inst["partitions"]) + "\n"
            )
            options = instance_options(inst, {"force_log_flush": "TRUE"})
            Path(inst["conf_file"]).write_text("".join(f"{k} {v}\n" for k, v in options.items()))
            osm_env = dict(
                env, SIM_HOST=SIM_NODE[inst["port_guid"]], LD_PRELOAD=UMAD2SIM,
                OSM_CACHE_DIR=inst["cache_dir"], OSM_TMP_DIR=inst["cache_dir"],
            )  # fmt: skip
            started.append(
                subprocess.Popen(
                    ["opensm", "--config", inst["conf_file"], "-s", "0"],
                    env=osm_env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    stdin=subprocess.DEVNULL,
                )  # fmt: skip
            )
        for inst in instances:
            log = Path(inst["log_file"])
            deadline = time.monotonic() + 60
            while not (log.exists() and "SUBNET UP" in log.read_text()):
                assert all(p.poll() is None for p in started), "an OpenSM exited"
                assert time.monotonic() < deadline, f"{inst['unit']}: no SUBNET UP"
                time.sleep(0.3)
        for inst in instances:
            node, other_guid, pkey = OTHER[inst["port_guid"]]
            diag = dict(env, SIM_HOST=node, LD_PRELOAD=UMAD2SIM)
            master = parse_sminfo(
                subprocess.run(["sminfo"], env=diag, capture_output=True, text=True).stdout
            )
            assert (master["guid"], master["priority"], master["state"]) == (
                inst["port_guid"], 15, 3,
            ), (node, master)  # fmt: skip
            # ibsim answers one SA record per query: ask for the port by its LID.
            addr = subprocess.run(
                ["ibaddr", "-G", other_guid], env=diag, capture_output=True, text=True, check=True
            ).stdout
            lid = int(addr.split("LID start")[1].split()[0], 0)
            pktr = subprocess.run(
                ["saquery", "--smkey", "1", "PKTR", str(lid)], env=diag, capture_output=True,
                text=True, check=True,
            ).stdout  # fmt: skip
            table = pkeys(parse_saquery(pktr))
            assert pkey in table and ({0x8010, 0x8020} - {pkey}).isdisjoint(table), (node, pktr)
    finally:
        for proc in started:
            proc.terminate()
            proc.wait(timeout=20)
        sim.terminate()
        sim.wait(timeout=10)
