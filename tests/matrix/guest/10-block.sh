#!/bin/sh
# Guest test: the block devices the block/iostack tests will trace.
# Modules come from kernels.sh via mkinitramfs.sh -m; the host attaches an
# ext4-formatted scratch disk as virtio (/dev/vda) when mkfs.ext4 exists.
# Leaves the disk mounted on /mnt/disk with a file, for later guest tests.
check() {  # NAME DESCRIPTION COMMAND...
  name=$1 what=$2; shift 2
  if "$@" >/dev/null 2>&1; then echo "PASS block/$name"; else echo "FAIL block/$name: $what"; fi
}
if [ -s /run/ut-modules.log ]; then
  sed 's/^/modules: /' /run/ut-modules.log
fi
check loop "no /dev/loop-control (loop module)" test -e /dev/loop-control
check null_blk "no /dev/nullb0 (null_blk module)" test -b /dev/nullb0
if [ ! -b /dev/vda ]; then
  echo "SKIP block/virtio-disk: no /dev/vda (the host attached no disk)"
  exit 0
fi
mkdir -p /mnt/disk
check ext4-mount "cannot mount /dev/vda as ext4" mount -t ext4 /dev/vda /mnt/disk
# 256 KiB of data, written and read back through the page cache.
check ext4-write "cannot write to /mnt/disk" \
  dd if=/dev/zero of=/mnt/disk/probe-data bs=4096 count=64 conv=fsync
check ext4-read "cannot read /mnt/disk/probe-data" \
  dd if=/mnt/disk/probe-data of=/dev/null bs=4096
grep ' /mnt/disk ' /proc/mounts
exit 0
