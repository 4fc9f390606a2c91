/* Probe kinds.  A kind is one file in probes/ and one row of the table in
 * probes/kinds.c: a struct probe_kind_def of flags and hooks.  Outside
 * probes/ the compiler does not ask which kind a probe is: it reads a
 * flag or calls a hook.  A kind and its return variant (kprobe and
 * kretprobe) share a file, one row each.
 *
 * These are the compiler's hooks: they run on the kernel the script is
 * compiled on, resolve a target and describe what the body reads, with
 * the compiler's state (compiler/compiler.h, helpers in probes/resolve.h).
 * Listing (-l and wildcards) needs only the kernel queries of
 * compiler/kernel.h and serves the runtime too. */
#ifndef UT_PROBES_KIND_H
#define UT_PROBES_KIND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "compiler/program.h"

struct alt_ctx;
struct compiler;
struct strbuf;
struct ut_kernel;

struct probe_kind_def {
	const char *name;           /* as written: "tracepoint" */
	const char *short_name;     /* "t", or NULL */
	enum ut_probe_kind kind;    /* its number in compiled scripts */
	bool no_target;             /* written alone, without ':' (BEGIN, END) */
	/* Its hits belong to no traced process (BEGIN, END, a timer): -p, -c
	 * and --comm never filter them, as if the probe were `unfiltered`. */
	bool unfiltered;
	bool wildcards;             /* a target with * ? [ is one probe per name list() matches */
	bool numbered_params;       /* arg0.. are the function's parameters: none when it takes none */
	/* A return probe whose body cannot read the function's arguments (the
	 * registers hold other values by then): the kind that reads them at
	 * the function's entry ("kprobe"), and what else has them (", or use
	 * fexit, ..."; "" when nothing).  NULL for other kinds. */
	const char *entry_kind;
	const char *args_elsewhere;

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
};

/* ---- the table (probes/kinds.c) ---- */

/* The kind written name ("tracepoint") or short_name ("t"); NULL if none. */
const struct probe_kind_def *probe_kind_find(const char *name);
/* The kind of a compiled alternative; kind < UT_PROBE_KIND_COUNT. */
const struct probe_kind_def *probe_kind_def(enum ut_probe_kind kind);
const char *probe_kind_name(enum ut_probe_kind kind);
/* Every kind's name for messages: "tracepoint, tp_btf, ... BEGIN or END". */
void probe_kind_names(char *buf, size_t len);

#endif
