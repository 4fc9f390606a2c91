#!/bin/sh
# Guest test: scripts/block.ut compiled on the host (block.uto) traces the
# fileio workload on the guest's ext4 disk (/dev/vda, mounted by
# 10-block.sh), with both engines: exactly the 64 direct reads of 4 KiB, at
# the sectors filefrag gives for the file, as spans on the "vda" group with
# the workload's pid, complete flows, and summary histograms of 64.  A script
# compiled with a disk this guest lacks stops at load with a clear message.
# Prints "BLKALT kind target" for each probe of the script, for the report.
UT=/matrix/uring-trace
FILE=/mnt/disk/block.data
if ! grep -q '^/dev/vda /mnt/disk ext4 ' /proc/mounts; then
	echo "SKIP block-script/ext4: /mnt/disk is not mounted (see 10-block.sh)"
	exit 0
fi
expect() {  # NAME WANT GOT
	if [ "$2" = "$3" ]; then echo "PASS block-script/$1"; else echo "FAIL block-script/$1: want $2, got $3"; fi
}
# hist_count FILE KEY: the events in one histogram of a text summary
hist_count() {
	awk -v key="$2:" '
		$0 == key { inside = 1; next }
		inside && /^\[/ { split($0, half, "|"); n = split(half[1], w, " "); total += w[n]; next }
		inside { inside = 0 }
		END { print total + 0 }' "$1"
}

/matrix/fileio --file "$FILE" --engine sync >/dev/null 2>/tmp/blk-prepare.err ||
	echo "FAIL block-script/prepare: $(head -c 300 /tmp/blk-prepare.err)"
# the sectors of the reads (offsets i * 8 KiB), from the file's extents
if [ -x /matrix/filefrag ]; then
	/matrix/filefrag -v "$FILE" | awk '
		BEGIN { n = 0 }   # a number: an unset n would index the arrays by ""
		/blocks of [0-9]+ bytes/ { match($0, /blocks of [0-9]+/); bs = substr($0, RSTART + 10, RLENGTH - 10) }
		$1 ~ /^[0-9]+:$/ { line = $0; gsub(/[.:]+/, " ", line); split(line, f, " ")
			first[n] = f[2]; last[n] = f[3]; phys[n] = f[4]; n++ }
		END {
			for (i = 0; i < 64; i++) {
				lb = int(i * 8192 / bs)
				for (e = 0; e < n; e++)
					if (lb >= first[e] && lb <= last[e])
						print (phys[e] + lb - first[e]) * (bs / 512) + (i * 8192 % bs) / 512
			}
		}' | sort -n >/tmp/blk-expected.txt
fi

for engine in sync uring; do
	name=block-script/$engine
	$UT -v -q --json /tmp/blk.json -o /tmp/blk.fxt \
		-c "/matrix/fileio --file $FILE --engine $engine >/tmp/blk-workload.json" /matrix/block.uto \
		>/tmp/blk.out 2>/tmp/blk.err
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name/runs: exit status $rc: $(grep -v ': attached \|: not attached' /tmp/blk.err | tail -c 600)"
		continue
	fi
	echo "PASS $name/runs"
	[ $engine = sync ] && sed -n 's/^uring-trace: .*: attached \([a-z_]*\):\([a-z0-9_/:]*\).*/BLKALT \1 \2/p' /tmp/blk.err
	grep -q '"ok":true' /tmp/blk-workload.json || echo "FAIL $name/workload: $(head -c 200 /tmp/blk-workload.json)"
	expect $engine/summary_reads "@requests[vda, read]: 64" "$(grep '^@requests\[vda, read\]' /tmp/blk.out)"
	expect $engine/summary_read_bytes "@bytes[vda, read]: 262144" "$(grep '^@bytes\[vda, read\]' /tmp/blk.out)"
	expect $engine/size_histogram 64 "$(hist_count /tmp/blk.out '@size[vda, read]')"
	expect $engine/queue_histogram 64 "$(hist_count /tmp/blk.out '@queue_us[vda, read]')"
	expect $engine/service_histogram 64 "$(hist_count /tmp/blk.out '@service_us[vda, read]')"
	$UT stats /tmp/blk.fxt >/tmp/blk.stats 2>&1
	if grep -q '^flows: [0-9]* complete, 0 incomplete, 0 points outside any slice' /tmp/blk.stats; then
		echo "PASS $name/flows_complete"
	else
		echo "FAIL $name/flows_complete: $(grep '^flows' /tmp/blk.stats)"
	fi
	# the read spans of the "vda" group: size, submitting process, sectors
	pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' /tmp/blk-workload.json)
	$UT dump /tmp/blk.fxt | awk -v pid="$pid" '
		/ kernel_object process / && / name="vda"/ { match($0, /koid=[0-9]+/); group = substr($0, RSTART + 5, RLENGTH - 5) }
		/ event duration_begin / && / name="read" args=\{sector: / {
			match($0, / pid=[0-9]+/); if (substr($0, RSTART + 5, RLENGTH - 5) != group) next
			match($0, /sector: uint[0-9]+ [0-9]+/); split(substr($0, RSTART, RLENGTH), s, " ")
			match($0, /bytes: uint[0-9]+ [0-9]+/); split(substr($0, RSTART, RLENGTH), b, " ")
			match($0, /pid: koid [0-9]+/); split(substr($0, RSTART, RLENGTH), p, " ")
			print s[3], b[3], p[3] == pid ? "workload" : "other"
		}' >/tmp/blk-spans.txt
	expect $engine/trace_reads 64 "$(wc -l </tmp/blk-spans.txt)"
	expect $engine/trace_read_sizes 64 "$(grep -c ' 4096 ' /tmp/blk-spans.txt)"
	expect $engine/trace_only_the_workload 0 "$(grep -c ' other$' /tmp/blk-spans.txt)"
	if [ -s /tmp/blk-expected.txt ]; then
		cut -d' ' -f1 /tmp/blk-spans.txt | sort -n >/tmp/blk-sectors.txt
		if cmp -s /tmp/blk-expected.txt /tmp/blk-sectors.txt; then
			echo "PASS $name/trace_read_sectors"
		else
			echo "FAIL $name/trace_read_sectors: filefrag $(head -2 /tmp/blk-expected.txt | tr '\n' ' ')... traced $(head -2 /tmp/blk-sectors.txt | tr '\n' ' ')..."
		fi
	else
		echo "SKIP $name/trace_read_sectors: no filefrag in the guest"
	fi
	grep -q '"lost":0,' /tmp/blk.json && echo "PASS $name/no_lost_events" || echo "FAIL $name/no_lost_events: $(head -c 200 /tmp/blk.json)"
done

# compiled with -D disk=nosuchdisk0: the disk is looked up here, at load
$UT -q -c true /matrix/block-missing-disk.uto >/tmp/blk-missing.out 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "there is no disk 'nosuchdisk0' on this machine; its disks are: .*vda" /tmp/blk-missing.out; then
	echo "PASS block-script/missing_disk_is_an_error"
else
	echo "FAIL block-script/missing_disk_is_an_error: exit $rc: $(head -c 300 /tmp/blk-missing.out)"
fi
# compiled with -D disk=loop7p1: a partition, refused at load (block
# requests belong to disks).  An image with an MBR and one partition.
if [ -e /dev/loop-control ]; then
	[ -b /dev/loop7 ] || mknod /dev/loop7 b 7 7
	dd if=/dev/zero of=/tmp/parted.img bs=1M count=8 2>/dev/null
	printf '\0\0\0\0\203\0\0\0\0\010\0\0\0\070\0\0' | dd of=/tmp/parted.img bs=1 seek=446 conv=notrunc 2>/dev/null
	printf '\125\252' | dd of=/tmp/parted.img bs=1 seek=510 conv=notrunc 2>/dev/null
	if losetup -P /dev/loop7 /tmp/parted.img && [ -e /sys/class/block/loop7p1 ]; then
		$UT -q -c true /matrix/block-partition.uto >/tmp/blk-partition.out 2>&1
		rc=$?
		if [ $rc -eq 1 ] && grep -q "'loop7p1' is a partition; block requests are counted per disk: give its disk, loop7" /tmp/blk-partition.out; then
			echo "PASS block-script/partition_is_an_error"
		else
			echo "FAIL block-script/partition_is_an_error: exit $rc: $(head -c 300 /tmp/blk-partition.out)"
		fi
		losetup -d /dev/loop7
	else
		echo "FAIL block-script/partition_is_an_error: no loop7p1 after losetup -P"
	fi
	rm -f /tmp/parted.img
fi
rm -f "$FILE"
exit 0
