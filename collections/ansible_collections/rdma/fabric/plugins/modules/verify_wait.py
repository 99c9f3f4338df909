#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: verify_wait
short_description: Wait for rdma_verify's async schedule, showing each finished round
description:
  - An action plugin for the rdma_verify role; its interface may change with the role.
  - Polls the async job of M(rdma.fabric.perftest_run) C(action=schedule) as
    M(ansible.builtin.async_status) does, until it finishes or O(timeout) passes, and
    returns the job's result (as async_status does).
  - With O(report), also reads the schedule's O(progress_file) on the host (at most every
    O(interval) seconds) and prints one line per finished round - round 37/1,023, the
    host's sides run and failed so far, time elapsed and left - through Ansible's display.
    Hosts run their rounds in step, so one host's round is the fabric's.
version_added: 0.4.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  jid:
    description: The async job id of the schedule.
    type: str
    required: true
  timeout:
    description: Seconds to wait before failing.
    type: int
    required: true
  delay:
    description: Seconds between two polls of the job.
    type: int
    default: 2
  report:
    description: Print the progress lines (one host of the play does).
    type: bool
    default: false
  progress_file:
    description: The schedule's progress file on the host (perftest_run O(progress_file)).
    type: path
  interval:
    description: Seconds between two reads of O(progress_file).
    type: int
    default: 10
  rounds_total:
    description: The rounds of this phase across the fabric (the plan step's C(rounds_total)).
    type: int
    default: 0
  phase:
    description: The phase, for the progress line.
    type: str
    default: main
extends_documentation_fragment:
  - rdma.fabric.attributes
attributes:
  check_mode:
    support: none
    description: The role runs no traffic in check mode, so there is nothing to wait for.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Wait for this host's async tests
  rdma.fabric.verify_wait:
    jid: "{{ job.ansible_job_id }}"
    timeout: 3600
    report: "{{ inventory_hostname == ansible_play_hosts[0] }}"
    progress_file: /run/rdma-fabric-perftest/progress-main.json
    rounds_total: 1023
"""

RETURN = r"""
finished:
  description: Whether the job finished (always true on success).
  returned: always
  type: bool
tests:
  description: The schedule's results (M(rdma.fabric.perftest_run)'s C(tests)).
  returned: success
  type: list
  elements: dict
"""
