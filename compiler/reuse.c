/* The reuse pass: map reads whose value the kernel's C holds already, so
 * that generation (gen_expr.c, gen_map_read) only prints what it finds.
 *
 * - After `@m[k] += v`, a read of @m[k] in the statement right after it,
 *   in the same list, takes the value the add returned (ut_added_<n>).
 * - A read in the body of a map value the predicate looked up (same map,
 *   same key, the key the same all through the hit: not the clock, no
 *   stack) takes the predicate's value (ut_pread_<n>, where the
 *   predicate's && or || did look it up), until the body may have written
 *   the map: an assignment, an aggregation or a delete of it before, or a
 *   loop around the read.  bpftrace's `/@start[k]/ { ... nsecs -
 *   @start[k] ... }` looks up once.
 *
 * The walk visits the C's expressions in the order generation writes them
 * (statements in order; in a statement, its values before its keys): the
 * kernel's statements, and of the reader's only what the kernel captures
 * for it (placement.c).  Two keys are the same when each is an expression
 * whose C needs no statement of its own (pure) and they are written alike,
 * constants and script functions seen through. */
#include <stdlib.h>
#include <string.h>

#include "compiler/aggregations.h"
#include "compiler/builtins.h"
#include "compiler/passes.h"

/* A map read of the predicate the body may take. */
struct pred_read {
	int map;
	struct node *read;          /* its keys: read->a */
	bool valid;                 /* no write of its map since */
};

/* The walk over one alternative. */
struct reuse_walk {
	struct compiler *c;
	struct alt_ctx *a;
	bool in_body;
	const struct node *prev_stmt;   /* the statement before, in the innermost list */
	bool list_continues;            /* the next list (a function's body) follows prev_stmt */
	const struct node *last_add;    /* the last add with a pure key */
	struct pred_read *pred_reads;
	bool *computed;                 /* per computed argument: its value walked */
};

/* ---- keys ---- */

/* Whether key expression n's C is an expression alone, with no statement
 * of its own (a temporary would make it another text at each read). */
static bool pure(const struct node *n)
{
	switch (n->kind) {
	case N_INT:
		return true;
	case N_IDENT:
		if (n->ref == REF_CONST)
			return pure(n->resolved);
		return n->ref != REF_BUILTIN || !builtins[n->sym].gen;   /* comm reads into a temporary */
	case N_LOCAL:
		return n->ref != REF_CONST || pure(n->resolved);
	case N_FIELD:
		if (n->ref == REF_TUPLE_ITEM)
			return pure(n->a);
		if (n->ref == REF_MEMBER || n->ref == REF_BITFIELD)   /* a load the verifier guards: a number */
			return n->a->type.direct && !n->a->type.user && n->type.kind != T_PTR && n->type.kind != T_STR &&
			       pure(n->a);
		return (n->ref == REF_ARG || n->ref == REF_COMPUTED) && n->type.kind != T_STR;
	case N_INDEX:
		return n->ref == REF_TABLE && pure(n->b);
	case N_CALL:
		if (n->ref == REF_MACRO)
			return pure(n->resolved);
		return n->ref == REF_FUNCTION && calls[n->sym].shows_argument && pure(n->a);
	case N_BINOP:
		if (binop_signed(n) && (n->op == '/' || n->op == '%'))   /* BPF divides the magnitudes */
			return false;
		return pure(n->a) && pure(n->b);
	case N_UNOP:
		return pure(n->a);
	case N_CAST:
		return n->a->type.kind != T_STR && pure(n->a);
	case N_TERNARY:
		return n->type.kind != T_STR && pure(n->a) && pure(n->b) && pure(n->c);
	case N_DEFAULT:
		return (n->a->ref == REF_ABSENT || pure(n->a)) && pure(n->b);
	default:
		return false;
	}
}

/* Keys all pure, and no string: their C is the same text wherever read. */
static bool pure_keys(const struct node *keys)
{
	for (; keys; keys = keys->next)
		if (keys->type.kind == T_STR || !pure(keys))
			return false;
	return true;
}

/* Whether the pure keys x and y are written alike: the same C. */
static bool same_keys(const struct node *x, const struct node *y)
{
	for (; x && y; x = x->next, y = y->next)
		if (!same_tree(x, y, true))
			return false;
	return !x && !y;
}

static enum walk_next stop_at_each_use(struct node *n, void *ctx)
{
	(void)ctx;
	return n->kind == N_IDENT && n->ref == REF_BUILTIN && builtins[n->sym].each_use ? WALK_STOP : WALK_INTO;
}

