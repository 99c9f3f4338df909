"""The NVUE API stand-in keeps the documented contract (so a module that breaks it fails
its tests), and the client follows it with both revision id styles. In-process, HTTP on
127.0.0.1 only."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import types
import urllib.error
import urllib.request

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.nvue import NvueClient, NvueError
from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "tests" / "standins"))
from nvue_api import NvueStandin  # noqa: E402

AUTH = "Basic " + base64.b64encode(b"cumulus:pw").decode()


@pytest.fixture
def standin():
    server = NvueStandin(password="pw", applied={"qos": {"roce": {"mode": "lossy"}}}).start()
    yield server
    server.stop()


def call(server, method, path, body=None, auth=AUTH, content_type="application/json"):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}", data=data, method=method
    )
    if auth:
        request.add_header("Authorization", auth)
    if content_type and data is not None:
        request.add_header("Content-Type", content_type)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def client(server):
    return NvueClient("127.0.0.1", server.port, "cumulus", "pw", scheme="http", use_proxy=False)


def test_documented_reply_shapes(standin):
    status, body = call(standin, "POST", "/nvue_v1/revision")
    assert status == 200 and body == {
        "1": {"state": "pending", "transition": {"issue": {}, "progress": ""}}
    }
    status, body = call(standin, "PATCH", "/nvue_v1/qos/roce?rev=1", {"mode": "lossless"})
    assert (status, body) == (200, {"mode": "lossless"})
    apply = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
    assert call(standin, "PATCH", "/nvue_v1/revision/1", apply)[1]["state"] == "apply"
    assert call(standin, "GET", "/nvue_v1/revision/1")[1]["state"] == "applied"
    assert call(standin, "GET", "/nvue_v1/qos?rev=applied&filled=false")[1] == {
        "roce": {"mode": "lossless"}
    }


def test_revisions_are_listed(standin):
    assert call(standin, "GET", "/nvue_v1/revision") == (200, {})
    call(standin, "POST", "/nvue_v1/revision")
    call(
        standin,
        "PATCH",
        "/nvue_v1/revision/1",
        {"state": "apply", "auto-prompt": {"ays": "ays_yes"}},
    )
    call(standin, "POST", "/nvue_v1/revision")
    status, body = call(standin, "GET", "/nvue_v1/revision")
    assert status == 200
    assert {rev: state["state"] for rev, state in body.items()} == {"1": "apply", "2": "pending"}


def test_runs_as_a_program_until_stopped(tmp_path):
    """As the Molecule scenario runs it: a process, the applied configuration from a file."""
    applied = tmp_path / "applied.json"
    applied.write_text(json.dumps({"system": {"build": "Cumulus Linux 5.9.1"}}))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = REPO_ROOT / "tests" / "standins" / "nvue_api.py"
    args = [sys.executable, str(script), "--port", str(port), "--applied", str(applied)]
    args += ["--password", "pw"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == f"NVUE stand-in on http://127.0.0.1:{port}/nvue_v1"
        server = types.SimpleNamespace(port=port)
        assert call(server, "GET", "/nvue_v1/system") == (200, {"build": "Cumulus Linux 5.9.1"})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


@pytest.mark.parametrize(
    ("method", "path", "body", "kwargs", "code"),
    [
        ("GET", "/nvue_v1/qos", None, {"auth": None}, 401),
        ("PATCH", "/nvue_v1/qos", {"roce": {}}, {}, 400),  # no ?rev=
        ("PATCH", "/nvue_v1/qos?rev=applied", {"roce": {}}, {}, 400),
        ("PATCH", "/nvue_v1/qos?rev=9", {"roce": {}}, {}, 400),
        ("GET", "/nvue_v1/revision/9", None, {}, 404),
        ("GET", "/nvue_v1/qos?rev=applied&bogus=1", None, {}, 400),
        ("PATCH", "/nvue_v1/revision/applied", {"state": "apply"}, {}, 400),
        ("DELETE", "/nvue_v1/revision", None, {}, 405),
    ],
)
def test_requests_that_break_the_contract_are_refused(standin, method, path, body, kwargs, code):
    assert call(standin, method, path, body, **kwargs)[0] == code


def test_body_must_be_json_and_revisions_apply_once(standin):
    call(standin, "POST", "/nvue_v1/revision")
    assert call(standin, "PATCH", "/nvue_v1/?rev=1", {"a": 1}, content_type="text/plain")[0] == 415
    apply = {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
    assert call(standin, "PATCH", "/nvue_v1/revision/1", apply)[0] == 200
    assert call(standin, "PATCH", "/nvue_v1/revision/1", apply)[0] == 400
    assert call(standin, "PATCH", "/nvue_v1/?rev=1", {"a": 1})[0] == 400  # no longer pending


def test_apply_without_the_prompt_answer_is_ays_fail(standin):
    call(standin, "POST", "/nvue_v1/revision")
    call(standin, "PATCH", "/nvue_v1/revision/1", {"state": "apply"})
    state = call(standin, "GET", "/nvue_v1/revision/1")[1]
    assert state["state"] == "ays_fail"
    assert state["transition"]["issue"]["0"]["code"] == "client_timeout"


def test_changeset_ids_must_be_url_encoded():
    server = NvueStandin(password="pw", id_style="changeset").start()
    try:
        [rev] = call(server, "POST", "/nvue_v1/revision")[1]
        assert rev.startswith("changeset/cumulus/")
        assert call(server, "GET", f"/nvue_v1/revision/{rev}")[0] == 404
        assert call(server, "GET", "/nvue_v1/revision/" + rev.replace("/", "%2F"))[0] == 200
        nvue = client(server)
        rev2 = nvue.create_revision()
        nvue.patch(rev2, {"qos": {"roce": {"mode": "lossless"}}})
        assert nvue.apply(rev2, interval=0.01)["state"] == "applied"
        assert nvue.get("qos") == {"roce": {"mode": "lossless"}}
    finally:
        server.stop()


def test_client_reports_the_apis_messages(standin):
    standin.validator = lambda config: [("qos.roce.mode", "Not supported on this ASIC.")]
    nvue = client(standin)
    rev = nvue.create_revision()
    nvue.patch(rev, {"qos": {"roce": {"mode": "lossless"}}})
    with pytest.raises(
        NvueError, match=r"is 'invalid': Config invalid at qos.roce.mode: Not supported"
    ):
        nvue.apply(rev, interval=0.01)
    assert nvue.get("qos") == {"roce": {"mode": "lossy"}}
    assert nvue.get("nothing-here") == {}
    with pytest.raises(NvueError, match="HTTP 401"):
        NvueClient(
            "127.0.0.1", standin.port, "cumulus", "wrong", scheme="http", use_proxy=False
        ).get("qos")


# --- the documented defaults of the keys we touch, and unknown paths refused ---

from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import (  # noqa: E402
    normalize_policy,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (  # noqa: E402
    nvue_config,
)
from nvue_api import schema_errors  # noqa: E402


def test_defaults_show_with_filled_and_roce_is_off_until_enabled():
    server = NvueStandin(password="pw").start()
    try:
        status, roce = call(server, "GET", "/nvue_v1/qos/roce?rev=applied")
        assert (status, roce) == (200, {"enable": "off", "mode": "lossless"})
        status, _ = call(server, "GET", "/nvue_v1/qos/roce?rev=applied&filled=false")
        assert status == 404, "nothing configured: filled=false shows no defaults"
        dscp = call(server, "GET", "/nvue_v1/qos/mapping/default-global/dscp/27?rev=applied")[1]
        assert dscp == {"switch-priority": 3}, "DSCP 24-31 default to the lossless priority"
    finally:
        server.stop()
    # What the role pushed before (mode only) leaves the profile off; the rendering now on.
    assert (
        server.effective({"qos": {"roce": {"mode": "lossless"}}})["qos"]["roce"]["enable"] == "off"
    )
    rendered = nvue_config(normalize_policy({})[0], ["swp1"], 100)
    effective = server.effective(rendered)
    assert effective["qos"]["roce"]["enable"] == "on"
    assert effective["qos"]["mapping"]["default-global"]["dscp"]["27"] == {"switch-priority": 0}


@pytest.mark.parametrize(
    "changes",
    [{}, {"roce_priority": 4}, {"roce_priority": 5}, {"wred_drop": True}, {"pfc_priorities": []}],
)
def test_every_rendering_speaks_nvue_paths(changes):
    rendered = nvue_config(normalize_policy(changes)[0], ["swp1", "swp2s0"], 100, 60)
    assert schema_errors(rendered) == []


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("/nvue_v1/qos?rev=1", {"roce": {"enabled": "on"}}, "'enabled' was unexpected"),
        ("/nvue_v1/qos/roce?rev=1", {"enable": "yes"}, "is not one of ['on', 'off']"),
        ("/nvue_v1/?rev=1", {"interface": {"swp1": {"link": {"mtuu": 9000}}}}, "'mtuu'"),
        ("/nvue_v1/qos/nonsense?rev=1", {"a": 1}, "'nonsense' is not a property"),
    ],
)
def test_unknown_paths_and_values_are_refused(standin, path, body, words):
    call(standin, "POST", "/nvue_v1/revision")
    status, reply = call(standin, "PATCH", path, body)
    assert status == 400 and words in reply["title"], reply
    assert standin.revisions["1"]["config"] == standin.applied, "nothing staged"


# --- Cumulus 5.15 renamed `qos roce enable on|off` to `qos roce state enabled|disabled` ---
# (CumulusNetworks/docs cumulus-linux-515 Whats-New/New-and-Changed-NVUE-Commands.md)


@pytest.mark.parametrize(
    ("build", "key", "on", "off"),
    [
        ("Cumulus Linux 5.9.1", "enable", "on", "off"),
        ("Cumulus Linux 5.15.0", "state", "enabled", "disabled"),
    ],
)
def test_roce_on_key_per_release(build, key, on, off):
    server = NvueStandin(password="pw", applied={"system": {"build": build}})
    assert server.effective()["qos"]["roce"] == {key: off, "mode": "lossless"}
    release = tuple(int(n) for n in build.split()[-1].split(".")[:2])
    other = "enable" if key == "state" else "state"
    assert schema_errors({"qos": {"roce": {key: on}}}, release=release) == []
    assert schema_errors({"qos": {"roce": {other: "on"}}}, release=release)
    rendered = nvue_config(normalize_policy({})[0], ["swp1"], 100, release=build)
    assert rendered["qos"]["roce"] == {key: on, "mode": "lossless"}
    assert schema_errors(rendered, release=release) == []
