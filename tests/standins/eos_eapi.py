"""STAND-IN for Arista EOS's eAPI (the Command API): not a switch, no EOS behind it.

No Arista switch is reachable where rdma-fabric is tested, so the tests start this
server on 127.0.0.1 (an ephemeral port, HTTPS with a certificate the test makes, or
plain HTTP) and point Ansible's httpapi connection (ansible_network_os arista.eos.eos)
at it. It follows the contract Arista publishes for eAPI (EOS User Manual, "eAPI";
the Command API Explorer's request and reply shapes) as far as the arista.eos
collection's httpapi plugin, its eos_config, eos_facts and eos_command modules, and
rdma-fabric's tasks use it:

  POST /command-api   JSON-RPC 2.0: {"jsonrpc": "2.0", "method": "runCmds", "id": ...,
                      "params": {"version": 1 | "latest", "cmds": [cmd | {"cmd", "input"}],
                      "format": "json" | "text"}}
                      -> {"jsonrpc": "2.0", "id": ..., "result": [one object per command]}
                      (text: {"output": "..."}; json: the command's model, {} for a
                      configuration command)

Commands run in order, in privileged EXEC mode (eAPI runs them enabled; `enable` with
its input is accepted), and stop at the first that fails: the reply is then a JSON-RPC
error {"code": 1002, "message": "CLI command N of M '<cmd>' failed: invalid command",
"data": [the results before it..., {"errors": ["Invalid input ..."]}]}, which the
httpapi plugin turns into the module's error text. 1003 ("unconverted command") answers
a command asked for in JSON that has no JSON model here. Malformed requests get the
JSON-RPC 2.0 codes (-32700 parse error, -32600 invalid request, -32601 unknown method,
-32602 invalid params); a request without the configured basic authentication gets HTTP
401, any other path 404.

The configuration: `running` holds the running-config as EOS prints it (3-space nesting,
`!` between blocks), parsed into a tree; `startup` the saved one. Commands:

  configure session NAME     enter (or create, from a copy of the running-config) a
                             configuration session; sessions outlive the request, as on
                             EOS, so eos_config's second request finds the first's
  configure [terminal]       configure the running-config directly
  <configuration lines>      see GRAMMAR: the lines roce_switch_qos renders (qos map dscp,
                             qos profile with its tx-queue/uc-tx-queue blocks, interface
                             mtu, (no) switchport, ip address, ipv6 address,
                             service-profile) plus hostname/description/shutdown; a line
                             the current mode lacks is tried in the enclosing modes (the
                             way eos_config's `commands` output sends a block's parents and
                             then its lines, unindented); `no LINE` removes a line;
                             `exit`, `end`
  show session-config [diffs]  in a session: its configuration, or a unified diff of the
                             running-config against it ("" when equal)
  commit | abort             in a session: replace the running-config with it / drop it
  show running-config, show startup-config   text
  copy running-config startup-config, write [memory]   startup := running
  show configuration sessions, show version, show hostname (json and text)
  show lldp neighbors [detail]   json: the `lldp` table given to the stand-in ({port:
                             [{"system": name, "port": id, "port_type": "interfaceName" |
                             "macAddress", "description": text}]}), in eAPI's shapes
                             (lldpNeighbors rows; detail: per port lldpNeighborInfo with
                             neighborInterfaceInfo, as Arista's ANTA test fixtures show)

How EOS rewrites what it is given (each with its source):
  - the DSCP to traffic-class map is a map: a DSCP has one traffic class, and a `qos map
    dscp ... to traffic-class N` line re-maps the DSCPs it names (the lines before it
    keep their other DSCPs). `show running-config` prints it as one `qos map dscp <DSCPs
    ascending> to traffic-class N` line per traffic class, traffic classes ascending,
    naming only the DSCPs whose class differs from EOS' default map: aristanetworks/avd
    issue "Re sort priority-flow-control as per EOS 4.35 CLI" shows a 4.35.1F
    running-config with 44 DSCPs on one `to traffic-class 1` line, and the same
    intended config's `qos map dscp 46 to traffic-class 5` (and `qos map cos 3 to
    traffic-class 3`, with CoS 2 and 3 dropped from `qos map cos 1 2 3 4 to
    traffic-class 2`) absent there: default mappings are not printed, and a later line
    re-maps. `no qos map dscp D...` puts those DSCPs back on their default class.
    DEFAULT_DSCP_TC holds the default map as far as a source proves it (DSCP 46 on
    traffic class 5, from that running-config); a DSCP it does not name is treated as
    having no default here, so its mapping is always printed.
  - `priority strict` under a tx-queue is EOS' default and is not printed: a session's
    `show session-config diffs` on hardware (aristanetworks/avd pull request "Rearrange
    eos_cli_config_gen config order as per EOS 4.35.0F part 11") shows tx-queues with no
    priority line; `priority strict` removes a `no priority`, and only `no priority` is
    kept.

Platform refusals (data, with sources): EOS `mtu` takes 68-9214 on Ethernet interfaces
(EOS User Manual, "mtu (Interfaces)"). The queue keyword: `tx-queue` everywhere (Arista
TOI "configurable tx-queue 7", 4.33.0F: Sand (Jericho) platform switches expose all
eight queues, 0-7, through the CLI; the hardware session diff above configures
`tx-queue 7`); `uc-tx-queue` only on the Sand models (UC_TX_QUEUE_MODELS: 7280/7500/
7800; aristanetworks/avd eos_cli_config_gen qos-profiles template renders both). A
switch that takes `uc-tx-queue` only (the older Arad-based 7500E/7280E, by the review's
reading of that TOI; not seen in the excerpt read here, and not told apart by model name)
is had with `queue_keywords=("uc-tx-queue",)`.

Not modelled (a real switch may differ): how EOS rewrites other lines in its
running-config (the stand-in keeps them as entered: no other default hidden, no
reordering), `drop-precedence` on `qos map dscp`, commands outside GRAMMAR (refused as
invalid input),
the JSON form of show running-config, secondary addresses, VRFs, session limits and
commit conflicts, `rollback clean-config` (replace), AAA beyond one user, the
`show interfaces` model (so `roce_switch_qos_ports: all` is not served), and anything
the switch does with the configuration (no data plane: PFC, ECN, addresses unroutable).

Stand-in specifics: `log` records every command run (with its session or None);
`model` and `version` answer `show version`; `lldp` the neighbours.
"""

