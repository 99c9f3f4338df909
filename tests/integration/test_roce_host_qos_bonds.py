"""roce_host_qos expands a RoCE LAG bond into its members (DCB lives on the slaves), read
from a recorded-shape sysfs tree (tests/support/sysfs_tree.py) through
roce_host_qos_sysfs_root: the role's interfaces.yml, run by ansible-playbook."""

from __future__ import annotations

import json

import pytest
from role_play import ROLES_DIR
from sysfs_tree import add_cx6dx_roce

LAG = ["enp27s0f0np0", "enp27s0f1np1"]


@pytest.fixture
def lag_host(tmp_path):
    """mlx5_bond_0 (RoCE LAG: its port's netdev is bond0 over both ConnectX ports) and a
    plain ConnectX port enp59s0f0np0."""
    root = tmp_path / "root"
    add_cx6dx_roce(root, "mlx5_bond_0", netdev="bond0")
    add_cx6dx_roce(root, "mlx5_2", pci="0000:3b:00.0", netdev="enp59s0f0np0")
    bonding = (root / "sys/class/net/bond0").resolve() / "bonding"
    bonding.mkdir()
    (bonding / "slaves").write_text(" ".join(LAG) + "\n")
    return root


def interfaces(run_cli, tmp_path, root, wanted):
    playbook = tmp_path / "play.yml"
    playbook.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n"
        f"        name: {ROLES_DIR / 'roce_host_qos'}\n"
        "        tasks_from: interfaces.yml\n"
        "    - ansible.builtin.debug:\n        msg: '{{ __roce_host_qos_ifaces | to_json }}'\n"
    )
    extra = {"roce_host_qos_sysfs_root": str(root), "roce_host_qos_interfaces": wanted}
    proc = run_cli(
        "ansible-playbook", "-i", "localhost,", str(playbook), "-e", json.dumps(extra),
        env={"ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks = json.JSONDecoder().raw_decode(proc.stdout)[0]["plays"][0]["tasks"]
    return json.loads(tasks[-1]["hosts"]["localhost"]["msg"])


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ("auto", ["enp59s0f0np0", *LAG]),  # devices in name order: mlx5_2, mlx5_bond_0
        (["enp59s0f0np0", "bond0"], ["enp59s0f0np0", *LAG]),
        # A member listed beside its bond is configured once.
        (["bond0", "enp27s0f1np1"], LAG),
    ],
    ids=["auto", "listed", "member-twice"],
)
def test_a_bond_is_replaced_by_its_members(run_cli, tmp_path, lag_host, wanted, expected):
    assert interfaces(run_cli, tmp_path, lag_host, wanted) == expected


def test_without_the_tree_nothing_is_a_bond(run_cli, tmp_path):
    """The bond is read under roce_host_qos_sysfs_root, not the real /sys."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert interfaces(run_cli, tmp_path, empty, ["bond0"]) == ["bond0"]
