#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: verify_step
short_description: Plan and judge rdma_verify's perftest tests on the controller
description:
  - An action plugin (it runs on the controller) for the rdma_verify role; its interface
    may change with the role.
  - C(step=fabric) (run once) reads every host's health (the C(__rdma_verify_health)
    fact), refuses two inventory names of one machine (same boot id or node GUID)
    naming both, and sets the expected rate per rail (the rate most of the rail's ports
    report), failing each port below it.
  - C(step=plan) (per host) returns only this host's sides of a phase's tests, computed
    from its own pairs of the schedule (rounds x rails), for
    M(rdma.fabric.perftest_run) C(action=schedule).
  - C(step=start) (run once, after every host's plan) returns the one start time of
    the phase's round grid, C(start_at), a launch margin ahead (Ansible starts the
    hosts' schedules fork by fork), and C(at), the controller's clock then. With
    O(after) (that C(at), run once again once every host's async schedule is
    launched), the margin is 1.5 times the launch's own length (now - O(after)) plus
    10 s, time for the hosts' C(action=release) calls, which go fork by fork as the
    launches did.
  - C(step=judge) (run once) judges every host's outcomes (the C(__rdma_verify_done)
    registered result), writes the records to O(run_dir) and returns the next phase's
    tests (the retest of failed tests, then the isolation of suspect host rails).
  - C(step=report) (run once) assembles the results document from O(run_dir).
version_added: 0.3.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  step:
    description: Which step.
    type: str
    required: true
    choices: [fabric, plan, start, judge, report]
  hosts:
    description: The play's hosts, in inventory order (the schedule's order).
    type: list
    elements: str
    required: true
  phase:
    description: The phase to plan or judge.
    type: str
    choices: [main, retest, isolate, latency]
    default: main
  mode:
    description: The main schedule (rdma_verify_mode).
    type: str
    choices: [full, quick]
    default: full
  rounds:
    description: Rounds of the quick schedule.
    type: int
    default: 2
  options:
    description: The test's options (binary, args, ports, timeouts, pass marks).
    type: dict
    required: true
  pairs:
    description: For retest and isolate, the tests to run (C(next) of the last judge).
    type: list
    elements: dict
    default: []
  rails:
    description: The expectation per rail (C(rails) of the fabric step).
    type: dict
    default: {}
  run_async:
    description:
      - For C(step=plan), run the schedule as an async task - auto (when the play has
        more hosts than forks), true or false.
    type: raw
    default: auto
  start_wait:
    description:
      - For C(step=plan) of an async schedule, seconds a host's schedule waits for the
        release of its start (M(rdma.fabric.perftest_run) O(start_wait)); part of the
        returned C(deadline).
      - For C(step=start) with O(after), the grid must start within this many seconds of
        O(after) (the first host's launch), else the step fails naming
        rdma_verify_launch_timeout.
    type: int
    default: 900
  after:
    description:
      - For C(step=start), the C(at) of the phase's first start step; the margin is then
        measured (see C(step=start)).
    type: float
  expected_rate_gbps:
    description: For C(step=fabric), the rate every port must have (0 - the rail's majority).
    type: float
    default: 0
  rate_majority:
    description:
      - For C(step=fabric), the share of a rail's ports that must report one rate for it to
        be the rail's expected rate (a tie never counts); else the rail is ambiguous.
    type: float
    default: 0.5
  run_dir:
    description:
      - For plan, judge and report, the controller directory of this run's records (and,
        while a phase runs, its hosts' plan files).
    type: path
  retest:
    description: For C(step=judge), retest each failed main test once.
    type: bool
    default: true
  isolate:
    description: For C(step=judge), plan the isolation of suspect host rails.
    type: bool
    default: true
  fabric:
    description: For C(step=report), the fabric step's result.
    type: dict
    default: {}
  stamp:
    description: For C(step=report), the run's UTC stamp.
    type: str
  fabric_hosts:
    description:
      - For C(step=report), the fabric's hosts (the inventory group rdma_verify_fabric_group).
        Those not among O(hosts), as in a C(--limit) run, are named in the results'
        C(summary.partial) ({tested, of, missing}), in report.md and in the summary.
    type: list
    elements: str
    default: []
  write:
    description: For C(step=report), write results.json into O(run_dir).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reads variables and controller files only; the role runs no traffic in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
"""

EXAMPLES = r"""
- name: Plan this host's main tests
  rdma.fabric.verify_step:
    step: plan
    phase: main
    hosts: "{{ ansible_play_hosts }}"
    options: "{{ __rdma_verify_bw_options }}"
    rails: "{{ __rdma_verify_fabric.rails }}"
  register: mine
"""

RETURN = r"""
sides:
  description:
    - For C(step=plan) without O(run_dir), this host's server and client sides
      (perftest_run tests).
  returned: step=plan, no run_dir
  type: list
  elements: dict
plan_file:
  description:
    - For C(step=plan) with O(run_dir), the controller file (JSON) of this host's sides;
      removed by the phase's C(step=judge).
  returned: step=plan, with run_dir
  type: str
sides_count:
  description: For C(step=plan), how many sides this host runs.
  returned: step=plan
  type: int
deadline:
  description: For C(step=plan), seconds the schedule may take at most (for C(async)).
  returned: step=plan
  type: int
round_seconds:
  description: For C(step=plan), a round's length on the grid (perftest_run C(round_seconds)).
  returned: step=plan
  type: int
start_at:
  description: For C(step=start), when round 0 starts on the grid, seconds since the epoch.
  returned: step=start
  type: float
at:
  description: For C(step=start), the controller's clock when it ran, seconds since the epoch.
  returned: step=start
  type: float
rounds_total:
  description: For C(step=plan), the phase's rounds across the fabric (for the progress line).
  returned: step=plan
  type: int
use_async:
  description: For C(step=plan), whether to run the schedule as an async task.
  returned: step=plan
  type: bool
next:
  description: For C(step=judge), the next phase's tests.
  returned: step=judge
  type: list
  elements: dict
rails:
  description: For C(step=fabric), the expectation per rail.
  returned: step=fabric
  type: dict
checks:
  description: For C(step=fabric), the checks across hosts.
  returned: step=fabric
  type: list
  elements: dict
results:
  description: For C(step=report), the results document.
  returned: step=report
  type: dict
"""
