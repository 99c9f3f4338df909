"""Stands in for get-pip.py, pip's bootstrap script that ansible-test downloads from
ansible's CI file server (not reachable here) to put pip into each fresh sanity venv.

tests/harness/run-sanity.sh copies this file where ansible-test caches that download
(~/.ansible/test/cache/get_pip_<version>.py). ansible-test runs it with the new venv's
interpreter, get-pip's arguments (pip==<version> [--no-setuptools] [--no-wheel]) and a
clean environment; the pip of the project's pinned venv (PINNED_PYTHON, filled in by
run-sanity.sh) installs that pip into the new venv (pip --python), from the package
index pip is configured for.
"""

from __future__ import annotations

import os
import subprocess
import sys

PINNED_PYTHON = ""


def main() -> int:
    python = PINNED_PYTHON
    if not os.path.exists(python):
        print(f"get_pip: {python!r} (the pinned venv) is gone: run make sanity", file=sys.stderr)
        return 1
    packages = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
    command = [python, "-m", "pip", "--python", sys.executable, "install", "--quiet", *packages]
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
