"""Read ansible-playbook's default stdout: the tasks that ran and the recap counts."""

from __future__ import annotations

import re

TASK_RE = re.compile(r"^TASK \[(?P<name>.*)\] \*+$", re.MULTILINE)


def tasks_run(output: str) -> list[str]:
    return [m["name"] for m in TASK_RE.finditer(output)]


def recap(output: str, host: str = "localhost") -> dict[str, int]:
    match = re.search(rf"^{re.escape(host)}\s*:\s*(?P<counts>.*)$", output, re.MULTILINE)
    assert match, f"no PLAY RECAP line for {host} in:\n{output}"
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match["counts"])}


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "[ERROR]" in line or "FAILED!" in line]
