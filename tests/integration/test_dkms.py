"""module_utils/dkms.py (parse_dkms_status, modules_for_kernel) and the dkms_status filter.

The fixture text is written for these tests. Its line formats follow public `dkms status`
output:
- dkms 3.x "name/version, kernel, arch: state": dkms-project/dkms run_test.sh expected
  output ("dkms_test/1.0: added"), and the OpenStack diskimage-builder dkms element note
  on Ubuntu Jammy ("nvidia, 510.47.03, ..." became "nvidia/510.47.03, ...").
- dkms 2.x "name, version, kernel, arch: state" and "name, version: added": issue
  realsenseai/librealsense#4763 ("librealsense2-dkms, 1.3.6, 4.18.0-15-generic, x86_64:
  installed"), AMD ROCm docs ("amdgpu, 4.3-52.el7, 3.10.0-1160.11.1.el7.x86_64, x86_64:
  installed (original_module exists)").
- Trailing notes: strongtz/i915-sriov-dkms#274 ("...: installed (WARNING! Diff between
  built and installed module!)"), "(WARNING! Missing some built modules!)" on Fedora, and
  an old Ubuntu forum post where dkms 2.2 repeated the warning with doubled spaces.
dkms prints its "Deprecated feature:", "Warning:" and "Error!" messages on stderr, so
they are not part of the text parsed here.
"""

from __future__ import annotations

import json

import pytest
from ansible_collections.rdma.fabric.plugins.filter.dkms_status import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.dkms import (
    modules_for_kernel,
    parse_dkms_status,
)

OFED = "24.10.OFED.24.10.1.1.4.1"

# A DOCA-OFED host on Ubuntu 24.04 (dkms 3.x) after a kernel update to 6.8.0-47 whose
# headers were missing: the OFED modules exist for the old kernel only.
DKMS3_AFTER_KERNEL_UPDATE = f"""\
iser/{OFED}, 6.8.0-45-generic, x86_64: installed
isert/{OFED}, 6.8.0-45-generic, x86_64: installed
kernel-mft-dkms/4.30.0, 6.8.0-45-generic, x86_64: installed
kernel-mft-dkms/4.30.0, 6.8.0-47-generic, x86_64: installed
knem/1.1.4.90mlnx3, 6.8.0-45-generic, x86_64: installed
mlnx-ofed-kernel/{OFED}, 6.8.0-45-generic, x86_64: installed
mlnx-ofed-kernel/{OFED}, 6.8.0-47-generic, x86_64: built
nvidia/550.107.02, 6.8.0-45-generic, x86_64: installed
nvidia/550.107.02, 6.8.0-47-generic, x86_64: installed
srp/{OFED}: added
"""

# MLNX_OFED 5.8 LTS on Ubuntu 22.04 with dkms 2.8 (comma between name and version).
DKMS2_MLNX_OFED = """\
iser, 5.8, 5.15.0-56-generic, x86_64: installed
kernel-mft-dkms, 4.22.1, 5.15.0-56-generic, x86_64: installed
knem, 1.1.4.90mlnx1, 5.15.0-56-generic, x86_64: installed
mlnx-ofed-kernel, 5.8, 5.15.0-56-generic, x86_64: installed
mlnx-ofed-kernel, 5.8, 5.15.0-58-generic, x86_64: installed (original_module exists)
srp, 5.8: added
"""


def record(module, version, kernel, arch, state, warning=None):
    return {
        "module": module,
        "version": version,
        "kernel": kernel,
        "arch": arch,
        "state": state,
        "warning": warning,
    }


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f"mlnx-ofed-kernel/{OFED}, 6.8.0-45-generic, x86_64: installed",
            record("mlnx-ofed-kernel", OFED, "6.8.0-45-generic", "x86_64", "installed"),
        ),
        (
            "mlnx-ofed-kernel, 5.8, 5.15.0-56-generic, x86_64: installed",
            record("mlnx-ofed-kernel", "5.8", "5.15.0-56-generic", "x86_64", "installed"),
        ),
        (
            "mlnx-ofed-kernel/24.10, 6.8.0-45-generic, x86_64: built",
            record("mlnx-ofed-kernel", "24.10", "6.8.0-45-generic", "x86_64", "built"),
        ),
        (
            f"mlnx-ofed-kernel/{OFED}: added",
            record("mlnx-ofed-kernel", OFED, None, None, "added"),
        ),
        ("srp, 5.8: added", record("srp", "5.8", None, None, "added")),
        (
            "mlnx-ofed-kernel/23.10.OFED.23.10.0.5.5.1, 5.14.0-362.8.1.el9_3.x86_64, x86_64: "
            "installed (WARNING! Diff between built and installed module!)",
            record(
                "mlnx-ofed-kernel",
                "23.10.OFED.23.10.0.5.5.1",
                "5.14.0-362.8.1.el9_3.x86_64",
                "x86_64",
                "installed",
                "WARNING! Diff between built and installed module!",
            ),
        ),
        (
            "knem/1.1.4.90mlnx3, 6.1.0-26-amd64, x86_64: installed "
            "(WARNING! Missing some built modules!)",
            record(
                "knem",
                "1.1.4.90mlnx3",
                "6.1.0-26-amd64",
                "x86_64",
                "installed",
                "WARNING! Missing some built modules!",
            ),
        ),
        (
            "mlnx-ofed-kernel, 5.8, 5.15.0-58-generic, x86_64: installed (original_module exists)",
            record(
                "mlnx-ofed-kernel",
                "5.8",
                "5.15.0-58-generic",
                "x86_64",
                "installed",
                "original_module exists",
            ),
        ),
        (
            # aarch64 Grace host, trailing blank from a terminal copy.
            f"mlnx-ofed-kernel/{OFED}, 6.8.0-1013-nvidia-64k, aarch64: installed   ",
            record("mlnx-ofed-kernel", OFED, "6.8.0-1013-nvidia-64k", "aarch64", "installed"),
        ),
    ],
    ids=[
        "dkms3-installed",
        "dkms2-installed",
        "dkms3-built",
        "dkms3-added",
        "dkms2-added",
        "diff-warning",
        "missing-modules-warning",
        "original-module",
        "aarch64-trailing-space",
    ],
)
def test_parse_one_line(line, expected):
    assert parse_dkms_status(line) == [expected]


