#!/usr/bin/env bash
# Fetches the Debian kernel images that the kernel matrix boots, and the
# tools to boot them (qemu, busybox-static, cpio).
#
#   tests/matrix/kernels.sh [SERIES...]      (default: 5.10 6.1 6.12)
#
# Prints one line per kernel found on stdout: "SERIES RELEASE DEBIAN_VERSION VMLINUZ"
# (e.g. "6.1 6.1.0-56-cloud-amd64 6.1.192-2 /var/cache/.../vmlinuz").
# Progress goes to stderr. Exits 1 if any series could not be had.
#
# Only the kernel image, its config (to record what it was built with) and a
# few modules are kept; nothing is installed. The modules are the block
# drivers the guests need, which Debian builds as modules: $MATRIX_MODULES
# and what they depend on, decompressed, in VMLINUZ's directory under
# modules/ with modules/order listing them dependencies first (mkinitramfs.sh
# -m loads them at boot). Images are cached outside the repository in
# $UT_KERNEL_CACHE (default /var/cache/uring-trace/kernels, or
# ~/.cache/uring-trace/kernels when /var/cache is not writable) and reused:
# the network is needed only when the archive moved to a newer build.
set -euo pipefail

log() { echo "kernels: $*" >&2; }
die() { echo "kernels: error: $*" >&2; exit 1; }

# sudo -n: never wait for a password (tests run unattended).
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; else SUDO=; fi
# Once per run and apt state (the host's, or a private suite's: APT_OPTS),
# even when it fails (offline).
APT_UPDATED=" "
apt_update_once() {
  local key=${SUITE:-host}
  case $APT_UPDATED in *" $key "*) return 0 ;; esac
  APT_UPDATED="$APT_UPDATED$key "
  log "apt-get update ($key)"
  $SUDO apt-get "${APT_OPTS[@]}" update -qq >&2
}

# Install the host tools when missing (idempotent: asks apt only for what is
# not installed).
install_tools() {
  local pkgs=(qemu-system-x86 busybox-static cpio xz-utils e2fsprogs) missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing: ${missing[*]}"
  apt_update_once || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || die "could not install ${missing[*]}"
}

pick_cache_dir() {
  if [ -n "${UT_KERNEL_CACHE:-}" ]; then echo "$UT_KERNEL_CACHE"; return; fi
  if mkdir -p /var/cache/uring-trace/kernels 2>/dev/null && [ -w /var/cache/uring-trace/kernels ]; then
    echo /var/cache/uring-trace/kernels
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/uring-trace/kernels"
  fi
}

# Series from an older Debian release: the suite that has them.  Debian 12
# does not carry 5.10, Debian 11 (bullseye) does; its main suite is frozen
# at the last point release (5.10.0-32, 5.10.223), so the image never moves.
# bullseye-security (newer 5.10 builds) is left out for that reason.
extra_suite() {
  case $1 in
    5.10) echo bullseye ;;
  esac
}

# SUITE, APT_OPTS: the suite and apt options for the current series.  Empty for the host's
# own sources.  For a series from another suite, a private apt state under
# the cache (its own sources list, lists and package cache), so that the
# suite is seen only by these look-ups and downloads: the host's sources,
# pins and package choices stay as they are.
SUITE= APT_OPTS=()
use_suite() {
  local dir
  SUITE=$1 APT_OPTS=()
  [ -n "$SUITE" ] || return 0
  dir=$CACHE/apt-$SUITE
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/parts"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $SUITE main" \
    >"$dir/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=$dir/parts"
            -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
            -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
}

# The first "Depends: linux-image-..." of a meta package, if apt knows it.
meta_target() {
  apt-cache "${APT_OPTS[@]}" depends --no-recommends --no-suggests "$1" 2>/dev/null |
    awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}

# Name of the image package for a series (e.g. 6.1 -> linux-image-6.1.0-56-cloud-amd64).
# Exact versions move, so go through the meta packages: Debian 12 has
# linux-image-cloud-amd64 (-> 6.1) and linux-image-6.12-cloud-amd64 (-> 6.12,
# from bookworm-security). The cloud flavour is the smallest; the generic
# -amd64 flavour is the fallback.
resolve_package() {
  local series=$1 meta target
  for meta in "linux-image-$series-cloud-amd64" linux-image-cloud-amd64 \
              "linux-image-$series-amd64" linux-image-amd64; do
    target=$(meta_target "$meta")
    case "$target" in
      linux-image-"$series".*|linux-image-"$series"-*) echo "$target"; return 0 ;;
    esac
  done
  return 1
}

