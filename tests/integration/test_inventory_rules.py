"""Inputs of the right type that cannot be what they claim, refused by the
preflight (rdma.fabric.inventory_check) on the controller before any host is contacted:
URL and address variables that are not one, settings placed where no play reads them,
hosts in groups that exclude each other."""

from __future__ import annotations

import re
import shutil
from datetime import datetime

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.plugin_utils import inventory_names
from ansible_collections.rdma.fabric.plugins.plugin_utils import inventory_rules as rules
from conftest import PLAYBOOKS_DIR, ROLES_DIR
from role_play import playbook_json

CHECK = "Fail on variable and group names no role knows"
NO_SCHEME = "linux.mellanox.com/public/repo/doca/2.9.1/"


def options_of_every_role(opaque=()):
    """(role, option name, option spec) of every entry point of every role, nested too
    (not under an option named in ``opaque``)."""

    def walk(role, options):
        for name, spec in (options or {}).items():
            spec = spec or {}
            yield role, name, spec
            if name not in opaque:
                yield from walk(role, spec.get("options"))

    for spec_file in sorted(ROLES_DIR.glob("*/meta/argument_specs.yml")):
        role = spec_file.parent.parent.name
        for entry in yaml.safe_load(spec_file.read_text())["argument_specs"].values():
            yield from walk(role, entry.get("options"))


# What describes a URL or an endpoint's address in an argument spec's text.
LOOKS_LIKE_AN_ENDPOINT = re.compile(r"://|\bURL\b|\baddress\b|\bREST API\b|\bendpoint\b", re.I)


# A rail's keys (subnet, gateway ...) are no endpoint: the rail plan's own validator
# (module_utils/rails.py, the rail_plan action run once before any change) parses each
# as a network or an address.
PARSED_BY_THEIR_VALIDATOR = ("rdma_rails",)


def endpoint_options():
    for role, name, spec in options_of_every_role(PARSED_BY_THEIR_VALIDATOR):
        text = f"{spec.get('description', '')} {spec.get('default', '')}"
        free_text = spec.get("type", "str") == "str" and "choices" not in spec
        if free_text and LOOKS_LIKE_AN_ENDPOINT.search(text):
            yield role, name


def test_every_url_or_address_option_carries_the_marker():
    """A new option described as a URL or an address must be named *_url, *_host or
    *_address, so the preflight checks its value; none can escape by its name."""
    unmarked = [
        (role, name)
        for role, name in endpoint_options()
        if not name.endswith((rules.URL_SUFFIX, *rules.ADDRESS_SUFFIXES))
    ]
    assert unmarked == []
    marked = {name for _role, name in endpoint_options()}
    assert {
        "rdma_stack_doca_repo_url",
        "rdma_stack_doca_key_url",
        "ib_subnet_manager_ufm_url",
        "roce_switch_qos_nvue_host",
        "rdma_verify_address",
    } <= marked
    # And every option named so is of the kind: a string the check can parse.
    for _role, name, spec in options_of_every_role():
        if name.endswith((rules.URL_SUFFIX, *rules.ADDRESS_SUFFIXES)):
            assert spec.get("type", "str") == "str", name


def test_the_marker_test_catches_an_unmarked_url_option():
    """The detector above sees a URL option whatever its name."""
    spec = {"description": "The internal mirror (https://...)", "type": "str"}
    assert LOOKS_LIKE_AN_ENDPOINT.search(spec["description"])
    assert not "rdma_stack_mirror".endswith((rules.URL_SUFFIX, *rules.ADDRESS_SUFFIXES))


def test_url_schemes_name_declared_url_options_only():
    declared = inventory_names.declared_names([str(ROLES_DIR)])
    assert set(rules.URL_SCHEMES) <= {n for n in declared if n.endswith(rules.URL_SUFFIX)}


