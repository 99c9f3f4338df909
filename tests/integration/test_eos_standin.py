"""The EOS eAPI STAND-IN (tests/standins/eos_eapi.py) keeps Arista's published contract:
JSON-RPC 2.0 runCmds over POST /command-api, basic authentication, per-command results,
error 1002 carrying the results before the failing command, configuration sessions that
outlive a request and change the running-config only on commit. Talked to over HTTP on
127.0.0.1, as the httpapi connection does."""

from __future__ import annotations

import base64
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "standins"))
from eos_eapi import EapiStandin, print_config  # noqa: E402

RUNNING = "hostname leaf1\n!\ninterface Ethernet1\n   description gpu1\n   mtu 1500\n!\nend\n"


@pytest.fixture
def standin():
    server = EapiStandin(running=RUNNING).start()
    yield server
    server.stop()


def call(server, cmds, fmt="text", password="arista", method="runCmds", rid="t1"):
    body = {
        "jsonrpc": "2.0",
        "method": method,
        "id": rid,
        "params": {"version": 1, "cmds": cmds, "format": fmt},
    }
    auth = base64.b64encode(f"admin:{password}".encode()).decode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}/command-api",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json-rpc", "Authorization": f"Basic {auth}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 (loopback)
        return json.loads(reply.read())


def test_authentication_and_json_rpc_errors(standin):
    with pytest.raises(urllib.error.HTTPError) as err:
        call(standin, ["show version"], password="wrong")
    assert err.value.code == 401
    assert call(standin, ["show version"], method="runCmd")["error"]["code"] == -32601
    reply = call(standin, ["show version", "show hostname"], fmt="json")
    assert reply["id"] == "t1"
    assert [r.get("hostname") for r in reply["result"]] == [None, "leaf1"]
    assert reply["result"][0]["modelName"] == standin.model


def test_a_failing_command_stops_the_request_with_the_results_before_it(standin):
    reply = call(standin, ["configure session s1", "interface Ethernet1", "mtu 9300", "mtu 9000"])
    error = reply["error"]
    assert error["code"] == 1002
    assert error["message"] == "CLI command 3 of 4 'mtu 9300' failed: invalid command"
    assert error["data"] == [
        {"output": ""},
        {"output": ""},
        {"errors": ["Invalid input (at token 1: '9300')"]},
    ]
    assert (
        "mtu 9000"
        not in call(standin, ["configure session s1", "show session-config"])["result"][1]["output"]
    ), "nothing after the failing command ran"
    assert call(standin, ["show running-config"], fmt="json")["error"]["code"] == 1003


def test_a_session_changes_the_running_config_only_on_commit(standin):
    before = print_config(standin.running)
    call(
        standin,
        [
            "configure session s1",
            "qos profile P",
            "tx-queue 3",
            "bandwidth percent 50",
            "interface Ethernet1",
            "mtu 9000",
        ],
    )
    assert print_config(standin.running) == before, "not committed yet"
    reply = call(standin, ["configure session s1", "show session-config diffs", "abort"])
    diff = reply["result"][1]["output"]
    assert "-   mtu 1500\n" in diff and "+   mtu 9000\n" in diff
    assert "+qos profile P\n" in diff and "+   tx-queue 3\n" in diff, "parent modes fall through"
    assert standin.sessions == {} and print_config(standin.running) == before

    call(
        standin,
        [
            "configure session s2",
            "interface Ethernet1",
            "no description",
            "ipv6 address fd00::/127",
        ],
    )
    call(standin, ["configure session s2", "commit"])
    text = print_config(standin.running)
    assert "interface Ethernet1\n   mtu 1500\n   ipv6 address fd00::/127\n" in text
    assert "description" not in text
    call(standin, ["copy running-config startup-config"])
    assert standin.startup == standin.running


def test_the_queue_keyword_is_the_platforms(standin):
    standin.model = "DCS-7280SR3-48YC8"
    reply = call(standin, ["configure session s1", "qos profile P", "tx-queue 3"])
    assert reply["error"]["data"][-1] == {"errors": ["Invalid input (at token 0: 'tx-queue')"]}
    assert "error" not in call(standin, ["configure session s1", "qos profile P", "uc-tx-queue 3"])
