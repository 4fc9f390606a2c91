#!/usr/bin/env bash
# scripts/fileio.ut traces the fileio workload (tests/workloads/README.md,
# --engine sync) on ext4 on the root disk ($TMP) and on a loop device:
#  - pattern mode under -c, with --bad-fd-read: the summary and the trace
#    name the workload's file by its exact path, with the workload's counts:
#    64 pread64 of 4 KiB (262144 bytes read), 16 pwrite64 (65536 bytes
#    written), 1 fsync, its opens and closes plus the open and close of its
#    prepare step (the file is prepared by an untraced run first, so that
#    step writes nothing); every call a slice with the file's path, opens
#    ending with the path passed and the path opened; the read on the
#    closed fd ends with EBADF and is counted under "" (no file);
#  - wait mode under -p: the file was opened before tracing began, yet its
#    64 pread64 and its close carry its path, and no open of it is seen;
#  - each of the 20 calls traced, made once on one file, is counted under
#    it with the bytes it moved;
#  - a failed open is summarized under the name the program passed, an
#    open through a symlink names the file it reached, a pipe is "pipefs:".
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/loopdev.sh"
source "$(dirname "$0")/fileio_wait.sh"
need_root_bpf fileio || exit 0
SCRIPT=$UT_ROOT/scripts/fileio.ut
FILEIO=$UT_WORKLOADS/fileio
PY=/usr/bin/python3

# check NAME DIR MODE FILE: compares DIR's summary.json and trace dump with
# the workload's workload.json.
check() {
	"$PY" - "$@" <<'PY'
import json, re, sys
name, d, mode, path = sys.argv[1:5]
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + f"fileio/{name}/{what}" + ("" if cond else ": " + why))

w = json.load(open(f"{d}/workload.json"))
m = json.load(open(f"{d}/summary.json"))
maps = m["maps"]
def table(map_name):
    return {tuple(e["key"]) if len(e["key"]) > 1 else e["key"][0]: e["value"] for e in maps.get(map_name, [])}
calls, errors = table("@calls"), table("@errors")
read_bytes, written_bytes = table("@bytes_read"), table("@bytes_written")

# the trace: every slice of the workload's thread, begin and end paired
events = []
arg_re = re.compile(r'(\w+): \w+ ("(?:[^"\\]|\\.)*"|[^,}]*)')
for line in open(f"{d}/dump.txt"):
    e = re.search(r'event (duration_begin|duration_end) ts=\d+ pid=(\d+) tid=\d+ cat="[^"]*" name="([^"]*)" args=\{(.*)\}$', line)
    if e and int(e.group(2)) == w["pid"]:
        args = {k: v[1:-1] if v.startswith('"') else v for k, v in arg_re.findall(e.group(4))}
        events.append((e.group(1), e.group(3), args))
slices, stack = [], []
for kind, call, args in events:
    if kind == "duration_begin":
        stack.append((call, args))
    elif stack:
        begin_call, begin_args = stack.pop()
        slices.append((begin_call, begin_args, args))