@pytest.mark.parametrize(
    ("name", "value", "problem", "use"),
    [
        (
            "rdma_stack_doca_repo_url",
            "linux.mellanox.com/public/repo/doca/2.9.1/",
            "is not a URL (no scheme)",
            "https://linux.mellanox.com/public/repo/doca/2.9.1/",
        ),
        ("rdma_stack_doca_repo_url", "https:/mirror/doca", "is not a URL (no scheme)", None),
        ("rdma_stack_doca_key_url", "https:///GPG-KEY", "is a URL without a host", None),
        ("rdma_stack_doca_key_url", "ftp://mirror/key", "has scheme ftp://", "https://mirror/key"),
        ("rdma_stack_doca_repo_url", "https://mirror /doca", "has white space", None),
        ("rdma_stack_doca_repo_url", "https://mirror:99999/doca", "is not a URL", None),
        ("rdma_stack_doca_repo_url", "file:///", "without a path", None),
        ("ib_subnet_manager_ufm_url", "http://ufm01", "takes https://", "https://ufm01"),
        (
            "ib_subnet_manager_ufm_url",
            "ufm01.example.net",
            "no scheme",
            "https://ufm01.example.net",
        ),
    ],
)
def test_url_values_that_are_not_urls(name, value, problem, use):
    found = rules.url_problem(name, value)
    assert found is not None
    assert problem in found[0]
    if use:
        assert found[1] == use


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("rdma_stack_doca_repo_url", "https://mirror.example.net/doca/2.9.1/debian12/x86_64/"),
        ("rdma_stack_doca_repo_url", "http://10.0.0.5:8080/doca/"),
        ("rdma_stack_doca_repo_url", "file:///srv/mirror/doca/"),
        ("rdma_stack_doca_key_url", "{{ site_mirror }}/GPG-KEY"),
        ("ib_subnet_manager_ufm_url", "https://[2001:db8::5]/"),
        ("ib_subnet_manager_ufm_url", ""),
    ],
)
def test_urls_templates_and_empty_values_pass(name, value):
    assert rules.url_problem(name, value) is None


def test_address_values_that_are_urls_or_paths():
    known = {"roce_switch_qos_nvue_port"}
    assert rules.address_problem(
        "roce_switch_qos_nvue_host", "https://leaf01:8765/nvue_v1", known
    ) == (
        "is a URL, not a host name or address",
        "leaf01 (and roce_switch_qos_nvue_port: 8765)",
    )
    assert rules.address_problem("rdma_verify_address", "10.0.0.1/24")[1] == "10.0.0.1"
    for good in ("leaf01", "10.0.0.1", "2001:db8::1", "{{ ansible_host }}"):
        assert rules.address_problem("rdma_verify_address", good) is None


# Which play reads which variable: derived from the playbooks and the roles -------------


def test_every_play_with_a_role_is_read_from_the_playbooks():
    plays = rules.stage_plays(str(PLAYBOOKS_DIR))
    with_roles = []
    for playbook in sorted(PLAYBOOKS_DIR.glob("*.yml")):
        for play in yaml.safe_load(playbook.read_text()):
            text = yaml.safe_dump(play)
            if "hosts" in play and ("roles" in play or "include_role" in text):
                with_roles.append((playbook.name, play["hosts"]))
    assert [(p["playbook"], p["hosts"]) for p in plays] == with_roles
    by_hosts = {p["hosts"]: p for p in plays}
    assert by_hosts["switches"]["roles"] == ["roce_switch_qos"]
    assert not by_hosts["switches"]["become"]
    assert by_hosts["roce_hosts"]["become"]
    assert "ib_subnet_manager" in by_hosts["ib_hosts"]["roles"]


def _readers(playbooks_dir):
    known = inventory_names.declared_names([str(ROLES_DIR)])
    plays = rules.stage_plays(str(playbooks_dir))
    reads = {r: rules.role_reads(str(ROLES_DIR / r), known) for p in plays for r in p["roles"]}
    return rules.readers(plays, reads)


