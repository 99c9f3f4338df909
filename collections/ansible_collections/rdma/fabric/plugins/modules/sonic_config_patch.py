#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: sonic_config_patch
short_description: Make CONFIG_DB tables of a SONiC switch match, with an RFC 6902 JSON Patch
description:
  - Reads the running CONFIG_DB (C(sonic-cfggen -d --print-data)), computes the RFC 6902
    JSON Patch that makes the rows I(config) names agree with it (add what is missing,
    replace what differs, remove what I(config) gives as C(null)), and only when the
    patch is not empty applies it with SONiC's generic config updater
    (C(config apply-patch FILE)), reads CONFIG_DB back to confirm, and saves it
    (C(config save -y)) so it survives a reboot.
  - Rows and tables I(config) does not name are left alone. A key or table the patch
    would leave empty is removed whole (the config updater refuses empty tables).
  - A rejected patch fails the task with the updater's own error lines; the updater
    applies nothing of a patch it rejects in validation.
  - What the updater's field operation validators (releases 202205-202505) would refuse
    fails before any change, saying what to do on the switch - a PFC_WD table the switch
    lacks (start the watchdog with C(pfcwd start_default)), a WRED profile or field the
    switch lacks (only the green thresholds and probability of an existing profile may be
    replaced).
  - A drop probability is left out for a colour the switch's WRED profile runs ECN-only
    (C(wred_<colour>_enable) false), because NVIDIA's SAI refuses it.
  - Runs on the switch (SSH, C(become) for C(config)).
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
requirements:
  - jsonpatch on the switch (SONiC's generic config updater depends on it, so a switch
    with C(config apply-patch) has it); it applies the patch for the check-mode
    prediction, as the updater simulates a patch.
options:
  config:
    description:
      - Desired tables, TABLE -> KEY -> FIELD -> value, values as strings as CONFIG_DB
        holds them; C(null) for a key or field means absent. The
        C(rdma.fabric.roce_switch_config) filter renders the lossless RoCE policy this way.
    type: dict
    required: true
  save:
    description: Save CONFIG_DB to /etc/sonic/config_db.json after a change.
    type: bool
    default: true
  buffers:
    description:
      - The lossless priority group to give headroom on I(ports), computed against this
        switch's CONFIG_DB and merged into I(config) (BUFFER_PG, and BUFFER_QUEUE for a
        queue outside the platform's lossless 3-4 - its lossy range row is split so the
        queue gets the egress lossless profile). Omit to leave buffers alone.
      - Dynamic buffer model - C(<port>|<pg>) with profile C(NULL) (buffermgrdyn computes
        the headroom from speed, CABLE_LENGTH and MTU). Traditional - the profile
        C(pg_lossless_<speed>_<cable>m_profile); when CONFIG_DB lacks it, the profile and
        the row are left to buffermgr, which writes both from the platform's
        pg_profile_lookup.ini (the updater refuses a new BUFFER_PROFILE); a speed/length
        pair the file does not list fails before any change. In both, lossless rows of these
        ports on other priority groups (an old C(3-4)) are removed.
    type: dict
    suboptions:
      ports:
        description: The RoCE ports.
        type: list
        elements: str
        required: true
      pg:
        description: The RoCE priority group.
        type: int
        required: true
      cable_length:
        description: Cable length in meters of the ports I(cable_lengths) does not name.
        type: int
        required: true
      cable_lengths:
        description: Port -> cable length in meters, where it differs.
        type: dict
        default: {}
      lossy_pgs:
        description:
          - Priority groups the policy's traffic reaches without PFC besides PG 0 (CNP on
            TC 7 lands on PG 7); each port gets a C(<port>|<pg>) row on
            C(ingress_lossy_profile) unless a row already covers it.
        type: list
        elements: int
        default: []
      model:
        description:
          - The buffer model; C(auto) reads CONFIG_DB C(DEVICE_METADATA|localhost)
            C(buffer_model) (traditional when absent).
        type: str
        choices: [auto, dynamic, traditional]
        default: auto
      lookup_file:
        description:
          - pg_profile_lookup.ini of the platform (traditional model); default
            C(/usr/share/sonic/device/<platform>/<hwsku>/pg_profile_lookup.ini) from
            DEVICE_METADATA.
        type: path
  wred_drop:
    description:
      - The policy's WRED drop choice; when given, a warning says where the switch's
        C(AZURE_LOSSLESS) profile drops otherwise (the patch cannot change
        C(wred_*_enable)).
    type: bool
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Reads CONFIG_DB and returns the patch; applies nothing.
  diff_mode:
    support: full
notes:
  - Single-ASIC switches; multi-ASIC namespaces (C(/asic0/...) paths) are not handled.
  - No SONiC switch is reachable where this collection is tested; the tests run this
    module against stand-ins of C(sonic-cfggen) and C(config) (tests/standins) that keep
    CONFIG_DB in a JSON file and apply patches by RFC 6902.
"""

EXAMPLES = r"""
- name: Lossless RoCE policy on a SONiC switch
  rdma.fabric.sonic_config_patch:
    config: "{{ rdma_roce_policy | rdma.fabric.roce_switch_config('sonic', ['Ethernet0'], 5) }}"
  become: true
"""

RETURN = r"""
patch:
  description: The JSON Patch applied (in check mode, that would be); empty when none.
  returned: always
  type: list
  elements: dict
  sample: [{op: replace, path: /PORT_QOS_MAP/Ethernet0/pfc_enable, value: "3"}]
before:
  description: The rows of CONFIG_DB that I(config) names, before.
  returned: always
  type: dict
after:
  description: The same rows after the change (read back; predicted in check mode).
  returned: always
  type: dict
