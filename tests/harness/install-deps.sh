#!/bin/sh
# Install what the tests need on a fresh Debian/Ubuntu machine (run as root, no stdin).
# Idempotent and quick when everything is already there.
set -eu

# docker + debootstrap: Molecule images; qemu + vde2 + e2fsprogs + ssh: the Soft-RoCE lab;
# mstflint: the controller reads firmware images (rdma_nic, firmware_images_info tests).
# opensm + ibsim-utils + infiniband-diags: the real OpenSM on ibsim's simulated fabric
# (tests/integration/test_opensm_ibsim.py). Debian's opensm postinst enables opensm.service
# (PORTS=ALL); a machine without InfiniBand ports runs no SM from it.
# netplan.io: the rail netplan files through the real `netplan generate --root-dir` into a
# scratch directory (tests/integration/test_rail_netplan_generate.py; nothing in /etc).
# chromium-headless-shell: rdma_verify's report.html opened in a real browser
# (tests/integration/test_verify_html.py: a 64-host report fits 1,600 px).
packages="docker.io debootstrap python3-venv python3-pip git make \
    qemu-system-x86 qemu-utils vde2 e2fsprogs openssh-client mstflint \
    opensm ibsim-utils infiniband-diags netplan.io chromium-headless-shell"
missing=""
for pkg in $packages; do
    dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' \
        || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    # Third-party lists a machine may carry can be unreachable: warn, do not stop.
    apt-get update -q || echo "install-deps: apt-get update reported errors; trying the install anyway" >&2
    apt-get install -y -q --no-install-recommends $missing </dev/null
fi
echo "install-deps: ok ($(echo $packages))"
