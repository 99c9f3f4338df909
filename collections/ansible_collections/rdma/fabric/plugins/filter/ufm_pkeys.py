# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for UFM Enterprise's PKey REST API (module_utils/ufm_pkeys.py)."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.ufm_pkeys import requests, ufm_errors

DOCUMENTATION = r"""
---
name: ufm_pkey_requests
short_description: UFM REST requests that bring UFM's PKeys to the inventory's partitions
version_added: 0.3.0
author: rdma-fabric contributors
description:
  - Compares the answer of UFM Enterprise's C(GET /ufmRest/resources/pkeys?guids_data=true)
    with partition records and returns the C(POST) (a PKey UFM lacks) or C(PUT) (a PKey
    whose GUIDs, memberships or IPoIB flag differ) requests of
    C(/ufmRest/resources/pkeys) still needed (NVIDIA UFM Enterprise REST API Guide,
    PKey GUIDs Rest API). The management PKey 0x7fff and PKeys the records lack are left
    to UFM. Also in this file - C(ufm_pkey_errors), what UFM cannot take of the
    partitions (members other than port GUIDs, C(both) membership).
positional: _input, partitions
options:
  _input:
    description: The JSON answer of C(GET /ufmRest/resources/pkeys?guids_data=true).
    type: dict
    required: true
  partitions:
    description: Partition records (the C(rdma.fabric.opensm_partitions) filter's output).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: Requests still needed
  ansible.builtin.debug:
    msg: "{{ pkeys.json | rdma.fabric.ufm_pkey_requests(records) }}"
"""

RETURN = r"""
_value:
  description: Requests, each with C(method), C(path) and C(body); empty when UFM matches.
  type: list
  elements: dict
"""


class FilterModule:
    def filters(self):
        return {"ufm_pkey_requests": requests, "ufm_pkey_errors": ufm_errors}
