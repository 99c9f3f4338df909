#!/bin/sh
# rdma-fabric ib_subnet_manager: installing OpenSM. Until the role has written OpenSM's
# configuration, the package's maintainer scripts may not start it: deb-systemd-invoke
# and invoke-rc.d ask this script first, and 101 means "action forbidden by policy".
# Any other service may start (0). The role removes this file after the installation.
# Called as: policy-rc.d [--quiet] <service or unit> <action> [<runlevel>]
while [ "${1#-}" != "${1:-}" ]; do
    shift
done
case "${1:-}" in
    opensm | opensm.service | opensm@*) exit 101 ;;
esac
exit 0
