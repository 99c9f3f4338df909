"""rdma_verify's cabling check in a whole role run.

Three hosts, each this machine with its own sysfs tree (test_rdma_verify_role's
build_host: two RoCE rails on netdevs ens0/ens1), the perftest stand-in, and the lldpcli
stand-in (tests/standins/lldpcli.py, answering per RDMA_LLDP_HOST): lab3's two rail
cables are swapped between the leaves. The check runs before any traffic, names one
finding for lab3, lab3's tests are not run with that reason, the others run, and the
report has a cabling table per leaf. A bad plan is refused before any test.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from test_rdma_verify_role import three_hosts

STANDINS = Path(__file__).resolve().parents[1] / "standins"
LLDPCLI = STANDINS / "lldpcli.py"

PLAY = """\
- name: rdma_verify with a cabling plan
  hosts: rdma_hosts
  gather_facts: false
  environment:
    RDMA_LLDP_HOST: "{{ inventory_hostname }}"
  roles:
    - role: rdma_verify
"""


def setup(tmp_path, lldp):
    (tmp_path / "lldp.json").write_text(json.dumps(lldp))
    env = three_hosts(tmp_path, tools={"lldpcli": LLDPCLI})
    (tmp_path / "verify.yml").write_text(PLAY)
    return dict(env, RDMA_LLDP_STANDIN=str(tmp_path / "lldp.json"))


def extra(tmp_path, **more):
    return {
        "rdma_verify_report_dir": str(tmp_path / "reports"),
        "rdma_verify_check_qos": False,
        "rdma_verify_min_gbps": 0.005,
        "rdma_verify_duration": 1,
        "rdma_verify_listen_timeout": 10,
        "rdma_verify_isolate": False,
        "rdma_verify_cabling_wait": 0,
        "rdma_rails": [
            {"name": "rail0", "netdev": "ens0", "subnet": "127.10.0.0/24", "leaf": "leaf-rail0"},
            {"name": "rail1", "netdev": "ens1", "subnet": "127.10.1.0/24", "leaf": "leaf-rail1"},
        ],
        "rdma_cabling_ports": {
            "leaf-rail0": {1: "swp1", 2: "swp2", 3: "swp3"},
            "leaf-rail1": {1: "swp1", 2: "swp2", 3: "swp3"},
        },
        **more,
    }


LLDP = {
    "lab1": {"ens0": ["leaf-rail0", "swp1"], "ens1": ["leaf-rail1", "swp1"]},
    "lab2": {"ens0": ["leaf-rail0", "swp2"], "ens1": ["leaf-rail1", "swp2"]},
    # lab3's cables swapped: its rail0 netdev on leaf-rail1, its rail1 netdev on leaf-rail0.
    "lab3": {"ens0": ["leaf-rail1", "swp3"], "ens1": ["leaf-rail0", "swp3"]},
}


def test_a_swapped_pair_is_one_finding_and_its_tests_are_not_run(
    run_playbook, tmp_path, verify_ports
):
    env = setup(tmp_path, LLDP)
    proc = run_playbook(
        "-i",
        str(tmp_path / "hosts.ini"),
        str(tmp_path / "verify.yml"),
        "-e",
        json.dumps(extra(tmp_path, **verify_ports)),
        env=env,
        timeout=600,
    )
    output = proc.output
    assert (tmp_path / "reports" / "latest").exists(), output[-6000:]
    results = json.loads((tmp_path / "reports" / "latest" / "results.json").read_text())
    cabling = [c for c in results["checks"] if c["check"] == "cabling"]
    failed = [c for c in cabling if not c["ok"]]
    assert [(c["host"], c["detail"]) for c in failed] == [
        (
            "lab3",
            "lab3 rail0 (mlx5_30) reaches leaf-rail1 swp3; the plan says leaf-rail0: "
            "rails 0 and 1 look swapped",
        )
    ], output[-4000:]
    assert len(cabling) == 5  # lab1 and lab2: 2 each as planned, lab3: one finding
    assert {c["detail"] for c in cabling if c["host"] == "lab1"} == {
        "cabled to leaf-rail0 swp1 as planned",
        "cabled to leaf-rail1 swp1 as planned",
    }
    lab3 = [p for p in results["pairs"] if "lab3" in (p["server"], p["client"])]
    assert lab3 and all("cabling: rails 0 and 1 look swapped" in (p["error"] or "") for p in lab3)
    # Skipped, not failed: the swap is the one finding, not "bad HCAs" on lab3's rails.
    assert {p["outcome"] for p in lab3} == {"not run"}, lab3
    assert results["summary"]["bad_rails"] == [] and results["summary"]["bad_hosts"] == []
    assert results["summary"]["tests_failed"] == 0, results["summary"]
    # lab1-lab2 ran on both rails in both directions (every host sends and receives on
    # every rail), passed, or flaky under a loaded machine.
    others = [
        p
        for p in results["pairs"]
        if "lab3" not in (p["server"], p["client"]) and p["phase"] == "main"
    ]
    assert len(others) == 4 and all(p["outcome"] in ("passed", "flaky") for p in others), others
    assert {(p["client"], p["server"], p["id"].rsplit("/", 1)[1]) for p in others} == {
        (c, s, r) for c, s in (("lab1", "lab2"), ("lab2", "lab1")) for r in ("rail0", "rail1")
    }, others
    markdown = (tmp_path / "reports" / "latest" / "report.md").read_text()
    assert "## Cabling" in markdown and "### leaf-rail0" in markdown
    assert "| swp3 | lab3 | rail0 | mlx5_30 | ens0 | leaf-rail1 swp3 | SWAPPED:" in markdown
    assert "| swp1 | lab1 | rail0 | mlx5_10 | ens0 | leaf-rail0 swp1 | ok:" in markdown
    assert proc.returncode == 2


def test_a_bad_port_map_is_refused_before_any_test(run_playbook, tmp_path):
    env = setup(tmp_path, LLDP)
    bad = extra(tmp_path, rdma_cabling_ports={"leaf-rail0": {1: "swp1", 2: "swp1", 3: "swp3"}})
    proc = run_playbook(
        "-i",
        str(tmp_path / "hosts.ini"),
        str(tmp_path / "verify.yml"),
        "-e",
        json.dumps(bad),
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2, proc.output
    assert "rdma_cabling_ports.leaf-rail0: port swp1 is mapped twice" in proc.output
    assert "Plan this host's tests" not in proc.output
    assert not (tmp_path / "reports").exists()


def test_preflight_refuses_a_bad_cabling_plan_before_any_host(run_cli, tmp_path):
    """site.yml's first play (playbooks/preflight.yml) runs the same plan check on the
    controller: a host index missing from a leaf's port map stops the run there."""
    import yaml
    from role_play import playbook_json

    inv = tmp_path / "inventory"
    (inv / "group_vars").mkdir(parents=True)
    hosts = {
        f"gpu-0{i}": {"ansible_connection": "local", "rdma_rail_host_index": i} for i in (1, 2)
    }
    (inv / "hosts.yml").write_text(
        yaml.safe_dump({"all": {"children": {"rdma_hosts": {"hosts": hosts}}}})
    )
    (inv / "group_vars" / "all.yml").write_text(
        yaml.safe_dump(
            {
                "rdma_rails": [
                    {
                        "name": "rail0",
                        "device": "mlx5_0",
                        "subnet": "10.0.0.0/24",
                        "leaf": "leaf-rail0",
                    },
                ],
                "rdma_cabling_ports": {"leaf-rail0": {1: "swp1"}},
            }
        )
    )
    proc, doc = playbook_json(run_cli, "-i", str(inv), "rdma.fabric.preflight")
    assert proc.returncode != 0, proc.stdout
    out = proc.stdout + proc.stderr
    assert "gpu-02: rdma_rail_host_index 2 is missing from rdma_cabling_ports.leaf-rail0" in out
    assert "gpu-01" not in doc["stats"]


