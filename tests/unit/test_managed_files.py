"""rdma.fabric.managed_files, in-process on a tmp tree: one call writes a host's
generated files, sets their mode, removes only the stale files its patterns own, and
tells the truth in check mode and diff."""

from __future__ import annotations

import os
import stat

import pytest
from ansible_collections.rdma.fabric.plugins.modules import managed_files


class NoTool:
    """managed_files runs no command: any call is a test failure."""

    tool = ()

    def run(self, argv):
        raise AssertionError(f"managed_files ran {argv}")


@pytest.fixture
def run(module_with_tool):
    return module_with_tool(managed_files, NoTool())


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_writes_then_changes_nothing(run, tmp_path):
    files = {
        str(tmp_path / "40-rdma-rail-a.network"): {"content": "[Match]\nName=a\n", "mode": "0644"},
        str(tmp_path / "rdma-b.nmconnection"): {"content": "[connection]\n", "mode": "0600"},
    }
    checked = run(check_mode=True, diff=True, files=files)
    assert checked["changed"] and checked["written"] == sorted(files)
    assert not any(os.path.exists(p) for p in files), "check mode wrote a file"
    assert [d["after"] for d in checked["diff"]] == ["[Match]\nName=a\n", "[connection]\n"]

    first = run(files=files)
    assert first["written"] == sorted(files) and first["removed"] == []
    assert (tmp_path / "40-rdma-rail-a.network").read_text() == "[Match]\nName=a\n"
    assert mode(tmp_path / "rdma-b.nmconnection") == 0o600
    assert mode(tmp_path / "40-rdma-rail-a.network") == 0o644
    again = run(check_mode=True, files=files)
    assert again["changed"] is False and again["written"] == []
    assert run(files=files)["changed"] is False


def test_a_changed_mode_or_content_is_set(run, tmp_path):
    path = tmp_path / "40-rdma-rail-a.network"
    path.write_text("old\n")
    path.chmod(0o666)
    result = run(diff=True, files={str(path): {"content": "new\n", "mode": "0644"}})
    assert result["written"] == [str(path)] and path.read_text() == "new\n"
    assert mode(path) == 0o644
    assert result["diff"][0]["before"] == "old\n" and result["diff"][0]["after"] == "new\n"
    path.chmod(0o600)
    assert run(files={str(path): {"content": "new\n", "mode": "0644"}})["written"] == [str(path)]
    assert mode(path) == 0o644


def test_only_stale_files_of_its_patterns_are_removed(run, tmp_path):
    keep = tmp_path / "40-rdma-rail-a.network"
    stale = tmp_path / "40-rdma-rail-gone.network"
    foreign = tmp_path / "10-mgmt.network"
    for path in (stale, foreign):
        path.write_text("x\n")
    args = {
        "files": {str(keep): {"content": "a\n", "mode": "0644"}},
        "remove": [str(tmp_path / "40-rdma-rail-*")],
    }
    checked = run(check_mode=True, **args)
    assert checked["removed"] == [str(stale)] and stale.exists()
    result = run(**args)
    assert result["removed"] == [str(stale)]
    assert keep.exists() and foreign.exists() and not stale.exists()
    assert run(**args)["changed"] is False


def test_a_missing_directory_fails_naming_the_path_and_writes_nothing(run, tmp_path):
    good = tmp_path / "a.network"
    bad = tmp_path / "nowhere" / "b.network"
    result = run(files={str(good): {"content": "a\n"}, str(bad): {"content": "b\n"}})
    assert result["failed"] and f"{bad}: its directory {bad.parent} does not exist" in result["msg"]
    assert not good.exists()


def test_content_must_be_given(run, tmp_path):
    result = run(files={str(tmp_path / "a"): {"mode": "0644"}})
    assert result["failed"] and "needs a content" in result["msg"]


def test_parents_makes_the_directories(run, tmp_path):
    path = tmp_path / "etc/rdma-fabric/roce-qos.json"
    args = {"files": {str(path): {"content": "{}\n", "mode": "0644"}}, "parents": True}
    checked = run(check_mode=True, **args)
    assert checked["written"] == [str(path)] and not path.parent.exists()
    assert run(**args)["written"] == [str(path)] and path.read_text() == "{}\n"
    assert mode(path.parent) == 0o755
    assert run(**args)["changed"] is False
