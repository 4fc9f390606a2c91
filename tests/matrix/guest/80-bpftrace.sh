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
# check NAME REGEX: the port NAME, run on a command, prints a line REGEX matches
check() {
	$UT -q --summary-only -c "md5sum /matrix/uring-trace" /matrix/bpftrace-$1.uto >/tmp/$1.out 2>/tmp/$1.err
	rc=$?
	if [ $rc -eq 0 ] && grep -Eq "$2" /tmp/$1.out; then
		echo "PASS bpftrace/$1"
	else
		echo "FAIL bpftrace/$1: status $rc $(head -c 600 /tmp/$1.out) $(head -c 400 /tmp/$1.err)"
	fi
}
check profile '^\]: [0-9]+$'
check faults '^@\[md5sum\]: [0-9]+$'
exit 0
