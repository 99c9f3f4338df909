"""Shared pytest setup for tests/unit (pure, in-process) and tests/integration (tests
that run the Ansible CLIs, the tools, the stand-ins as processes): the in-repo collection
and the support modules (tests/support) importable, and the fixtures that run the real
Ansible CLIs against this repository."""

from __future__ import annotations

import datetime
import fcntl
import ipaddress
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO_ROOT = TESTS.parent
COLLECTIONS = REPO_ROOT / "collections"
SUPPORT = TESTS / "support"
# Some integration tests reuse a unit test module's builders (test_verify_tests.fabric_of):
# tests/unit importable when only tests/integration runs.
UNIT = TESTS / "unit"

# ansible_collections is a namespace package (the `ansible` distribution ships one
# in site-packages too); appending our directory merges rdma.fabric into it.
for path in (COLLECTIONS, SUPPORT, UNIT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from ansible.module_utils import basic  # noqa: E402
from ansible.module_utils.testing import patch_module_args  # noqa: E402
from playbook_run import run_playbook as _run_playbook  # noqa: E402

ANSIBLE_CFG = REPO_ROOT / "ansible.cfg"
# The roles and playbooks ship in the rdma.fabric collection.
COLLECTION_DIR = REPO_ROOT / "collections/ansible_collections/rdma/fabric"
ROLES_DIR = COLLECTION_DIR / "roles"
PLAYBOOKS_DIR = COLLECTION_DIR / "playbooks"


def ansible_bin(name: str) -> str:
    """The CLI next to this interpreter (the venv pytest runs in), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found next to {sys.executable} or on PATH")
    return found


PORT_BLOCKS, PORT_BLOCK_SIZE, PORT_BLOCK_FIRST = 40, 500, 20000


@pytest.fixture(scope="session")
def port_block():
    """The first TCP port of a block of PORT_BLOCK_SIZE that only this pytest process uses
    for perftest stand-ins (held by a lock file for the session). The stand-ins listen on
    fixed loopback addresses: two test runs on one machine (a helper's worktree beside a
    CI clone) on the role's default ports connected to each other's servers and failed."""
    for number in range(PORT_BLOCKS):
        handle = open(f"/tmp/rdma-fabric-test-ports.{number}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        yield PORT_BLOCK_FIRST + number * PORT_BLOCK_SIZE
        handle.close()
        return
    raise RuntimeError(f"all {PORT_BLOCKS} test port blocks are held by other test runs")


@pytest.fixture
def verify_ports(port_block):
    """rdma_verify's port variables inside this run's block, and a perftest state directory
    of the block's own: runs sharing the role's default directory stopped each other's
    schedules (a new run stops an earlier one still going there)."""
    return {
        "rdma_verify_base_port": port_block,
        "rdma_verify_port_span": PORT_BLOCK_SIZE,
        "rdma_verify_state_dir": f"/tmp/rdma-fabric-perftest.{port_block}",
    }


@pytest.fixture(scope="session")
def ansible_env(tmp_path_factory):
    """Environment for ansible subprocesses: the repo's ansible.cfg, nothing global."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env.update(
        {
            # Relative paths in ansible.cfg (collections_path, roles_path) resolve
            # against the file's directory.
            "ANSIBLE_CONFIG": str(ANSIBLE_CFG),
            # Interpreter discovery may find a shim (pyenv) that cannot run: use ours.
            "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
            # ansible.cfg caches facts in .cache/facts; tests leave no files behind.
            "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.memory",
            "ANSIBLE_LOCAL_TEMP": str(tmp_path_factory.mktemp("ansible-local")),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_DEPRECATION_WARNINGS": "0",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
        }
    )
    return env


