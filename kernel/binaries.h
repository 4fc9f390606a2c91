/* Where a uprobe's binary named without a path is, as bpftrace finds it:
 * a library (libc, libssl.so.3) in the dynamic linker's cache
 * (/etc/ld.so.cache, what `ldconfig -p` lists), a program (bash) on
 * $PATH. */
#ifndef UT_BINARIES_H
#define UT_BINARIES_H

/* The binary's full path (malloc'd), or NULL when neither has it.  A name
 * with a '/' is a path already: a copy of it. */
char *ut_binary_path(const char *name);

#endif
