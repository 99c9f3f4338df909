# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""perftest_run's schedule outcomes on file, not through Ansible's results: the host
writes them (write_outcomes: gzip, one JSON object a line, in its sides' order) and
returns a small summary (path, bytes, sha1, count, failed); the role fetches the file to
the controller's run directory; the judge reads every host's file forward, a piece at a
time (OutcomeFiles), never a whole file or all outcomes at once.

Runs on the hosts too (imported by the perftest_run module): Python 3.8.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import zlib

# What the files written aside end with.
FINAL_ENDINGS = (".json", ".gz", ".pid")


@contextlib.contextmanager
def replacing(path):
    """A binary handle writing path whole or not at all: written aside to a file of this
    writer's own (created exclusively, a random name: path.<random>.tmp), then renamed
    to path; removed if the write fails. Several writers of one path (inventory hosts
    sharing a machine and its state directory, each releasing the same start; containers
    too, whose pids may be equal) each rename their own, whole: one shared path.tmp was
    renamed away under a sibling, whose rename then failed."""
    folder, name = os.path.split(path)
    handle, temporary = tempfile.mkstemp(prefix=name + ".", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(handle, "wb") as raw:
            yield raw
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def written_name(name):
    """The name a file written aside (replacing(), or an older path.tmp) is renamed to;
    any other name as it is."""
    if not name.endswith(".tmp"):
        return name
    stem = name[: -len(".tmp")]
    if stem.endswith(FINAL_ENDINGS):
        return stem  # path.tmp
    head, dot, token = stem.rpartition(".")
    random = token.isascii() and token.replace("_", "a").isalnum()  # letters, digits, _
    if dot and head.endswith(FINAL_ENDINGS) and random:
        return head  # path.<random>.tmp
    return name


# Compressed bytes read from a file at once, and the most text one read inflates to.
CHUNK = 8192
TEXT = 16384


def file_sha1(path):
    """The file's SHA-1 (Ansible's checksum, which fetch checks), read in chunks."""
    digest = hashlib.sha1()  # noqa: S324 - a checksum as Ansible's, not a signature
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def write_outcomes(path, outcomes):
    """Write outcomes (dicts) to path, whole or not at all (written aside, then renamed):
    gzip, one JSON object a line. Returns the summary the module returns instead."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    count = failed = 0
    # The header names the file (gunzip -N), never the .tmp: the same outcomes give the
    # same bytes whoever writes them.
    with replacing(path) as raw, gzip.GzipFile(
        filename=os.path.basename(path), fileobj=raw, mode="wb", mtime=0
    ) as packed:
        for outcome in outcomes:
            packed.write((json.dumps(outcome, separators=(",", ":")) + "\n").encode("utf-8"))
            count += 1
            failed += bool(outcome.get("error"))
    return {
        "path": path,
        "bytes": os.path.getsize(path),
        "sha1": file_sha1(path),
        "count": count,
        "failed": failed,
    }


class HostOutcomes:
    """One host's outcomes file read forward as the judge asks for its sides: the judge
    reads the plan in the order each host's sides were planned, so each asked id is the
    next line; a line read past while looking for another id is kept (``ahead``) until
    asked. The file is opened for each piece, never held open (a fabric of 1,024 hosts
    has 1,024 files). A piece that does not inflate or parse ends the file there: the
    sides not read are missing, as a host's that did not come back."""

    def __init__(self, path):
        self._path = path
        self._offset = 0
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)  # gzip
        self._partial = b""
        self._lines = collections.deque()
        self._ended = False
        self.ahead = {}

    def get(self, side_id):
        if side_id in self.ahead:
            return self.ahead.pop(side_id)
        while True:
            outcome = self._next()
            if outcome is None:
                return None
            if outcome.get("id") == side_id:
                return outcome
            self.ahead[outcome.get("id")] = outcome

    def _next(self):
        while not self._lines and not self._ended:
            self._fill()
        if not self._lines:
            return None
        try:
            outcome = json.loads(self._lines.popleft())
        except ValueError:
            outcome = None
        if not isinstance(outcome, dict):
            self._end()
            return None
        return outcome

    def _end(self):
        self._ended = True
        self._lines.clear()

    def _fill(self):
        data = self._inflater.unconsumed_tail
        if not data and not self._inflater.eof:
            try:
                with open(self._path, "rb") as handle:
                    handle.seek(self._offset)
                    data = handle.read(CHUNK)
            except OSError:
                data = b""
            self._offset += len(data)
        if not data:
            self._end()  # the end of the file (a line cut short is no outcome)
            return
        try:
            text = self._inflater.decompress(data, TEXT)
        except zlib.error:
            self._end()
            return
        lines = (self._partial + text).split(b"\n")
        self._partial = lines.pop()
        self._lines.extend(lines)
        if self._inflater.eof and not self._inflater.unconsumed_tail:
            self._ended = True


def usable(path, summary):
    """Whether a fetched file is the one the host wrote: present, with the SHA-1 of the
    host's summary."""
    if not path or not isinstance(summary, dict) or not summary.get("sha1"):
        return False
    try:
        return file_sha1(path) == summary["sha1"]
    except OSError:
        return False


class OutcomeFiles:
    """The judge's outcomes, host by host: a call (host, side id) -> that side's outcome,
    or None. files: {host: (path on the controller, the host's summary)}; a host whose
    file is missing, unreadable or not the one it wrote (see usable) has no outcome, as a
    host whose schedule did not come back."""

    def __init__(self, files):
        self._hosts = {
            host: HostOutcomes(path)
            for host, (path, summary) in files.items()
            if usable(path, summary)
        }

    def __call__(self, host, side_id):
        reader = self._hosts.get(host)
        return reader.get(side_id) if reader is not None else None

    def ahead(self):
        """Outcomes read past and not asked for yet, across the hosts (0 when the judge
        reads in the hosts' order)."""
        return sum(len(reader.ahead) for reader in self._hosts.values())
