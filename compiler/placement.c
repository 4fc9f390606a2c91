/* The placement pass: which side each part of a probe runs on.
 *
 * The kernel (BPF C) does what only it can, or should: reading kernel
 * memory (arguments, fields, strings, stacks, paths), the filters and
 * predicates that keep the volume down, the maps kernel code reads.  The
 * reader (runtime/user_side.c) does the rest, over the records in time
 * order: map updates and reads no kernel code needs, aggregations, trace
 * constructs and printf.  A probe hit with work for the reader sends one
 * UT_EV_HIT record holding the values the kernel captured for it (the
 * kernel's values its statements read); docs/architecture.md tells the
 * whole story.
 *
 * Everything starts in the reader but what must be in the kernel; what the
 * kernel needs then pulls the rest in, until nothing changes:
 * - a map read by kernel code is the kernel's (a predicate; the key or
 *   value of a kernel map; a pointer kernel code reads through; the
 *   condition of an if with kernel work; a value a kernel local takes),
 *   and so is a local kernel code reads;
 * - a statement writing a kernel map or local is the kernel's;
 * - a loop whose body does kernel work runs in the kernel whole, and a
 *   probe with records or a return in such a loop runs in the kernel
 *   whole (the reader's records would come after the kernel's);
 * - a costly capture (a field, a string, a map look-up) the kernel would
 *   make whether or not the reader uses it (under a condition the reader
 *   decides) makes that condition the kernel's;
 * - a return with kernel work after it is the kernel's too.
 * Two choices are the cost's: a map that only probes sending no records
 * touch stays in the kernel (an update there costs less than a record;
 * with no trace, a probe that would send records with one counts as
 * sending: the reader then keeps the same maps as with the trace, where
 * the kernel keeping them would cost the workload more, bench/README.md
 * session 25),
 * and a probe that touches no map of the reader's writes its records
 * itself (a record costs what a hit record does, and the reader less).
 * Only promotions to the kernel happen, so the walk ends. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/aggregations.h"
#include "compiler/builtins.h"
#include "compiler/check.h"

/* What evaluating an expression needs. */
enum { NEEDS_KERNEL = 1, NEEDS_READER = 2 };

/* Where a statement or expression is in its body.  Conditions the reader
 * decides chain up: what the kernel captures under them, it captures
 * whether or not the reader uses it. */
struct ctx {
	const struct ctx *up;
	struct node *cond;          /* a condition the reader decides, or NULL */
	bool kernel_loop;           /* inside a loop that runs in the kernel */
	uint64_t iterations;        /* of the reader's loops around (for its step bound) */
	unsigned depth;             /* bodies around, on the reader's side */
};

/* The walk over one alternative's body. */
struct place {
	struct compiler *c;
	struct alt_ctx *a;
	bool changed;               /* something moved to the kernel */
	bool final;                 /* the last walk: it marks the nodes and lists the captures */
	unsigned pos;               /* preorder position of the statement being walked */
	unsigned stmt_pos;          /* of the innermost statement */
	unsigned kernel_until;      /* of the last kernel work seen */
	uint64_t steps;             /* the reader's statements a hit may run, at most */
	unsigned deepest_expr;      /* the reader's most nested expression */
	unsigned deepest_body;      /* the reader's most nested body */
	unsigned ncaptures;         /* values captured where their statements are, so far */
	unsigned *last_set, *first_read;   /* per local: this walk's (struct local) */
};

/* What a walked statement holds. */
struct walked {
	bool kernel;                /* kernel work */
	bool reader;                /* the reader's work */
	bool captures;              /* values the kernel captures for the reader */
};

static struct walked either(struct walked x, struct walked y)
{
	return (struct walked){x.kernel || y.kernel, x.reader || y.reader, x.captures || y.captures};
}

/* ---- moving things to the kernel ---- */

static bool in_kernel(const struct placed *p) { return p->why != NULL; }

static void to_kernel(struct place *p, struct placed *what, const char *why, struct ut_loc at)
{
	if (in_kernel(what))
		return;
	*what = (struct placed){why, at};
	p->changed = true;
}

static void all_kernel(struct place *p, const char *why, struct ut_loc at)
{
	to_kernel(p, &p->a->all_kernel, why, at);
}

static bool runs_in_kernel(const struct place *p, const struct ctx *cx)
{
	return cx->kernel_loop || in_kernel(&p->a->all_kernel);
}

struct required {
	struct place *p;
	const char *why;
};

/* The kernel would have to run what the reader alone computes (final
 * walk: the one that marks): the first such is reported. */
static void reader_only_in_kernel(struct place *p, const char *what, struct ut_loc where, struct placed why)
{
	if (p->final && !p->a->reader_only.why) {
		p->a->reader_only = why;
		p->a->reader_only_at = where;
		p->a->reader_only_what = what;
	}
}

static enum walk_next require_node(struct node *n, void *ctx)
{
	struct required *r = ctx;
	if (n->kind == N_CALL && n->ref == REF_FUNCTION && calls[n->sym].reader_op) {
		reader_only_in_kernel(r->p, n->str, n->loc, (struct placed){r->why, n->loc});
		return WALK_PAST;   /* its map is read whole where it is */
	}
	if (n->kind == N_MAP_REF && n->ref == REF_MAP)
		to_kernel(r->p, &r->p->c->maps[n->sym].kernel, r->why, n->loc);
	else if (n->kind == N_LOCAL && n->ref == REF_LOCAL)
		to_kernel(r->p, &r->p->a->locals[n->sym].kernel, r->why, n->loc);
	return WALK_INTO;
}

/* Every map and local the expressions of list read goes to the kernel:
 * kernel code evaluates them. */
static void require_kernel(struct place *p, struct node *list, const char *why)
{
	walk_list(list, &(struct walker){.expansions = true, .pre = require_node, .ctx = &(struct required){p, why}});
}

/* ---- expressions ---- */

static unsigned classify(struct place *p, struct node *n);

static unsigned classify_list(struct place *p, struct node *list)
{
	unsigned f = 0;
	for (; list; list = list->next)
		f |= classify(p, list);
	return f;
}

/* What n needs, with the maps and locals where they are now.  The
 * operands of kernel operations (a field's base, a string's address, a
 * kernel map's keys) go to the kernel. */
