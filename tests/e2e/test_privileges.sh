#!/usr/bin/env bash
# Privileges: -c's command runs as the user who started uring-trace through
# sudo (uid, gid and exactly that user's groups, never root's), malformed
# sudo variables refuse to run it, and root runs code only from cache files
# that root alone can change (docs/runtime.md, "Privileges").
source "$(dirname "$0")/../lib.sh"
need_root_bpf privileges || exit 0
if ! command -v sudo >/dev/null || ! command -v useradd >/dev/null; then
	skip privileges "needs sudo and useradd (the deps step installs sudo)"
	exit 0
fi
export UT_CACHE_DIR="$TMP/cache"
chmod 755 "$TMP"   # the test user's command runs in it

# A user of the test's own, with a primary group and a supplementary one,
# allowed to run anything through sudo without a password.
user=utpriv$$
extra=utprivx$$
sudoers=/etc/sudoers.d/ut-privileges-$$
cleanup() {
	rm -f "$sudoers"
	userdel "$user" 2>/dev/null
	groupdel "$user" 2>/dev/null
	groupdel "$extra" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
groupadd "$extra" && useradd -M -d "/home/$user" -U -G "$extra" -s /bin/sh "$user" || {
	fail privileges/user "cannot create the test user"
	exit 0
}
echo "$user ALL=(ALL) NOPASSWD:SETENV: ALL" >"$sudoers" && chmod 440 "$sudoers"
uid=$(id -u "$user") gid=$(id -g "$user") groups=$(id -G "$user" | tr ' ' '\n' | sort -n | tr '\n' ' ')
script='BEGIN { }'
what='echo uid=$(id -u) gid=$(id -g) groups="$(id -G | tr " " "\n" | sort -n | tr "\n" " ")"; echo home=$HOME user=$USER; ls /proc/self/fd | wc -l'

# Through a real sudo, started by the user: the command is that user.
as_user() { (cd / && runuser -u "$user" -- sudo -n ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
	UT_CACHE_DIR="$UT_CACHE_DIR" "$@"); }
as_user "$UT" -q --summary-only -c "sh -c '$what'" -e "$script" >"$TMP/sudo.out" 2>"$TMP/sudo.err"
rc=$?
if [ $rc -eq 0 ] && grep -qx "uid=$uid gid=$gid groups=$groups" "$TMP/sudo.out"; then pass privileges/sudo_user_identity
else fail privileges/sudo_user_identity "rc=$rc want uid=$uid gid=$gid groups=$groups: $(cat "$TMP/sudo.out" "$TMP/sudo.err")"; fi
grep -qx "home=/home/$user user=$user" "$TMP/sudo.out" && pass privileges/sudo_user_environment \
	|| fail privileges/sudo_user_environment "$(cat "$TMP/sudo.out")"
# 0, 1, 2 and the directory ls reads: no descriptor of the tracer's (a BPF
# map's would let the user change what is traced)
[ "$(tail -1 "$TMP/sudo.out")" = 4 ] && pass privileges/no_tracer_descriptors \
	|| fail privileges/no_tracer_descriptors "$(cat "$TMP/sudo.out")"

# Root's groups never reach the command: root given an extra group here,
# as after a login through sudo (groups 0 4 27).
SUDO_UID=$uid SUDO_GID=$gid SUDO_USER=$user "$UT" -q --summary-only -c "sh -c '$what'" -e "$script" \
	>"$TMP/groups.out" 2>&1
grep -qx "uid=$uid gid=$gid groups=$groups" "$TMP/groups.out" && pass privileges/no_root_groups \
	|| fail privileges/no_root_groups "want groups=$groups: $(cat "$TMP/groups.out")"

# --run-as root is the one way to run the command as root under sudo.
as_user "$UT" -q --summary-only --run-as root -c "id -u" -e "$script" >"$TMP/root.out" 2>&1
[ "$(head -1 "$TMP/root.out")" = 0 ] && pass privileges/run_as_root || fail privileges/run_as_root "$(cat "$TMP/root.out")"
"$UT" -q --summary-only --run-as "$user" -c "id -u" -e "$script" >"$TMP/runas.out" 2>&1
[ "$(head -1 "$TMP/runas.out")" = "$uid" ] && pass privileges/run_as_user || fail privileges/run_as_user "$(cat "$TMP/runas.out")"
"$UT" -q --summary-only --run-as nosuchuser$$ -c "true" -e "$script" >"$TMP/nouser.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "no such user" "$TMP/nouser.out" && pass privileges/run_as_unknown \
	|| fail privileges/run_as_unknown "rc=$rc $(cat "$TMP/nouser.out")"

# Malformed or inconsistent sudo variables: refused, the command never runs
# (atoi("abc") was 0: it ran as root).
refused() {   # NAME WANT VAR=VALUE...
	local name=$1 want=$2
	shift 2
	rm -f "$TMP/ran"
	env -u SUDO_UID -u SUDO_GID -u SUDO_USER -u PKEXEC_UID "$@" "$UT" -q --summary-only -c "touch $TMP/ran" -e "$script" >"$TMP/$name.out" 2>&1
	local rc=$?
	if [ $rc -eq 2 ] && [ ! -e "$TMP/ran" ] && grep -q "$want" "$TMP/$name.out"; then pass "privileges/$name"
	else fail "privileges/$name" "rc=$rc ran=$([ -e "$TMP/ran" ] && echo yes) $(cat "$TMP/$name.out")"; fi
}
refused malformed_uid "SUDO_UID='abc' is not a user id" SUDO_UID=abc SUDO_GID=0
refused malformed_gid "SUDO_GID='1x' is not a group id" SUDO_UID="$uid" SUDO_GID=1x
refused missing_gid "SUDO_GID='' is not a group id" SUDO_UID="$uid"
refused unknown_uid "SUDO_UID=3999999 names no user" SUDO_UID=3999999 SUDO_GID=0
refused other_user "SUDO_USER='root' is not the user of SUDO_UID=$uid" SUDO_UID="$uid" SUDO_GID="$gid" SUDO_USER=root
refused malformed_pkexec "PKEXEC_UID='-1' is not a user id" PKEXEC_UID=-1

# ---- the cache, as root ----
private_dirs() { ls -d /tmp/uring-trace-cache.* 2>/dev/null | sort; }
before=$(private_dirs)
# A cache another user owns, or everyone may write to, is not used (nothing
# is read from it or written into it); the run compiles afresh and works.
untrusted() {   # NAME WANT DIR (made by the caller)
	local name=$1 want=$2 dir=$3
	UT_CACHE_DIR=$dir "$UT" -q --summary-only -e 'BEGIN { @x = 1; exit(); }' >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	if [ $rc -eq 0 ] && grep -q "not using the cache $dir: .*$want" "$TMP/$name.err" && [ -z "$(ls -A "$dir")" ]
	then pass "privileges/$name"
	else fail "privileges/$name" "rc=$rc $(ls -A "$dir") $(cat "$TMP/$name.err")"; fi
}
mkdir "$TMP/users_cache" && chown "$user" "$TMP/users_cache"
untrusted cache_of_other_user "owned by uid $uid, not root" "$TMP/users_cache"
mkdir "$TMP/open_cache" && chmod 777 "$TMP/open_cache"
untrusted cache_world_writable "writable by every user" "$TMP/open_cache"
mkdir "$TMP/group_cache" && chmod 775 "$TMP/group_cache"
untrusted cache_group_writable "writable by its group" "$TMP/group_cache"
# the way sudo -E brings it: the user's XDG_CACHE_HOME
mkdir -p "$TMP/home/.cache/uring-trace" && chown -R "$user" "$TMP/home"
env -u UT_CACHE_DIR XDG_CACHE_HOME="$TMP/home/.cache" "$UT" -q --summary-only -e 'BEGIN { exit(); }' \
	>/dev/null 2>"$TMP/xdg.err"
grep -q "not using the cache $TMP/home/.cache/uring-trace: .*owned by uid $uid" "$TMP/xdg.err" \
	&& [ -z "$(ls -A "$TMP/home/.cache/uring-trace")" ] && pass privileges/user_xdg_cache_refused \
	|| fail privileges/user_xdg_cache_refused "$(cat "$TMP/xdg.err")"
# a directory under one another user can write to: the user could swap it
mkdir -p "$TMP/home/inner" && chown root "$TMP/home/inner" && chmod 755 "$TMP/home/inner"
untrusted cache_under_users_dir "$TMP/home is owned by uid $uid" "$TMP/home/inner"
# a cache to be made in /tmp (sticky, writable by all: no one can take
# what root makes there) is made and used
fresh=/tmp/ut-privileges-fresh-$$
UT_CACHE_DIR=$fresh "$UT" -q --summary-only -e 'BEGIN { exit(); }' >/dev/null 2>"$TMP/fresh.err"
[ -d "$fresh/obj" ] && [ "$(stat -c %U "$fresh")" = root ] && ! grep -q 'not using the cache' "$TMP/fresh.err" \
	&& pass privileges/cache_made_in_tmp || fail privileges/cache_made_in_tmp "$(cat "$TMP/fresh.err")"
rm -rf "$fresh"
[ "$(private_dirs)" = "$before" ] && pass privileges/private_cache_removed \
	|| fail privileges/private_cache_removed "left: $(comm -13 <(echo "$before") <(private_dirs))"

# Cached entries that are links are not followed: the run says so, compiles
# afresh, and replaces them with files of its own.
export UT_CACHE_DIR="$TMP/links"
prog='BEGIN { @y = 2; exit(); }'
"$UT" -q --summary-only -e "$prog" >/dev/null 2>&1
mkdir "$TMP/elsewhere"
for f in "$UT_CACHE_DIR"/obj/*.o "$UT_CACHE_DIR"/prog/*.utc "$UT_CACHE_DIR"/btf-*/vmlinux.h; do
	cp "$f" "$TMP/elsewhere/" && ln -sf "$TMP/elsewhere/$(basename "$f")" "$f"
done
"$UT" -q --summary-only -e "$prog" >"$TMP/links.out" 2>"$TMP/links.err"
rc=$?
links=$(find "$UT_CACHE_DIR" -type l | wc -l)
if [ $rc -eq 0 ] && grep -q "not using a cached file: .*\.utc is a symbolic link" "$TMP/links.err" \
	&& grep -q "not using a cached file: .*\.o is a symbolic link" "$TMP/links.err" \
	&& grep -q "not using a cached file: .*/vmlinux.h is a symbolic link" "$TMP/links.err" && [ "$links" -eq 0 ]; then
	pass privileges/cached_links_not_followed
else fail privileges/cached_links_not_followed "rc=$rc links=$links $(cat "$TMP/links.err")"; fi
# an entry root did not write (another user's file in root's cache)
for f in "$UT_CACHE_DIR"/obj/*.o "$UT_CACHE_DIR"/prog/*.utc; do chown "$user" "$f"; done
"$UT" -q --summary-only -e "$prog" >/dev/null 2>"$TMP/owned.err"
grep -q "not using a cached file: .* is owned by uid $uid, not root" "$TMP/owned.err" \
	&& [ -z "$(find "$UT_CACHE_DIR" -user "$user")" ] && pass privileges/cached_file_of_other_user \
	|| fail privileges/cached_file_of_other_user "$(cat "$TMP/owned.err")"

# The clang library is loaded only from root's own files.
lib=$(dirname "$UT")/libut-bpfcc.so
if [ -f "$lib" ]; then
	cp "$lib" "$TMP/users.so" && chown "$user" "$TMP/users.so"
	UT_BPFCC_LIB="$TMP/users.so" UT_CACHE_DIR="$TMP/cold" "$UT" -q --summary-only -e 'BEGIN { exit(); }' \
		>/dev/null 2>"$TMP/lib.err"
	rc=$?
	[ $rc -ne 0 ] && grep -q "refusing to load $TMP/users.so: .*owned by uid $uid" "$TMP/lib.err" \
		&& pass privileges/users_compiler_library_refused \
		|| fail privileges/users_compiler_library_refused "rc=$rc $(cat "$TMP/lib.err")"
fi
