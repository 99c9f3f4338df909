#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nic_firmware
short_description: Update ConnectX firmware from a local image directory (mstflint / flint)
description:
  - Queries one NVIDIA ConnectX device with C(mstflint) (a distribution package) or
    C(flint) (NVIDIA MFT) for its PSID and the firmware version on its flash, queries
    every C(*.bin) image in O(image_dir), picks the image made for that PSID (the newest,
    or O(version)), and burns it only when its version differs from the flash.
  - Images come only from O(image_dir) on the managed host; the module never downloads
    anything. An image for another PSID is never burned (no PSID change).
  - A downgrade (image older than the flash) is refused unless O(allow_downgrade).
  - New firmware runs after the next boot (or firmware reset); the module never reboots.
    It returns C(reboot_required) when it burned, or when the flash already holds a
    version the device is not yet running (an earlier burn waits for its reboot).
  - Supports check mode (queries, burns nothing) and diff mode.
version_added: 0.2.0
author: rdma-fabric contributors (@rdma-fabric)
requirements:
  - C(mstflint) from mstflint, or C(flint) from NVIDIA MFT, on the managed host; root.
options:
  image_dir:
    description:
      - Directory on the managed host with the firmware images (C(*.bin), unzipped as
        NVIDIA ships them in C(.bin.zip)). Other files are ignored; a C(.bin) the tool
        cannot read fails the task, naming the file.
    type: path
    required: true
  version:
    description:
      - The firmware version wanted (C(22.39.2048)). Default, the newest image in
        O(image_dir) for the device's PSID.
    type: str
  allow_downgrade:
    description: Burn an image older than the firmware on the flash.
    type: bool
    default: false
  missing_image:
    description:
      - What to do when O(image_dir) holds no image for the device's PSID (and
        O(version)). C(fail) stops with the PSIDs and versions found; C(skip) leaves the
        device as it is and says so in RV(skipped).
    type: str
    choices: [fail, skip]
    default: fail
  tool:
    description:
      - Which tool to run. C(auto) uses C(flint) when installed (NVIDIA MFT knows the
        newest devices), else C(mstflint).
    type: str
    choices: [auto, mstflint, flint]
    default: auto
extends_documentation_fragment:
  - rdma.fabric.attributes
  - rdma.fabric.connectx
  - rdma.fabric.sysfs
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
notes:
  - Burning takes minutes per device; the flash keeps the old image until the new one is
    complete (fail-safe burn). The device keeps its GUIDs, MACs and VSD.
  - mstflint 4.26 and later no longer support ConnectX-3; use C(tool=flint) for those.
seealso:
  - module: rdma.fabric.mlxconfig
  - name: mstflint
    description: The open-source firmware tools.
    link: https://github.com/Mellanox/mstflint
"""

EXAMPLES = r"""
- name: Bring mlx5_0 to the newest firmware in /srv/firmware (mstflint)
  rdma.fabric.nic_firmware:
    device: mlx5_0
    image_dir: /srv/firmware
  register: fw

- name: Pin a version, also going back to it if the card has a newer one
  rdma.fabric.nic_firmware:
    device: "0000:3b:00.0"
    image_dir: /srv/firmware
    version: 22.39.2048
    allow_downgrade: true

- name: Tell the operator
  ansible.builtin.debug:
    msg: "{{ fw.device }}: {{ fw.before }} -> {{ fw.after }}, reboot needed"
  when: fw.reboot_required
"""

RETURN = r"""
device:
  description: The device as given.
  returned: always
  type: str
  sample: mlx5_0
pci_address:
  description: The PCI address the tool was pointed at (the path itself for a device path).
  returned: always
  type: str
  sample: "0000:3b:00.0"
tool:
  description: The tool that ran.
  returned: always
  type: str
  sample: /usr/bin/mstflint
psid:
  description: The device's PSID (board identity); only images with the same PSID are used.
  returned: always
  type: str
  sample: MT_0000000359
before:
  description: Firmware version on the flash before the run.
  returned: always
  type: str
  sample: 22.36.1010
running:
  description: Firmware version the device runs now.
  returned: always
  type: str
  sample: 22.36.1010
after:
  description: Firmware version on the flash after the run (predicted in check mode).
  returned: always
  type: str
  sample: 22.39.2048
image:
  description: The image chosen for the device, or null when none was.
  returned: always
  type: str
  sample: /srv/firmware/fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.signed.bin
image_version:
  description: Firmware version of RV(image).
  returned: always
  type: str
  sample: 22.39.2048
images:
  description: Every image found in O(image_dir) with its PSID and version.
  returned: always
  type: list
  elements: dict
  sample: [{"path": "/srv/firmware/fw-a.bin", "psid": "MT_0000000359", "version": "22.39.2048"}]
burned:
  description: Whether the image was burned (or would be, in check mode).
  returned: always
  type: bool
  sample: true
skipped:
  description: Why nothing was burned although the versions differ (no image, downgrade), else null.
  returned: always
  type: str
  sample: null
