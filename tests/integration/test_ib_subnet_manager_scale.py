"""ib_subnet_manager at rack size: 64 GPU servers x 8 HCA ports, rendered by the role
through ansible-playbook and read by the real OpenSM on an ibsim fabric with those 512
ports.

tests/support/ib_rack.py writes both the inventory (each server's hca_port_guids, four
tenant groups of 16 servers) and the ibsim net file (two 40-port leaves per rail, 32
servers each, two spines, the SM host's HCA on rail 0's first leaf) from one GUID
scheme. The partitions are tests/fixtures/ib_rack/subnet_managers.yml, as a site writes
them from the inventory: rails (every GPU port full), tenant1-4 (the tenant's ports full),
storage (every GPU port limited), Default.

The role runs as a user runs it: playbooks/ib_fabric.yml with --check --diff (its
inventory check first, on the controller), up to the role's configuration tags, on the SM
host (connection local, this machine); the port OpenSM
binds is resolved by the role's ibstat on the simulated SM node
(ib_subnet_manager_diag_environment). --check writes nothing here: partitions.conf is the
"after" of the role's diff of that file (ansible-runner's event), and OpenSM is started
on it at the SM node. This machine has no systemd and so no OpenSM units, the case of a
--check before OpenSM is installed, which the role knows as __ib_subnet_manager_units_missing.

What is judged is what the fabric holds: OpenSM's log (no PARSE ERROR, no fallback to the
default partition, no member "not found") and every HCA port's own P_Key table
(smpquery pkeys), which must be exactly its partitions with the right membership bit.
The figures (render time, OpenSM's first sweep, file size, longest line) print with -s.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import REPO_ROOT
from ib_rack import SM_HOST, hca_ports, ibsim_net, inventory, sm_port
from ibsim_fabric import UMAD2SIM, ibsim_running, opensm_running, port_pkeys
from role_play import outcomes, recap, recaps, results

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("opensm", "ibsim", "ibstat", "smpquery"))
    or not os.path.exists(UMAD2SIM),
    reason="needs opensm, ibsim-utils and infiniband-diags (tests/harness/install-deps.sh)",
)

GROUP_VARS = REPO_ROOT / "tests" / "fixtures" / "ib_rack" / "subnet_managers.yml"
WRITE_PARTITIONS = "rdma.fabric.ib_subnet_manager : Write partitions.conf"
TAGS = "ib_subnet_manager-validate,ib_subnet_manager-port,ib_subnet_manager-config"
# OpenSM reads partitions.conf with fgets into char line[4096] (osm_prtn_config.c).
LINE_LIMIT = 4096
HOSTS_PER_TENANT = 16
# P_Keys: the membership bit 0x8000 set for full members, clear for limited ones.
DEFAULT, RAILS, STORAGE_LIMITED = 0xFFFF, 0x8010, 0x0200


def expected_pkeys(port):
    tenant = (port["index"] - 1) // HOSTS_PER_TENANT + 1
    return {DEFAULT, RAILS, 0x8100 | tenant, STORAGE_LIMITED}


@pytest.fixture(scope="module")
def rack(tmp_path_factory):
    """ibsim running the rack: (workdir, the simulator's environment)."""
    workdir = tmp_path_factory.mktemp("ib-rack")
    net = workdir / "rack.net"
    net.write_text(ibsim_net())
    with ibsim_running(net, workdir, "rdma-fabric-rack") as env:
        yield workdir, env


@pytest.fixture(scope="module")
def rendered(rack, run_playbook):
    """(the ansible-playbook run, partitions.conf as the role rendered it, seconds)."""
    workdir, env = rack
    diag = {"LD_PRELOAD": UMAD2SIM, "SIM_HOST": sm_port()["node"],
            "IBSIM_SOCKNAME": env["IBSIM_SOCKNAME"]}  # fmt: skip
    sm_vars = {
        "ansible_connection": "local",
        # The play says become: this machine runs the tests as root, without sudo.
        "ansible_become": False,
        "ansible_python_interpreter": sys.executable,
        "ib_subnet_manager_diag_environment": diag,
    }
    inventory_dir = workdir / "inventory"
    (inventory_dir / "group_vars").mkdir(parents=True)
    (inventory_dir / "hosts.yml").write_text(json.dumps(inventory(sm_vars)))
    shutil.copy(GROUP_VARS, inventory_dir / "group_vars" / "subnet_managers.yml")
    started = time.monotonic()
    run = run_playbook(
        "-i", str(inventory_dir / "hosts.yml"), "playbooks/ib_fabric.yml",
        "--check", "--diff", "--tags", TAGS,
        "-e", json.dumps({"__ib_subnet_manager_units_missing": True}),
        timeout=180,
    )  # fmt: skip
    seconds = round(time.monotonic() - started, 1)
    assert run.returncode == 0, run.output[-4000:]
    result = results(run, WRITE_PARTITIONS)[SM_HOST]
    [diff] = result["diff"]
    return run, diff["after"], seconds


@pytest.fixture(scope="module")
def fabric(rack, rendered):
    """(OpenSM's log text, {port GUID: its P_Keys} of every GPU HCA port, SubnetManager)."""
    workdir, env = rack
    _run, conf, _seconds = rendered
    with opensm_running(env, workdir, sm_port()["node"], conf) as sm:
        guids = [p["port_guid"] for p in hca_ports()]
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=4) as pool:
            tables = dict(
                zip(guids, pool.map(lambda g: port_pkeys(sm.diag_env, g), guids), strict=True)
            )
        print(f"\n{len(tables)} P_Key tables read in {time.monotonic() - started:.1f} s")
        yield sm.log.read_text(), tables, sm


def test_the_role_renders_the_racks_partitions_within_opensms_line_limit(rendered):
    run, conf, seconds = rendered
    assert outcomes(run, WRITE_PARTITIONS) == {SM_HOST: "ok"}, run.output[-4000:]
    # The inventory check ran on the controller; no GPU server was contacted.
    assert set(recaps(run)) == {"localhost", SM_HOST}
    assert recap(run, "localhost")["ok"] > 0 and recap(run, SM_HOST)["failed"] == 0
    ports = hca_ports()
    assert len(ports) == 512
    for port in ports:
        # rails, a tenant's partition and storage name every port once each.
        assert conf.count(port["port_guid"]) == 3, port
    longest = max(len(line.encode()) + 1 for line in conf.splitlines())
    assert longest < LINE_LIMIT, longest
    print(
        f"\nrendered through ansible-playbook in {seconds} s; partitions.conf "
        f"{len(conf.encode())} bytes, {conf.count(chr(10))} lines, longest {longest} bytes"
    )


def test_opensm_reads_every_member(fabric):
    log, _tables, sm = fabric
    assert "PARSE ERROR" not in log
    assert "retrying with default config" not in log
    # osm_prtn_add_port, at this debug level, for a member GUID the fabric lacks.
    assert " not found" not in log, [line for line in log.splitlines() if " not found" in line][:5]
    print(f"\nOpenSM: SUBNET UP {sm.up_seconds} s after it started (its log)")


def test_every_hca_port_holds_its_partitions_with_the_right_membership(fabric):
    _log, tables, _sm = fabric
    wrong = {
        port["port_guid"]: sorted(hex(p) for p in tables[port["port_guid"]])
        for port in hca_ports()
        if tables[port["port_guid"]] != expected_pkeys(port)
    }
    assert not wrong, f"{len(wrong)} of 512 ports: {dict(list(wrong.items())[:5])}"
