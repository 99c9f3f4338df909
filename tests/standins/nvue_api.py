"""STAND-IN for the Cumulus Linux NVUE REST API: not a switch, no nvued behind it.

No Cumulus switch is reachable where rdma-fabric is tested, so the tests start this
server on 127.0.0.1 (an ephemeral port, HTTPS with a certificate the test makes, or
plain HTTP) and point rdma.fabric.nvue_config at it. It follows the revision contract
NVIDIA documents for Cumulus Linux 5.x (docs "NVUE API" and "Use Cases and
Recommendations"; request/reply shapes as in their samples):

  POST   /nvue_v1/revision                   new revision, reply {"<id>": {"state": "pending", ...}}
  PATCH  /nvue_v1/<path>?rev=<id>            stage a subtree into a pending revision; JSON
                                             null removes; reply: the resulting subtree
  DELETE /nvue_v1/<path>?rev=<id>            remove a subtree from a pending revision
  PATCH  /nvue_v1/revision/<id>              {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
                                             -> "apply", then (after `apply_polls` reads)
                                             "applied"; without ays_yes -> "ays_fail";
                                             a staged config the validator rejects ->
                                             "invalid" with config_invalid issues, and the
                                             applied configuration stays as it was
  GET    /nvue_v1/revision                   every revision: {"<id>": state object, ...}
  GET    /nvue_v1/revision/<id>              the revision's state object
  PATCH  /nvue_v1/revision/applied           {"state": "save", ...}: startup := applied
  GET    /nvue_v1/<path>?rev=applied|startup|<id>[&filled=false]
  GET    /nvue_v1/<path>?rev=operational     the applied configuration with operational
                                             state (the stand-in's `operational`, e.g.
                                             interface/<swp>/lldp/neighbor/<id>: {chassis:
                                             {system-name}, port: {name}})

It rejects what breaks the contract: no or wrong basic authentication (401), a body
that is not JSON or not sent as application/json (400/415), staging without ?rev= or
into "applied"/"startup" or into a revision that is no longer pending (400), an
unknown revision or a revision id with its "/" not URL-encoded (404), applying a
revision twice (400), unknown query parameters (400).

Run as a program (`python3 nvue_api.py --bind 0.0.0.0 --cert C --key K`), it serves until
stopped, starting from the applied configuration in --applied (a JSON file), as the
Molecule scenario of roce_switch_qos runs it in a container.

Defaults and schema (only the keys rdma-fabric touches; see DEFAULTS and SCHEMA below,
each fact with its source): GET with filled=true (NVUE's default for `filled`) shows the
configuration over the documented defaults, filled=false the configuration alone, as
NVUE's `nv config show` and `nv show ... --applied` differ; `effective()` is the filled
applied tree. A PATCH whose body names a key outside SCHEMA, or a value outside a key's
documented choices, is refused with 400 before anything is staged (NVUE validates a
PATCH against its OpenAPI schema; the message wording here is the stand-in's).

Stand-in specifics (not in NVUE): `id_style` picks numeric ids ("1") or the 5.0-5.5
changeset ids; `validator(config) -> [(location, reason)]` decides what is invalid;
`log` records every request; `revisions` every revision; `operational` the state shown
over the applied configuration in the operational view.
"""

from __future__ import annotations

import base64
import copy
import json
import time
from urllib.parse import parse_qs, unquote, urlsplit

from json_http import serve_json, serve_until_stopped, server_arguments, stop_server

PREFIX = "/nvue_v1"

# Documented defaults of the keys rdma-fabric sets (Cumulus Linux 5.x):
# - `nv set qos roce enable`: default off (NVUE command reference, "nv set qos roce enable");
#   `nv set qos roce mode`: default lossless ("RDMA over Converged Ethernet - RoCE":
#   "NVUE defaults to roce mode lossless").
#   Cumulus Linux 5.15 renamed `nv set qos roce enable on|off` to `nv set qos roce state
#   enabled|disabled` (cumulus-linux-515 Whats-New/New-and-Changed-NVUE-Commands.md, "Changes
#   to Command Syntax"): ROCE_SWITCH below, by the release in the applied `system build`.
# - qos mapping default-global: trust l2, and DSCP n -> switch priority n >> 3 (Cumulus
#   "Quality of Service", Classification: the default qos_features.conf maps DSCP 0-7 to
#   priority 0 ... 24-31 to 3 ... 56-63 to 7).
DEFAULTS = {
    "qos": {
        "roce": {"enable": "off", "mode": "lossless"},
        "mapping": {
            "default-global": {
                "trust": "l2",
                "dscp": {str(d): {"switch-priority": d >> 3} for d in range(64)},
            }
        },
    }
}

