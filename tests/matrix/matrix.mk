# Kernel matrix (tests/matrix): boots Debian's 5.10, 6.1 and 6.12 kernels under
# qemu (TCG) and runs the guest tests in each; see docs/kernels.md.
#
#   make kernel-matrix     fetch kernels, build the payload, boot, report
#   make matrix-payload    build only what goes into the guests
#
# Independent of the main build: the payload is a small libbpf program, its
# BPF object, and the guest scripts. Kernel images are cached outside the
# repository (tests/matrix/kernels.sh).

MATRIX_DIR    := build/matrix
MATRIX_CLANG  ?= clang-14
MATRIX_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g
# Static when every static library is there: the guest then needs nothing
# but the binary. Otherwise mkinitramfs.sh ships the shared libraries.
# Recursive (=) so that the compiler is asked only when the probe is built.
MATRIX_STATIC_LIBS := libbpf.a libelf.a libz.a liburing.a
MATRIX_MISSING_STATIC = $(strip $(foreach l,$(MATRIX_STATIC_LIBS),$(if $(filter /%,$(shell $(CC) -print-file-name=$(l))),,$(l))))
MATRIX_LDLIBS = $(if $(MATRIX_MISSING_STATIC),-lbpf -lelf -lz -luring,-static -l:libbpf.a -l:libelf.a -l:libz.a -l:liburing.a)

.PHONY: kernel-matrix matrix-payload
matrix-payload: $(MATRIX_DIR)/kprobe_probe $(MATRIX_DIR)/kprobe_probe.bpf.o $(MATRIX_DIR)/io_uring.uto $(MATRIX_DIR)/kinds.uto \
	$(MATRIX_DIR)/iostack.uto $(MATRIX_DIR)/fileio.uto $(MATRIX_DIR)/block.uto $(MATRIX_DIR)/block-missing-disk.uto $(MATRIX_DIR)/block-partition.uto \
	$(MATRIX_DIR)/bpftrace-vfsstat.uto $(MATRIX_DIR)/bpftrace-profile.uto $(MATRIX_DIR)/bpftrace-faults.uto \
	$(MATRIX_DIR)/values.uto $(MATRIX_DIR)/io_uring-check.uto \
	build/uring-trace build/workloads/uring_paths build/workloads/fileio build/workloads/uring_doctor

# The default script compiled on the host: guests run it without clang.
$(MATRIX_DIR)/io_uring.uto: build/uring-trace scripts/io_uring.ut $(wildcard stdlib/*.ut) bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ scripts/io_uring.ut

# The same with --check (the doctor's buffer hazards): its probes on
# munmap and io_uring_register, and the submission's page loops, must load
# on each kernel too.  --reaps=0: with --check the 64-turn reap loop runs
# in the kernel, and its verification (5.6 s on the host, 0.6 s without
# it) passed the guest's time box under TCG on 5.10 and 6.1; the loop
# itself is checked by 30-uring-trace.sh.
$(MATRIX_DIR)/io_uring-check.uto: build/uring-trace scripts/io_uring.ut $(wildcard stdlib/*.ut) bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --check --reaps=0 --compile -o $@ scripts/io_uring.ut

# fileio.ut compiled on the host: its raw syscall tracepoints, typed
# pt_regs arguments and path walk (a global BPF function) on each kernel.
$(MATRIX_DIR)/fileio.uto: build/uring-trace scripts/fileio.ut stdlib/files.ut stdlib/syscalls.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ scripts/fileio.ut

# Compiled where fentry and kprobes do not run: the guests choose them.
$(MATRIX_DIR)/iostack.uto: build/uring-trace scripts/iostack.ut stdlib/syscalls.ut stdlib/files.ut stdlib/fs.ut stdlib/block.ut \
	bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ scripts/iostack.ut

# block.ut compiled on the host; and with a disk no guest has and with a
# partition, which the guest must refuse when it loads the script (disks are
# looked up there).
$(MATRIX_DIR)/block.uto: build/uring-trace scripts/block.ut stdlib/block.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ scripts/block.ut
$(MATRIX_DIR)/block-missing-disk.uto: build/uring-trace scripts/block.ut stdlib/block.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -D disk=nosuchdisk0 -o $@ scripts/block.ut
$(MATRIX_DIR)/block-partition.uto: build/uring-trace scripts/block.ut stdlib/block.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -D disk=loop7p1 -o $@ scripts/block.ut

# Ports of bpftrace's programs (tests/bpftrace) the host cannot run:
# vfsstat's kprobes; and the perf-event kinds on the guests' kernels.
$(MATRIX_DIR)/bpftrace-%.uto: build/uring-trace tests/bpftrace/%.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ tests/bpftrace/$*.ut

$(MATRIX_DIR)/kinds.uto: build/uring-trace tests/matrix/kinds.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ tests/matrix/kinds.ut

$(MATRIX_DIR)/values.uto: build/uring-trace tests/matrix/values.ut bpf/ut.h bpf/records.h
	@mkdir -p $(dir $@)
	build/uring-trace -q --compile -o $@ tests/matrix/values.ut

$(MATRIX_DIR)/kprobe_probe: tests/matrix/kprobe_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(MATRIX_CFLAGS) -o $@ $< $(MATRIX_LDLIBS)

# -g: BTF in the object (libbpf wants it for maps and tp_btf/fentry).
$(MATRIX_DIR)/kprobe_probe.bpf.o: tests/matrix/kprobe_probe.bpf.c
	@mkdir -p $(dir $@)
	$(MATRIX_CLANG) -g -O2 -target bpf -Wall -Werror \
		-I/usr/include/$(shell $(CC) -dumpmachine) -c -o $@ $<

kernel-matrix: matrix-payload
	tests/matrix/matrix.sh