static unsigned classify(struct place *p, struct node *n)
{
	switch (n->kind) {
	case N_INT: case N_STR:
		return 0;
	case N_IDENT:
		switch (n->ref) {
		case REF_BUILTIN: return builtins[n->sym].in_header ? 0 : NEEDS_KERNEL;   /* the reader has the header */
		case REF_CONST: return classify(p, n->resolved);
		case REF_ARG: return NEEDS_KERNEL;
		default: return 0;   /* the probe's index, an enumerator */
		}
	case N_LOCAL:
		if (n->ref == REF_CONST)   /* a positional parameter */
			return classify(p, n->resolved);
		return in_kernel(&p->a->locals[n->sym].kernel) ? NEEDS_KERNEL : NEEDS_READER;
	case N_TUPLE:   /* the reader has no tuples (runtime/user_side.c) */
		require_kernel(p, n->a, "an element of a tuple, which the reader does not evaluate");
		return NEEDS_KERNEL;
	case N_MAP_REF:
		if (in_kernel(&p->c->maps[n->sym].kernel)) {
			require_kernel(p, n->a, "a key of a map in the kernel");
			return NEEDS_KERNEL;
		}
		return NEEDS_READER | classify_list(p, n->a);
	case N_INDEX:
		if (n->ref == REF_TABLE)   /* a table only names the value */
			return classify(p, n->b);
		require_kernel(p, n->a, "read through by kernel code");
		require_kernel(p, n->b, "an index kernel code reads at");
		return NEEDS_KERNEL;
	case N_CALL:
		if (n->ref == REF_MACRO)
			return classify(p, n->resolved);
		if (calls[n->sym].shows_argument)
			return classify(p, n->a);
		if (calls[n->sym].reader_op)   /* its map's keys; the map is read whole where it is */
			return NEEDS_READER | classify_list(p, n->a->a);
		require_kernel(p, n->a, "read by kernel code");   /* str(), path(), exists(), diskdev() */
		return NEEDS_KERNEL;
	case N_FIELD: case N_DEFAULT:
		/* a probe argument, or a field read through a pointer */
		require_kernel(p, n->a, "read through by kernel code");
		require_kernel(p, n->b, "a default of a probe argument");
		return NEEDS_KERNEL;
	default:   /* operators, casts */
		return classify_list(p, n->a) | classify_list(p, n->b) | classify_list(p, n->c);
	}
}

/* What the kernel computes for one capture costs little: a constant, an
 * argument or computed argument (read once a hit anyway), a local, a
 * header builtin, and arithmetic on them.  Fields, strings, stacks, map
 * look-ups cost. */
static bool cheap(const struct node *n)
{
	switch (n->kind) {
	case N_INT: case N_STR: case N_LOCAL:
		return true;
	case N_IDENT:
		if (n->ref == REF_CONST)
			return cheap(n->resolved);
		return n->ref != REF_BUILTIN || !builtins[n->sym].costly;
	case N_FIELD:
		return (n->ref == REF_ARG || n->ref == REF_COMPUTED) && n->type.kind != T_STR;
	case N_INDEX:
		return n->ref == REF_TABLE && cheap(n->b);
	case N_CALL:
		if (n->ref == REF_MACRO)
			return cheap(n->resolved);
		return calls[n->sym].cheap || (calls[n->sym].shows_argument && cheap(n->a));
	case N_BINOP: case N_TERNARY:
		return cheap(n->a) && cheap(n->b) && (!n->c || cheap(n->c));
	case N_UNOP: case N_CAST:
		return cheap(n->a);
	default:
		return false;
	}
}

/* A value that is the same all through a hit: the probe's arguments,
 * constants, the task's builtins, and arithmetic on them. */
static bool same_all_hit(const struct node *n)
{
	switch (n->kind) {
	case N_INT: case N_STR:
		return true;
	case N_IDENT:
		return n->ref == REF_CONST ? same_all_hit(n->resolved) : n->ref != REF_BUILTIN || !builtins[n->sym].each_use;
	case N_FIELD:
		return n->ref == REF_ARG || n->ref == REF_COMPUTED;
	case N_INDEX:
		return n->ref == REF_TABLE && same_all_hit(n->b);
	case N_CALL:
		return n->ref == REF_MACRO ? same_all_hit(n->resolved) : calls[n->sym].shows_argument && same_all_hit(n->a);
	case N_BINOP: case N_TERNARY:
		return same_all_hit(n->a) && same_all_hit(n->b) && (!n->c || same_all_hit(n->c));
	case N_UNOP: case N_CAST:
		return same_all_hit(n->a);
	default:
		return false;
	}
}

/* The leaves of cheap values: what the kernel captures of them, the
 * reader computing the rest. */
static bool cheap_leaf(const struct node *n)
{
	return n->kind == N_FIELD || n->kind == N_LOCAL || (n->kind == N_IDENT && n->ref != REF_CONST);
}

/* The kernel computes n (kernel-evaluable) for the reader.  A cheap value
 * that is the same all through the hit is captured once, before the
 * statements.  A costly value under conditions the reader decides makes
 * them the kernel's, which then computes it only where the reader uses
 * it. */
static void add_capture(struct alt_ctx *a, struct node *n, enum captured where)
{
	n->capture = (int)a->ncaptures;
	a->captures = xrealloc_array(a->captures, a->ncaptures + 1, sizeof(*a->captures));
	a->captured = xrealloc_array(a->captured, a->ncaptures + 1, sizeof(*a->captured));
	a->captures[a->ncaptures] = n;
	a->captured[a->ncaptures++] = where;
}

static void capture(struct place *p, struct node *n, const struct ctx *cx)
{
	struct alt_ctx *a = p->a;
	if (n->kind == N_LOCAL) {   /* a kernel local: its copy, where every assignment comes first */
		struct local *l = &a->locals[n->sym];
		if (p->stmt_pos < p->first_read[n->sym])
			p->first_read[n->sym] = p->stmt_pos;
		if (l->last_set < l->first_read) {
			if (p->final && l->mirror < 0) {
				add_capture(a, n, CAPTURED_AT_SET);
				l->mirror = n->capture;
			}
			if (p->final)
				n->capture = l->mirror;
			return;
		}
	}
	bool first = cheap(n) && same_all_hit(n);
	if (first) {
		for (unsigned i = 0; p->final && i < a->ncaptures; i++)
			if (a->captured[i] == CAPTURED_FIRST && same_tree(a->captures[i], n, false)) {
				n->capture = (int)i;
				return;
			}
	} else {
		if (!cheap(n)) {
			for (const struct ctx *up = cx; up; up = up->up)
				if (up->cond)
					require_kernel(p, up->cond, "decides whether the kernel reads a costly value");
			if (p->stmt_pos > p->kernel_until)
				p->kernel_until = p->stmt_pos;
		}
		p->ncaptures++;   /* captured where the statement is */
	}
	if (p->final)
		add_capture(a, n, first ? CAPTURED_FIRST : CAPTURED_HERE);
}

static unsigned reader_expr(struct place *p, struct node *n, const struct ctx *cx);

static unsigned reader_list(struct place *p, struct node *list, const struct ctx *cx)
{
	unsigned deepest = 0;
	for (; list; list = list->next) {
		unsigned d = reader_expr(p, list, cx);
		deepest = d > deepest ? d : deepest;
	}
	return deepest;
}

/* An operand the reader evaluates only when cond says so. */
static unsigned lazy_operand(struct place *p, struct node *n, struct node *cond, const struct ctx *cx)
{
	struct ctx inner = *cx;
	inner.up = cx;
	inner.cond = classify(p, cond) & NEEDS_READER ? cond : NULL;
	return reader_expr(p, n, &inner);
}

/* Expression n as the reader evaluates it: its largest kernel-evaluable
 * parts are captured.  Returns how deep the reader's expression nests
 * (what runtime/user_side.c evaluates: a captured value is one). */