def test_readers_follow_the_playbooks_not_a_list(tmp_path):
    read_by = _readers(PLAYBOOKS_DIR)
    assert read_by["roce_switch_qos_nvue_user"] == ["switches"]
    assert read_by["ib_subnet_manager_priority"] == [
        "ib_hosts",
        "ib_switches",
        "subnet_managers",
        "ufm_servers",
    ]
    assert "switches" not in read_by["rdma_stack_provider"]
    # The fabric-wide policy is read on hosts and switches alike.
    assert {"roce_hosts", "switches", "rdma_hosts"} <= set(read_by["rdma_roce_policy"])
    # verify.yml reads the leaves' LLDP tables through roce_switch_qos on the switches too.
    assert read_by["roce_switch_qos_nvue_user"] == ["switches"]
    # Move the switch plays to another group: the readers move with them.
    moved = tmp_path / "playbooks"
    shutil.copytree(PLAYBOOKS_DIR, moved)
    for name in ("roce_fabric.yml", "verify.yml"):
        play = moved / name
        play.write_text(play.read_text().replace("hosts: switches", "hosts: leaf_switches"))
    assert _readers(moved)["roce_switch_qos_nvue_user"] == ["leaf_switches"]


def test_unread_settings_name_variable_place_and_readers():
    found = rules.unread_settings(
        {
            "host gpu-01": {"ib_subnet_manager_priority": 3, "rdma_stack_provider": "inbox"},
            "group gpu_hosts": {"roce_switch_qos_nvue_user": "admin"},
            "group all": {"roce_switch_qos_nvue_user": "admin"},
            "group empty": {"roce_switch_qos_nvue_user": "admin"},
            "extra vars": {"ib_subnet_manager_priority": 3},
        },
        {
            "host gpu-01": {"gpu-01"},
            "group gpu_hosts": {"gpu-01"},
            "group all": {"gpu-01", "leaf-01"},
            "group empty": set(),
        },
        {
            "ib_subnet_manager_priority": ["subnet_managers"],
            "roce_switch_qos_nvue_user": ["switches"],
            "rdma_stack_provider": ["rdma_hosts"],
        },
        {"subnet_managers": {"sm-01"}, "switches": {"leaf-01"}, "rdma_hosts": {"gpu-01"}},
    )
    assert found == [
        {
            "name": "ib_subnet_manager_priority",
            "where": "host gpu-01",
            "hosts": 1,
            "read_on": ["subnet_managers"],
        },
        {
            "name": "roce_switch_qos_nvue_user",
            "where": "group gpu_hosts",
            "hosts": 1,
            "read_on": ["switches"],
        },
    ]


def test_mode_values_belong_to_the_plays_that_act_on_them():
    """ib_fabric.yml includes the SM role on ib_switches only for mode switch, on
    ufm_servers only for mode ufm: those values belong there, read from the playbooks."""
    owners = rules.value_owners(rules.stage_plays(str(PLAYBOOKS_DIR)))
    assert owners == {
        ("ib_subnet_manager_mode", "switch"): ["ib_switches"],
        ("ib_subnet_manager_mode", "ufm"): ["ufm_servers"],
    }
    found = rules.misplaced_values(
        {
            "host sm-01": {"ib_subnet_manager_mode": "switch"},
            "group mlnxos_switches": {"ib_subnet_manager_mode": "switch"},
            "group subnet_managers": {"ib_subnet_manager_mode": "external"},
        },
        {
            "host sm-01": {"sm-01"},
            "group mlnxos_switches": {"ib-leaf-01"},
            "group subnet_managers": {"sm-01"},
        },
        owners,
        {"ib_switches": {"ib-leaf-01"}, "ufm_servers": set()},
    )
    assert found == [
        {
            "name": "ib_subnet_manager_mode",
            "value": "switch",
            "where": "host sm-01",
            "hosts": ["sm-01"],
            "owners": ["ib_switches"],
        }
    ]


def test_exclusive_kinds_come_from_become():
    plays = rules.stage_plays(str(PLAYBOOKS_DIR))
    kinds = rules.exclusive_kinds(plays, ["gpu_hosts"])
    assert {g for g, k in kinds.items() if k == "server"} == {
        "rdma_hosts",
        "roce_hosts",
        "ib_hosts",
        "subnet_managers",
        "gpu_hosts",
    }
    assert {g for g, k in kinds.items() if k != "server"} == {
        "switches",
        "ib_switches",
        "ufm_servers",
    }
    shared = rules.shared_hosts(
        kinds, {"rdma_hosts": {"a", "b"}, "switches": {"b"}, "ib_switches": {"b", "c"}}
    )
    assert shared == [
        {"groups": ["ib_switches", "rdma_hosts"], "hosts": ["b"]},
        {"groups": ["ib_switches", "switches"], "hosts": ["b"]},
        {"groups": ["rdma_hosts", "switches"], "hosts": ["b"]},
    ]


