"""How long a stand-in card is busy writing, and what else ran while it was.

STAND-IN TIMING, not the real tools': a real flint burn takes minutes per card and an
mlxconfig set seconds. The stand-ins (mstflint_standin, mstconfig_standin) sleep
``seconds`` inside each write instead, so a test can tell cards written side by side from
cards written one after another, and see two writes to the same card at once (which the
real tools must never be asked to do: one card has one flash).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager


class Busy:
    def __init__(self, seconds: float = 0.0):
        self.seconds = seconds
        self._lock = threading.Lock()
        self._writing: set[str] = set()
        self.in_flight = 0
        self.most_at_once = 0
        # Cards (by PCI address) written by two calls at the same time.
        self.overlaps: list[str] = []

    @contextmanager
    def writing(self, card: str):
        with self._lock:
            if card in self._writing:
                self.overlaps.append(card)
            self._writing.add(card)
            self.in_flight += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
        try:
            time.sleep(self.seconds)
            yield
        finally:
            with self._lock:
                self.in_flight -= 1
                self._writing.discard(card)
