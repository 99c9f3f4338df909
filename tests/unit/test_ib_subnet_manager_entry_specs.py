"""ib_subnet_manager's switch and ufm entry points (tasks_from: switch / ufm): their
argument specs declare the variables the mode reads, as main declares them."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import ROLES_DIR

ROLE_DIR = ROLES_DIR / "ib_subnet_manager"
SPECS = yaml.safe_load((ROLE_DIR / "meta" / "argument_specs.yml").read_text())["argument_specs"]
# Each entry point: validate.yml, then the mode's tasks (UFM's partition records and
# PKeys URL are in vars/main.yml).
BODIES = {"switch": ["switch_sm.yml"], "ufm": ["ufm_pkeys.yml"]}
PUBLIC = re.compile(r"(?<!\w)ib_subnet_manager_\w+")


def public_names(*paths) -> set[str]:
    return {name for path in paths for name in PUBLIC.findall(path.read_text())}


def test_the_entry_points_are_main_and_the_two_modes():
    assert set(SPECS) == {"main", "switch", "ufm"}


@pytest.mark.parametrize("entry", sorted(BODIES))
def test_entry_point_options_are_mains(entry):
    main = SPECS["main"]["options"]
    for name, option in SPECS[entry]["options"].items():
        assert option == main[name], (entry, name)
    assert "ib_subnet_manager_mode" not in SPECS[entry]["options"]


@pytest.mark.parametrize("entry", sorted(BODIES))
def test_entry_point_declares_what_its_tasks_read(entry):
    declared = set(SPECS[entry]["options"])
    body = public_names(*(ROLE_DIR / "tasks" / name for name in BODIES[entry]))
    assert body - declared == set(), entry
    readable = body | public_names(
        ROLE_DIR / "tasks" / "validate.yml", ROLE_DIR / "vars" / "main.yml"
    )
    assert declared - readable == set(), entry
