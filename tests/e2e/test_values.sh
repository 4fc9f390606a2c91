#!/usr/bin/env bash
# bpftrace's values end to end: literals (1e6, 1_000_000), positional
# parameters, string ?:, strncmp(), strcontains(), stats(), kstack(N),
# ksym(), usym(), func, join() and reads through user pointers (*p, p[i],
# a user struct's fields), fields through a pointer held as a number, and
# #ifndef BPFTRACE_HAVE_BTF blocks.
source "$(dirname "$0")/../lib.sh"
need_root_bpf values || exit 0
W=$UT_WORKLOADS/usdt_probes

cat >"$TMP/begin.ut" <<'UT'
#!/usr/bin/env bpftrace
#include <linux/sched.h>
#ifndef BPFTRACE_HAVE_BTF
struct task_struct { int pid; };
#endif
BEGIN {
	printf("%d %d %d %s %s %d\n", 1_000_000, 1e6 + $1, $#, str($2), str($3), $4);
	printf("%s %s\n", $1 > 40 ? "big" : "small", strncmp(str($2), "word", 3) == 0 ? "wor" : "other");
	printf("%d %d %d %d\n", strncmp("hello", "help", 3), strncmp("hello", "help", 4),
	       strcontains("uring-trace", "trace"), strcontains("uring-trace", "bpf"));
	for ($i : 0..10) { @s = stats($i); }
	exit();
}
UT
"$UT" -q --summary-only --json "$TMP/begin.json" "$TMP/begin.ut" 41 words >"$TMP/begin.out" 2>"$TMP/begin.err"
printf '1000000 1000041 2 words  0\nbig wor\n0 1 1 0\n\n@s: count 10, average 4, total 45\n' >"$TMP/begin.want"
if diff "$TMP/begin.want" "$TMP/begin.out" >"$TMP/diff" && grep -q '"@s":\[{"key":\[\],"value":{"count":10,"average":4,"total":45}}\]' "$TMP/begin.json"
then pass values/literals_positional_strings_stats; else fail values/literals_positional_strings_stats "$(cat "$TMP/diff" "$TMP/begin.err" "$TMP/begin.json")"; fi

# join() of a command's argv, with bpftrace's separator and another;
# argv[1] and *argv: reads through user pointers
"$UT" -q --summary-only -c "/bin/echo one 'two three'" -e 'tracepoint:syscalls:sys_enter_execve {
	join(args->argv); join(args->argv, ","); printf("%s|%s\n", str(*args->argv), str(args->argv[2])); }' \
	>"$TMP/join.out" 2>"$TMP/join.err"
if grep -qx '/bin/echo one two three' "$TMP/join.out" && grep -qx '/bin/echo,one,two three' "$TMP/join.out" \
	&& grep -qx '/bin/echo|two three' "$TMP/join.out"
then pass values/join_and_user_arrays; else fail values/join_and_user_arrays "$(cat "$TMP/join.out" "$TMP/join.err")"; fi

# fields read through a pointer held as a number (curtask): loads through
# bpf_rdonly_cast where the kernel has it (-v says so), a string and a
# pointer on the way to a field among them; each matches the value read
# another way.  An embedded struct's address kept as a value (fdtab) is a
# number still: a mask applies.
"$UT" -v -q --summary-only --json "$TMP/cast.json" -c "/bin/dd if=/dev/zero of=/dev/null count=3" -e '
tracepoint:syscalls:sys_enter_read {
	$t = (struct task_struct *)curtask;
	$fdtab = $t->files->fdtab;
	@same[$t->comm == comm, $t->pid == tid, $t->group_leader->pid == pid, ((u64)$fdtab & 7) == 0] = count();
}' >/dev/null 2>"$TMP/cast.err"
if grep -qw bpf_rdonly_cast /proc/kallsyms; then how="are loads (bpf_rdonly_cast)"; else how="are bpf_probe_read_kernel calls"; fi
if grep -q '"@same":\[{"key":\[1,1,1,1\],"value":[1-9][0-9]*}\]' "$TMP/cast.json" \
	&& grep -q "held as numbers $how" "$TMP/cast.err"
then pass values/fields_through_numbers; else fail values/fields_through_numbers "$(cat "$TMP/cast.json" "$TMP/cast.err")"; fi

