"""role_play reads what ansible-runner recorded of a real local playbook run, and agrees
with the screen the same run printed: the TASK and RUNNING HANDLER headers, the PLAY
RECAP line, the failure messages."""

from __future__ import annotations

import re

import pytest
from role_play import failure_messages, handlers_run, outcomes, recap, recaps, tasks_run

PLAY = """\
- name: Events of every kind role_play reads
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Change something
      ansible.builtin.command: "true"
      notify: Say hello
    - name: Skip this
      ansible.builtin.debug:
        msg: never
      when: false
    - name: Fail one item of two
      ansible.builtin.assert:
        that: item != 'bad_value'
        fail_msg: "demo_var {{ item }} is not allowed"
      loop: [good_value, bad_value]
      ignore_errors: true
    - name: Fail with rdma_demo_var named
      ansible.builtin.fail:
        msg: rdma_demo_var must be set
  handlers:
    - name: Say hello
      ansible.builtin.debug:
        msg: hello
"""


@pytest.fixture(scope="module")
def run(run_playbook, tmp_path_factory):
    playbook = tmp_path_factory.mktemp("role_play") / "events.yml"
    playbook.write_text(PLAY)
    return run_playbook("-i", "localhost,", str(playbook), "--force-handlers")


def test_the_events_say_what_the_screen_says(run):
    assert run.returncode == 2, run.output
    screen_tasks = re.findall(r"^TASK \[(.*)\] \*+$", run.stdout, re.MULTILINE)
    screen_handlers = re.findall(r"^RUNNING HANDLER \[(.*)\] \*+$", run.stdout, re.MULTILINE)
    assert (
        tasks_run(run)
        == screen_tasks
        == [
            "Change something",
            "Skip this",
            "Fail one item of two",
            "Fail with rdma_demo_var named",
        ]
    )
    assert handlers_run(run) == screen_handlers == ["Say hello"]
    line = re.search(r"^localhost\s*:\s*(.*)$", run.stdout, re.MULTILINE)[1]
    screen = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
    assert recap(run) == screen, (recap(run), screen)
    assert screen == {
        "ok": 3,
        "changed": 1,
        "unreachable": 0,
        "failed": 1,
        "skipped": 1,
        "rescued": 0,
        "ignored": 1,
    }


def test_results_and_failures(run):
    assert outcomes(run, "Skip this") == {"localhost": "skipped"}
    assert outcomes(run, "Change something") == {"localhost": "ok"}
    assert outcomes(run, "Fail with rdma_demo_var named") == {"localhost": "failed"}
    assert failure_messages(run) == [
        "localhost: demo_var bad_value is not allowed",
        "localhost: rdma_demo_var must be set",
    ]


def test_a_host_not_in_the_recap_fails_loudly(run):
    assert set(recaps(run)) == {"localhost"}
    with pytest.raises(AssertionError, match="no PLAY RECAP for sm-a"):
        recap(run, "sm-a")
