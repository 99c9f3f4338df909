"""Existing network configuration that would also configure a rail netdev:
fixtures in the shape each tool documents (systemd.network(5), netplan(5),
nm-settings-keyfile(5), cloud-init's network config v1/v2, interfaces(5))."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils.rail_conflicts import (
    conflict_errors,
    conflicts,
)

RAILS = ["ens17np0", "ens18np0"]
OWN = ["/etc/systemd/network/40-rdma-rail-*", "/etc/netplan/60-rdma-rails.yaml"]


def _found(files):
    return [(c["path"], c["netdev"]) for c in conflicts(files, RAILS, OWN)]


def test_a_netplan_catch_all_with_dhcp():
    files = {
        "/etc/netplan/50-cloud-init.yaml": (
            "network:\n  version: 2\n  ethernets:\n    all-en:\n"
            "      match: {name: 'en*'}\n      dhcp4: true\n"
        )
    }
    assert _found(files) == [
        ("/etc/netplan/50-cloud-init.yaml", "ens17np0"),
        ("/etc/netplan/50-cloud-init.yaml", "ens18np0"),
    ]


def test_netplan_by_interface_name_and_the_roles_own_file():
    files = {
        "/etc/netplan/01-mgmt.yaml": "network:\n  ethernets:\n    eno1: {dhcp4: true}\n",
        "/etc/netplan/90-old.yaml": (
            "network:\n  ethernets:\n    ens18np0:\n      addresses: [10.9.9.9/24]\n"
        ),
        "/etc/netplan/60-rdma-rails.yaml": "network:\n  ethernets:\n    ens17np0: {}\n",
    }
    assert _found(files) == [("/etc/netplan/90-old.yaml", "ens18np0")]


def test_networkd_files():
    files = {
        "/etc/systemd/network/20-wired.network": "[Match]\nName=en*\n[Network]\nDHCP=yes\n",
        "/etc/systemd/network/30-not.network": "[Match]\nName=!ens17np0\n[Network]\nDHCP=yes\n",
        "/etc/systemd/network/40-rdma-rail-rail0.network": "[Match]\nName=ens17np0\n",
        "/run/systemd/network/10-netplan-ens17np0.network": "[Match]\nName=ens17np0\n",
        "/etc/systemd/network/50-mgmt.network": "[Match]\nName=eno1\n",
        "/etc/systemd/network/10-rail.link": (
            "[Match]\nOriginalName=ens18*\n[Link]\nMTUBytes=1500\n"
        ),
    }
    assert _found(files) == [
        ("/etc/systemd/network/10-rail.link", "ens18np0"),
        ("/etc/systemd/network/20-wired.network", "ens17np0"),
        ("/etc/systemd/network/20-wired.network", "ens18np0"),
        ("/etc/systemd/network/30-not.network", "ens18np0"),
    ]


def test_a_network_file_matching_by_type_matches_every_rail():
    files = {"/etc/systemd/network/99-all.network": "[Match]\nType=ether\n[Network]\nDHCP=yes\n"}
    assert len(_found(files)) == 2


def test_networkmanager_cloud_init_and_ifupdown():
    files = {
        "/etc/NetworkManager/system-connections/Wired 1.nmconnection": (
            "[connection]\nid=Wired 1\ntype=ethernet\ninterface-name=ens18np0\n"
        ),
        "/etc/cloud/cloud.cfg.d/50-net.cfg": (
            "network:\n  version: 1\n  config:\n    - type: physical\n      name: ens17np0\n"
            "      subnets: [{type: dhcp}]\n"
        ),
        "/etc/network/interfaces": "auto lo\niface lo inet loopback\nallow-hotplug ens17np0\n"
        "iface ens17np0 inet dhcp\n",
    }
    assert _found(files) == [
        ("/etc/NetworkManager/system-connections/Wired 1.nmconnection", "ens18np0"),
        ("/etc/cloud/cloud.cfg.d/50-net.cfg", "ens17np0"),
        ("/etc/network/interfaces", "ens17np0"),
    ]


def test_errors_name_host_file_and_netdev():
    found = conflicts(
        {"/etc/systemd/network/20-wired.network": "[Match]\nName=ens17np0\n"}, RAILS, OWN
    )
    assert conflict_errors("gpu01", found) == [
        "gpu01: /etc/systemd/network/20-wired.network also configures rail netdev ens17np0: "
        "remove or narrow it (rdma_rails never overwrites it)"
    ]


def test_cloud_init_netplan_by_mac_names_only_that_netdev():
    files = {
        "/etc/netplan/50-cloud-init.yaml": (
            "network:\n  version: 2\n  ethernets:\n    eno1:\n"
            "      match: {macaddress: 'aa:bb:cc:00:00:01'}\n      set-name: eno1\n"
            "      dhcp4: true\n    nic2:\n      match: {macaddress: 'AA:BB:CC:00:00:18'}\n"
            "      dhcp4: true\n"
        ),
        "/etc/systemd/network/05-mac.network": "[Match]\nMACAddress=aa:bb:cc:00:00:17\n",
    }
    macs = {"ens17np0": "aa:bb:cc:00:00:17", "ens18np0": "aa:bb:cc:00:00:18"}
    found = [(c["path"], c["netdev"]) for c in conflicts(files, macs, OWN)]
    assert found == [
        ("/etc/netplan/50-cloud-init.yaml", "ens18np0"),
        ("/etc/systemd/network/05-mac.network", "ens17np0"),
    ]


def test_the_probe_text_splits_into_files():
    from ansible_collections.rdma.fabric.plugins.module_utils.rail_conflicts import split_probe

    text = "\x1e/etc/a.network\n[Match]\nName=x\n\x1e/etc/netplan/b.yaml\nnetwork: {}\n"
    assert split_probe(text) == {
        "/etc/a.network": "[Match]\nName=x\n",
        "/etc/netplan/b.yaml": "network: {}\n",
    }


# Review finding 6: what the finder missed, and a catch-all it refused although networkd
# never applies it. Netdevs with what the host tells about them: MAC, alternative names
# (`ip -j link`), kind, and the .network file that configures them (networkd applies
# the first matching .network in lexical order of file names, systemd.network(5)).
NETDEVS = {
    "ens17np0": {
        "mac": "aa:bb:cc:00:00:17",
        "altnames": ["enp23s0f0np0"],
        "kind": "ethernet",
        "network_file": "40-rdma-rail-rail0.network",
    },
    "ens18np0": {
        "mac": "aa:bb:cc:00:00:18",
        "altnames": [],
        "kind": "ethernet",
        "network_file": "40-rdma-rail-rail1.network",
    },
}


def _found6(files, netdevs=None):
    return [(c["path"], c["netdev"]) for c in conflicts(files, netdevs or NETDEVS, OWN)]


def test_several_name_lines_accumulate():
    files = {
        "/etc/systemd/network/20-two.network": "[Match]\nName=ens18np0\nName=eno1\n",
        "/etc/systemd/network/21-reset.network": "[Match]\nName=ens17np0\nName=\nName=eno2\n",
    }
    assert _found6(files) == [("/etc/systemd/network/20-two.network", "ens18np0")]


def test_a_network_file_matching_an_altname():
    files = {"/etc/systemd/network/20-alt.network": "[Match]\nName=enp23s0f0*\n"}
    assert _found6(files) == [("/etc/systemd/network/20-alt.network", "ens17np0")]


def test_a_catch_all_sorting_after_the_rail_file_is_never_applied():
    files = {
        "/etc/systemd/network/50-catch-all.network": "[Match]\nName=en*\n[Network]\nDHCP=yes\n",
        "/etc/systemd/network/39-before.network": "[Match]\nName=ens18*\n",
    }
    assert _found6(files) == [("/etc/systemd/network/39-before.network", "ens18np0")]


def test_a_dropin_of_the_roles_own_file_and_of_another_network():
    files = {
        "/etc/systemd/network/40-rdma-rail-rail0.network": "[Match]\nName=ens17np0\n",
        "/etc/systemd/network/40-rdma-rail-rail0.network.d/mtu.conf": "[Link]\nMTUBytes=1500\n",
        "/etc/systemd/network/10-mgmt.network": "[Match]\nName=eno1\n",
        "/etc/systemd/network/10-mgmt.network.d/more.conf": "[Match]\nName=ens18np0\n",
    }
    assert _found6(files) == [
        ("/etc/systemd/network/10-mgmt.network.d/more.conf", "ens18np0"),
        ("/etc/systemd/network/40-rdma-rail-rail0.network.d/mtu.conf", "ens17np0"),
    ]


def test_networkmanager_by_mac_by_match_glob_and_unbound():
    base = "/etc/NetworkManager/system-connections/"
    files = {
        base + "bymac.nmconnection": (
            "[connection]\nid=bymac\ntype=ethernet\n[ethernet]\nmac-address=AA:BB:CC:00:00:18\n"
        ),
        base + "glob.nmconnection": (
            "[connection]\nid=glob\ntype=ethernet\n[match]\ninterface-name=ens17*;!ens18*;\n"
        ),
        base + "unbound.nmconnection": "[connection]\nid=any\ntype=ethernet\n",
        base + "off.nmconnection": "[connection]\nid=off\ntype=ethernet\nautoconnect=false\n",
        base + "ib.nmconnection": "[connection]\nid=ib\ntype=infiniband\n",
        "/usr/lib/NetworkManager/system-connections/vendor.nmconnection": (
            "[connection]\nid=vendor\ntype=ethernet\ninterface-name=ens17np0\n"
        ),
    }
    assert _found6(files) == [
        (base + "bymac.nmconnection", "ens18np0"),
        (base + "glob.nmconnection", "ens17np0"),
        (base + "unbound.nmconnection", "ens17np0"),
        (base + "unbound.nmconnection", "ens18np0"),
        ("/usr/lib/NetworkManager/system-connections/vendor.nmconnection", "ens17np0"),
    ]


def test_netplan_match_and_set_name_are_both_judged():
    files = {
        # Renames whatever has this MAC to eno5: the rail itself (by MAC).
        "/etc/netplan/50-a.yaml": (
            "network:\n  ethernets:\n    x:\n      match: {macaddress: 'aa:bb:cc:00:00:17'}\n"
            "      set-name: eno5\n"
        ),
        # Renames another NIC to the rail's name.
        "/etc/netplan/50-b.yaml": (
            "network:\n  ethernets:\n    y:\n      match: {macaddress: '00:11:22:33:44:55'}\n"
            "      set-name: ens18np0\n"
        ),
        # A name glob and a MAC must both hold: no rail has this MAC.
        "/etc/netplan/50-c.yaml": (
            "network:\n  ethernets:\n    z:\n      match: {name: 'ens*', "
            "macaddress: '00:11:22:33:44:66'}\n"
        ),
    }
    assert _found6(files) == [
        ("/etc/netplan/50-a.yaml", "ens17np0"),
        ("/etc/netplan/50-b.yaml", "ens18np0"),
    ]


def test_cloud_init_v1_by_mac_and_bond_members():
    files = {
        "/etc/cloud/cloud.cfg.d/50-net.cfg": (
            "network:\n  version: 1\n  config:\n"
            "    - {type: physical, name: eth3, mac_address: 'aa:bb:cc:00:00:17'}\n"
            "    - {type: bond, name: bond0, bond_interfaces: [eth3, ens18np0]}\n"
        )
    }
    assert _found6(files) == [
        ("/etc/cloud/cloud.cfg.d/50-net.cfg", "ens17np0"),
        ("/etc/cloud/cloud.cfg.d/50-net.cfg", "ens18np0"),
    ]


def test_rhel_ifcfg_by_device_and_hwaddr():
    files = {
        "/etc/sysconfig/network-scripts/ifcfg-ens17np0": "DEVICE=ens17np0\nBOOTPROTO=dhcp\n",
        "/etc/sysconfig/network-scripts/ifcfg-nic2": 'HWADDR="AA:BB:CC:00:00:18"\nONBOOT=yes\n',
        "/etc/sysconfig/network-scripts/ifcfg-eno1": "DEVICE=eno1\n",
    }
    assert _found6(files) == [
        ("/etc/sysconfig/network-scripts/ifcfg-ens17np0", "ens17np0"),
        ("/etc/sysconfig/network-scripts/ifcfg-nic2", "ens18np0"),
    ]


def test_the_filter_reads_altnames_from_the_probe_and_the_backends_file_order():
    from ansible_collections.rdma.fabric.plugins.filter.rail_conflicts import rail_conflicts

    probe = (
        "\x1e/etc/systemd/network/20-alt.network\n[Match]\nName=enp23s0f0*\n"
        "\x1e/etc/systemd/network/50-all.network\n[Match]\nName=en*\n"
        '\x1e@ip-link\n[{"ifname": "ens17np0", "altnames": ["enp23s0f0np0"]}, '
        '{"ifname": "eno1"}]\n'
    )
    links = [
        {"netdev": "ens17np0", "rail": "rail0", "partition": None, "kind": "ethernet"},
        {"netdev": "ens18np0", "rail": "rail1", "partition": None, "kind": "ethernet"},
    ]
    found = rail_conflicts(probe, links, "gpu01", OWN, {}, False, "networkd")
    assert found == [{"path": "/etc/systemd/network/20-alt.network", "netdev": "ens17np0"}]
    # netplan's rails are 10-netplan-<netdev>.network: 20-alt sorts after them.
    assert rail_conflicts(probe, links, "gpu01", OWN, {}, False, "netplan") == []


# rdma_rails_take_over: a file that configures nothing but rail netdevs is moved aside
# (reported); one that also configures another interface (the management one, lo) is
# still refused, naming those: moving it would take their configuration away too.
IP_LINK = (
    '\x1e@ip-link\n[{"ifname": "lo", "address": "00:00:00:00:00:00"},'
    ' {"ifname": "eno1", "address": "aa:bb:cc:00:00:01"},'
    ' {"ifname": "ens17np0", "address": "aa:bb:cc:00:00:17"},'
    ' {"ifname": "ens18np0", "address": "aa:bb:cc:00:00:18"}]\n'
)
TAKE_LINKS = [
    {"netdev": "ens17np0", "rail": "rail0", "partition": None, "kind": "ethernet"},
    {"netdev": "ens18np0", "rail": "rail1", "partition": None, "kind": "ethernet"},
]


def test_take_over_moves_only_files_of_rail_netdevs_alone():
    from ansible_collections.rdma.fabric.plugins.filter.rail_conflicts import rail_conflicts

    probe = (
        "\x1e/etc/systemd/network/20-rail.network\n[Match]\nName=ens17np0 ens18np0\n"
        "\x1e/etc/netplan/50-cloud-init.yaml\nnetwork:\n  ethernets:\n    all:\n"
        "      match: {name: 'e*'}\n      dhcp4: true\n" + IP_LINK
    )
    with pytest.raises(AnsibleFilterError) as info:
        rail_conflicts(probe, TAKE_LINKS, "gpu01", OWN, {}, True, "networkd", True)
    text = str(info.value)
    assert "gpu01: /etc/netplan/50-cloud-init.yaml also configures eno1" in text
    assert "rdma_rails_take_over cannot move it aside" in text
    assert "20-rail.network" not in text
    found = rail_conflicts(probe, TAKE_LINKS, "gpu01", OWN, {}, False, "networkd", True)
    movable = sorted({c["path"] for c in found if not c["others"]})
    assert movable == ["/etc/systemd/network/20-rail.network"]


def test_take_over_needs_the_hosts_links():
    from ansible_collections.rdma.fabric.plugins.filter.rail_conflicts import rail_conflicts

    probe = "\x1e/etc/systemd/network/20-rail.network\n[Match]\nName=ens17np0\n"
    with pytest.raises(AnsibleFilterError, match="cannot tell which other interfaces"):
        rail_conflicts(probe, TAKE_LINKS, "gpu01", OWN, {}, True, "networkd", True)


def test_take_over_returns_the_movable_files_without_failing():
    from ansible_collections.rdma.fabric.plugins.filter.rail_conflicts import rail_conflicts

    probe = "\x1e/etc/systemd/network/20-rail.network\n[Match]\nName=ens17np0\n" + IP_LINK
    found = rail_conflicts(probe, TAKE_LINKS, "gpu01", OWN, {}, True, "networkd", True)
    assert found == [
        {"path": "/etc/systemd/network/20-rail.network", "netdev": "ens17np0", "others": []}
    ]


# NetworkManager 1.42 (Debian 12) with its defaults, found in Molecule
# (molecule/networkmanager): a device without a profile gets "Wired connection N" in
# /run, DHCP at autoconnect-priority -999, marked nm-generated. The role refused it as
# someone's configuration, so the networkmanager backend could never run on a host
# whose rails NetworkManager had seen first.
NM_AUTO = (
    "[connection]\nid=Wired connection 4\nuuid=0900ea48-b9b2-3c36-9021-e642a6fe0f53\n"
    "type=ethernet\nautoconnect-priority=-999\ninterface-name=ens17np0\n"
    "timestamp=1796488658\n\n[ethernet]\n\n[ipv4]\nmethod=auto\n\n[ipv6]\n"
    "addr-gen-mode=default\nmethod=auto\n\n[proxy]\n\n[.nmmeta]\nnm-generated=true\n"
)


def test_networkmanagers_automatic_profile_gives_way_to_the_nm_backend_only():
    from ansible_collections.rdma.fabric.plugins.filter.rail_conflicts import rail_conflicts

    auto = "/run/NetworkManager/system-connections/Wired connection 4.nmconnection"
    probe = f"\x1e{auto}\n{NM_AUTO}\n"
    links = [{"netdev": "ens17np0", "rail": "rail0", "partition": None, "kind": "ethernet"}]
    assert rail_conflicts(probe, links, "gpu01", OWN, {}, True, "networkmanager") == []
    # With networkd, NetworkManager still manages the rail (and runs DHCP on it).
    found = rail_conflicts(probe, links, "gpu01", OWN, {}, False, "networkd")
    assert found == [{"path": auto, "netdev": "ens17np0", "nm_generated": True}]
    with pytest.raises(
        AnsibleFilterError, match="NetworkManager's automatic profile for rail netdev ens17np0"
    ):
        rail_conflicts(probe, links, "gpu01", OWN, {}, True, "networkd")
    # The same keyfile written by someone in /etc, or without the mark, is configuration.
    for path, text in (
        ("/etc/NetworkManager/system-connections/Wired connection 4.nmconnection", NM_AUTO),
        (auto, NM_AUTO.replace("nm-generated=true", "")),
    ):
        found = rail_conflicts(
            f"\x1e{path}\n{text}\n", links, "gpu01", OWN, {}, False, "networkmanager"
        )
        assert found == [{"path": path, "netdev": "ens17np0"}], path