check("slices_paired", not stack and len(slices) == len(events) // 2, f"{len(stack)} slices left open")
def slices_of(call, file):
    return [s for s in slices if s[0] == call and (s[1].get("file") == file or s[2].get("file") == file)]

check("workload_ok", w["ok"], "the workload saw unexpected results")
check("no_lost_events", m["lost"] == 0, f'{m["lost"]} lost')
ops = w["ops"]
reads = [o for o in ops if o["op"] == "read" and o["res"] == w["io_size"]]
writes = [o for o in ops if o["op"] == "write"]
n = lambda op: sum(1 for o in ops if o["op"] == op)
check("file_path", w["path"] == path, f'the workload used {w["path"]}')
check("preads", calls.get((path, "pread64"), 0) == len(reads), f'{calls.get((path, "pread64"))} vs {len(reads)}')
check("bytes_read", read_bytes.get(path, 0) == sum(o["res"] for o in reads), f"{read_bytes}")
check("pread_slices", len(slices_of("pread64", path)) == len(reads)
      and all(s[1].get("count") == str(w["io_size"]) and s[2].get("ret") == str(w["io_size"]) for s in slices_of("pread64", path))
      and sorted(int(s[1]["offset"]) for s in slices_of("pread64", path)) == sorted(o["offset"] for o in reads),
      f'{len(slices_of("pread64", path))} slices, first {slices_of("pread64", path)[:1]}')
check("closes", calls.get((path, "close"), 0) == n("close") + (mode == "pattern"), f"{calls.get((path, 'close'))}")
check("close_slices", len(slices_of("close", path)) == calls.get((path, "close"), -1), "")
if mode == "wait":
    check("opened_before_trace", calls.get((path, "openat"), 0) == 0 and w["mode"] == "wait", f"{calls.get((path, 'openat'))}")
else:
    check("prepared_before", w["prepare"]["bytes_written"] == 0, "the traced run had to prepare its file")
    check("pwrites", calls.get((path, "pwrite64"), 0) == len(writes), f"{calls.get((path, 'pwrite64'))} vs {len(writes)}")
    check("bytes_written", written_bytes.get(path, 0) == sum(o["res"] for o in writes), f"{written_bytes}")
    check("fsync", calls.get((path, "fsync"), 0) == n("fsync") == 1, f"{calls.get((path, 'fsync'))}")
    # the prepare step opens the file once more
    check("opens", calls.get((path, "openat"), 0) == n("open") + 1, f"{calls.get((path, 'openat'))}")
    opens = slices_of("openat", path)
    check("open_slices", len(opens) == n("open") + 1 and all(s[2].get("filename") == path for s in opens),
          f"{opens[:2]}")
    bad = [o for o in ops if o["op"] == "read" and o["res"] == -9]
    check("ebadf_counted", len(bad) == 1 and errors.get(("", "pread64", "-EBADF"), 0) == 1, f"{errors}")
    ebadf = [s for s in slices if s[0] == "pread64" and s[2].get("ret") == "-EBADF"]
    check("ebadf_slice", len(ebadf) == 1 and ebadf[0][1].get("file") == "" and ebadf[0][1].get("fd") == str(bad[0]["fd"]),
          f"{ebadf}")
PY
}

# pattern NAME FILE: pattern mode traced with -c.
pattern() {
	local name=$1 file=$2 out=$TMP/$1
	mkdir -p "$out"
	"$FILEIO" --file "$file" --engine sync --reads 64 --writes 16 >/dev/null   # prepare the file untraced
	if ! "$UT" -q --json "$out/summary.json" -o "$out/trace.fxt" \
		-c "$FILEIO --file $file --engine sync --reads 64 --writes 16 --bad-fd-read > $out/workload.json" "$SCRIPT" \
		>"$out/out.txt" 2>"$out/err.txt"; then
		fail "fileio/$name/runs" "$(head -c 400 "$out/err.txt")"
		return
	fi
	pass "fileio/$name/runs"
	"$UT" dump "$out/trace.fxt" >"$out/dump.txt"
	check "$name" "$out" pattern "$file"
}

# wait_mode NAME FILE: wait mode traced with -p, started after the open.
wait_mode() {
	local out=$TMP/$1
	trace_fileio_waiting "fileio/$1" "$out" "$2" "$SCRIPT" || return
	"$UT" dump "$out/trace.fxt" >"$out/dump.txt"
	check "$1" "$out" wait "$2"
}

pattern root "$TMP/data"
wait_mode root_opened_before "$TMP/data"

if loopdev_create 64; then
	pattern loop "$LOOPDEV_MNT/data"
	wait_mode loop_opened_before "$LOOPDEV_MNT/data"
else
	skip fileio/loop "$LOOPDEV_ERROR"
fi

# Every call the script traces, once each on one file (x86-64 numbers for
# the calls glibc does not make itself: creat, open, openat2,
# sync_file_range): counted under the file, with the bytes each moved.
cat >"$TMP/calls.py" <<'CALLS'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
path = sys.argv[1].encode()
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
how = OpenHow(os.O_RDONLY, 0, 0)
for fd in (libc.syscall(85, path, 0o644), libc.syscall(2, path, os.O_RDONLY, 0),
           libc.syscall(437, -100, path, ctypes.byref(how), ctypes.sizeof(how))):
    assert fd >= 0, ctypes.get_errno()
    os.close(fd)