def test_selector_set_two_ways_by_sibling_groups_not_by_a_child():
    values = {
        "cumulus_switches": {"rdma_switch_os": "cumulus"},
        "sonic_switches": {"rdma_switch_os": "sonic"},
        "leaf_eos": {"rdma_switch_os": "eos"},
    }
    found = rules.selector_conflicts(
        ["rdma_switch_os"],
        values,
        {
            "leaf-01": ["cumulus_switches", "sonic_switches"],
            "leaf-02": ["cumulus_switches", "leaf_eos"],
        },
        {"leaf_eos": {"cumulus_switches", "switches", "all"}},
    )
    assert found == [
        {
            "name": "rdma_switch_os",
            "groups": ["cumulus_switches", "sonic_switches"],
            "values": ["cumulus", "sonic"],
            "hosts": ["leaf-01"],
        }
    ]


# The preflight, end to end on inventories -------------------------------------------------

BAD_INVENTORY = {
    "all": {
        "children": {
            "rdma_hosts": {
                "children": {
                    "roce_hosts": {
                        "hosts": {
                            "gpu-01": {"ib_subnet_manager_priority": 3},
                            "gpu-02": {"rdma_stack_doca_repo_url": NO_SCHEME},
                        }
                    },
                    "gpu_hosts": {"hosts": {"gpu-01": None, "gpu-02": None, "leaf-09": None}},
                }
            },
            "subnet_managers": {
                "hosts": {
                    "sm-01": {
                        "ib_subnet_manager_ufm_url": "http://ufm01.example.net",
                        "ib_subnet_manager_mode": "ufm",
                    }
                }
            },
            "switches": {
                "children": {
                    "cumulus_switches": {
                        "hosts": {
                            "leaf-01": {
                                "roce_switch_qos_nvue_host": "https://leaf-01.example.net:8765/nvue_v1"
                            },
                            "leaf-09": None,
                        },
                        "vars": {"rdma_switch_os": "cumulus"},
                    },
                    "sonic_switches": {
                        "hosts": {"leaf-01": None},
                        "vars": {"rdma_switch_os": "sonic"},
                    },
                }
            },
        }
    }
}


def preflight(run_cli, tmp_path, inventory: dict):
    hosts = tmp_path / "hosts.yml"
    hosts.write_text(yaml.safe_dump(inventory))
    proc, doc = playbook_json(run_cli, "-i", str(hosts), "rdma.fabric.preflight")
    [task] = [t for p in doc["plays"] for t in p["tasks"] if t["task"]["name"] == CHECK]
    return proc, task["hosts"]["localhost"]


def test_preflight_refuses_every_kind_naming_variable_host_and_what_to_use(run_cli, tmp_path):
    proc, result = preflight(run_cli, tmp_path, BAD_INVENTORY)
    assert proc.returncode != 0
    msg = result["msg"]
    for line in (
        f"rdma_stack_doca_repo_url (set in host gpu-02) is '{NO_SCHEME}':"
        f" it is not a URL (no scheme); use https://{NO_SCHEME}",
        "ib_subnet_manager_ufm_url (set in host sm-01) is 'http://ufm01.example.net': it has scheme"
        " http:// (takes https://); use https://ufm01.example.net",
        "roce_switch_qos_nvue_host (set in host leaf-01) is 'https://leaf-01.example.net:8765/nvue_v1':"
        " it is a URL, not a host name or address; use leaf-01.example.net (and"
        " roce_switch_qos_nvue_port: 8765)",
        "ib_subnet_manager_priority (set in host gpu-01): no play reads it there; the plays that"
        " read it run on ib_hosts, ib_switches, subnet_managers, ufm_servers",
        "groups gpu_hosts and switches exclude each other (a host is a Linux server or one kind"
        " of device) but share leaf-09",
        "groups rdma_hosts and switches exclude each other",
        "ib_subnet_manager_mode: ufm (set in host sm-01) reaches sm-01, outside ufm_servers,"
        " the only hosts whose play acts on ufm: set it on hosts of ufm_servers",
        "rdma_switch_os: groups cumulus_switches (cumulus) and sonic_switches (sonic) exclude each"
        " other but share leaf-01",
    ):
        assert line in msg, msg
    assert result["unknown_vars"] == []


