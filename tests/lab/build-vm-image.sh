#!/bin/sh
# Build the Soft-RoCE lab VM image: a debootstrap Debian root with Debian's kernel,
# written to an ext4 disk image, plus the kernel and initramfs qemu boots directly.
#
#   tests/lab/build-vm-image.sh OUTDIR PUBKEY
#
# OUTDIR gets disk.raw, vmlinuz, initrd.img and ssh_host_ed25519_key.pub. The caller
# (rdmalab.py) keys OUTDIR by a hash of this script, the package list and the key.
set -eu

out=${1:?usage: build-vm-image.sh OUTDIR PUBKEY}
pubkey=${2:?usage: build-vm-image.sh OUTDIR PUBKEY}
suite=${RDMA_LAB_SUITE:-bookworm}
mirror=${RDMA_FABRIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
packages=$(grep -v '^#' "$here/vm-packages.txt" | tr '\n' ',' | sed 's/,*$//')

work="$out.tmp"
rm -rf "$work"
mkdir -p "$work"
root="$work/root"
trap 'rm -rf "$work"' EXIT

debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log"; exit 1; }

cat > "$root/etc/apt/sources.list" <<EOT
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
EOT
chroot "$root" apt-get update -q >> "$work/debootstrap.log" 2>&1
rm -f "$root"/var/cache/apt/archives/*.deb

echo "/dev/vda / ext4 defaults,noatime 0 1" > "$root/etc/fstab"
: > "$root/etc/machine-id"
echo rdmalab > "$root/etc/hostname"

# Root logs in with the lab's key only.
mkdir -p "$root/root/.ssh"
chmod 700 "$root/root/.ssh"
cp "$pubkey" "$root/root/.ssh/authorized_keys"
chmod 600 "$root/root/.ssh/authorized_keys"
rm -f "$root"/etc/ssh/ssh_host_*
ssh-keygen -q -t ed25519 -N '' -f "$root/etc/ssh/ssh_host_ed25519_key"
cat > "$root/etc/ssh/sshd_config.d/rdmalab.conf" <<'EOT'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
EOT

# Networking from the kernel command line, set once at boot by a oneshot unit:
#   eth0 management (qemu user-mode network: 10.0.2.15/24, gateway and DNS from qemu),
#   eth1 fabric: rdmalab.fabric=ADDRESS/PREFIX,MTU
install -m 0755 "$here/rdmalab-net" "$root/usr/local/sbin/rdmalab-net"
cat > "$root/etc/systemd/system/rdmalab-net.service" <<'EOT'
[Unit]
Description=rdma-fabric lab networking from the kernel command line
DefaultDependencies=no
Before=network.target ssh.service
Wants=network.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/rdmalab-net

[Install]
WantedBy=multi-user.target
EOT
ln -sf /etc/systemd/system/rdmalab-net.service \
    "$root/etc/systemd/system/multi-user.target.wants/rdmalab-net.service"
echo "nameserver 10.0.2.3" > "$root/etc/resolv.conf"
# Nothing in the lab waits on services it does not need.
for unit in getty@tty1.service apt-daily.timer apt-daily-upgrade.timer \
    e2scrub_all.timer fstrim.timer systemd-timesyncd.service; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

cp "$root"/boot/vmlinuz-* "$work/vmlinuz"
cp "$root"/boot/initrd.img-* "$work/initrd.img"
cp "$root/etc/ssh/ssh_host_ed25519_key.pub" "$work/ssh_host_ed25519_key.pub"
mkfs.ext4 -q -F -L rdmalab -d "$root" "$work/disk.raw" "${RDMA_LAB_DISK_SIZE:-4G}"
rm -rf "$root"
trap - EXIT
rm -rf "$out"
mv "$work" "$out"
