"""Run ibsim (ibsim-utils) on a topology file for a test: the simulator's environment
while it runs. The real infiniband-diags and OpenSM reach it with LD_PRELOAD=UMAD2SIM and
SIM_HOST=<node> (libumad2sim). Also the real OpenSM on it, and a port's P_Key table
read back from the port."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"


@contextlib.contextmanager
def ibsim_running(net, workdir, name):
    """Yield the environment (IBSIM_SOCKNAME set) once ibsim says it is ready."""
    env = dict(os.environ, IBSIM_SOCKNAME=f"{name}-{os.getpid()}")
    with open(workdir / "ibsim.out", "w") as out:
        proc = subprocess.Popen(
            ["ibsim", "-s", "-n", str(net)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 20
        while "Network simulator ready" not in (workdir / "ibsim.out").read_text():
            assert proc.poll() is None and time.monotonic() < deadline, "ibsim did not start"
            time.sleep(0.2)
        yield env
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@dataclass
class SubnetManager:
    """An OpenSM running on ibsim: its log, the environment of a diag at its node, and
    how long its first sweep took (its own log's stamps, start to SUBNET UP)."""

    log: Path
    diag_env: dict
    up_seconds: float


def _stamp(line):
    """Seconds of the day of an OpenSM log line ("Dec 06 05:08:21 917923 [...] ...")."""
    hours, minutes, seconds = line.split()[2].split(":")
    return int(hours) * 3600 + int(minutes) * 60 + int(seconds) + int(line.split()[3]) / 1e6


@contextlib.contextmanager
def opensm_running(env, workdir, sim_host, partitions_text, timeout=60):
    """Run the real OpenSM at ibsim node `sim_host` on `partitions_text`, with its own log
    (debug level 0x07: ports a partition names but the fabric lacks are logged), an
    opensm.conf with only force_log_flush (OpenSM buffers its log otherwise, osm_subnet.c
    opt_tbl) and its cache in `workdir`, sweeping once (-s 0). Yields a SubnetManager
    once the log says SUBNET UP; stops OpenSM after."""
    (workdir / "partitions.conf").write_text(partitions_text)
    (workdir / "opensm.conf").write_text("force_log_flush TRUE\n")
    log = workdir / "opensm.log"
    # OpenSM appends to its log (accum_log_file): the first line must be this start's.
    log.unlink(missing_ok=True)
    sim = dict(env, SIM_HOST=sim_host, LD_PRELOAD=UMAD2SIM)
    osm = subprocess.Popen(
        ["opensm", "-F", str(workdir / "opensm.conf"), "-P", str(workdir / "partitions.conf"),
         "-f", str(log), "-D", "0x07", "-s", "0"],
        env=dict(sim, OSM_TMP_DIR=str(workdir), OSM_CACHE_DIR=str(workdir)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while not (log.exists() and "SUBNET UP" in log.read_text()):
            assert osm.poll() is None and time.monotonic() < deadline, "OpenSM did not come up"
            time.sleep(0.2)
        lines = log.read_text().splitlines()
        up = next(line for line in lines if "SUBNET UP" in line)
        yield SubnetManager(log, sim, round(_stamp(up) - _stamp(lines[0]), 3))
    finally:
        osm.terminate()
        osm.wait(timeout=20)


def port_pkeys(diag_env, port_guid):
    """The P_Keys (non-zero entries) of a port's own P_Key table, read from the port by
    an SMP (smpquery pkeys, addressed by port GUID through the SA)."""
    out = subprocess.run(
        ["smpquery", "-G", "pkeys", port_guid],
        env=diag_env, capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    # "   0: 0xffff 0x8010 0x0000 ...", then "64 pkeys capacity for this port".
    rows = [line.split(":", 1)[1] for line in out.splitlines() if line.strip()[:1].isdigit()
            and ":" in line]  # fmt: skip
    return {int(word, 16) for row in rows for word in row.split() if int(word, 16)}