# a user struct's fields: nanosleep's struct __kernel_timespec (naptime.bt)
"$UT" -q --summary-only -c "/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).syscall(35, (ctypes.c_long * 2)(0, 20000000), None)'" \
	-e 'tracepoint:syscalls:sys_enter_nanosleep /args->rqtp->tv_sec + args->rqtp->tv_nsec/ {
	printf("%d.%03d\n", args->rqtp->tv_sec, (uint64)args->rqtp->tv_nsec / 1e6); }' >"$TMP/nap.out" 2>"$TMP/nap.err"
grep -qx '0.020' "$TMP/nap.out" && pass values/user_struct_fields || fail values/user_struct_fields "$(cat "$TMP/nap.out" "$TMP/nap.err")"

# func; kstack(N) keeps N frames; ksym() of a kernel function pointer
# (what /dev/zero reads with); usym() of a user one (the workload's
# usdt_callback, named while the process runs)
"$UT" -q --summary-only --json "$TMP/sym.json" -c "/bin/dd if=/dev/zero of=/dev/null count=3" -e '
tracepoint:syscalls:sys_enter_read, tracepoint:syscalls:sys_enter_write { @calls[func] = count(); }
tracepoint:syscalls:sys_enter_read /args->fd < curtask->files->fdt->max_fds/ {
	@reader[ksym(curtask->files->fdt->fd[args->fd]->f_op->read_iter)] = count();
	@stacks[kstack(2)] = count();
}' >/dev/null 2>"$TMP/sym.err"
"$UT" -q --summary-only --json "$TMP/usym.json" -c "$W 1 --delay-ms 300" -e "usdt:$W:callback { @[usym(arg0)] = count(); }" \
	>/dev/null 2>"$TMP/usym.err"
if python3 - "$TMP/sym.json" "$TMP/usym.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
calls = {e["key"][0] for e in m["@calls"]}
assert {"sys_enter_read", "sys_enter_write"} <= calls, calls
assert "read_iter_zero" in {e["key"][0] for e in m["@reader"]}, m["@reader"]
assert all(0 < len(e["key"][0]) <= 2 for e in m["@stacks"]), m["@stacks"]
u = json.load(open(sys.argv[2]))["maps"]["@"]
assert u == [{"key": ["usdt_callback"], "value": 1}], u
PY
then pass values/func_kstack_ksym_usym; else fail values/func_kstack_ksym_usym "$(head -c 800 "$TMP/sym.json") $(cat "$TMP/sym.err" "$TMP/usym.json" "$TMP/usym.err")"; fi

# tuples: as keys (@m[(a, b)] is @m[a, b]), values and locals, their
# elements; printed as bpftrace prints them, arrays in JSON
"$UT" -q --summary-only --json "$TMP/tuples.json" -e 'BEGIN {
	$t = ("one", 2, -3); @keys[("k", 1)] = count(); @t = $t; @first = $t.0; @sum = $t.1 + $t.2;
	@grown = ("s", 1); @grown = ("a longer one", 2); exit(); }' >"$TMP/tuples.out" 2>"$TMP/tuples.err"
if grep -qx '@t: (one, 2, -3)' "$TMP/tuples.out" && grep -qx '@keys\[k, 1\]: 1' "$TMP/tuples.out" \
	&& grep -qx '@grown: (a longer one, 2)' "$TMP/tuples.out" && python3 - "$TMP/tuples.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
assert m["@t"] == [{"key": [], "value": ["one", 2, -3]}], m["@t"]
assert m["@keys"] == [{"key": ["k", 1], "value": 1}], m["@keys"]
assert m["@first"][0]["value"] == "one" and m["@sum"][0]["value"] == -1, m
PY
then pass values/tuples; else fail values/tuples "$(cat "$TMP/tuples.out" "$TMP/tuples.err" "$TMP/tuples.json")"; fi

# uptr(): an address held as an integer is a user pointer again (bpftrace's)
"$UT" -q --summary-only -c "cat /etc/hostname" -e 'tracepoint:syscalls:sys_enter_openat /comm == "cat"/ {
	$addr = (u64)args->filename; @opened[str(uptr($addr))] = count(); }' >"$TMP/uptr.out" 2>"$TMP/uptr.err"