static enum walk_next stop_at_clock(struct node *n, void *ctx)
{
	(void)ctx;
	return n->kind == N_IDENT && n->ref == REF_BUILTIN && builtins[n->sym].clock_cexpr ? WALK_STOP : WALK_INTO;
}

/* Keys the same all through a hit: no builtin that is a new value at each
 * use (a stack). */
static bool same_all_hit(struct node *keys)
{
	return walk_list(keys, &(struct walker){.expansions = true, .pre = stop_at_each_use});
}

/* Keys the body writes as the predicate does: the clock is a read of it in
 * the predicate, the hit's one read (ut_now) in the body. */
static bool same_in_body(struct node *keys)
{
	return walk_list(keys, &(struct walker){.expansions = true, .pre = stop_at_clock});
}

/* ---- expressions ---- */

/* The body writes map (-1: may write any): the predicate's look-ups of it
 * are not its values any more. */
static void written(struct reuse_walk *w, int map)
{
	for (unsigned i = 0; i < w->a->npred_reads; i++)
		if (map < 0 || w->pred_reads[i].map == map)
			w->pred_reads[i].valid = false;
}

static void map_read(struct reuse_walk *w, struct node *n)
{
	bool keys = pure_keys(n->a);
	const struct node *add = w->last_add;
	if (keys && add && add == w->prev_stmt && add->a->sym == n->sym && same_keys(add->a->a, n->a)) {
		n->reuse = REUSE_ADDED;
		n->reuse_var = add->reuse_var;
		return;
	}
	if (!keys || n->type.kind == T_TUPLE || n->type.kind == T_STR)
		return;
	struct alt_ctx *a = w->a;
	if (w->in_body) {
		for (unsigned i = 0; i < a->npred_reads; i++) {
			struct pred_read *r = &w->pred_reads[i];
			if (r->valid && r->map == n->sym && same_in_body(r->read->a) && same_keys(r->read->a, n->a)) {
				n->reuse = REUSE_PREDICATE;
				n->reuse_var = i;
				r->read->reuse = REUSE_KEPT;
				a->pred_kept[i] = true;
				return;
			}
		}
		return;
	}
	if (!same_all_hit(n->a))
		return;
	w->pred_reads = xrealloc_array(w->pred_reads, a->npred_reads + 1, sizeof(*w->pred_reads));
	w->pred_reads[a->npred_reads] = (struct pred_read){.map = n->sym, .read = n, .valid = true};
	n->reuse = REUSE_OFFERED;
	n->reuse_var = a->npred_reads++;
}

static void walk_expr(struct reuse_walk *w, struct node *n);

static enum walk_next expr_pre(struct node *n, void *ctx)
{
	struct reuse_walk *w = ctx;
	if (calls_function(n)) {   /* its body, the arguments in place */
		walk_expr(w, n->resolved);
		return WALK_PAST;
	}
	if (n->kind == N_CALL && n->ref == REF_FUNCTION && calls[n->sym].unevaluated)
		return WALK_PAST;
	if (n->kind == N_FIELD && n->ref == REF_COMPUTED && !w->computed[n->sym]) {
		/* a computed argument is evaluated at its first use */
		w->computed[n->sym] = true;
		walk_expr(w, w->a->computed_args[n->sym].value);
	}
	return WALK_INTO;
}

static enum walk_next expr_post(struct node *n, void *ctx)
{
	if (n->kind == N_MAP_REF && n->ref == REF_MAP)
		map_read(ctx, n);
	return WALK_INTO;
}

/* Expression n (not the list after it), in the order its C is written:
 * a node's operands, then the node. */
static void walk_expr(struct reuse_walk *w, struct node *n)
{
	walk_tree(n, &(struct walker){.expansions = true, .pre = expr_pre, .post = expr_post, .ctx = w});
}

static void walk_exprs(struct reuse_walk *w, struct node *list)
{
	for (; list; list = list->next)
		walk_expr(w, list);
}

/* ---- statements ---- */

static void walk_stmt(struct reuse_walk *w, struct node *n);

static void walk_stmts(struct reuse_walk *w, struct node *list)
{
	const struct node *outer = w->prev_stmt;
	if (!w->list_continues)
		w->prev_stmt = NULL;
	w->list_continues = false;
	for (; list; list = list->next) {
		walk_stmt(w, list);
		w->prev_stmt = list;
	}
	w->prev_stmt = outer;
}

