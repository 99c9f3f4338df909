"""STAND-IN for the SSH CLI of an NVIDIA Quantum InfiniBand switch (MLNX-OS): no switch,
no subnet manager behind it, never proof of what a real switch accepts.

No Quantum switch is reachable where rdma-fabric is tested, so the tests start this SSH
server (paramiko) on 127.0.0.1 at an ephemeral port and point ansible.netcommon's
network_cli, with the rdma.fabric.mlnxos terminal and cliconf plugins, at it. It follows
the grammar of NVIDIA's "MLNX-OS User Manual" (v3.10.4500 LTS to v3.12) for what the
role sends:

  user mode  "<host> [standalone: master] > "   enable                -> enable mode
  enable     "<host> [standalone: master] # "   configure terminal    -> config mode
  config     "<host> [standalone: master] (config) # "   exit         -> enable mode
  any mode   no cli session paging enable       (paging off; accepted, no output)
             show version                       "Product name: MLNX-OS",
                                                "Product release: <release>" ...
  enable/config  show running-config            "##" comments, then the non-default
                                                configuration as indented commands
  config     ib smnode <node> enable            Subnet Manager chapter: enable the SM
             no ib smnode <node> enable         ... disable it
             ib smnode <node> sm-priority <0-15>    its priority
             no ib smnode <node> sm-priority    priority back to 0 (the default)
             ib partition <name> pkey 0x<1-7fff>        partitions, as NVIDIA's MLNX-GW
             ib partition <name> ipoib                  User Manual ("Configuring Partition
             ib partition <name> member ALL|<guid> type full|limited    Keys") and WinOF-2
             ib partition <name> defmember full|limited  documentation show them
             ib partition <name> mtu 256|512|1K|2K|4K   (module_utils/mlnxos_partitions.py)
             no ib partition <name> [member <guid> | ipoib | mtu | defmember]
             configuration write                Configuration Management chapter: save the
                                                running configuration to the active
                                                configuration file (read at boot)
  running-config lists the partitions as those commands; a GUID is eight colon-separated
  byte pairs (00:02:c9:03:00:00:00:01).

Anything else is answered as MLNX-OS answers an unknown command (`% Unrecognized
command "..."`), and a priority outside 0-15 or a bad pkey, membership, MTU or GUID as
bad input; neither changes the config.

Stand-in specifics (not in MLNX-OS): `commands` records every line received, `state`
holds the SM nodes ({node: {"enabled": bool, "priority": int}}) and `partitions` the
partitions ({name: {"pkey", "defmember", "ipoib", "mtu", "members": {who: type}}}); a
partition takes other subcommands only once it has a pkey (the manual's order), and
removing a member of the default partition is refused (MLNX-OS asks an interactive
confirmation there); one password for one user, no RSA host-key persistence. `saved`
is the configuration `configuration write` stored, and `reboot()` rebuilds the running
configuration from it, as a switch's boot does (the manual: changes not written are
lost at reload).
"""

from __future__ import annotations

import copy
import re
import socket
import threading

import paramiko

_UNRECOGNIZED = '% Unrecognized command "{0}".\r\nType "?" for help.'
_GUID_RE = re.compile(r"^([0-9a-f]{2}:){7}[0-9a-f]{2}$")
_MTUS = ("256", "512", "1K", "2K", "4K")
_TYPES = ("full", "limited")


class _Server(paramiko.ServerInterface):
    def __init__(self, user, password):
        self.user, self.password = user, password

    def check_auth_password(self, username, password):
        ok = (username, password) == (self.user, self.password)
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def get_allowed_auths(self, username):
        return "password"

    def check_channel_request(self, kind, chanid):
        ok = kind == "session"
        return paramiko.OPEN_SUCCEEDED if ok else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(self, *args):
        return True

    def check_channel_shell_request(self, channel):
        return True


