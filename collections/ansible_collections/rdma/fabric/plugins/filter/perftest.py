# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_perftest

DOCUMENTATION = r"""
---
name: perftest
short_description: Parse perftest (ib_write_bw, ib_*_lat ...) output
version_added: 0.1.0
author: rdma-fabric contributors
description:
  - Turns the stdout of a perftest run into its settings, the result rows keyed by
    column, the bandwidth unit, the average bandwidth in Gb/s of the last row
    (C(bw_average_gbps), converted from MB/sec or MiB/sec when needed) and error lines.
positional: _input
options:
  _input:
    description: The stdout of the perftest client or server.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Average bandwidth of a run
  ansible.builtin.debug:
    msg: "{{ (client.stdout | rdma.fabric.perftest).bw_average_gbps }} Gb/s"
"""

RETURN = r"""
_value:
  description: test, settings, columns, unit, rows, errors, bw_average_gbps.
  type: dict
"""


class FilterModule:
    def filters(self):
        return {"perftest": parse_perftest}