static void field_value(void *ctx, struct node *value, bool key)
{
	(void)key;
	walk_expr(ctx, value);
}

/* A record's values in field order, then what fills it after them. */
static void walk_record(struct reuse_walk *w, struct node *n)
{
	record_fields(n, field_value, w);
	const struct statement_def *st = statement_of(n);
	if (st && st->fill)
		walk_expr(w, n->a);
}

static void walk_map_assign(struct reuse_walk *w, struct node *n)
{
	const struct map_info *m = &w->c->maps[n->a->sym];
	written(w, n->a->sym);
	if (m->kind == MAP_AGG) {
		if (ut_aggs[m->agg].nargs)
			walk_expr(w, agg_args(n));
		walk_exprs(w, n->a->a);
		return;
	}
	walk_expr(w, n->b);
	walk_exprs(w, n->a->a);
	if (n->op != '=') {
		n->reuse = REUSE_ADD;
		n->reuse_var = w->a->nadded++;
		if (pure_keys(n->a->a))
			w->last_add = n;
	}
}

/* A statement of the kernel's. */
static void walk_kernel_stmt(struct reuse_walk *w, struct node *n)
{
	switch (n->kind) {
	case N_BLOCK:
		walk_stmts(w, n->a);
		return;
	case N_EXPR_STMT: {
		struct node *call = stmt_call(n);
		if (calls_function(call)) {
			w->list_continues = true;   /* its body runs where the call is */
			walk_stmt(w, call->resolved);
		} else if (statement_of(call)->updates_map) {
			written(w, call->a->sym);
			walk_exprs(w, call->a->a);
		} else if (!statement_of(call)->gen) {
			walk_record(w, call);
		}
		return;
	}
	case N_LOCAL_ASSIGN:
		walk_expr(w, n->a);
		return;
	case N_MAP_ASSIGN:
		walk_map_assign(w, n);
		return;
	case N_IF:
		walk_expr(w, n->a);
		walk_stmt(w, n->b);
		if (n->c)
			walk_stmt(w, n->c);
		return;
	case N_FOR:
		written(w, -1);   /* a turn reads what the turns before wrote */
		walk_stmts(w, for_body(n));
		return;
	case N_RETURN: case N_BREAK: case N_CONTINUE:
		return;
	default:
		walk_record(w, n);
		return;
	}
}

static enum walk_next capture_pre(struct node *n, void *ctx)
{
	struct reuse_walk *w = ctx;
	if (n->capture < 0)
		return WALK_INTO;
	if (w->a->captured[n->capture] == CAPTURED_HERE)
		walk_expr(w, n);
	return WALK_PAST;
}

/* A statement of the reader's: the kernel writes what it captures for it
 * where the statement is. */
static void walk_reader_stmt(struct reuse_walk *w, struct node *n)
{
	if (!(n->side & PLACE_CAPTURES))
		return;
	switch (n->kind) {
	case N_BLOCK:
		walk_stmts(w, n->a);
		return;
	case N_IF:
		walk_tree(n->a, &(struct walker){.expansions = true, .pre = capture_pre, .ctx = w});
		walk_stmt(w, n->b);
		if (n->c)
			walk_stmt(w, n->c);
		return;
	case N_FOR: case N_FOR_MAP:   /* the same at every turn: captured once */
		walk_stmts(w, for_body(n));
		return;
	default:
		if (n->kind == N_EXPR_STMT && calls_function(stmt_call(n)))
			walk_stmt(w, stmt_call(n)->resolved);
		else
			walk_tree(n, &(struct walker){.expansions = true, .pre = capture_pre, .ctx = w});
	}
}

static void walk_stmt(struct reuse_walk *w, struct node *n)
{
	if (w->a->hit_event >= 0 && !(n->side & PLACE_KERNEL))
		walk_reader_stmt(w, n);
	else
		walk_kernel_stmt(w, n);
}

void reuse(struct compiler *c)
{
	for (unsigned i = 0; i < c->nalts; i++) {
		struct alt_ctx *a = c->alts[i];
		struct reuse_walk w = {.c = c, .a = a, .computed = xcalloc(a->ncomputed_args + 1, sizeof(bool))};
		if (a->pred)
			walk_expr(&w, a->pred);
		a->pred_kept = xcalloc(a->npred_reads + 1, sizeof(bool));
		w.in_body = true;
		walk_stmts(&w, a->block->a);
		free(w.pred_reads);
		free(w.computed);
	}
}
