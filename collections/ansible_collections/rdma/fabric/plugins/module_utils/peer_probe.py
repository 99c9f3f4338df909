# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a perftest peer's rail address is gone: nothing at all answers there.

A TCP connection to the peer's rail address, from this host's own address on the rail
(so the rail's routing table is the one used), to a port no perftest side listens on
(a perftest server takes exactly one client: a probe must never be it). A host that is
up answers: a refusal (RST), or a listener. Only "no route to host" or "network is
unreachable" say it is gone: the kernel found no neighbour for the address (ARP or
neighbour discovery had no answer: the host is off, its rail link or netdev is down,
the cable is out) or has no route to it. A timeout (a firewall dropping the probe), a
source address this host lacks or any other error says nothing: the caller waits for
the peer as before.
"""

from __future__ import annotations

import errno
import socket
from concurrent.futures import ThreadPoolExecutor

# TCP port 1 (tcpmux, RFC 1078): assigned, practically never served, below perftest's
# ports (rdma_verify_base_port, 18515 by default).
PROBE_PORT = 1
GONE = (errno.EHOSTUNREACH, errno.ENETUNREACH)


def gone(address, source=None, timeout=5.0, port=PROBE_PORT):
    """True when the kernel says there is no route to ``address`` (no neighbour)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        if source:
            sock.bind((source, 0))
        sock.connect((address, port))
    except OSError as exc:
        return exc.errno in GONE
    finally:
        sock.close()
    return False


def gone_of(targets, timeout=5.0):
    """The addresses of ``targets`` ((address, source) pairs) that are gone, probed side
    by side (a dead host's rails each take the kernel's neighbour timeout, ~3 s)."""
    targets = sorted(set(targets))
    if not targets:
        return set()
    with ThreadPoolExecutor(max_workers=min(16, len(targets))) as pool:
        answers = pool.map(lambda t: gone(t[0], t[1], timeout), targets)
        return {address for (address, _source), lost in zip(targets, answers) if lost}
