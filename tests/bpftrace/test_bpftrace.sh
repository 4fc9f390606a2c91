#!/usr/bin/env bash
# bpftrace's programs on uring-trace (docs/coming-from-bpftrace.md): every
# port in tests/bpftrace compiles against this kernel, and each one this
# machine can run (no kprobes here: vfsstat runs in the kernel matrix) runs
# on a command that makes it print, and prints what bpftrace would.  Where
# Debian's bpftrace package is installed, the programs whose ports say
# "runs as it is" compile from its own files (/usr/sbin/NAME.bt) too.
source "$(dirname "$0")/../lib.sh"
dir=$(cd "$(dirname "$0")" && pwd)
W=$UT_WORKLOADS/usdt_probes

for ut in "$dir"/*.ut; do
  name=bpftrace/$(basename "$ut" .ut)
  if "$UT" --emit-c "$ut" "$W" >/dev/null 2>"$TMP/err"; then pass "$name/compiles"
  else fail "$name/compiles" "$(head -5 "$TMP/err")"; fi
done
for ut in $(grep -l 'runs as it is' "$dir"/*.ut); do
  name=$(basename "$ut" .ut)
  original=/usr/sbin/$name.bt
  if [ ! -f "$original" ]; then skip "bpftrace/$name/original" "no $original (Debian's bpftrace package)"; continue; fi
  if "$UT" --emit-c "$original" >/dev/null 2>"$TMP/err"; then pass "bpftrace/$name/original_compiles"
  else fail "bpftrace/$name/original_compiles" "$(head -5 "$TMP/err")"; fi
done

# Debian's tools on kprobes (not attached here, where the kernel has none)
# build as they are: AF_INET from #include <sys/socket.h>, ntop(), bswap(),
# cat(), buf() and %r
for name in tcpconnect tcpaccept tcpretrans tcpdrop tcplife oomkill undump; do
  original=/usr/sbin/$name.bt
  if [ ! -f "$original" ]; then skip "bpftrace/$name/original" "no $original (Debian's bpftrace package)"; continue; fi
  if "$UT" -q --compile -o "$TMP/$name.uto" "$original" >/dev/null 2>"$TMP/err"; then pass "bpftrace/$name/original_builds"
  else fail "bpftrace/$name/original_builds" "$(head -5 "$TMP/err")"; fi
done

need_root_bpf bpftrace/runs || exit 0

# run NAME COMMAND [ARG...]: the port traces COMMAND (-c), its output in
# $TMP/NAME.out
run() {
  local name=$1 command=$2
  shift 2
  timeout 120 "$UT" -q --summary-only -c "$command" "$dir/$name.ut" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}
# expect NAME REGEX...: each extended regex matches a line of NAME's output
expect_lines() {
  local name=$1 re
  shift
  for re in "$@"; do
    if ! grep -Eq "$re" "$TMP/$name.out"; then
      fail "bpftrace/$name/runs" "no line matches '$re': $(head -c 1500 "$TMP/$name.out") $(head -c 500 "$TMP/$name.err")"
      return
    fi
  done
  pass "bpftrace/$name/runs"
}
T='^[0-9]{2}:[0-9]{2}:[0-9]{2}'   # a time() of %H:%M:%S

run execsnoop "sh -c '/bin/echo one two'"
expect_lines execsnoop '^TIME\(ms\) +PID +ARGS$' '^[0-9]+ +[0-9]+ +/bin/echo one two$'

run opensnoop "cat /etc/hostname"
expect_lines opensnoop '^PID +COMM +FD ERR PATH$' '^[0-9]+ +cat +[0-9]+ +0 /etc/hostname$'

printf 'import os\nfor i in range(50): os.getppid()\n' >"$TMP/getppid.py"
run syscount "/usr/bin/python3 $TMP/getppid.py"
expect_lines syscount '^Top 10 syscalls IDs:$' '^@syscall\[110\]: ([5-9][0-9]|[1-9][0-9]{2,})$' '^Top 10 processes:$' \
	'^@process\[python3\]: [0-9]+$'

# -c keeps the events whose current task is traced: a wait counts when a
# traced task wakes another and the switch to it happens on the waker's CPU.
# A pipe between two processes on one CPU does that thousands of times (a
# python sleeping in a loop is woken by the timer, from another task: one
# CI run counted none).
run runqlat "taskset -c 1 sh -c 'dd if=/dev/zero bs=64k count=2000 status=none | cat >/dev/null'"
expect_lines runqlat '^@usecs:$' '^\[[0-9]+(\]|, [0-9]+\)) +[1-9][0-9]* \|'

run killsnoop "/usr/bin/python3 -c 'import os; os.kill(os.getpid(), 0)'"
expect_lines killsnoop "$T  [0-9]+ +python3 +0 +[0-9]+ +0$"

run pidpersec "sh -c '/bin/true; /bin/true; sleep 1.5'"
expect_lines pidpersec "$T PIDs/sec: @: [0-9]+$"

run cpuwalk "dd if=/dev/zero of=/dev/null bs=1M count=3000"
expect_lines cpuwalk '^@cpu:$' '^\[[0-9]+, [0-9]+\) +[1-9][0-9]* \|'

run runqlen "dd if=/dev/zero of=/dev/null bs=1M count=3000"
expect_lines runqlen '^@runqlen:$' '^\[0, 1\) +[1-9][0-9]* \|'

run naptime "/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).syscall(35, (ctypes.c_long * 2)(0, 20000000), None)'"
expect_lines naptime "$T [0-9]+ +[^ ]+ +[0-9]+ +python3 +0\.020$"

# binaries named as bpftrace names them: a library in the linker's cache
# (uprobe:libc:getpid), a program on $PATH (bash); Debian's gethostlatency
# (uprobe:libc:getaddrinfo) as it is
"$UT" -q --summary-only -c "/usr/bin/python3 $TMP/getppid.py" -e 'uprobe:libc:getppid { @calls = count(); }' \
	>"$TMP/libc.out" 2>"$TMP/libc.err"
grep -Eq '^@calls: ([5-9][0-9]|[1-9][0-9]{2,})$' "$TMP/libc.out" && pass bpftrace/uprobe_library_by_name \
	|| fail bpftrace/uprobe_library_by_name "$(cat "$TMP/libc.out" "$TMP/libc.err")"
"$UT" --emit-c -e 'uprobe:bash:no_such_function { }' >/dev/null 2>"$TMP/bash.err"
grep -q "no function 'no_such_function' in /.*/bash" "$TMP/bash.err" && pass bpftrace/uprobe_program_on_path \
	|| fail bpftrace/uprobe_program_on_path "$(cat "$TMP/bash.err")"
