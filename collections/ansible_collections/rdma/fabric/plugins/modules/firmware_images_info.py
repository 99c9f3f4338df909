#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: firmware_images_info
short_description: Read the PSID and version of every ConnectX firmware image in a directory
description:
  - Queries every C(*.bin) file in O(path) with C(mstflint -i FILE query) (or NVIDIA MFT's
    C(flint)), which reads an image file anywhere, without a device.
  - Meant for the controller (run with C(delegate_to=localhost)), before any image is copied to a
    host, so a directory of unrelated C(.bin) files (for example C(/usr/lib/firmware)) is
    refused by name and each host gets only the images made for its devices' PSIDs.
  - A file the tool cannot read as a firmware image is listed in RV(invalid) with the
    tool's error; the module does not fail for it (the caller decides).
version_added: 0.3.0
author: rdma-fabric contributors (@rdma-fabric)
requirements:
  - C(mstflint) from mstflint, or C(flint) from NVIDIA MFT, on the machine it runs on.
options:
  path:
    description: Directory with the firmware images (C(*.bin), unzipped).
    type: path
    required: true
  tool:
    description: The query tool; V(auto) takes C(mstflint), else C(flint).
    type: str
    default: auto
    choices: [auto, mstflint, flint]
attributes:
  check_mode:
    support: full
    description: Only reads; the same in check mode.
  diff_mode:
    support: none
    description: Reads only, there is nothing to diff.
"""

EXAMPLES = r"""
- name: Read the firmware images on the controller
  rdma.fabric.firmware_images_info:
    path: /srv/firmware/connectx
  delegate_to: localhost
  run_once: true
  register: catalog
"""

RETURN = r"""
images:
  description: The firmware images, sorted by file name.
  returned: always
  type: list
  elements: dict
  sample: [{"file": "fw-cx6dx.bin", "path": "/srv/fw/fw-cx6dx.bin", "psid": "MT_0000000359",
            "version": "22.39.2048"}]
invalid:
  description: The C(*.bin) files that are not firmware images the tool can read, with its error.
  returned: always
  type: list
  elements: dict
  sample: [{"file": "regulatory.bin", "path": "/usr/lib/firmware/regulatory.bin",
            "error": "Failed to query image: /usr/lib/firmware/regulatory.bin. No valid image..."}]
tool:
  description: The tool that read the images.
  returned: always
  type: str
  sample: /usr/bin/mstflint
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.connectx import find_tool
from ansible_collections.rdma.fabric.plugins.module_utils.flint import (
    FlintParseError,
    messages,
    parse_query,
    parse_version,
)


def read_image(module, tool, path):
    """(image, None) for a firmware image, (None, the tool's error) for anything else."""
    rc, out, err = module.run_command([tool, "-i", path, "query"], check_rc=False)
    errors = messages(out + "\n" + err)
    if rc != 0 or errors:
        return None, "; ".join(errors) or (err or out).strip() or f"exit status {rc}"
    try:
        info = parse_query(out)
        parse_version(info["next_boot_version"])
    except (FlintParseError, ValueError) as exc:
        return None, str(exc)
    return {"psid": info["psid"], "version": info["next_boot_version"]}, None


def main():
    module = AnsibleModule(
        argument_spec={
            "path": {"type": "path", "required": True},
            "tool": {"type": "str", "default": "auto", "choices": ["auto", "mstflint", "flint"]},
        },
        supports_check_mode=True,
    )
    directory = module.params["path"]
    if not os.path.isdir(directory):
        module.fail_json(msg=f"firmware_images_info: {directory}: no such directory")
    tool = find_tool(
        module,
        ["mstflint", "flint"],
        "it reads each firmware image's PSID on this machine before any image is copied "
        "(Debian/Ubuntu: apt-get install mstflint; EL: dnf install mstflint)",
    )
    images, invalid = [], []
    for path in sorted(glob.glob(os.path.join(glob.escape(directory), "*.bin"))):
        info, error = read_image(module, tool, path)
        entry = {"file": os.path.basename(path), "path": path}
        if info is None:
            invalid.append(dict(entry, error=error))
        else:
            images.append(dict(entry, **info))
    module.exit_json(changed=False, images=images, invalid=invalid, tool=tool)


if __name__ == "__main__":
    main()
