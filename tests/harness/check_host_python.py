"""The Python that runs on the managed hosts stays within the oldest Python there.

Usage: check_host_python.py [PATH ...]   (default: every host-side file, HOST_CODE)

Host-side: plugins/modules and plugins/module_utils (Ansible ships them to the host) and
every Python script under roles/*/files (roce_host_qos's roce-qos-apply runs at boot under
the host's /usr/bin/python3). ansible-core 2.19 runs modules on a target Python from 3.8
(module_utils/basic.py _PY_MIN). Molecule runs only Debian 12/13 (3.11/3.13), but the
roles keep code paths for systems with older Pythons (Ubuntu 22.04: 3.10, EL 9's
platform-python: 3.9, EL 8: 3.8+ from AppStream): FLOOR stays 3.8, ansible-core's own.

Two checks, since neither sees everything:
- ast.parse(feature_version=FLOOR): syntax newer than the floor (match, except*,
  parenthesised context managers). vermin parses with the running Python and reports a
  file it cannot parse without failing.
- vermin --target=FLOOR- --violations: library use newer than the floor that parses fine
  and fails only when run (zip(strict=), str.removeprefix, itertools.pairwise ...), which
  ruff's per-file py38 target does not reject. Annotations are not evaluated (every host
  file has `from __future__ import annotations`; ruff's FA102 keeps it so).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

FLOOR = (3, 8)
COLLECTION = Path(__file__).resolve().parents[2] / "collections/ansible_collections/rdma/fabric"


def _is_python(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        first = handle.readline(200)
    return first.startswith(b"#!") and b"python" in first


def host_code(collection: Path = COLLECTION) -> list[Path]:
    plugins = collection / "plugins"
    scripts = [path for path in sorted(collection.glob("roles/*/files/**/*")) if _is_python(path)]
    return sorted([*plugins.glob("modules/*.py"), *plugins.glob("module_utils/*.py")]) + scripts


def syntax_errors(paths: list[Path]) -> list[str]:
    errors = []
    for path in paths:
        try:
            ast.parse(path.read_text(), filename=str(path), feature_version=FLOOR)
        except SyntaxError as error:
            errors.append(f"{path}:{error.lineno}: {error.msg} (Python {FLOOR[0]}.{FLOOR[1]})")
    return errors


def vermin() -> str:
    search = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    found = shutil.which("vermin", path=search)
    if found is None:
        sys.exit("check_host_python: vermin is not installed (requirements-dev.txt)")
    return found


def main(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv] or host_code()
    errors = syntax_errors(paths)
    for error in errors:
        print(error, file=sys.stderr)
    floor = f"{FLOOR[0]}.{FLOOR[1]}"
    run = subprocess.run(
        [vermin(), "--no-tips", "--violations", f"--target={floor}-", *map(str, paths)],
        check=False,
    )
    if errors or run.returncode:
        print(f"check_host_python: host code needs a Python newer than {floor}", file=sys.stderr)
        return 1
    print(f"check_host_python: {len(paths)} host-side files run on Python {floor}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
