#!/usr/bin/env bash
# Kernel matrix as part of `make test`: boots Debian's 5.10, 6.1 and 6.12 kernels
# under qemu (TCG), runs the guest tests in each, checks the per-kernel facts
# (e.g. 6.1 has io_uring_submit_sqe and no io_uring_submit_req; kprobes and
# fentry work there), and runs the same probe natively on the host.
# Prints "SKIP kernel-matrix: why" when qemu or the kernels cannot be had.
# UT_MATRIX=0 skips it; UT_MATRIX_KERNELS="6.1" narrows it.
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.." || exit 1
tests/matrix/matrix.sh
