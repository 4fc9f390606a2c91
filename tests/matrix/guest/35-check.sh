#!/bin/sh
# Guest test: the default script with --check (io_uring-check.uto, compiled
# on the host): the buffer hazards' probes and the submission's page loops
# load on this kernel, and name the two overlapping pairs of reads the
# hazard workload makes.  (A script of its own: its verification takes a
# while under TCG, past what 30-uring-trace.sh has left of its time.)
cd /tmp || exit 1
UT=/matrix/uring-trace
start=$(date +%s)
# (-v: what it loaded, should the time-box stop it; KILL, since a program
# being verified does not see a TERM, and before the guest's own box fires)
timeout -s KILL 90 $UT -v --summary-only -c "/matrix/uring_doctor hazard" /matrix/io_uring-check.uto >/tmp/check.out \
	2>/tmp/check.err
rc=$?
echo "--check: status $rc in $(($(date +%s) - start)) s"
if [ $rc -eq 0 ] && grep -q '^crit HAZARD\[READ, READ\]' /tmp/check.out /tmp/check.err &&
	grep -q '^crit HAZARD\[READ_FIXED, READ_FIXED\]' /tmp/check.out /tmp/check.err; then
	echo "PASS uring-trace/check_hazard"
else
	echo "FAIL uring-trace/check_hazard: status $rc $(grep -h 'HAZARD\|error\|rejected\|GROUND' /tmp/check.out /tmp/check.err | head -c 600)"
	grep -v 'placement: ' /tmp/check.err | tail -n 25 | cut -c1-300
fi
