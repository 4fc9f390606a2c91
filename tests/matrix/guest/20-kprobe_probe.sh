#!/bin/sh
# Guest test: collect the kernel facts (tracepoints, fields, probe kinds).
# The host checks them against what each kernel is expected to have. When
# 10-block.sh mounted the ext4 disk, reading a file there makes the
# ext4_file_read_iter probes fire too.
if [ -f /mnt/disk/probe-data ]; then
  export UT_PROBE_READ_FILE=/mnt/disk/probe-data
fi
exec /matrix/kprobe_probe /matrix/kprobe_probe.bpf.o
