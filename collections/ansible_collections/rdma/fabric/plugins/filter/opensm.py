# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for OpenSM's files. Their documentation is in the YAML files beside this one."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.opensm import (
    expected_pkeys,
    normalize_partitions,
    parse_opensm_conf,
    partition_errors,
    partition_line,
    restart_keys,
)


class FilterModule:
    def filters(self):
        return {
            "opensm_conf": parse_opensm_conf,
            "opensm_restart_keys": restart_keys,
            "opensm_partition_errors": partition_errors,
            "opensm_partitions": normalize_partitions,
            "opensm_partition_line": partition_line,
            "opensm_expected_pkeys": expected_pkeys,
        }
