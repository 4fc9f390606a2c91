/* The clang wrapper: compiles BPF C held in memory into a BPF ELF object
 * (target bpfel, -O2 -g so the object carries BTF for CO-RE and tp_btf),
 * or the reader's generated C into an object for this machine.
 *
 * It lives in its own shared object, libut-bpfcc.so, which the tool loads
 * with dlopen only when a script must be compiled (runtime/bpfcc_loader.h),
 * so running a precompiled script needs no clang libraries.  Nothing here
 * prints: diagnostics come back as text. */
#ifndef UT_BPFCC_H
#define UT_BPFCC_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ut_bpfcc_opts {
	const char *source;              /* the C text; need not end with NUL */
	size_t source_len;
	const char *source_name;         /* file name shown in diagnostics */
	const char *const *include_dirs; /* searched in order; NULL-terminated or NULL */
	const char *pch;                 /* precompiled header to include first, or NULL */
	int host;                        /* not BPF: code for this machine (the reader's
					    user side), position-independent, no debug info */
};

/* 0 on success: *obj (malloc'ed) holds *obj_len bytes of ELF.  -1 on
 * failure.  Either way *diagnostics is NULL or malloc'ed text of the
 * compiler's warnings and errors, to be freed by the caller. */
int ut_bpfcc_compile(const struct ut_bpfcc_opts *o, void **obj, size_t *obj_len,
		     char **diagnostics);

/* Precompiles `header` into `pch_path` with the options ut_bpfcc_compile
 * uses (a PCH only fits the options it was made with).  Writes pch_path
 * directly; callers that share it write a temporary name and rename. */
int ut_bpfcc_make_pch(const char *header, const char *const *include_dirs,
		      const char *pch_path, char **diagnostics);

/* "clang 14.0.6": part of the object cache key. */
const char *ut_bpfcc_version(void);

typedef int ut_bpfcc_compile_fn(const struct ut_bpfcc_opts *, void **, size_t *, char **);
typedef int ut_bpfcc_make_pch_fn(const char *, const char *const *, const char *, char **);
typedef const char *ut_bpfcc_version_fn(void);

#ifdef __cplusplus
}
#endif
#endif
