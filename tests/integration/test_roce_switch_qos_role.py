"""roce_switch_qos, run for real with ansible-playbook (playbooks/roce_fabric.yml), against
STAND-INS only: no switch is reachable here.

- Cumulus: tests/standins/nvue_api.py, an HTTPS server on 127.0.0.1 with a certificate
  made here, following NVIDIA's documented NVUE revision contract.
- SONiC: tests/standins/sonic/{sonic-cfggen,config,show} on PATH, CONFIG_DB in a JSON file.
- EOS: the rendered state and its files here; applied over eAPI against
  tests/standins/eos_eapi.py in test_roce_switch_qos_eos.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy
from ansible_collections.rdma.fabric.plugins.module_utils.switch_qos import render
from conftest import PLAYBOOKS_DIR, REPO_ROOT
from role_play import failure_messages, recap, recaps

STANDINS = REPO_ROOT / "tests" / "standins"
sys.path.insert(0, str(STANDINS))
from nvue_api import NvueStandin  # noqa: E402

PLAYBOOK = str(PLAYBOOKS_DIR / "roce_fabric.yml")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "switch_qos"
PASSWORD = "CumulusLinux!"
SYSTEM = {"system": {"build": "Cumulus Linux 5.9.1", "hostname": "leaf1"}}
DEFAULT, _ = normalize_policy({})


@pytest.fixture
def nvue(tls):
    started = []

    def start(applied=None, **kwargs):
        standin = NvueStandin(password=PASSWORD, applied=applied or SYSTEM, **kwargs)
        started.append(standin.start(*tls))
        return standin

    yield start
    for standin in started:
        standin.stop()


def cumulus_host(standin, tls, **extra):
    return {
        "ansible_connection": "local",
        "ansible_host": "127.0.0.1",
        "roce_switch_qos_nvue_port": standin.port,
        "roce_switch_qos_nvue_password": PASSWORD,
        "roce_switch_qos_ca_path": tls[0],
        "roce_switch_qos_use_proxy": False,
        "roce_switch_qos_ports": ["swp1", "swp2"],
        "roce_switch_qos_uplinks": ["swp2"],
        **extra,
    }


def inventory(tmp_path, cumulus=None, sonic=None, eos=None):
    groups = {}
    for os_name, hosts in (("cumulus", cumulus), ("sonic", sonic), ("eos", eos)):
        if hosts:
            groups[f"{os_name}_switches"] = {"hosts": hosts, "vars": {"rdma_switch_os": os_name}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"switches": {"children": groups}}}}))
    return str(path)


@pytest.fixture
def play(run_playbook):
    def run(hosts_file, *args, env=None):
        proc = run_playbook("-i", hosts_file, PLAYBOOK, *args, env=env, timeout=300)
        return proc, proc.output

    return run


# --- Cumulus: the NVUE revision workflow ------------------------------------------------


def test_cumulus_check_then_apply_then_nothing(nvue, tls, tmp_path, play):
    standin = nvue()
    hosts = inventory(tmp_path, cumulus={"leaf1": cumulus_host(standin, tls)})
    want = render(DEFAULT, "cumulus", ["swp1", "swp2"], 100)

    proc, out = play(hosts, "--check", "--diff")
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 1
    assert standin.revisions == {}, "--check must not create a revision"
    assert '"switch-priority": 3' in out, "--diff shows the change"

    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 1
    [(rev, record)] = standin.revisions.items()
    assert record["state"]["state"] == "applied"
    assert standin.applied["qos"]["mapping"]["default-global"]["dscp"]["26"] == {
        "switch-priority": 3
    }
    assert standin.applied["interface"]["swp2"]["qos"]["pfc-watchdog"] == {"state": "enable"}
    assert standin.startup == standin.applied, "saved to startup"
    assert standin.applied["system"] == SYSTEM["system"], "other configuration kept"
    assert (
        "bw-percent"
        not in standin.applied["qos"]["egress-scheduler"]["default-global"]["traffic-class"]["6"]
    )
    assert want["qos"]["roce"] == standin.applied["qos"]["roce"]

    calls = len(standin.log)
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 0
    assert list(standin.revisions) == [rev], "a second run creates no revision"
    assert all(method == "GET" for method, _, _ in standin.log[calls:])


def test_cumulus_515_gets_qos_roce_state(nvue, tls, tmp_path, play):
    """Cumulus 5.15 renamed `qos roce enable` to `qos roce state`: the stand-in of 5.15
    refuses `enable` (400) as NVUE's schema does; the role picks the key by the release."""
    standin = nvue(applied={"system": {"build": "Cumulus Linux 5.15.0", "hostname": "leaf1"}})
    hosts = inventory(tmp_path, cumulus={"leaf1": cumulus_host(standin, tls)})
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert standin.applied["qos"]["roce"] == {"state": "enabled", "mode": "lossless"}
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 0


