/* The on-disk cache of compiled BPF objects and of what compiling needs.
 *
 * Layout, under the cache directory:
 *   btf-<btfhash>/vmlinux.h         C declarations of the running kernel
 *   btf-<btfhash>/vmlinux-<cc>.pch  that header precompiled by clang <cc>
 *   obj/<key>.o                     BPF objects; key = hash(generated C,
 *                                   clang version, btf hash, bpf/ut.h)
 *   obj/<key>.host.o                the reader's compiled user side; key =
 *                                   hash(generated C, clang version, machine)
 *   prog/<key>.utc                  whole compiled programs
 *                                   (runtime/program_cache.h)
 * Hashes are FNV-1a 64 in hex.  Files are written to a temporary name and
 * renamed, so concurrent runs never see partial files.  Running as root,
 * the directory and the files read from it must be root's alone
 * (base/trust.h); a directory that is not is refused, and the run uses a
 * private one of its own. */
#ifndef UT_CACHE_H
#define UT_CACHE_H
#include "base/files.h"
#include <stdbool.h>
#include <stddef.h>

#ifndef UT_DATADIR
#define UT_DATADIR "/usr/local/share/uring-trace"
#endif

/* The cache directory, created if missing: $UT_CACHE_DIR, else
 * $XDG_CACHE_HOME/uring-trace, else /var/cache/uring-trace for root, else
 * ~/.cache/uring-trace; as root, one that root does not trust is said on
 * stderr and replaced by a new private directory, removed at exit.  The
 * path given back has no symbolic link.  0 or -1 with err. */
int ut_cache_dir(char *dir, size_t len, char *err, size_t errlen);

/* Keeps the compiled files (obj/, prog/) within $UT_CACHE_MAX_MB
 * megabytes (default 512): when over, the files used least recently go
 * (a file's modification time: ut_cache_used sets it at each use) until a
 * quarter of that is free.  Called after a compile stored files. */
void ut_cache_trim(void);
/* A cached file's bytes, read only if root trusts it (base/trust.h): 0;
 * 1 when there is none, or one root does not trust (said on stderr), to
 * be made again and replaced. */
int ut_cache_read(const char *path, void **data, size_t *len);
/* path (a cached file) was just used. */
void ut_cache_used(const char *path);
/* The directory holding bpf/ut.h: $UT_BPF_ROOT, else the source tree
 * around the executable (build/ or build/tests/), else UT_DATADIR.
 * Generated code may include it as "bpf/ut.h" or "ut.h". */
int ut_bpf_root(char *dir, size_t len, char *err, size_t errlen);

/* The directory of the running executable; 0 or -1. */
int ut_exe_dir(char *dir, size_t len);


/* One object to build from generated C: BPF, or with host the reader's
 * user side for this machine (compiler/gen_native.h). */
struct ut_object_build {
	const char *c_src;
	bool host;
	/* the result: rc 0 and the object (malloc'ed; cached: it came from
	 * the cache, nothing was compiled), or rc -1 and err (compiler
	 * diagnostics included); err may hold a warning with rc 0, when the
	 * object could not be stored */
	int rc;
	void *obj;
	size_t len;
	bool cached;
	char err[8192];
};

/* Builds each object: from the cache when present, else compiled in child
 * processes that run at the same time (for BPF, vmlinux.h and its PCH are
 * made first when missing), and stored. */
void ut_build_objects(struct ut_object_build *builds, unsigned n);

#endif
