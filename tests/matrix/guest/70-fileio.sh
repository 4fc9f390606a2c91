#!/bin/sh
# Guest test: scripts/fileio.ut, compiled on the host (.uto), on this
# kernel: its raw syscall tracepoints, typed pt_regs arguments and the
# path walk (a global BPF function) load here, and the fileio workload's
# file on the ext4 disk that 10-block.sh mounted is named by its full path
# (across the /mnt/disk mount point) with the workload's counts: 64 pread64
# of 4 KiB, 16 pwrite64, 1 fsync, and the read on the closed fd as EBADF.
UT=/matrix/uring-trace
FILE=/mnt/disk/fileio.data
if ! grep -q ' /mnt/disk ext4 ' /proc/mounts; then
	echo "SKIP fileio/ext4: /mnt/disk is not mounted (see 10-block.sh)"
	exit 0
fi
# prepared before tracing, so the traced run only does the pattern
/matrix/fileio --file "$FILE" --engine sync >/dev/null 2>/tmp/fio-prepare.err ||
	echo "FAIL fileio/prepare: $(head -c 300 /tmp/fio-prepare.err)"
$UT -v -q -o /tmp/fio.fxt -c "/matrix/fileio --file $FILE --engine sync --bad-fd-read >/tmp/fio-workload.json" \
	/matrix/fileio.uto >/tmp/fio.out 2>/tmp/fio.err
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL fileio/runs: exit status $rc: $(grep '^uring-trace: ' /tmp/fio.err | tail -n 1 | head -c 600)"
	exit 0
fi
echo "PASS fileio/runs"
expect() {  # NAME WANT SUMMARY-KEY
	got=$(sed -n "s|^$3: ||p" /tmp/fio.out)
	if [ "$2" = "$got" ]; then echo "PASS fileio/$1"; else echo "FAIL fileio/$1: want $2, got '$got' for $3"; fi
}
expect preads 64 "@calls\[$FILE, pread64\]"
expect bytes_read 262144 "@bytes_read\[$FILE\]"
expect pwrites 16 "@calls\[$FILE, pwrite64\]"
expect bytes_written 65536 "@bytes_written\[$FILE\]"
expect fsync 1 "@calls\[$FILE, fsync\]"
expect ebadf 1 "@errors\[, pread64, -EBADF\]"
exit 0
