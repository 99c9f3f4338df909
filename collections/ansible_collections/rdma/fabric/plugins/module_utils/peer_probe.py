# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a perftest peer's rail address is gone: nothing at all answers there.

A TCP connection to the peer's rail address, from this host's own address on the rail
(so the rail's routing table is the one used), to a port no perftest side listens on
(a perftest server takes exactly one client: a probe must never be it). A host that is
up answers: a refusal (RST), or a listener. Gone is "no route to host" or "network is
unreachable" told by the path, not by the peer: the kernel's own ICMP "host
unreachable" when ARP or neighbour discovery had no answer (the host is off, its rail
link or netdev is down, the cable is out), a router's "host/net unreachable", or no
route at all. The socket's error queue (IP_RECVERR) says which: a connecting socket
gets "no route to host" for every ICMP destination unreachable (icmp_err_convert), a
firewall's reject ("administratively prohibited", firewalld's and nftables' reject;
"host prohibited", older iptables rules) included, and a live host whose firewall
rejects the probe is not gone. So an ICMP that the peer's own address sent, or one
that says "prohibited", counts as there. A timeout (a firewall dropping the probe), a
source address this host lacks or any other error says nothing: the caller waits for
the peer as before.
"""

from __future__ import annotations

import errno
import select
import socket
import struct
import time

# TCP port 1 (tcpmux, RFC 1078): assigned, practically never served, below perftest's
# ports (rdma_verify_base_port, 18515 by default).
PROBE_PORT = 1
GONE = (errno.EHOSTUNREACH, errno.ENETUNREACH)

# linux/errqueue.h and linux/in.h, linux/in6.h (not in Python's socket module).
IP_RECVERR = 11
IPV6_RECVERR = 25
SO_EE_ORIGIN_ICMP = 2
SO_EE_ORIGIN_ICMP6 = 3
EXTENDED_ERR = struct.Struct("=IBBBBII")  # struct sock_extended_err
# ICMP destination unreachable codes that say the path found no host (RFC 792, RFC
# 1122 3.2.2.1: net/host unreachable, destination net/host unknown); ICMPv6's no route
# and address unreachable (RFC 4443 3.1). The prohibited codes (ICMP 9, 10, 13; ICMPv6
# 1) are a filter's answer, not a missing host.
UNREACHABLE = {SO_EE_ORIGIN_ICMP: (3, {0, 1, 6, 7}), SO_EE_ORIGIN_ICMP6: (1, {0, 3})}


def icmp_error(sock):
    """(origin, type, code, offender address) of the ICMP error queued on ``sock``
    (IP_RECVERR), or None when the error came without one (no route at all)."""
    try:
        sock.settimeout(0)  # the queue is read as it is, never waited on
        _data, ancillary, _flags, _addr = sock.recvmsg(1, 512, socket.MSG_ERRQUEUE)
    except OSError:
        return None
    for _level, _kind, data in ancillary:
        if len(data) < EXTENDED_ERR.size + 8:
            continue
        _errno, origin, kind, code, _pad, _info, _data = EXTENDED_ERR.unpack_from(data)
        offender = data[EXTENDED_ERR.size :]
        family = int.from_bytes(offender[:2], "little")
        if family == socket.AF_INET:
            sender = socket.inet_ntop(socket.AF_INET, offender[4:8])
        elif family == socket.AF_INET6 and len(offender) >= 24:
            sender = socket.inet_ntop(socket.AF_INET6, offender[8:24])
        else:
            sender = None
        return origin, kind, code, sender
    return None


def said_gone(address, error):
    """Whether a queued ICMP error (icmp_error's answer) says ``address`` is gone."""
    if error is None:
        return True  # the kernel's own verdict, no packet sent: no route
    origin, kind, code, sender = error
    wanted = UNREACHABLE.get(origin)
    if wanted is None or kind != wanted[0] or code not in wanted[1]:
        return False
    return sender is None or socket.inet_pton(*_family(sender)) != socket.inet_pton(
        *_family(address)
    )


def _family(address):
    return (socket.AF_INET6 if ":" in address else socket.AF_INET), address


class Probe:
    """One probe, started at once (a non-blocking connect) and read without waiting:
    poll() is None until the kernel answers or ``timeout`` s pass, then whether the
    address is gone (a timeout says nothing: not gone)."""

    def __init__(self, address, source=None, timeout=5.0, port=PROBE_PORT):
        self.address = address
        self.deadline = time.monotonic() + timeout
        self.answer = None
        family = _family(address)[0]
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            if family == socket.AF_INET6:
                self.sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVERR, 1)
            else:
                self.sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
            self.sock.setblocking(False)
            if source:
                self.sock.bind((source, 0))
            code = self.sock.connect_ex((address, port))
        except OSError as exc:
            code = exc.errno
        if code != errno.EINPROGRESS:
            self._end(code)

    def _end(self, code):
        self.answer = code in GONE and said_gone(self.address, icmp_error(self.sock))
        self.sock.close()

    def poll(self, wait=0.0):
        """None while unanswered (waiting up to ``wait`` s for it), else gone or not."""
        if self.answer is None:
            _r, writable, _x = select.select([], [self.sock], [], wait)
            if writable:
                self._end(self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
            elif time.monotonic() >= self.deadline:
                self.answer = False  # no answer at all: a firewall dropping it
                self.sock.close()
        return self.answer

    def close(self):
        if self.answer is None:
            self.sock.close()


def start(address, source=None, timeout=5.0, port=PROBE_PORT):
    """A probe of ``address`` from ``source`` (this host's own address on the rail)."""
    return Probe(address, source, timeout, port)


def gone(address, source=None, timeout=5.0, port=PROBE_PORT):
    """True when no host answers at ``address``: the path says no route to it (no
    neighbour, a router's unreachable), never the peer itself or a filter. Waits for
    the answer (up to ``timeout`` s)."""
    probe = start(address, source, timeout, port)
    answer = probe.poll(wait=0.1)
    while answer is None:
        answer = probe.poll(wait=0.1)
    return answer


class Probes:
    """The rail addresses a schedule's waiting sides probe, never waited on: a side's
    loop asks lost() as often as it likes, each address is probed again ``every`` s
    after its last probe ended, and a probe that takes its whole ``timeout`` (a firewall
    dropping it) holds nobody up meanwhile. Gone takes the kernel's neighbour timeout:
    ~3 s for an address without a neighbour entry; one still STALE from earlier traffic
    is first tried on its old link-layer address, ~8 s before it fails, and only a probe
    after that is told."""

    def __init__(self, every=3.0, timeout=5.0):
        self.every, self.timeout = every, timeout
        self.running = {}  # (address, source) -> Probe
        self.ended = {}  # (address, source) -> (when, gone)

    def lost(self, targets):
        """The addresses of ``targets`` ((address, source) pairs) found gone so far;
        starts a probe of each that has none running and is due."""
        targets = set(targets)
        now = time.monotonic()
        for target in targets - set(self.running):
            when, found = self.ended.get(target, (None, False))
            if not found and (when is None or now - when >= self.every):
                self.running[target] = start(target[0], target[1], self.timeout)
        for target, probe in list(self.running.items()):
            answer = probe.poll()
            if answer is not None:
                self.ended[target] = (time.monotonic(), answer)
                del self.running[target]
        return {t[0] for t in targets if self.ended.get(t, (None, False))[1]}

    def close(self):
        for probe in self.running.values():
            probe.close()
        self.running.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
