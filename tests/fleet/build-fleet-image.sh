#!/bin/sh
# The fleet's "GPU server" image: the project's Debian base image (tests/images) plus the
# packages site.yml installs (rdma_stack's inbox list, rdma_nic's mstflint, the dbus
# networkctl needs) fetched once here, so 64 containers do not each fetch them from the
# mirror: rdma_stack then finds them installed (the fleet's "local package repository").
# Tagged rdma-fabric/fleet:bookworm, rebuilt when this file changes (its hash is a label).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
hash=$(sha256sum "$0" | cut -c1-16)
tag=rdma-fabric/fleet:bookworm
if [ "$(docker image inspect -f '{{index .Config.Labels "rdma-fabric.fleet-input"}}' "$tag" 2>/dev/null || true)" = "$hash" ]; then
    exit 0
fi
packages="rdma-core ibverbs-providers ibverbs-utils rdmacm-utils infiniband-diags perftest numactl mstflint python3-jsonpatch"
name=rf-fleet-image-build
docker rm -f "$name" >/dev/null 2>&1 || true
docker run --name "$name" --network bridge rdma-fabric/debian:bookworm sh -ec \
    "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -yq --no-install-recommends $packages && apt-get clean"
docker commit --change "LABEL rdma-fabric.fleet-input=$hash" --change 'CMD ["/lib/systemd/systemd"]' "$name" "$tag" >/dev/null
docker rm "$name" >/dev/null
echo "built $tag ($hash)"