static unsigned reader_expr(struct place *p, struct node *n, const struct ctx *cx)
{
	/* a cheap value is captured by its leaves (arguments, locals): one
	 * field for each, however many expressions use it */
	if (classify(p, n) == NEEDS_KERNEL && !(cheap(n) && !cheap_leaf(n))) {
		capture(p, n, cx);
		return 1;
	}
	unsigned d = 0, b, e;
	switch (n->kind) {
	case N_IDENT:   /* a constant's value; builtins and the rest are leaves */
		return n->ref == REF_CONST ? reader_expr(p, n->resolved, cx) : 1;
	case N_INDEX:   /* a table's: the key */
		return reader_expr(p, n->b, cx);
	case N_CALL:    /* a function's body, a value shown another way, or a map's keys */
		if (n->ref == REF_FUNCTION && calls[n->sym].reader_op)
			return reader_list(p, n->a->a, cx) + 1;
		return reader_expr(p, n->ref == REF_MACRO ? n->resolved : n->a, cx);
	case N_MAP_REF:
		d = reader_list(p, n->a, cx);
		break;
	case N_BINOP:
		d = reader_expr(p, n->a, cx);
		b = n->op == OP_AND || n->op == OP_OR ? lazy_operand(p, n->b, n->a, cx) : reader_expr(p, n->b, cx);
		d = b > d ? b : d;
		break;
	case N_TERNARY:
		d = reader_expr(p, n->a, cx);
		b = lazy_operand(p, n->b, n->a, cx);
		e = lazy_operand(p, n->c, n->a, cx);
		d = b > d ? b : d;
		d = e > d ? e : d;
		break;
	case N_UNOP: case N_CAST:
		d = reader_expr(p, n->a, cx);
		break;
	default:   /* N_INT, N_STR, N_LOCAL */
		break;
	}
	return d + 1;
}

/* Expression n for the reader, its depth noted. */
static void reader_value(struct place *p, struct node *n, const struct ctx *cx)
{
	unsigned d = reader_expr(p, n, cx);
	if (d > p->deepest_expr)
		p->deepest_expr = d;
}

/* ---- statements ---- */

static struct walked walk_stmt(struct place *p, struct node *n, const struct ctx *cx);

static struct walked walk_stmts(struct place *p, struct node *list, const struct ctx *cx)
{
	struct walked w = {0};
	for (; list; list = list->next)
		w = either(w, walk_stmt(p, list, cx));
	return w;
}

/* Kernel work at the statement being walked. */
static struct walked kernel_work(struct place *p)
{
	if (p->stmt_pos > p->kernel_until)
		p->kernel_until = p->stmt_pos;
	return (struct walked){.kernel = true};
}

/* A statement for the reader. */
static struct walked reader_work(struct place *p, const struct ctx *cx, unsigned captures_before)
{
	p->steps += cx->iterations;
	if (cx->depth > p->deepest_body)
		p->deepest_body = cx->depth;
	return (struct walked){.reader = true, .captures = p->ncaptures > captures_before};
}

/* A statement that updates a map or a local (placed): its own expressions
 * (keys, then the value; NULL ends them). */
static struct walked update(struct place *p, struct placed *placed, const char *why, const char *stored,
			    struct ut_loc at, struct node **exprs, const struct ctx *cx)
{
	if (runs_in_kernel(p, cx))
		to_kernel(p, placed, why, at);
	if (in_kernel(placed)) {
		for (unsigned i = 0; exprs[i]; i++)
			require_kernel(p, exprs[i], stored);
		return kernel_work(p);
	}
	unsigned before = p->ncaptures;
	for (unsigned i = 0; exprs[i]; i++)
		reader_value(p, exprs[i], cx);
	return reader_work(p, cx, before);
}

static struct walked map_update(struct place *p, struct node *stmt, struct node *ref, struct node *value,
				const struct ctx *cx)
{
	struct node *exprs[10];
	unsigned n = 0;
	for (struct node *k = ref->a; k; k = k->next)
		exprs[n++] = k;
	if (value)
		exprs[n++] = value;
	exprs[n] = NULL;
	return update(p, &p->c->maps[ref->sym].kernel, "written in a loop that runs in the kernel",
		      "read for a key or value of a map in the kernel", stmt->loc, exprs, cx);
}

struct record_walk {
	struct place *p;
	const struct ctx *cx;
	bool kernel;
};

static void record_field_value(void *ctx, struct node *value, bool key)
{
	(void)key;
	struct record_walk *r = ctx;
	if (r->kernel)
		require_kernel(r->p, value, "a value of a record the kernel writes");
	else
		reader_value(r->p, value, r->cx);
}

/* A trace construct, or a statement builtin that writes a record. */
static struct walked record(struct place *p, struct node *n, const struct ctx *cx)
{
	if (cx->kernel_loop)
		all_kernel(p, "it writes records in a loop that runs in the kernel", n->loc);
	const struct statement_def *st = statement_of(n);
	if (st && st->kernel_only)
		all_kernel(p, st->kernel_only, n->loc);
	struct record_walk r = {p, cx, in_kernel(&p->a->all_kernel)};
	unsigned before = p->ncaptures;
	record_fields(n, record_field_value, &r);
	return r.kernel ? kernel_work(p) : reader_work(p, cx, before);
}

static struct walked walk_call(struct place *p, struct node *n, const struct ctx *cx)
{
	struct node *e = n->a;
	if (e->ref == REF_MACRO)
		return walk_stmt(p, e->resolved, cx);
	if (statement_of(e)->updates_map)
		return map_update(p, n, e->a, NULL, cx);
	return record(p, e, cx);
}

bool cond_folds(struct compiler *c, const struct node *n, int64_t *v)
{
	int64_t a, b;
	if (n->kind == N_CALL && n->ref == REF_MACRO)
		return cond_folds(c, n->resolved, v);
	if (n->kind != N_BINOP || (n->op != OP_AND && n->op != OP_OR))
		return const_int(c, n, v, 0);
	bool known_a = cond_folds(c, n->a, &a), known_b = cond_folds(c, n->b, &b);
	bool is_and = n->op == OP_AND;
	/* 0 && x, x && 0, 1 || x, x || 1: expressions have no effects */
	if ((known_a && !a == is_and) || (known_b && !b == is_and)) {
		*v = !is_and;
		return true;
	}
	*v = is_and ? a && b : a || b;
	return known_a && known_b;
}

static struct walked walk_if(struct place *p, struct node *n, const struct ctx *cx)
{
	int64_t v;
	bool known = cond_folds(p->c, n->a, &v);
	unsigned f = known ? 0 : classify(p, n->a);
	struct ctx inner = *cx;
	inner.up = cx;
	inner.cond = f & NEEDS_READER ? n->a : NULL;
	inner.depth = cx->depth + 1;
	struct walked w = {0};
	if (!known || v)
		w = walk_stmt(p, n->b, &inner);
	if (n->c && (!known || !v))
		w = either(w, walk_stmt(p, n->c, &inner));
	if (!known && (w.kernel || runs_in_kernel(p, cx)))
		require_kernel(p, n->a, "decides kernel work");
	/* the kernel keeps the if around its work and captures, and around
	 * the reader's work when it can decide it: a hit whose reader work it
	 * skips sends no record (gen_stmt.c, open_hit) */
	bool kept = !(f & NEEDS_READER) && (w.kernel || w.captures || (w.reader && !known));
	if (w.reader && !known) {   /* the reader decides alike: a kernel-evaluable condition is captured whole */
		unsigned before = p->ncaptures;
		reader_value(p, n->a, cx);
		w.captures |= p->ncaptures > before;
	}
	p->steps += cx->iterations;
	if (p->final)
		n->side |= (kept ? PLACE_KERNEL : 0) | (w.reader ? PLACE_READER : 0) | (w.captures ? PLACE_CAPTURES : 0);
	return w;
}