@pytest.fixture(scope="session")
def run_cli(ansible_env):
    """Run an ansible CLI from the repository root; returns CompletedProcess."""

    def run(name: str, *args: str, env: dict[str, str] | None = None, timeout: int = 120):
        return subprocess.run(
            [ansible_bin(name), *args],
            cwd=REPO_ROOT,
            env={**ansible_env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return run


@pytest.fixture(scope="session")
def run_playbook(ansible_env):
    """Run ansible-playbook from the repository root through ansible-runner; returns a
    PlaybookRun: returncode, stdout, stderr, output (both) and events (structured)."""

    def run(*args: str, env: dict[str, str] | None = None, timeout: int = 120):
        return _run_playbook(
            ansible_bin("ansible-playbook"),
            list(args),
            env={**ansible_env, **(env or {})},
            cwd=REPO_ROOT,
            timeout=timeout,
        )

    return run


@pytest.fixture
def run_play(request, run_playbook, tmp_path):
    """The test module's ROLE applied in check mode (role_play.check_run) to the module's
    HOSTS (localhost unless it says): run(extra_vars, *args, inventory=None) ->
    (proc, output). A module may define its own run_play."""
    from role_play import role_check_run

    hosts = getattr(request.module, "HOSTS", "localhost")
    return role_check_run(run_playbook, tmp_path, request.module.ROLE, hosts)


@pytest.fixture(scope="session")
def run_module_on_localhost(run_cli):
    """Run one module ad hoc on localhost; returns (CompletedProcess, the host's result).

    env: more environment for the ansible process (e.g. a PATH that puts stand-in
    commands first).
    """

    def run(module: str, module_args: str, *extra: str, env: dict[str, str] | None = None):
        proc = run_cli(
            "ansible",
            "localhost",
            "-i",
            "localhost,",
            "-c",
            "local",
            "-m",
            module,
            "-a",
            module_args,
            *extra,
            env={
                **(env or {}),
                "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
                "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
            },
        )
        # ansible.cfg enables the timer callback, which prints after the JSON document.
        try:
            doc, _ = json.JSONDecoder().raw_decode(proc.stdout.lstrip())
        except ValueError:
            return proc, None
        [play] = doc["plays"]
        [task] = play["tasks"]
        return proc, task["hosts"]["localhost"]

    return run


@pytest.fixture
def module_with_tool(monkeypatch, capsys):
    """Run a module's main() in-process with its commands answered by a stand-in tool.

    ``module_with_tool(module, tool, **defaults)`` returns ``run(check_mode=False,
    diff=False, **args)`` -> the module's result. AnsibleModule.run_command goes to
    ``tool.run(argv)``; get_bin_path finds only ``tool.tool`` (as /usr/bin/NAME): one
    command name, or the names of the commands a stand-in answers for (read at each
    lookup, so a test can take one away).
    """

    def bind(module, tool, **defaults):
        def run_command(self, args, check_rc=False, **kwargs):
            return tool.run(args)

        def get_bin_path(self, name, required=False, opt_dirs=None):
            names = {tool.tool} if isinstance(tool.tool, str) else set(tool.tool)
            return f"/usr/bin/{name}" if name in names else None

        monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
        monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", get_bin_path)

        def run(check_mode=False, diff=False, **args):
            args = {**defaults, **args, "_ansible_check_mode": check_mode, "_ansible_diff": diff}
            with patch_module_args(args), pytest.raises(SystemExit) as exc:
                module.main()
            result = json.loads(capsys.readouterr().out)
            assert (exc.value.code != 0) == bool(result.get("failed")), result
            return result

        run.tool = tool
        return run

    return bind


@pytest.fixture(scope="session")
def tls(tmp_path_factory):
    """A self-signed certificate for 127.0.0.1 (its own CA), made with cryptography: the
    NVUE API stand-in serves HTTPS with it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nvue-standin")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    certfile, keyfile = folder / "cert.pem", folder / "key.pem"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(certfile), str(keyfile)


@pytest.fixture(autouse=True)
def _probes_stay_on_loopback(monkeypatch):
    """The network rule for tests, kept by the schedule's peer probe (perftest_run starts
    peer_probe's probes in this process when a test runs schedule() directly): a probe
    of an address outside loopback fails the test instead of leaving the machine. A test
    that probes a namespace of its own does it in a child process."""
    from ansible_collections.rdma.fabric.plugins.module_utils import peer_probe  # noqa: PLC0415

    real = peer_probe.start

    def start(address, source=None, timeout=5.0, port=peer_probe.PROBE_PORT):
        assert ipaddress.ip_address(address).is_loopback, f"a probe of {address} left loopback"
        return real(address, source, timeout, port)

    monkeypatch.setattr(peer_probe, "start", start)
