"""rdma_verify's extra perftest arguments (module_utils/verify_args.py, verify_plan.py):
rdma_verify_rail_extra_args on one rail's tests only, after rdma_verify_extra_args, on
both sides of main, retest and isolation tests; a rail the fabric does not have and the
flags the role sets itself refused naming the variable and the flag.

The option grammar is perftest's (src/perftest_parameters.c, getopt_long): short options
cluster, one with an argument takes the rest of its word or the next word, a long option
may be abbreviated.
"""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils import verify_args as va
from ansible_collections.rdma.fabric.plugins.module_utils import verify_fabric as vfabric
from ansible_collections.rdma.fabric.plugins.module_utils import verify_plan as vplan
from test_verify_tests import OPTIONS, fabric_of

RAILS = ["mlx5_0", "mlx5_1"]


def plan(phase, pairs, **options):
    names, health = fabric_of(2, rails=2)
    rails = vfabric.fabric(health)["rails"]
    return vplan.plan(
        phase, pairs or vplan.all_pairs(names), health, dict(OPTIONS, **options), rails
    )


def tail(argv):
    """What follows the role's own arguments (-D 3), without the peer's address."""
    rest = argv[argv.index("-D") + 2 :]
    return rest[:-1] if rest and rest[-1].startswith("10.") else rest


@pytest.mark.parametrize(
    ("phase", "pairs"),
    [
        ("main", None),
        ("retest", [{"round": 0, "server": "lab1", "client": "lab2", "rail": "mlx5_1"}]),
        (
            "isolate",
            [
                {"round": 0, "server": "lab2", "client": "lab1", "rail": "mlx5_1"},
                {"round": 1, "server": "lab1", "client": "lab2", "rail": "mlx5_1"},
            ],
        ),
    ],
)
def test_rail_args_follow_the_global_ones_on_both_sides_of_that_rail_only(phase, pairs):
    tests = plan(
        phase,
        pairs,
        extra_args=["--tx-depth=256"],
        rail_args={"mlx5_1": "-l 4 --cq-mod=1"},
    )
    assert tests and all(t["runnable"] for t in tests)
    for test in tests:
        want = ["--tx-depth=256"] + (["-l", "4", "--cq-mod=1"] if test["rail"] == "mlx5_1" else [])
        assert tail(test["server_test"]["argv"]) == want, test["id"]
        assert tail(test["client_test"]["argv"]) == want, test["id"]
    assert {t["rail"] for t in tests} == ({"mlx5_0", "mlx5_1"} if phase == "main" else {"mlx5_1"})


def test_a_list_keeps_each_item_one_word():
    test, _reversed = [
        t
        for t in plan("main", None, rail_args={"mlx5_0": ["--limit_bw", 50]})
        if t["rail"] == "mlx5_0"
    ]
    assert tail(test["client_test"]["argv"]) == ["--limit_bw", "50"]


def errors(extra=None, per_rail=None, tclass_set=False):
    return va.extra_args_errors(extra, per_rail, RAILS, tclass_set)


def test_a_rail_the_fabric_does_not_have_is_refused_naming_the_variable():
    assert errors(per_rail={"mlx5_1": "-t 128", "rail7": "-t 128"}) == [
        "rdma_verify_rail_extra_args: no rail 'rail7' in this fabric (its rails: mlx5_0, mlx5_1)"
    ]
    names, health = fabric_of(2, rails=2)
    rails = list(vfabric.fabric(health)["rails"])
    assert vplan.option_errors(dict(OPTIONS, rail_args={"mlx5_7": "-t 64"}), rails) == [
        "rdma_verify_rail_extra_args: no rail 'mlx5_7' in this fabric (its rails: mlx5_0, mlx5_1)"
    ]