/* A loop runs in the kernel when its body does kernel work (its variable
 * then is the kernel's), else in the reader; the values the kernel
 * captures inside are the same at every turn (the reader's loop sets no
 * kernel local or map), so they are captured once, before. */
static struct walked walk_for(struct place *p, struct node *n, const struct ctx *cx)
{
	struct local *var = &p->a->locals[n->sym];
	if (runs_in_kernel(p, cx))
		to_kernel(p, &var->kernel, "the variable of a loop that runs in the kernel", n->loc);
	uint64_t turns = n->b->num > n->a->num ? (uint64_t)n->b->num - (uint64_t)n->a->num : 0;
	struct ctx inner = *cx;
	inner.up = cx;
	inner.cond = NULL;
	inner.depth = cx->depth + 1;
	if (in_kernel(&var->kernel)) {
		inner.kernel_loop = true;
		walk_stmts(p, for_body(n), &inner);
		if (p->final)
			n->side = PLACE_KERNEL;
		return kernel_work(p);
	}
	inner.iterations = cx->iterations * (turns ? turns : 1);
	struct walked w = walk_stmts(p, for_body(n), &inner);
	if (w.kernel)
		to_kernel(p, &var->kernel, "the variable of a loop whose body does kernel work", n->loc);
	p->steps += inner.iterations;   /* the turns themselves */
	if (p->final)
		n->side = (w.reader ? PLACE_READER : 0) | (w.captures ? PLACE_CAPTURES : 0);
	return w;
}

/* The first statement of list (marked: a final walk) with kernel work. */
static const struct node *kernel_stmt_in(const struct node *list)
{
	for (const struct node *n = list; n; n = n->next) {
		const struct node *inner = n->kind == N_BLOCK ? kernel_stmt_in(n->a)
					   : n->kind == N_IF ? (kernel_stmt_in(n->b) ? kernel_stmt_in(n->b) : kernel_stmt_in(n->c))
					   : NULL;
		if (inner)
			return inner;
		if (n->side & PLACE_KERNEL && n->kind != N_BLOCK && n->kind != N_IF)
			return n;
	}
	return NULL;
}

/* A loop over a map runs in the reader alone, over the map's entries (a
 * copy: read from the kernel where the kernel keeps the map): its entry
 * locals, its body and what decides it are the reader's.  Where the
 * kernel would have to run it, or its body does kernel work (which would
 * run once, not for each entry), the pass reports it.  Its turns are not
 * known: the reader's step bound counts its body once. */
static struct walked walk_for_map(struct place *p, struct node *n, const struct ctx *cx)
{
	struct ctx inner = *cx;
	inner.up = cx;
	inner.cond = NULL;
	inner.depth = cx->depth + 1;
	struct walked w = walk_stmts(p, for_body(n), &inner);
	const struct map_info *m = &p->c->maps[n->a->sym];
	const struct local *entry = NULL;
	for (unsigned k = 0; k <= m->nkeys && !entry; k++)
		if (in_kernel(&p->a->locals[n->sym + (int)k].kernel))
			entry = &p->a->locals[n->sym + (int)k];
	if (in_kernel(&p->a->all_kernel))
		reader_only_in_kernel(p, "for", n->loc, p->a->all_kernel);
	else if (cx->kernel_loop)
		reader_only_in_kernel(p, "for", n->loc, (struct placed){"it is in a loop that runs in the kernel", n->loc});
	else if (entry)
		reader_only_in_kernel(p, entry->name, n->loc, entry->kernel);
	else if (w.kernel && p->final) {
		const struct node *work = kernel_stmt_in(for_body(n));
		reader_only_in_kernel(p, "for", n->loc, (struct placed){"this in its body is kernel work, which would run "
									 "once, not for each entry", work ? work->loc : n->loc});
	}
	p->steps += cx->iterations;
	if (p->final)
		n->side = PLACE_READER | (w.captures ? PLACE_CAPTURES : 0);
	return (struct walked){.reader = true, .captures = w.captures};
}

static struct walked walk_stmt_at(struct place *p, struct node *n, const struct ctx *cx)
{
	switch (n->kind) {
	case N_BLOCK:
		return walk_stmts(p, n->a, cx);
	case N_EXPR_STMT:
		return walk_call(p, n, cx);
	case N_LOCAL_ASSIGN: {
		struct node *exprs[] = {n->a, NULL};
		p->last_set[n->sym] = p->stmt_pos;
		return update(p, &p->a->locals[n->sym].kernel, "set in a loop that runs in the kernel",
			      "read for a local the kernel keeps", n->loc, exprs, cx);
	}
	case N_MAP_ASSIGN:
		if (p->c->maps[n->a->sym].kind == MAP_AGG)   /* the aggregated value; lhist's bounds are constants */
			return map_update(p, n, n->a, ut_aggs[p->c->maps[n->a->sym].agg].nargs ? agg_args(n) : NULL, cx);
		return map_update(p, n, n->a, n->b, cx);
	case N_IF:
		return walk_if(p, n, cx);
	case N_FOR:
		return walk_for(p, n, cx);
	case N_FOR_MAP:
		return walk_for_map(p, n, cx);
	case N_RETURN:
		if (cx->kernel_loop)
			all_kernel(p, "it returns from a loop that runs in the kernel", n->loc);
		if (runs_in_kernel(p, cx))
			return (struct walked){.kernel = true};
		/* the reader returns; the kernel too when kernel work follows */
		p->steps += cx->iterations;
		return (struct walked){.kernel = p->stmt_pos < p->a->kernel_until, .reader = true};
	case N_BREAK: case N_CONTINUE:
		if (runs_in_kernel(p, cx))
			return (struct walked){.kernel = true};
		p->steps += cx->iterations;
		return (struct walked){.reader = true};
	default:   /* trace statements */
		return record(p, n, cx);
	}
}

static struct walked walk_stmt(struct place *p, struct node *n, const struct ctx *cx)
{
	unsigned outer = p->stmt_pos;
	p->stmt_pos = p->pos++;
	struct walked w = walk_stmt_at(p, n, cx);
	p->stmt_pos = outer;
	if (p->final && n->kind != N_IF && n->kind != N_FOR && n->kind != N_FOR_MAP)
		n->side |= (w.kernel ? PLACE_KERNEL : 0) | (w.reader ? PLACE_READER : 0) |
			   (w.captures ? PLACE_CAPTURES : 0);
	return w;
}

/* ---- an alternative ---- */

static enum walk_next clear_marks(struct node *n, void *ctx)
{
	(void)ctx;
	n->side = 0;
	n->capture = -1;
	return WALK_INTO;
}