grep -qx '@opened\[/etc/hostname\]: 1' "$TMP/uptr.out" && pass values/uptr || fail values/uptr "$(cat "$TMP/uptr.out" "$TMP/uptr.err")"

# A map read in the predicate is looked up once (compiler/gen_expr.c,
# gen_map_read): the body takes its value until it writes the map, and a
# loop's turn reads what the turn before wrote; placed and all in the kernel
cat >"$TMP/pred.ut" <<'UT'
tracepoint:syscalls:sys_enter_read { @start[tid] = 5; @other[tid] = 9; }
tracepoint:syscalls:sys_exit_read /@start[tid] || @other[tid]/ {
	$first = @start[tid]; @start[tid] = 7; $written = @start[tid];
	$other = @other[tid]; delete(@other[tid]); $deleted = @other[tid];
	for ($i : 0..3) { $turn = @start[tid]; @start[tid] = $turn + 1; }
	printf("%d %d %d %d %d\n", $first, $written, $other, $deleted, @start[tid]);
}
UT
for placement in placed --all-in-kernel; do
	opt=$placement; [ "$opt" = placed ] && opt=
	# shellcheck disable=SC2086
	"$UT" -q --summary-only $opt -c "/bin/dd if=/dev/zero of=/dev/null count=3 status=none" "$TMP/pred.ut" \
		>"$TMP/pred.out" 2>"$TMP/pred.err"
	if [ "$(grep -cx '5 7 9 0 10' "$TMP/pred.out")" -ge 4 ] && ! grep -x '[-0-9 ][-0-9 ]*' "$TMP/pred.out" | grep -vqx '5 7 9 0 10'; then
		pass "values/predicate_reads_$placement"
	else
		fail "values/predicate_reads_$placement" "$(cat "$TMP/pred.out" "$TMP/pred.err")"
	fi
done

# A task's name through a BTF tracepoint's argument is read with loads
# (bpf/ut.h, ut_copy_str): equal to the name, as a key and in a compare
"$UT" -q --summary-only --json "$TMP/comm.json" -c "sleep 0.3" -e '
tp_btf:sched:sched_switch /args.prev.comm == "sleep"/ { @s[args.prev.comm, args.next.comm == "sleep"] = count(); }
unfiltered tp_btf:sched:sched_waking /args.p.comm == "sleep"/ { @w[args.p.comm] = count(); }' >/dev/null 2>"$TMP/comm.err"
if python3 - "$TMP/comm.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
assert [e["key"] for e in m["@s"]] == [["sleep", 0]] and m["@s"][0]["value"] >= 1, m
assert [e["key"] for e in m["@w"]] == [["sleep"]] and m["@w"][0]["value"] >= 1, m
PY
then pass values/btf_task_names; else fail values/btf_task_names "$(cat "$TMP/comm.err" "$TMP/comm.json")"; fi

# ntop(): addresses as inet_ntop(3) writes them (bpf/ut.h, ut_ntop4 and
# ut_ntop6), of a BTF struct's fields and of a classic tracepoint's arrays,
# with #include <sys/socket.h>'s AF_INET6 and bswap() of the port: connections over the loopback to addresses added to it for the
# test, each IPv6 one with its own rule of compression (the longest zero
# run, the first of two equal ones, no run of one group, a mapped IPv4
# address), against Python's inet_ntop.
V6="2001:db8::1:0:0:1 2001:db8:a:b:c:d:e:f 1:: 2001:0:0:1::1 fd00::ff00 fec0:1:2:3:4:5:6:7 0:2:3:4:5:6:7:8 abcd:ef01::"
V4="127.0.0.1 127.10.200.3 127.255.0.99"
cat >"$TMP/connect.py" <<'PY'
import socket, sys
for a in sys.argv[1:]:
    fam = socket.AF_INET6 if ":" in a else socket.AF_INET
    s = socket.socket(fam); s.bind((a, 0)); s.listen()
    c = socket.socket(fam); c.connect(s.getsockname()); x, _ = s.accept(); c.close(); x.close(); s.close()
