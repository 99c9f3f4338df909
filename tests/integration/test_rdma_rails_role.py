"""The rdma_rails role's task order where it matters to the host's own networking.
Behaviour on a real systemd-networkd is proven by Molecule (molecule/default,
molecule/netplan: a foreign ip rule and routes survive converge and a networkd restart);
these tests pin the order and the drop-in's content without a container."""

from __future__ import annotations

import configparser
import json

import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.rail_render import networkd_conf
from conftest import ROLES_DIR
from role_tasks import flat

ROLE = ROLES_DIR / "rdma_rails"


def _tasks(name):
    return yaml.safe_load((ROLE / "tasks" / name).read_text())


def _role_vars():
    return yaml.safe_load((ROLE / "vars" / "main.yml").read_text())


def _index(tasks, module_key):
    return [i for i, t in enumerate(tasks) if module_key in t]


def test_networkd_dropin_keeps_foreign_rules_and_routes():
    # networkd.conf(5): both default to yes; =no keeps what other software wrote.
    role_vars = _role_vars()
    assert role_vars["__rdma_rails_networkd_conf"].startswith("/etc/systemd/networkd.conf.d/")
    assert role_vars["__rdma_rails_networkd_conf"].endswith(".conf")
    conf = configparser.ConfigParser()
    conf.optionxform = str
    conf.read_string(networkd_conf(252))
    assert dict(conf["Network"]) == {
        "ManageForeignRoutingPolicyRules": "no",
        "ManageForeignRoutes": "no",
    }


def test_dropin_is_written_before_networkd_is_enabled_or_started():
    # The service tasks as they run: enable and restart sit in conditional includes.
    tasks = flat(ROLE / "tasks", "networkd_service.yml")
    names = [t["name"] for t in tasks]
    dropin = next(
        i
        for i, t in enumerate(tasks)
        if "rdma.fabric.managed_files" in t
        and "{__rdma_rails_networkd_conf:" in t["rdma.fabric.managed_files"]["files"]
    )
    networkd = [
        i
        for i in _index(tasks, "ansible.builtin.systemd_service")
        if tasks[i]["ansible.builtin.systemd_service"]["name"] == "systemd-networkd.service"
    ]
    assert len(networkd) == 3, names  # enabled, started, restarted
    assert dropin < min(networkd), names
    # A running networkd reads networkd.conf only at start; whether it is restarted is
    # decided after the drop-in is written (test_rail_networkd.py).
    decide = next(i for i, t in enumerate(tasks) if "rail_networkd_action" in str(t))
    assert dropin < decide < max(networkd), names


def test_both_networkd_backends_run_the_service_tasks_before_any_reload():
    # The reload (networkctl reload) is in apply.yml, which main.yml runs after the
    # backend's tasks; netplan's generate must not precede the drop-in either.
    for backend in ("networkd.yml", "netplan.yml"):
        tasks = _tasks(backend)
        imports = [t.get("ansible.builtin.import_tasks") for t in tasks]
        assert "networkd_service.yml" in imports, backend
        service = imports.index("networkd_service.yml")
        for i, t in enumerate(tasks):
            if "ansible.builtin.command" in t or "ansible.builtin.shell" in t:
                assert i > service, (backend, t["name"])
    main = [t["name"] for t in _tasks("main.yml")]
    block = next(t for t in _tasks("main.yml") if "block" in t)
    order = [
        t.get("ansible.builtin.include_tasks") or t.get("ansible.builtin.import_tasks")
        for t in block["block"]
    ]
    assert order.index("{{ __rdma_rails_backend }}.yml") < order.index("apply.yml"), main


def test_the_dropin_directory_is_made_with_it():
    # networkd.conf.d does not exist on a fresh host: the drop-in's task makes it.
    tasks = _tasks("networkd_service.yml")
    [dropin] = [t for t in tasks if "rdma.fabric.managed_files" in t]
    assert dropin["rdma.fabric.managed_files"]["parents"] is True