/* One walk over the alternative's body; the final walk marks it. */
static void place_alternative(struct place *p)
{
	struct alt_ctx *a = p->a;
	if (p->final) {
		walk_list(a->block, &(struct walker){.expansions = true, .pre = clear_marks});
		a->ncaptures = 0;
		a->reader_only = (struct placed){0};
	}
	if (a->pred)
		require_kernel(p, a->pred, "read in the predicate");
	for (unsigned i = 0; i < a->ncomputed_args; i++)
		require_kernel(p, a->computed_args[i].value, "read in a computed argument");
	p->last_set = xcalloc(a->nlocals + 1, sizeof(*p->last_set));
	p->first_read = xcalloc(a->nlocals + 1, sizeof(*p->first_read));
	for (unsigned i = 0; i < a->nlocals; i++) {
		p->first_read[i] = UINT32_MAX;
		a->locals[i].mirror = -1;
	}
	struct ctx top = {.iterations = 1};
	walk_stmts(p, a->block->a, &top);
	for (unsigned i = 0; i < a->nlocals; i++) {   /* what the next walk decides copies by */
		p->changed |= a->locals[i].last_set != p->last_set[i] || a->locals[i].first_read != p->first_read[i];
		a->locals[i].last_set = p->last_set[i];
		a->locals[i].first_read = p->first_read[i];
	}
	free(p->last_set);
	free(p->first_read);
	if (p->kernel_until > a->kernel_until) {
		a->kernel_until = p->kernel_until;
		p->changed = true;
	}
	if (in_kernel(&a->all_kernel))
		for (unsigned i = 0; i < a->nlocals; i++)
			to_kernel(p, &a->locals[i].kernel, "its probe runs in the kernel", a->locals[i].loc);
}

/* What the reader bounds a hit's statements to (compiler/program.h):
 * beyond them the probe runs in the kernel. */
static void check_reader_bounds(struct place *p)
{
	struct alt_ctx *a = p->a;
	unsigned reader_locals = 0;
	for (unsigned i = 0; i < a->nlocals; i++)
		reader_locals += !in_kernel(&a->locals[i].kernel);
	if (p->steps > UT_HIT_MAX_STEPS)
		all_kernel(p, "the reader would run more statements a hit than it allows", a->loc);
	else if (p->deepest_expr > UT_UEXPR_MAX_DEPTH)
		all_kernel(p, "an expression nests deeper than the reader evaluates", a->loc);
	else if (p->deepest_body >= UT_USTMT_MAX_DEPTH)
		all_kernel(p, "its statements nest deeper than the reader runs", a->loc);
	else if (reader_locals > UT_ULOCALS_MAX)
		all_kernel(p, "it has more locals than the reader keeps a hit", a->loc);
}

/* ---- no trace (--summary-only) ---- */

/* A statement of the trace: a trace construct, or snapshot() (the flight
 * recorder's). */
static bool of_the_trace(const struct node *n)
{
	const struct statement_def *st = n->kind == N_EXPR_STMT ? statement_of(stmt_call(n)) : NULL;
	return is_trace_construct(n) || (st && st->op == UT_EV_SNAPSHOT);
}

/* The trace's statements out of list (and the lists within), freed: its
 * new head. */
static struct node *strip_trace(struct compiler *c, struct node *list)
{
	struct node *head = NULL, **tail = &head;
	for (struct node *n = list, *next; n; n = next) {
		next = n->next;
		n->next = NULL;
		if (of_the_trace(n)) {
			node_free(n);
			c->compiled_out++;
			continue;
		}
		if (n->kind == N_BLOCK)
			n->a = strip_trace(c, n->a);
		else if (n->kind == N_IF) {
			n->b = strip_trace(c, n->b);
			n->c = strip_trace(c, n->c);
		} else if (n->kind == N_FOR)
			n->c = strip_trace(c, n->c);
		else if (n->kind == N_EXPR_STMT && calls_function(stmt_call(n)))
			stmt_call(n)->resolved = strip_trace(c, stmt_call(n)->resolved);
		*tail = n;
		tail = &n->next;
	}
	return head;
}

static enum walk_next local_read(struct node *n, void *ctx)
{
	bool *read = ctx;
	if (n->kind == N_LOCAL && n->ref == REF_LOCAL)
		read[n->sym] = true;
	return WALK_INTO;
}

static bool does_nothing(const struct node *list, const bool *read);

/* Whether statement n does nothing a hit leaves behind: it assigns locals
 * nothing reads, in blocks, ifs and loops of such statements (expressions
 * change nothing). */
static bool does_nothing_one(const struct node *n, const bool *read)
{
	switch (n->kind) {
	case N_LOCAL_ASSIGN: return !read[n->sym];
	case N_BLOCK: return does_nothing(n->a, read);
	case N_IF: return does_nothing(n->b, read) && does_nothing(n->c, read);
	case N_FOR: return does_nothing(n->c, read);
	case N_EXPR_STMT: return calls_function(stmt_call(n)) && does_nothing(stmt_call(n)->resolved, read);
	default: return false;
	}
}

static bool does_nothing(const struct node *list, const bool *read)
{
	for (const struct node *n = list; n; n = n->next)
		if (!does_nothing_one(n, read))
			return false;
	return true;
}

static bool strip_unread(struct node **list, const bool *read);

/* Strips inside an if's branch or a loop's body, which stays. */
static bool strip_within(struct node *n, const bool *read)
{
	if (n && n->kind == N_BLOCK)
		return strip_unread(&n->a, read);
	if (n && n->kind == N_IF)
		return strip_within(n->b, read) | strip_within(n->c, read);
	return false;
}

/* The statements of list that do nothing out of it: first the assignments
 * of locals nothing reads; true when any went. */
static bool strip_unread(struct node **list, const bool *read)
{
	bool changed = false;
	for (struct node **at = list; *at;) {
		struct node *n = *at;
		if (n->kind == N_BLOCK)
			changed |= strip_unread(&n->a, read);
		else if (n->kind == N_IF)
			changed |= strip_within(n->b, read) | strip_within(n->c, read);
		else if (n->kind == N_FOR)
			changed |= strip_within(n->c, read);
		else if (n->kind == N_EXPR_STMT && calls_function(stmt_call(n)))
			changed |= strip_unread(&stmt_call(n)->resolved, read);
		if (does_nothing_one(n, read)) {
			*at = n->next;
			n->next = NULL;
			node_free(n);
			changed = true;
		} else {
			at = &n->next;
		}
	}
	return changed;
}

/* The assignments of locals nothing reads go, until none is left. */
static void strip_unread_locals(struct alt_ctx *a)
{
	bool *read = xcalloc(a->nlocals + 1, sizeof(bool));
	do {
		memset(read, 0, (a->nlocals + 1) * sizeof(bool));
		walk_list(a->block->a, &(struct walker){.expansions = true, .pre = local_read, .ctx = read});
	} while (strip_unread(&a->block->a, read));
	free(read);
}

static bool writes_records(struct compiler *c, const struct node *list);

bool compile_out_trace(struct compiler *c, struct alt_ctx *a)
{
	a->records_in_trace = writes_records(c, a->block->a);
	a->block->a = strip_trace(c, a->block->a);
	strip_unread_locals(a);
	return a->block->a == NULL;
}

