"""A host's rails rendered for systemd-networkd, netplan, NetworkManager, sysctl.d and
/etc/nccl.conf (module_utils/rail_render.py), and compared with live `ip -j` output."""

from __future__ import annotations

import configparser
import json

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.filter.rail import (
    rail_drift,
    rail_files,
    rail_resolve,
)
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from ansible_collections.rdma.fabric.plugins.module_utils.rails import (
    bind_pkeys,
    fabric_rails,
    host_rails,
    normalize_rails,
)

PARTITIONS = [{"name": "Default", "pkey": 0x7FFF}, {"name": "storage", "pkey": "0x0010"}]
RAILS = [
    {"name": "rail0", "device": "mlx5_0", "subnet": "10.0.0.0/24", "subnet6": "fd00:0:0:10::/64"},
    {
        "name": "rail1",
        "device": "mlx5_1",
        "subnet": "10.0.1.0/24",
        "mtu": 4200,
        "gateway": "10.0.1.254",
    },
    {
        "name": "l3r2",
        "device": "mlx5_2",
        "subnet": "10.2.0.0/16",
        "prefix_length": 31,
        "gateway": "peer",
    },
    {
        "name": "ib0",
        "device": "mlx4_0",
        "link_layer": "infiniband",
        "ipoib_mode": "connected",
        "subnet": "10.9.0.0/24",
        "pkeys": [{"partition": "storage", "subnet": "10.19.0.0/24", "mtu": 4092}],
    },
]


def _port(name, link_layer, netdev, pci):
    return {
        "name": name,
        "pci_address": pci,
        "ports": [{"port": 1, "link_layer": link_layer, "netdev": netdev}],
    }


DEVICES = [
    _port("mlx5_0", "Ethernet", "ens17np0", "0000:17:00.0"),
    _port("mlx5_1", "Ethernet", "ens18np0", "0000:18:00.0"),
    _port("mlx5_2", "Ethernet", "ens19np0", "0000:19:00.0"),
    _port("mlx4_0", "InfiniBand", "ibp20s0", "0000:20:00.0"),
]


@pytest.fixture(name="links")
def fixture_links():
    return rail_render.rail_links(_entries())


def _entries(index=7):
    rails, errors = normalize_rails(RAILS, policy_mtu=9000)
    assert errors == []
    rails, errors = bind_pkeys(rails, PARTITIONS)
    assert errors == []
    entries, errors = host_rails(rails, "gpu07", {"rdma_rail_host_index": index})
    assert errors == []
    return rail_resolve(entries, DEVICES, "gpu07", ["eth0"])


def test_links_carry_addresses_tables_and_rules(links):
    by = {link["netdev"]: link for link in links}
    assert [link["netdev"] for link in links] == [
        "ens17np0",
        "ens18np0",
        "ens19np0",
        "ibp20s0",
        "ibp20s0.8010",
    ]
    r0 = by["ens17np0"]
    assert r0["addresses"] == ["10.0.0.7/24", "fd00:0:0:10::7/64"]
    assert {"from": "10.0.0.7", "table": 100, "priority": 100} in r0["rules"]
    assert {"from": "fd00:0:0:10::7", "table": 100, "priority": 100} in r0["rules"]
    assert by["ens18np0"]["mtu"] == 4200
    assert {"to": "0.0.0.0/0", "via": "10.0.1.254", "table": 101} in by["ens18np0"]["routes"]
    # L3 rail: host 7 owns the 7th /31 (10.2.0.14/31), the leaf the even end; the rail's
    # subnet is reached via the leaf in the rail's table and in main.
    l3 = by["ens19np0"]
    assert l3["addresses"] == ["10.2.0.15/31"]
    assert {"to": "10.2.0.0/16", "via": "10.2.0.14", "table": 102} in l3["routes"]
    assert {"to": "10.2.0.0/16", "via": "10.2.0.14", "table": None} in l3["routes"]
    ib, child = by["ibp20s0"], by["ibp20s0.8010"]
    assert (ib["kind"], ib["mode"], ib["mtu"], ib["children"]) == (
        "ipoib",
        "connected",
        65520,
        ["ibp20s0.8010"],
    )
    assert (child["kind"], child["pkey"], child["parent"], child["mtu"]) == (
        "ipoib_child",
        "0x8010",
        "ibp20s0",
        4092,
    )
    assert child["addresses"] == ["10.19.0.7/24"]
    assert child["rules"] == [{"from": "10.19.0.7", "table": 103, "priority": 103}]


