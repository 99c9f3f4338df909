"""roce_host_qos on an ordinary host (lldpad stopped, backend auto) in --check on
localhost: the tasks only lldpad `configure` needs are behind conditional includes, so
each costs the controller one skipped include per host, not a skipped task (or loop
item) each. Where they are needed the include runs them, and the check that reads the
mlnx_qos look still decides alike whether the look ran or not."""

from __future__ import annotations

from pathlib import Path

import pytest
from role_play import outcomes, recap, results, tasks_run

ROLE = "roce_host_qos"

LOOKUP = "roce_host_qos : Look for mlnx_qos where lldpad would be configured"
LOOKUP_INCLUDE = f"{LOOKUP} by the auto backend"
LLDPAD_INCLUDE = "roce_host_qos : Keep lldpad and make it advertise the policy"
LLDPAD_TASKS = [
    "roce_host_qos : Start and enable lldpad",
    "roce_host_qos : Record the lldpad DCBX settings (lldpad keeps them itself)",
]
BACKEND_CHECK = "roce_host_qos : Validate roce_host_qos_lldpad against the backend"


def test_ordinary_run_skips_the_configure_tasks_as_two_includes(run_play):
    proc, output = run_play({})
    assert proc.returncode == 0, output
    ran = tasks_run(proc)
    assert recap(proc)["failed"] == 0
    for name in [LOOKUP, *LLDPAD_TASKS]:
        assert name not in ran, f"{name} started on an ordinary run"
    assert outcomes(proc, LOOKUP_INCLUDE) == {"localhost": "skipped"}
    assert outcomes(proc, LLDPAD_INCLUDE) == {"localhost": "skipped"}
    assert outcomes(proc, BACKEND_CHECK) == {"localhost": "ok"}


# Where the look searches (tasks/mlnx_qos_lookup.yml): this machine's answer decides
# whether the auto backend may run lldptool here.
MLNX_QOS_DIRS = ["/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin"]


@pytest.mark.parametrize("backend", ["auto", "dcb"])
def test_lldpad_configure_looks_for_mlnx_qos_only_on_the_auto_backend(run_play, backend):
    proc, output = run_play({"roce_host_qos_lldpad": "configure", "roce_host_qos_backend": backend})
    refused = backend == "auto" and any(Path(d, "mlnx_qos").exists() for d in MLNX_QOS_DIRS)
    assert (proc.returncode != 0) == refused, output
    if backend == "auto":
        assert outcomes(proc, LOOKUP_INCLUDE) == {"localhost": "ok"}
        [looked] = results(proc, LOOKUP).values()
        assert [r["item"] for r in looked["results"]] == MLNX_QOS_DIRS, looked
    else:
        assert outcomes(proc, LOOKUP_INCLUDE) == {"localhost": "skipped"}
        assert LOOKUP not in tasks_run(proc)
    assert outcomes(proc, BACKEND_CHECK) == {"localhost": "failed" if refused else "ok"}
