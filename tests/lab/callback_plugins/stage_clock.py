"""Prints the stage (play) a long run is in, with the time elapsed since the run began.

Used by `make demo` (ANSIBLE_CALLBACKS_ENABLED=stage_clock): site.yml runs for minutes
to tens of minutes, and the default output names plays but not how long the run has been
going. An aggregate callback: it adds lines, the stdout callback stays as configured.
"""

from __future__ import annotations

import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: stage_clock
type: aggregate
short_description: Print each stage with the elapsed time of the run
description:
  - At the start of every play, prints C(stage: <play name> (elapsed 3m07s)).
requirements:
  - enable in callbacks_enabled
"""


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "stage_clock"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._start = time.monotonic()

    def _say(self, text: str) -> None:
        self._display.display(f"[demo] {text} (elapsed {_clock(time.monotonic() - self._start)})")

    def v2_playbook_on_play_start(self, play):
        self._say(f"stage: {play.get_name().strip()}")

    def v2_playbook_on_stats(self, stats):
        self._say("done")
