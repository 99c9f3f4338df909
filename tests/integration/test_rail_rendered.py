"""rdma_rails_state rendered: every host's files written under a
directory without contacting the hosts, like roce_switch_qos's rendered mode."""

from __future__ import annotations

import json

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from conftest import ROLES_DIR

RAILS = [
    {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24"},
    {"name": "rail1", "netdev": "ens18np0", "subnet": "10.0.1.0/24", "gateway": "10.0.1.254"},
]


def _plan():
    plan, errors = build_plan(
        RAILS, {"gpu01": {"rdma_rail_host_index": 1}, "gpu02": {"rdma_rail_host_index": 2}}
    )
    assert errors == []
    return plan


def test_files_of_one_host_without_the_host():
    from ansible_collections.rdma.fabric.plugins.filter.rail import rail_rendered

    files = rail_rendered(_plan()["gpu02"], "networkd", 106, "eno1", {}, True)
    network0 = files["/etc/systemd/network/40-rdma-rail-rail0.network"]
    assert "Name=NETDEV(mlx5_0:1)" in network0 and "Address=10.0.0.2/24" in network0
    assert "without contacting the host" in network0
    network1 = files["/etc/systemd/network/40-rdma-rail-rail1.network"]
    assert "Name=ens18np0" in network1 and "Gateway=10.0.1.254" in network1
    assert "From=10.0.1.2" in network1
    assert "net.ipv4.conf.ens18np0.rp_filter = 2" in files["/etc/sysctl.d/60-rdma-rails.conf"]
    assert "ManageForeignRoutes=no" in files["/etc/systemd/networkd.conf.d/60-rdma-rails.conf"]
    nccl = files["/etc/nccl.conf"]
    assert "NCCL_IB_HCA==mlx5_0:1,DEVICE(ens18np0):1" in nccl
    assert "NCCL_SOCKET_IFNAME==eno1" in nccl and "GID_INDEX" not in nccl


def test_netplan_and_nm_and_no_nccl():
    from ansible_collections.rdma.fabric.plugins.filter.rail import rail_rendered

    files = rail_rendered(_plan()["gpu01"], "netplan", 106, "eno1", {}, False)
    doc = yaml.safe_load(files["/etc/netplan/60-rdma-rails.yaml"])
    assert doc["network"]["ethernets"]["ens18np0"]["addresses"] == ["10.0.1.1/24"]
    assert "/etc/nccl.conf" not in files
    assert "/etc/systemd/networkd.conf.d/60-rdma-rails.conf" in files
    nm = rail_rendered(_plan()["gpu01"], "networkmanager", 106, "eno1", {}, False)
    assert "/etc/NetworkManager/system-connections/rdma-rail0.nmconnection" in nm
    assert "/etc/systemd/networkd.conf.d/60-rdma-rails.conf" not in nm


IB_RAILS = [
    {
        "name": "ib0",
        "netdev": "ibp20s0",
        "link_layer": "infiniband",
        "subnet": "10.9.0.0/24",
        "pkeys": [{"partition": "storage", "subnet": "10.19.0.0/24"}],
    }
]
PARTITIONS = [{"name": "Default", "pkey": 0x7FFF}, {"name": "storage", "pkey": "0x0010"}]


def _ib_entries():
    plan, errors = build_plan(
        IB_RAILS, {"gpu01": {"rdma_rail_host_index": 1}}, partitions=PARTITIONS
    )
    assert errors == []
    return plan["gpu01"]


def test_the_hosts_systemd_version_chooses_how_the_pkey_children_are_rendered():
    """Applied mode reads systemctl --version on the host; rendered mode contacts no host,
    so the version is a variable: 249 (Ubuntu 22.04, DGX OS 6) gets the oneshot unit that
    makes the child and no .netdev networkd 249 would ignore, unset the 250 form."""
    from ansible_collections.rdma.fabric.plugins.filter.rail import rail_rendered

    child = "ibp20s0.8010"
    unit = f"/etc/systemd/system/rdma-rails-{child}.service"
    netdev = "/etc/systemd/network/40-rdma-rail-ib0.storage.netdev"
    conf = "/etc/systemd/networkd.conf.d/60-rdma-rails.conf"
    old = rail_rendered(_ib_entries(), "networkd", systemd=249)
    network = [text for path, text in old.items() if path.startswith("/etc/systemd/network/")]
    assert netdev not in old and network and "[IPoIB]" not in "".join(network)
    assert "type ipoib pkey 0x8010" in old[unit] and f"name {child} " in old[unit]
    assert "ManageForeignRoutingPolicyRules=no" in old[conf]
    assert "ManageForeignNextHops" not in old[conf]  # networkd 256's key
    new = rail_rendered(_ib_entries(), "networkd")
    assert netdev in new and "PartitionKey=0x8010" in new[netdev]
    assert not [path for path in new if path.startswith("/etc/systemd/system/")]
    assert "ManageForeignNextHops=no" in new[conf]
    v250 = rail_rendered(_ib_entries(), "networkd", systemd=250)
    assert "ManageForeignNextHops" not in v250[conf]
    assert {p: t for p, t in v250.items() if p != conf} == {
        p: t for p, t in new.items() if p != conf
    }


@pytest.mark.parametrize("given", [249, "249", " 249 "])
def test_the_version_is_read_as_given_on_the_command_line_or_an_ini_inventory(given):
    """-e rdma_rails_systemd_version=249 and INI group vars give a string, which the
    role's argument check accepts as an int without converting it."""
    from ansible_collections.rdma.fabric.plugins.filter.rail import rail_rendered

    files = rail_rendered(_ib_entries(), "networkd", systemd=given)
    assert "/etc/systemd/system/rdma-rails-ibp20s0.8010.service" in files


@pytest.mark.parametrize("bad", [True, 0, -1, "249.11", "abc", 1000])
def test_a_value_that_is_no_version_is_refused_naming_the_variable(bad):
    from ansible.errors import AnsibleFilterError
    from ansible_collections.rdma.fabric.plugins.filter.rail import rail_rendered

    with pytest.raises(AnsibleFilterError, match="rdma_rails_systemd_version"):
        rail_rendered(_ib_entries(), "networkd", systemd=bad)


RENDER_PLAY = """
- name: rdma_rails rendered, hosts that do not exist
  hosts: all
  gather_facts: false
  roles:
    - role: rdma_rails
"""


# The role's own path (its argument spec, rail_plan, the renderers) with a shared rail's
# IPv6 gateway beside the IPv4 one.
ROLE_RAILS = [
    RAILS[0],
    dict(RAILS[1], subnet6="2001:db8:0:11::/64", gateway6="2001:db8:0:11::fe"),
]


def _render_role(tmp_path, run_cli, *args, **more_vars):
    """The role in rendered mode over two hosts that do not exist (args: more options of
    ansible-playbook)."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "hosts": {
                        # No such container: a connection attempt fails the run (and
                        # sends nothing over a network: docker's local socket only).
                        "gpu01": {
                            "ansible_host": "rf-no-such-gpu01",
                            "rdma_rail_host_index": 1,
                            "rdma_rails_systemd_version": 249,
                        },
                        "gpu02": {"ansible_host": "rf-no-such-gpu02", "rdma_rail_host_index": 2},
                    },
                    "vars": {
                        "rdma_rails": ROLE_RAILS,
                        "rdma_rails_state": "rendered",
                        "rdma_rails_backend": "networkd",
                        "rdma_rails_nccl": True,
                        "rdma_rails_render_dir": str(tmp_path / "out"),
                        "ansible_connection": "community.docker.docker",
                        **more_vars,
                    },
                }
            }
        )
    )
    play = tmp_path / "play.yml"
    play.write_text(RENDER_PLAY)
    return run_cli(
        "ansible-playbook",
        "-i",
        str(inventory),
        str(play),
        *args,
        env={"ANSIBLE_ROLES_PATH": str(ROLES_DIR)},
    )


@pytest.mark.parametrize("mtu", [100, 12000])
def test_a_policy_mtu_out_of_range_stops_the_role_at_the_plan(tmp_path, run_cli, mtu):
    """The role alone (no roce_host_qos) refuses rdma_roce_policy.mtu in its fabric-wide
    plan check, naming the variable and the hosts, before it renders or changes
    anything."""
    proc = _render_role(tmp_path, run_cli, rdma_roce_policy={"mtu": mtu})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    refusal = (
        f"rdma_roce_policy.mtu must be an MTU in bytes (1280-9216); got {mtu}; it is the "
        "default MTU of the ethernet rails (rdma_rails) of gpu01, gpu02"
    )
    assert refusal in out, out[-3000:]
    assert "TASK [rdma_rails : Render this host's files" not in out
    assert not (tmp_path / "out").exists()


def test_a_policy_mtu_that_is_no_integer_is_refused_before_the_plan(tmp_path, run_cli):
    proc = _render_role(tmp_path, run_cli, rdma_roce_policy={"mtu": "big"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    # The role's argument spec, per host: the key and the variable it is found in.
    assert "argument 'mtu' is of type str found in 'rdma_roce_policy'" in out, out[-3000:]
    assert "fatal: [gpu01]" in out and "fatal: [gpu02]" in out
    assert not (tmp_path / "out").exists()


def test_the_role_renders_every_host_without_connecting(tmp_path, run_cli):
    proc = _render_role(tmp_path, run_cli)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for host, address in (("gpu01", "10.0.0.1/24"), ("gpu02", "10.0.0.2/24")):
        text = (
            tmp_path / "out" / host / "etc/systemd/network/40-rdma-rail-rail0.network"
        ).read_text()
        assert f"Address={address}" in text
        assert (tmp_path / "out" / host / "etc/nccl.conf").exists()
    rail1 = (tmp_path / "out/gpu02/etc/systemd/network/40-rdma-rail-rail1.network").read_text()
    assert "Address=2001:db8:0:11::2/64" in rail1
    assert "[Route]\nDestination=::/0\nGateway=2001:db8:0:11::fe\nTable=101\n" in rail1
    assert "[Route]\nDestination=0.0.0.0/0\nGateway=10.0.1.254\nTable=101\n" in rail1
    # gpu01's systemd is 249 (its host_vars): its drop-in has the keys 249 knows.
    conf = "etc/systemd/networkd.conf.d/60-rdma-rails.conf"
    assert "ManageForeignNextHops" not in (tmp_path / "out" / "gpu01" / conf).read_text()
    assert "ManageForeignNextHops=no" in (tmp_path / "out" / "gpu02" / conf).read_text()
    assert "UNREACHABLE" not in out
    json.dumps(out)  # printable


def test_the_render_tag_still_reaches_the_rendering_tasks(tmp_path, run_cli):
    """The rendering tasks are included (not imported: an applied run skips them once
    per host); README's tag rdma_rails-render, with the plan's check, still writes every
    host's files."""
    proc = _render_role(tmp_path, run_cli, "--tags", "rdma_rails-validate,rdma_rails-render")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "TASK [rdma_rails : Write the files this host would get]" in out, out[-3000:]
    for host in ("gpu01", "gpu02"):
        assert (tmp_path / "out" / host / "etc/systemd/network/40-rdma-rail-rail0.network").exists()
    # Skipped as a whole under another tag: nothing rendered, no host contacted.
    other = tmp_path / "other"
    other.mkdir()
    proc = _render_role(other, run_cli, "--tags", "rdma_rails-validate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (other / "out").exists()


def test_no_gpu_hosts_group_is_one_ansible_warning(tmp_path, run_cli):
    """Without a gpu_hosts group /etc/nccl.conf is written nowhere: said as Ansible's own
    warning (stderr), once for the play, naming the variables and what is not written;
    a debug line among the ok lines was easy to miss."""
    proc = _render_role(tmp_path, run_cli, rdma_rails_nccl=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warning = (
        "[WARNING]: rdma_rails: no gpu_hosts group in the inventory, so /etc/nccl.conf "
        "(NCCL_IB_HCA, NCCL_IB_TC, NCCL_SOCKET_IFNAME, the RoCE GID) is not written on "
        "gpu01, gpu02; add the GPU servers to gpu_hosts or set rdma_rails_nccl: true."
    )
    assert " ".join(proc.stderr.split()).count(warning) == 1, proc.stderr
    assert "is not written on" not in proc.stdout  # no debug "msg" line besides
    assert not (tmp_path / "out/gpu01/etc/nccl.conf").exists()