def test_a_host_that_cannot_bind_stops_every_host_before_any_change():
    block = next(t for t in _tasks("main.yml") if "block" in t)["block"]
    bind = next(t for t in block if t.get("ansible.builtin.import_tasks") == "bind.yml")
    assert bind.get("any_errors_fatal") is True
    # bind.yml itself only reads (rdma_devices_info) and sets facts.
    for task in _tasks("bind.yml") + _tasks("conflicts.yml"):
        assert (
            set(task)
            & {
                "rdma.fabric.rdma_devices_info",
                "ansible.builtin.set_fact",
                "ansible.builtin.slurp",
                "ansible.builtin.import_tasks",
            }
            or task.get("changed_when") is False
        ), task
    imports = [t.get("ansible.builtin.import_tasks") for t in _tasks("bind.yml")]
    assert "conflicts.yml" in imports


def test_no_gpu_hosts_group_is_said_not_silently_skipped():
    warn = next(t for t in _tasks("main.yml") if "gpu_hosts" in t["name"])
    assert "groups['gpu_hosts'] is not defined" in warn["when"]
    # A warning of the play (run_once), not a debug line per host; the text and its
    # [WARNING] are proven through ansible-playbook in test_rail_rendered.py.
    assert warn["run_once"] is True
    assert "/etc/nccl.conf" in warn["rdma.fabric.warn"]["msg"]
    assert "rdma_rails_nccl" in warn["rdma.fabric.warn"]["msg"]
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    assert "gpu_hosts" in defaults["rdma_rails_nccl"]


def test_nccl_reads_the_gid_tables_after_the_rails_are_live():
    tasks = _tasks("nccl.yml")
    assert "rdma.fabric.rdma_devices_info" in tasks[0]
    assert "__rdma_rails_nccl_file" in tasks[1]["rdma.fabric.managed_files"]["files"]
    assert "__rdma_rails_gid_devices" in tasks[1]["vars"]["__rdma_rails_nccl_content"]
    # Read again only when this run touched the rails' links (their GIDs follow their
    # addresses); otherwise the devices read before any change (bind.yml) hold them.
    assert tasks[0]["when"] == "__rdma_rails_devices is not defined or __rdma_rails_links_touched"
    role_vars = yaml.safe_load((ROLE / "vars" / "main.yml").read_text())
    gid_devices = role_vars["__rdma_rails_gid_devices"]
    assert "__rdma_rails_devices_live" in gid_devices and "__rdma_rails_devices)" in gid_devices
    for touched in ("reloaded", "networkd_started", "networkd_restarted", "units_started"):
        assert f"__rdma_rails_{touched} " in role_vars["__rdma_rails_links_touched"]
    # No single GID index: said, naming the host (review finding 3), never a no-op line.
    warn = tasks[2]
    assert "rail_nccl_gid_warning" in str(warn["vars"])
    assert "inventory_hostname" in str(warn["vars"])
    assert "ROCE_VERSION_NUM" not in (ROLE / "tasks" / "nccl.yml").read_text()
    order = [t["name"] for t in _tasks("main.yml")]
    assert order.index("Make the rails real") < order.index("Write /etc/nccl.conf from the plan")


CONFLICT_PLAY = """
- name: The conflict check of rdma_rails, alone
  hosts: localhost
  connection: local
  gather_facts: false
  vars_files: ["{role}/vars/main.yml"]
  tasks:
    - name: Run it
      ansible.builtin.include_tasks: "{role}/tasks/conflicts.yml"
    - name: Move aside (rdma_rails_take_over)
      ansible.builtin.include_tasks: "{role}/tasks/takeover.yml"
"""


def _conflict_run(tmp_path, run_cli, files, take_over=False):
    root = tmp_path / "root"
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    root.mkdir(exist_ok=True)
    play = tmp_path / "play.yml"
    play.write_text(CONFLICT_PLAY.format(role=ROLE))
    extra = {
        "__rdma_rails_config_root": str(root),
        "__rdma_rails_links": [
            {"netdev": "ens17np0", "rail": "rail0", "partition": None, "kind": "ethernet"},
            {"netdev": "ens18np0", "rail": "rail1", "partition": None, "kind": "ethernet"},
        ],
        "__rdma_rails_backend": "networkd",
        "rdma_rails_take_over": take_over,
    }
    return run_cli("ansible-playbook", "-i", "localhost,", str(play), "-e", json.dumps(extra))