/* The map a statement writes and reads nothing of (an assignment, an
 * add, delete(), clear(), zero()), or NULL. */
static struct node *map_written(const struct node *n)
{
	if (n->kind == N_MAP_ASSIGN)
		return n->a;
	const struct statement_def *st = n->kind == N_EXPR_STMT ? statement_of(stmt_call(n)) : NULL;
	bool writes = st && (st->updates_map || st->op == UT_EV_CLEAR || st->op == UT_EV_ZERO);
	return writes ? stmt_call(n)->a : NULL;
}

/* The map a reference names: its symbol, or for a whole map (print(@m),
 * clear(@m): the reader acts on it by name) the map of that name; -1 for
 * one no probe assigns. */
static int map_of_ref(const struct compiler *c, const struct node *m)
{
	if (m->ref == REF_MAP)
		return m->sym;
	for (unsigned i = 0; i < c->nmaps; i++)
		if (strcmp(c->maps[i].name, m->str) == 0)
			return (int)i;
	return -1;
}

struct map_refs {
	const struct compiler *c;
	unsigned *refs, *writes;   /* per map: its references, and those a statement writes */
};

static enum walk_next count_map_refs(struct node *n, void *ctx)
{
	struct map_refs *r = ctx;
	struct node *m = map_written(n);
	int written = m && m->kind == N_MAP_REF ? map_of_ref(r->c, m) : -1;
	if (written >= 0)
		r->writes[written]++;
	int ref = n->kind == N_MAP_REF ? map_of_ref(r->c, n) : -1;
	if (ref >= 0)
		r->refs[ref]++;
	return WALK_INTO;
}

/* The writes of dead maps out of list (and the lists within), freed:
 * true when any went. */
static bool strip_dead_writes(struct compiler *c, struct node **list, const bool *dead)
{
	bool changed = false;
	for (struct node **at = list; *at;) {
		struct node *n = *at;
		if (n->kind == N_BLOCK)
			changed |= strip_dead_writes(c, &n->a, dead);
		else if (n->kind == N_IF)
			changed |= strip_dead_writes(c, &n->b, dead) | strip_dead_writes(c, &n->c, dead);
		else if (n->kind == N_FOR)
			changed |= strip_dead_writes(c, &n->c, dead);
		else if (n->kind == N_EXPR_STMT && calls_function(stmt_call(n)))
			changed |= strip_dead_writes(c, &stmt_call(n)->resolved, dead);
		struct node *m = map_written(n);
		int map = m && m->kind == N_MAP_REF ? map_of_ref(c, m) : -1;
		if (map >= 0 && dead[map]) {
			*at = n->next;
			n->next = NULL;
			node_free(n);
			c->dead_writes++;
			changed = true;
		} else {
			at = &n->next;
		}
	}
	return changed;
}

void compile_out_dead_maps(struct compiler *c)
{
	struct map_refs r = {c, xcalloc(c->nmaps + 1, sizeof(unsigned)), xcalloc(c->nmaps + 1, sizeof(unsigned))};
	bool *dead = xcalloc(c->nmaps + 1, sizeof(bool));
	bool changed = true;
	while (changed) {
		memset(r.refs, 0, (c->nmaps + 1) * sizeof(unsigned));
		memset(r.writes, 0, (c->nmaps + 1) * sizeof(unsigned));
		for (unsigned i = 0; i < c->nalts; i++) {
			walk_list(c->alts[i]->pred, &(struct walker){.expansions = true, .pre = count_map_refs, .ctx = &r});
			walk_list(c->alts[i]->block, &(struct walker){.expansions = true, .pre = count_map_refs, .ctx = &r});
		}
		for (unsigned m = 0; m < c->nmaps; m++)
			dead[m] = c->maps[m].is_private && r.refs[m] && r.refs[m] == r.writes[m];
		changed = false;
		for (unsigned i = 0; i < c->nalts; i++)
			if (strip_dead_writes(c, &c->alts[i]->block->a, dead)) {
				strip_unread_locals(c->alts[i]);
				changed = true;
			}
	}
	free(dead);
	free(r.refs);
	free(r.writes);
}

/* ---- the program ---- */

static enum walk_next stop_at_reader_map(struct node *n, void *ctx)
{
	const struct compiler *c = ctx;
	return n->kind == N_MAP_REF && n->ref == REF_MAP && !in_kernel(&c->maps[n->sym].kernel) ? WALK_STOP : WALK_INTO;
}

/* Whether statements list read or write a map of the reader's (clear()
 * names a map it does not touch: the reader clears either kind). */
static bool touches_reader_map(struct compiler *c, struct node *list)
{
	return !walk_list(list, &(struct walker){.expansions = true, .pre = stop_at_reader_map, .ctx = c});
}

static enum walk_next stop_at_reader_only(struct node *n, void *ctx)
{
	(void)ctx;
	bool reader_only = n->kind == N_FOR_MAP || (n->kind == N_CALL && n->ref == REF_FUNCTION && calls[n->sym].reader_op);
	return reader_only ? WALK_STOP : WALK_INTO;
}

/* Whether statements list hold what the reader alone computes. */
static bool needs_reader(struct node *list)
{
	return !walk_list(list, &(struct walker){.expansions = true, .pre = stop_at_reader_only});
}

/* With no trace, a finding's record is written once its rule's threshold
 * passes, not at every hit: it does not make its probe one that records
 * (the doctor's maps stay in the kernel with the rest). */
static bool rare_record(const struct compiler *c, const struct node *n)
{
	return c->opts->no_trace && statement_of(stmt_call(n))->op == UT_EV_FINDING;
}

/* Whether statements list write records (trace constructs, statement
 * builtins but those that update a map and, with no trace, findings) in
 * branches that may run. */
static bool writes_records(struct compiler *c, const struct node *list)
{
	for (const struct node *n = list; n; n = n->next) {
		int64_t v;
		switch (n->kind) {
		case N_BLOCK:
			if (writes_records(c, n->a))
				return true;
			break;
		case N_EXPR_STMT:
			if (calls_function(stmt_call(n)) ? writes_records(c, stmt_call(n)->resolved)
							  : !statement_of(stmt_call(n))->updates_map && !rare_record(c, n))
				return true;
			break;
		case N_IF:
			if (!cond_folds(c, n->a, &v) ? writes_records(c, n->b) || writes_records(c, n->c)
						      : writes_records(c, v ? n->b : n->c))
				return true;
			break;
		case N_FOR: case N_FOR_MAP:
			if (writes_records(c, n->c))
				return true;
			break;
		default:
			if (is_trace_construct(n))
				return true;
			break;
		}
	}
	return false;
}

/* Marks in touched[] (ctx) the maps a walk reads or writes. */
static enum walk_next map_touched(struct node *n, void *ctx)
{
	bool *touched = ctx;
	if (n->kind == N_MAP_REF && n->ref == REF_MAP)
		touched[n->sym] = true;
	return WALK_INTO;
}

/* The same in BEGIN and END, but for the maps their loops go over: a
 * loop reads a copy of a map, from either side, once. */
