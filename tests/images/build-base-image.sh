#!/bin/sh
# Build a Debian base image for Molecule's docker driver without any registry:
# debootstrap a root with python3 and systemd, then `docker import` it.
#
#   tests/images/build-base-image.sh SUITE        (bookworm, trixie)
#
# The image is tagged rdma-fabric/debian:SUITE and labelled with a hash of its build
# inputs (this script, the package list, the suite, the mirror). A second run with the
# same inputs finds the label and does nothing; the root tarball is also cached under
# $RDMA_FABRIC_CACHE (default /var/cache/rdma-fabric) so a wiped docker store re-imports
# without a new debootstrap.
set -eu

suite=${1:?usage: build-base-image.sh SUITE}
mirror=${RDMA_FABRIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${RDMA_FABRIC_CACHE:-/var/cache/rdma-fabric}
here=$(cd "$(dirname "$0")" && pwd)
packages=$(grep -v '^#' "$here/base-packages.txt" | tr '\n' ',' | sed 's/,*$//')
tag="rdma-fabric/debian:$suite"

hash=$( (cat "$0" "$here/base-packages.txt"; echo "$suite $mirror") | sha256sum | cut -c1-16)

current=$(docker image inspect -f '{{ index .Config.Labels "rdma-fabric.inputs" }}' "$tag" 2>/dev/null || true)
if [ "$current" = "$hash" ]; then
    echo "image $tag is current (inputs $hash)"
    exit 0
fi

mkdir -p "$cache/images"
tarball="$cache/images/debian-$suite-$hash.tar"
if [ ! -s "$tarball" ]; then
    root=$(mktemp -d "$cache/images/root-$suite.XXXXXX")
    trap 'rm -rf "$root"' EXIT
    echo "debootstrap $suite from $mirror (packages: $packages)"
    debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
        > "$cache/images/debootstrap-$suite.log" 2>&1 \
        || { tail -n 30 "$cache/images/debootstrap-$suite.log"; exit 1; }
    components=main
    {
        echo "deb $mirror $suite $components"
        echo "deb $mirror $suite-updates $components"
        echo "deb http://deb.debian.org/debian-security $suite-security $components"
    } > "$root/etc/apt/sources.list"
    # Package index of every suite above, so roles find packages without a refresh.
    chroot "$root" apt-get update -q >> "$cache/images/debootstrap-$suite.log" 2>&1
    # A container image: no machine id baked in, no downloaded .debs, no getty.
    : > "$root/etc/machine-id"
    rm -f "$root"/var/cache/apt/archives/*.deb
    for unit in getty.target systemd-udevd.service systemd-udevd-control.socket \
        systemd-udevd-kernel.socket systemd-remount-fs.service; do
        ln -sf /dev/null "$root/etc/systemd/system/$unit"
    done
    tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
    trap - EXIT
fi

docker import \
    --change 'ENV container=docker' \
    --change 'CMD ["/lib/systemd/systemd"]' \
    --change "LABEL rdma-fabric.inputs=$hash" \
    "$tarball" "$tag" > /dev/null
# Drop tarballs of older inputs.
find "$cache/images" -name "debian-$suite-*.tar" ! -name "debian-$suite-$hash.tar" -delete
echo "image $tag built (inputs $hash)"
