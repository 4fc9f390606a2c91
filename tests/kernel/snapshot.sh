# use_kernel_snapshot: the compiler (and the runtime's vmlinux.h) read a
# stored kernel's BTF and tracepoint formats (tests/kernel/6.18) instead of
# the running kernel's, through UT_BTF and UT_TRACEFS, so that generated C
# and messages do not change with the machine the tests run on.  Needs $TMP
# (tests/lib.sh).
# shellcheck shell=bash
kernel_snapshot_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/6.18" && pwd)
use_kernel_snapshot() {
  local dir=$kernel_snapshot_dir
  mkdir -p "$TMP/kernel/tracefs" || return 1
  gzip -dc "$dir/btf.gz" >"$TMP/kernel/btf" || return 1
  tar -xzf "$dir/tracefs.tar.gz" -C "$TMP/kernel/tracefs" || return 1
  export UT_BTF=$TMP/kernel/btf UT_TRACEFS=$TMP/kernel/tracefs
}