def test_preflight_names_a_switch_setting_on_gpu_servers(run_cli, tmp_path):
    inventory = {
        "all": {
            "children": {
                "rdma_hosts": {
                    "children": {"gpu_hosts": {"hosts": {"gpu-01": None}}},
                },
                "switches": {"hosts": {"leaf-01": None}},
                "gpu_hosts": {"vars": {"roce_switch_qos_nvue_user": "admin"}},
            }
        }
    }
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode != 0
    assert result["unread_settings"] == [
        {
            "name": "roce_switch_qos_nvue_user",
            "where": "group gpu_hosts",
            "hosts": 1,
            "read_on": ["switches"],
        }
    ]


def test_preflight_passes_good_values_and_placements(run_cli, tmp_path):
    inventory = {
        "all": {
            "vars": {
                "rdma_stack_doca_repo_url": "https://mirror.example.net/doca/2.9.1/",
                "rdma_stack_doca_key_url": "{{ rdma_stack_doca_repo_url }}GPG-KEY",
            },
            "children": {
                "rdma_hosts": {"hosts": {"gpu-01": {"rdma_verify_address": "10.0.0.1"}}},
                "subnet_managers": {"hosts": {"gpu-01": {"ib_subnet_manager_priority": 3}}},
                "switches": {
                    "hosts": {"leaf-01": {"roce_switch_qos_nvue_host": "leaf-01.example.net"}}
                },
            },
        }
    }
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode == 0, result["msg"]
    assert result["bad_values"] == result["unread_settings"] == result["shared_hosts"] == []


def test_thousand_hosts_eight_rails_pass_clean(run_cli, tmp_path):
    """1,000 GPU servers with 8 rails each (host_vars per host) and 64 Cumulus leaves: no
    finding on a correct inventory; the check's time is printed (its cost at rack scale)."""
    names = [f"gpu-{i:04d}" for i in range(1000)]
    racks = {
        f"rack{r:02d}": {"hosts": dict.fromkeys(names[r * 32 : (r + 1) * 32])} for r in range(32)
    }
    leaves = {
        f"leaf-{r:02d}-{k}": {"ansible_host": f"10.1.{r}.{k}"} for r in range(32) for k in (0, 1)
    }
    inv = tmp_path / "inventory"
    (inv / "host_vars").mkdir(parents=True)
    (inv / "group_vars").mkdir()
    (inv / "hosts.yml").write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {
                        "rdma_hosts": {
                            "children": {
                                "roce_hosts": {"hosts": dict.fromkeys(names)},
                                "gpu_hosts": {"hosts": dict.fromkeys(names)},
                                **racks,
                            }
                        },
                        "switches": {"children": {"cumulus_switches": {"hosts": leaves}}},
                    }
                }
            }
        )
    )
    rails = [
        {"name": f"rail{k}", "netdev": f"ens{k}", "subnet": f"10.{100 + k}.0.0/16"}
        for k in range(8)
    ]
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({"rdma_rails": rails}))
    (inv / "group_vars" / "cumulus_switches.yml").write_text("rdma_switch_os: cumulus\n")
    (inv / "group_vars" / "rdma_hosts.yml").write_text(
        "rdma_stack_doca_repo_url: https://mirror.example.net/doca/\n"
    )
    for i, name in enumerate(names):
        devices = {f"rail{k}": f"mlx5_{k}" for k in range(8)}
        (inv / "host_vars" / f"{name}.yml").write_text(
            yaml.safe_dump({"rdma_rail_host_index": i + 1, "rdma_rail_devices": devices})
        )
    proc, doc = playbook_json(run_cli, "-i", str(inv), "rdma.fabric.preflight")
    [task] = [t for p in doc["plays"] for t in p["tasks"] if t["task"]["name"] == CHECK]
    result = task["hosts"]["localhost"]
    assert proc.returncode == 0, result["msg"]
    assert result["hosts"] == 1064
    start, end = (task["task"]["duration"][k] for k in ("start", "end"))
    took = datetime.fromisoformat(end) - datetime.fromisoformat(start)
    print(f"inventory_check at 1,000 hosts x 8 rails: {took.total_seconds():.2f} s")


