# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real OpenSM reads the partitions.conf the role writes, on ibsim's fabric.

Needs opensm, ibsim-utils (ibsim + libumad2sim) and infiniband-diags (ibaddr,
saquery), installed by tests/harness/install-deps.sh; skipped without them. The fabric
is tests/ibsim/spine-leaf-5hca.net; OpenSM runs at Hca1 (SIM_HOST), with its own log,
an opensm.conf with only force_log_flush and its cache in a temporary directory,
sweeping once (-s 0).

What is checked is what OpenSM itself reports: its log (PARSE ERROR / "Partition
configuration in error; retrying with default config" when it drops the file,
osm_prtn_config.c; "port 0x... not found" at verbose level for each member GUID the
fabric lacks, osm_prtn.c osm_prtn_add_port) and the SA's P_Key tables of the members
that exist (saquery PKTR <LID>; ibsim answers one SA record per query at a time, so
each port is asked by LID, found with ibaddr -G).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    normalize_partitions,
    partition_line,
)
from ansible_collections.rdma.fabric.plugins.module_utils.saquery import parse_saquery, pkeys
from ibsim_fabric import UMAD2SIM, ibsim_running, opensm_running

NET = Path(__file__).resolve().parents[1] / "ibsim" / "spine-leaf-5hca.net"
# Port GUIDs of Hca2-Hca4 (spine-leaf-5hca.net); Hca1 is the SM's own port.
PRESENT = ["0x0002c90000001021", "0x0002c90000001031", "0x0002c90000001041"]
# 1,021 members the fabric lacks: 1,024 members in all, ~25,000 bytes on one line.
ABSENT = [f"0x0002c9000010{i:04x}" for i in range(1021)]

pytestmark = pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("opensm", "ibsim", "saquery", "ibaddr"))
    or not os.path.exists(UMAD2SIM),
    reason="needs opensm, ibsim-utils and infiniband-diags (tests/harness/install-deps.sh)",
)


def big_partition_records():
    parts = [
        {"name": "Default", "pkey": 0x7FFF, "members": ["ALL=full", "SELF=full"]},
        {
            "name": "rails",
            "pkey": 0x0010,
            "ipoib": True,
            "members": [f"{guid}=full" for guid in PRESENT + ABSENT],
        },
    ]
    return normalize_partitions(parts, 5)


def one_line_rendering(record):
    """How the role wrote a partition before: everything on one line."""
    members = ", ".join(m["guid"] + "=" + m["membership"] for m in record["members"])
    return f"{record['name']}={record['pkey_hex']}, ipoib, mtu=5 : {members} ;"


@pytest.fixture(scope="module")
def ibsim(tmp_path_factory):
    with ibsim_running(NET, tmp_path_factory.mktemp("ibsim"), "rdma-fabric-sm") as env:
        yield env


def run_opensm(env, workdir, conf_text):
    """Start OpenSM at Hca1 on `conf_text`; (log text, {port GUID: P_Keys}) after SUBNET UP."""
    with opensm_running(env, workdir, "Hca1", conf_text) as sm:
        tables = {}
        for guid in PRESENT:
            addr = subprocess.run(
                ["ibaddr", "-G", guid], env=sm.diag_env, capture_output=True, text=True, check=True
            ).stdout
            lid = addr.split("LID start")[1].split()[0]
            pktr = subprocess.run(
                ["saquery", "--smkey", "1", "PKTR", str(int(lid, 0))],
                env=sm.diag_env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            tables[guid] = pkeys(parse_saquery(pktr))
        return sm.log.read_text(), tables


def assert_read_whole(conf_text, log_text, tables):
    assert "PARSE ERROR" not in log_text
    assert "retrying with default config" not in log_text
    for guid in ABSENT:
        # osm_prtn_add_port logs the GUID without leading zeros.
        assert f"port 0x{int(guid, 16):x} not found" in log_text, guid
    for guid in PRESENT:
        assert 0x8010 in tables[guid], (guid, [hex(p) for p in tables[guid]])
    assert max(len(line.encode()) + 1 for line in conf_text.splitlines()) < 4096


def test_opensm_reads_every_member_of_a_1024_member_partition(ibsim, tmp_path):
    records = big_partition_records()
    conf = "\n".join(partition_line(r) for r in records) + "\n"
    assert len(records[1]["members"]) == 1024
    log_text, tables = run_opensm(ibsim, tmp_path, conf)
    assert_read_whole(conf, log_text, tables)
    assert conf.count("\n") > 3  # the big partition went on continuation lines


def test_one_line_rendering_loses_the_partition(ibsim, tmp_path):
    """The check above fails for the old rendering: OpenSM cuts the line at 4,094 bytes."""
    records = big_partition_records()
    conf = partition_line(records[0]) + "\n" + one_line_rendering(records[1]) + "\n"
    log_text, tables = run_opensm(ibsim, tmp_path, conf)
    assert "retrying with default config" in log_text
    with pytest.raises(AssertionError):
        assert_read_whole(conf, log_text, tables)


def test_guid_zero_member_drops_every_partition(ibsim, tmp_path):
    """Why partition_errors refuses GUID 0: OpenSM's strtoull gives 0, 'bad PortGUID'."""
    conf = (
        "Default=0x7fff : ALL=full, SELF=full ;\n"
        f"rails=0x0010 : {PRESENT[0]}=full, 0x0=full, {PRESENT[1]}=full ;\n"
    )
    log_text, tables = run_opensm(ibsim, tmp_path, conf)
    assert "bad PortGUID" in log_text
    assert "retrying with default config" in log_text
    assert all(0x8010 not in table for table in tables.values())


def test_decimal_member_guid_is_the_port_opensm_reads(ibsim, tmp_path):
    """OpenSM reads a member with strtoull base 0: decimal digits are the port's GUID."""
    decimal = str(int(PRESENT[0], 16))
    conf = f"Default=0x7fff : ALL=full, SELF=full ;\nrails=0x0010 : {decimal}=full ;\n"
    _log, tables = run_opensm(ibsim, tmp_path, conf)
    assert 0x8010 in tables[PRESENT[0]]
    records = normalize_partitions([{"name": "rails", "pkey": 0x10, "members": [decimal]}])
    assert records[0]["members"][0]["guid"] == PRESENT[0]
