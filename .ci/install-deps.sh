#!/usr/bin/env bash
# Installs what uring-trace needs to build and test, from Debian's archive.
# Idempotent: asks apt only for packages that are missing.
set -euo pipefail
pkgs=(build-essential pkg-config flex bison libbpf-dev libelf-dev zlib1g-dev
      clang-14 llvm-14-dev libclang-14-dev libclang-cpp14-dev liburing-dev
      libclang-rt-14-dev libxml2-utils fio systemtap-sdt-dev bpftrace sudo
      libmicrohttpd-dev libjson-c-dev prometheus tmux)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
echo "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