class MlnxOsCli:
    """An MLNX-OS CLI over SSH on 127.0.0.1; start() returns the port."""

    def __init__(self, hostname="ib-spine-1", release="3.11.2016", user="admin", password="admin"):
        self.hostname, self.release = hostname, release
        self.user, self.password = user, password
        self.state = {}
        self.partitions = {}
        self.commands = []
        self.saved = {"state": {}, "partitions": {}}
        self._key = paramiko.RSAKey.generate(2048)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._stop = threading.Event()
        self._lock = threading.Lock()

    # --- server -------------------------------------------------------------------
    def start(self):
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.5)
        threading.Thread(target=self._accept, daemon=True).start()
        return self._sock.getsockname()[1]

    def stop(self):
        self._stop.set()
        self._sock.close()

    def reboot(self):
        """The running configuration becomes the saved one (what the switch boots with)."""
        with self._lock:
            self.state = copy.deepcopy(self.saved["state"])
            self.partitions = copy.deepcopy(self.saved["partitions"])

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._session, args=(client,), daemon=True).start()

    def _session(self, client):
        transport = paramiko.Transport(client)
        transport.add_server_key(self._key)
        try:
            transport.start_server(server=_Server(self.user, self.password))
            channel = transport.accept(20)
            if channel is None:
                return
            self._shell(channel)
        except (EOFError, OSError, paramiko.SSHException):
            pass
        finally:
            transport.close()

    # --- the CLI ------------------------------------------------------------------
    def _prompt(self, mode):
        suffix = {"user": ">", "enable": "#", "config": "(config) #"}[mode]
        return f"{self.hostname} [standalone: master] {suffix} "

    def _shell(self, channel):
        mode = "user"
        channel.sendall(f"\r\nNVIDIA MLNX-OS Switch Management\r\n\r\n{self._prompt(mode)}")
        buffer = b""
        while not self._stop.is_set():
            data = channel.recv(1024)
            if not data:
                return
            buffer += data
            while b"\r" in buffer or b"\n" in buffer:
                cut = min(i for i in (buffer.find(b"\r"), buffer.find(b"\n")) if i >= 0)
                line, buffer = buffer[:cut].decode(errors="replace"), buffer[cut + 1 :]
                if line == "" and buffer[:1] == b"\n":
                    buffer = buffer[1:]
                channel.sendall(line + "\r\n")
                mode, output = self._run(mode, line.strip())
                if mode is None:
                    channel.close()
                    return
                channel.sendall((output + "\r\n" if output else "") + self._prompt(mode))

    def _run(self, mode, line):
        if not line:
            return mode, ""
        with self._lock:
            self.commands.append(line)
        words = line.split()
        if line == "no cli session paging enable":
            return mode, ""
        if line == "show version":
            return mode, (
                "Product name:      MLNX-OS\r\n"
                f"Product release:   {self.release}\r\n"
                "Chassis system type: QM9700"
            )
        if line in ("exit", "quit") and mode != "config":
            return None, ""
        if mode == "user":
            return ("enable", "") if line == "enable" else (mode, _UNRECOGNIZED.format(line))
        if line == "show running-config":
            return mode, self._running()
        if mode == "enable":
            if line in ("configure terminal", "config terminal"):
                return "config", ""
            return mode, _UNRECOGNIZED.format(line)
        if line == "exit":
            return "enable", ""
        if line == "configuration write":
            with self._lock:
                self.saved = copy.deepcopy({"state": self.state, "partitions": self.partitions})
            return mode, ""
        return mode, self._configure(words, line)

    def _configure(self, words, line):
        negate = words[:1] == ["no"]
        words = words[1:] if negate else words
        if len(words) >= 3 and words[:2] == ["ib", "partition"]:
            return self._partition(negate, words[2], words[3:], line)
        if len(words) < 4 or words[:2] != ["ib", "smnode"]:
            return _UNRECOGNIZED.format(line)
        node, rest = words[2], words[3:]
        entry = self.state.setdefault(node, {"enabled": False, "priority": 0})
        if rest == ["enable"]:
            entry["enabled"] = not negate
            return ""
        if rest[:1] == ["sm-priority"]:
            if negate and len(rest) == 1:
                entry["priority"] = 0
                return ""
            if len(rest) == 2 and rest[1].isdigit() and 0 <= int(rest[1]) <= 15:
                entry["priority"] = int(rest[1])
                return ""
            return f'% Invalid input "{" ".join(rest[1:])}": sm-priority is 0-15.'
        return _UNRECOGNIZED.format(line)

    def _partition(self, negate, name, rest, line):
        if negate and not rest:
            self.partitions.pop(name, None)
            return ""
        if rest[:1] == ["pkey"] and len(rest) == 2 and not negate:
            try:
                pkey = int(rest[1], 16)
            except ValueError:
                pkey = 0
            if not rest[1].lower().startswith("0x") or not 1 <= pkey <= 0x7FFF:
                return f'% Invalid input "{rest[1]}": pkey is 0x1-0x7fff.'
            entry = self.partitions.setdefault(
                name, {"pkey": None, "defmember": None, "ipoib": False, "mtu": None, "members": {}}
            )
            entry["pkey"] = pkey
            return ""
        entry = self.partitions.get(name)
        if entry is None or entry["pkey"] is None:
            return f"% Error: partition {name} has no pkey; set it first."
        return self._partition_sub(entry, name, negate, rest, line)

    def _partition_sub(self, entry, name, negate, rest, line):
        key = rest[0]
        if rest == ["ipoib"]:
            entry["ipoib"] = not negate
        elif key in ("mtu", "defmember") and negate and len(rest) == 1:
            entry[key] = None
        elif key == "mtu" and len(rest) == 2 and rest[1] in _MTUS:
            entry["mtu"] = rest[1]
        elif key == "defmember" and len(rest) == 2 and rest[1] in _TYPES:
            entry["defmember"] = rest[1]
        elif key == "member" and len(rest) >= 2 and (rest[1] == "ALL" or _GUID_RE.match(rest[1])):
            if negate and len(rest) == 2:
                if name == "Default":
                    return "% Error: removing a member of the default partition needs confirmation."
                entry["members"].pop(rest[1], None)
            elif not negate and len(rest) == 4 and rest[2] == "type" and rest[3] in _TYPES:
                entry["members"][rest[1]] = rest[3]
            else:
                usage = "member <ALL|guid> type full|limited"
                return f'% Invalid input "{" ".join(rest[2:])}": {usage}.'
        elif key in ("mtu", "defmember", "member"):
            return f'% Invalid input "{" ".join(rest[1:])}" for {key}.'
        else:
            return _UNRECOGNIZED.format(line)
        return ""

    def _partition_lines(self):
        lines = []
        for name, entry in sorted(self.partitions.items()):
            prefix = f"   ib partition {name}"
            lines.append(f"{prefix} pkey 0x{entry['pkey']:04x}")
            lines += [f"{prefix} defmember {entry['defmember']}"] if entry["defmember"] else []
            lines += [f"{prefix} ipoib"] if entry["ipoib"] else []
            lines += [f"{prefix} mtu {entry['mtu']}"] if entry["mtu"] else []
            members = entry["members"].items()
            lines += [f"{prefix} member {who} type {kind}" for who, kind in members]
        return lines

    def _running(self):
        lines = [
            "##",
            '## Running database "initial"',
            f"## Hostname: {self.hostname}",
            "##",
            "",
            "##",
            "## Subnet Manager configuration",
            "##",
        ]
        for node, entry in sorted(self.state.items()):
            if entry["enabled"]:
                lines.append(f"   ib smnode {node} enable")
            if entry["priority"]:
                lines.append(f"   ib smnode {node} sm-priority {entry['priority']}")
        if self.partitions:
            lines += ["", "##", "## Partitions configuration", "##", *self._partition_lines()]
        return "\r\n".join(lines)
