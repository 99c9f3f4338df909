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

Anything else is answered as MLNX-OS answers an unknown command (`% Unrecognized
command "..."`), and a priority outside 0-15 as bad input; neither changes the config.

Stand-in specifics (not in MLNX-OS): `commands` records every line received, `state`
holds the SM nodes ({node: {"enabled": bool, "priority": int}}), one password for one
user, no RSA host-key persistence.
"""

from __future__ import annotations

import socket
import threading

import paramiko

_UNRECOGNIZED = '% Unrecognized command "{0}".\r\nType "?" for help.'


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
        self.commands = []
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
        return mode, self._configure(words, line)

    def _configure(self, words, line):
        negate = words[:1] == ["no"]
        words = words[1:] if negate else words
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
        return "\r\n".join(lines)
