#!/usr/bin/env bash
# Boots a kernel with an initramfs from mkinitramfs.sh under qemu (TCG) and
# returns the guest test's output and exit status.
#
#   tests/matrix/run-in-vm.sh KERNEL_IMAGE INITRAMFS
#
# stdout: the guest command's output (the lines between the markers).
# Exit status: the guest command's status; 124 when the boot timed out,
# 125 when the guest never reported a status (boot failure, panic).
# The whole serial console goes to $UT_VM_LOG (default: a temporary file,
# printed to stderr on failure).
#
# Environment: UT_VM_TIMEOUT (seconds, default 300), UT_VM_MEM (MiB, 1024),
# UT_VM_SMP (2), UT_VM_APPEND (extra kernel arguments), UT_VM_QEMU_ARGS
# (extra qemu arguments, word-split), UT_VM_ACCEL (qemu's -accel).
#
# Always TCG: /dev/kvm may exist on CI machines without working.  One host
# thread for all vCPUs (UT_VM_ACCEL, default tcg,thread=single): with one
# thread per vCPU, a vCPU could keep trapping, interrupts off, on a
# breakpoint the kernel's text patching had taken out, while the other
# waited for it to take an IPI (6.1: a soft lockup in text_poke_bp_batch
# as the tracer closed a tracepoint's link; 6.12: "Oops: int3"), about
# one boot in 12.  No slower here (26.6 s for the 6.1 guest, 25 s before).
# Not -M microvm: it hangs under TCG.
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 KERNEL_IMAGE INITRAMFS" >&2; exit 2; }
kernel=$1 initramfs=$2
[ -f "$kernel" ] || { echo "run-in-vm: no kernel image $kernel" >&2; exit 2; }
[ -f "$initramfs" ] || { echo "run-in-vm: no initramfs $initramfs" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "run-in-vm: qemu-system-x86_64 not installed" >&2; exit 2; }

timeout_s=${UT_VM_TIMEOUT:-300}
log=${UT_VM_LOG:-}
own_log=0
if [ -z "$log" ]; then log=$(mktemp /tmp/ut-vm.XXXXXX.log); own_log=1; fi

# shellcheck disable=SC2086  # UT_VM_QEMU_ARGS is a list of words
timeout --kill-after=10 "$timeout_s" qemu-system-x86_64 \
  -accel "${UT_VM_ACCEL:-tcg,thread=single}" -cpu max -smp "${UT_VM_SMP:-2}" -m "${UT_VM_MEM:-1024}" \
  -display none -monitor none -serial stdio -no-reboot \
  -kernel "$kernel" -initrd "$initramfs" \
  -append "console=ttyS0 panic=-1 quiet ${UT_VM_APPEND:-}" \
  ${UT_VM_QEMU_ARGS:-} </dev/null 2>&1 | tr -d '\r' >"$log"
qemu_status=${PIPESTATUS[0]}

status_line=$(grep -a -m1 '^@@UT-MATRIX-END status=' "$log")
if grep -aq '^@@UT-MATRIX-BEGIN@@' "$log"; then
  # Everything after BEGIN up to END (or to the end of the log if END is missing).
  sed -n '/^@@UT-MATRIX-BEGIN@@$/,/^@@UT-MATRIX-END status=/{/^@@UT-MATRIX-/d;p}' "$log"
fi

if [ -n "$status_line" ]; then
  status=${status_line#@@UT-MATRIX-END status=}
  status=${status%@@}
elif [ "$qemu_status" -eq 124 ] || [ "$qemu_status" -eq 137 ]; then
  echo "run-in-vm: timed out after ${timeout_s}s ($kernel)" >&2
  status=124
else
  echo "run-in-vm: guest reported no status (qemu exit $qemu_status, $kernel)" >&2
  status=125
fi
if [ "$status" -ne 0 ]; then
  echo "run-in-vm: --- console tail ($log) ---" >&2
  tail -n 40 "$log" >&2
fi
[ "$own_log" -eq 1 ] && rm -f "$log"
exit "$status"
