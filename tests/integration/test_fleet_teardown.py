"""The fleet's teardown (tests/fleet/fleet.py down) against the dockerd seen after the
64-host fleet: containers removed side by side (one `docker rm -f` of all 66, or of 8
at a time) left dockerd 20.10.24 counting an endpoint on 1 to 3 of the fleet's networks
that no container holds and `docker network inspect` does not list; `docker network rm`
then answers "has active endpoints" until dockerd restarts, and the next fleet starts on
the old networks (make fleet FLEET=64's test_fleet_is_gone_after_the_run failed so; two
of two `fleet.py up 64` + down did the same; one container at a time, none did).

The docker CLI here is a stand-in (no dockerd is touched): a script on PATH keeping its
containers and networks in a JSON file, answering the commands down() uses as the docker
CLI does, and leaking a phantom endpoint on a network when one `rm -f` removes more than
one of its containers (the behaviour above). Its docstring says what it stands for.
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
"""Stand-in for the docker CLI (a test double, not docker), as dockerd 20.10.24 behaved
with the fleet: `rm -f` of several containers at once leaves a phantom endpoint on a
network they shared (not listed by inspect); `network rm` refuses a network with any
endpoint ("error while removing network: network NAME id ID has active endpoints",
exit 1). State in $DOCKER_STANDIN_STATE."""
import json, os, sys
path = os.environ["DOCKER_STANDIN_STATE"]
state = json.load(open(path))
args = sys.argv[1:]
out, rc = "", 0
if args[:2] == ["ps", "-aq"]:
    out = "\\n".join(state["containers"])
elif args[:2] == ["rm", "-f"]:
    gone = args[2:]
    for net in state["networks"].values():
        if len([c for c in gone if c in net["containers"]]) > 1:
            net["phantom"] = True
        net["containers"] = [c for c in net["containers"] if c not in gone]
    state["containers"] = [c for c in state["containers"] if c not in gone]
elif args[:3] == ["network", "ls", "-q"]:
    out = "\\n".join(state["networks"])
elif args[:2] == ["network", "rm"]:
    for name in args[2:]:
        net = state["networks"][name]
        if net["containers"] or net.get("phantom"):
            sys.stderr.write(
                f"Error response from daemon: error while removing network: network {{name}} "
                "id 0123 has active endpoints\\n"
            )
            rc = 1
        else:
            del state["networks"][name]
else:
    sys.stderr.write(f"stand-in: unexpected docker {{args}}\\n")
    rc = 2
json.dump(state, open(path, "w"))
print(out)
sys.exit(rc)
'''


def test_down_removes_containers_one_at_a_time_and_every_network(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(DOCKER.format(python=sys.executable))
    docker.chmod(docker.stat().st_mode | stat.S_IXUSR)
    hosts = [f"rf-fleet-gpu{i:03d}" for i in range(1, 5)]
    networks = {"rf-fleet-mgmt": {"containers": [*hosts, "rf-fleet-leaf4"]}}
    networks.update({f"rf-fleet-rail{k}": {"containers": list(hosts)} for k in range(8)})
    state = tmp_path / "docker.json"
    state.write_text(json.dumps({"containers": [*hosts, "rf-fleet-leaf4"], "networks": networks}))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DOCKER_STANDIN_STATE", str(state))
    monkeypatch.setattr(fleet.time, "sleep", lambda seconds: None)
    (tmp_path / "fleet").mkdir()

    fleet.down(tmp_path / "fleet", quiet=True)

    assert json.loads(state.read_text()) == {"containers": [], "networks": {}}
