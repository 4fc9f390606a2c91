#!/usr/bin/env bash
# Fetches the Debian kernel images that the kernel matrix boots, and the
# tools to boot them (qemu, busybox-static, cpio).
#
#   tests/matrix/kernels.sh [SERIES...]      (default: 6.1 6.12)
#
# Prints one line per kernel on stdout: "SERIES RELEASE DEBIAN_VERSION VMLINUZ"
# (e.g. "6.1 6.1.0-56-cloud-amd64 6.1.192-2 /var/cache/.../vmlinuz").
# Progress goes to stderr.
#
# Only the kernel image (and its config, to record what it was built with) is
# kept; nothing is installed. Images are cached outside the repository in
# $UT_KERNEL_CACHE (default /var/cache/uring-trace/kernels, or
# ~/.cache/uring-trace/kernels when /var/cache is not writable) and reused:
# the network is needed only when the archive moved to a newer build.
set -euo pipefail

log() { echo "kernels: $*" >&2; }
die() { echo "kernels: error: $*" >&2; exit 1; }

# sudo -n: never wait for a password (tests run unattended).
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo -n"; else SUDO=; fi
APT_UPDATED=0
apt_update_once() {
  [ "$APT_UPDATED" -eq 1 ] && return 0
  log "apt-get update"
  $SUDO apt-get update -qq >&2 || return 1
  APT_UPDATED=1
}

# Install the host tools when missing (idempotent: asks apt only for what is
# not installed).
install_tools() {
  local pkgs=(qemu-system-x86 busybox-static cpio) missing=() p
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

# The first "Depends: linux-image-..." of a meta package, if apt knows it.
meta_target() {
  apt-cache depends --no-recommends --no-suggests "$1" 2>/dev/null |
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
  chmod 755 "$tmp"   # apt downloads as user _apt
  if ! (cd "$tmp" && apt-get download -qq "$pkg" >&2); then
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
  {
    echo "package=$pkg"
    echo "release=$release"
    echo "debian_version=$(dpkg-deb -f "$tmp"/*.deb Version)"
  } >"$dir.tmp/info"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  rm -rf "$tmp"
}

info_field() { sed -n "s/^$2=//p" "$1/info"; }

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
  pkg=$(resolve_package "$series") || true
  if [ -z "$pkg" ]; then
    # apt's lists may be stale or missing: refresh once, then retry.
    apt_update_once || true
    pkg=$(resolve_package "$series") || true
  fi
  if [ -n "$pkg" ]; then
    dir="$CACHE/$pkg"
    if [ ! -f "$dir/vmlinuz" ]; then
      fetch_package "$pkg" "$dir" || { apt_update_once && pkg=$(resolve_package "$series") &&
        dir="$CACHE/$pkg" && { [ -f "$dir/vmlinuz" ] || fetch_package "$pkg" "$dir"; }; } || dir=
    fi
  fi
  if [ -z "${dir:-}" ] || [ ! -f "$dir/vmlinuz" ]; then
    dir=$(newest_cached "$series")
    [ -n "$dir" ] || die "no kernel for series $series: not in the archive and not cached in $CACHE"
    log "using cached $(basename "$dir") (archive lookup failed)"
  fi
  echo "$series $(info_field "$dir" release) $(info_field "$dir" debian_version) $dir/vmlinuz"
}

install_tools
CACHE=$(pick_cache_dir)
mkdir -p "$CACHE"
[ $# -gt 0 ] || set -- 6.1 6.12
for series in "$@"; do
  get_kernel "$series"
done
