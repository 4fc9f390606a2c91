#!/bin/sh
# Guest test: ports of bpftrace's programs (tests/bpftrace), compiled on the
# host (.uto): vfsstat's kprobes (wildcards, func) with time(), print() and
# clear() each second, which the host cannot run; the profile one-liner and
# software page faults on this kernel's perf events.
cd /tmp || exit 1
UT=/matrix/uring-trace
# reads while vfsstat runs
( i=0; while [ $i -lt 12 ]; do cat /matrix/bpftrace-vfsstat.uto >/dev/null; sleep 0.25; i=$((i + 1)); done ) &
reader=$!
$UT -q --summary-only -d 2.5 /matrix/bpftrace-vfsstat.uto >/tmp/vfsstat.out 2>/tmp/vfsstat.err
rc=$?
wait $reader
if [ $rc -eq 0 ] && grep -Eq '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$' /tmp/vfsstat.out &&
	grep -Eq '^@\[vfs_read\]: [0-9]+$' /tmp/vfsstat.out; then
	echo "PASS bpftrace/vfsstat"
else
	echo "FAIL bpftrace/vfsstat: status $rc $(head -c 600 /tmp/vfsstat.out) $(head -c 400 /tmp/vfsstat.err)"
fi
$UT -q --summary-only -c "md5sum /matrix/uring-trace" /matrix/bpftrace-profile.uto >/tmp/profile.out 2>/tmp/profile.err
rc=$?
if [ $rc -eq 0 ] && grep -Eq '^\]: [0-9]+$' /tmp/profile.out; then
	echo "PASS bpftrace/profile"
else
	echo "FAIL bpftrace/profile: status $rc $(head -c 600 /tmp/profile.out) $(head -c 400 /tmp/profile.err)"
fi
$UT -q --summary-only -c "md5sum /matrix/uring-trace" /matrix/bpftrace-faults.uto >/tmp/faults.out 2>/tmp/faults.err
rc=$?
if [ $rc -eq 0 ] && grep -Eq '^@\[md5sum\]: [0-9]+$' /tmp/faults.out; then
	echo "PASS bpftrace/faults"
else
	echo "FAIL bpftrace/faults: status $rc $(head -c 600 /tmp/faults.out) $(head -c 400 /tmp/faults.err)"
fi
exit 0