def test_conflicting_files_are_refused_naming_file_and_netdev(tmp_path, run_cli):
    proc = _conflict_run(
        tmp_path,
        run_cli,
        {
            # Ubuntu cloud image style catch-all (netplan(5) match.name glob).
            "/etc/netplan/50-cloud-init.yaml": (
                "network:\n  version: 2\n  ethernets:\n    all:\n"
                "      match: {name: 'ens*'}\n      dhcp4: true\n"
            ),
            "/etc/netplan/60-rdma-rails.yaml": "network:\n  ethernets:\n    ens17np0: {}\n",
            "/etc/systemd/network/40-rdma-rail-rail0.network": "[Match]\nName=ens17np0\n",
        },
    )
    assert proc.returncode != 0, proc.stdout
    out = proc.stdout + proc.stderr
    assert "localhost: /etc/netplan/50-cloud-init.yaml also configures rail netdev ens17np0" in out
    assert "remove or narrow it" in out
    assert "60-rdma-rails.yaml also" not in out and "40-rdma-rail-rail0" not in out


def test_no_conflict_passes(tmp_path, run_cli):
    proc = _conflict_run(
        tmp_path,
        run_cli,
        {
            "/etc/systemd/network/50-mgmt.network": "[Match]\nName=eno1\n[Network]\nDHCP=yes\n",
            # Sorts after 40-rdma-rail-*: networkd never applies it to a rail (finding 6).
            "/etc/systemd/network/90-catch-all.network": "[Match]\nName=en*\n[Network]\nDHCP=yes\n",
        },
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_new_kinds_of_files_are_read(tmp_path, run_cli):
    proc = _conflict_run(
        tmp_path,
        run_cli,
        {
            "/etc/sysconfig/network-scripts/ifcfg-ens17np0": "DEVICE=ens17np0\nBOOTPROTO=dhcp\n",
            "/usr/lib/NetworkManager/system-connections/v.nmconnection": (
                "[connection]\nid=v\ntype=ethernet\ninterface-name=ens18np0\n"
            ),
            "/etc/systemd/network/40-rdma-rail-rail0.network": "[Match]\nName=ens17np0\n",
            "/etc/systemd/network/40-rdma-rail-rail0.network.d/mtu.conf": "[Link]\nMTUBytes=1500\n",
        },
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    for path, netdev in (
        ("/etc/sysconfig/network-scripts/ifcfg-ens17np0", "ens17np0"),
        ("/usr/lib/NetworkManager/system-connections/v.nmconnection", "ens18np0"),
        ("/etc/systemd/network/40-rdma-rail-rail0.network.d/mtu.conf", "ens17np0"),
    ):
        assert f"localhost: {path} also configures rail netdev {netdev}" in out, out


def test_take_over_moves_a_rail_only_file_aside_and_names_it(tmp_path, run_cli):
    ifcfg = "/etc/sysconfig/network-scripts/ifcfg-ens17np0"
    proc = _conflict_run(tmp_path, run_cli, {ifcfg: "DEVICE=ens17np0\nBOOTPROTO=dhcp\n"}, True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    root = tmp_path / "root"
    assert not (root / ifcfg.lstrip("/")).exists()
    moved = root / "var/lib/rdma-fabric/rails-taken-over" / ifcfg.lstrip("/")
    assert moved.read_text() == "DEVICE=ens17np0\nBOOTPROTO=dhcp\n"
    assert f"rdma_rails_take_over moved {ifcfg} to /var/lib/rdma-fabric/rails-taken-over" in out


def test_take_over_still_refuses_a_file_that_also_configures_lo(tmp_path, run_cli):
    interfaces = "auto lo\niface lo inet loopback\niface ens17np0 inet dhcp\n"
    proc = _conflict_run(tmp_path, run_cli, {"/etc/network/interfaces": interfaces}, True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "localhost: /etc/network/interfaces also configures lo" in out
    assert (tmp_path / "root/etc/network/interfaces").read_text() == interfaces


def test_p_key_units_start_after_the_files_and_before_networkd():
    """Before systemd 250 the children exist (their units started) before networkd is
    started or reloaded, so it configures them from their .network files at once."""
    names = [
        t.get("ansible.builtin.import_tasks") or t.get("ansible.builtin.include_tasks")
        for t in _tasks("networkd.yml")
    ]
    assert (
        names.index("files.yml")
        < names.index("pkey_units.yml")
        < names.index("networkd_service.yml")
    ), names
    units = _tasks("pkey_units.yml")
    started = [
        t for t in units if t.get("ansible.builtin.systemd_service", {}).get("enabled") is True
    ]
    assert (
        len(started) == 1 and "restarted" in started[0]["ansible.builtin.systemd_service"]["state"]
    )
