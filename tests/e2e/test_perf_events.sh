#!/usr/bin/env bash
# Probes on perf events end to end: profile (a timer on every CPU) with
# kstack on a busy loop, software events, hardware events where the
# machine has them (a VM usually has none: --info says so, and a script
# needing one says why it cannot run), interval:hz.  -c filters profile
# and software hits to the command's own.
source "$(dirname "$0")/../lib.sh"
need_root_bpf perf_events || exit 0

# A busy loop in the kernel: dd reading /dev/zero spends its time clearing
# user memory, in read_zero.
"$UT" -q --summary-only --json "$TMP/profile.json" -c "dd if=/dev/zero of=/dev/null bs=1M count=3000" \
	-e 'profile:hz:999 { @stacks[kstack] = count(); @comm[comm] = count(); }' >/dev/null 2>"$TMP/profile.err"
if python3 - "$TMP/profile.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
comms = {e["key"][0] for e in m["@comm"]}
assert comms <= {"dd", "sh", "uring-trace"}, comms   # the command is uring-trace until it execs, then sh
frames = [f for e in m["@stacks"] for f in e["key"][0]]
assert any(f.startswith("read_zero+0x") for f in frames), frames[:20]
assert any(f.startswith("do_syscall_64+0x") for f in frames), frames[:20]
PY
then pass perf_events/profile_kstack; else fail perf_events/profile_kstack "$(head -c 800 "$TMP/profile.json") $(cat "$TMP/profile.err")"; fi

# software events: every page fault of a process touching 64 MB, by its
# bpftrace spelling (faults) and its own (page-faults)
"$UT" -q --summary-only --json "$TMP/faults.json" -c "/usr/bin/python3 -c 'bytearray(64 << 20)'" \
	-e 'software:faults:1 { @faults[comm] = count(); } software:page-faults:1000 { @thousands = count(); }
	software:cpu-clock { @clock = count(); }' >/dev/null 2>"$TMP/faults.err"
if python3 - "$TMP/faults.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["maps"]
faults = {e["key"][0]: e["value"] for e in m["@faults"]}
assert faults.get("python3", 0) > 1000, faults   # 64 MB is 16384 pages
assert m["@thousands"] and m["@thousands"][0]["value"] >= 1, m["@thousands"]
PY
then pass perf_events/software_faults; else fail perf_events/software_faults "$(head -c 800 "$TMP/faults.json") $(cat "$TMP/faults.err")"; fi

# -l lists the software events, and -lv their periods
if "$UT" -l 'software:*' | grep -qx 'software:page-faults' && "$UT" -lv 'software:cs' | grep -q 'period 1000 events'
then pass perf_events/list_software; else fail perf_events/list_software "$("$UT" -lv 'software:c*' 2>&1)"; fi

# hardware: --info tries it; where it works a probe counts, where not the
# script says why and an optional one is left out
hw=$("$UT" --info | grep '^  hardware ')
if [[ $hw == *works* ]]; then
  "$UT" -q --summary-only -c "dd if=/dev/zero of=/dev/null bs=1M count=300" \
	-e 'hardware:cycles:100000 { @cycles = count(); }' >"$TMP/hw.out" 2>&1
  grep -q '^@cycles: [1-9]' "$TMP/hw.out" && pass perf_events/hardware_counts || fail perf_events/hardware_counts "$(cat "$TMP/hw.out")"
elif [[ $hw == *"no: "* ]]; then
  pass perf_events/info_says_no_hardware
  "$UT" -q --summary-only -e 'hardware:cycles { @cycles = count(); } interval:ms:10 { exit(); }' >"$TMP/hw.out" 2>&1
  rc=$?
  [ $rc -ne 0 ] && grep -q 'hardware:cycles.*no hardware perf events' "$TMP/hw.out" && pass perf_events/hardware_refused \
	|| fail perf_events/hardware_refused "exit $rc: $(cat "$TMP/hw.out")"
  "$UT" --summary-only -e 'hardware:cycles? { @cycles = count(); } interval:ms:10 { @ticks = count(); exit(); }' \
	>"$TMP/hwopt.out" 2>&1
  grep -qx '@ticks: 1' "$TMP/hwopt.out" && grep -q 'note: this kernel runs no hardware programs' "$TMP/hwopt.out" \
	&& pass perf_events/hardware_optional || fail perf_events/hardware_optional "$(cat "$TMP/hwopt.out")"
else
  fail perf_events/info_hardware "--info has no hardware line: $hw"
fi

# interval:hz:N is bpftrace's spelling of a period of 1/N s
"$UT" -q --summary-only -e 'interval:hz:50 { @ticks += 1; if (@ticks == 3) { exit(); } }' >"$TMP/hz.out" 2>&1
grep -Eq '^@ticks: ([3-9]|[1-9][0-9]+)$' "$TMP/hz.out" && pass perf_events/interval_hz || fail perf_events/interval_hz "$(cat "$TMP/hz.out")"
