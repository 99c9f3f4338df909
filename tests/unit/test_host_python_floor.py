"""The host-side Python check `make lint` runs (tests/harness/check_host_python.py) sees
what it must: every file that runs on a managed host, and code newer than the floor
(3.8) that ruff's per-file py38 target lets through."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHECK = Path(__file__).resolve().parents[1] / "harness" / "check_host_python.py"
sys.path.insert(0, str(CHECK.parent))

import check_host_python  # noqa: E402


def _check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECK), *map(str, paths)], capture_output=True, text=True, check=False
    )


def test_it_checks_the_modules_the_module_utils_and_the_boot_script():
    names = {f"{p.parent.name}/{p.name}" for p in check_host_python.host_code()}
    assert "files/roce-qos-apply" in names
    assert "modules/roce_qos.py" in names and "module_utils/roce_qos.py" in names


@pytest.mark.parametrize(
    "source",
    [
        "pairs = dict(zip([1], [2], strict=True))\n",  # 3.10: runs into TypeError on 3.8
        "name = 'mlx5_0'.removeprefix('mlx5_')\n",  # 3.9
        "import itertools\nlinks = list(itertools.pairwise([1, 2, 3]))\n",  # 3.10
        "match 1:\n    case 1:\n        pass\n",  # 3.10 syntax
        "with (open('a') as a, open('b') as b):\n    pass\n",  # 3.9 syntax
    ],
    ids=["zip-strict", "removeprefix", "pairwise", "match", "parenthesised-with"],
)
def test_it_refuses_code_newer_than_the_floor(tmp_path, source):
    path = tmp_path / "newer.py"
    path.write_text(source)
    run = _check(path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "needs a Python newer than 3.8" in run.stderr


def test_it_passes_code_of_the_floor(tmp_path):
    path = tmp_path / "floor.py"
    path.write_text("pairs = dict(zip([1], [2]))\nif (n := len(pairs)) > 0:\n    print(n)\n")
    run = _check(path)
    assert run.returncode == 0, run.stdout + run.stderr