s = socket.socket(socket.AF_INET); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.socket(socket.AF_INET6); c.connect(("::ffff:127.0.0.1", s.getsockname()[1])); x, _ = s.accept()
c.close(); x.close(); s.close()
PY
added=
for a in $V6; do ip -6 addr add "$a/128" dev lo nodad 2>/dev/null && added="$added $a"; done
"$UT" -q --summary-only --json "$TMP/ntop.json" -c "/usr/bin/python3 $TMP/connect.py $V6 $V4" -e '
#include <sys/socket.h>
tp_btf:sock:inet_sock_set_state /args.newstate == 1/ {
	$sk = args.sk;
	if ($sk.__sk_common.skc_family == AF_INET6) {
		@addr[ntop(AF_INET6, $sk.__sk_common.skc_v6_daddr.in6_u.u6_addr8), bswap($sk.__sk_common.skc_dport) > 0] = count();
	} else {
		@addr[ntop($sk.__sk_common.skc_daddr), bswap($sk.__sk_common.skc_dport) > 0] = count();
	}
}
tracepoint:sock:inet_sock_set_state /args.newstate == 1/ {
	@tp_addr[args.family == AF_INET6 ? ntop(args.daddr_v6) : ntop(args.daddr)] = count();
}' >/dev/null 2>"$TMP/ntop.err"
for a in $added; do ip -6 addr del "$a/128" dev lo; done
if python3 - "$TMP/ntop.json" $V6 $V4 <<'PY'
import json, socket, sys
m = json.load(open(sys.argv[1]))["maps"]
got = sorted(e["key"][0] for e in m["@addr"] if e["key"][1])
want = [socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, a)) for a in sys.argv[2:] if ":" in a]
want = sorted(want + [a for a in sys.argv[2:] if ":" not in a] + ["::ffff:127.0.0.1"])
assert got == want, "got %s, want %s" % (got, want)
got = sorted(e["key"][0] for e in m["@tp_addr"])   # the classic tracepoint's arrays: the same addresses
assert got == want, "tracepoint: got %s, want %s" % (got, want)
PY
then pass values/ntop; else fail values/ntop "$(cat "$TMP/ntop.err" "$TMP/ntop.json")"; fi

# #include <header>: the standard library's constants for it stand for the
# header's macros; a script's own constant of the same name wins; a header
# it has nothing for is a comment.
"$UT" -q --summary-only -e '#include <linux/sched.h>
#include <sys/socket.h>
#include <linux/socket.h>
#include "no/such/header.h"
const AF_INET = 99;
BEGIN { printf("%d %d %d %d\n", TASK_RUNNING, TASK_UNINTERRUPTIBLE, AF_INET6, AF_INET); exit(); }' >"$TMP/include.out" 2>&1
[ "$(cat "$TMP/include.out")" = "0 2 10 99" ] && pass values/include_constants || fail values/include_constants "$(cat "$TMP/include.out")"

# A function's locals are its own: a function called by another (or by a
# probe) with a local of the same name leaves the caller's alone, and a
# caller's local passed as an argument is the caller's.
"$UT" -q --summary-only -e 'fn inner(v) { $x = v + 1; $i = $x; }
fn outer() { $x = 1; inner($x); for ($i : 0..2) { inner($i); } printf("%d ", $x); }
BEGIN { $x = 10; outer(); inner($x); printf("%d\n", $x); exit(); }' >"$TMP/fn_scope.out" 2>&1
[ "$(cat "$TMP/fn_scope.out")" = "1 10" ] && pass values/fn_locals_own || fail values/fn_locals_own "$(cat "$TMP/fn_scope.out")"