static enum walk_next map_touched_once(struct node *n, void *ctx)
{
	if (n->kind != N_FOR_MAP)
		return map_touched(n, ctx);
	walk_list(for_body(n), &(struct walker){.expansions = true, .pre = map_touched_once, .ctx = ctx});
	return WALK_PAST;
}

/* The cost's first choice: maps no recording probe touches stay in the
 * kernel (a probe with what the reader alone computes sends its hits:
 * its maps may be the reader's).  A loop of BEGIN or END over a map does
 * not touch it so: the reader reads a kernel map's copy. */
static void maps_of_silent_probes(struct compiler *c)
{
	bool *recorded = xcalloc(c->nmaps + 1, sizeof(bool));
	for (unsigned i = 0; i < c->nalts; i++)
		if (writes_records(c, c->alts[i]->block) || needs_reader(c->alts[i]->block) || c->alts[i]->records_in_trace)
			walk_list(c->alts[i]->block,
				  &(struct walker){.expansions = true, .ctx = recorded,
						   .pre = c->alts[i]->def->runs == PROBE_ATTACHED ? map_touched : map_touched_once});
	for (unsigned m = 0; m < c->nmaps; m++)
		if (!recorded[m])
			c->maps[m].kernel = (struct placed){"only probes that send no records touch it: an update there "
							    "costs less than a record", c->maps[m].loc};
	free(recorded);
}

/* Marks in ctx (a struct live_walk) the maps the code that runs touches:
 * an if whose condition folds (a script flag's constant) only in the
 * branch it takes, as generation does. */
struct live_walk {
	struct compiler *c;
	bool *live;
};

static enum walk_next map_live(struct node *n, void *ctx)
{
	struct live_walk *lw = ctx;
	int64_t v;
	if (n->kind == N_IF && cond_folds(lw->c, n->a, &v)) {
		struct node *taken = v ? n->b : n->c;
		if (taken)
			walk_tree(taken, &(struct walker){.expansions = true, .pre = map_live, .ctx = lw});
		return WALK_PAST;
	}
	if (n->kind == N_MAP_REF && n->ref == REF_MAP)
		lw->live[n->sym] = true;
	return WALK_INTO;
}

/* A map that only code which never runs touches (a probe left out, a
 * branch under a false flag: the default script's --check maps without
 * --check) is neither a BPF map nor the kernel's: the reader keeps it,
 * empty, and the BPF object does not hold it. */
static void dead_maps_to_reader(struct compiler *c)
{
	bool *live = xcalloc(c->nmaps + 1, sizeof(bool));
	struct live_walk lw = {c, live};
	for (unsigned i = 0; i < c->nalts; i++) {
		if (c->alts[i]->pred)
			walk_tree(c->alts[i]->pred, &(struct walker){.expansions = true, .pre = map_live, .ctx = &lw});
		walk_list(c->alts[i]->block, &(struct walker){.expansions = true, .pre = map_live, .ctx = &lw});
	}
	for (unsigned m = 0; m < c->nmaps; m++) {
		/* (a map of tuples stays the kernel's, unused: the reader's maps
		 * hold none, program_io.c) */
		bool tuple = c->maps[m].value_type.kind == T_TUPLE;
		for (unsigned k = 0; k < c->maps[m].nkeys; k++)
			tuple |= c->maps[m].key_types[k].kind == T_TUPLE;
		if (!live[m] && !tuple)
			c->maps[m].kernel = (struct placed){0};
	}
	free(live);
}

/* Walks every alternative until nothing moves to the kernel. */
static void settle(struct compiler *c)
{
	bool changed;
	do {
		changed = false;
		for (unsigned i = 0; i < c->nalts; i++) {
			struct place p = {.c = c, .a = c->alts[i]};
			place_alternative(&p);
			changed |= p.changed;
		}
		/* the cost's second choice */
		for (unsigned i = 0; !changed && i < c->nalts; i++) {
			struct alt_ctx *a = c->alts[i];
			if (!in_kernel(&a->all_kernel) && !touches_reader_map(c, a->block) && !needs_reader(a->block) &&
			    !needs_reader(a->pred)) {
				a->all_kernel = (struct placed){c->opts->no_trace ? "it touches no map of the reader's"
								: "it touches no map of the reader's: it writes its "
								  "records itself", a->loc};
				changed = true;
			}
		}
	} while (changed);
}

/* The hit record of a split alternative: a field per capture. */
static void hit_event(struct compiler *c, struct alt_ctx *a)
{
	struct ut_program *prog = c->prog;
	prog->events = xrealloc_array(prog->events, prog->nevents + 1, sizeof(*prog->events));
	a->hit_event = (int)prog->nevents;
	struct ut_event *ev = &prog->events[prog->nevents++];
	*ev = (struct ut_event){.op = UT_EV_HIT, .loc = a->loc, .group = -1, .flow = -1, .category = xstrdup(a->spec),
				.nfields = a->ncaptures};
	ev->fields = xcalloc(a->ncaptures + 1, sizeof(*ev->fields));
	uint32_t off = 24;   /* struct ut_rec_hdr */
	for (unsigned i = 0; i < a->ncaptures; i++) {
		const struct type *t = &a->captures[i]->type;
		enum ut_field_type type = t->kind == T_STR ? UT_F_STR : t->kind == T_PTR ? UT_F_PTR
					  : t->is_signed ? UT_F_S64 : UT_F_U64;
		uint32_t size = type == UT_F_STR ? t->size : 8;
		ev->fields[i] = (struct ut_field){.type = type, .offset = off, .size = size};
		off += (size + 7) & ~7u;
	}
	ev->size = off;
	/* its record is the stage's only one: the reader writes the rest */
	a->stage = (struct stage){.bytes = off, .record_max = off};
	for (unsigned i = 0; i < a->nlocals; i++) {
		struct local *l = &a->locals[i];
		if (in_kernel(&l->kernel))
			continue;
		l->slot = ev->nlocals++;
		ev->locals = xrealloc_array(ev->locals, ev->nlocals, sizeof(*ev->locals));
		ev->locals[l->slot] = (struct ut_ulocal){.is_str = l->type.kind == T_STR,
							 .size = l->type.kind == T_STR ? l->type.size : 8};
	}
}

/* Flow kinds with points the reader emits (all the records of split
 * alternatives): it samples them all, kernel points too
 * (runtime/user_side.c), and the kernel samples none. */
static enum walk_next mark_reader_flow(struct node *n, void *ctx)
{
	struct compiler *c = ctx;
	if (n->event >= 0 && c->prog->events[n->event].flow >= 0)
		c->flow_in_reader[c->prog->events[n->event].flow] = true;
	return WALK_INTO;
}

/* Maps and locals that hold tuples stay in the kernel: the reader does not
 * evaluate tuples. */