def _ini(text):
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return parser


def test_networkd_files(links):
    files = rail_render.networkd_files(links)
    assert sorted(files) == [
        "40-rdma-rail-ib0.network",
        "40-rdma-rail-ib0.storage.netdev",
        "40-rdma-rail-ib0.storage.network",
        "40-rdma-rail-l3r2.network",
        "40-rdma-rail-rail0.network",
        "40-rdma-rail-rail1.network",
    ]
    rail1 = files["40-rdma-rail-rail1.network"]
    assert rail1.startswith(rail_render.MANAGED)
    assert "[Match]\nName=ens18np0\n" in rail1
    assert "MTUBytes=4200" in rail1 and "RequiredForOnline=no" in rail1
    assert "Address=10.0.1.7/24" in rail1
    assert "[Route]\nDestination=0.0.0.0/0\nGateway=10.0.1.254\nTable=101\n" in rail1
    assert "[RoutingPolicyRule]\nFrom=10.0.1.7\nTable=101\nPriority=101\n" in rail1
    assert _ini(rail1)["Match"]["Name"] == "ens18np0"
    ib = files["40-rdma-rail-ib0.network"]
    assert "IPoIB=ibp20s0.8010" in ib and "[IPoIB]\nMode=connected" in ib
    netdev = _ini(files["40-rdma-rail-ib0.storage.netdev"])
    assert dict(netdev["NetDev"]) == {"Name": "ibp20s0.8010", "Kind": "ipoib"}
    assert dict(netdev["IPoIB"]) == {"PartitionKey": "0x8010", "Mode": "connected"}


def test_no_file_matches_anything_but_a_rail_netdev(links):
    names = {link["netdev"] for link in links}
    matched = [
        _ini(text)["Match"]["Name"]
        for name, text in rail_render.networkd_files(links).items()
        if name.endswith(".network")
    ]
    # One .network per link (rendering nothing must fail here), each matching its netdev.
    assert sorted(matched) == sorted(names), (matched, names)


def test_netplan_config_and_its_limits(links):
    ethernet = [link for link in links if link["kind"] != "ipoib_child"]
    doc = rail_render.netplan_config(ethernet)["network"]
    # The renderer per rail, none global (a global one reaches every other file's links).
    assert doc["version"] == 2 and "renderer" not in doc
    assert {e["renderer"] for e in doc["ethernets"].values()} == {"networkd"}
    rail1 = doc["ethernets"]["ens18np0"]
    assert rail1["mtu"] == 4200 and rail1["addresses"] == ["10.0.1.7/24"]
    assert {"to": "default", "via": "10.0.1.254", "table": 101} in rail1["routes"]
    assert rail1["routing-policy"] == [{"from": "10.0.1.7", "table": 101, "priority": 101}]
    assert doc["ethernets"]["ibp20s0"]["infiniband-mode"] == "connected"
    with pytest.raises(AnsibleFilterError, match="netplan has no IPoIB P_Key child"):
        rail_files(links, "netplan")
    files = rail_files(ethernet, "netplan")
    ((path, spec),) = files.items()
    assert path == "/etc/netplan/60-rdma-rails.yaml" and spec["mode"] == "0600"
    assert yaml.safe_load(spec["content"]) == rail_render.netplan_config(ethernet)


def test_networkmanager_keyfiles(links):
    files = rail_files(links, "networkmanager")
    base = "/etc/NetworkManager/system-connections/"
    rail1 = _ini(files[base + "rdma-rail1.nmconnection"]["content"])
    assert files[base + "rdma-rail1.nmconnection"]["mode"] == "0600"
    assert dict(rail1["connection"])["interface-name"] == "ens18np0"
    assert rail1["ethernet"]["mtu"] == "4200"
    ipv4 = rail1["ipv4"]
    assert (ipv4["method"], ipv4["address1"], ipv4["never-default"]) == (
        "manual",
        "10.0.1.7/24",
        "true",
    )
    routes = {ipv4[k]: ipv4.get(k + "_options") for k in ipv4 if k[5:].isdigit()}
    assert routes["0.0.0.0/0,10.0.1.254"] == "table=101"
    assert ipv4["routing-rule1"] == "priority 101 from 10.0.1.7 table 101"
    child = _ini(files[base + "rdma-ib0-storage.nmconnection"]["content"])
    assert dict(child["infiniband"]) == {
        "mtu": "4092",
        "transport-mode": "connected",
        "parent": "ibp20s0",
        "p-key": "0x8010",
    }
    rail0 = _ini(files[base + "rdma-rail0.nmconnection"]["content"])
    assert rail0["ipv6"]["address1"] == "fd00:0:0:10::7/64"