from __future__ import annotations

import base64
import copy
import difflib
import ipaddress
import json
import re

from json_http import serve_json, serve_until_stopped, server_arguments, stop_server

PATH = "/command-api"
INDENT = 3

# Sand (Arad/Jericho) platforms also name their unicast queues `uc-tx-queue` (EOS User
# Manual, QoS, "Arad/Jericho platform" sections); `tx-queue` is taken on them too (Arista
# TOI "configurable tx-queue 7", 4.33.0F: all eight queues are exposed through the CLI).
UC_TX_QUEUE_MODELS = ("DCS-7280", "DCS-7500", "DCS-7800")
# EOS' default DSCP to traffic-class map, only as far as a source proves it: DSCP 46 on
# traffic class 5 (a 4.35.1F running-config lacks the intended `qos map dscp 46 to
# traffic-class 5`: aristanetworks/avd issue "Re sort priority-flow-control as per EOS
# 4.35 CLI"). The rest is unproven here: those DSCPs' mappings are always printed.
DEFAULT_DSCP_TC = {46: 5}
_DSCP_MAP = re.compile(r"qos map dscp (\d+(?: \d+)*) to traffic-class ([0-7])")
MTU_RANGE = (68, 9214)  # EOS User Manual, "mtu (Interfaces)": 68 to 9214 bytes

