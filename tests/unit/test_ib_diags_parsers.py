"""module_utils parsers of infiniband-diags output: ibstat, sminfo, saquery (and ib_guid).

Fixtures: tests/fixtures/ibsim_*.txt are our own captures from ibsim (see the
README there). The hardware-shaped texts below are written for these tests after public
captures: ibstat of an H100 node with eight ConnectX-7 NDR ports and ConnectX-6 Dx
Ethernet ports, some down (gpud's test data); sminfo as modern infiniband-diags prints
it (decimal LID, state on the line), as OFED 1.x documentation shows it (hex LID, no
state), wrapped by a mail client, and its failure text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.filter.ibstat import FilterModule as IbstatFilter
from ansible_collections.rdma.fabric.plugins.filter.saquery import FilterModule as SaqueryFilter
from ansible_collections.rdma.fabric.plugins.filter.sminfo import FilterModule as SminfoFilter
from ansible_collections.rdma.fabric.plugins.module_utils.ib_guid import normalize_guid
from ansible_collections.rdma.fabric.plugins.module_utils.ibstat import parse_ibstat
from ansible_collections.rdma.fabric.plugins.module_utils.saquery import parse_saquery, pkeys
from ansible_collections.rdma.fabric.plugins.module_utils.sminfo import parse_sminfo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


IBSTAT_MIXED = """\
CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.1002
\tHardware version: 0
\tNode GUID: 0x946dae0300cde72c
\tSystem image GUID: 0x946dae0300cde72c
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 75
\t\tLMC: 0
\t\tSM lid: 334
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0x946dae0300cde72c
\t\tLink layer: InfiniBand
CA 'mlx5_1'
\tCA type: MT4125
\tNumber of ports: 1
\tFirmware version: 22.38.1002
\tHardware version: 0
\tNode GUID: 0x946dae0300c2b690
\tSystem image GUID: 0x946dae0300c2b690
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 100
\t\tBase lid: 0
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0x00010000
\t\tPort GUID: 0x966daefffec2b690
\t\tLink layer: Ethernet
CA 'mlx5_2'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.1002
\tHardware version: 0
\tNode GUID: 0x946dae0300cdf0b4
\tSystem image GUID: 0x946dae0300cdf0b4
\tPort 1:
\t\tState: Down
\t\tPhysical state: Disabled
\t\tRate: 10
\t\tBase lid: 65535
\t\tLMC: 0
\t\tSM lid: 0
\t\tCapability mask: 0xa751e848
\t\tPort GUID: 0x946dae0300cdf0b4
\t\tLink layer: InfiniBand
"""


def test_ibstat_ports_of_a_mixed_host():
    ports = parse_ibstat(IBSTAT_MIXED)
    assert [(p["ca"], p["port"], p["link_layer"]) for p in ports] == [
        ("mlx5_0", 1, "InfiniBand"),
        ("mlx5_1", 1, "Ethernet"),
        ("mlx5_2", 1, "InfiniBand"),
    ]
    first = ports[0]
    assert first == {
        "ca": "mlx5_0",
        "ca_type": "MT4129",
        "node_guid": "0x946dae0300cde72c",
        "port": 1,
        "state": "Active",
        "physical_state": "LinkUp",
        "rate": 400,
        "lid": 75,
        "lmc": 0,
        "sm_lid": 334,
        "port_guid": "0x946dae0300cde72c",
        "link_layer": "InfiniBand",
    }
    assert ports[2]["state"] == "Down" and ports[2]["lid"] == 65535


def test_ibstat_under_ibsim_reports_ib_as_infiniband():
    [port] = parse_ibstat(fixture("ibsim_ibstat.txt"))
    assert port["ca"] == "ibsim0"
    assert port["link_layer"] == "InfiniBand"
    assert port["port_guid"] == "0x0002c90000001003"
    assert port["node_guid"] == "0x0002c90000001002"
    assert port["lid"] == 0 and port["state"] == "Initializing" and port["lmc"] == 0


@pytest.mark.parametrize("text", ["", "ibpanic: [123] main: stat of IB device 'mthca0' failed"])
def test_ibstat_without_devices(text):
    assert parse_ibstat(text) == []


def test_ibstat_filter():
    assert IbstatFilter().filters()["ibstat"](IBSTAT_MIXED)[1]["ca"] == "mlx5_1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "sminfo: sm lid 37 sm guid 0x7cfe90030016aef1, activity count 4484381 priority 14"
            " state 3 SMINFO_MASTER\n",
            (37, "0x7cfe90030016aef1", 4484381, 14, 3, "MASTER"),
        ),
        # ibsim, Debian 12: sminfo drops the leading zeros of the GUID.
        (
            "sminfo: sm lid 7 sm guid 0x2c90000001003, activity count 139 priority 14 state 3"
            " SMINFO_MASTER\n",
            (7, "0x0002c90000001003", 139, 14, 3, "MASTER"),
        ),
        (
            "sminfo: sm lid 4 sm guid 0x100004, activity count 68 priority 3 state 2"
            " SMINFO_STANDBY\n",
            (4, "0x0000000000100004", 68, 3, 2, "STANDBY"),
        ),
        # OFED 1.x documentation: hex LID, no state.
        (
            "sminfo: sm lid 0x1 sm guid 0x2c9010b7c2ae1, activity count 20 priority 1\n",
            (1, "0x0002c9010b7c2ae1", 20, 1, None, None),
        ),
        # Quoted in a mail: the line wrapped before "priority".
        (
            "> sminfo: sm lid 2 sm guid 0x2c90200259201, activity count 6881  \n"
            "> priority 0 state 3 SMINFO_MASTER\n",
            (2, "0x0002c90200259201", 6881, 0, 3, "MASTER"),
        ),
    ],
)
def test_sminfo_variants(text, expected):
    info = parse_sminfo(text)
    got = (
        info["lid"],
        info["guid"],
        info["activity_count"],
        info["priority"],
        info["state"],
        info["state_name"],
    )
    assert got == expected
    assert info["error"] is None


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("sminfo: iberror: query failed\n", "query failed"),
        ("sminfo: iberror: failed: query\n", "failed: query"),
        (
            "ibwarn: [387] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0)\n"
            "sminfo: iberror: failed: can't resolve destination port 0\n",
            "failed: can't resolve destination port 0",
        ),
    ],
)
def test_sminfo_failures(text, error):
    info = parse_sminfo(text)
    assert info["state"] is None and info["guid"] is None
    assert info["error"] == error


def test_sminfo_filter_on_empty_output():
    info = SminfoFilter().filters()["sminfo"]("")
    assert info["state"] is None and info["error"] is None


def test_saquery_smir_two_sms():
    records = parse_saquery(fixture("ibsim_saquery_smir.txt"))
    assert [(r["record"], r["lid"], r["guid"], r["priority"], r["smstate"]) for r in records] == [
        ("SMInfo", 1, "0x0000000000100001", 14, 3),
        ("SMInfo", 4, "0x0000000000100004", 3, 2),
    ]
    assert records[0]["sm_key"] == 0
    assert records[0]["actcount"] == 180


def test_saquery_pkey_table_records():
    records = parse_saquery(fixture("ibsim_saquery_pktr.txt"))
    assert [(r["record"], r["lid"], r["port"], r["block"]) for r in records] == [
        ("PKeyTable", 7, 1, 0),
        ("PKeyTable", 7, 1, 1),
    ]
    assert len(records[0]["pkey_table"]) == 32
    assert records[0]["pkey_table"][:3] == [0xFFFF, 0x8010, 0x8020]
    assert pkeys(records) == [0xFFFF, 0x8010, 0x8020]


def test_saquery_node_record():
    [record] = parse_saquery(fixture("ibsim_saquery_nr.txt"))
    assert record["record"] == "Node"
    assert record["node_type"] == "Switch"
    assert record["port_guid"] == "0x0002c90000000a01"
    assert record["nodedescription"] == "Spine1"
    assert record["num_ports"] == 8 and record["revision"] == 0xA1


@pytest.mark.parametrize(
    "text",
    ["", "ERROR: Query result returned 0x0200,  SA(SA_ERR_REQ_INVALID)\n"],
)
def test_saquery_without_records(text):
    assert SaqueryFilter().filters()["saquery"](text) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0x2C90000001003", "0x0002c90000001003"),
        ("0002:c900:0000:1003", "0x0002c90000001003"),
        ("0x0002c90000001003", "0x0002c90000001003"),
        ("946dae0300cde72c", "0x946dae0300cde72c"),
        (0x100004, "0x0000000000100004"),
        ("0x1" + "0" * 16, None),
        ("mlx5_0", None),
        ("", None),
        (None, None),
        (True, None),
    ],
)
def test_normalize_guid(value, expected):
    assert normalize_guid(value) == expected
