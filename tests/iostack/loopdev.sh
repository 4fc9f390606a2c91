# Sourceable helper: a file-backed loop device with ext4, mounted on a temporary
# directory and removed when the test's shell exits.
#
#   . tests/iostack/loopdev.sh
#   loopdev_create 64 || { skip name "$LOOPDEV_ERROR"; exit 0; }
#   ... use $LOOPDEV (/dev/loopN), $LOOPDEV_NAME (loopN), $LOOPDEV_MNT (mount point),
#       $LOOPDEV_MAJOR, $LOOPDEV_MINOR ...
#
# loopdev_create SIZE_MB (default 64) needs root, losetup and mkfs.ext4. On failure it
# returns 1 with the reason in $LOOPDEV_ERROR and leaves nothing behind. The image lives
# under $TMP when tests/lib.sh was sourced (else in a fresh /tmp directory). Cleanup runs
# before any EXIT trap that was set earlier (lib.sh's removal of $TMP), so the image is
# unmounted and detached before its directory goes.
# shellcheck shell=bash

LOOPDEV= LOOPDEV_NAME= LOOPDEV_MNT= LOOPDEV_IMG= LOOPDEV_MAJOR= LOOPDEV_MINOR= LOOPDEV_ERROR=
_loopdev_dir=

loopdev_remove() {
  if [ -n "$LOOPDEV_MNT" ] && mountpoint -q "$LOOPDEV_MNT"; then
    umount "$LOOPDEV_MNT" 2>/dev/null || umount -l "$LOOPDEV_MNT"
  fi
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
  [ -n "$_loopdev_dir" ] && rm -rf "$_loopdev_dir"
  LOOPDEV= LOOPDEV_NAME= LOOPDEV_MNT= LOOPDEV_IMG= _loopdev_dir=
  return 0
}

_loopdev_fail() {
  LOOPDEV_ERROR=$1
  loopdev_remove
  return 1
}

loopdev_create() {
  local size_mb=${1:-64}
  if [ "$(id -u)" -ne 0 ]; then LOOPDEV_ERROR="a loop device needs root"; return 1; fi
  local tool
  for tool in losetup mkfs.ext4 mountpoint; do
    command -v "$tool" >/dev/null || { LOOPDEV_ERROR="$tool is not installed"; return 1; }
  done
  _loopdev_dir=$(mktemp -d "${TMP:-/tmp}/loopdev.XXXXXX") || { LOOPDEV_ERROR="mktemp failed"; return 1; }
  # Remove the device when the shell exits, then run the trap that was there before.
  local previous
  previous=$(trap -p EXIT)
  eval "set -- $previous"
  trap "loopdev_remove; ${3:-}" EXIT

  LOOPDEV_IMG=$_loopdev_dir/disk.img
  LOOPDEV_MNT=$_loopdev_dir/mnt
  mkdir "$LOOPDEV_MNT"
  truncate -s "${size_mb}M" "$LOOPDEV_IMG" || { _loopdev_fail "cannot create $LOOPDEV_IMG"; return 1; }
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOPDEV_IMG" || { _loopdev_fail "mkfs.ext4 failed on $LOOPDEV_IMG"; return 1; }
  # Another test may take the free device between the lookup and the attach: retry.
  local attempt
  for attempt in 1 2 3 4 5; do
    LOOPDEV=$(losetup -f --show "$LOOPDEV_IMG" 2>/dev/null) && break
    sleep 0.2
  done
  [ -n "$LOOPDEV" ] || { _loopdev_fail "losetup found no free loop device"; return 1; }
  LOOPDEV_NAME=$(basename "$LOOPDEV")
  mount -t ext4 "$LOOPDEV" "$LOOPDEV_MNT" || { _loopdev_fail "cannot mount $LOOPDEV"; return 1; }
  local numbers
  numbers=$(cat "/sys/block/$LOOPDEV_NAME/dev")
  LOOPDEV_MAJOR=${numbers%%:*}
  LOOPDEV_MINOR=${numbers##*:}
  return 0
}