_IFACE = r"(?:Ethernet\d+(?:/\d+)*|Management\d+(?:/\d+)?|Loopback\d+|Port-Channel\d+|Vlan\d+)"
_WORD = r"[A-Za-z0-9_.:-]+"
# mode -> [(regex, key, submode)]. A line matching `key` replaces the mode's line with
# the same key (EOS keeps one value per setting); key None: the line is its own key.
# Syntax from aristanetworks/avd eos_cli_config_gen templates (qos, qos-profiles,
# ethernet-interfaces) and the EOS User Manual.
GRAMMAR = {
    "config": [
        (rf"interface ({_IFACE})", None, "if"),
        (rf"qos profile ({_WORD})", None, "qos-profile"),
        (r"qos map dscp (\d+(?: \d+)*) to traffic-class ([0-7])", None, None),
        (r"qos map traffic-class ([0-7]) to dscp (\d+)", r"qos map traffic-class \1", None),
        (rf"hostname ({_WORD})", "hostname", None),
        (r"username \S+ .*", None, None),
        (r"(?:no )?lldp run", "lldp run", None),
    ],
    "if": [
        (r"description .+", "description", None),
        (r"(?:no )?shutdown", "shutdown", None),
        (r"(?:no )?switchport", "switchport", None),
        (r"mtu (\d+)", "mtu", None),
        (r"ip address (\S+)", "ip address", None),
        (r"ipv6 address (\S+)", None, None),
        (rf"service-profile ({_WORD})", "service-profile", None),
        (r"speed \S+", "speed", None),
    ],
    "qos-profile": [
        (r"qos trust (dscp|cos)", "qos trust", None),
        (r"priority-flow-control on", None, None),
        (r"priority-flow-control priority ([0-7]) (no-drop|drop)", r"pfc priority \1", None),
        (r"priority-flow-control pause watchdog", None, None),
        (r"priority-flow-control pause watchdog port action (drop|notify-only)", "wd action", None),
        (
            r"priority-flow-control pause watchdog port timer timeout ([0-9.]+) "
            r"polling-interval (auto|[0-9.]+) recovery-time ([0-9.]+)(?: forced)?",
            "wd timer",
            None,
        ),
        (r"(tx-queue|uc-tx-queue) ([0-7])", None, "tx-queue"),
    ],
    "tx-queue": [
        (r"no priority|priority strict", "priority", None),
        (r"bandwidth percent (\d+)", "bandwidth", None),
        (
            r"random-detect ecn minimum-threshold (\d+) (bytes|kbytes|mbytes|segments) "
            r"maximum-threshold (\d+) (bytes|kbytes|mbytes|segments) "
            r"max-mark-probability (\d+)(?: weight (\d+))?",
            "random-detect ecn",
            None,
        ),
        (r"random-detect ecn count", None, None),
        (
            r"random-detect drop minimum-threshold (\d+) (bytes|kbytes|mbytes|segments) "
            r"maximum-threshold (\d+) (bytes|kbytes|mbytes|segments) "
            r"drop-probability (\d+)(?: weight (\d+))?",
            "random-detect drop",
            None,
        ),
    ],
}


class CliError(Exception):
    """A command EOS would refuse: eAPI error 1002 with this text."""


class _Unconverted(Exception):
    """A command asked for in JSON that has no JSON model here: eAPI error 1003."""


def parse_config(text):
    """[[line, children], ...] from EOS's indented running-config text."""
    root = []
    stack = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // INDENT
        while stack[-1][0] >= depth:
            stack.pop()
        node = [stripped, []]
        stack[-1][1].append(node)
        stack.append((depth, node[1]))
    return root


def print_config(tree, header=""):
    """EOS's layout: nested lines 3 spaces deeper, `!` after each block, `end`."""
    lines = [header] if header else []

    def walk(nodes, depth):
        for line, children in nodes:
            if children and depth == 0 and lines and lines[-1] != "!":
                lines.append("!")
            lines.append(" " * (INDENT * depth) + line)
            walk(children, depth + 1)
            if children and depth == 0:
                lines.append("!")
            elif children:
                lines.append(" " * (INDENT * depth) + "!")

    walk(tree, 0)
    lines.append("end")
    return "\n".join(lines) + "\n"