# cat(): a file's contents, its path a format as printf's, when the reader
# gets the record; a file it cannot read (or a FIFO, which could block the
# reader) is said on stderr and tracing goes on
printf 'first line\nsecond line\n' >"$TMP/cat-7.txt"
mkfifo "$TMP/cat.fifo"
for placement in placed --all-in-kernel; do
	opt=$placement; [ "$opt" = placed ] && opt=
	# shellcheck disable=SC2086
	"$UT" -q --summary-only $opt -e "BEGIN { printf(\"<\"); cat(\"$TMP/cat-%d.txt\", 7); cat(\"$TMP/none\");
		cat(\"$TMP/cat.fifo\"); printf(\">\\n\"); exit(); }" >"$TMP/cat.out" 2>"$TMP/cat.err"
	if [ "$(cat "$TMP/cat.out")" = "$(printf '<first line\nsecond line\n>')" ] &&
		grep -q "cat(): cannot read $TMP/none: No such file" "$TMP/cat.err" && grep -q "cat.fifo: not a file" "$TMP/cat.err"
	then pass "values/cat_$placement"; else fail "values/cat_$placement" "$(cat "$TMP/cat.out" "$TMP/cat.err")"; fi
done

# kaddr(): a kernel symbol's address, which libbpf resolves when it loads
# the program; *x of an integer reads the 64 bits there, as bpftrace's
# loads.bt reads avenrun: the kernel's ELF notes (/sys/kernel/notes) and
# the start of its BTF (/sys/kernel/btf/vmlinux), both read-only data
if grep -q ' __start_notes$' /proc/kallsyms && [ -r /sys/kernel/notes ]; then
"$UT" -q --summary-only -e 'BEGIN { $n = kaddr("__start_notes"); printf("%x %x %x\n", $n, *$n, *(kaddr("__start_BTF") + 0)); exit(); }' \
	>"$TMP/kaddr.out" 2>"$TMP/kaddr.err"
want="$(awk '$3 == "__start_notes" { sub(/^0+/, "", $1); print $1 }' /proc/kallsyms) $(od -A n -t x8 -N 8 /sys/kernel/notes | tr -d ' ' | sed 's/^0*//') $(od -A n -t x8 -N 8 /sys/kernel/btf/vmlinux | tr -d ' ' | sed 's/^0*//')"
[ "$(cat "$TMP/kaddr.out")" = "$want" ] && pass values/kaddr_and_integer_reads \
	|| fail values/kaddr_and_integer_reads "got '$(cat "$TMP/kaddr.out")', want '$want' $(cat "$TMP/kaddr.err")"
else
  skip values/kaddr_and_integer_reads "no __start_notes in /proc/kallsyms or no /sys/kernel/notes"
fi

# A BPF map that fills refuses new keys without a word from the kernel: at
# exit (before END's clear()) uring-trace finds it full and says so
"$UT" --summary-only --all-in-kernel -c "dd if=/dev/zero of=/dev/null bs=1 count=70000 status=none" \
	-e 'tracepoint:syscalls:sys_enter_read { @m[nsecs] = 1; } END { clear(@m); }' >/dev/null 2>"$TMP/full.err"
"$UT" --summary-only --all-in-kernel -c "dd if=/dev/zero of=/dev/null bs=1 count=100 status=none" \
	-e 'tracepoint:syscalls:sys_enter_read { @m[nsecs] = 1; } END { clear(@m); }' >/dev/null 2>"$TMP/notfull.err"
if grep -q '@m is full in the kernel: updates of new keys were dropped' "$TMP/full.err" && ! grep -q 'full' "$TMP/notfull.err"
then pass values/kernel_map_full_said; else fail values/kernel_map_full_said "$(cat "$TMP/full.err" "$TMP/notfull.err")"; fi

# buf(p, n) and %r: bytes as bpftrace prints them, printable ones as they
# are, the others as \xNN; n up to 64, a constant one the field's size
printf 'a\001b\377cd' >"$TMP/bytes"
for placement in placed --all-in-kernel; do
	opt=$placement; [ "$opt" = placed ] && opt=
	# shellcheck disable=SC2086
	"$UT" -q --summary-only $opt -c "dd if=$TMP/bytes of=/dev/null bs=16 status=none" -e '
tracepoint:syscalls:sys_enter_write /args.count == 6/ { printf("[%r] [%r]\n", buf(args.buf, args.count), buf(args.buf, 2)); }' \
		>"$TMP/buf.out" 2>"$TMP/buf.err"
	[ "$(cat "$TMP/buf.out")" = '[a\x01b\xffcd] [a\x01]' ] && pass "values/buf_$placement" \
		|| fail "values/buf_$placement" "$(cat "$TMP/buf.out" "$TMP/buf.err")"
done

# bpftrace's rand (new at each use), jiffies and numaid, in the kernel and
# captured for the reader
for placement in placed --all-in-kernel; do
	opt=$placement; [ "$opt" = placed ] && opt=
	# shellcheck disable=SC2086
	"$UT" -q --summary-only $opt -e 'BEGIN { @r[rand] = count(); @r[rand] = count(); @r[rand] = count();
		printf("%d %d\n", jiffies > 0, numaid < 1024); exit(); }' >"$TMP/rand.out" 2>"$TMP/rand.err"
	# three draws, at least two different (all three equal: one chance in 2^64)
	if [ "$(head -1 "$TMP/rand.out")" = "1 1" ] && [ "$(grep -c '^@r\[' "$TMP/rand.out")" -ge 2 ]
	then pass "values/rand_jiffies_numaid_$placement"; else fail "values/rand_jiffies_numaid_$placement" "$(cat "$TMP/rand.out" "$TMP/rand.err")"; fi
