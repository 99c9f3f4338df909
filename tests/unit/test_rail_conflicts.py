"""Existing network configuration that would also configure a rail netdev (issue 23):
fixtures in the shape each tool documents (systemd.network(5), netplan(5),
nm-settings-keyfile(5), cloud-init's network config v1/v2, interfaces(5))."""

from __future__ import annotations

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
