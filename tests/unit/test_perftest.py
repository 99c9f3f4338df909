"""perftest output parser (module_utils/perftest.py) and the rdma.fabric.perftest filter.

ib_write_bw_rxe_lab_client_D5.txt is a real capture: the lab's site.yml run between two
Soft-RoCE VMs (perftest 4.5 from Debian 12, -D 5 --report_gbits). The other inputs are
written here after the layouts perftest prints in public reports (SuperBench's MB/sec
loopback, perftest issue threads for errors, an NVIDIA DGX Spark latency run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.filter.perftest import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import (
    bw_average_gbps,
    parse_perftest,
)

FIXTURES = Path(__file__).parent / "fixtures" / "perftest"

HEADER = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 Mtu             : 4096[B]
 Link type       : IB
---------------------------------------------------------------------------------------
"""

MB_SEC = (
    HEADER
    + """ #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 8388608    20000            24056.74            24056.72\t\t   0.003007
---------------------------------------------------------------------------------------
"""
)

ALL_SIZES = (
    HEADER
    + """ #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 2          5000             0.044              0.043                2.710251
 4          5000             0.088              0.087                2.713904
 65536      5000             97.52              97.48                0.185934
---------------------------------------------------------------------------------------
"""
)

REFUSED = """Couldn't connect to 192.0.2.11:18515
Unable to open file descriptor for socket connection Unable to init the socket connection
"""

ZERO_GID = (
    HEADER
    + """ local address: LID 0000 QPN 0x003b PSN 0xab3a5e RKey 0x015b1a VAddr 0x007f72e9620000
 GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00
Failed to modify QP 59 to RTR
 Unable to Connect the HCA's through the link
"""
)

LATENCY = """                    RDMA_Write Latency Test
 Device         : rocep1s0f1
---------------------------------------------------------------------------------------
 #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]
 2       1000          1.42           1.93         1.47                1.47             0.00            1.57                    1.93
---------------------------------------------------------------------------------------
"""  # noqa: E501


def test_real_soft_roce_capture():
    result = parse_perftest((FIXTURES / "ib_write_bw_rxe_lab_client_D5.txt").read_text())
    assert result["test"] == "RDMA_Write BW Test"
    assert result["unit"] == "Gb/sec"
    assert result["settings"]["Device"] == "rxe0"
    assert result["settings"]["GID index"] == "1"
    assert result["settings"]["Mtu"] == "1024[B]"
    [row] = result["rows"]
    assert row["bytes"] == 65536 and row["iterations"] == 496
    assert row["bw_peak"] == 0.0  # -D: perftest does not measure the peak
    assert result["bw_average_gbps"] == pytest.approx(0.086665, abs=1e-4)
    assert result["errors"] == []


def test_mb_per_second_is_converted_to_gbps():
    result = parse_perftest(MB_SEC)
    assert result["unit"] == "MB/sec"
    # 24056.72 * 2^20 bytes/s * 8 = 201.8 Gb/s
    assert result["bw_average_gbps"] == pytest.approx(201.80, abs=0.01)


def test_all_sizes_takes_the_last_row():
    result = parse_perftest(ALL_SIZES)
    assert [r["bytes"] for r in result["rows"]] == [2, 4, 65536]
    assert result["bw_average_gbps"] == 97.48


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (REFUSED, "Couldn't connect to 192.0.2.11:18515"),
        (ZERO_GID, "Failed to modify QP 59 to RTR"),
    ],
)
def test_errors_are_collected_and_there_is_no_bandwidth(text, needle):
    result = parse_perftest(text)
    assert needle in result["errors"]
    assert result["rows"] == []
    assert result["bw_average_gbps"] is None


def test_latency_columns():
    result = parse_perftest(LATENCY)
    [row] = result["rows"]
    assert row["t_avg_usec"] == 1.47
    assert row["99_9_percentile_usec"] == 1.93
    assert result["unit"] is None and result["bw_average_gbps"] is None


def test_a_row_cut_short_keeps_what_it_has():
    full_row = " 65536      5000             97.52              97.48                0.185934"
    text = ALL_SIZES.replace(full_row, " 65536      5000             97.52")
    result = parse_perftest(text)
    assert result["rows"][-1] == {"bytes": 65536, "iterations": 5000, "bw_peak": 97.52}
    assert bw_average_gbps(result) == 0.087  # the last row with an average


def test_empty_input():
    assert parse_perftest("")["rows"] == [] and parse_perftest(None)["bw_average_gbps"] is None


def test_filter_is_the_parser():
    assert FilterModule().filters()["perftest"] is parse_perftest