# --- the leaves' own LLDP tables (verify.yml's switch play) ----------------------------


def test_the_leaves_own_lldp_tables_name_a_swap_the_host_cannot_see(
    run_playbook, tmp_path, verify_ports, tls
):
    """The collection's verify.yml with two managed leaves: leaf-rail0 a Cumulus switch
    (the NVUE API stand-in, its interfaces' operational LLDP neighbours) and leaf-rail1 a
    SONiC switch (the redis-dump stand-in over APPL_DB's LLDP_ENTRY_TABLE). The hosts'
    lldpd hear nothing; the leaves see lab3's rail netdevs swapped: rail0's ens0 on
    leaf-rail1 Ethernet8, rail1's ens1 on leaf-rail0 swp3. The switch play reads each leaf
    once, the check names the pair as one finding, and lab1 and lab2 are cabled as
    planned, each on its mapped port."""
    sys.path.insert(0, str(STANDINS))
    from nvue_api import NvueStandin

    # verify.yml sets no RDMA_LLDP_HOST per host: every host's lldpcli hears nothing, so
    # the leaves' tables alone judge (host and switch readings merged: unit-tested).
    host_lldp = {}
    env = setup(tmp_path, host_lldp)

    def neighbor(host, port):
        return {"1": {"chassis": {"system-name": host}, "port": {"name": port}}}

    # lab2's lldpd sends a MAC port ID (lldpd's default): its description names the netdev.
    mac_port = {
        "1": {
            "chassis": {"system-name": "lab2"},
            "port": {"name": "02:00:00:00:02:00", "type": "mac", "description": "ens0"},
        }
    }

    nvue = NvueStandin(applied={"system": {"build": "Cumulus Linux 5.9.1"}})
    nvue.operational = {
        "interface": {
            "swp1": {"lldp": {"neighbor": neighbor("lab1", "ens0")}},
            "swp2": {"lldp": {"neighbor": mac_port}},
            "swp3": {"lldp": {"neighbor": neighbor("lab3", "ens1")}},
            "swp4": {"lldp": {}},
        }
    }
    nvue.start(*tls)
    appl_db = {
        f"LLDP_ENTRY_TABLE:{port}": {
            "lldp_rem_sys_name": host,
            "lldp_rem_port_id_subtype": "5",
            "lldp_rem_port_id": netdev,
            "lldp_rem_port_desc": netdev,
        }
        for port, host, netdev in (
            ("Ethernet0", "lab1", "ens1"),
            ("Ethernet4", "lab2", "ens1"),
            ("Ethernet8", "lab3", "ens0"),
        )
    }
    (tmp_path / "appl_db.json").write_text(json.dumps(appl_db))
    hosts = (tmp_path / "hosts.ini").read_text()
    (tmp_path / "hosts.ini").write_text(
        hosts
        + "\n[switches]\n"
        + f"leaf-rail0 ansible_connection=local ansible_host=127.0.0.1 rdma_switch_os=cumulus "
        f"roce_switch_qos_nvue_port={nvue.port} roce_switch_qos_ca_path={tls[0]} "
        "roce_switch_qos_use_proxy=false roce_switch_qos_nvue_password=CumulusLinux!\n"
        "leaf-rail1 ansible_connection=local rdma_switch_os=sonic "
        "roce_switch_qos_sonic_become=false\n"
    )
    more = extra(
        tmp_path,
        rdma_cabling_ports={
            "leaf-rail0": {1: "swp1", 2: "swp2", 3: "swp3"},
            "leaf-rail1": {1: "Ethernet0", 2: "Ethernet4", 3: "Ethernet8"},
        },
        **verify_ports,
    )
    try:
        proc = run_playbook(
            "-i",
            str(tmp_path / "hosts.ini"),
            "rdma.fabric.verify",
            "-e",
            json.dumps(more),
            env={
                **env,
                "PATH": os.pathsep.join([str(STANDINS / "sonic"), env["PATH"]]),
                "SONIC_STANDIN_APPL_DB": str(tmp_path / "appl_db.json"),
                "RDMA_LLDP_HOST": "",
            },
            timeout=600,
        )
    finally:
        nvue.stop()
    output = proc.output
    # The Cumulus leaf: one read per mapped port, its operational view.
    reads = sorted(path for method, path, query in nvue.log if "lldp" in path)
    assert reads == [f"/nvue_v1/interface/swp{i}/lldp/neighbor" for i in (1, 2, 3)], nvue.log
    assert all(q.get("rev") == "operational" for _m, p, q in nvue.log if "lldp" in p), nvue.log
    results = json.loads((tmp_path / "reports" / "latest" / "results.json").read_text())
    cabling = [c for c in results["checks"] if c["check"] == "cabling"]
    failed = [(c["host"], c["detail"]) for c in cabling if not c["ok"]]
    assert failed == [
        (
            "lab3",
            "lab3 rail0 (mlx5_30) reaches leaf-rail1 Ethernet8; the plan says leaf-rail0: "
            "rails 0 and 1 look swapped",
        )
    ], output[-5000:]
    assert {(c["host"], c["detail"]) for c in cabling if c["ok"]} == {
        ("lab1", "cabled to leaf-rail0 swp1 as planned"),
        ("lab1", "cabled to leaf-rail1 Ethernet0 as planned"),
        ("lab2", "cabled to leaf-rail0 swp2 as planned"),
        ("lab2", "cabled to leaf-rail1 Ethernet4 as planned"),
    }
    assert proc.returncode == 2, output[-3000:]
