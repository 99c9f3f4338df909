"""module_utils/opensm.py service_layout: which units the installed opensm package
ships, from `systemctl list-unit-files --no-legend 'opensm*'` (systemd 252 columns:
unit, state, preset). The lines are shaped as systemd prints them; DOCA's real package
listing is still to be seen on a DOCA host."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.module_utils.opensm import service_layout

DEBIAN = "opensm.service                             enabled   enabled\nopensm@.service static -\n"
OPENSMD_SYSV = "opensmd.service generated -\n"
OPENSMD_NATIVE = "opensmd.service disabled enabled\n"


@pytest.mark.parametrize(
    ("listing", "layout"),
    [
        (DEBIAN, "instances"),
        (OPENSMD_SYSV, "opensmd"),
        (OPENSMD_NATIVE, "opensmd"),
        (DEBIAN + OPENSMD_SYSV, "instances"),
        ("opensm.service enabled enabled\n", "unknown"),
        ("", "unknown"),
    ],
)
def test_service_layout(listing, layout):
    assert service_layout(listing) == layout