static void tuples_in_kernel(struct compiler *c)
{
	static const char why[] = "it holds tuples, which the reader does not evaluate";
	for (unsigned m = 0; m < c->nmaps; m++) {
		struct map_info *mi = &c->maps[m];
		bool tuple = mi->value_type.kind == T_TUPLE;
		for (unsigned k = 0; k < mi->nkeys; k++)
			tuple |= mi->key_types[k].kind == T_TUPLE;
		if (tuple)
			mi->kernel = (struct placed){why, mi->loc};
	}
	for (unsigned i = 0; i < c->nalts; i++)
		for (unsigned l = 0; l < c->alts[i]->nlocals; l++)
			if (c->alts[i]->locals[l].type.kind == T_TUPLE)
				c->alts[i]->locals[l].kernel = (struct placed){why, c->alts[i]->locals[l].loc};
}

/* The kernel's value maps its code reads, of integers under one or two
 * integer keys, have their reads remembered per CPU until the next write
 * (bpf/ut.h, ut_memo_read): a look-up costs 30-40 ns a hit, and such
 * maps are mostly filters, written when what is traced changes.  A map
 * written at every hit turns its remembering off (bpf/ut.h, UT_MEMO_OFF).
 * A cached map in the kernel has its slots in front of its hash instead
 * (bpf/ut.h, ut_front_read): its keys come and go at every hit. */
static void remembered_reads(struct compiler *c)
{
	unsigned slots = 0;
	for (unsigned m = 0; m < c->nmaps; m++) {
		struct map_info *mi = &c->maps[m];
		mi->front = mi->cached && in_kernel(&mi->kernel) && mi->storage == MAP_SHARED_HASH;
		bool scalar_keys = mi->nkeys >= 1 && mi->nkeys <= 2;
		for (unsigned k = 0; k < mi->nkeys; k++)
			scalar_keys &= mi->key_types[k].kind == T_INT || mi->key_types[k].kind == T_PTR;
		bool scalar = mi->value_type.kind == T_INT || mi->value_type.kind == T_PTR;
		mi->memo = -1;
		if (in_kernel(&mi->kernel) && !mi->front && mi->read_in_bpf && mi->kind == MAP_VALUE &&
		    mi->storage == MAP_SHARED_HASH && scalar && scalar_keys && slots < MEMO_MAPS_MAX)
			mi->memo = (int)slots++;
	}
	c->memo_maps = slots;
}

/* What the reader alone computes, where the kernel would have to: an
 * error, with why. */
static void reader_only_errors(struct compiler *c)
{
	for (unsigned i = 0; i < c->nalts; i++) {
		const struct alt_ctx *a = c->alts[i];
		if (!a->reader_only.why)
			continue;
		/* a probe the kernel runs whole: that is why */
		const struct placed *why = in_kernel(&a->all_kernel) ? &a->all_kernel : &a->reader_only;
		char where[PATH_MAX + 64] = "";
		if (why->at.line != a->reader_only_at.line || why->at.col != a->reader_only_at.col)
			snprintf(where, sizeof(where), " (%s:%d:%d)", why->at.file, why->at.line, why->at.col);
		const char *whole = why == &a->all_kernel ? "this probe runs in the kernel whole: " : "";
		const char *what = a->reader_only_what;
		if (what[0] == '$')   /* an entry of the loop */
			diag_error(c->d, a->reader_only_at, "a for loop over a map runs in the reader, over the map's entries, "
				   "but here the kernel would need %s: %s%s%s", what, whole, why->why, where);
		else if (strcmp(what, "for") == 0)
			diag_error(c->d, a->reader_only_at, "a for loop over a map runs in the reader, over the map's entries, "
				   "but here the kernel would run it: %s%s%s", whole, why->why, where);
		else
			diag_error(c->d, a->reader_only_at, "%s() is computed by the reader, from its map's entries, but "
				   "here the kernel needs its value: %s%s%s", a->reader_only_what, whole, why->why, where);
	}
}

void placement(struct compiler *c)
{
	if (c->opts->all_in_kernel) {
		/* every map and every probe attached in the kernel; BEGIN and END,
		 * run once by uring-trace, keep what needs the reader (a loop
		 * over a map, a finding made from one) */
		for (unsigned m = 0; m < c->nmaps; m++)
			c->maps[m].kernel = (struct placed){"--all-in-kernel", c->maps[m].loc};
		for (unsigned i = 0; i < c->nalts; i++)
			if (c->alts[i]->def->runs == PROBE_ATTACHED)
				c->alts[i]->all_kernel = (struct placed){"--all-in-kernel", c->alts[i]->loc};
	} else {
		maps_of_silent_probes(c);
		tuples_in_kernel(c);
	}
	for (;;) {
		settle(c);
		bool changed = false;
		for (unsigned i = 0; i < c->nalts; i++) {
			struct place p = {.c = c, .a = c->alts[i], .final = true};
			place_alternative(&p);
			if (!in_kernel(&p.a->all_kernel))
				check_reader_bounds(&p);
			changed |= p.changed;
		}
		if (!changed)
			break;
	}
	dead_maps_to_reader(c);
	c->max_stage_bytes = 0;
	for (unsigned i = 0; i < c->nalts; i++) {
		struct alt_ctx *a = c->alts[i];
		if (!in_kernel(&a->all_kernel))
			hit_event(c, a);
		if (stage_buffer_bytes(&a->stage) > c->max_stage_bytes)
			c->max_stage_bytes = stage_buffer_bytes(&a->stage);
	}
	for (unsigned m = 0; m < c->nmaps; m++) {
		struct ut_map *out = &c->prog->maps[m];
		if (in_kernel(&c->maps[m].kernel))
			continue;
		out->user_side = true;
		free(out->bpf_name);
		out->bpf_name = NULL;
	}
	remembered_reads(c);
	reader_only_errors(c);
	c->flow_in_reader = xcalloc(c->prog->nflows + 1, sizeof(bool));
	for (unsigned i = 0; i < c->nalts; i++)
		if (c->alts[i]->hit_event >= 0)
			walk_list(c->alts[i]->block, &(struct walker){.expansions = true, .pre = mark_reader_flow, .ctx = c});
}

void placement_report(const struct compiler *c, FILE *out)
{
	unsigned split = 0;
	for (unsigned i = 0; i < c->nalts; i++)
		split += c->alts[i]->hit_event >= 0;
	if (c->opts->no_trace)
		fprintf(out, "uring-trace: placement: no trace (--summary-only): %u trace statements compiled out, %u "
			"writes of maps nothing reads then, %u probes left out (they only drew)\n", c->compiled_out,
			c->dead_writes, c->probes_idle);
	fprintf(out, "uring-trace: placement: %u of %u probe alternatives send the reader their hits (--dump "
		"placement tells what runs where, and why)\n", split, c->nalts);
	for (int kernel = 0; kernel < 2; kernel++) {
		unsigned n = 0;
		for (unsigned m = 0; m < c->nmaps; m++) {
			const struct map_info *mi = &c->maps[m];
			if (in_kernel(&mi->kernel) != kernel)
				continue;
			fprintf(out, n++ ? ", " : "uring-trace: placement: the %s keeps ", kernel ? "kernel" : "reader");
			fprintf(out, "%s", mi->name);
			if (kernel)
				fprintf(out, " (%s, %s:%d:%d)", mi->kernel.why, mi->kernel.at.file, mi->kernel.at.line,
					mi->kernel.at.col);
		}
		if (n)
			fputc('\n', out);
	}
}
