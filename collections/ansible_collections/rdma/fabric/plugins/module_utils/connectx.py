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

# The options of the doc fragment rdma.fabric.connectx (and rdma.fabric.sysfs), and their
# rules, for AnsibleModule(argument_spec={**DEVICE_SPEC, ...}, **DEVICE_RULES).
DEVICE_SPEC = {
    "device": {"type": "str"},
    "devices": {"type": "list", "elements": "str"},
    "parallel": {"type": "int", "default": 8},
    "sysfs_root": {"type": "path", "default": "/"},
}
DEVICE_RULES = {
    "mutually_exclusive": [("device", "devices")],
    "required_one_of": [("device", "devices")],
}


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


# --- several cards in one module call --------------------------------------------------
# A burn takes minutes per card; an 8-NIC server done one card after another waits 8 times
# that. The modules take ``devices`` and work on the cards side by side in threads. The
# PCI functions of one card (0000:3b:00.0 and 0000:3b:00.1) share one flash and one
# firmware configuration, so they are done one after another in the same thread.


class CardFailed(Exception):
    """One card's failure: fail_json's arguments, raised instead of exiting."""

    def __init__(self, result):
        super().__init__(result.get("msg", "failed"))
        self.result = result


class CardModule:
    """The module as one card's worker sees it.

    ``params`` are the module's with ``device`` (and whatever ``extra`` names) set for this
    card; ``fail_json`` raises CardFailed instead of exiting, so one card's failure leaves
    the other cards' work and results intact. Everything else is the module's.
    """

    def __init__(self, module, device, **extra):
        self._module = module
        self.params = {**module.params, "device": device, **extra}

    def fail_json(self, **result):
        raise CardFailed(result)

    def __getattr__(self, name):
        return getattr(self._module, name)


def card_of(address):
    """The card a PCI function belongs to (0000:3b:00.1 -> 0000:3b:00); a path is its own."""
    head, dot, _function = address.rpartition(".")
    return head if dot and ":" in head else address


def run_cards(module, devices, work, parallel, **per_device):
    """Run ``work(card_module, target)`` for every device; returns the results in order.

    ``per_device`` maps a parameter name to a function of the device giving its value for
    that device's CardModule. Cards run side by side, at most ``parallel`` at a time; the
    functions of one card run one after another. A device that fails yields
    ``{"device", "pci_address", "failed": True, "msg", ...}`` instead of its result.
    """
    from concurrent.futures import ThreadPoolExecutor

    results = {}
    groups = {}
    for index, device in enumerate(devices):
        card = CardModule(module, device, **{k: f(device) for k, f in per_device.items()})
        try:
            target = device_target(card)
        except CardFailed as exc:
            results[index] = {"device": device, "pci_address": None, "failed": True, **exc.result}
            continue
        groups.setdefault(card_of(target), []).append((index, card, target))

    def one_card(members):
        for index, card, target in members:
            try:
                results[index] = work(card, target)
            except CardFailed as exc:
                results[index] = {
                    "device": card.params["device"],
                    "pci_address": target,
                    "failed": True,
                    **exc.result,
                }

    if groups:
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(groups)))) as pool:
            for future in [pool.submit(one_card, members) for members in groups.values()]:
                future.result()
    return [results[index] for index in range(len(devices))]


def run_devices(module, work, **per_device):
    """The module's whole run for ``device`` or ``devices``; never returns.

    ``device``: ``work(card_module, target)`` is the result, at the top level.
    ``devices``: run_cards, each device's result in ``cards`` (exit_cards).
    ``per_device`` as in run_cards.
    """
    if module.params["parallel"] < 1:
        module.fail_json(msg=f"parallel must be 1 or more; got {module.params['parallel']}")
    devices = module.params["devices"]
    if devices is None:
        device = module.params["device"]
        card = CardModule(module, device, **{k: f(device) for k, f in per_device.items()})
        try:
            module.exit_json(**work(card, device_target(card)))
        except CardFailed as exc:
            module.fail_json(**exc.result)
    exit_cards(module, run_cards(module, devices, work, module.params["parallel"], **per_device))


def exit_cards(module, results):
    """Exit with every card's result (``cards``); fail naming each card that failed."""
    failed = [result for result in results if result.get("failed")]
    outcome = {
        "changed": any(result.get("changed") for result in results),
        "cards": results,
        "reboot_required": any(result.get("reboot_required") for result in results),
    }
    diffs = [result.pop("diff") for result in results if "diff" in result]
    if module._diff:
        outcome["diff"] = diffs
    if failed:
        named = "; ".join(
            f"{result['device']}"
            + (f" ({result['pci_address']})" if result.get("pci_address") else "")
            + f": {result.get('msg', 'failed')}"
            for result in failed
        )
        module.fail_json(
            msg=f"{len(failed)} of {len(results)} device(s) failed: {named}", **outcome
        )
    module.exit_json(**outcome)