def test_cumulus_all_ports_are_read_from_the_switch(nvue, tls, tmp_path, play):
    """`roce_switch_qos_ports: all`: every swp port NVUE lists gets the per-port part,
    the uplink swp51 included (no roce_switch_qos_uplinks needed); eth0 and lo do not."""
    interfaces = {
        "swp1": {"type": "swp"},
        "swp51": {"type": "swp"},
        "eth0": {"type": "eth"},
        "lo": {"type": "loopback"},
    }
    standin = nvue(applied={**SYSTEM, "interface": interfaces})
    host = cumulus_host(standin, tls, roce_switch_qos_ports="all", roce_switch_qos_uplinks=None)
    hosts = inventory(tmp_path, cumulus={"leaf1": host})
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    applied = standin.applied["interface"]
    for port in ("swp1", "swp51"):
        assert applied[port]["link"]["mtu"] == DEFAULT["mtu"], port
        assert applied[port]["qos"]["pfc-watchdog"] == {"state": "enable"}, port
    assert applied["eth0"] == {"type": "eth"} and applied["lo"] == {"type": "loopback"}
    proc, out = play(hosts)
    assert proc.returncode == 0, out
    assert recap(proc, "leaf1")["changed"] == 0


def test_cumulus_apply_error_keeps_the_previous_revision(nvue, tls, tmp_path, play):
    before = {**SYSTEM, "qos": {"roce": {"mode": "lossy"}}}
    standin = nvue(applied=before, id_style="changeset")
    standin.validator = lambda config: [
        ("qos.pfc.default-global.cable-length", "Cable length exceeds the headroom of this ASIC.")
    ]
    hosts = inventory(tmp_path, cumulus={"leaf1": cumulus_host(standin, tls)})
    proc, out = play(hosts)
    assert proc.returncode != 0, out
    assert recap(proc, "leaf1")["failed"] == 1
    assert "Config invalid at qos.pfc.default-global.cable-length" in out
    assert "the switch keeps its previous configuration" in out
    [record] = standin.revisions.values()
    assert record["state"]["state"] == "invalid"
    assert standin.applied == before and standin.startup == before


def test_cumulus_certificate_is_verified_by_default(nvue, tls, tmp_path, play):
    standin = nvue()
    host = cumulus_host(standin, tls)
    del host["roce_switch_qos_ca_path"]
    proc, out = play(inventory(tmp_path, cumulus={"leaf1": host}))
    assert proc.returncode != 0, out
    assert "CERTIFICATE_VERIFY_FAILED" in out or "certificate verify failed" in out, out
    assert standin.revisions == {}


def test_rollout_stops_at_the_first_failure(nvue, tls, tmp_path, play):
    bad, good = nvue(), nvue()
    bad.validator = lambda config: [("qos", "rejected by the test")]
    hosts = inventory(
        tmp_path,
        cumulus={"leaf1": cumulus_host(bad, tls), "leaf2": cumulus_host(good, tls)},
    )
    proc, out = play(hosts)
    assert proc.returncode != 0, out
    assert good.log == [], "the next batch must not start after a failure"
    assert recaps(proc).get("leaf2", {"ok": 0})["ok"] == 0