def test_sysctl_conf_per_rail_netdev(links):
    text = rail_render.sysctl_conf(links)
    assert "net.ipv4.conf.ens17np0.arp_ignore = 1" in text
    assert "net.ipv4.conf.ens17np0.arp_announce = 2" in text
    assert "net.ipv4.conf.ens17np0.rp_filter = 2" in text
    # A dotted netdev name needs sysctl.d's slash form.
    assert "net/ipv4/conf/ibp20s0.8010/rp_filter = 2" in text
    assert "eth0" not in text


def test_nccl_conf_in_rail_order():
    text = rail_render.nccl_conf(_entries(), 106, "eth0", {"NCCL_IB_GID_INDEX": 3})
    lines = text.splitlines()
    assert lines[0].startswith("#")
    # NCCL_SOCKET_IFNAME: a bare name is a prefix (eno1 also matches eno10); "=" is exact.
    # The extra GID index wins over the computed setting.
    assert lines[1:] == [
        "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx4_0:1",
        "NCCL_IB_TC=106",
        "NCCL_SOCKET_IFNAME==eth0",
        "NCCL_IB_GID_INDEX=3",
    ]
    assert "NCCL_SOCKET_IFNAME=^docker" in rail_render.nccl_conf(_entries(), 106, "^docker")


def _gids(address, index):
    # rdma_sysfs.read_gids' shape: a RoCE port's GID table (link-local v1/v2 at 0/1).
    return [
        {"index": 0, "type": "IB/RoCE v1", "ipv4": None},
        {"index": 1, "type": "RoCE v2", "ipv4": None},
        {"index": index - 1, "type": "IB/RoCE v1", "ipv4": address},
        {"index": index, "type": "RoCE v2", "ipv4": address},
    ]


def _devices_with_gids(entries, indexes):
    return [
        {"name": e["device"], "ports": [{"port": 1, "gids": _gids(e["address"], i)}]}
        for e, i in zip(entries, indexes, strict=True)
    ]


def test_nccl_gid_index_from_the_roce_v2_gid_of_each_rail_address():
    entries = [e for e in _entries() if e["link_layer"] == "ethernet"]
    index, note = rail_render.nccl_gid_index(entries, _devices_with_gids(entries, [3, 3, 3]))
    assert (index, note) == (3, None)
    text = rail_render.nccl_conf(entries, 106, "eth0", gid_index=index)
    assert "NCCL_IB_GID_INDEX=3" in text.splitlines()
    # Rails that disagree (or no GID yet): nothing is written for the GID, and the run
    # warns. NCCL_IB_ROCE_VERSION_NUM=2 would be a no-op (review finding 3): NCCL 2.20.5
    # has no such variable and NCCL_IB_GID_INDEX defaults to 0 (net_ib.cc: NCCL_PARAM
    # (IbGidIndex, "IB_GID_INDEX", 0)); 2.21.5 defaults both to auto (-1) and 2.
    index, note = rail_render.nccl_gid_index(entries, _devices_with_gids(entries, [3, 5, 3]))
    assert index is None and "rail1: 5" in note
    text = rail_render.nccl_conf(entries, 106, "eth0", gid_index=None)
    assert "NCCL_IB_ROCE_VERSION_NUM" not in text
    assert "NCCL_IB_GID_INDEX" not in text


def test_differing_gid_indexes_are_warned_naming_host_rails_and_variable():
    entries = [e for e in _entries() if e["link_layer"] == "ethernet"]
    devices = _devices_with_gids(entries, [3, 5, 3])
    warning = rail_render.nccl_gid_warning(entries, devices, "gpu07")
    assert warning.startswith("rdma_rails: gpu07: ")
    assert "rail0: 3, rail1: 5, l3r2: 3" in warning
    assert "NCCL_IB_GID_INDEX" in warning and "rdma_rails_nccl_extra" in warning
    assert "2.21" in warning and "index 0" in warning
    assert rail_render.nccl_gid_warning(entries, _devices_with_gids(entries, [3, 3, 3])) is None
    # An index pinned by the operator is theirs: no warning.
    assert rail_render.nccl_gid_warning(entries, devices, "gpu07", {"NCCL_IB_GID_INDEX": 3}) is None
    # No RoCE rail: nothing to say.
    ib_only = [e for e in _entries() if e["link_layer"] == "infiniband"]
    assert rail_render.nccl_gid_warning(ib_only, devices, "gpu07") is None


