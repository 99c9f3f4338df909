"""`--check` runs rdma_verify's health checks (no traffic, no report) and,
when any of them failed, exits non-zero after printing them; a healthy host passes."""

from __future__ import annotations

import json
import os

import sysfs_tree as st
from test_rdma_health_info import devinfo_hca, devinfo_port
from test_rdma_verify_role import PLAYS


def check_run(run_cli, tmp_path, up: bool):
    root = tmp_path / "sysfs"
    st.add_cx6dx_roce(
        root,
        "mlx5_0",
        netdev="ens0",
        up=up,
        gids=st.roce_gids("0000:0000:0000:0001", "127.10.0.1"),
        mtu=9000,
        counters={"link_downed": 0, "symbol_error": 0, "port_rcv_errors": 0},
    )
    boot = root / "proc/sys/kernel/random/boot_id"
    boot.parent.mkdir(parents=True)
    boot.write_text("00000000-0000-0000-0000-000000000001\n")
    # The host's tools, first on PATH (as test_rdma_health_info runs the module): the
    # recorded ibv_devinfo shape of this port, perftest's --version (prints, exits 1).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    state = "PORT_ACTIVE" if up else "PORT_DOWN"
    (bindir / "ibv_devinfo.out").write_text(devinfo_hca("mlx5_0", devinfo_port(state=state)))
    (bindir / "ibv_devinfo").write_text('#!/bin/sh\ncat "$0.out"\n')
    (bindir / "ib_write_bw").write_text('#!/bin/sh\necho "Version: 6.15"\nexit 1\n')
    for tool in ("ibv_devinfo", "ib_write_bw"):
        (bindir / tool).chmod(0o755)
    playbook = tmp_path / "verify.yml"
    playbook.write_text(PLAYS["main.yml"])
    extra = {
        "rdma_verify_sysfs_root": str(root),
        "rdma_verify_report_dir": str(tmp_path / "reports"),
        "rdma_verify_check_qos": False,
    }
    proc = run_cli(
        "ansible-playbook",
        "-i",
        "localhost,",
        str(playbook),
        "-e",
        json.dumps(extra),
        "--check",
        env={"PATH": f"{bindir}:{os.environ['PATH']}"},
    )
    return proc, proc.stdout + proc.stderr


def test_check_mode_with_a_failed_health_check_exits_non_zero_after_printing_it(run_cli, tmp_path):
    proc, output = check_run(run_cli, tmp_path, up=False)
    assert proc.returncode == 2, output
    assert "RDMA verification in check mode" in output
    assert "FAIL check localhost mlx5_0/1" in output, output
    # Printed first, then the failure that sets the exit code.
    failed = output.index("health check(s) failed in check mode")
    assert output.index("FAIL check localhost") < failed
    assert not (tmp_path / "reports").exists()


def test_check_mode_with_healthy_hosts_exits_zero(run_cli, tmp_path):
    proc, output = check_run(run_cli, tmp_path, up=True)
    assert proc.returncode == 0, output
    assert "RDMA verification in check mode" in output
    assert not (tmp_path / "reports").exists()