def test_a_placement_meant_on_purpose_is_kept_with_allow_placements(run_cli, tmp_path):
    inventory = {
        "all": {
            "vars": {"rdma_fabric_allow_placements": ["roce_switch_qos_*"]},
            "children": {
                "rdma_hosts": {"hosts": {"gpu-01": {"roce_switch_qos_nvue_user": "admin"}}},
                "switches": {"hosts": {"leaf-01": None}},
            },
        }
    }
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode == 0, result["msg"]
    inventory["all"]["vars"]["rdma_fabric_allow_placements"] = "roce_switch_qos_*"
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode != 0
    assert "rdma_fabric_allow_placements must be true or a list" in result["msg"]


def test_play_keywords_read_from_the_playbooks():
    """The switch play's batch size comes from a play keyword (serial), found in the
    playbook itself, not from a list."""
    by_name = {p["name"]: p for p in rules.stage_plays(str(PLAYBOOKS_DIR))}
    switches = by_name["Apply the lossless RoCE policy on every managed switch"]
    assert switches["keyword_vars"] == [["serial", "roce_switch_qos_serial"]]
    assert by_name["Apply the lossless RoCE policy on every RoCE host"]["keyword_vars"] == []


def test_a_play_keyword_variable_in_the_inventory_is_refused(run_cli, tmp_path):
    """`serial` is templated before any host's variables exist: roce_switch_qos_serial in
    group_vars would be ignored (the switches would go one at a time); the preflight says
    so and names -e. As an extra var it passes."""
    inventory = {
        "all": {
            "children": {
                "switches": {
                    "hosts": {"leaf-01": None, "leaf-02": None},
                    "vars": {"roce_switch_qos_serial": 2},
                }
            }
        }
    }
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode != 0
    assert result["keyword_settings"] == [
        {
            "name": "roce_switch_qos_serial",
            "where": "group switches",
            "keyword": "serial",
            "play": "Apply the lossless RoCE policy on every managed switch",
        }
    ]
    assert (
        "roce_switch_qos_serial (set in group switches) is read by the serial of the play"
        " 'Apply the lossless RoCE policy on every managed switch', which Ansible sets before"
        " any host's variables exist: the inventory's value is never used; give it with"
        " -e roce_switch_qos_serial=VALUE" in result["msg"]
    )
    del inventory["all"]["children"]["switches"]["vars"]
    hosts = tmp_path / "hosts.yml"
    hosts.write_text(yaml.safe_dump(inventory))
    proc, doc = playbook_json(
        run_cli, "-i", str(hosts), "rdma.fabric.preflight", "-e", "roce_switch_qos_serial=2"
    )
    assert proc.returncode == 0
    [task] = [t for p in doc["plays"] for t in p["tasks"] if t["task"]["name"] == CHECK]
    assert task["hosts"]["localhost"]["keyword_settings"] == []


def test_an_inventory_batch_size_never_reaches_serial(run_cli, tmp_path):
    """Why the preflight refuses it: Ansible itself ignores the inventory's value (three
    switches, serial from group_vars 3: three batches of one), and takes -e (one batch)."""
    inventory = {
        "all": {
            "children": {
                "switches": {
                    "hosts": {"s1": None, "s2": None, "s3": None},
                    "vars": {"ansible_connection": "local", "roce_switch_qos_serial": 3},
                }
            }
        }
    }
    hosts = tmp_path / "hosts.yml"
    hosts.write_text(yaml.safe_dump(inventory))
    play = tmp_path / "serial.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "switches",
                    "gather_facts": False,
                    "serial": "{{ roce_switch_qos_serial | default(1) }}",
                    "tasks": [{"ansible.builtin.debug": {"msg": "{{ ansible_play_batch }}"}}],
                }
            ]
        )
    )
    batches = []
    for extra in ([], ["-e", "roce_switch_qos_serial=3"]):
        proc, doc = playbook_json(run_cli, "-i", str(hosts), str(play), *extra)
        assert proc.returncode == 0
        batches.append(len(doc["plays"]))
    assert batches == [3, 1]
