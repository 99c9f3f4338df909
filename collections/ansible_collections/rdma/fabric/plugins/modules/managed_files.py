#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: managed_files
short_description: Write a set of generated files in one call and remove the stale ones
description:
  - Writes every file of I(files) whose content, mode or owner differs (atomically, a
    temporary file in the same directory renamed over it), and removes the files that
    match I(remove) but are not in I(files) (a rail renamed or removed).
  - One module run for all the files of a host, where a loop of C(ansible.builtin.copy)
    costs two module runs per file (a stat, then the copy); on 8-rail servers that is
    the difference between 1 and some 30 round trips per host.
  - Only paths matching I(remove) are ever removed; a path of I(files) never is.
  - Fails, naming the path, when a file's directory does not exist and I(parents) is
    false; nothing is written then.
version_added: 0.4.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  files:
    description:
      - The files to write, by absolute path, each with its C(content) and C(mode).
    type: dict
    required: true
  owner:
    description: The owner of every file of I(files).
    type: str
    default: root
  group:
    description: The group of every file of I(files).
    type: str
    default: root
  parents:
    description:
      - Make a file's missing directories (mode 0755, owned by root), as C(mkdir -p).
    type: bool
    default: false
  remove:
    description:
      - Shell patterns (C(glob)) of the files this set owns; a match that is not in
        I(files) is removed.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Write the rails' network files, and no stale ones
  rdma.fabric.managed_files:
    files:
      /etc/systemd/network/40-rdma-rail-rail0.network:
        content: "[Match]\nName=ens1f0np0\n"
        mode: "0644"
    remove: [/etc/systemd/network/40-rdma-rail-*]
  register: written
"""

RETURN = r"""
written:
  description:
    - The paths of I(files) written or whose mode or owner was set (would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/network/40-rdma-rail-rail0.network]
removed:
  description: The stale paths removed (would be, in check mode).
  returned: always
  type: list
  elements: str
  sample: [/etc/systemd/network/40-rdma-rail-rail9.network]
"""

import glob
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _text(data):
    return "" if data is None else data.decode("utf-8", errors="replace")


def _write(module, path, data):
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".managed_files.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        module.atomic_move(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _specs(module):
    """(path, content bytes, mode) per file, checked before anything is written."""
    specs, errors = [], []
    for path, spec in sorted(module.params["files"].items()):
        if not os.path.isabs(path):
            errors.append(f"{path}: not an absolute path")
        elif not isinstance(spec, dict) or not isinstance(spec.get("content"), str):
            errors.append(f"{path}: needs a content (a string)")
        elif not module.params["parents"] and not os.path.isdir(os.path.dirname(path)):
            errors.append(f"{path}: its directory {os.path.dirname(path)} does not exist")
        else:
            specs.append((path, spec["content"].encode("utf-8"), str(spec.get("mode", "0644"))))
    if errors:
        module.fail_json(msg="managed_files: " + "; ".join(errors), errors=errors)
    return specs


def main():
    module = AnsibleModule(
        argument_spec={
            "files": {"type": "dict", "required": True},
            "owner": {"type": "str", "default": "root"},
            "group": {"type": "str", "default": "root"},
            "parents": {"type": "bool", "default": False},
            "remove": {"type": "list", "elements": "str", "default": []},
        },
        supports_check_mode=True,
    )
    written, removed, diffs = [], [], []
    for path, data, mode in _specs(module):
        have = _read(path)
        changed = have != data
        if changed:
            diffs.append({"before_header": path, "after_header": path,
                          "before": _text(have), "after": _text(data)})  # fmt: skip
            if not module.check_mode:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
                _write(module, path, data)
        attrs = module.load_file_common_arguments(
            {
                "path": path,
                "mode": mode,
                "owner": module.params["owner"],
                "group": module.params["group"],
            }  # fmt: skip
        )
        if have is None and module.check_mode:
            changed = True  # a file to create has no attributes to compare yet
        elif module.set_fs_attributes_if_different(attrs, False):
            changed = True
        if changed:
            written.append(path)
    wanted = set(module.params["files"])
    stale = sorted({p for pattern in module.params["remove"] for p in glob.glob(pattern)} - wanted)
    for path in stale:
        if os.path.isfile(path) or os.path.islink(path):
            diffs.append({"before_header": path, "after_header": path,
                          "before": _text(_read(path)), "after": ""})  # fmt: skip
            if not module.check_mode:
                os.unlink(path)
            removed.append(path)
    result = {"changed": bool(written or removed), "written": written, "removed": removed}
    if module._diff:
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