reboot_required:
  description: Whether the device needs a reboot (or firmware reset) to run the flash's firmware.
  returned: always
  type: bool
  sample: true
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.connectx import (
    device_target,
    find_tool,
    run_tool,
)
from ansible_collections.rdma.fabric.plugins.module_utils.flint import (
    FlintParseError,
    messages,
    parse_query,
    parse_version,
)


def query(module, argv, what):
    out = run_tool(module, argv, what, messages)
    try:
        return parse_query(out)
    except FlintParseError as exc:
        module.fail_json(msg=f"cannot read {what}: {exc}", stdout=out)


def read_images(module, tool):
    image_dir = module.params["image_dir"]
    if not os.path.isdir(image_dir):
        module.fail_json(msg=f"image_dir {image_dir}: no such directory on this host")
    images = []
    for path in sorted(glob.glob(os.path.join(glob.escape(image_dir), "*.bin"))):
        info = query(module, [tool, "-i", path, "query"], f"the query of image {path}")
        try:
            key = parse_version(info["next_boot_version"])
        except ValueError as exc:
            module.fail_json(msg=f"image {path}: {exc}")
        images.append(
            {"path": path, "psid": info["psid"], "version": info["next_boot_version"], "key": key}
        )
    return images


def listed(images):
    """The images as returned: path, PSID and version."""
    return [{key: image[key] for key in ("path", "psid", "version")} for image in images]


def wanted_version(module):
    version = module.params["version"]
    if version is None:
        return None
    try:
        return parse_version(version)
    except ValueError as exc:
        module.fail_json(msg=f"version: {exc}")


def choose_image(module, images, psid, wanted):
    """The image to burn, or (None, why) when there is none for this PSID/version."""
    fitting = [image for image in images if image["psid"] == psid]
    if wanted is not None:
        fitting = [image for image in fitting if image["key"] == wanted]
    if fitting:
        return max(fitting, key=lambda image: image["key"]), None
    found = ", ".join(
        f"{os.path.basename(image['path'])} ({image['psid']} {image['version']})"
        for image in images
    )
    what = f"PSID {psid}" + (f" version {module.params['version']}" if wanted else "")
    return None, (
        f"{module.params['device']}: no firmware image for {what} in {module.params['image_dir']}; "
        f"images there: {found or 'none'}"
    )


def main():
    module = AnsibleModule(
        argument_spec={
            "device": {"type": "str", "required": True},
            "image_dir": {"type": "path", "required": True},
            "version": {"type": "str"},
            "allow_downgrade": {"type": "bool", "default": False},
            "missing_image": {"type": "str", "default": "fail", "choices": ["fail", "skip"]},
            "tool": {"type": "str", "default": "auto", "choices": ["auto", "mstflint", "flint"]},
            "sysfs_root": {"type": "path", "default": "/"},
        },
        supports_check_mode=True,
    )
    device = module.params["device"]
    wanted = wanted_version(module)
    target = device_target(module)
    tool = find_tool(module, ["flint", "mstflint"], "install mstflint or NVIDIA MFT (flint)")
    state = query(module, [tool, "-d", target, "query"], f"the query of {device}")
    try:
        flash = parse_version(state["next_boot_version"])
    except ValueError as exc:
        module.fail_json(msg=f"{device}: {exc}")
    images = read_images(module, tool)
    image, skipped = choose_image(module, images, state["psid"], wanted)
    if image is None and module.params["missing_image"] == "fail":
        module.fail_json(msg=skipped, psid=state["psid"], images=listed(images))

    burn = False
    if image is not None and image["key"] != flash:
        burn = image["key"] > flash or module.params["allow_downgrade"]
        if not burn:
            skipped = (
                f"{device}: the flash has {state['next_boot_version']}, newer than "
                f"{image['version']} in {os.path.basename(image['path'])}; "
                "allow_downgrade is false"
            )

    before = state["next_boot_version"]
    after = image["version"] if burn else before
    pending = state["reboot_pending"]
    if burn and not module.check_mode:
        run_tool(
            module,
            [tool, "-d", target, "-i", image["path"], "-y", "burn"],
            f"burn of {device}",
            messages,
        )
        state = query(
            module, [tool, "-d", target, "query"], f"the query of {device} after the burn"
        )
        after = state["next_boot_version"]
        if parse_version(after) != image["key"]:
            module.fail_json(
                msg=f"{os.path.basename(tool)} burned {image['path']} but {device} reports "
                f"{after} on its flash, not {image['version']}"
            )
        pending = True

    result = {
        "changed": burn,
        "device": device,
        "pci_address": target,
        "tool": tool,
        "psid": state["psid"],
        "before": before,
        "running": state["running_fw_version"] or state["next_boot_version"],
        "after": after,
        "image": image["path"] if image else None,
        "image_version": image["version"] if image else None,
        "images": listed(images),
        "burned": burn,
        "skipped": skipped,
        "reboot_required": burn or pending,
    }
    if module._diff:
        header = f"{device} ({target}) firmware on flash, PSID {state['psid']}"
        source = f" ({os.path.basename(image['path'])})" if burn else ""
        result["diff"] = {
            "before": f"{before}\n",
            "after": f"{after}{source}\n",
            "before_header": header,
            "after_header": header,
        }
    module.exit_json(**result)


if __name__ == "__main__":
    main()
