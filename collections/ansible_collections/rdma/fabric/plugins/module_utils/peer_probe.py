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
import socket
import struct
from concurrent.futures import ThreadPoolExecutor

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


def gone(address, source=None, timeout=5.0, port=PROBE_PORT):
    """True when no host answers at ``address``: the path says no route to it (no
    neighbour, a router's unreachable), never the peer itself or a filter."""
    family = _family(address)[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVERR, 1)
        else:
            sock.setsockopt(socket.IPPROTO_IP, IP_RECVERR, 1)
        sock.settimeout(timeout)
        if source:
            sock.bind((source, 0))
        sock.connect((address, port))
    except OSError as exc:
        return exc.errno in GONE and said_gone(address, icmp_error(sock))
    finally:
        sock.close()
    return False


def gone_of(targets, timeout=5.0):
    """The addresses of ``targets`` ((address, source) pairs) that are gone, probed side
    by side (a dead host's rails each take the kernel's neighbour timeout: ~3 s for an address
    without a neighbour entry; one still STALE from earlier traffic is first tried on its
    old link-layer address, ~8 s before it fails, and only a probe after that is told)."""
    targets = sorted(set(targets))
    if not targets:
        return set()
    with ThreadPoolExecutor(max_workers=min(16, len(targets))) as pool:
        answers = pool.map(lambda t: gone(t[0], t[1], timeout), targets)
        return {address for (address, _source), lost in zip(targets, answers) if lost}
