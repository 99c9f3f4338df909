#!/bin/sh
# Make sure a Docker engine answers. Starts dockerd in the background when none runs
# (CI machines have no init system running services). Log: $RDMA_FABRIC_CACHE/dockerd.log
set -eu

cache=${RDMA_FABRIC_CACHE:-/var/cache/rdma-fabric}
if docker info >/dev/null 2>&1; then
    echo "ensure-dockerd: docker engine is running"
    exit 0
fi
command -v dockerd >/dev/null || { echo "ensure-dockerd: dockerd not installed (make deps)" >&2; exit 1; }
mkdir -p "$cache"
echo "ensure-dockerd: starting dockerd (log: $cache/dockerd.log)"
nohup dockerd >"$cache/dockerd.log" 2>&1 </dev/null &
i=0
while ! docker info >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt 60 ]; then
        echo "ensure-dockerd: dockerd did not answer within 60 s" >&2
        tail -n 20 "$cache/dockerd.log" >&2
        exit 1
    fi
    sleep 1
done
echo "ensure-dockerd: docker engine is running"
