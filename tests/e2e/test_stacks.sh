#!/usr/bin/env bash
# kstack and ustack end to end, on the uring_paths workload (-c: only its
# own calls): stacks as map keys in the summary (a frame a line) and in
# JSON (an array of frames), and as trace arguments (the frames as text).
# The workload waits 0.3 s before its work, so its mappings are read while
# it runs and its user frames are named even when it has ended by the time
# its stacks are read.  Frames beyond the probed function depend on frame
# pointers the workload is not built with: only the first is checked.
source "$(dirname "$0")/../lib.sh"
need_root_bpf stacks || exit 0
W=$UT_WORKLOADS/uring_paths
cat >"$TMP/stacks.ut" <<UT
tracepoint:syscalls:sys_enter_io_uring_enter {
	@enter[kstack] = count();
	instant "enter" with stack = kstack;
}
uprobe:$W:submit_exactly {
	@submit[ustack, kstack] = count();
	instant "submit" with stack = ustack;
}
UT
"$UT" -q --json "$TMP/stacks.json" -o "$TMP/stacks.fxt" -c "$W --rings 1 --delay-ms 300 --dir $TMP" \
	"$TMP/stacks.ut" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
if [ $rc -ne 0 ]; then
  fail stacks/runs "exit $rc: $(tail -n 5 "$TMP/err.txt")"
  exit 0
fi
pass stacks/runs

# summary: a frame a line, kernel frames from kallsyms, user frames from
# the workload's own symbols
if grep -Pzoq '@enter\[\n(\t[^\n]+\+0x[0-9a-f]+\n)*\tdo_syscall_64\+0x[0-9a-f]+\n' "$TMP/out.txt"; then
  pass stacks/summary_kernel_frames
else fail stacks/summary_kernel_frames "$(head -n 20 "$TMP/out.txt")"; fi
if grep -Pzoq '@submit\[\n\tsubmit_exactly\+0x0\n' "$TMP/out.txt"; then
  pass stacks/summary_user_frames
else fail stacks/summary_user_frames "$(grep -A4 '@submit' "$TMP/out.txt" | head -n 20)"; fi
# in a uprobe the kernel has no stack of the task's own
if grep -Pzoq '\n,\n\t\(no stack\)\n\]' "$TMP/out.txt"; then pass stacks/summary_empty_stack
else fail stacks/summary_empty_stack "$(grep -A6 '@submit' "$TMP/out.txt" | head -n 20)"; fi

if python3 - "$TMP/stacks.json" <<'PY'
import json, sys
maps = json.load(open(sys.argv[1]))["maps"]
enter, submit = maps["@enter"], maps["@submit"]
assert enter and submit, maps
for e in enter:
    frames = e["key"][0]
    assert isinstance(frames, list) and any(f.startswith("do_syscall_64+0x") for f in frames), e
calls = 0
for e in submit:
    user, kernel = e["key"]
    assert user[0] == "submit_exactly+0x0" and kernel == [], e
    calls += e["value"]
assert calls > 0
PY
then pass stacks/json_frames; else fail stacks/json_frames "$(head -c 600 "$TMP/stacks.json")"; fi

# trace arguments: the frames as one string, a line each
"$UT" dump "$TMP/stacks.fxt" >"$TMP/dump.txt" 2>&1
if grep -q 'name="enter" args={stack: string "[^"]*do_syscall_64+0x[0-9a-f]*' "$TMP/dump.txt"; then
  pass stacks/trace_arg_kernel
else fail stacks/trace_arg_kernel "$(grep -m3 'name="enter"' "$TMP/dump.txt")"; fi
if grep -q 'name="submit" args={stack: string "submit_exactly+0x0' "$TMP/dump.txt"; then
  pass stacks/trace_arg_user
else fail stacks/trace_arg_user "$(grep -m3 'name="submit"' "$TMP/dump.txt")"; fi
