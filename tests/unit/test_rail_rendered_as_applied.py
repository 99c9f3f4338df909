"""Rendered mode writes what applied mode writes on the host: rail_rendered's backend
files, for a systemd version given as a variable (rdma_rails_systemd_version), are
rail_files' for the `systemctl --version` text a host of that version prints, byte for
byte, with the rendered header on top."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.action.rail_plan import build_plan
from ansible_collections.rdma.fabric.plugins.filter.rail import rail_files, rail_rendered
from ansible_collections.rdma.fabric.plugins.module_utils import rail_render
from test_rail_render import PARTITIONS, RAILS

HOSTS = {"gpu01": {"rdma_rail_host_index": 1}}
# netplan has no IPoIB P_Key children: its plan is the Ethernet rails.
ETHERNET = [rail for rail in RAILS if rail.get("link_layer") != "infiniband"]
BACKEND_DIRS = (
    "/etc/systemd/network/",
    "/etc/systemd/system/",
    "/etc/netplan/",
    "/etc/NetworkManager/",
)


def _entries(rails):
    plan, errors = build_plan(rails, HOSTS, partitions=PARTITIONS)
    assert errors == []
    return plan["gpu01"]


@pytest.mark.parametrize("version", [None, 249, "249", 250, 256])
@pytest.mark.parametrize(
    ("backend", "rails"),
    [("networkd", RAILS), ("netplan", ETHERNET), ("networkmanager", RAILS)],
)
def test_rendered_backend_files_are_the_applied_ones_for_that_systemd(backend, rails, version):
    rendered = rail_rendered(_entries(rails), backend, 106, "eno1", {}, True, systemd=version)
    links = rail_render.rail_links(rail_render.offline_entries(_entries(rails)))
    printed = f"systemd {version} ({version}.1-1)\n+PAM +AUDIT\n" if version else None
    applied = rail_files(links, backend, printed)
    assert applied
    assert {p: t for p, t in rendered.items() if p.startswith(BACKEND_DIRS)} == {
        p: rail_render.RENDERED + "\n" + spec["content"] for p, spec in applied.items()
    }
    units = [p for p in rendered if p.startswith("/etc/systemd/system/")]
    assert bool(units) == (backend == "networkd" and version in (249, "249"))
