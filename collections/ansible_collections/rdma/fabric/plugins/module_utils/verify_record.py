# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A judged test kept small on the controller: a 1,024 hosts x 8 rails full run holds
4.2 million of them from the judge step to the report's last file.

A record as a dict costs about 1.6 kB: its table of 21 keys (~470 B), its id string, its
client's rows and both sides' counter deltas as small dicts (~850 B). Record reads and
writes like that dict (same keys, same order, same values: report and writers need not
know) but holds one tuple of values beside a key tuple shared by every record of the
same shape, the id left out when it is the one the plan gives every test
(phase/round/server/client/rail), rows and deltas as their JSON text (decoded when read),
and the numbers a plan repeats (ports, rounds, pass marks) shared: about 0.45 kB.

json.dump writes a Record through ``default=as_json`` (the same text as the dict's).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, MutableMapping

# Values kept as their JSON text: nested containers, read rarely (report.md's test table).
PACKED = ("rows", "deltas")
# Numbers a plan repeats across its tests, shared rather than one object per record.
SHARED_NUMBERS = ("round", "port", "expected_gbps", "max_latency_us", "mtu")
# Strings from a small set (hosts, rails, devices, outcomes): one object each.
SHARED_STRINGS = (
    "phase",
    "kind",
    "server",
    "client",
    "rail",
    "server_device",
    "client_device",
    "outcome",
)

_SHAPES = {}  # key tuple -> (key tuple, {key: position})
_NUMBERS = {}  # (type, value) -> value


class _DerivedId:
    """The record's id is the plan's: phase/round/server/client/rail."""

    __slots__ = ()


DERIVED_ID = _DerivedId()


def _shape(keys):
    keys = tuple(keys)
    found = _SHAPES.get(keys)
    if found is None:
        found = _SHAPES[keys] = (keys, {k: n for n, k in enumerate(keys)})
    return found


def plan_id(data):
    """The id the plan gives a test of these fields."""
    return f"{data['phase']}/{data['round']}/{data['server']}/{data['client']}/{data['rail']}"


_PACKED = frozenset(PACKED)
_SHARED_NUMBERS = frozenset(SHARED_NUMBERS)
_SHARED_STRINGS = frozenset(SHARED_STRINGS)
_ID_FIELDS = ("phase", "round", "server", "client", "rail")
_encode = json.JSONEncoder(separators=(",", ":")).encode


def _stored(data):
    """The values of data as a Record holds them."""
    derived = "id" in data and all(k in data for k in _ID_FIELDS) and data["id"] == plan_id(data)
    values = []
    for key, value in data.items():
        if key in _PACKED:
            # bytes: no other value of a record is (they are JSON data).
            value = _encode(value).encode()
        elif isinstance(value, str):
            if key == "id" and derived:
                value = DERIVED_ID
            elif key in _SHARED_STRINGS:
                value = sys.intern(str(value))
        elif isinstance(value, (int, float)) and key in _SHARED_NUMBERS:
            value = _NUMBERS.setdefault((type(value), value), value)
        values.append(value)
    return tuple(values)


class Record(MutableMapping):
    """One judged test, compact (see the module's docstring); a Mapping like its dict."""

    __slots__ = ("_shape", "_values")

    def __init__(self, data=()):
        data = data if isinstance(data, dict) else dict(data)
        self._shape = _shape(data)
        self._values = _stored(data)

    def __getitem__(self, key):
        value = self._values[self._shape[1][key]]
        if isinstance(value, bytes):
            return json.loads(value)
        if value is DERIVED_ID:
            return plan_id(self)
        return value

    def __setitem__(self, key, value):
        data = self.as_dict()
        data[key] = value
        self.__init__(data)

    def __delitem__(self, key):
        data = self.as_dict()
        del data[key]
        self.__init__(data)

    def as_dict(self):
        """The record as its dict (what dict(record) gives, built directly)."""
        out = dict(zip(self._shape[0], self._values))
        for key in PACKED:
            if isinstance(out.get(key), bytes):
                out[key] = json.loads(out[key])
        if out.get("id") is DERIVED_ID:
            out["id"] = plan_id(out)
        return out

    def __contains__(self, key):
        return key in self._shape[1]

    def __iter__(self):
        return iter(self._shape[0])

    def __len__(self):
        return len(self._shape[0])

    def __repr__(self):
        return f"Record({dict(self)!r})"


def as_json(value):
    """json.dump's default=: a Record (any Mapping) as its dict."""
    if isinstance(value, Record):
        return value.as_dict()
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