def dscp_map(nodes):
    """{dscp: traffic class} of the top-level `qos map dscp` lines (the non-default ones)."""
    out = {}
    for line, _children in nodes:
        found = _DSCP_MAP.fullmatch(line)
        if found:
            for dscp in found.group(1).split():
                out[int(dscp)] = int(found.group(2))
    return out


def set_dscp_map(nodes, mapping, defaults):
    """Write ``mapping`` back as EOS prints it: one line per traffic class (ascending),
    its DSCPs ascending, the DSCPs on their default class left out; where the first
    `qos map dscp` line was, else at the end."""
    at = next((i for i, n in enumerate(nodes) if _DSCP_MAP.fullmatch(n[0])), len(nodes))
    nodes[:] = [n for n in nodes if not _DSCP_MAP.fullmatch(n[0])]
    by_tc = {}
    for dscp in sorted(mapping):
        if defaults.get(dscp) != mapping[dscp]:
            by_tc.setdefault(mapping[dscp], []).append(str(dscp))
    lines = [
        [f"qos map dscp {' '.join(dscps)} to traffic-class {tc}", []]
        for tc, dscps in sorted(by_tc.items())
    ]
    nodes[at:at] = lines


def _dscps(text):
    dscps = [int(d) for d in text.split()]
    bad = next((d for d in dscps if d > 63), None)
    if bad is not None:
        raise CliError(f"Invalid input (at token 3: '{bad}')")
    return dscps


def _first_word(pattern):
    found = re.match(r"(?:\(\?:no \)\?)?([a-z][a-z-]*)", pattern)
    return found.group(1) if found else None


def _match(mode, line):
    for pattern, key, submode in GRAMMAR[mode]:
        found = re.fullmatch(pattern, line)
        if found:
            return found, (found.expand(key) if key else line), submode
    return None