def test_nm_keyfiles_carry_ipv6_routes(links):
    files = rail_render.nm_keyfiles(links)
    text = files["rdma-rail0.nmconnection"]
    ipv6 = text.split("[ipv6]")[1]
    assert "route1=fd00:0:0:10::/64" in ipv6
    assert "route1_options=table=100" in ipv6
    ib_only = [e for e in _entries() if e["link_layer"] == "infiniband"]
    assert "NCCL_IB_TC" not in rail_render.nccl_conf(ib_only, 106, None)


def _ip_addr(mtu=9000, local="10.0.0.7", prefix=24):
    return [
        {"ifname": "eth0", "mtu": 1500, "addr_info": [{"family": "inet", "local": "172.17.0.2"}]},
        {
            "ifname": "ens17np0",
            "mtu": mtu,
            "addr_info": [{"family": "inet", "local": local, "prefixlen": prefix}],
        },
    ]


def _probe(addr, rules, sysctl):
    return "\n".join([json.dumps(addr), "", json.dumps(rules), "", "[]", "", sysctl])


GOOD_SYSCTL = "\n".join(f"/proc/sys/net/ipv4/conf/ens17np0/{k}:{v}" for k, v in rail_render.SYSCTLS)


def _rail0_links():
    rails, _ = normalize_rails(RAILS[:1], policy_mtu=9000)
    entries, _ = host_rails(rails, "gpu07", {"rdma_rail_host_index": 7})
    links = rail_render.rail_links(rail_resolve(entries, DEVICES, "gpu07"))
    links[0]["addresses"] = links[0]["addresses"][:1]
    links[0]["rules"] = links[0]["rules"][:1]
    return links


def test_live_drift_none_when_in_place():
    rules = [{"priority": 100, "src": "10.0.0.7", "table": "100"}]
    assert rail_drift(_rail0_links(), _probe(_ip_addr(), rules, GOOD_SYSCTL)) == {}


def test_live_drift_names_what_differs():
    probe = _probe(_ip_addr(mtu=1500, local="10.0.0.8"), [], GOOD_SYSCTL.replace(":2", ":0", 1))
    drift = rail_drift(_rail0_links(), probe)
    assert drift == {
        "ens17np0": [
            "mtu 1500 != 9000",
            "address 10.0.0.7/24 missing",
            "extra address 10.0.0.8/24",
            "rule from 10.0.0.7 table 100 missing",
            "arp_announce 0 != 2",
        ]
    }
    assert rail_drift(_rail0_links(), _probe([], [], "")) == {"ens17np0": ["missing"]}


def test_resolve_refuses_the_management_interface():
    rails, _ = normalize_rails([{"name": "r0", "netdev": "ens17np0", "subnet": "10.0.0.0/24"}])
    entries, _ = host_rails(rails, "gpu07", {"rdma_rail_host_index": 7})
    with pytest.raises(
        AnsibleFilterError, match="gpu07: rail r0 is on netdev ens17np0, the management"
    ):
        rail_resolve(entries, DEVICES, "gpu07", ["ens17np0"])
    with pytest.raises(
        AnsibleFilterError, match="gpu07: rail r0: no RDMA device with netdev ens17np0"
    ):
        rail_resolve(entries, [], "gpu07")


def test_pkey_addresses_are_planned_and_checked_across_hosts():
    plan, errors = fabric_rails(
        RAILS[3:],
        {
            "a": {"rdma_rail_host_index": 1},
            "b": {"rdma_rail_host_index": 2, "rdma_rail_addresses": {"ib0.storage": "10.19.0.1"}},
        },
    )
    assert plan is None
    assert errors == [
        "b and a have the same address 10.19.0.1 on rail ib0.storage "
        "(rdma_rail_host_index / rdma_rail_addresses)"
    ]
    _, errors = fabric_rails(
        RAILS[3:],
        {"a": {"rdma_rail_host_index": 1, "rdma_rail_addresses": {"ib0.storage": "10.1.0.1"}}},
    )
    assert any(
        "a: rdma_rail_addresses.ib0.storage must be a host address of 10.19.0.0/24" in e
        for e in errors
    )