# Download one image package and keep its vmlinuz and config in $dir.
fetch_package() {
  local pkg=$1 dir=$2 tmp
  tmp=$(mktemp -d)
  log "downloading $pkg"
  chown _apt "$tmp" 2>/dev/null || true   # apt downloads as user _apt when root
  if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" download -qq "$pkg" >&2); then
    rm -rf "$tmp"; return 1
  fi
  dpkg-deb -x "$tmp"/*.deb "$tmp/root"
  local vmlinuz
  vmlinuz=$(find "$tmp/root/boot" -name 'vmlinuz-*' | head -n 1)
  [ -n "$vmlinuz" ] || { rm -rf "$tmp"; die "$pkg has no /boot/vmlinuz-*"; }
  local release=${vmlinuz##*/vmlinuz-}
  mkdir -p "$dir.tmp"
  cp "$vmlinuz" "$dir.tmp/vmlinuz"
  cp "$tmp/root/boot/config-$release" "$dir.tmp/config" 2>/dev/null || true
  # shellcheck disable=SC2086  # a list of module names
  copy_modules "$tmp/root/lib/modules/$release" "$dir.tmp/modules" $MATRIX_MODULES
  {
    echo "package=$pkg"
    echo "release=$release"
    echo "debian_version=$(dpkg-deb -f "$tmp"/*.deb Version)"
    echo "modules=$MATRIX_MODULES"
  } >"$dir.tmp/info"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  rm -rf "$tmp"
}

# The block drivers the guests need (built as modules by Debian): loop and
# null_blk devices, and virtio_pci + virtio_blk for a disk from qemu.
MATRIX_MODULES="loop null_blk virtio_pci virtio_blk"

# copy_modules MODULES_ROOT DEST NAME...: each module and its dependencies
# (from the "depends=" entry of its .modinfo), decompressed into DEST, with
# DEST/order listing them dependencies first. Modules built into the kernel
# have no file and need no loading.
copy_modules() {
  local src=$1 dest=$2 name
  shift 2
  mkdir -p "$dest"
  : >"$dest/order"
  for name in "$@"; do add_module "$src" "$dest" "$name"; done
}
add_module() {
  local src=$1 dest=$2 name=${3//-/_} file deps dep
  grep -qx "$name" "$dest/order" && return 0
  file=$(find "$src" \( -name "$name.ko" -o -name "$name.ko.xz" -o -name "$name.ko.zst" \
          -o -name "${name//_/-}.ko" -o -name "${name//_/-}.ko.xz" \) | head -n 1)
  [ -n "$file" ] || return 0
  case $file in
    *.xz) xz -dc "$file" >"$dest/$name.ko" ;;
    *.zst) zstd -qdc "$file" >"$dest/$name.ko" ;;
    *) cp "$file" "$dest/$name.ko" ;;
  esac
  deps=$(tr '\0' '\n' <"$dest/$name.ko" | sed -n 's/^depends=//p' | head -n 1 | tr ',' ' ')
  for dep in $deps; do add_module "$src" "$dest" "$dep"; done
  echo "$name" >>"$dest/order"
}

info_field() { sed -n "s/^$2=//p" "$1/info"; }

# A complete cache entry: image, info, and the current module list.
cached() {
  [ -f "$1/vmlinuz" ] && [ -f "$1/info" ] && [ "$(info_field "$1" modules)" = "$MATRIX_MODULES" ]
}

# Newest cached image of a series: used when apt cannot resolve (offline).
newest_cached() {
  local series=$1
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d \
       \( -name "linux-image-$series.*" -o -name "linux-image-$series-*" \) |
    while read -r d; do [ -f "$d/vmlinuz" ] && [ -f "$d/info" ] && echo "$d"; done |
    sort -V | tail -n 1
}

get_kernel() {
  local series=$1 pkg dir
  use_suite "$(extra_suite "$series")"
  pkg=$(resolve_package "$series") || true
  if [ -z "$pkg" ]; then
    # apt's lists may be stale or missing (a private suite's are empty at
    # first): refresh once, then retry.
    apt_update_once || true
    pkg=$(resolve_package "$series") || true
  fi
  if [ -n "$pkg" ]; then
    dir="$CACHE/$pkg"
    if ! cached "$dir"; then
      fetch_package "$pkg" "$dir" || { apt_update_once && pkg=$(resolve_package "$series") &&
        dir="$CACHE/$pkg" && { cached "$dir" || fetch_package "$pkg" "$dir"; }; } || dir=
    fi
  fi
  if [ -z "${dir:-}" ] || [ ! -f "$dir/vmlinuz" ]; then
    dir=$(newest_cached "$series")
    if [ -z "$dir" ]; then
      echo "kernels: error: no kernel for series $series: not in the archive and not cached in $CACHE" >&2
      return 1
    fi
    log "using cached $(basename "$dir") (archive lookup failed)"
  fi
  echo "$series $(info_field "$dir" release) $(info_field "$dir" debian_version) $dir/vmlinuz"
}

install_tools
CACHE=$(pick_cache_dir)
mkdir -p "$CACHE"
[ $# -gt 0 ] || set -- 5.10 6.1 6.12
# A missing series does not stop the others; the exit status tells.
status=0
for series in "$@"; do
  get_kernel "$series" || status=1
done
exit $status
