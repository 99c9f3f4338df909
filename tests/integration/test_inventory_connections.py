"""Two devices Ansible would reach through one persistent connection, refused by the
preflight (rdma.fabric.inventory_check) before any host is contacted.
test_roce_switch_qos_eos.test_two_leaves_behind_one_address_each_get_their_own_push shows
what happens otherwise, on two eAPI stand-ins."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.plugin_utils import inventory_connections as conn
from test_inventory_rules import preflight

EOS = {"ansible_connection": "ansible.netcommon.httpapi", "ansible_host": "127.0.0.1"}


def test_hosts_told_apart_only_by_the_httpapi_port_share_a_connection():
    hosts = {
        "leaf6": {**EOS, "ansible_httpapi_port": 28771},
        "leaf7": {**EOS, "ansible_httpapi_port": 28772},
    }
    assert conn.shared_connections(hosts) == [
        {
            "connection": "ansible.netcommon.httpapi",
            "address": "127.0.0.1",
            "port": None,
            "user": None,
            "hosts": ["leaf6", "leaf7"],
        }
    ]
    hosts["leaf7"]["ansible_port"] = 28772
    assert conn.shared_connections(hosts) == []


def test_what_keys_a_connection_and_what_does_not():
    # Different users, addresses (ansible_host falls back to the host's name), or a
    # connection Ansible does not keep open: no clash.
    assert conn.shared_connections({"a": {**EOS, "ansible_user": "x"}, "b": EOS}) == []
    cli = {"ansible_connection": "network_cli"}
    assert conn.shared_connections({"sw1": cli, "sw2": cli}) == []
    assert conn.shared_connections({"sw1": cli, "sw2": {**cli, "ansible_host": "sw1"}}) != []
    ssh = {"ansible_connection": "ssh", "ansible_host": "10.0.0.1"}
    assert conn.shared_connections({"gpu1": ssh, "gpu2": ssh}) == []
    # ansible_ssh_host wins over ansible_host, as in Ansible's play context.
    one = {**EOS, "ansible_ssh_host": "10.0.0.9"}
    assert conn.identity("a", one)[1] == "10.0.0.9"
    # A templated value is only known to Ansible: never judged.
    templated = {**EOS, "ansible_port": "{{ ansible_httpapi_port }}"}
    assert conn.shared_connections({"a": templated, "b": templated}) == []


def test_later_layers_override_earlier_ones():
    layers = [{"ansible_port": 1, "other": 0}, {"ansible_port": 2}, {}]
    assert conn.effective(layers, conn.CONNECTION_VARS) == {"ansible_port": 2}


def test_the_preflight_names_both_hosts_and_the_fix(run_cli, tmp_path):
    group = {
        "hosts": {"leaf6": {"ansible_httpapi_port": 1}, "leaf7": {"ansible_httpapi_port": 2}},
        "vars": {**EOS, "ansible_network_os": "arista.eos.eos", "rdma_switch_os": "eos"},
    }
    inventory = {"all": {"children": {"switches": {"children": {"eos_switches": group}}}}}
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode != 0
    assert (
        "leaf6, leaf7 share one persistent connection (ansible.netcommon.httpapi to"
        " 127.0.0.1, no ansible_port, no user): Ansible keys it by address, ansible_port and"
        " user, so one host's tasks would run on the other; give each its own ansible_port"
        in result["msg"]
    ), result["msg"]
    # The port set per host, or once for the group as a template of the httpapi port.
    group["vars"]["ansible_port"] = "{{ ansible_httpapi_port }}"
    proc, result = preflight(run_cli, tmp_path, inventory)
    assert proc.returncode == 0, result["msg"]
    assert result["shared_connections"] == []