buffer_model:
  description: The buffer model the lossless rows were computed for (null without I(buffers)).
  returned: always
  type: str
  sample: dynamic
saved:
  description: Whether CONFIG_DB was saved.
  returned: always
  type: bool
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.rdma.fabric.plugins.module_utils.sonic_buffers import (
    buffer_model,
    buffer_tables,
    lookup_path,
    parse_pg_lookup,
)
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    HAS_JSONPATCH,
    JSONPATCH_IMPORT_ERROR,
    apply_json_patch,
    cable_lengths,
    diff_view,
    json_patch,
    sonic_patch_problems,
    sonic_sai_wred,
    sonic_wred_note,
    tables_view,
)

BIN_DIRS = ["/usr/local/bin", "/usr/bin", "/bin"]


def read_configdb(module, cfggen):
    rc, out, err = module.run_command([cfggen, "-d", "--print-data"])
    if rc != 0:
        module.fail_json(msg=f"sonic-cfggen -d --print-data failed (rc {rc}): {err or out}")
    try:
        return json.loads(out)
    except ValueError:
        module.fail_json(msg=f"sonic-cfggen -d --print-data did not print JSON: {out[:300]}")


def with_buffers(module, current, desired):
    """``desired`` plus the lossless BUFFER_PG rows for this switch's buffer model."""
    spec = module.params["buffers"]
    model = spec["model"] if spec["model"] != "auto" else buffer_model(current)
    lookup = None
    if model == "traditional":
        path = spec["lookup_file"] or lookup_path(current)
        try:
            with open(path, encoding="utf-8") as handle:
                lookup = parse_pg_lookup(handle.read())
        except OSError as exc:
            module.fail_json(msg=f"cannot read the PG profile lookup file {path}: {exc}")
    lengths = cable_lengths(spec["ports"], spec["cable_length"], spec["cable_lengths"])
    notes = []
    tables, errors = buffer_tables(
        spec["ports"], spec["pg"], lengths, model, current, lookup, notes, spec["lossy_pgs"]
    )
    if errors:
        module.fail_json(msg="; ".join(errors), buffer_model=model)
    for note in notes:
        module.warn(note)
    return {**desired, **tables}, model


def updater_errors(text):
    keep = ("Error", "Failed", "failed", "illegal", "Exception")
    lines = [line.strip() for line in text.splitlines() if any(k in line for k in keep)]
    return "; ".join(dict.fromkeys(lines)) or text.strip()[-500:]


def main():
    module = AnsibleModule(
        argument_spec={
            "config": {"type": "dict", "required": True},
            "wred_drop": {"type": "bool"},
            "save": {"type": "bool", "default": True},
            "buffers": {
                "type": "dict",
                "options": {
                    "ports": {"type": "list", "elements": "str", "required": True},
                    "pg": {"type": "int", "required": True},
                    "cable_length": {"type": "int", "required": True},
                    "cable_lengths": {"type": "dict", "default": {}},
                    "lossy_pgs": {"type": "list", "elements": "int", "default": []},
                    "model": {
                        "type": "str",
                        "choices": ["auto", "dynamic", "traditional"],
                        "default": "auto",
                    },
                    "lookup_file": {"type": "path"},
                },
            },
        },
        supports_check_mode=True,
    )
    if not HAS_JSONPATCH:
        module.fail_json(msg=missing_required_lib("jsonpatch"), exception=JSONPATCH_IMPORT_ERROR)
    desired = module.params["config"]
    cfggen = module.get_bin_path("sonic-cfggen", required=True, opt_dirs=BIN_DIRS)
    config = module.get_bin_path("config", required=True, opt_dirs=BIN_DIRS)

    current = read_configdb(module, cfggen)
    model = None
    if module.params["buffers"]:
        desired, model = with_buffers(module, current, desired)
    desired = sonic_sai_wred(current, desired)
    problems = sonic_patch_problems(current, desired)
    if problems:
        module.fail_json(msg="; ".join(problems), changed=False, patch=[])
    if module.params["wred_drop"] is not None:
        note = sonic_wred_note(current, module.params["wred_drop"])
        if note:
            module.warn(note)
    patch = json_patch(current, desired)
    before = tables_view(current, desired)
    after = tables_view(apply_json_patch(current, patch), desired)
    result = {"changed": bool(patch), "patch": patch, "before": before, "after": after}
    result["buffer_model"] = model
    result["saved"] = False
    if module._diff:
        result["diff"] = diff_view(before, after)
    if not patch or module.check_mode:
        module.exit_json(**result)

    patch_file = os.path.join(module.tmpdir, "rdma-fabric-patch.json")
    with open(patch_file, "w", encoding="utf-8") as handle:
        json.dump(patch, handle, indent=2)
    rc, out, err = module.run_command([config, "apply-patch", patch_file])
    if rc != 0 or "Patch applied successfully" not in out:
        result["changed"] = False
        module.fail_json(
            msg=f"config apply-patch refused the patch (rc {rc}): {updater_errors(out + err)}",
            stdout=out,
            stderr=err,
            **result,
        )
    applied = read_configdb(module, cfggen)
    left = json_patch(applied, desired)
    if left:
        module.fail_json(
            msg=f"config apply-patch succeeded but CONFIG_DB still differs: {json.dumps(left)}",
            **result,
        )
    result["after"] = tables_view(applied, desired)
    if module.params["save"]:
        rc, out, err = module.run_command([config, "save", "-y"])
        if rc != 0:
            module.fail_json(msg=f"config save -y failed (rc {rc}): {err or out}", **result)
        result["saved"] = True
    module.exit_json(**result)


if __name__ == "__main__":
    main()