if [ -f /usr/sbin/gethostlatency.bt ]; then
  timeout 120 "$UT" -q --summary-only -c "/usr/bin/python3 -c 'import socket; socket.getaddrinfo(\"localhost\", 80)'" \
	/usr/sbin/gethostlatency.bt >"$TMP/gethostlatency.out" 2>"$TMP/gethostlatency.err"
  expect_lines gethostlatency "$T +[0-9]+ +python3 +[0-9]+ localhost$"
else
  skip bpftrace/gethostlatency/runs "no /usr/sbin/gethostlatency.bt (Debian's bpftrace package)"
fi

run profile "dd if=/dev/zero of=/dev/null bs=1M count=3000"
expect_lines profile '^@\[$' '^	read_zero\+0x[0-9a-f]+$' '^\]: [0-9]+$'

run usdt "$W 3" "$W"
expect_lines usdt '^@\[0\]: 1$' '^@\[1\]: 1$' '^@\[2\]: 1$'

run faults "/usr/bin/python3 -c 'bytearray(16 << 20)'"
expect_lines faults '^@\[python3\]: [0-9]{4,}$'

# an interactive bash reads its commands with readline (in a terminal)
if command -v script >/dev/null; then
  printf 'echo bpftrace-marker\nexit\n' | timeout 60 "$UT" -q --summary-only -c "script -qec 'bash --norc --noprofile -i' /dev/null" \
	"$dir/bashreadline.ut" >"$TMP/bashreadline.out" 2>"$TMP/bashreadline.err"
  expect_lines bashreadline "$T  [0-9]+ +echo bpftrace-marker$"
else
  skip bpftrace/bashreadline/runs "no script(1) to give bash a terminal"
fi

# block I/O: direct writes to a file on a loop device's ext4
. "$(dirname "$0")/../iostack/loopdev.sh"
if loopdev_create 64; then
  io="dd if=/dev/zero of=$LOOPDEV_MNT/data bs=64k count=16 oflag=direct"
  run bitesize "$io"
  expect_lines bitesize '^@\[dd\]:$' '^\[64K, 128K\) +[0-9]+ \|'
  # a request completes in the loop device's worker, not in dd: the
  # trace takes every task (no -c), as bpftrace does, while dd runs
  "$UT" -q --summary-only "$dir/biolatency.ut" >"$TMP/biolatency.out" 2>"$TMP/biolatency.err" &
  tracer=$!
  if wait_for "$TMP/biolatency.out" '^Tracing block device'; then $io >/dev/null 2>&1; fi
  kill -INT "$tracer"
  wait "$tracer"
  expect_lines biolatency '^@usecs:$' '^\[[0-9KM]+.*\) +[1-9][0-9]* \|'
else
  skip bpftrace/bitesize/runs "$LOOPDEV_ERROR"
  skip bpftrace/biolatency/runs "$LOOPDEV_ERROR"
fi

# kprobes: where this kernel has them (the kernel matrix's guests do)
if "$UT" --info | grep -q '^  kprobe  *works'; then
  timeout 60 "$UT" -q --summary-only -d 2.5 "$dir/vfsstat.ut" >"$TMP/vfsstat.out" 2>"$TMP/vfsstat.err"
  expect_lines vfsstat "$T$" '^@\[vfs_read\]: [0-9]+$'
else
  skip bpftrace/vfsstat/runs "this kernel runs no kprobes (tests/matrix/guest/80-bpftrace.sh runs it)"
fi