class _Cli:
    """One request's CLI: a stack of (mode, children list) over a configuration tree."""

    def __init__(self, standin):
        self.standin = standin
        self.session = None
        self.config = None  # the tree being edited (a session's, or the running one)
        self.stack = []  # [(mode, nodes)] from "config" inwards; [] = EXEC mode

    def run(self, command, fmt):
        text = command.strip()
        exec_commands = {
            "enable": lambda: "",
            "show version": self.standin.show_version,
            "show hostname": self.standin.show_hostname,
            "show configuration sessions": self.standin.show_sessions,
            "show lldp neighbors": self.standin.show_lldp,
            "show lldp neighbors detail": self.standin.show_lldp_detail,
            "show running-config": lambda: self.standin.running_text(),
            "show startup-config": lambda: self.standin.startup_text(),
            "copy running-config startup-config": self.standin.save,
            "write memory": self.standin.save,
            "write": self.standin.save,
        }
        if text in exec_commands:
            return self._answer(exec_commands[text](), fmt)
        if text in ("configure", "configure terminal"):
            self.session, self.config = None, self.standin.running
            self.stack = [("config", self.config)]
            return self._answer("", fmt)
        found = re.fullmatch(r"configure session (\S+)", text)
        if found:
            name = found.group(1)
            sessions = self.standin.sessions
            if name not in sessions:
                sessions[name] = copy.deepcopy(self.standin.running)
            self.session, self.config = name, sessions[name]
            self.stack = [("config", self.config)]
            return self._answer("", fmt)
        if not self.stack:
            raise CliError(f"Invalid input (at token 0: '{text.split()[0]}')")
        return self._answer(self._configure(text), fmt)

    def _answer(self, value, fmt):
        if isinstance(value, dict):
            return value if fmt == "json" else {"output": json.dumps(value, indent=2)}
        if fmt == "json" and value:
            raise _Unconverted()
        return {} if fmt == "json" else {"output": value}

    def _configure(self, text):
        if text in ("show session-config", "show session-config diffs", "commit", "abort"):
            return self._session_command(text)
        if text == "end":
            self.stack = []
            return ""
        if text == "exit":
            self.stack = self.stack[:-1] if len(self.stack) > 1 else []
            return ""
        if text == "show running-config":
            return self.standin.running_text()
        if text.startswith("no ") and not self._stored_negation(text):
            return self._negate(text[3:])
        for depth in range(len(self.stack) - 1, -1, -1):
            mode, nodes = self.stack[depth]
            matched = _match(mode, text)
            if matched:
                break
        else:
            raise CliError(f"Invalid input (at token 0: '{text.split()[0]}')")
        del self.stack[depth + 1 :]
        found, key, submode = matched
        self.standin.check(mode, found, text)
        if mode == "config" and found.re.pattern == _DSCP_MAP.pattern:
            # A DSCP has one traffic class: the line re-maps the DSCPs it names.
            mapping = dscp_map(nodes)
            mapping.update(dict.fromkeys(_dscps(found.group(1)), int(found.group(2))))
            set_dscp_map(nodes, mapping, self.standin.default_dscp_tc)
            return ""
        if mode == "tx-queue" and text == "priority strict":
            # EOS' default, not printed: it only takes a `no priority` away.
            nodes[:] = [n for n in nodes if n[0] != "no priority"]
            del self.stack[depth + 1 :]
            return ""
        node = next((n for n in nodes if (_match(mode, n[0]) or (None, n[0]))[1] == key), None)
        if node is None:
            node = [text, []]
            nodes.append(node)
        elif not submode:
            node[0] = text
        if submode:
            self.stack.append((submode, node[1]))
        return ""

    def _stored_negation(self, text):
        """`no switchport`, `no priority`: lines EOS keeps in its running-config."""
        return any(_match(mode, text) for mode, _nodes in self.stack)

    def _negate(self, wanted):
        """`no LINE`: remove the lines of the innermost mode that has them (a line, or
        every line it starts, as `no description` removes `description ...`); a setting
        the mode knows but does not hold is accepted, as EOS does. `no qos map dscp D...`
        [`to traffic-class N`] puts those DSCPs back on their default class."""
        found = re.fullmatch(r"qos map dscp (\d+(?: \d+)*)(?: to traffic-class [0-7])?", wanted)
        if found and self.stack:
            del self.stack[1:]
            nodes = self.stack[0][1]
            mapping = dscp_map(nodes)
            for dscp in _dscps(found.group(1)):
                mapping.pop(dscp, None)
            set_dscp_map(nodes, mapping, self.standin.default_dscp_tc)
            return ""
        for depth in range(len(self.stack) - 1, -1, -1):
            mode, nodes = self.stack[depth]
            keep = [n for n in nodes if n[0] != wanted and not n[0].startswith(wanted + " ")]
            if len(keep) < len(nodes):
                nodes[:] = keep
                del self.stack[depth + 1 :]
                return ""
        for mode, _nodes in reversed(self.stack):
            if any(_first_word(p) == wanted.split()[0] for p, _k, _s in GRAMMAR[mode]):
                return ""
        raise CliError(f"Invalid input (at token 1: '{wanted.split()[0]}')")

    def _session_command(self, text):
        if self.session is None:
            raise CliError(f"Invalid input (at token 0: '{text.split()[0]}'): not in a session")
        name = self.session
        if text == "show session-config":
            return print_config(self.config)
        if text == "show session-config diffs":
            before = print_config(self.standin.running).splitlines(keepends=True)
            after = print_config(self.config).splitlines(keepends=True)
            return "".join(
                difflib.unified_diff(
                    before, after, "system:/running-config", f"session:/{name}-session-config"
                )
            )
        if text == "commit":
            self.standin.running = self.standin.sessions.pop(name)
        else:
            self.standin.sessions.pop(name, None)
        self.session, self.config, self.stack = None, None, []
        return ""


