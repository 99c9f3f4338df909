# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for OpenSM's files. Their documentation is in the YAML files beside this one."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    expected_pkeys,
    guid_errors,
    normalize_partitions,
    parse_opensm_conf,
    partition_errors,
    partition_line,
    port_instance_errors,
    port_instances,
    restart_keys,
    service_layout,
)
from ansible_collections.rdma.fabric.plugins.module_utils.opensm_options import (
    fabric_warnings,
    input_files,
    option_errors,
    routing_engine_errors,
    unknown_options,
)


class FilterModule:
    def filters(self):
        return {
            "opensm_conf": parse_opensm_conf,
            "opensm_restart_keys": restart_keys,
            "opensm_partition_errors": partition_errors,
            "opensm_guid_errors": guid_errors,
            "opensm_partitions": normalize_partitions,
            "opensm_partition_line": partition_line,
            "opensm_expected_pkeys": expected_pkeys,
            "opensm_unknown_options": unknown_options,
            "opensm_option_errors": option_errors,
            "opensm_input_files": input_files,
            "opensm_routing_engine_errors": routing_engine_errors,
            "opensm_fabric_warnings": fabric_warnings,
            "opensm_service_layout": service_layout,
            "opensm_port_instance_errors": port_instance_errors,
            "opensm_port_instances": port_instances,
        }
