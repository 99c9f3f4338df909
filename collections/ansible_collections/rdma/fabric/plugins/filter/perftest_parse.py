# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.perftest import parse_perftest

DOCUMENTATION = r"""
---
name: perftest_parse
short_description: Parse perftest output (ib_write_bw, ib_read_bw, ib_send_bw, ib_*_lat)
version_added: 0.2.0
author: rdma-fabric contributors
description:
  - Turns the output of one perftest run, client or server side, into data.
  - Bandwidth is always in Gb/s (10^9 bit/s); perftest's MB/sec and MiB/sec (printed
    without C(--report_gbits)) are 2^20 bytes/s and are converted.
  - Handles C(-a) tables (one row per size), bidirectional runs (C(-b)), stderr
    warnings interleaved with the table (even inside a row), and the error outputs (no
    device, cannot connect, bad GID index, completion errors). Does not use
    C(--out_json), whose validity has varied by perftest version.
positional: _input
options:
  _input:
    description: The output (stdout, or stdout and stderr together) of a perftest run.
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Average bandwidth of the largest size
  ansible.builtin.debug:
    msg: "{{ (client.stdout | rdma.fabric.perftest_parse).rows[-1].bw_average_gbps }} Gb/s"
"""

RETURN = r"""
_value:
  description:
    - C(ok) (bool, a complete result row and no error), C(error) (string or null),
      C(test) (the title line), C(device), C(link_type), C(gid_index), C(mtu), C(qps),
      C(connection_type), C(bidirectional), C(kind) (bw or lat), C(unit) (as printed),
      C(settings) (every key and value of the header block), C(errors) (the error lines),
      C(clock_error) (perftest could not calibrate its clock; rates print as 0).
    - C(rows) for bandwidth tests, each {bytes, iterations, bw_peak_gbps,
      bw_average_gbps, msg_rate_mpps}; for latency tests {bytes, iterations, t_min_us,
      t_max_us, t_typical_us, t_avg_us, t_stdev_us, p99_us, p999_us}. A row cut short
      keeps the columns it has.
  type: dict
"""


class FilterModule:
    def filters(self):
        return {"perftest_parse": parse_perftest}
