"""module_utils/host_state.py: the reads of host_state_info (which packages are
installed, which units run), on outputs captured from the real tools
(tests/fixtures/host_state: dpkg-query 1.21 and systemd 252 of Debian 12, rpm 4.18)."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.rdma.fabric.plugins.module_utils import host_state

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/host_state"


def captured(name: str) -> str:
    lines = (FIXTURES / name).read_text().splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("# "))


def test_dpkg_installed_and_unknown_names():
    got = host_state.dpkg_versions(
        captured("dpkg_query_bookworm.txt"), ["dbus", "iproute2", "rdma-core", "lldpd", "nosuchpkg"]
    )
    assert got == {
        "dbus": "1.14.10-1~deb12u1",
        "iproute2": "6.1.0-3",
        "rdma-core": "44.0-2",
        "lldpd": None,
        "nosuchpkg": None,
    }


def test_dpkg_removed_package_with_its_conffiles_is_not_installed():
    # "rc": removed, config-files kept: dpkg-query still prints it, with its version.
    assert host_state.dpkg_versions(captured("dpkg_query_removed.txt"), ["iproute2"]) == {
        "iproute2": None
    }


def test_rpm_installed_and_not_installed():
    got = host_state.rpm_versions(captured("rpm_q.txt"), ["rdma-core", "lldpd"])
    assert got == {"rdma-core": "44.0-2.el9", "lldpd": None}


def test_units_in_the_order_asked():
    names = [
        "dbus.service",
        "lldpad.service",
        "systemd-networkd.service",
        "rdma-fabric-roce-qos.service",
    ]
    got = host_state.unit_states(captured("systemctl_show_bookworm.txt"), names)
    assert got == {
        "dbus.service": {"load": "loaded", "active": "active", "enabled": "static"},
        "lldpad.service": {"load": "not-found", "active": "inactive", "enabled": None},
        "systemd-networkd.service": {"load": "loaded", "active": "inactive", "enabled": "disabled"},
        "rdma-fabric-roce-qos.service": {
            "load": "not-found",
            "active": "inactive",
            "enabled": None,
        },
    }


def test_units_unread_are_unknown_not_inactive():
    # No systemd (systemctl failed: the module passes no text): every state is None, so
    # the roles' tasks act as they would without the read (start, enable).
    assert host_state.unit_states("", ["dbus.service"]) == {
        "dbus.service": {"load": None, "active": None, "enabled": None}
    }


def test_unit_files_where_systemd_does_not_run():
    # An image build or chroot: `systemctl show` exits 1; list-unit-files still reads the
    # unit files (lldpad.service is not installed there: not listed).
    names = ["systemd-networkd.service", "lldpad.service", "dbus.service"]
    got = host_state.unit_files(captured("systemctl_list_unit_files_offline.txt"), names)
    assert got == {
        "systemd-networkd.service": {"load": "loaded", "active": None, "enabled": "disabled"},
        "lldpad.service": {"load": "not-found", "active": None, "enabled": None},
        "dbus.service": {"load": "loaded", "active": None, "enabled": "static"},
    }


def test_unit_files_booted_enabled_after_the_roles():
    got = host_state.unit_files(
        captured("systemctl_list_unit_files_booted.txt"),
        ["rdma-fabric-roce-qos.service", "systemd-networkd.service", "lldpad.service"],
    )
    assert got["rdma-fabric-roce-qos.service"]["enabled"] == "enabled"
    assert got["systemd-networkd.service"]["enabled"] == "enabled"
    assert got["lldpad.service"]["load"] == "not-found"


def test_rpm_keeps_the_first_of_a_name_installed_twice():
    # rpm -q prints one line per installed instance (kernel-core, installonly packages).
    text = "kernel-core\t5.14.0-427.el9\nkernel-core\t5.14.0-503.el9\n"
    assert host_state.rpm_versions(text, ["kernel-core"]) == {"kernel-core": "5.14.0-427.el9"}
