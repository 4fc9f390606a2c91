/* The compiler: script text to a ut_program (generated BPF C plus decode
 * tables).  Public entry point and the state its passes share. */
#ifndef UT_COMPILER_H
#define UT_COMPILER_H
#include <stdbool.h>
#include <stdio.h>
#include "compiler/ast.h"
#include "compiler/diag.h"
#include "compiler/kernel.h"
#include "compiler/program.h"

struct ut_compile_opts {
	const char *file;          /* script path, or NULL with text (-e) */
	const char *text;          /* program text for -e */
	const char *const *include_dirs; /* -I, searched first for imports */
	unsigned ninclude_dirs;
	const char *stdlib_dir;    /* last place searched for imports */
	FILE *dump_ast;            /* --dump ast: print the checked AST here */
	/* -D NAME=VALUE and script flags (--NAME): override `const NAME` */
	const char *const *defines;
	unsigned ndefines;
	bool verbose;
};

/* Compiles a script; NULL when it has errors (reported to d). */
struct ut_program *ut_compile(const struct ut_compile_opts *o, struct ut_kernel *k, struct diag *d);

/* ---- internal to compiler/ ---- */

struct strbuf {
	char *s;
	size_t len, cap;
};
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_puts(struct strbuf *b, const char *s);
void sb_free(struct strbuf *b);
/* s as a C string literal body, escaped: no script text reaches C unescaped. */
void sb_c_string(struct strbuf *b, const char *s);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xcalloc(size_t n, size_t size);
void *xrealloc_array(void *p, size_t n, size_t size);

/* An argument of the probe being compiled: its name, type and the C
 * expression that reads it inside the generated program. */
struct probe_arg {
	char name[64];
	struct type type;
	char *cexpr;
	char *exists_cexpr;   /* C expression true when the field exists on the running kernel */
};

struct compiler;
struct alt_ctx;

/* One probe kind: a table entry in compiler/probes.c. */
struct probe_kind_def {
	const char *name;           /* as written: "tracepoint" */
	const char *short_name;     /* "t", or NULL */
	enum ut_probe_kind kind;
	/* Parses the target after "name:", checks it exists here, fills the
	 * alternative's arguments.  Returns 0, 1 when it does not exist on
	 * this kernel (the caller decides if that is an error), -1 on a
	 * reported error. */
	int (*resolve)(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc);
	/* The C function header: SEC(...) and the signature. */
	void (*header)(struct compiler *c, struct alt_ctx *a, struct strbuf *out);
};
const struct probe_kind_def *probe_kind_find(const char *name);
/* Why the uprobe target "/path:function" is absent: an error at loc. */
void uprobe_absent(struct compiler *c, struct ut_loc loc, const char *target);
const struct probe_kind_def *probe_kind_def(enum ut_probe_kind kind);
const char *probe_kind_name(enum ut_probe_kind kind);

struct alt_ctx {
	const struct probe_kind_def *def;
	struct ut_probe *probe;
	unsigned probe_index;
	struct ut_alt *alt;
	char *target;               /* normalised target */
	struct probe_arg *args;
	unsigned nargs;
	struct strbuf prelude;      /* struct definitions this probe needs */
	char record_struct[192];    /* tracepoints: our copy of the record struct */
	const char *spec;           /* the alternative as written */
	struct node *declared;      /* declared fields for absent tracepoints */
	struct node *computed;      /* arguments computed from the alternative's own */
};

/* A local variable of the probe being compiled.  All are declared at the
 * top of its C function; a for loop's variable is in scope only in the
 * loop's body (loop_vars below). */
struct local {
	char *name;
	struct type type;
	struct ut_loc loc;          /* first assigned, or its first loop */
	bool loop_var;              /* a for loop's variable: the loop alone sets it */
};

enum map_kind { MAP_UNSET, MAP_AGG, MAP_VALUE };

/* for loops: the verifier walks every iteration of a loop, so a loop's
 * iterations (times those of the loops around it) are bounded when
 * compiled.  Measured on 6.18: a body with a look-up, a delete, a flow
 * end, an instant and a count verifies up to about 1600 iterations (then
 * "the sequence of 8193 jumps is too complex"); 400k instructions at 1024.  A loop that writes records refills the stage when it is full
 * (check.c, record_end); its share of the stage is at most
 * UT_LOOP_STAGE_BYTES, or one iteration's records if more. */
#define UT_MAX_LOOP_DEPTH 8
#define UT_MAX_LOOP_ITERATIONS 1024
#define UT_LOOP_STAGE_BYTES 2048

