/* Compiled programs kept between runs, so that a script run again starts
 * without compiling (parsing, checking against the kernel's BTF and
 * tracepoints, placing, generating C): about a third of a warm start.
 *
 * A program is kept as a .uto image (compiler/program_io.h) in
 * prog/<key>.utc under the cache directory, where key hashes everything
 * a compile's result depends on: the options that reach the compiler,
 * this executable and bpf/ut.h, the kernel (its BTF, this boot, its
 * modules, its dynamic tracepoints).  The entry lists the scripts the
 * compile read and the directories it looked for imports in, by inode,
 * size and times; it is used only while they are unchanged.
 *
 * Not kept: a compile with warnings (they would not be shown again), a
 * script without a file to compare (read from a pipe: <(...)), and
 * a script whose probes are resolved in programs' files (uprobes, USDT:
 * a program changes while the kernel does not). */
#ifndef UT_RUNTIME_PROGRAM_CACHE_H
#define UT_RUNTIME_PROGRAM_CACHE_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "compiler/compiler.h"

struct ut_program_cache {
	char path[PATH_MAX];   /* the entry's file; "" when nothing can be kept */
	double started;        /* wall-clock seconds at the look-up */
};

/* The entry for this compile's options; false (c->path "") when there is
 * no cache directory or the kernel cannot be told apart. */
bool ut_program_cache_find(struct ut_program_cache *c, const struct ut_compile_opts *co);

/* The kept image when its inputs are unchanged: a .uto image (malloc'ed)
 * and the compile's -v account (malloc'ed, may be ""); NULL when none. */
void *ut_program_cache_get(const struct ut_program_cache *c, size_t *len, char **report);

/* Keeps a compile's image with the identity of its inputs, unless the
 * program may not be kept (see above) or an input changed so recently
 * that a later change could leave its times as they are; false, with why
 * (for -v), when it is not kept.  The caller keeps no compile that
 * warned. */
bool ut_program_cache_put(const struct ut_program_cache *c, const struct ut_program *prog,
			  const struct ut_compile_inputs *inputs, const char *report, const void *image, size_t len,
			  char *why, size_t whylen);

#endif
