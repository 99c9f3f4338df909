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
from eos_eapi import EapiStandin, dscp_map, print_config  # noqa: E402

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
    """tx-queue on every model (Sand ones too), uc-tx-queue on Sand models only, and a
    switch made to take uc-tx-queue only refuses tx-queue."""
    reply = call(standin, ["configure session s1", "qos profile P", "uc-tx-queue 3"])
    assert reply["error"]["data"][-1] == {"errors": ["Invalid input (at token 0: 'uc-tx-queue')"]}
    standin.model = "DCS-7280SR3-48YC8"
    assert "error" not in call(standin, ["configure session s1", "qos profile P", "tx-queue 3"])
    assert "error" not in call(standin, ["configure session s1", "qos profile P", "uc-tx-queue 3"])
    standin.queue_keywords = ("uc-tx-queue",)
    reply = call(standin, ["configure session s2", "qos profile P", "tx-queue 3"])
    assert reply["error"]["data"][-1] == {"errors": ["Invalid input (at token 0: 'tx-queue')"]}


def running_lines(server, *commands):
    reply = call(server, ["configure session m", *commands, "commit", "show running-config"])
    assert "error" not in reply, reply
    return reply["result"][-1]["output"].splitlines()


def test_remapping_a_dscp_leaves_one_mapping(standin):
    """A DSCP has one traffic class: re-mapping DSCP 26 from TC 3 to TC 0 takes it off
    the TC 3 line, and the map reads back with one mapping for it."""
    text = running_lines(
        standin, "qos map dscp 24 25 26 to traffic-class 3", "qos map dscp 26 to traffic-class 0"
    )
    maps = [line for line in text if line.startswith("qos map dscp")]
    assert maps == ["qos map dscp 26 to traffic-class 0", "qos map dscp 24 25 to traffic-class 3"]
    assert dscp_map(standin.running) == {24: 3, 25: 3, 26: 0}


def test_the_dscp_map_prints_as_eos_does(standin):
    """One line per traffic class, ascending, DSCPs ascending whatever order they came
    in; a mapping EOS has by default (DSCP 46 on TC 5) is not printed; `no qos map dscp`
    puts DSCPs back on their default."""
    text = running_lines(
        standin,
        "qos map dscp 9 1 to traffic-class 2",
        "qos map dscp 0 to traffic-class 2",
        "qos map dscp 46 to traffic-class 0",
        "qos map dscp 46 to traffic-class 5",
        "qos map dscp 7 to traffic-class 1",
    )
    assert [line for line in text if line.startswith("qos map")] == [
        "qos map dscp 7 to traffic-class 1",
        "qos map dscp 0 1 9 to traffic-class 2",
    ]
    text = running_lines(standin, "no qos map dscp 1 9 to traffic-class 2")
    assert [line for line in text if line.startswith("qos map")] == [
        "qos map dscp 7 to traffic-class 1",
        "qos map dscp 0 to traffic-class 2",
    ]
    reply = call(standin, ["configure session x", "qos map dscp 64 to traffic-class 1"])
    assert reply["error"]["code"] == 1002


def test_priority_strict_is_the_hidden_default(standin):
    """Under a tx-queue, `priority strict` is not printed and takes `no priority` away."""
    text = running_lines(
        standin, "qos profile P", "tx-queue 3", "no priority", "tx-queue 4", "priority strict"
    )
    assert "   tx-queue 3\n      no priority\n" in "\n".join(text) + "\n"
    assert not any("priority strict" in line for line in text)
    text = running_lines(standin, "qos profile P", "tx-queue 3", "priority strict")
    assert not any("priority" in line for line in text), text
