/* Loads a compiled script's BPF object and attaches its probes, choosing
 * for each probe the first alternative (in the script's order) that exists
 * here, whose kind this kernel runs, that the verifier accepts and that
 * attaches.  Rejections move the probe to its next alternative and the
 * object is loaded again. */
#ifndef UT_LOADER_H
#define UT_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "compiler/program.h"

struct bpf_object;
struct ut_kernel;

struct ut_load_opts {
	const void *obj;               /* BPF ELF object */
	size_t obj_len;
	const struct ut_probe *probes; /* index i is probe i of the object (UT_NPROBES) */
	unsigned nprobes;
	struct ut_kernel *kernel;      /* for existence checks; NULL: opened here */
	size_t ringbuf_bytes;          /* 0: as compiled; else rounded up to a power of two */
	uint32_t filter_tgid;          /* ut_filter_tgid; 0 = any process */
	bool follow_forks;             /* -c: the processes filter_tgid starts are traced too */
	const char *filter_comm;       /* ut_filter_comm; NULL or "" = any */
	uint32_t sample_permyriad;     /* ut_sample_permyriad; 0 = as compiled (all) */
	uint64_t wakeup_bytes;         /* ut_wakeup_bytes; 0 = from the ring's size (at most as compiled) */
	const struct ut_disk_ref *disks; /* diskdev() disks: looked up here, set in ut_disk_<i> */
	unsigned ndisks;
	struct ut_enum_ref *enums;       /* kernel enumerators: their value here set in each and ut_enum_<i> */
	unsigned nenums;
	bool verbose;                  /* notes on skipped alternatives, verifier logs */
	FILE *log;                     /* where verbose notes go; NULL = stderr */
};

struct ut_loaded;

/* Programs of bpf/ut.h attached besides the script's probes, each where
 * this kernel has it (a raw tracepoint, else a classic one): without one
 * the trace is less complete, not wrong. */
enum ut_builtin {
	UT_BUILTIN_EXEC,   /* names a thread again after exec (always) */
	UT_BUILTIN_FORK,   /* follow_forks: a process a traced one forks is traced */
	UT_BUILTIN_FREE,   /* follow_forks: a process that ended is not any more */
	UT_BUILTIN_COUNT
};

/* NULL with a one-line reason in err (missing capability, a probe that
 * matches nothing, a verifier rejection). */
struct ut_loaded *ut_load(const struct ut_load_opts *o, char *err, size_t errlen);

/* The loaded object, for its maps (ring buffer, counters, aggregations). */
struct bpf_object *ut_loaded_object(const struct ut_loaded *l);

/* The probes loaded: the script's (index i is probe i of the object),
 * then the built-ins asked for, in enum ut_builtin's order. */
unsigned ut_loaded_count(const struct ut_loaded *l);
const struct ut_probe *ut_loaded_probe(const struct ut_loaded *l, unsigned probe);

/* Index into the probe's alts of the attached alternative; -1 when the
 * probe is not attached (an optional probe that matched nothing, BEGIN/END). */
int ut_loaded_alt(const struct ut_loaded *l, unsigned probe);

/* Alternatives passed over for the probe, with reasons, e.g.
 * "tracepoint:nosuch/event (no such tracepoint)"; "" when none. */
const char *ut_loaded_skipped(const struct ut_loaded *l, unsigned probe);

/* Runs raw_tp program prog_fd once on cpu (BPF_F_TEST_RUN_ON_CPU): true
 * when it ran and returned 1. */
bool ut_run_on_cpu(int prog_fd, unsigned cpu);

/* Summed over the programs: the hits the kernel did not run a program for
 * (a program already running on a CPU is skipped when the probe fires
 * again there: an interrupt inside it, or a probe hit by itself), and the
 * runs and their time (0 unless kernel.bpf_stats_enabled is 1). */
struct ut_loaded_runs {
	uint64_t missed, runs, run_ns;
};
void ut_loaded_runs(const struct ut_loaded *l, struct ut_loaded_runs *out);
/* The same for the programs of the script's probe `probe` (its attached
 * alternative's); the built-in programs are in neither. */
void ut_loaded_probe_runs(const struct ut_loaded *l, unsigned probe, struct ut_loaded_runs *out);

struct ut_detach_stats {
	unsigned links;        /* links closed */
	unsigned slow_links;   /* of which perf-event based (one RCU grace period each) */
	double ms;             /* wall time of the whole detach */
};

/* Detaches every probe; maps stay readable for a final drain.  Links whose
 * close waits for an RCU grace period are closed from several threads at
 * once so the grace periods overlap.  stats may be NULL. */
void ut_detach(struct ut_loaded *l, struct ut_detach_stats *stats);

/* Detaches (if not done) and frees everything. */
void ut_unload(struct ut_loaded *l);

#endif
