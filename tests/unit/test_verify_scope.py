"""What a verify run covered of its fabric (module_utils/verify_scope.py): a --limit
run names the hosts it left out, bounded at 1,000 hosts; a slice of a sliced job is
refused when the fabric's size is declared."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.verify_scope import (
    missing_names,
    partial,
    partial_line,
    slice_refusal,
)


def test_a_whole_fabric_run_is_not_partial():
    assert partial(["gpu1", "gpu2"], ["gpu2", "gpu1"]) is None
    assert partial([], ["gpu1"]) is None  # no fabric group: nothing to compare


def test_a_limited_run_names_the_hosts_left_out_in_natural_order():
    fabric = [f"gpu{i}" for i in range(1, 13)]
    scope = partial(fabric, ["gpu1", "gpu2", "gpu3", "other"])
    assert scope == {"tested": 3, "of": 12, "missing": [f"gpu{i}" for i in range(4, 13)]}
    line = partial_line(scope, "rdma_hosts")
    assert line == (
        "partial: 3 of 12 hosts of rdma_hosts verified; not in this run: "
        "gpu4, gpu5, gpu6, gpu7, gpu8, gpu9, gpu10, gpu11, gpu12"
    )
    assert partial_line(None) == ""


def test_the_names_stay_bounded_at_a_thousand_hosts():
    fabric = [f"gpu{i:04d}" for i in range(1000)]
    scope = partial(fabric, fabric[:16])
    text = missing_names(scope["missing"])
    assert text.endswith("and 974 more") and text.count(",") == 9
    assert len(partial_line(scope)) < 200


def test_a_slice_is_refused_only_with_a_declared_size():
    assert slice_refusal(["gpu1", "gpu2"], 0) == ""
    assert slice_refusal(["gpu1", "gpu2"], 2) == ""
    refusal = slice_refusal(["gpu1", "gpu2"], 16, "gpu_hosts")
    assert refusal.startswith(
        "rdma_verify_fabric_size is 16 but this run's inventory holds 2 hosts of gpu_hosts"
    )
    assert "sliced job" in refusal and "--limit" in refusal
    assert slice_refusal([], "x").startswith("rdma_verify_fabric_size must be a whole number")
    assert slice_refusal([], -3).startswith("rdma_verify_fabric_size must be 0")