def test_doubled_warning_keeps_the_state():
    line = (
        "mlnx-ofed-kernel,  5.8, 5.15.0-56-generic, x86_64: installed (WARNING! Diff between"
        "  built and installed module!) (WARNING! Diff between built and installed  module!)"
    )
    [rec] = parse_dkms_status(line)
    assert (rec["module"], rec["version"], rec["kernel"]) == (
        "mlnx-ofed-kernel",
        "5.8",
        "5.15.0-56-generic",
    )
    assert rec["state"] == "installed"
    assert rec["warning"].startswith("WARNING! Diff between")


@pytest.mark.parametrize("text", ["", "\n", "  \n\n", None])
def test_empty_output(text):
    assert parse_dkms_status(text) == []


def test_lines_without_a_state_are_skipped():
    text = "\nno colon on this line\n" + f"mlnx-ofed-kernel/{OFED}: added\n"
    assert [r["module"] for r in parse_dkms_status(text)] == ["mlnx-ofed-kernel"]


def test_dkms3_whole_output():
    records = parse_dkms_status(DKMS3_AFTER_KERNEL_UPDATE)
    assert len(records) == len(DKMS3_AFTER_KERNEL_UPDATE.strip().splitlines())
    assert {r["version"] for r in records if r["module"] == "mlnx-ofed-kernel"} == {OFED}
    assert {r["arch"] for r in records if r["kernel"]} == {"x86_64"}
    states = {(r["module"], r["kernel"]): r["state"] for r in records}
    assert states[("mlnx-ofed-kernel", "6.8.0-47-generic")] == "built"
    assert states[("srp", None)] == "added"


def test_dkms2_whole_output():
    records = parse_dkms_status(DKMS2_MLNX_OFED)
    assert [r["module"] for r in records] == [
        "iser",
        "kernel-mft-dkms",
        "knem",
        "mlnx-ofed-kernel",
        "mlnx-ofed-kernel",
        "srp",
    ]
    assert [r["kernel"] for r in records[-3:]] == ["5.15.0-56-generic", "5.15.0-58-generic", None]


def test_modules_for_kernel_after_kernel_update():
    records = parse_dkms_status(DKMS3_AFTER_KERNEL_UPDATE)
    old = modules_for_kernel(records, "6.8.0-45-generic")
    new = modules_for_kernel(records, "6.8.0-47-generic")
    assert old == ["iser", "isert", "kernel-mft-dkms", "knem", "mlnx-ofed-kernel", "nvidia"]
    # Built but not installed is not installed: this is what the role's check catches.
    assert "mlnx-ofed-kernel" not in new
    assert new == ["kernel-mft-dkms", "nvidia"]
    assert modules_for_kernel(records, "6.8.0-47-generic", state="built") == ["mlnx-ofed-kernel"]
    assert modules_for_kernel(records, "6.11.0-9-generic") == []


def test_modules_for_kernel_dkms2_and_warnings_count_as_installed():
    records = parse_dkms_status(DKMS2_MLNX_OFED)
    assert modules_for_kernel(records, "5.15.0-58-generic") == ["mlnx-ofed-kernel"]
    assert modules_for_kernel(records, "5.15.0-56-generic") == [
        "iser",
        "kernel-mft-dkms",
        "knem",
        "mlnx-ofed-kernel",
    ]


def test_modules_for_kernel_is_sorted_and_unique():
    text = (
        f"mlnx-ofed-kernel/{OFED}, 6.8.0-45-generic, x86_64: installed\n"
        "mlnx-ofed-kernel/24.07.OFED.24.07.0.6.1.1, 6.8.0-45-generic, x86_64: installed\n"
        f"iser/{OFED}, 6.8.0-45-generic, x86_64: installed\n"
    )
    assert modules_for_kernel(parse_dkms_status(text), "6.8.0-45-generic") == [
        "iser",
        "mlnx-ofed-kernel",
    ]


def test_modules_for_kernel_empty():
    assert modules_for_kernel(parse_dkms_status(""), "6.8.0-45-generic") == []


def test_filter_plugin_exposes_the_parser():
    filters = FilterModule().filters()
    assert set(filters) == {"dkms_status"}
    assert filters["dkms_status"](DKMS2_MLNX_OFED) == parse_dkms_status(DKMS2_MLNX_OFED)


@pytest.mark.parametrize(
    ("kernel", "installed"),
    [("6.8.0-45-generic", True), ("6.8.0-47-generic", False), ("6.11.0-9-generic", False)],
)
def test_role_expression_through_ansible(run_module_on_localhost, tmp_path, kernel, installed):
    """The exact test doca_kernel_check.yml makes, templated by Ansible with the filter."""
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"dkms_text": DKMS3_AFTER_KERNEL_UPDATE, "kernel": kernel}))
    expression = (
        "{{ 'mlnx-ofed-kernel' in (dkms_text | rdma.fabric.dkms_status"
        " | selectattr('kernel', 'equalto', kernel)"
        " | selectattr('state', 'equalto', 'installed') | map(attribute='module')) }}"
    )
    proc, result = run_module_on_localhost(
        "ansible.builtin.debug", json.dumps({"msg": expression}), "-e", f"@{extra}"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    msg = result["msg"]
    assert msg is installed
