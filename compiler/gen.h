/* The generator: what its files (gen.c, gen_expr.c, gen_stmt.c,
 * builtins.c) share.  It writes C from the typed bodies and the
 * resources; a program that reaches it has no errors, so it reports none. */
#ifndef UT_GEN_H
#define UT_GEN_H
#include "compiler/aggregations.h"
#include "compiler/builtins.h"
#include "compiler/passes.h"

/* The program's C in parts, assembled at the end (gen.c). */
struct gen_parts {
	struct strbuf types;        /* record structs and the probes' preludes, in order */
	struct strbuf funcs;        /* the BPF programs */
	int tmp;                    /* temporaries t0, t1, ... of the whole program */
	bool parm6_defined;
};

/* The walk over one alternative's body: set up in one assignment for
 * each (gen_stmt.c, gen_alternative). */
struct gen {
	struct compiler *c;
	struct alt_ctx *alt;
	struct gen_parts *parts;
	struct strbuf *out;         /* where statements go */
	int indent;
	bool in_body;               /* the statements, not the predicate */
	bool uses_now;              /* the statements read nsecs: the hit's ut_now */
	bool returns;               /* a return jumps to ut_done */
	/* A split alternative's hit record is reserved where the path first
	 * needs it (gen_stmt.c, open_hit): after the kernel's conditions that
	 * decide whether the reader has work, so a hit they turn away costs
	 * no record. */
	bool hit_pending;           /* here the record is still to reserve */
	bool now_at_top;            /* ut_now is read before any reservation: the body's first line */
	bool computing;             /* writing a computed argument, at the top of the body */
	bool member_base;           /* the expression is the base of a field read around it (gen_member) */
	bool in_reader;             /* inside a statement of the reader's (its captures) */
	bool sheds;                 /* a flow or span point of the hit's: it may be shed (ut_shed) */
	unsigned loops;             /* C loops around the statement being written */
	unsigned iters;             /* ... of them, those with a numbers iterator (gen_for) */
	bool noted;                 /* the reader's work is noted on every path to here (ut_off) */
	unsigned sunk;              /* ifs and blocks entered with the record still to reserve */
	/* conditions captured with the record still to reserve: their values'
	 * temporaries, written into it when it is */
	struct pending_capture { int capture; char *value; } *pending;
	unsigned npending;
	/* computed arguments: each evaluated at its first use into a
	 * variable at the top of the predicate [0] or of the body [1] */
	struct strbuf computed_out[2];
	char **computed_vars;       /* per alt->computed_args: its variable, once evaluated */
	/* clang refuses C nested too deep: the statement (or predicate)
	 * being written, and the first whose C nests past C_MAX_NESTING */
	const struct node *at;
	const struct node *too_deep_at;
};

/* clang refuses C that nests more than 256 brackets ((, [ and {
 * together): "bracket nesting level exceeded".  emit() measures each line
 * it writes, its indentation (a level per block) and its brackets, and
 * keeps a margin for what macros add (BPF_CORE_READ puts its argument
 * about 6 deeper).  This is the one thing only the C can tell: the
 * driver reports it (compile.c). */
#define C_MAX_NESTING 240

/* The frames a stack keeps (kstack, ustack; gen.c's UT_STACK_FRAMES). */
#define STACK_FRAMES_MAX 127

void emit(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *new_tmp(struct gen *g);
/* v as a C literal (INT64_MIN has none: it is written as an expression). */
char *c_int64(int64_t v);
/* n's C expression; the statements it needs are emitted first. */
char *gen_expr(struct gen *g, struct node *n);
/* Whether an address of type t is the process's: a user pointer, or an
 * integer in a probe that runs in user code (uprobes, usdt). */
bool gen_user_address(const struct gen *g, const struct type *t);
/* The same, its statements written to out at indent. */
char *gen_expr_to(struct gen *g, struct node *n, struct strbuf *out, int indent);
/* Copies tuple src (of tuple type src_tuple) into dst (of dst_tuple, the
 * same elements, strings perhaps longer or shorter), element by element. */
void gen_tuple_copy(struct gen *g, const char *dst, int dst_tuple, const char *src, int src_tuple);
/* The C declaration of a variable of type t. */
char *c_decl(struct gen *g, const struct type *t, const char *name);
/* The key struct of a map access, filled. */
char *gen_map_key(struct gen *g, int map, struct node *ref);
/* gen_stmt.c: after a write of a map whose reads the CPUs remember (bpf/ut.h). */
void gen_memo_written(struct gen *g, int map);
/* gen_stmt.c */
void gen_alternative(struct gen_parts *parts, struct compiler *c, struct alt_ctx *a);

#endif
