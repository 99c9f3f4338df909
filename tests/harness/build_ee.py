"""Build the execution environment (execution-environment.yml) with ansible-builder, once
per set of inputs.

    python tests/harness/build_ee.py        (make ee; prints the image name last)

The image (the first of the definition's options.tags) is labelled with a hash of its
inputs: the definition, this script, the files the rdma.fabric collection ships (its
FILES.json from `ansible-galaxy collection build`: a sha256 per file) and the base
image's id. A second run with the same inputs finds the label and builds nothing.

Python packages come from a wheelhouse, not from the network inside the build: this
machine's pip downloads the pinned packages once into
$RDMA_FABRIC_CACHE/ee/wheels-<hash of the list>, a web server on 127.0.0.1 (a thread of
this process, for the length of the build) serves it, and the build gets PIP_NO_INDEX=1
and PIP_FIND_LINKS as build args (the definition declares them in every stage that runs
pip; they do not stay in the image). The build runs with --network host so its
containers reach that server; apt in the build reaches the Debian mirror as usual.
Nothing is written into the checkout: the build context and wheels live under
$RDMA_FABRIC_CACHE/ee.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import yaml
from ansible_builder.ee_schema import validate_schema

REPO = Path(__file__).resolve().parents[2]
DEFINITION = REPO / "execution-environment.yml"
COLLECTION = REPO / "collections" / "ansible_collections" / "rdma" / "fabric"
CACHE = Path(os.environ.get("RDMA_FABRIC_CACHE", "/var/cache/rdma-fabric")) / "ee"
# ansible-builder's builder stage installs these, unpinned (containerfile.py).
BUILDER_STAGE_PACKAGES = ("bindep", "pyyaml", "packaging")
# A fixed port keeps the build args, and so docker's layer cache, the same between
# builds; another free port is taken when it is in use.
WHEELS_PORT = int(os.environ.get("RDMA_FABRIC_EE_WHEELS_PORT", "18931"))
LABEL = "rdma-fabric.inputs"


def definition() -> dict:
    """The EE definition with ansible-builder's own defaults filled in (options)."""
    ee = yaml.safe_load(DEFINITION.read_text())
    validate_schema(ee)
    return ee


def image_name(ee: dict) -> str:
    return ee["options"]["tags"][0]


def pip_requirements(ee: dict) -> list[str]:
    """Every package pip installs in some stage of the build."""
    deps = ee["dependencies"]
    python = deps.get("python", [])
    if isinstance(python, str):
        python = (DEFINITION.parent / python).read_text().splitlines()
    wanted = [
        deps["ansible_core"]["package_pip"],
        deps["ansible_runner"]["package_pip"],
        *python,
        ee["options"]["container_init"]["package_pip"],
        *BUILDER_STAGE_PACKAGES,
    ]
    return [line.strip() for line in wanted if line.strip() and not line.startswith("#")]


def collection_files_json(workdir: Path) -> bytes:
    """FILES.json of the collection as `ansible-galaxy collection build` ships it."""
    out = workdir / "collection"
    subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-galaxy"),
            "collection",
            "build",
            str(COLLECTION),
            "--output-path",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    (tarball,) = out.glob("rdma-fabric-*.tar.gz")
    with tarfile.open(tarball) as tar:
        return tar.extractfile("FILES.json").read()


def docker_inspect(image: str, template: str) -> str:
    proc = subprocess.run(
        ["docker", "image", "inspect", "-f", template, image],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() if proc.returncode == 0 else ""


def image_inputs(image: str) -> str:
    """The image's inputs label, empty when the image is missing."""
    return docker_inspect(image, f"{{{{ index .Config.Labels {json.dumps(LABEL)} }}}}")


def inputs_hash(ee: dict, files_json: bytes) -> str:
    base = ee["images"]["base_image"]["name"]
    base_id = docker_inspect(base, "{{.Id}}")
    if not base_id:
        raise SystemExit(f"build_ee: base image {base} is missing: run make images")
    digest = hashlib.sha256()
    for part in (DEFINITION.read_bytes(), Path(__file__).read_bytes(), files_json):
        digest.update(hashlib.sha256(part).digest())
    digest.update(base_id.encode())
    return digest.hexdigest()[:16]


def venv_versions() -> str:
    """`pip freeze` of the venv running this: the versions the tests ran with."""
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


def wheelhouse(requirements: list[str]) -> Path:
    """The pinned packages and their dependencies as wheels, downloaded once. Their
    dependencies are held to the versions of this venv (constraints), so the EE runs
    the libraries `make test` ran with."""
    constraints = venv_versions()
    listing = "\n".join(sorted(requirements)) + "\n" + constraints
    key = hashlib.sha256(listing.encode()).hexdigest()[:16]
    wheels = CACHE / f"wheels-{key}"
    if (wheels / ".complete").exists():
        return wheels
    partial = Path(tempfile.mkdtemp(prefix="wheels-", dir=CACHE))
    (partial / "constraints.txt").write_text(constraints)
    print(f"build_ee: pip download {' '.join(requirements)}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:"]
        + ["--constraint", str(partial / "constraints.txt")]
        + ["--dest", str(partial), *requirements],
        check=True,
    )
    (partial / ".complete").touch()
    for old in CACHE.glob("wheels-*"):
        if old != partial:
            shutil.rmtree(old, ignore_errors=True)
    partial.rename(wheels)
    return wheels


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """A web server on 127.0.0.1 listing `directory` (pip's find-links), in a thread."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", WHEELS_PORT), handler)
    except OSError:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def build(ee: dict, inputs: str, workdir: Path) -> None:
    wheels = wheelhouse(pip_requirements(ee))
    log = CACHE / "build.log"
    with serve(wheels) as url, log.open("w") as out:
        command = [
            str(Path(sys.executable).parent / "ansible-builder"),
            "build",
            "--file",
            str(DEFINITION),
            "--context",
            str(workdir / "context"),
            "--container-runtime",
            "docker",
            "--build-arg",
            "PIP_NO_INDEX=1",
            "--build-arg",
            f"PIP_FIND_LINKS={url}",
            "--extra-build-cli-args",
            f"--network host --label {LABEL}={inputs}",
            "--verbosity",
            "3",
        ]
        proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        print(log.read_text()[-6000:], file=sys.stderr)
        raise SystemExit(f"build_ee: ansible-builder failed (rc={proc.returncode}, log: {log})")


def main() -> int:
    ee = definition()
    image = image_name(ee)
    CACHE.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="build-", dir=CACHE) as tmp:
        workdir = Path(tmp)
        inputs = inputs_hash(ee, collection_files_json(workdir))
        if image_inputs(image) == inputs:
            print(f"build_ee: image {image} is current (inputs {inputs})")
        else:
            build(ee, inputs, workdir)
            print(f"build_ee: image {image} built (inputs {inputs})")
    print(f"build_ee: {time.monotonic() - start:.0f} s")
    print(image)
    return 0


if __name__ == "__main__":
    sys.exit(main())
