#!/bin/sh
# Guest test: scripts/iostack.ut, compiled on the host (which has neither
# fentry nor kprobes), on a kernel that has them.  Its filesystem layer must
# take the fentry alternatives (kprobe where fentry is refused), and see
# every ext4 operation of the fileio workload on the ext4 disk that
# 10-block.sh mounted: 64 reads, 16 writes, 1 fsync, 3 opens; and its block
# layer the 64 direct reads on vda, each a flow from its pread64 slice.
# Prints "FSALT kind target" for each filesystem-layer probe, for the report.
UT=/matrix/uring-trace
FILE=/mnt/disk/iostack.data
if ! grep -q ' /mnt/disk ext4 ' /proc/mounts; then
	echo "SKIP iostack/ext4: /mnt/disk is not mounted (see 10-block.sh)"
	exit 0
fi
# the file, written before tracing (its preparation is not part of the pattern)
/matrix/fileio --file "$FILE" --engine sync --writes 0 >/dev/null 2>/tmp/ios-prepare.err ||
	echo "FAIL iostack/prepare: $(head -c 300 /tmp/ios-prepare.err)"
$UT -v -q --json /tmp/ios.json -o /tmp/ios.fxt -c "/matrix/fileio --file $FILE --engine sync >/tmp/ios-workload.json" \
	/matrix/iostack.uto >/tmp/ios.out 2>/tmp/ios.err
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL iostack/runs: exit status $rc: $(grep -v '^optional probe\|: attached \|: not attached' /tmp/ios.err | tail -c 600)"
	exit 0
fi
echo "PASS iostack/runs"
sed -n 's/^uring-trace: .*: attached \([a-z_]*\):\([a-z0-9_:]*\(ext4\|xfs\|btrfs\|iomap\)[a-z0-9_]*\).*/FSALT \1 \2/p' /tmp/ios.err
grep '^uring-trace: note:' /tmp/ios.err

# hist_count MAP_KEY: the events in one histogram of the text summary, e.g.
# hist_count '@fs_latency[ext4, read]'
hist_count() {
	awk -v key="$1:" '
		$0 == key { inside = 1; next }
		inside && /^\[/ { split($0, half, "|"); n = split(half[1], w, " "); total += w[n]; next }
		inside { inside = 0 }
		END { print total + 0 }' /tmp/ios.out
}
expect() {  # NAME WANT GOT
	if [ "$2" = "$3" ]; then echo "PASS iostack/$1"; else echo "FAIL iostack/$1: want $2, got $3"; fi
}

# The filesystem layer through fentry (or kprobe): the functions themselves.
for f in ext4_file_read_iter ext4_file_write_iter ext4_file_open ext4_sync_file; do
	if grep -Eq "attached (fentry|kprobe):$f( |\$)" /tmp/ios.err && grep -Eq "attached (fexit|kretprobe):$f( |\$)" /tmp/ios.err; then
		echo "PASS iostack/fs_function_probe_$f"
	else
		echo "FAIL iostack/fs_function_probe_$f: $(grep "$f" /tmp/ios.err | head -c 300)"
	fi
done
expect fs_ext4_reads 64 "$(hist_count '@fs_latency[ext4, read]')"
expect fs_ext4_writes 16 "$(hist_count '@fs_latency[ext4, write]')"
expect fs_ext4_fsync 1 "$(hist_count '@fs_latency[ext4, fsync]')"
# the pattern's opens, and the open that checks the file is prepared
expect fs_ext4_opens $(($(grep -o '"op":"open"' /tmp/ios-workload.json | wc -l) + 1)) "$(hist_count '@fs_latency[ext4, open]')"
expect syscall_pwrite64 16 "$(hist_count '@syscall_latency[pwrite64]')"
expect syscall_fsync 1 "$(hist_count '@syscall_latency[fsync]')"
expect block_reads 64 "$(hist_count '@block_latency[vda, read]')"

$UT stats /tmp/ios.fxt >/tmp/ios.stats 2>&1
grep '^flows' /tmp/ios.stats
if grep -q '^flows: [0-9]* complete, 0 incomplete, 0 points outside any slice' /tmp/ios.stats; then
	echo "PASS iostack/flows_complete"
else
	echo "FAIL iostack/flows_complete: $(grep '^flows' /tmp/ios.stats)"
fi
# a flow begins in each pread64 slice: the request it caused
flows=$($UT dump /tmp/ios.fxt | awk '
	/ event duration_begin / && / name="pread64"/ { match($0, / tid=[0-9]+/); open[substr($0, RSTART, RLENGTH)] = 1 }
	/ event duration_end / && / name="pread64"/ { match($0, / tid=[0-9]+/); open[substr($0, RSTART, RLENGTH)] = 0 }
	/ event flow_begin / { match($0, / tid=[0-9]+/); if (open[substr($0, RSTART, RLENGTH)]) n++ }
	END { print n + 0 }')
expect flows_from_pread64 64 "$flows"
grep -q '"lost":0,' /tmp/ios.json && echo "PASS iostack/no_lost_events" || echo "FAIL iostack/no_lost_events: $(head -c 200 /tmp/ios.json)"
rm -f "$FILE"
exit 0