class EapiStandin:
    def __init__(
        self,
        user="admin",
        password="arista",
        running="",
        hostname="leaf1",
        model="DCS-7060DX5-64S",
        version="4.32.1F",
        lldp=None,
        default_dscp_tc=None,
        queue_keywords=None,
    ):
        self.user, self.password = user, password
        self.hostname, self.model, self.version = hostname, model, version
        # EOS' default DSCP map (DEFAULT_DSCP_TC unless given) and the queue keywords
        # the platform takes (by model name unless given): module docstring.
        self.default_dscp_tc = dict(DEFAULT_DSCP_TC if default_dscp_tc is None else default_dscp_tc)
        self.queue_keywords = queue_keywords
        self.running = parse_config(running)
        set_dscp_map(self.running, dscp_map(self.running), self.default_dscp_tc)
        self.startup = copy.deepcopy(self.running)
        self.sessions = {}
        self.lldp = lldp or {}
        self.log = []
        self._server = None

    # --- server lifecycle ---------------------------------------------------------------
    def start(self, certfile=None, keyfile=None, bind="127.0.0.1", port=0):
        self._server = serve_json(self.handle, ("GET", "POST"), certfile, keyfile, bind, port)
        self.scheme, self.port = self._server.scheme, self._server.server_address[1]
        return self

    def stop(self):
        stop_server(self._server)

    # --- the contract -------------------------------------------------------------------
    def handle(self, method, path, headers, raw):
        want = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        if headers.get("Authorization") != f"Basic {want}":
            return 401, {"error": "authentication required"}
        if path != PATH:
            return 404, {"error": f"no such path {path}"}
        if method != "POST":
            return 405, {"error": "the Command API takes POST"}
        try:
            request = json.loads(raw)
        except ValueError:
            return 200, _rpc_error(None, -32700, "Parse error")
        if not isinstance(request, dict) or request.get("jsonrpc") != "2.0":
            return 200, _rpc_error(None, -32600, "Invalid request: jsonrpc must be '2.0'")
        rid = request.get("id")
        if request.get("method") != "runCmds":
            return 200, _rpc_error(rid, -32601, f"Method not found: {request.get('method')!r}")
        params = request.get("params")
        problem = _params_problem(params)
        if problem:
            return 200, _rpc_error(rid, -32602, f"Invalid params: {problem}")
        return 200, self.run(rid, params["cmds"], params.get("format", "json"))

    def run(self, rid, cmds, fmt):
        cli = _Cli(self)
        results = []
        for number, item in enumerate(cmds, 1):
            command = item["cmd"] if isinstance(item, dict) else item
            self.log.append((command, cli.session))
            try:
                results.append(cli.run(command, fmt))
            except CliError as err:
                return _command_error(
                    rid, number, len(cmds), command, 1002, "invalid command", results, str(err)
                )
            except _Unconverted:
                text = "This command has no JSON output here; use format text"
                return _command_error(
                    rid, number, len(cmds), command, 1003, "unconverted command", results, text
                )
        return {"jsonrpc": "2.0", "id": rid, "result": results}

    def check(self, mode, found, line):
        """The platform's refusals of a line that parses (module docstring)."""
        if mode == "if" and line.startswith("mtu "):
            mtu = int(found.group(1))
            if not MTU_RANGE[0] <= mtu <= MTU_RANGE[1]:
                raise CliError(f"Invalid input (at token 1: '{mtu}')")
        if mode == "if" and line.startswith(("ip address", "ipv6 address")):
            version = 4 if line.startswith("ip ") else 6
            try:
                address = ipaddress.ip_interface(found.group(1))
            except ValueError:
                address = None
            if address is None or address.version != version or "/" not in found.group(1):
                raise CliError(f"Invalid input (at token 2: '{found.group(1)}')")
        queue = mode == "qos-profile" and found.re.pattern.startswith("(tx-queue")
        if queue and found.group(1) not in self.taken_queue_keywords():
            raise CliError(f"Invalid input (at token 0: '{found.group(1)}')")

    def taken_queue_keywords(self):
        """`tx-queue` on every model, `uc-tx-queue` too on the Sand ones (module
        docstring), unless ``queue_keywords`` says otherwise."""
        if self.queue_keywords is not None:
            return tuple(self.queue_keywords)
        if self.model.startswith(UC_TX_QUEUE_MODELS):
            return ("tx-queue", "uc-tx-queue")
        return ("tx-queue",)

    # --- what the show commands print ---------------------------------------------------
    def _header(self, what):
        device = f"{self.hostname} ({self.model}, EOS-{self.version})"
        return f"! Command: show {what}\n! device: {device}\n!"

    def running_text(self):
        return print_config(self.running, self._header("running-config"))

    def startup_text(self):
        return print_config(self.startup, self._header("startup-config"))

    def save(self):
        self.startup = copy.deepcopy(self.running)
        return "Copy completed successfully."

    def show_version(self):
        return {
            "modelName": self.model,
            "version": self.version,
            "internalVersion": f"{self.version}-0.0",
            "serialNumber": "STANDIN0001",
            "systemMacAddress": "00:1c:73:00:00:01",
            "memTotal": 8000000,
            "memFree": 4000000,
            "architecture": "x86_64",
        }

    def show_hostname(self):
        return {"hostname": self.hostname, "fqdn": self.hostname}

    def show_sessions(self):
        return {
            "sessions": {name: {"state": "pending", "description": ""} for name in self.sessions},
            "maxSavedSessions": 1,
            "maxOpenSessions": 5,
        }

    def show_lldp(self):
        rows = [
            {"port": port, "neighborDevice": n["system"], "neighborPort": n["port"], "ttl": 120}
            for port, neighbours in self.lldp.items()
            for n in neighbours
        ]
        return {
            "tablesLastChangeTime": 0.0,
            "tablesAgeOuts": 0,
            "tablesInserts": len(rows),
            "tablesDeletes": 0,
            "tablesDrops": 0,
            "lldpNeighbors": rows,
        }

    def show_lldp_detail(self):
        def info(n):
            kind = n.get("port_type", "interfaceName")
            return {
                "chassisIdType": "macAddress",
                "chassisId": "0200.0000.0001",
                "systemName": n["system"],
                "ttl": 120,
                "neighborInterfaceInfo": {
                    "interfaceIdType": kind,
                    "interfaceId": f'"{n["port"]}"' if kind == "interfaceName" else n["port"],
                    "interfaceId_v2": n["port"],
                    "interfaceDescription": n.get("description", ""),
                },
            }

        return {
            "lldpNeighbors": {
                port: {"lldpNeighborInfo": [info(n) for n in neighbours]}
                for port, neighbours in self.lldp.items()
            }
        }


