#!/bin/sh
# Guest test: collect the kernel facts (tracepoints, fields, probe kinds).
# The host checks them against what each kernel is expected to have.
exec /matrix/kprobe_probe /matrix/kprobe_probe.bpf.o
