#!/usr/bin/env bash
# make install / make uninstall: builds with PREFIX under a scratch
# directory, installs there, and runs the installed binary with nothing but
# PATH set, from outside the source tree (so it must find its stdlib,
# scripts, bpf/ut.h and libut-bpfcc.so under PREFIX).  Then a DESTDIR
# install for packagers, and uninstall.
cd "$(dirname "$0")/../.."
. tests/lib.sh
src=$PWD
build=$TMP/build prefix=$TMP/prefix
run_make() { make -s -C "$src" BUILD="$build" "$@" >"$TMP/make.log" 2>&1; }

if run_make PREFIX="$prefix" install; then pass "make install"; else
	fail "make install" "$(tail -5 "$TMP/make.log")"; exit 0; fi

for f in bin/uring-trace lib/uring-trace/libut-bpfcc.so share/uring-trace/bpf/ut.h \
	 share/uring-trace/bpf/records.h share/uring-trace/stdlib/io_uring.ut \
	 share/uring-trace/scripts/io_uring.ut share/man/man1/uring-trace.1 \
	 share/bash-completion/completions/uring-trace; do
	if [ -f "$prefix/$f" ]; then pass "installed $f"; else fail "installed $f" "missing"; fi
done

inst() { (cd "$TMP" && env -i PATH="$prefix/bin:/usr/bin:/bin" uring-trace "$@"); }
if inst --help | grep -q '^Usage: uring-trace'; then pass "installed --help"; else fail "installed --help" "no usage"; fi
if inst --emit-c -e 'import "io_uring"; io_uring_complete { @n[comm] = count(); }' >/dev/null 2>"$TMP/err"; then
	pass "installed binary imports the installed stdlib"
else
	fail "installed binary imports the installed stdlib" "$(head -3 "$TMP/err")"
fi
if inst --emit-c >/dev/null 2>"$TMP/err"; then pass "installed default script compiles"; else
	fail "installed default script compiles" "$(head -3 "$TMP/err")"; fi
if grep -q '^\.TH URING\\-TRACE 1' "$prefix/share/man/man1/uring-trace.1" &&
   sed 's/\\-/-/g' "$prefix/share/man/man1/uring-trace.1" | grep -qF "$prefix/share/uring-trace/stdlib"; then
	pass "man page names its prefix"
else
	fail "man page names its prefix" "no .TH header or FILES paths"
fi
if bash -c ". '$prefix/share/bash-completion/completions/uring-trace' && complete -p uring-trace" >/dev/null 2>&1; then
	pass "bash completion loads"
else
	fail "bash completion loads" "complete -p uring-trace failed"
fi

# Tracing with the installed files: clang through UT_LIBDIR, bpf/ut.h
# through UT_DATADIR.
if need_root_bpf "installed binary traces"; then
	if out=$(inst -q -o "$TMP/t.fxt" -e 'BEGIN { printf("installed ok\n"); exit(); }' 2>&1) &&
	   grep -q 'installed ok' <<<"$out"; then
		pass "installed binary traces"
	else
		fail "installed binary traces" "$(head -5 <<<"$out")"
	fi
fi

if run_make PREFIX="$prefix" uninstall && [ -z "$(find "$prefix" -type f)" ]; then
	pass "make uninstall removes every file"
else
	fail "make uninstall removes every file" "left: $(find "$prefix" -type f | head -5 | tr '\n' ' ')"
fi

# DESTDIR: files land under DESTDIR/PREFIX, the binary keeps PREFIX.
dest=$TMP/dest
if run_make PREFIX=/usr/local DESTDIR="$dest" install && [ -x "$dest/usr/local/bin/uring-trace" ] &&
   [ -f "$dest/usr/local/share/uring-trace/stdlib/io_uring.ut" ] &&
   strings "$dest/usr/local/bin/uring-trace" | grep -qx '/usr/local/share/uring-trace'; then
	pass "DESTDIR install"
else
	fail "DESTDIR install" "$(tail -3 "$TMP/make.log")"
fi
if run_make PREFIX=/usr/local DESTDIR="$dest" uninstall && [ -z "$(find "$dest" -type f)" ]; then
	pass "DESTDIR uninstall"
else
	fail "DESTDIR uninstall" "left: $(find "$dest" -type f | head -5 | tr '\n' ' ')"
fi
