/* Probe kinds.  A kind is one file in probes/ and one row of the table in
 * probes/kinds.c: a struct probe_kind_def of flags and hooks.  Outside
 * probes/ nothing asks which kind a probe is: it reads a flag or calls a
 * hook.  A kind and its return variant (kprobe and kretprobe) share a
 * file, one row each.
 *
 * The hooks come in two groups.  The compiler's run on the kernel the
 * script is compiled on: they resolve a target and describe what the body
 * reads, with the compiler's state (compiler/passes.h, helpers in
 * probes/resolve.h).  The runtime's run where the script runs: does the
 * target exist, does the kernel run the kind, attach; they work on
 * libbpf's objects (helpers in probes/attach.h).  One file holds both so
 * that a kind is read, and added, in one place; this header names the
 * other side's types by declaration only, so that compiler/ sees no
 * libbpf attach API and runtime/ no compiler internals.  Listing (-l and
 * wildcards) needs only the kernel queries of kernel/kernel.h and
 * serves both. */
#ifndef UT_PROBES_KIND_H
#define UT_PROBES_KIND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "compiler/program.h"

struct alt_ctx;
struct bpf_link;
struct bpf_object;
struct bpf_program;
struct compiler;
struct strbuf;
struct ut_kernel;

/* When a kind's program runs. */
enum probe_runs {
	PROBE_ATTACHED,       /* at each hit of the target it is attached to */
	PROBE_RUN_AT_START,   /* once, run from user space before tracing starts (BEGIN) */
	PROBE_RUN_AT_EXIT,    /* once, run from user space after the probes are detached (END) */
};

/* The links one probe's attach made: one for most kinds; a kind on
 * per-CPU perf events makes one per CPU.  The loader holds a set per
 * probe and closes them all at detach. */
struct ut_links {
	struct bpf_link **v;
	unsigned n, cap;
};

struct probe_kind_def {
	const char *name;           /* as written: "tracepoint" */
	const char *short_name;     /* "t", or NULL */
	enum ut_probe_kind kind;    /* its number in compiled scripts */
	enum probe_runs runs;
	bool no_target;             /* written alone, without ':' (BEGIN, END) */
	/* Its hits belong to no traced process (BEGIN, END, a timer): -p, -c
	 * and --comm never filter them, as if the probe were `unfiltered`. */
	bool unfiltered;
	bool wildcards;             /* a target with * ? [ is one probe per name list() matches */
	bool numbered_params;       /* arg0.. are the function's parameters: none when it takes none */
	/* Its probes run in user code: an address held as an integer (its
	 * argN, retval) is a user one, which str() reads from user memory. */
	bool user_addresses;
	/* The compiler resolves its targets in files (a program's symbols and
	 * notes), which change while the kernel does not: a script with such
	 * a probe is compiled at each run, not kept compiled
	 * (runtime/program_cache.c). */
	bool target_in_files;
	/* Its context is the registers where the probe fired (struct pt_regs,
	 * or perf events' bpf_perf_event_data, which starts with them): reg()
	 * reads them. */
	bool regs_context;
	/* A return probe whose body cannot read the function's arguments (the
	 * registers hold other values by then): the kind that reads them at
	 * the function's entry ("kprobe"), and what else has them (", or use
	 * fexit, ..."; "" when nothing).  NULL for other kinds. */
	const char *entry_kind;
	const char *args_elsewhere;
	/* Closing its links waits for an RCU grace period (perf-event links of
	 * tracepoints, kprobes, uprobes): the loader closes them from several
	 * threads at once. */
	bool slow_detach;
	/* --info tries the kind on this target, which every kernel has; NULL:
	 * --info does not list the kind. */
	const char *info_target;

	/* ---- compiler ---- */
	/* Parses the target after "name:", checks it exists on the compiling
	 * kernel, fills the alternative's arguments (and a->target, the
	 * normalised target the runtime gets).  0; 1 when the target does not
	 * exist there (the caller decides if that is an error); -1 after
	 * reporting an error. */
	int (*resolve)(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc);
	/* The BPF function's context: SEC(...), the signature, the opening
	 * brace and what the argument expressions need in scope. */
	void (*header)(struct compiler *c, struct alt_ctx *a, struct strbuf *out);
	/* Reports, as an error at loc with what may help, that spec (whose
	 * target is target) does not exist here.  Needed when resolve can
	 * return 1. */
	void (*absent)(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
		       const char *target);
	/* Return probes (entry_kind): true when name is a parameter of the
	 * function target, which the body cannot read.  NULL: not known. */
	bool (*names_parameter)(struct ut_kernel *k, const char *target, const char *name);

	/* ---- both: -l, and wildcards in scripts ---- */
	/* The targets matching glob on this kernel, as ut_kernel_*_matching
	 * gives them; NULL: -l does not list the kind. */
	int (*list)(struct ut_kernel *k, const char *glob, char ***names);
	/* -l -v: the arguments a body reads at target name, one a line as
	 * "    type name". */
	void (*list_args)(struct ut_kernel *k, const char *name, FILE *out);

	/* ---- runtime: exists for every kind (any kind may be an alternative
	 * of an attached probe), the rest for kinds that run PROBE_ATTACHED ---- */
	/* true when alt's target exists on this kernel; else false with why. */
	bool (*exists)(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len);
	/* Whether this kernel runs the kind, tried with a two-instruction
	 * program on alt's target (probe_kind_available keeps the verdict):
	 * 1 it does; 0 it does not (why); -1 only this target failed (why). */
	int (*trial)(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len);
	/* Before the object loads: what the kernel needs at load time (the BTF
	 * target of tracing programs, the running kernel's name of a record
	 * struct).  0 or a negative errno; NULL: nothing. */
	int (*prepare)(struct ut_kernel *k, struct bpf_object *obj, struct bpf_program *prog, const struct ut_alt *alt);
	/* Attaches the loaded program, adding the links it made to links
	 * (probe_links_add).  0 or a negative errno; on failure the links
	 * already added stay in the set, for the caller to close. */
	int (*attach)(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links);
};

/* ---- the table (probes/kinds.c) ---- */

/* The kind written name ("tracepoint") or short_name ("t"); NULL if none. */
const struct probe_kind_def *probe_kind_find(const char *name);
/* The kind of a compiled alternative; kind < UT_PROBE_KIND_COUNT. */
const struct probe_kind_def *probe_kind_def(enum ut_probe_kind kind);
const char *probe_kind_name(enum ut_probe_kind kind);
/* Every kind's name for messages: "tracepoint, tp_btf, ... BEGIN or END". */
void probe_kind_names(char *buf, size_t len);

/* ---- the runtime's verdicts (probes/attach.c) ---- */

/* true when this kernel runs programs of alt's kind: its trial the first
 * time, whose verdict is kept for the process unless it concerned only
 * this target.  false with why. */
bool probe_kind_available(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len);
/* true when a trial in this process found that the kernel does not run
 * the kind (no trial is made here): for notes once the probes are loaded. */
bool probe_kind_refused(enum ut_probe_kind kind);

#endif
