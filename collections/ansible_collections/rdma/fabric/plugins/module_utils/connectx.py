# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the ConnectX firmware modules share: the device to open and the tool to run.

Both mstflint's tools (mstconfig, mstflint) and NVIDIA MFT's (mlxconfig, flint) take the
device as ``-d`` PCI address or device path; the module's ``device`` option may also be an
RDMA device name, resolved through sysfs (rdma_sysfs.pci_target).
"""

from __future__ import annotations

import os

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_sysfs import (
    DeviceNotFound,
    pci_target,
)


def device_target(module):
    """The ``-d`` argument for module.params['device']; fails naming the device when unknown."""
    try:
        return pci_target(module.params["sysfs_root"], module.params["device"])
    except DeviceNotFound as exc:
        module.fail_json(msg=str(exc))


def find_tool(module, auto_order, install_hint):
    """Path of module.params['tool'] (or the first of auto_order found for 'auto')."""
    choice = module.params["tool"]
    names = list(auto_order) if choice == "auto" else [choice]
    for name in names:
        path = module.get_bin_path(name)
        if path:
            return path
    module.fail_json(msg=f"{' or '.join(names)} not found: {install_hint}")


def run_tool(module, argv, what, errors_of, hints=()):
    """Run a firmware tool; fail with its error lines when it exits non-zero or prints any.

    ``errors_of(text)`` returns the tool's error lines; ``hints`` are (text, hint) pairs:
    a hint is added to the message when its text is in the error.
    """
    rc, out, err = module.run_command(argv, check_rc=False)
    errors = errors_of(out + "\n" + err)
    if rc != 0 or errors:
        detail = "; ".join(errors) or (err or out).strip() or f"exit status {rc}"
        hint = "".join(f" ({advice})" for needle, advice in hints if needle in detail)
        module.fail_json(
            msg=f"{os.path.basename(argv[0])} {what} failed: {detail}{hint}",
            rc=rc,
            stdout=out,
            stderr=err,
            cmd=argv,
        )
    return out
