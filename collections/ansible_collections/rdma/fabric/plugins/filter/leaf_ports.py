# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roce_switch_qos's filter: the leaf ports of L3 rails (module_utils/leaf_ports.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.module_utils.leaf_ports import for_switch


def leaf_ports(
    rails, hostvars, hosts, switch, switches, port_maps=None, groups=None, policy_mtu=None
):
    try:
        return for_switch(
            rails or [],
            hostvars,
            hosts or [],
            switch,
            switches or [],
            port_maps,
            groups,
            policy_mtu,
        )
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from exc


class FilterModule:
    def filters(self):
        return {"leaf_ports": leaf_ports}