# The NVUE object paths rdma-fabric writes ("*": any id; LEAF: a scalar; SET: a set
# member, {}), from the NVUE command reference (nv set qos roce / mapping /
# egress-queue-mapping / egress-scheduler / congestion-control / pfc / traffic-pool /
# pfc-watchdog, nv set interface <id> link mtu, nv set interface <id> qos pfc-watchdog,
# nv set interface <id> ip address <prefix>).
LEAF, SET = "leaf", "set"
CHOICES = {
    ("qos", "roce", "enable"): ("on", "off"),
    ("qos", "roce", "mode"): ("lossy", "lossless"),
    ("qos", "mapping", "*", "trust"): ("l2", "l3", "port", "both"),
    ("qos", "congestion-control", "*", "traffic-class", "*", "ecn"): ("enable", "disable"),
    # `red enable|disable`: Cumulus Linux 5.3 and later (command reference, Version History).
    ("qos", "congestion-control", "*", "traffic-class", "*", "red"): ("enable", "disable"),
    ("qos", "egress-scheduler", "*", "traffic-class", "*", "mode"): ("dwrr", "strict"),
}
SCHEMA = {
    "qos": {
        "roce": {"enable": LEAF, "mode": LEAF},
        "mapping": {
            "*": {
                "trust": LEAF,
                "dscp": {"*": {"switch-priority": LEAF}},
                "pcp": {"*": {"switch-priority": LEAF}},
            }
        },
        "egress-queue-mapping": {"*": {"switch-priority": {"*": {"traffic-class": LEAF}}}},
        "egress-scheduler": {"*": {"traffic-class": {"*": {"mode": LEAF, "bw-percent": LEAF}}}},
        "congestion-control": {
            "*": {
                "traffic-class": {
                    "*": dict.fromkeys(
                        ("ecn", "red", "min-threshold", "max-threshold", "probability"), LEAF
                    )
                }
            }
        },
        "pfc": {"*": {"switch-priority": {"*": SET}, "cable-length": LEAF, "rx": LEAF, "tx": LEAF}},
        "traffic-pool": {"*": {"switch-priority": {"*": SET}, "memory-percent": LEAF}},
        "pfc-watchdog": {"polling-interval": LEAF, "robustness": LEAF},
    },
    "interface": {
        "*": {
            "type": LEAF,
            "link": {"mtu": LEAF, "state": LEAF},
            "qos": {"pfc-watchdog": {"state": LEAF}},
            # `nv set interface <interface-id> ip address <ip-prefix-id>` (NVUE command
            # reference, Cumulus Linux 5.x; "Interface IP Addresses" in the user guide):
            # the addresses are a set of prefixes, each member {}.
            "ip": {"address": {"*": SET}},
        }
    },
}


# The RoCE on/off key per release: (first release, key, choices, default).
ROCE_SWITCH = (
    ((5, 15), "state", ("enabled", "disabled"), "disabled"),
    ((5, 0), "enable", ("on", "off"), "off"),
)
# The release a stand-in serves when its applied tree names none (`system build`).
DEFAULT_RELEASE = (5, 9)


def release_of(tree):
    """(major, minor) from a tree's `system build` ("Cumulus Linux 5.15.0"), or the default."""
    build = ((tree or {}).get("system") or {}).get("build") or ""
    words = build.replace("Cumulus Linux", "").strip().split(".")[:2]
    numbers = [int(n) for n in words if n.isdigit()]
    return tuple(numbers) if len(numbers) == 2 else DEFAULT_RELEASE


def roce_switch(release=DEFAULT_RELEASE):
    return next(row for row in ROCE_SWITCH if tuple(release) >= row[0])


def _for_release(release):
    """SCHEMA, CHOICES and DEFAULTS with the release's RoCE on/off key."""
    _first, key, choices, default = roce_switch(release)
    schema = copy.deepcopy(SCHEMA)
    schema["qos"]["roce"] = {key: LEAF, "mode": LEAF}
    options = {k: v for k, v in CHOICES.items() if k[:2] != ("qos", "roce") or k[2] == "mode"}
    options[("qos", "roce", key)] = choices
    defaults = copy.deepcopy(DEFAULTS)
    defaults["qos"]["roce"] = {key: default, "mode": "lossless"}
    return schema, options, defaults


def schema_errors(body, parts=(), release=DEFAULT_RELEASE):
    """Where a PATCH body (at path ``parts``) leaves SCHEMA or a key's choices (of the
    release: `qos roce enable` before 5.15, `qos roce state` from 5.15)."""
    node, choices, _defaults = _for_release(release)
    return _walk(body, node, parts, choices)


def _walk(body, node, parts, choices):
    pattern = []
    for part in parts:
        if not isinstance(node, dict):
            return [f"/{'/'.join(parts)}: no such path"]
        key = part if part in node else "*" if "*" in node else None
        if key is None:
            return [f"/{'/'.join(parts)}: '{part}' is not a property"]
        node, pattern = node[key], [*pattern, key]
    return _check(body, node, list(parts), pattern, choices)


