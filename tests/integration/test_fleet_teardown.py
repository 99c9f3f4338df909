"""The fleet's teardown (tests/fleet/fleet.py down) against a dockerd that keeps
endpoints of removed containers, as it did after the 64-host fleet: `docker network rm`
answers "has active endpoints" for good (not for a moment), so ten tries a second apart
left two networks behind and the next fleet started on them.

The docker CLI here is a stand-in (no dockerd is touched): a script on PATH that keeps
its networks and their endpoints in a JSON file and answers the five commands down()
uses as the docker CLI does (ps -aq, network ls -q, network rm, network inspect
--format, network disconnect -f). Its docstring says what it stands for.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/fleet"))

import fleet  # noqa: E402

DOCKER = '''#!{python}
"""Stand-in for the docker CLI (a test double, not docker): networks and their endpoints
in $DOCKER_STANDIN_STATE; `network rm` refuses a network with endpoints as dockerd does
("error while removing network: network NAME id ID has active endpoints", exit 1);
`network disconnect -f NET NAME` drops an endpoint. Every call is logged."""
import json, os, sys
path = os.environ["DOCKER_STANDIN_STATE"]
state = json.load(open(path))
state["calls"].append(sys.argv[1:])
args = sys.argv[1:]
out, rc = "", 0
if args[:2] == ["ps", "-aq"]:
    out = ""
elif args[:3] == ["network", "ls", "-q"]:
    out = "\\n".join(state["networks"])
elif args[:2] == ["network", "rm"]:
    for name in args[2:]:
        if state["networks"].get(name):
            sys.stderr.write(
                f"Error response from daemon: error while removing network: network {{name}} "
                f"id 0123 has active endpoints\\n"
            )
            rc = 1
        else:
            state["networks"].pop(name, None)
elif args[:2] == ["network", "inspect"]:
    out = " ".join(state["networks"].get(args[2], [])) + " "
elif args[:3] == ["network", "disconnect", "-f"]:
    endpoints = state["networks"].get(args[3], [])
    if args[4] in endpoints:
        endpoints.remove(args[4])
json.dump(state, open(path, "w"))
print(out)
sys.exit(rc)
'''


def test_down_forces_off_endpoints_dockerd_kept(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(DOCKER.format(python=sys.executable))
    docker.chmod(docker.stat().st_mode | stat.S_IXUSR)
    state = tmp_path / "docker.json"
    networks = {"rf-fleet-mgmt": ["rf-fleet-gpu003", "rf-fleet-leaf4"], "rf-fleet-rail0": []}
    networks["rf-fleet-rail7"] = ["rf-fleet-gpu001"]
    state.write_text(json.dumps({"networks": networks, "calls": []}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DOCKER_STANDIN_STATE", str(state))
    monkeypatch.setattr(fleet.time, "sleep", lambda seconds: None)
    (tmp_path / "fleet").mkdir()

    fleet.down(tmp_path / "fleet", quiet=True)

    after = json.loads(state.read_text())
    assert after["networks"] == {}, after
    forced = [c for c in after["calls"] if c[:3] == ["network", "disconnect", "-f"]]
    assert sorted(c[3:] for c in forced) == [
        ["rf-fleet-mgmt", "rf-fleet-gpu003"],
        ["rf-fleet-mgmt", "rf-fleet-leaf4"],
        ["rf-fleet-rail7", "rf-fleet-gpu001"],
    ]