def test_bind_pkeys_names_an_undefined_partition():
    rails, _ = normalize_rails(RAILS[3:])
    bound, errors = bind_pkeys(rails, [{"name": "Default", "pkey": 0x7FFF}])
    assert bound is None
    assert errors == [
        "rdma_rails[0] (ib0).pkeys[0].partition 'storage' is no partition of "
        "ib_subnet_manager_partitions (defined: Default)"
    ]
    bound, errors = bind_pkeys(rails, PARTITIONS)
    assert bound[0]["pkeys"][0]["pkey"] == 0x8010 and errors == []


class _TaggedInt(int):
    """Stands for Ansible's tagged values (int subclasses) that reach the filters."""


def test_netplan_file_takes_ansible_values(links):
    ethernet = [dict(link, mtu=_TaggedInt(link["mtu"])) for link in links[:2]]
    (spec,) = rail_files(ethernet, "netplan").values()
    assert yaml.safe_load(spec["content"])["network"]["ethernets"]["ens18np0"]["mtu"] == 4200


def test_networkd_before_250_has_no_ipoib_keys_and_units_make_the_children(links):
    """systemd 249 (Ubuntu 22.04, DGX OS 6) ignores [IPoIB] and IPoIB=: the .netdev never
    made the child. Before 250 the role writes a oneshot unit per child instead (and one
    for a parent's non-default mode); from 250 on nothing changes."""
    files = rail_render.networkd_files(links, systemd_version=249)
    assert "40-rdma-rail-ib0.storage.netdev" not in files
    assert "40-rdma-rail-ib0.storage.network" in files  # networkd configures the child
    ib = files["40-rdma-rail-ib0.network"]
    assert "IPoIB" not in ib, ib
    assert rail_render.networkd_files(links, systemd_version=250) == rail_render.networkd_files(
        links
    )
    assert rail_render.pkey_units(links, 250) == {} and rail_render.pkey_units(links) == {}
    units = rail_render.pkey_units(links, 249)
    assert sorted(units) == ["rdma-rails-ibp20s0.8010.service", "rdma-rails-ibp20s0.service"]
    child = _ini(units["rdma-rails-ibp20s0.8010.service"].replace("%", "%%"))
    assert child["Unit"]["BindsTo"] == "sys-subsystem-net-devices-ibp20s0.device"
    assert child["Install"]["WantedBy"] == "sys-subsystem-net-devices-ibp20s0.device"
    assert child["Service"]["Type"] == "oneshot" and child["Service"]["RemainAfterExit"] == "yes"
    assert child["Service"]["ExecStart"] == (
        "/bin/sh -c 'ip link show dev ibp20s0.8010 >/dev/null 2>&1 || "
        "ip link add link ibp20s0 name ibp20s0.8010 type ipoib pkey 0x8010 mode connected'"
    )
    assert child["Service"]["ExecStop"] == "-/bin/sh -c 'ip link delete dev ibp20s0.8010'"
    parent = _ini(units["rdma-rails-ibp20s0.service"])
    assert (
        parent["Service"]["ExecStart"]
        == "/bin/sh -c 'echo connected > /sys/class/net/ibp20s0/mode'"
    )
    assert "ExecStop" not in parent["Service"]


def test_a_datagram_parent_needs_no_mode_unit_and_device_names_are_escaped(links):
    datagram = [dict(link, mode="datagram") for link in links]
    assert sorted(rail_render.pkey_units(datagram, 249)) == ["rdma-rails-ibp20s0.8010.service"]
    assert rail_render._device_unit("ib-rail0") == "sys-subsystem-net-devices-ib\\x2drail0.device"


def test_rail_files_reads_systemctls_version_and_puts_units_in_the_system_dir(links):
    ubuntu_2204 = "systemd 249 (249.11-0ubuntu3.12)\n+PAM +AUDIT +SELINUX +APPARMOR +IMA\n"
    files = rail_files(links, "networkd", ubuntu_2204)
    units = sorted(path for path in files if path.startswith("/etc/systemd/system/"))
    assert units == [
        "/etc/systemd/system/rdma-rails-ibp20s0.8010.service",
        "/etc/systemd/system/rdma-rails-ibp20s0.service",
    ]
    assert files[units[0]]["mode"] == "0644"
    assert "/etc/systemd/network/40-rdma-rail-ib0.storage.netdev" not in files
    debian_12 = "systemd 252 (252.30-1~deb12u2)\n+PAM\n"
    assert rail_files(links, "networkd", debian_12) == rail_files(links, "networkd")
    assert "/etc/systemd/network/40-rdma-rail-ib0.storage.netdev" in rail_files(
        links, "networkd", debian_12
    )
