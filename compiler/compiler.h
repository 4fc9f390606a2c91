/* The compiler: script text to a ut_program (generated BPF C plus decode
 * tables).  What the runtime calls; the state its passes share is
 * compiler/passes.h's, inside compiler/ and probes/. */
#ifndef UT_COMPILER_H
#define UT_COMPILER_H
#include <stdbool.h>
#include <stdio.h>

#include "compiler/program.h"

struct diag;
struct ut_kernel;

/* --dump=PASS: what a pass leaves, printed when it is done. */
enum ut_dump {
	UT_DUMP_NONE,
	UT_DUMP_AST,        /* parse: the items of the script and its imports */
	UT_DUMP_TYPED,      /* check: each alternative's body, typed */
	UT_DUMP_RESOURCES,  /* resources: maps, records, stages */
	UT_DUMP_PLACEMENT,  /* placement: the side of each statement and map */
	UT_DUMP_REUSE,      /* reuse: the map reads that take a value the C holds */
	UT_DUMP_C,          /* generate: the C (as --emit-c) */
	UT_DUMP_READER_C,   /* generate: the reader's C (compiler/gen_native.c) */
	UT_DUMP_PROGRAM,    /* the compiled program's tables, as a .uto holds them */
};
/* The pass named name ("typed"); UT_DUMP_NONE when there is none. */
enum ut_dump ut_dump_named(const char *name);

struct ut_compile_opts {
	const char *file;          /* script path, or NULL with text (-e) */
	const char *text;          /* program text for -e */
	const char *const *include_dirs; /* -I, searched first for imports */
	unsigned ninclude_dirs;
	const char *stdlib_dir;    /* last place searched for imports */
	enum ut_dump dump;         /* print this pass's result to dump_to */
	FILE *dump_to;
	/* script flags, then -D NAME=VALUE: override `const NAME`.  A flag
	 * is the text after "--" of a long option not the tool's (all-rings,
	 * unit=ms), '-' in its name standing for '_' */
	const char *const *flags;
	unsigned nflags;
	const char *const *defines;
	unsigned ndefines;
	const char *const *options;   /* the tool's long options (NULL-ended): a flag's near ones */
	/* the script's positional parameters, $1 ..., as given after it */
	const char *const *positional;
	unsigned npositional;
	FILE *report;              /* -v's account of the compile (placement, probes left out), or NULL */
	bool all_in_kernel;        /* --all-in-kernel: every statement and map in the kernel */
	/* --summary-only (no trace is written): the trace constructs are
	 * compiled out, and a probe left with nothing to do is left out */
	bool no_trace;
	/* --compile: the program may run on kernels not known here, so its
	 * loops do not call the numbers iterator (a kfunc of 6.4: the first
	 * shape of those loops was refused on 5.10 and 6.1 with the calls in
	 * dead code; a .uto stays with what every kernel takes) */
	bool portable;
	/* Filled, when not NULL, with what the result depends on besides the
	 * kernel and these options: the scripts read and the directories
	 * imports were looked for in (runtime/program_cache.c keeps compiled
	 * programs while they are unchanged). */
	struct ut_compile_inputs *inputs;
};

struct ut_compile_inputs {
	char **paths;              /* real paths */
	unsigned n;
	bool unnamed;              /* one has no real path (a pipe: <(...), /dev/stdin) */
};
void ut_compile_inputs_free(struct ut_compile_inputs *in);

/* Compiles a script; NULL when it has errors (reported to d). */
struct ut_program *ut_compile(const struct ut_compile_opts *o, struct ut_kernel *k, struct diag *d);

#endif
