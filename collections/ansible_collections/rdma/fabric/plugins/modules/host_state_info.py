#!/usr/bin/python
# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: host_state_info
short_description: Read which of the named packages are installed and the named units' states
description:
  - One read of what a role is about to install, enable or start, so that the package
    manager and systemd are called only when something is missing, disabled or stopped
    (a second run of a role then costs one light module run instead of one each).
  - Packages through C(dpkg-query) (Debian, Ubuntu) or C(rpm -q) (EL), whichever the
    host has; units through one C(systemctl show); commands on the PATH (with the sbin
    directories) and paths or shell-style globs of the filesystem.
  - Reads only; never changes the host. Runs in check mode.
version_added: 0.4.0
author: rdma-fabric contributors (@rdma-fabric)
options:
  packages:
    description: Package names to look up (exact names, no versions or globs).
    type: list
    elements: str
    default: []
  units:
    description: systemd unit names to read the load, active and unit-file states of.
    type: list
    elements: str
    default: []
  commands:
    description: Command names to look for, as C(command -v) would (the sbin directories too).
    type: list
    elements: str
    default: []
  paths:
    description: Absolute paths, or shell-style globs, to list the existing matches of.
    type: list
    elements: path
    default: []
"""

EXAMPLES = r"""
- name: Read what the role would install and start
  rdma.fabric.host_state_info:
    packages: [dbus]
    units: [dbus.service]
  register: state

- name: Install D-Bus only when it is missing
  ansible.builtin.package:
    name: "{{ state.missing }}"
  when: state.missing | length > 0
"""

RETURN = r"""
packages:
  description: Each package asked, with its installed version, or null when it is not installed.
  returned: always
  type: dict
  sample: {"dbus": "1.14.10-1~deb12u1", "lldpd": null}
missing:
  description: The packages asked that are not installed, in the order asked.
  returned: always
  type: list
  elements: str
  sample: ["lldpd"]
units:
  description: >-
    Each unit asked: C(load) (loaded, not-found...), C(active) (active, inactive,
    failed...), C(enabled) (enabled, disabled, static...). Where systemd does not run
    (an image build, a chroot) they come from the unit files and C(active) is null; all
    are null when systemctl cannot be read at all.
  returned: always
  type: dict
  sample: {"dbus.service": {"load": "loaded", "active": "active", "enabled": "static"}}
commands:
  description: Each command asked, with its full path, or null when it is not found.
  returned: always
  type: dict
  sample: {"ofed_info": null}
paths:
  description: Each path or glob asked, with the existing paths it matches, sorted (none, empty).
  returned: always
  type: dict
  sample: {"/etc/systemd/system/rdma-rails-*.service": ["/etc/systemd/system/rdma-rails-a.service"]}
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils import host_state

DPKG_STATUS = "/var/lib/dpkg/status"


def read_packages(module, names):
    if not names:
        return {}
    dpkg = module.get_bin_path("dpkg-query")
    # dpkg's database says the host is a dpkg one (an EL host can have dpkg-query from
    # EPEL, with nothing in it).
    if dpkg and os.path.exists(DPKG_STATUS):
        # rc 1: some name is not known to dpkg (not installed): its line is missing.
        _rc, out, _err = module.run_command([dpkg, "-W", "-f", host_state.DPKG_FORMAT, *names])
        return host_state.dpkg_versions(out, names)
    rpm = module.get_bin_path("rpm")
    if rpm:
        # rc: the number of names not installed.
        _rc, out, _err = module.run_command([rpm, "-q", "--qf", host_state.RPM_FORMAT, *names])
        return host_state.rpm_versions(out, names)
    module.fail_json(msg="host_state_info: neither dpkg-query nor rpm is on this host")


def read_units(module, names):
    if not names:
        return {}
    systemctl = module.get_bin_path("systemctl")
    if not systemctl:
        return host_state.unit_states("", names)
    rc, out, _err = module.run_command(
        [systemctl, "show", "-p", host_state.UNIT_PROPERTIES, "--", *names]
    )
    if rc == 0:
        return host_state.unit_states(out, names)
    # No running systemd (an image build, a chroot): the unit files still say which
    # units exist and are enabled.
    rc, out, _err = module.run_command(
        [systemctl, "list-unit-files", "--no-legend", "--plain", "--", *names]
    )
    return host_state.unit_files(out, names) if rc == 0 else host_state.unit_states("", names)


def main():
    module = AnsibleModule(
        argument_spec={
            "packages": {"type": "list", "elements": "str", "default": []},
            "units": {"type": "list", "elements": "str", "default": []},
            "commands": {"type": "list", "elements": "str", "default": []},
            "paths": {"type": "list", "elements": "path", "default": []},
        },
        supports_check_mode=True,
    )
    packages = read_packages(module, module.params["packages"])
    module.exit_json(
        changed=False,
        packages=packages,
        missing=[name for name, version in packages.items() if version is None],
        units=read_units(module, module.params["units"]),
        commands={name: module.get_bin_path(name) for name in module.params["commands"]},
        paths={pattern: sorted(glob.glob(pattern)) for pattern in module.params["paths"]},
    )


if __name__ == "__main__":
    main()
