"""The host roles' operating-system gate (module_utils/os_support.py, the filter
rdma.fabric.os_support that every tasks/set_vars.yml asks): tested systems pass quietly,
untested ones warn and go on, anything else is refused with a message that names the
role, the system and what is tested."""

from __future__ import annotations

import pytest
from ansible_collections.rdma.fabric.plugins.filter.os_support import FilterModule
from ansible_collections.rdma.fabric.plugins.module_utils.os_support import (
    os_support,
    systems_text,
)

# rdma_nic's lists (roles/rdma_nic/vars/main.yml).
SUPPORTED = {"Debian": ["12", "13"]}
UNTESTED = {"Ubuntu": ["22", "24"], "RedHat": ["8", "9"]}


def facts(distribution, version):
    return {
        "distribution": distribution,
        "distribution_version": version,
        "distribution_major_version": version.split(".")[0],
        "os_family": distribution,
    }


def test_systems_text_keeps_the_lists_order():
    assert systems_text(SUPPORTED) == "Debian 12/13"
    assert systems_text(UNTESTED) == "Ubuntu 22/24, RedHat 8/9"
    assert systems_text({}) == ""


@pytest.mark.parametrize("version", ["12", "13"])
def test_tested_debian_passes_quietly(version):
    assert os_support(facts("Debian", version), SUPPORTED, UNTESTED, "rdma_nic") == {
        "status": "tested",
        "message": "",
    }


def test_untested_ubuntu_warns_and_goes_on():
    assert os_support(facts("Ubuntu", "24.04"), SUPPORTED, UNTESTED, "rdma_nic") == {
        "status": "untested",
        "message": "rdma_nic has code paths for Ubuntu 24.04 but no test runs them; "
        "tested on Debian 12/13 only. Check the result on one host first.",
    }


def test_fedora_is_refused_naming_the_role_the_system_and_what_is_tested():
    assert os_support(facts("Fedora", "40"), SUPPORTED, UNTESTED, "rdma_nic") == {
        "status": "refused",
        "message": "rdma_nic: Fedora 40 is not supported. Tested: Debian 12/13; "
        "untested code paths: Ubuntu 22/24, RedHat 8/9.",
    }


@pytest.mark.parametrize(
    "distribution, version",
    [("Debian", "11"), ("Ubuntu", "20.04"), ("Rocky", "9.4")],
)
def test_another_major_or_a_system_of_neither_list_is_refused(distribution, version):
    result = os_support(facts(distribution, version), SUPPORTED, UNTESTED, "ib_subnet_manager")
    assert result["status"] == "refused"
    assert result["message"].startswith(
        f"ib_subnet_manager: {distribution} {version} is not supported."
    )


def test_a_missing_fact_is_refused_by_name():
    host = facts("Debian", "12")
    del host["distribution_major_version"]
    result = os_support(host, SUPPORTED, UNTESTED, "rdma_stack")
    assert result == {
        "status": "refused",
        "message": "rdma_stack: the operating system is not known (fact "
        "distribution_major_version missing). Tested: Debian 12/13; untested code paths: "
        "Ubuntu 22/24, RedHat 8/9.",
    }
    assert os_support({}, SUPPORTED, UNTESTED, "rdma_stack")["status"] == "refused"


def test_majors_as_numbers_match_the_facts_strings():
    assert os_support(facts("Debian", "12.7"), {"Debian": [12]}, {}, "r")["status"] == "tested"


def test_the_filter_is_the_module_utils_decision():
    decide = FilterModule().filters()["os_support"]
    assert decide(facts("Ubuntu", "22.04"), SUPPORTED, UNTESTED, "roce_host_qos") == os_support(
        facts("Ubuntu", "22.04"), SUPPORTED, UNTESTED, "roce_host_qos"
    )
