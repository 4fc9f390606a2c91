/* The tracing session (runtime/session.c): from a compiled script's BPF
 * object to the trace file and the summary. */
#ifndef UT_SESSION_H
#define UT_SESSION_H
#include <stddef.h>
#include "compiler/program.h"
#include "compiler/program_io.h"
#include "runtime/options.h"

struct ut_kernel;

/* The handler of SIGINT and SIGTERM: the session stops at its next poll. */
void ut_on_signal(int sig);
/* The handler of SIGUSR1: a snapshot (--ring) at the session's next poll. */
void ut_on_snapshot_signal(int sig);

/* Seconds on CLOCK_MONOTONIC. */
double ut_now_s(void);

/* Traces with prog and its objects (its BPF object; the reader's compiled
 * user side, run where it was built from prog) as o asks until the end (-d, Ctrl-C,
 * exit(), the -c command's end); returns the exit status.  k: the kernel
 * the script was compiled against (its BTF already parsed), or NULL to
 * open it here. */
int ut_trace(struct options *o, struct ut_program *prog, const struct ut_program_objects *objs, struct ut_kernel *k);

#endif
