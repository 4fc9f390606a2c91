#!/usr/bin/env bash
# Builds an initramfs (cpio.gz) that runs one test command in a guest kernel.
#
#   tests/matrix/mkinitramfs.sh -o OUT.cpio.gz -c COMMAND
#       [-b BINARY[:GUEST_PATH]]...   executable plus every shared library it
#                                     needs (found with ldd) and the loader
#       [-d DIR[:GUEST_DIR]]...       a data directory, copied recursively
#       [-f FILE[:GUEST_PATH]]...     a single file, copied as is
#       [-m MODULES_DIR]              kernel modules (*.ko and an "order" file
#                                     naming them, dependencies first), loaded
#                                     with insmod at boot; see kernels.sh
#
# GUEST_PATH defaults to /bin/NAME for binaries, /NAME for directories and
# files; a GUEST_PATH ending in "/" means "into this directory".
# COMMAND is a shell command line, run by busybox sh from / with PATH set.
#
# The guest's /init (busybox-static) mounts proc, sysfs, devtmpfs, tracefs,
# debugfs, bpffs and a tmpfs /tmp, runs COMMAND with stdout/stderr on the
# console between the lines
#     @@UT-MATRIX-BEGIN@@
#     @@UT-MATRIX-END status=N@@
# then powers off (poweroff -f; qemu runs with -no-reboot, so a panic also
# ends it). tests/matrix/run-in-vm.sh reads the status from the END marker:
# qemu's isa-debug-exit port is not reachable from a shell because Debian's
# kernels lack /dev/port (CONFIG_DEVPORT off). Debian's kernels build in
# BTF, tracefs, BPF, io_uring and ext4; block drivers (loop, null_blk,
# virtio_blk) are modules, hence -m. Module load failures are listed in
# /run/ut-modules.log in the guest.
set -euo pipefail

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }

out='' command='' modules='' binaries=() dirs=() files=()
while getopts "o:c:b:d:f:m:" opt; do
  case $opt in
    o) out=$OPTARG ;;
    c) command=$OPTARG ;;
    b) binaries+=("$OPTARG") ;;
    d) dirs+=("$OPTARG") ;;
    f) files+=("$OPTARG") ;;
    m) modules=$OPTARG ;;
    *) die "usage: $0 -o OUT.cpio.gz -c COMMAND [-b BIN[:PATH]]... [-d DIR[:PATH]]... [-f FILE[:PATH]]... [-m MODULES_DIR]" ;;
  esac
done
[ -n "$out" ] || die "missing -o OUT.cpio.gz"
[ -n "$command" ] || die "missing -c COMMAND"

busybox=$(command -v busybox || true)
for candidate in /bin/busybox /usr/bin/busybox "$busybox"; do
  # Only a static busybox runs in the guest without libraries.
  if [ -n "$candidate" ] && [ -x "$candidate" ] && ! ldd "$candidate" >/dev/null 2>&1; then
    busybox=$candidate; break
  fi
  busybox=
done
[ -n "$busybox" ] || die "no static busybox (apt-get install busybox-static)"
command -v cpio >/dev/null || die "cpio not installed"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,root,lib,lib64,usr/bin,usr/lib}

cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# "SRC:DEST" -> destination path in the guest for SRC.
guest_path() {
  local spec=$1 default_dir=$2 src dest
  src=${spec%%:*}
  if [ "$spec" = "$src" ]; then dest=$default_dir/; else dest=${spec#*:}; fi
  case $dest in */) dest=$dest$(basename "$src") ;; esac
  echo "$dest"
}

# Copy a file to the same absolute path inside the guest (for libraries).
copy_same_path() {
  local f=$1
  [ -e "$root$f" ] && return 0
  mkdir -p "$root$(dirname "$f")"
  cp -L "$f" "$root$f"
}

for spec in "${binaries[@]}"; do
  src=${spec%%:*}
  [ -x "$src" ] || die "not an executable: $src"
  dest=$(guest_path "$spec" /bin)
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$src" "$root$dest"
  # ldd prints "name => /path (addr)" for libraries and "/path (addr)" for
  # the loader; static binaries print "not a dynamic executable".
  if ldd "$src" >/dev/null 2>&1; then
    while read -r lib; do
      copy_same_path "$lib"
    done < <(ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
  fi
done

for spec in "${dirs[@]}"; do
  src=${spec%%:*}
  [ -d "$src" ] || die "not a directory: $src"
  dest=$(guest_path "$spec" "")
  mkdir -p "$root$dest"
  cp -a "$src/." "$root$dest/"
done

for spec in "${files[@]}"; do
  src=${spec%%:*}
  [ -f "$src" ] || die "not a file: $src"
  dest=$(guest_path "$spec" "")
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$src" "$root$dest"
done

if [ -n "$modules" ]; then
  [ -f "$modules/order" ] || die "no $modules/order"
  mkdir -p "$root/lib/modules/ut"
  while read -r name; do
    cp "$modules/$name.ko" "$root/lib/modules/ut/" || die "module $name missing in $modules"
  done <"$modules/order"
  cp "$modules/order" "$root/lib/modules/ut/order"
fi

printf '%s\n' "$command" >"$root/test-command"

cat >"$root/init" <<'INIT'
#!/bin/sh
# Guest init for the uring-trace kernel matrix: mount, run /test-command,
# report its status, power off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# An initramfs without /dev/console starts init with no stdio: use the
# console from devtmpfs.
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
# Keep kernel messages from interleaving with the test output.
dmesg -n 1
if [ -f /lib/modules/ut/order ]; then
  while read -r name; do
    insmod "/lib/modules/ut/$name.ko" 2>>/run/ut-modules.log ||
      echo "insmod $name failed" >>/run/ut-modules.log
  done </lib/modules/ut/order
fi
hostname guest
cd /
echo "@@UT-MATRIX-BEGIN@@"
sh /test-command
status=$?
echo "@@UT-MATRIX-END status=$status@@"
sync
poweroff -f
INIT
chmod +x "$root/init"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: wrote $out ($(du -k "$out" | cut -f1) KiB)" >&2