def _check(value, node, path, pattern, all_choices):
    where = "/" + "/".join(path)
    if value is None:
        return []  # null removes
    if node == SET:
        return [] if value == {} else [f"{where}: a set member takes {{}}"]
    if node == LEAF:
        choices = all_choices.get(tuple(pattern))
        if isinstance(value, dict):
            return [f"{where}: {value!r} is not a value"]
        if choices and value not in choices:
            return [f"{where}: {value!r} is not one of {list(choices)}"]
        return []
    if not isinstance(value, dict):
        return [f"{where}: {value!r} is not an object"]
    errors = []
    for key, sub in value.items():
        name = key if key in node else "*" if "*" in node else None
        if name is None:
            errors.append(
                f"{where}: Additional properties are not allowed ('{key}' was unexpected)"
            )
            continue
        errors += _check(sub, node[name], [*path, key], [*pattern, name], all_choices)
    return errors


def _state(name, issues=(), progress=""):
    issue = {}
    for index, (location, reason) in enumerate(issues):
        issue[str(index)] = {
            "code": "config_invalid",
            "data": {"location": location, "reason": reason},
            "message": f"Config invalid at {location}: {reason}",
            "severity": "error",
        }
    return {"state": name, "transition": {"issue": issue, "progress": progress}}


def _merge(tree, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(tree) if isinstance(tree, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


class _Reject(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class NvueStandin:
    def __init__(self, user="cumulus", password="CumulusLinux!", applied=None, id_style="numeric"):
        self.user, self.password = user, password
        self.applied = copy.deepcopy(applied or {})
        # Operational state only (never configured): shown by GET without ?rev= or with
        # rev=operational, as NVUE shows its operational view.
        self.operational = {}
        self.startup = copy.deepcopy(self.applied)
        self.id_style = id_style
        self.validator = lambda config: []
        self.apply_polls = 1
        self.revisions = {}
        self.log = []
        self._server = None

    # --- server lifecycle ---------------------------------------------------------------
    def start(self, certfile=None, keyfile=None, bind="127.0.0.1", port=0):
        methods = ("GET", "POST", "PATCH", "DELETE")
        self._server = serve_json(self.handle, methods, certfile, keyfile, bind, port)
        self.scheme, self.port = self._server.scheme, self._server.server_address[1]
        return self

    def effective(self, tree=None):
        """The applied configuration over the documented defaults (filled=true)."""
        defaults = _for_release(release_of(self.applied))[2]
        return _merge(defaults, self.applied if tree is None else tree)

    def stop(self):
        stop_server(self._server)

    # --- the contract -------------------------------------------------------------------
    def _new_id(self):
        number = len(self.revisions) + 1
        if self.id_style == "numeric":
            return str(number)
        stamp = time.strftime("%Y-%m-%d_%H.%M.%S", time.gmtime())
        return f"changeset/cumulus/{stamp}_T{number:03d}"

    def _authorized(self, headers):
        want = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return headers.get("Authorization") == f"Basic {want}"

    def _json(self, headers, raw):
        if not (headers.get("Content-Type") or "").startswith("application/json"):
            raise _Reject(415, "Content-Type must be application/json")
        try:
            return json.loads(raw or b"null")
        except ValueError as err:
            raise _Reject(400, f"body is not JSON: {err}") from err

    def _revision(self, raw_id):
        if "/" in raw_id:
            raise _Reject(404, f"no such path: a revision id's '/' must be URL-encoded ({raw_id})")
        rev = unquote(raw_id)
        if rev not in self.revisions:
            raise _Reject(404, f"no such revision {rev!r}")
        return rev

    def handle(self, method, raw_path, headers, raw_body):
        url = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.log.append((method, url.path, query))
        try:
            if not self._authorized(headers):
                raise _Reject(401, "authentication required")
            if not url.path.startswith(PREFIX):
                raise _Reject(404, "not under /nvue_v1")
            unknown = set(query) - {"rev", "filled"}
            if unknown or query.get("filled", "false") not in ("true", "false"):
                raise _Reject(400, f"bad query parameters {query}")
            rest = url.path[len(PREFIX) :]
            if rest == "/revision":
                if method == "GET":
                    return 200, {rev: record["state"] for rev, record in self.revisions.items()}
                if method != "POST":
                    raise _Reject(405, "GET lists the revisions, POST creates one")
                rev = self._new_id()
                self.revisions[rev] = {
                    "state": _state("pending"),
                    "config": copy.deepcopy(self.applied),
                    "polls": 0,
                }
                return 200, {rev: self.revisions[rev]["state"]}
            if rest.startswith("/revision/"):
                return self._revision_call(method, rest[len("/revision/") :], headers, raw_body)
            parts = [unquote(p) for p in rest.strip("/").split("/") if p]
            return self._config_call(method, parts, query, headers, raw_body)
        except _Reject as err:
            return err.code, {"status": err.code, "title": err.message}

    def _revision_call(self, method, raw_id, headers, raw_body):
        if raw_id == "applied":
            if method != "PATCH":
                raise _Reject(405, "revision/applied takes PATCH (save)")
            body = self._json(headers, raw_body)
            if not isinstance(body, dict) or body.get("state") != "save":
                raise _Reject(400, "revision/applied: only state 'save'")
            self.startup = copy.deepcopy(self.applied)
            return 200, _state("save")
        rev = self._revision(raw_id)
        record = self.revisions[rev]
        if method == "GET":
            if record["state"]["state"] == "apply":
                record["polls"] += 1
                if record["polls"] >= self.apply_polls:
                    self.applied = copy.deepcopy(record["config"])
                    record["state"] = _state("applied")
            return 200, record["state"]
        if method != "PATCH":
            raise _Reject(405, f"{method} on a revision")
        body = self._json(headers, raw_body)
        if not isinstance(body, dict) or body.get("state") != "apply":
            raise _Reject(400, f"a revision takes state 'apply'; got {body!r}")
        if record["state"]["state"] != "pending":
            raise _Reject(400, f"revision {rev} is {record['state']['state']}, not pending")
        if (body.get("auto-prompt") or {}).get("ays") != "ays_yes":
            record["state"] = _state("ays_fail", progress="Aborted apply after warnings")
            record["state"]["transition"]["issue"] = {
                "0": {
                    "code": "client_timeout",
                    "data": {},
                    "message": "Timeout while waiting for client response",
                    "severity": "error",
                }
            }
            return 200, _state("apply")
        issues = self.validator(record["config"])
        if issues:
            record["state"] = _state("invalid", issues, "Invalid config")
        else:
            record["state"] = _state("apply")
        return 200, _state("apply")

    def _config_call(self, method, parts, query, headers, raw_body):
        rev = query.get("rev")
        if method == "GET":
            if rev == "operational":
                # The applied configuration with the switch's operational state (here:
                # what the test put in `operational`, e.g. each interface's lldp
                # neighbours, read-only).
                tree = _merge(self.applied, self.operational)
            elif rev in (None, "applied"):
                # A GET without ?rev= reads the applied configuration (NVIDIA's NVUE
                # clients: "GET /interface defaults to rev=applied").
                tree = self.applied
            elif rev == "startup":
                tree = self.startup
            elif rev in self.revisions:
                tree = self.revisions[rev]["config"]
            else:
                raise _Reject(404, f"no such revision {rev!r}")
            if query.get("filled", "true") == "true":
                tree = self.effective(tree)
            for part in parts:
                if not isinstance(tree, dict) or part not in tree:
                    raise _Reject(404, f"{'/'.join(parts)} is not configured")
                tree = tree[part]
            return 200, tree
        if method not in ("PATCH", "DELETE"):
            raise _Reject(405, f"{method} on configuration")
        if rev is None:
            raise _Reject(400, "changes need ?rev=<revision>")
        if rev not in self.revisions:
            raise _Reject(400, f"revision {rev!r} cannot be changed")
        record = self.revisions[rev]
        if record["state"]["state"] != "pending":
            raise _Reject(400, f"revision {rev} is {record['state']['state']}, not pending")
        body = self._json(headers, raw_body)
        if method == "PATCH" and not isinstance(body, dict):
            raise _Reject(400, "PATCH takes a JSON object")
        release = release_of(self.applied)
        problems = schema_errors(body, parts, release) if method == "PATCH" else []
        if problems:
            raise _Reject(400, "; ".join(problems))
        patch = body if method == "PATCH" else None
        for part in reversed(parts):
            patch = {part: patch}
        if not parts and method == "DELETE":
            record["config"] = {}
            return 200, {}
        record["config"] = _merge(record["config"], patch)
        tree = record["config"]
        for part in parts:
            tree = tree.get(part, {}) if isinstance(tree, dict) else {}
        return 200, tree if method == "PATCH" and parts else {}


def main(argv=None):
    parser = server_arguments("NVUE API", 8765)
    parser.add_argument("--applied", help="JSON file: the applied configuration to start from")
    parser.add_argument("--user", default="cumulus")
    parser.add_argument("--password", default="CumulusLinux!")
    args = parser.parse_args(argv)
    applied = None
    if args.applied:
        with open(args.applied, encoding="utf-8") as handle:
            applied = json.load(handle)
    standin = NvueStandin(user=args.user, password=args.password, applied=applied)
    serve_until_stopped(standin, args, "NVUE", PREFIX)


if __name__ == "__main__":
    main()