struct map_info {
	char *name;
	unsigned index;             /* in compiler.maps; its BPF map is m_<index> */
	struct ut_loc loc;          /* first use */
	enum ut_agg agg;
	enum map_kind kind;
	unsigned nkeys;
	struct type key_types[8];
	struct ut_value key_show[8];
	struct type value_type;
	struct ut_value value_show;
	int64_t lhist_min, lhist_max, lhist_step;
	bool read_in_bpf;
	struct ut_loc read_loc;     /* first read */
	bool assigned;
	bool deleted_in_bpf;        /* delete() in a probe: a keyless map stays a hash */
};

struct compiler {
	struct diag *d;
	struct ut_kernel *k;
	const struct ut_compile_opts *opts;
	struct ut_program *prog;
	/* declarations by name */
	struct node **consts, **tables, **fns, **aliases;
	unsigned nconsts, ntables, nfns, naliases;
	/* each allocated alone: checking an expression may add maps, and a
	 * map_info held meanwhile must stay where it is */
	struct map_info **maps;
	unsigned nmaps;
	/* per alternative */
	struct alt_ctx *alt;
	struct local *locals;
	unsigned nlocals;
	bool in_computed_arg;       /* checking a computed argument's expression */
	/* computed arguments the probe used: each evaluated once per hit into
	 * a variable, before the predicate if it uses them, else after it */
	struct computed_value {
		const struct node *field;
		char *cvar;
	} *computed_values;
	unsigned ncomputed_values;
	struct strbuf computed_out[2];   /* [in_body] */
	int macro_depth;
	unsigned long macro_nodes;  /* nodes made by macro expansion (bounded) */
	bool generating;            /* second pass: emit C */
	int tmp;                    /* temporaries counter */
	unsigned path_calls;        /* path() calls in the probe body being checked */
	uint32_t batch_bytes;       /* records the body may write, in bytes (one sample) */
	uint32_t max_batch_bytes;   /* the most of any body: ut.h's UT_BATCH_BYTES */
	uint32_t max_record_bytes;  /* the body's largest record */
	bool body_returns;          /* the body has a return: it jumps to ut_done */
	const char *loop_vars[UT_MAX_LOOP_DEPTH];   /* of the for loops around the statement */
	unsigned loop_depth;
	uint64_t loop_iterations;   /* of the loops around the statement, multiplied (1: none) */
	bool stage_refills;         /* records may find the stage full: they send it first */
	bool stage_reloads;         /* a loop passes ut_off through the stage (check.c, for_stmt) */
	bool in_body;               /* checking the statements, not the predicate */
	bool body_uses_now;         /* the statements read nsecs: the hit's ut_now */
	bool body_reads_args;       /* the predicate or statements read a probe argument */
	unsigned path_slots;        /* the most in one body: ut.h's UT_PATH_SLOTS */
	bool uses_scratch;          /* path() or string map values: ut.h's per-CPU buffers */
	bool sixth_arg_macro;       /* PT_REGS_PARM6 is defined for libbpf before 1.2 */
	bool uses_stacks;           /* kstack or ustack: gen.c writes ut_stack() and its maps */
	/* `@m[k] += v` leaves @m[k]'s new value in a variable: a read of
	 * @m[k] in the statement right after it, in the same list, uses that
	 * instead of a second look-up (check.c, map_read_expr) */
	const struct node *prev_stmt;   /* the statement before, in the innermost list */
	bool list_continues;            /* the next list (a function's body) follows prev_stmt */
	struct {
		const struct node *stmt;    /* the add; NULL: none */
		int map;
		char *key;                  /* its key expressions' C, joined */
		unsigned var;               /* ut_added_<var> */
	} last_add;
	unsigned nadded;                /* ut_added_* variables of the body */
	struct strbuf *out;         /* the function body being written */
	int indent;
	/* the whole generated C */
	struct strbuf c_types, c_maps, c_funcs;
	char **loaded_files;        /* imports already loaded */
	unsigned nloaded;
	char **texts;               /* source texts (kept for diagnostics) */
	unsigned ntexts;
};

const char *intern(struct compiler *c, const char *s);
/* Checks (first pass) or checks and emits (second pass) one alternative's
 * body.  check.c */
void check_probe_body(struct compiler *c, struct node *block, struct node *pred);
/* Finalises the C: maps, record types.  gen.c */
char *gen_finish(struct compiler *c);
void gen_map_decls(struct compiler *c);
/* Adds a record layout for an emitting statement; returns the event index. */
struct ut_event *gen_new_event(struct compiler *c, enum ut_event_op op, struct ut_loc loc);

#endif
