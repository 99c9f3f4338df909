#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvue_config
short_description: Make part of a Cumulus Linux configuration match, through the NVUE REST API
description:
  - Reads the applied configuration under each root key of I(config)
    (C(GET /nvue_v1/KEY?rev=applied&filled=false)) and compares it with I(config). Only
    when they differ does it create a revision (C(POST /nvue_v1/revision)), stage the
    difference (C(PATCH /nvue_v1/?rev=ID)), apply it with the prompt answered
    (C(PATCH /nvue_v1/revision/ID)), poll until the revision is C(applied), read the
    applied configuration back, and save it to the startup configuration.
  - A revision that does not apply (C(invalid), C(ays_fail), ...) fails the task with the
    API's own messages; NVUE keeps the previously applied revision, which the module
    reads back and reports (C(applied_unchanged)).
  - Compares as NVUE merges; a C(null) value in I(config) means "absent" (removed when
    present) and an empty dictionary means "present" (a member of a set, such as a
    switch priority). Keys I(config) does not name are left alone.
  - Runs where Ansible runs (delegate it to C(localhost)); it talks HTTPS to the switch.
version_added: 0.1.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  host:
    description: Address of the switch's NVUE API.
    type: str
    required: true
  port:
    description: Port of the NVUE API (Cumulus Linux 5.x listens on 8765).
    type: int
    default: 8765
  user:
    description: NVUE user (basic authentication).
    type: str
    required: true
  password:
    description: Its password; keep it in Ansible Vault.
    type: str
    required: true
  validate_certs:
    description:
      - Verify the switch's TLS certificate. Cumulus ships a self-signed one; install a
        real certificate or give its CA in I(ca_path) rather than turning this off.
    type: bool
    default: true
  ca_path:
    description: A CA bundle (PEM) to verify the switch's certificate with.
    type: path
  use_proxy:
    description: Use the proxy settings of the environment.
    type: bool
    default: true
  timeout:
    description: Seconds for each HTTP request.
    type: int
    default: 30
  apply_timeout:
    description: Seconds to wait for a revision to reach C(applied).
    type: int
    default: 120
  poll_interval:
    description: Seconds between revision state reads.
    type: float
    default: 1.0
  config:
    description:
      - "The desired configuration from the NVUE root, for example
        C({qos: {roce: {mode: lossless}}}); the C(rdma.fabric.roce_switch_config) filter
        renders the lossless RoCE policy this way."
    type: dict
    required: true
  save:
    description: Save the applied configuration to the startup configuration after a change.
    type: bool
    default: true
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Reads only; reports the difference and creates no revision.
  diff_mode:
    support: full
notes:
  - No Cumulus switch is reachable where this collection is tested; the tests run this
    module against a stand-in of the NVUE API (tests/standins/nvue_api.py) that follows
    the documented revision contract.
"""

EXAMPLES = r"""
- name: Lossless RoCE policy on a Cumulus switch
  rdma.fabric.nvue_config:
    host: "{{ ansible_host }}"
    user: "{{ nvue_user }}"
    password: "{{ nvue_password }}"
    config: "{{ rdma_roce_policy | rdma.fabric.roce_switch_config('cumulus', ['swp1'], 5) }}"
  delegate_to: localhost
"""

RETURN = r"""
patch:
  description: The difference staged (or, in check mode, that would be); empty when none.
  returned: always
  type: dict
  sample: {qos: {mapping: {default-global: {dscp: {"26": {switch-priority: 3}}}}}}
revision:
  description: The revision created; null when nothing differed or in check mode.
  returned: always
  type: str
  sample: "7"
before:
  description: The applied configuration under the keys I(config) names, before.
  returned: always
  type: dict
after:
  description: The same after the change (read back; predicted in check mode).
  returned: always
  type: dict
applied_unchanged:
  description: After a failed apply, whether the applied configuration read back is unchanged.
  returned: failure to apply
  type: bool
saved:
  description: Whether the applied configuration was saved to startup.
  returned: always
  type: bool
"""

import json

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.nvue import NvueClient, NvueError
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import (
    diff_view,
    merge_apply,
    merge_diff,
    subset,
)


def read(client, config):
    return {key: client.get(key) for key in config}


def main():
    module = AnsibleModule(
        argument_spec={
            "host": {"type": "str", "required": True},
            "port": {"type": "int", "default": 8765},
            "user": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "validate_certs": {"type": "bool", "default": True},
            "ca_path": {"type": "path"},
            "use_proxy": {"type": "bool", "default": True},
            "timeout": {"type": "int", "default": 30},
            "apply_timeout": {"type": "int", "default": 120},
            "poll_interval": {"type": "float", "default": 1.0},
            "config": {"type": "dict", "required": True},
            "save": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    client = NvueClient(
        p["host"],
        p["port"],
        p["user"],
        p["password"],
        validate_certs=p["validate_certs"],
        ca_path=p["ca_path"],
        timeout=p["timeout"],
        use_proxy=p["use_proxy"],
    )
    config = p["config"]
    result = {"changed": False, "revision": None, "saved": False}
    try:
        current = read(client, config)
    except NvueError as err:
        module.fail_json(msg=f"could not read the applied configuration: {err}", **result)
    patch = merge_diff(config, current)
    before = subset(current, config)
    after = subset(merge_apply(current, patch), config)
    result.update(patch=patch, before=before, after=after)
    if module._diff:
        result["diff"] = diff_view(before, after)
    if not patch:
        module.exit_json(**result)
    result["changed"] = True
    if module.check_mode:
        module.exit_json(**result)

    try:
        rev = client.create_revision()
        result["revision"] = rev
        client.patch(rev, patch)
        client.apply(rev, timeout=p["apply_timeout"], interval=p["poll_interval"])
    except NvueError as err:
        result["changed"] = False
        try:
            result["applied_unchanged"] = read(client, config) == current
        except NvueError:
            result["applied_unchanged"] = None
        kept = (
            "the switch keeps its previous configuration"
            if result["applied_unchanged"]
            else "check the switch: its applied configuration could not be confirmed unchanged"
        )
        module.fail_json(msg=f"NVUE did not apply the change ({kept}): {err}", **result)

    try:
        applied = read(client, config)
        left = merge_diff(config, applied)
        if left:
            module.fail_json(
                msg=f"revision {rev} applied but NVUE still differs: {json.dumps(left)}",
                **result,
            )
        result["after"] = subset(applied, config)
        if p["save"]:
            client.save()
            result["saved"] = True
    except NvueError as err:
        module.fail_json(msg=f"revision {rev} applied; then: {err}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