fd = os.open(path, os.O_RDWR)
os.write(fd, b"x" * 8192)                     # written: 8192
os.writev(fd, [b"a" * 100, b"b" * 100])       # 200
os.pwritev(fd, [b"c" * 50], 0)                # 50
os.pwrite(fd, b"z", 9)                        # 1
os.lseek(fd, 0, os.SEEK_SET)
os.read(fd, 10)                               # read: 10
os.readv(fd, [bytearray(10), bytearray(20)])  # 30
os.preadv(fd, [bytearray(30)], 5)             # 30
os.pread(fd, 7, 3)                            # 7
assert libc.syscall(277, fd, 0, 4096, 2) == 0 # sync_file_range(SYNC_FILE_RANGE_WRITE)
os.fdatasync(fd)
os.fsync(fd)
mmap.mmap(fd, 4096).close()                   # mmap closes its own dup of fd
os.close(fd)
CALLS
"$UT" -q --json "$TMP/calls.json" --summary-only -c "$PY $TMP/calls.py $TMP/calls.data" "$SCRIPT" \
	>"$TMP/calls.out" 2>"$TMP/calls.err" || fail fileio/calls/runs "$(head -c 400 "$TMP/calls.err")"
"$PY" - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
f = f"{d}/calls.data"
m = json.load(open(f"{d}/calls.json"))
table = lambda name: {tuple(e["key"]) if len(e["key"]) > 1 else e["key"][0]: e["value"] for e in m["maps"].get(name, [])}
calls = {k[1]: v for k, v in table("@calls").items() if k[0] == f}
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + "fileio/calls/" + what + ("" if cond else ": " + why))
for call in ("creat", "open", "openat2", "openat", "write", "writev", "pwrite64", "lseek", "read", "readv",
             "pread64", "sync_file_range", "fdatasync", "fsync", "mmap"):
    check(call, calls.get(call) == 1, str(calls))
# glibc may make a vectored call with or without flags its "2" variant
check("preadv", calls.get("preadv", 0) + calls.get("preadv2", 0) == 1, str(calls))
check("pwritev", calls.get("pwritev", 0) + calls.get("pwritev2", 0) == 1, str(calls))
check("close", calls.get("close") == 5, str(calls))
check("bytes_read", table("@bytes_read").get(f) == 77, str(table("@bytes_read").get(f)))
check("bytes_written", table("@bytes_written").get(f) == 8443, str(table("@bytes_written").get(f)))
PY

# Names: a failed open under the name passed (relative, as given), an open
# through a symlink under the file reached, head's standard input a pipe
# (head reads with read(); cat may copy with copy_file_range, not traced).
ln -s data "$TMP/link"
(cd "$TMP" && echo piped | "$UT" -q --json "$TMP/names.json" --summary-only -c "head -c 100 link missing-file -" "$SCRIPT" \
	>"$TMP/names.out" 2>"$TMP/names.err")
"$PY" - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(f"{d}/names.json"))
table = lambda name: {tuple(e["key"]): e["value"] for e in m["maps"].get(name, [])}
calls, errors = table("@calls"), table("@errors")
def check(what, cond, why=""):
    print(("PASS " if cond else "FAIL ") + "fileio/names/" + what + ("" if cond else ": " + why))
check("failed_open_by_name_passed", errors.get(("missing-file", "openat", "-ENOENT")) == 1, str(errors))
check("symlink_to_file_reached", calls.get((f"{d}/data", "openat")) == 1 and calls.get((f"{d}/data", "read"), 0) >= 1
      and not any(k[0].endswith("/link") for k in calls), str([k for k in calls if d in k[0]]))
check("pipe_named_by_filesystem", calls.get(("pipefs:", "read"), 0) >= 1, str([k for k in calls if "pipe" in k[0]]))
PY
