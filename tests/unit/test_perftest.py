"""perftest output parser (module_utils/perftest.py) and the rdma.fabric.perftest_parse filter.

fixtures/perftest/*rxe_lab* are real captures from the Soft-RoCE lab (see the README
there). The public captures in ../shared/reference/outputs are read when present; a
few inputs below are written after layouts perftest prints in public reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rdma.fabric.plugins.filter.perftest_parse import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.perftest import (
    bw_average_gbps,
    lat_typical_us,
    parse_perftest,
    parse_version,
)

FIXTURES = Path(__file__).parent / "fixtures" / "perftest"
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "outputs"
MIB_GBPS = 8 * 2**20 / 1e9
BW_KEYS = {"bytes", "iterations", "bw_peak_gbps", "bw_average_gbps", "msg_rate_mpps"}
LAT_KEYS = {"bytes", "iterations", "t_min_us", "t_max_us", "t_typical_us", "t_avg_us"}
LAT_KEYS |= {"t_stdev_us", "p99_us", "p999_us"}


def fixture(name):
    return parse_perftest((FIXTURES / f"{name}.txt").read_text())


def reference(name):
    path = REFERENCE / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    text = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("# "))
    return parse_perftest(text)


@pytest.mark.parametrize("side", ["client", "server"])
def test_lab_gbits_duration_both_sides(side):
    result = fixture(f"ib_write_bw_rxe_lab_gbits_D3_{side}")
    assert result["ok"] is True and result["error"] is None
    assert result["test"] == "RDMA_Write BW Test" and result["kind"] == "bw"
    assert result["device"] == "rxe0" and result["link_type"] == "Ethernet"
    assert (result["gid_index"], result["mtu"], result["qps"]) == (1, 1024, 1)
    assert result["connection_type"] == "RC" and result["bidirectional"] is False
    [row] = result["rows"]
    assert set(row) == BW_KEYS
    assert row["bytes"] == 65536 and row["iterations"] > 0
    assert row["bw_peak_gbps"] == 0.0  # -D: perftest does not measure the peak
    assert 0 < row["bw_average_gbps"] < 1


def test_lab_first_capture():
    result = fixture("ib_write_bw_rxe_lab_client_D5")
    assert result["ok"] and bw_average_gbps(result) == pytest.approx(0.086665)


@pytest.mark.parametrize("side", ["client", "server"])
def test_lab_mb_per_second_is_converted(side):
    result = fixture(f"ib_write_bw_rxe_lab_mbsec_D3_{side}")
    assert result["ok"] and result["unit"] == "MB/sec"
    # 3.87 MB/sec (2^20 bytes/s) = 0.03246 Gb/s
    assert bw_average_gbps(result) == pytest.approx(3.87 * MIB_GBPS, rel=1e-6)


def test_lab_all_sizes():
    result = fixture("ib_write_bw_rxe_lab_all_sizes_client")
    sizes = [row["bytes"] for row in result["rows"]]
    assert sizes == [2**i for i in range(1, 24)]
    assert all(set(row) == BW_KEYS for row in result["rows"])
    assert result["ok"] and bw_average_gbps(result) == result["rows"][-1]["bw_average_gbps"]


@pytest.mark.parametrize("side", ["client", "server"])
def test_lab_bidirectional(side):
    result = fixture(f"ib_write_bw_rxe_lab_bidir_D3_{side}")
    assert result["bidirectional"] is True and result["kind"] == "bw"
    assert result["test"] == "RDMA_Write Bidirectional BW Test"
    assert result["ok"] and bw_average_gbps(result) == pytest.approx(0.027375)


def test_lab_latency_client():
    result = fixture("ib_write_lat_rxe_lab_client")
    assert result["kind"] == "lat" and result["ok"]
    [row] = result["rows"]
    assert set(row) == LAT_KEYS
    assert row["t_typical_us"] == 792.16 and row["p999_us"] == 14049.83
    assert lat_typical_us(result) == 792.16 and bw_average_gbps(result) is None


def test_lab_latency_server_prints_inf_and_nan():
    result = fixture("ib_write_lat_rxe_lab_server")
    [row] = result["rows"]
    assert row["bytes"] == 2 and row["iterations"] == 100
    assert row["t_typical_us"] is None and row["t_stdev_us"] is None


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("ib_write_bw_rxe_lab_error_no_server_client", "Couldn't connect to 192.0.2.12:18601"),
        ("ib_write_bw_rxe_lab_error_no_device_client", "IB device nosuch0 not found"),
        ("ib_write_bw_rxe_lab_error_bad_gid_client", "Failed to modify QP 22 to RTR"),
        (
            "ib_write_bw_rxe_lab_error_bad_gid_server",
            "Unable to Connect the HCA's through the link",
        ),
    ],
)
def test_lab_errors(name, needle):
    result = fixture(name)
    assert result["ok"] is False and needle in result["error"]
    assert result["rows"] == [] and bw_average_gbps(result) is None


def test_bad_gid_still_reads_the_header():
    result = fixture("ib_write_bw_rxe_lab_error_bad_gid_client")
    assert result["gid_index"] == 9 and result["device"] == "rxe0"


@pytest.mark.parametrize(
    ("name", "rows", "last_gbps"),
    [
        ("ib_write_bw_01_ib_loopback_8M_MBsec_superbench.txt", 2, 24056.72 * MIB_GBPS),
        ("ib_write_bw_03_roce_cx7_spark_rdmacm_q4_client_Gbsec.txt", 1, 111.71),
        ("ib_write_bw_04_ib_client_all_sizes_Gbsec_perftest132.txt", 4, 0.34),
        ("ib_read_bw_01_ib_hdr_client_all_sizes_MBsec_ucx8851.txt", 4, 38.95 * MIB_GBPS),
    ],
)
def test_reference_bandwidth(name, rows, last_gbps):
    result = reference(name)
    assert len(result["rows"]) == rows
    assert bw_average_gbps(result) == pytest.approx(last_gbps, rel=1e-6)


def test_reference_qps_and_rdma_cm():
    result = reference("ib_write_bw_03_roce_cx7_spark_rdmacm_q4_client_Gbsec.txt")
    assert result["qps"] == 4 and result["mtu"] == 1024 and result["device"] == "rocep1s0f1"


def test_reference_duration_row_cut_short():
    result = reference("ib_write_bw_09_roce_rdmacm_duration_rows_peak0_perftest_pr342.txt")
    assert result["rows"][0]["bw_average_gbps"] == 42.31
    assert result["rows"][-1] == {"bytes": 65536, "iterations": 247166, "bw_peak_gbps": 0.0}
    assert bw_average_gbps(result) == 42.31


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("ib_write_bw_07_roce_error_failed_modify_qp_rtr_zero_gid_k8s72.txt", "to RTR"),
        ("ib_write_bw_08_error_couldnt_connect_perftest_pr228.txt", "Couldn't connect"),
        ("ib_write_bw_12_error_completion_syndrom_gpu_perftest173.txt", "Completion with error"),
        ("ib_write_bw_13_error_no_device_k8s169.txt", "Did not detect devices"),
        ("ib_read_bw_02_old_perftest_server_error_pib3.txt", "Couldn't read remote address"),
    ],
)
def test_reference_errors(name, needle):
    result = reference(name)
    assert result["ok"] is False and needle in result["error"]


def test_reference_libibverbs_warnings_are_not_errors():
    result = reference(
        "ib_write_bw_06_roce_server_gid1_then_client_completion_error_perftest262.txt"
    )
    assert not any("libibverbs" in e for e in result["errors"])
    assert result["gid_index"] == 1


def test_reference_latency():
    result = reference("ib_write_lat_01_roce_cx7_spark_rdmacm_client.txt")
    [row] = result["rows"]
    assert row["t_typical_us"] == 1.47 and row["p99_us"] == 1.57


TABLE = """                    RDMA_Write BW Test
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             97.52              97.48                0.185934
"""


def test_a_warning_inside_a_row_is_skipped():
    warning = (
        "Conflicting CPU frequency values detected: 1200.000 != 3300.000. CPU Frequency is not max."
    )
    text = TABLE.replace("97.52              97.48", f"97.52 {warning}\n 97.48")
    result = parse_perftest(text)
    assert result["ok"], result
    assert result["rows"] == parse_perftest(TABLE)["rows"]


def test_a_warning_line_before_the_row():
    warning = "Conflicting CPU frequency values detected: 1200.000 != 3300.000"
    text = TABLE.replace(" 65536", f"{warning}\n 65536")
    assert parse_perftest(text)["rows"] == parse_perftest(TABLE)["rows"]
    assert parse_perftest(text)["ok"]


def test_empty_and_none():
    for text in ("", None):
        result = parse_perftest(text)
        assert result["ok"] is False and result["rows"] == [] and result["error"]


def test_version():
    assert parse_version("Version: 6.06\n") == "6.06"
    assert parse_version("ib_write_bw: command not found") is None


def test_filter_is_the_parser():
    assert FilterModule().filters()["perftest_parse"] is parse_perftest