# --- SONiC: JSON Patch through `config apply-patch` ----------------------------------------


@pytest.fixture
def sonic(tmp_path):
    db = tmp_path / "config_db.json"
    shutil.copy(FIXTURES / "configdb_buffers_dynamic.json", db)
    env = {
        # The config stand-in applies patches with jsonpatch: the venv's python3 first.
        "PATH": os.pathsep.join(
            [str(STANDINS / "sonic"), str(Path(sys.executable).parent), os.environ["PATH"]]
        ),
        "SONIC_STANDIN_DB": str(db),
    }
    host = {
        "ansible_connection": "local",
        "roce_switch_qos_sonic_become": False,
        "roce_switch_qos_ports": ["Ethernet0", "Ethernet4"],
        "roce_switch_qos_uplinks": [],
    }
    return db, env, inventory(tmp_path, sonic={"sonic1": host})


def test_sonic_patch_apply_save_and_nothing_the_second_time(sonic, play):
    db, env, hosts = sonic
    original = db.read_text()
    proc, out = play(hosts, "--check", env=env)
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 1
    assert db.read_text() == original, "--check must not patch CONFIG_DB"

    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 1
    configdb = json.loads(db.read_text())
    assert configdb["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] == "3"
    assert configdb["DSCP_TO_TC_MAP"]["RDMA_FABRIC"]["26"] == "3"
    assert configdb["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"] == "3,4", "other ports untouched"
    # Dynamic buffer model (DEVICE_METADATA): the RoCE PG lossless, the old 3-4 rows gone.
    assert configdb["BUFFER_PG"]["Ethernet0|3"] == {"profile": "NULL"}
    assert "Ethernet0|3-4" not in configdb["BUFFER_PG"]
    assert configdb["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "100m"
    assert configdb["PORT"]["Ethernet0"]["mtu"] == "9000"
    assert Path(str(db) + ".saved").read_text() == db.read_text(), "config save -y ran"

    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 0


@pytest.mark.parametrize("asic", ["mellanox", "broadcom"])
def test_sonic_roce_on_5_queue_and_pfc_to_pg_per_asic(sonic, play, asic):
    """RoCE priority 5: queue 5 leaves the lossy 5-6 BUFFER_QUEUE row for the lossless
    profile; the PFC priority to PG map is bound only on mellanox/barefoot ASICs (read
    from `show version`)."""
    db, env, hosts = sonic
    args = ("-e", '{"rdma_roce_policy": {"roce_priority": 5}}')
    proc, out = play(hosts, *args, env={**env, "SONIC_STANDIN_ASIC": asic})
    assert proc.returncode == 0, out
    configdb = json.loads(db.read_text())
    assert configdb["BUFFER_QUEUE"]["Ethernet0|5"] == {"profile": "egress_lossless_profile"}
    assert configdb["BUFFER_QUEUE"]["Ethernet0|6"] == {"profile": "egress_lossy_profile"}
    assert "Ethernet0|5-6" not in configdb["BUFFER_QUEUE"]
    bound = configdb["PORT_QOS_MAP"]["Ethernet0"].get("pfc_to_pg_map")
    assert bound == ("RDMA_FABRIC" if asic == "mellanox" else None)
    proc, out = play(hosts, *args, env={**env, "SONIC_STANDIN_ASIC": asic})
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 0


def test_sonic_cnp_on_7_gets_a_lossy_pg_row(sonic, play):
    db, env, hosts = sonic
    args = ("-e", '{"rdma_roce_policy": {"cnp_priority": 7}}')
    proc, out = play(hosts, *args, env=env)
    assert proc.returncode == 0, out
    configdb = json.loads(db.read_text())
    assert configdb["BUFFER_PG"]["Ethernet0|7"] == {"profile": "ingress_lossy_profile"}
    proc, out = play(hosts, *args, env=env)
    assert recap(proc, "sonic1")["changed"] == 0, out


def test_sonic_all_ports_are_read_from_config_db(sonic, play, tmp_path):
    """`roce_switch_qos_ports: all`: every port of CONFIG_DB's PORT table, Ethernet8 too."""
    db, env, _ = sonic
    host = {
        "ansible_connection": "local",
        "roce_switch_qos_sonic_become": False,
        "roce_switch_qos_ports": "all",
    }
    hosts = inventory(tmp_path, sonic={"sonic1": host})
    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    configdb = json.loads(db.read_text())
    for port in ("Ethernet0", "Ethernet4", "Ethernet8"):
        assert configdb["PORT_QOS_MAP"][port]["pfc_enable"] == "3", port
        assert configdb["BUFFER_PG"][f"{port}|3"] == {"profile": "NULL"}, port
        assert configdb["QUEUE"][f"{port}|3"]["wred_profile"] == "AZURE_LOSSLESS", port
    proc, out = play(hosts, env=env)
    assert proc.returncode == 0, out
    assert recap(proc, "sonic1")["changed"] == 0


def test_sonic_traditional_buffers_from_the_lookup_file(sonic, play, tmp_path):
    db, env, hosts = sonic
    shutil.copy(FIXTURES / "configdb_buffers_traditional.json", db)
    lookup = str(FIXTURES / "pg_profile_lookup.ini")
    args = ("-e", f"roce_switch_qos_sonic_pg_lookup_file={lookup}")
    original = db.read_text()
    proc, out = play(hosts, *args, env=env)
    assert proc.returncode != 0, out
    assert "roce_switch_qos_cable_length: 100 m at speed 100000 (Ethernet0)" in out
    assert db.read_text() == original, "refused before any change"

    proc, out = play(hosts, *args, "-e", "roce_switch_qos_cable_length=40", env=env)
    assert proc.returncode == 0, out
    configdb = json.loads(db.read_text())
    # `config apply-patch` refuses a new BUFFER_PROFILE: buffermgr writes it and the row.
    assert "pg_lossless_100000_40m_profile" not in configdb["BUFFER_PROFILE"]
    assert "Ethernet4|3" not in configdb["BUFFER_PG"]
    assert "Ethernet4|3-4" not in configdb["BUFFER_PG"]


def test_sonic_without_pfc_wd_is_refused_before_any_change(sonic, play):
    """`add /PFC_WD` is refused by the field operation validators (202205-202505)."""
    db, env, hosts = sonic
    doc = json.loads(db.read_text())
    del doc["PFC_WD"]
    db.write_text(json.dumps(doc))
    original = db.read_text()
    proc, out = play(hosts, env=env)
    assert proc.returncode != 0, out
    assert "pfcwd start_default" in out
    assert db.read_text() == original


def test_sonic_refused_patch_fails_with_the_updaters_message(sonic, play):
    db, env, hosts = sonic
    original = db.read_text()
    proc, out = play(hosts, env={**env, "SONIC_STANDIN_ILLEGAL_TABLES": "WRED_PROFILE"})
    assert proc.returncode != 0, out
    assert "Modification of WRED_PROFILE table is illegal" in out
    assert db.read_text() == original
    assert not Path(str(db) + ".saved").exists()


# --- rendered state and bad input, without connecting -----------------------------------


def test_rendered_writes_what_each_switch_would_get(tmp_path, play):
    out_dir = tmp_path / "rendered"
    local = {"ansible_connection": "local"}
    hosts = inventory(
        tmp_path,
        cumulus={"leaf1": {**local, "roce_switch_qos_ports": ["swp1"]}},
        sonic={
            "sonic1": {
                **local,
                "roce_switch_qos_ports": ["Ethernet0"],
                "roce_switch_qos_uplinks": ["Ethernet0", "Ethernet120"],
            }
        },
        eos={
            "spine1": {
                **local,
                "roce_switch_qos_ports": ["Ethernet1/1"],
                "roce_switch_qos_uplinks": ["Ethernet1/1"],
                "roce_switch_qos_cable_length": 5,
            }
        },
    )
    args = ("-e", "roce_switch_qos_state=rendered", "-e", f"roce_switch_qos_render_dir={out_dir}")
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    # Port scope: rendered warns by name (applied refuses, see the bad-input test).
    assert "WARNING: roce_switch_qos_uplinks is not set for leaf1" in out
    assert "roce_switch_qos_ports of sonic1 must include its uplinks Ethernet120" in out
    assert "WARNING: roce_switch_qos_ports of spine1" not in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["leaf1.json", "sonic1.json", "spine1.cfg"]
    assert json.loads((out_dir / "leaf1.json").read_text()) == render(
        DEFAULT, "cumulus", ["swp1"], 100
    )
    assert json.loads((out_dir / "sonic1.json").read_text()) == render(
        DEFAULT, "sonic", ["Ethernet0"], 100, {"sonic_buffer_model": "dynamic"}
    )
    assert (out_dir / "spine1.cfg").read_text() == render(DEFAULT, "eos", ["Ethernet1/1"], 5)
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    assert all(recap(proc, h)["changed"] == 0 for h in ("leaf1", "sonic1", "spine1"))


def test_rendered_all_ports_is_the_switch_wide_part_and_says_so(tmp_path, play):
    out_dir = tmp_path / "rendered"
    every = {"ansible_connection": "local", "roce_switch_qos_ports": "all"}
    hosts = inventory(
        tmp_path, cumulus={"leaf1": every}, sonic={"sonic1": every}, eos={"spine1": every}
    )
    args = ("-e", "roce_switch_qos_state=rendered", "-e", f"roce_switch_qos_render_dir={out_dir}")
    proc, out = play(hosts, *args)
    assert proc.returncode == 0, out
    assert "WARNING: roce_switch_qos" not in out, "all covers the uplinks"
    for host, per_port in (
        ("leaf1", "interface link mtu and qos pfc-watchdog state"),
        ("sonic1", "PORT_QOS_MAP, QUEUE, PFC_WD, PORT mtu, CABLE_LENGTH and the lossless"),
        ("spine1", "interface mtu and service-profile"),
    ):
        said = " ".join(out.split())
        assert f"roce_switch_qos_ports is all on {host}:" in said, out
        assert f"The per-port part ({per_port}" in said, (host, out)
    assert json.loads((out_dir / "leaf1.json").read_text()) == render(DEFAULT, "cumulus", [], 100)
    sonic = json.loads((out_dir / "sonic1.json").read_text())
    assert sonic == render(DEFAULT, "sonic", [], 100, {"sonic_buffer_model": "dynamic"})
    assert "PORT_QOS_MAP" not in sonic and "DSCP_TO_TC_MAP" in sonic
    assert "interface" not in (out_dir / "spine1.cfg").read_text()


BAD_PLAY = """\
- name: Every host brings its own bad input
  hosts: switches
  gather_facts: false
  roles:
    - role: roce_switch_qos
"""


def test_bad_input_fails_by_name_before_anything_is_sent(tmp_path, run_playbook):
    local = {
        "ansible_connection": "local",
        "roce_switch_qos_ports": ["swp1"],
        "roce_switch_qos_uplinks": [],
    }
    hosts = {
        "uplinks_left_out": {**local, "roce_switch_qos_uplinks": ["swp51", "swp1"]},
        "uplinks_unset": {**local, "roce_switch_qos_uplinks": None},
        "bad_os": {**local, "rdma_switch_os": "junos"},
        "no_ports": {**local, "roce_switch_qos_ports": []},
        "ports_a_word": {**local, "roce_switch_qos_ports": "swp1"},
        "wrong_port_names": {**local, "roce_switch_qos_ports": ["Ethernet0"]},
        "two_lossless": {**local, "rdma_roce_policy": {"pfc_priorities": [3, 4]}},
        "watchdog_forward": {**local, "rdma_roce_policy": {"pfc_watchdog": {"action": "forward"}}},
        "no_password": dict(local),
        # Limits of the real systems, refused before anything is sent.
        "sonic_202111": {
            **local,
            "rdma_switch_os": "sonic",
            "roce_switch_qos_ports": ["Ethernet0"],
            "roce_switch_qos_min_versions": {"cumulus": "5.6", "sonic": "202111", "eos": ""},
        },
        "sonic_traditional_100m": {
            **local,
            "rdma_switch_os": "sonic",
            "roce_switch_qos_ports": ["Ethernet0"],
            "roce_switch_qos_state": "rendered",
            "roce_switch_qos_sonic_buffer_model": "traditional",
            "roce_switch_qos_cable_length": 100,
            "roce_switch_qos_render_dir": str(tmp_path / "render"),
        },
        # The default (the policy's cable_length_m, 100 m) is refused too.
        "sonic_traditional_default": {
            **local,
            "rdma_switch_os": "sonic",
            "roce_switch_qos_ports": ["Ethernet0"],
            "roce_switch_qos_state": "rendered",
            "roce_switch_qos_sonic_buffer_model": "traditional",
            "roce_switch_qos_render_dir": str(tmp_path / "render"),
        },
        "eos_mtu_9216": {
            **local,
            "rdma_switch_os": "eos",
            "roce_switch_qos_ports": ["Ethernet1"],
            "rdma_roce_policy": {"mtu": 9216},
        },
        "storm_50ms": {**local, "rdma_roce_policy": {"pfc_watchdog": {"detection_time_ms": 50}}},
        "wred_drop_string": {**local, "rdma_roce_policy": {"wred_drop": "yes"}},
        "dscps_swapped": {**local, "rdma_roce_policy": {"roce_dscp": 48, "cnp_dscp": 26}},
    }
    inv = tmp_path / "hosts.yml"
    inv.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "children": {
                        "switches": {"hosts": hosts, "vars": {"rdma_switch_os": "cumulus"}}
                    }
                }
            }
        )
    )
    playbook = tmp_path / "bad.yml"
    playbook.write_text(BAD_PLAY)
    proc = run_playbook("-i", str(inv), str(playbook), "--check", timeout=300)
    out = proc.output
    assert proc.returncode != 0
    expected = {
        "uplinks_left_out": "of uplinks_left_out must include its uplinks swp51 (",
        "uplinks_unset": "roce_switch_qos_uplinks is not set for uplinks_unset",
        "bad_os": "rdma_switch_os",
        "no_ports": "roce_switch_qos_ports must list",
        "ports_a_word": "or be all (every port of the switch); got",
        "wrong_port_names": "roce_switch_qos_ports must list",
        "two_lossless": "rdma_roce_policy.pfc_priorities",
        "watchdog_forward": "rdma_roce_policy.pfc_watchdog.action must be one of drop on cumulus",
        "no_password": "roce_switch_qos_nvue_password",
        "sonic_202111": "roce_switch_qos_min_versions.sonic must be a SONiC release of 202205",
        "sonic_traditional_100m": "of sonic_traditional_100m must be among 5, 40, 300 m",
        "sonic_traditional_default": "of sonic_traditional_default must be among 5, 40, 300 m",
        "eos_mtu_9216": "rdma_roce_policy.mtu must be at most 9214 on eos",
        "storm_50ms": "rdma_roce_policy.pfc_watchdog.detection_time_ms must be 80-8000 ms",
        "wred_drop_string": "rdma_roce_policy.wred_drop must be true or false",
        "dscps_swapped": "rdma_roce_policy.roce_dscp and rdma_roce_policy.cnp_dscp",
    }
    for host, words in expected.items():
        assert recap(proc, host)["failed"] == 1, host
        assert recap(proc, host)["changed"] == 0, host
        failure = [m for m in failure_messages(proc) if m.startswith(f"{host}: ")]
        assert failure and words in failure[0], (host, failure)
    assert "junos" in out
    assert "Read the Cumulus release" not in out, "nothing may talk to a switch after bad input"