def _params_problem(params):
    if not isinstance(params, dict):
        return "params must be an object"
    if params.get("version", 1) not in (1, "latest"):
        return f"version must be 1 or 'latest'; got {params.get('version')!r}"
    if params.get("format", "json") not in ("json", "text"):
        return f"format must be json or text; got {params.get('format')!r}"
    cmds = params.get("cmds")
    if not isinstance(cmds, list) or not cmds:
        return "cmds must be a non-empty list"
    for item in cmds:
        if not (
            isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("cmd"), str))
        ):
            return f"each command is a string or {{'cmd': ..., 'input': ...}}; got {item!r}"
    return None


def _rpc_error(rid, code, message, data=None):
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def _command_error(rid, number, total, command, code, what, results, text):
    message = f"CLI command {number} of {total} '{command}' failed: {what}"
    return _rpc_error(rid, code, message, [*results, {"errors": [text]}])


def main(argv=None):
    parser = server_arguments("EOS eAPI", 443)
    parser.add_argument("--running", help="text file: the running-config to start from")
    parser.add_argument("--model", default="DCS-7060DX5-64S")
    args = parser.parse_args(argv)
    running = ""
    if args.running:
        with open(args.running, encoding="utf-8") as handle:
            running = handle.read()
    serve_until_stopped(EapiStandin(running=running, model=args.model), args, "EOS eAPI", PATH)


if __name__ == "__main__":
    main()
