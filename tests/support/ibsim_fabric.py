"""Run ibsim (ibsim-utils) on a topology file for a test: the simulator's environment
while it runs. The real infiniband-diags and OpenSM reach it with LD_PRELOAD=UMAD2SIM and
SIM_HOST=<node> (libumad2sim)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time

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
