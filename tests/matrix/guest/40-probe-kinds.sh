#!/bin/sh
# Guest test: uring-trace's own fentry/kprobe paths.  kinds.uto (compiled on
# the host, which has neither) holds fentry, kprobe and tracepoint
# alternatives; a kernel with BPF trampolines must attach fentry/fexit, and
# the reads of the traced command must be counted.
cd /tmp || exit 1
UT=/matrix/uring-trace
$UT -v -q --summary-only -c "md5sum /matrix/kinds.uto" /matrix/kinds.uto >/tmp/kinds.out 2>/tmp/kinds.err
rc=$?
[ $rc -eq 0 ] && echo "PASS uring-trace/probe_kinds_run" || echo "FAIL uring-trace/probe_kinds_run: status $rc $(head -c 300 /tmp/kinds.err)"
sed -n 's/^uring-trace: .*: attached \([a-z_]*\):\(.*\)/ALT \1:\2/p' /tmp/kinds.err
if grep -q "attached fentry:vfs_read" /tmp/kinds.err && grep -q "attached fexit:vfs_read" /tmp/kinds.err; then
	echo "PASS uring-trace/fentry_fexit_attached"
else
	echo "FAIL uring-trace/fentry_fexit_attached: $(grep attached /tmp/kinds.err | tr '\n' ' ')"
fi
if grep -q '^@reads: [1-9]' /tmp/kinds.out && grep -q '^@returns: [1-9]' /tmp/kinds.out; then
	echo "PASS uring-trace/reads_counted"
else
	echo "FAIL uring-trace/reads_counted: $(tr '\n' ' ' </tmp/kinds.out)"
fi
exit 0