done

# cpid: -c's command's pid, 0 without -c
"$UT" -q --summary-only -c "/bin/sh -c 'echo \$\$ >$TMP/cpid.want; /bin/true'" \
	-e 'tracepoint:sched:sched_process_exit /pid == cpid/ { printf("%d\n", cpid); }' >"$TMP/cpid.out" 2>"$TMP/cpid.err"
"$UT" -q --summary-only -e 'BEGIN { printf("%d\n", cpid); exit(); }' >"$TMP/nocpid.out" 2>&1
[ "$(cat "$TMP/cpid.out")" = "$(cat "$TMP/cpid.want")" ] && [ "$(cat "$TMP/nocpid.out")" = 0 ] && pass values/cpid \
	|| fail values/cpid "$(cat "$TMP/cpid.out" "$TMP/cpid.want" "$TMP/cpid.err" "$TMP/nocpid.out")"

# macaddr(): six bytes as bpftrace writes a MAC address, here of the
# process's memory (a write's buffer); a kernel struct's array loads too
printf '\000\021\042\252\273\377' >"$TMP/mac.bin"
"$UT" -q --summary-only -c "dd if=$TMP/mac.bin of=/dev/null bs=16 status=none" -e '
tracepoint:syscalls:sys_enter_write /args.count == 6/ { printf("%s\n", macaddr(args.buf)); }
BEGIN { printf("%s\n", macaddr(((struct ethhdr *)curtask).h_source)); }' >"$TMP/mac.out" 2>"$TMP/mac.err"
grep -qx '00:11:22:AA:BB:FF' "$TMP/mac.out" && grep -Eqx '([0-9A-F]{2}:){5}[0-9A-F]{2}' <(head -1 "$TMP/mac.out") \
	&& pass values/macaddr || fail values/macaddr "$(cat "$TMP/mac.out" "$TMP/mac.err")"

# sizeof() and offsetof(): sizes known here, a struct's size and a
# member's offset relocated to the running kernel's (pid and tgid are
# neighbours in task_struct)
"$UT" -q --summary-only -e 'BEGIN { $x = 5; printf("%d %d %d %d %d %d\n", sizeof(u16), sizeof(struct task_struct *),
	sizeof($x), sizeof(comm), sizeof(struct task_struct) > 1000,
	offsetof(struct task_struct, tgid) - offsetof(struct task_struct, pid)); exit(); }' >"$TMP/sizeof.out" 2>"$TMP/sizeof.err"
[ "$(cat "$TMP/sizeof.out")" = "2 8 8 16 1 4" ] && pass values/sizeof_offsetof \
	|| fail values/sizeof_offsetof "$(cat "$TMP/sizeof.out" "$TMP/sizeof.err")"

# reg("ip"): a register where the probe fired, from its context: a uprobe's
# instruction pointer is the probed function's entry (named while the
# process lives: it sleeps after its calls); a profile sample's
printf 'import os, time\nfor i in range(50): os.getppid()\ntime.sleep(0.5)\n' >"$TMP/getppid50.py"
"$UT" -q --summary-only --json "$TMP/reg.json" -c "/usr/bin/python3 $TMP/getppid50.py" \
	-e 'uprobe:libc:getppid { @[usym(reg("ip"))] = count(); @sp = reg("sp") > 0; }
	profile:hz:99 { @sampled = reg("ip") > 0; }' >/dev/null 2>"$TMP/reg.err"
if python3 - "$TMP/reg.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
at = {e["key"][0]: e["value"] for e in m["@"]}
assert at.get("getppid", 0) >= 50 and m["@sp"][0]["value"] == 1, m
PY
then pass values/reg; else fail values/reg "$(cat "$TMP/reg.err" "$TMP/reg.json")"; fi
