/* Finds and loads the clang wrapper (libut-bpfcc.so, runtime/bpfcc.h) on
 * first use.  Looked for, in order: $UT_BPFCC_LIB (a path), next to the
 * executable, then UT_LIBDIR (set at build time). */
#ifndef UT_BPFCC_LOADER_H
#define UT_BPFCC_LOADER_H
#include <stddef.h>
#include "runtime/bpfcc.h"

struct ut_bpfcc {
	ut_bpfcc_compile_fn *compile;
	ut_bpfcc_make_pch_fn *make_pch;
	ut_bpfcc_version_fn *version;
};

/* The wrapper's entry points, loaded once per process; NULL with a
 * message in err when it is missing or cannot be loaded. */
const struct ut_bpfcc *ut_bpfcc_get(char *err, size_t errlen);

#endif