@pytest.mark.parametrize(
    ("words", "shown"),
    [
        ("-d mlx5_3", "-d/--ib-dev is set by the rail's device"),
        ("-dmlx5_3", "-dmlx5_3 (-d/--ib-dev) is set by the rail's device"),
        ("--ib-port=2", "--ib-port=2 (-i/--ib-port) is set by the rail's port"),
        ("-p 20000", "-p/--port is set by the test's TCP port"),
        ("--gid-index 5", "-x/--gid-index is set by the rail's RoCE v2 GID index"),
        ("-F", "-F/--CPU-freq is set by the role"),
        ("--report_gbits", "--report_gbits is set by the role"),
        ("--out_json", "--out_json is set by the role"),
        ("-D 30", "-D/--duration is set by rdma_verify_duration"),
        ("--dur=30", "--dur=30 (-D/--duration) is set by rdma_verify_duration"),
        ("-s 4096", "-s/--size is set by rdma_verify_size"),
        ("-q 4", "-q/--qp is set by rdma_verify_qps"),
        ("-Fb", "-Fb (-F/--CPU-freq) is set by the role"),
    ],
)
@pytest.mark.parametrize("where", ["global", "rail"])
def test_flags_the_role_sets_are_refused_naming_the_variable_and_the_flag(words, shown, where):
    if where == "global":
        found = errors(extra=words.split())
        name = "rdma_verify_extra_args"
    else:
        found = errors(per_rail={"mlx5_1": words})
        name = "rdma_verify_rail_extra_args[mlx5_1]"
    assert found and found[0].startswith(f"{name}: {shown}"), found
    if words == "-Fb":  # a cluster: both of its letters
        assert "(-b/--bidirectional) is set by rdma_verify_bidirectional" in found[1]


def test_use_cuda_points_to_rdma_verify_gpudirect():
    [message] = errors(per_rail={"mlx5_0": "--use_cuda=0"})
    assert message.startswith(
        "rdma_verify_rail_extra_args[mlx5_0]: --use_cuda=0 (--use_cuda) is refused; "
        "GPUDirect is rdma_verify_gpudirect: it puts each rail's buffers in the GPU nearest"
    )
    [message] = errors(extra=["--use_cuda", "3"])
    assert message.startswith("rdma_verify_extra_args: --use_cuda is refused")


def test_the_traffic_class_is_refused_only_while_the_role_sets_one():
    assert errors(extra=["--tclass=96"]) == []
    assert errors(per_rail={"mlx5_0": "-T 96"}) == []
    [one] = errors(extra=["--tclass=96"], tclass_set=True)
    [two] = errors(per_rail={"mlx5_0": "-T 96"}, tclass_set=True)
    assert "--tclass=96 (--tclass) is set by rdma_verify_tclass" in one
    assert two.startswith(
        "rdma_verify_rail_extra_args[mlx5_0]: -T/--tos is set by rdma_verify_tclass"
    )
    policy = {"roce_dscp": 26}
    assert vplan.option_errors(dict(OPTIONS, extra_args=["--tclass=96"]), RAILS) == []
    assert vplan.option_errors(
        dict(OPTIONS, extra_args=["--tclass=96"], roce_policy=policy, tclass="auto"), RAILS
    )


@pytest.mark.parametrize(
    "words",
    [
        ["-t", "128", "-l", "4"],  # values are not options
        ["-m", "4096", "-r", "512"],
        ["-w", "-1"],  # -w takes the next word, even one starting with "-"
        ["--tx-depth=256", "--cq-mod", "1", "-e"],
        ["--use_cuda_dmabuf", "--sl=3", "--qp-timeout=20"],  # longer names than owned ones
        ["--", "-d"],  # after "--": not an option
        [],
    ],
)
def test_options_the_role_does_not_set_pass(words):
    assert errors(extra=words, per_rail={"mlx5_0": words}) == []


def test_values_that_are_not_arguments_are_refused_naming_the_variable():
    assert errors(per_rail=["mlx5_0"]) == [
        "rdma_verify_rail_extra_args must be a dict of rail name -> perftest arguments; "
        "got ['mlx5_0']"
    ]
    assert errors(per_rail={"mlx5_0": {"t": 1}}) == [
        "rdma_verify_rail_extra_args[mlx5_0] must be a list of perftest arguments or one "
        "string; got {'t': 1}"
    ]
    assert errors(per_rail={"mlx5_0": "-t '128"})[0].startswith(
        "rdma_verify_rail_extra_args[mlx5_0]: cannot split"
    )
