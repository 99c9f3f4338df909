# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import os

DOCUMENTATION = r"""
---
name: contained_path_errors
short_description: Say why a controller directory a role writes to is not contained
version_added: 0.2.0
author: rdma-fabric contributors (@rdma-fabric)
description:
  - Returns one message naming the variable when the path is empty, is absolute with a
    C(..) component, or is relative and resolves (symbolic links followed) outside
    O(project); an empty list when the path is good.
  - A relative path is taken relative to the current directory of ansible-playbook,
    where the tasks delegated to the controller write it. An absolute path without
    C(..) is one the user set on purpose and is accepted wherever it points.
positional: _input
options:
  _input:
    description: The directory, as the variable holds it.
    type: str
    required: true
  name:
    description: The variable's name, for the message.
    type: str
    required: true
  project:
    description: The project directory (the directory of the ansible.cfg in use).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Validate the report directory before any test runs
  ansible.builtin.assert:
    that: __errors | length == 0
    fail_msg: "{{ __errors | join('; ') }}"
  vars:
    __errors: >-
      {{ rdma_verify_report_dir | rdma.fabric.contained_path_errors(
         name='rdma_verify_report_dir', project=ansible_config_file | dirname) }}
"""

RETURN = r"""
_value:
  description: Error messages naming the variable; empty when the path is contained.
  type: list
  elements: str
"""


def contained_path_errors(path, name, project):
    path = "" if path is None else str(path)
    if not path.strip():
        return [f"{name} must be a directory; got an empty value"]
    parts = path.split("/")
    if os.path.isabs(path):
        if ".." in parts:
            return [f"{name} must not contain '..' components; got '{path}'"]
        return []
    root = os.path.realpath(project)
    resolved = os.path.realpath(os.path.join(os.getcwd(), path))
    if os.path.commonpath([root, resolved]) != root:
        return [
            f"{name} '{path}' resolves to {resolved}, outside the project {root}; "
            "give an absolute path without '..' to write elsewhere"
        ]
    return []


class FilterModule:
    def filters(self):
        return {"contained_path_errors": contained_path_errors}
