/* Generation of statements and of one alternative's BPF program: its
 * section and signature, the predicate, the statements, and the records
 * they stage for the hit's sample. */
#include <stdlib.h>
#include <string.h>

#include "compiler/gen.h"

static void gen_stmt(struct gen *g, struct node *n);
static bool reserve_before(const struct gen *g, const struct node *n, const struct node *rest);
static void open_hit(struct gen *g);

static void gen_stmts(struct gen *g, struct node *list)
{
	for (; list; list = list->next) {
		if (reserve_before(g, list, list->next))
			open_hit(g);
		gen_stmt(g, list);
	}
}

/* ---- shedding (bpf/ut.h, ut_shed_end) ---- */

/* The flow or span point n, whose key's C is key: a begin follows the
 * hit's decision, a step or an end drops the hit when its flow was shed.
 * The hit's records go or not at its end (gen_body).  Not in a loop: the
 * verifier would follow its look-ups at every turn (the default script's
 * reaps, all in the kernel, passed its million instructions), and a
 * loop's points (CQEs reaped) are not a request's own. */
static void shed_point(struct gen *g, const struct node *n, const char *key)
{
	if (g->loops)
		return;
	int kind = g->c->prog->events[n->event].flow;
	if (n->op == OP_BEGIN)
		emit(g, "ut_shed_begin(&ut_shed, %d, %s);", kind, key);
	else
		emit(g, "ut_shed_point(&ut_shed, %d, %s, %d);", kind, key, n->op == OP_END);
	g->sheds = true;
}

/* The key of a flow or span point, or NULL. */
static struct node *point_key(const struct node *n)
{
	return n->kind == N_FLOW ? keyref_key(n->a) : n->kind == N_SPAN ? keyref_key(n->b) : NULL;
}

/* A point the reader makes whose key the kernel captured for it (one of
 * the reader's values cannot be looked at): the hit may be shed by it,
 * whether or not the reader's conditions take it there. */
static enum walk_next reader_point(struct node *n, void *ctx)
{
	struct gen *g = ctx;
	struct node *key = point_key(n);
	if (n->kind == N_FOR)   /* its points are not a request's own (shed_point) */
		return WALK_PAST;
	if (!key || key->capture < 0)
		return WALK_INTO;
	char *cx = xasprintf("ut_hit->f%d", key->capture);
	emit(g, "if (ut_hit) {");
	g->indent++;
	shed_point(g, n, cx);
	g->indent--;
	emit(g, "}");
	free(cx);
	return WALK_PAST;
}

/* ---- records ---- */

/* A record being filled: the C of each field's value, in field order
 * (record_fields, the order resources.c laid them out in), and statements
 * that fill the fields after those (join()'s strings, read straight into
 * the record). */
struct record {
	struct gen *g;
	const struct node *n;
	const struct ut_event *ev;
	unsigned nvalues;
	char **values;
	char *guard;   /* a flow or span key's sampling (ut_flow_sampled), or NULL */
	bool begin;    /* a flow's begin: it draws the sampling decision */
	struct strbuf fill;
};

/* A field's value.  A flow or span key is evaluated once into a
 * temporary, stored in the record and, unless the reader samples its kind
 * (placement.c), sampled on: --sample keeps whole flows, the decision is
 * taken at the flow's begin and remembered. */
static void record_field(void *ctx, struct node *value, bool key)
{
	struct record *r = ctx;
	struct gen *g = r->g;
	char *cx = gen_expr(g, value);
	if (key) {
		char *tmp = new_tmp(g);
		emit(g, "__u64 %s = (__u64)(%s);", tmp, cx);
		free(cx);
		cx = tmp;
		shed_point(g, r->n, tmp);
		if (!g->c->flow_in_reader[r->ev->flow])
			r->guard = xasprintf("if (ut_flow_sampled(%d, %s, %d)) ", r->ev->flow, tmp, r->begin);
	}
	r->values = xrealloc_array(r->values, r->nvalues + 1, sizeof(char *));
	r->values[r->nvalues++] = cx;
}

/* The C struct of an event's record, with the fields of its layout. */
static void record_struct(struct gen *g, int event)
{
	const struct ut_event *ev = &g->c->prog->events[event];
	struct strbuf *types = &g->parts->types;
	sb_printf(types, "struct ut_rec_%d {\n\tstruct ut_rec_hdr h;\n", event);
	for (unsigned i = 0; i < ev->nfields; i++) {
		if (ev->fields[i].type == UT_F_STR)
			sb_printf(types, "\tchar f%u[%u];\n", i, (ev->fields[i].size + 7) & ~7u);
		else
			sb_printf(types, "\t%s f%u;\n", ev->fields[i].type == UT_F_S64 ? "__s64" : "__u64", i);
	}
	sb_printf(types, "} __attribute__((aligned(8)));\n");
	sb_printf(types, "_Static_assert(sizeof(struct ut_rec_%d) == %u, \"record layout\");\n\n", event, ev->size);
}

/* Stores the C value cx in field i (f) of the record r points to. */
static void store_field(struct gen *g, const char *r, const struct ut_field *f, unsigned i, const char *cx)
{
	uint32_t padded = (f->size + 7) & ~7u;
	if (f->type == UT_F_STR)
		emit(g, "__builtin_memcpy(%s->f%u, %s, sizeof(%s) < %u ? sizeof(%s) : %u);", r, i, cx, cx, padded, cx,
		     padded);
	else
		emit(g, "%s->f%u = (%s)(%s);", r, i, f->type == UT_F_S64 ? "__s64" : "__u64", cx);
}

/* When the stage has no room for `bytes` more: sends what it holds as one
 * sample, and fills it again (in and after for loops, whose records may
 * not all fit).  The same slot: no new look-up, and a state the verifier
 * can match with the path that did not send. */
static void stage_send(struct gen *g, uint32_t bytes)
{
	emit(g, "if (ut_batch && ut_off > ut_batch_cap - %uU) {", bytes);
	emit(g, "\tut_send(ut_batch, ut_off, 1, %u);", g->alt->probe_index);
	emit(g, "\tut_off = 0;");
	emit(g, "}");
}

/* The record of statement n (a trace statement or a call that writes
 * one): its values, its struct, and the code that fills it in the stage. */
static void gen_record(struct gen *g, struct node *n)
{
	struct record r = {.g = g, .n = n, .ev = &g->c->prog->events[n->event],
			   .begin = n->kind == N_FLOW && n->op == OP_BEGIN};
	record_fields(n, record_field, &r);
	const struct statement_def *st = statement_of(n);
	if (st && st->fill)
		st->fill(g, &r.fill, n);
	record_struct(g, n->event);
	if (n->stage_full)
		stage_send(g, r.ev->size);
	emit(g, "%sif (ut_batch && ut_off <= ut_batch_cap - sizeof(struct ut_rec_%d)) {", r.guard ? r.guard : "",
	     n->event);
	g->indent++;
	emit(g, "struct ut_rec_%d *r = (void *)(ut_batch + ut_off);", n->event);
	emit(g, "ut_header(&r->h, %d, ut_now, ut_id);", n->event);
	for (unsigned i = 0; i < r.nvalues; i++) {
		store_field(g, "r", &r.ev->fields[i], i, r.values[i]);
		free(r.values[i]);
	}
	sb_puts(g->out, r.fill.s ? r.fill.s : "");
	sb_free(&r.fill);
	emit(g, "ut_off += sizeof(*r);");
	g->indent--;
	emit(g, "}");
	free(r.values);
	free(r.guard);
}

/* ---- the values the kernel captures for the reader (placement.c) ---- */

/* Stores cx, the C value of expression n, in n's field of the hit's record. */
static void store_capture(struct gen *g, const struct node *n, const char *cx)
{
	const struct ut_event *hit = &g->c->prog->events[g->alt->hit_event];
	emit(g, "if (ut_hit) {");
	g->indent++;
	store_field(g, "ut_hit", &hit->fields[n->capture], (unsigned)n->capture, cx);
	g->indent--;
	emit(g, "}");
}

static void gen_capture(struct gen *g, struct node *n)
{
	char *cx = gen_expr(g, n);
	store_capture(g, n, cx);
	free(cx);
}

static enum walk_next capture_here(struct node *n, void *ctx)
{
	struct gen *g = ctx;
	if (n->capture < 0)
		return WALK_INTO;
	if (g->alt->captured[n->capture] == CAPTURED_HERE)   /* the others: gen_body, gen_local_assign */
		gen_capture(g, n);
	return WALK_PAST;
}

/* The captures of an expression, or of a statement's expressions. */
static void gen_captures_in(struct gen *g, struct node *n)
{
	walk_tree(n, &(struct walker){.expansions = true, .pre = capture_here, .ctx = g});
}

/* ---- the hit's record (a split alternative's) ---- */

/* Whether statement n needs the hit's record: the reader's work, or
 * values captured for it.  A kernel local's copy does not: it is written
 * as the local is when the record is reserved (open_hit). */
static bool needs_hit(const struct node *n)
{
	return (n->side & (PLACE_READER | PLACE_CAPTURES)) != 0;
}

/* Whether the record is reserved right before statement n (rest: the
 * statements after it in its list): n is the first to need it, and is not
 * an if or block of the kernel's that is the last to need it.  Into that
 * one the reservation goes down, past the kernel's conditions, so that a
 * hit they leave no work for the reader costs no record (nor the clock's
 * read).  Only into the last: once one branch may have reserved it, no
 * statement after may need it. */
static bool reserve_before(const struct gen *g, const struct node *n, const struct node *rest)
{
	if (!g->hit_pending || !needs_hit(n))
		return false;
	if (!(n->side & PLACE_KERNEL) ||
	    !(n->kind == N_IF || n->kind == N_BLOCK || (n->kind == N_EXPR_STMT && calls_function(stmt_call(n)))))
		return true;
	for (; rest; rest = rest->next)
		if (needs_hit(rest))
			return true;
	return false;
}

/* Whether statements list hold kernel work: more than ifs the kernel
 * keeps only to decide whether the reader has work (placement.c). */
static bool kernel_work_in(const struct node *list)
{
	for (const struct node *n = list; n; n = n->next) {
		if (!(n->side & PLACE_KERNEL))
			continue;
		bool macro = n->kind == N_EXPR_STMT && calls_function(stmt_call(n));
		if (n->kind == N_IF ? kernel_work_in(n->b) || kernel_work_in(n->c)
		    : n->kind == N_BLOCK ? kernel_work_in(n->a)
		    : macro ? kernel_work_in(stmt_call(n)->resolved) : true)
			return true;
	}
	return false;
}

/* Whether the kernel has nothing to do in if n: it decides only whether
 * the reader has work, and that is noted already. */
static bool decided_already(const struct gen *g, const struct node *n)
{
	return g->alt->hit_event >= 0 && !g->hit_pending && g->noted && !(n->side & PLACE_CAPTURES) &&
	       !kernel_work_in(n->b) && !kernel_work_in(n->c);
}

/* The value of capture i waiting for the record (a condition's), or NULL. */
static const char *pending_value(const struct gen *g, int i)
{
	for (unsigned k = 0; k < g->npending; k++)
		if (g->pending[k].capture == i)
			return g->pending[k].value;
	return NULL;
}

/* Reserves the hit's record here: its header, the values captured once
 * (the same all through the hit: CAPTURED_FIRST), the copies of kernel
 * locals as the locals are now, the conditions captured on the way here;
 * the other fields zeroed.  Its bytes are sent only if the reader has
 * work (reader_work): the reservation is where the path may need them. */
static void open_hit(struct gen *g)
{
	struct alt_ctx *a = g->alt;
	const struct ut_event *hit = &g->c->prog->events[a->hit_event];
	if (g->sunk && !g->now_at_top)   /* inside the kernel's conditions: read only for a record */
		emit(g, "const __u64 ut_now = bpf_ktime_get_ns();");
	else
		g->now_at_top = true;
	emit(g, "ut_batch = ut_batch_begin(%u, ut_now, &ut_id);", a->probe_index);
	emit(g, "ut_hit = (void *)ut_batch;");
	emit(g, "if (ut_hit) {");
	g->indent++;
	emit(g, "ut_header(&ut_hit->h, %d, ut_now, ut_id);", a->hit_event);
	for (unsigned i = 0; i < a->ncaptures; i++) {
		const char *pending = pending_value(g, (int)i);
		char *value = NULL;
		if (pending)
			value = xstrdup(pending);
		else if (a->captured[i] == CAPTURED_FIRST)
			value = gen_expr(g, a->captures[i]);
		else if (a->captured[i] == CAPTURED_AT_SET)
			value = xasprintf("l_%s", a->locals[a->captures[i]->sym].name + 1);
		if (value)
			store_field(g, "ut_hit", &hit->fields[i], i, value);
		else
			emit(g, "__builtin_memset(&ut_hit->f%u, 0, sizeof(ut_hit->f%u));", i, i);
		free(value);
	}
	g->indent--;
	emit(g, "}");
	g->hit_pending = false;
}

/* The reader has work in this hit: its record is sent (ut_batch_end sends
 * ut_off bytes).  A hit whose reader statements all lie in branches the
 * kernel did not take sends nothing. */
static void reader_work(struct gen *g)
{
	if (g->in_reader || g->noted)
		return;
	emit(g, "ut_off = sizeof(*ut_hit);");
	g->noted = true;
}

/* ---- statements ---- */

void gen_memo_written(struct gen *g, int map)
{
	if (g->c->maps[map].memo >= 0)
		emit(g, "ut_memo_written(%d);", g->c->maps[map].memo);
}

static void gen_call_stmt(struct gen *g, struct node *e)
{
	if (e->ref == REF_MACRO) {   /* a statement function */
		gen_stmt(g, e->resolved);
		return;
	}
	const struct statement_def *st = statement_of(e);
	if (st->gen)
		st->gen(g, e);
	else
		gen_record(g, e);
}

/* @m[k] = agg(v): the aggregation's kernel helper takes v, or 1 into the
 * key of v's bucket. */
static void gen_aggregation(struct gen *g, struct node *n)
{
	int idx = n->a->sym;
	const struct map_info *m = &g->c->maps[idx];
	const struct ut_agg_kind *kind = &ut_aggs[m->agg];
	struct node *args[4];
	collect_args(agg_args(n), args, 4);
	char *v = kind->nargs ? gen_expr(g, args[0]) : xstrdup("1");
	char *k = gen_map_key(g, idx, n->a);
	if (kind->bpf_bucket && kind->nargs > 1) {
		char *lo = c_int64(m->lhist_min), *hi = c_int64(m->lhist_max), *step = c_int64(m->lhist_step);
		emit(g, "%s.bucket = %s((__s64)(%s), %s, %s, %s);", k, kind->bpf_bucket, v, lo, hi, step);
		free(lo);
		free(hi);
		free(step);
	} else if (kind->bpf_bucket)
		emit(g, "%s.bucket = %s((__s64)(%s));", k, kind->bpf_bucket, v);
	if (kind->bpf_bucket)
		emit(g, "%s(&m_%d, &%s, 1);", kind->bpf_take, idx, k);
	else
		emit(g, "%s(&m_%d, &%s, (__s64)(%s));", kind->bpf_take, idx, k, v);
	free(k);
	free(v);
}

static void gen_map_assign(struct gen *g, struct node *n)
{
	int idx = n->a->sym;
	if (g->c->maps[idx].kind == MAP_AGG) {
		gen_aggregation(g, n);
		return;
	}
	char *v = gen_expr(g, n->b);
	char *k = gen_map_key(g, idx, n->a);
	const struct call_def *call = call_of(n->b);
	if (n->b->type.kind == T_TUPLE) {
		int tuple = g->c->maps[idx].value_type.tuple;
		emit(g, "struct ut_tuple_%d val = {};", tuple);
		gen_tuple_copy(g, "val", tuple, v, n->b->type.tuple);
		emit(g, "bpf_map_update_elem(&m_%d, &%s, &val, BPF_ANY);", idx, k);
	} else if (n->b->type.kind == T_STR && call && call->map_memory) {
		emit(g, "bpf_map_update_elem(&m_%d, &%s, %s, BPF_ANY);", idx, k, v);
	} else if (n->b->type.kind == T_STR) {
		/* staged in a per-CPU buffer: a second copy of the string on the
		 * stack is what overflows it */
		emit(g, "{ struct ut_path_buf *val = ut_value_buf();");
		emit(g, "  if (val) { __builtin_memcpy(val->s, %s, sizeof(val->s) < sizeof(%s) ? sizeof(val->s) : sizeof(%s));", v, v, v);
		emit(g, "    bpf_map_update_elem(&m_%d, &%s, val, BPF_ANY); } }", idx, k);
	} else if (n->op == '=' && g->c->maps[idx].front) {
		emit(g, "ut_front_write_%d(%s.k0, (__u64)(%s));", idx, k, v);
	} else if (n->op == '=') {
		emit(g, "{ __u64 val = (__u64)(%s); bpf_map_update_elem(&m_%d, &%s, &val, BPF_ANY); }", v, idx, k);
	} else if (g->c->maps[idx].front) {
		emit(g, "ut_added_%u = ut_front_add_%d(%s.k0, %s(__s64)(%s));", n->reuse_var, idx, k, n->op == '-' ? "-" : "",
		     v);
	} else {
		/* its value is ut_added_<n>, which a read after it may take (reuse.c) */
		emit(g, "ut_added_%u = ut_shared_add(&m_%d, &%s, %s(__s64)(%s));", n->reuse_var, idx, k,
		     n->op == '-' ? "-" : "", v);
	}
	gen_memo_written(g, idx);
	free(k);
	free(v);
}

static void gen_local_assign(struct gen *g, struct node *n)
{
	char *v = gen_expr(g, n->a);
	const char *l = n->str + 1;
	if (n->a->type.kind == T_TUPLE) {
		char *dst = xasprintf("l_%s", l);
		gen_tuple_copy(g, dst, g->alt->locals[n->sym].type.tuple, v, n->a->type.tuple);
		free(dst);
	} else if (n->a->type.kind == T_STR)
		emit(g, "__builtin_memcpy(l_%s, %s, sizeof(%s) < sizeof(l_%s) ? sizeof(%s) : sizeof(l_%s));", l, v, v, l,
		     v, l);
	else if (n->a->type.kind == T_PTR)
		emit(g, "l_%s = (void *)(%s);", l, v);
	else
		emit(g, "l_%s = %s;", l, v);
	free(v);
	const struct local *local = &g->alt->locals[n->sym];
	if (g->alt->hit_event >= 0 && local->mirror >= 0 && !g->hit_pending) {   /* the reader's copy */
		char *cx = xasprintf("l_%s", l);
		store_capture(g, g->alt->captures[local->mirror], cx);
		free(cx);
	}
}

/* Whether this program's loops also ask the numbers iterator for their
 * turns (bpf/ut.h, UT_ITER_LOOPS): its type is in the compiling kernel's
 * vmlinux.h.  The running kernel decides at load whether they do. */
static bool iter_loops(struct gen *g)
{
	if (g->c->opts->portable)   /* a .uto: plain loops, for every kernel */
		return false;
	if (!g->c->uses_iter_loops)
		g->c->uses_iter_loops = ut_kernel_struct(g->c->k, "bpf_iter_num") > 0;
	return g->c->uses_iter_loops;
}

/* A C loop with the folded bounds, whose turns the numbers iterator gives
 * where the kernel has it (bpf/ut.h, ut_iter_loops), each loop its own
 * (ut_iter_<depth>, in braces of the loop's).  Its body is written first:
 * the loop's head depends on the records it stages. */
static void gen_for(struct gen *g, struct node *n)
{
	const char *var = n->str + 1;
	/* (the iterator counts in ints: a loop with a bound beyond them stays plain) */
	bool iter = n->a->num >= INT32_MIN && n->b->num <= INT32_MAX && iter_loops(g);
	unsigned depth = g->iters;
	struct strbuf body = {0}, *out = g->out;
	g->out = &body;
	g->indent += 1 + iter;
	g->loops++;
	g->iters += iter;
	gen_stmts(g, for_body(n));
	g->iters -= iter;
	g->loops--;
	g->indent -= 1 + iter;
	g->out = out;
	char *from = c_int64(n->a->num), *to = c_int64(n->b->num);
	if (iter) {
		emit(g, "{");
		g->indent++;
		emit(g, "struct bpf_iter_num ut_iter_%u;", depth);
		emit(g, "if (ut_iter_loops)");
		emit(g, "\tbpf_iter_num_new(&ut_iter_%u, %s, %s);", depth, from, to);
	}
	emit(g, "for (l_%s = %s; l_%s < %s; l_%s++) {", var, from, var, to, var);
	if (iter) {
		/* the turn's number is the iterator's, which the verifier does
		 * not know: the loop's test against the bound decides nothing
		 * it would track.  Asked for in the body, not in the loop's
		 * test: there clang put the call right before the loop's head,
		 * and 5.10 and 6.1 refuse a loop whose back-edge is a call's
		 * fallthrough */
		emit(g, "\tif (ut_iter_loops && !ut_iter_next(&ut_iter_%u, &l_%s))", depth, var);
		emit(g, "\t\tbreak;");
	}
	free(from);
	free(to);
	if (n->stage_bytes) {
		/* The verifier follows ut_off's exact value on every path, and
		 * paths that staged different records never merge: their number
		 * grows with every iteration (24 iterations with one record under
		 * an if passed its million instructions).  Passed through the
		 * stage's memory (just past ut_batch_cap), ut_off is only a number
		 * below ut_off_mask, and each iteration's paths merge.  The
		 * stage has room for any record at any offset up to the mask:
		 * the checks against ut_batch_cap are made on copies the
		 * verifier may not link to the offset it adds (6.1 loses them). */
		g->indent++;
		emit(g, "if (ut_batch) {");
		emit(g, "\t*(volatile __u32 *)(ut_batch + ut_batch_cap) = ut_off;");
		emit(g, "\tut_off = *(volatile __u32 *)(ut_batch + ut_batch_cap) & ut_off_mask;");
		emit(g, "}");
		if (n->stage_full)
			stage_send(g, n->stage_bytes);
		g->indent--;
	}
	sb_puts(out, body.s ? body.s : "");
	sb_free(&body);
	emit(g, "}");
	if (iter) {
		emit(g, "if (ut_iter_loops)");
		emit(g, "\tbpf_iter_num_destroy(&ut_iter_%u);", depth);
		g->indent--;
		emit(g, "}");
	}
}

/* A return: the iterators of the loops around it are let go first (the
 * verifier refuses a program that leaves one), then the records so far
 * still go out. */
static void gen_return(struct gen *g)
{
	if (g->iters) {
		emit(g, "if (ut_iter_loops) {");
		for (unsigned d = g->iters; d-- > 0;)
			emit(g, "\tbpf_iter_num_destroy(&ut_iter_%u);", d);
		emit(g, "}");
	}
	emit(g, "goto ut_done;");
	g->returns = true;
}

/* A statement in braces of its own: its temporaries' scope. */
static void gen_braced(struct gen *g, struct node *n, void (*gen_inside)(struct gen *, struct node *))
{
	emit(g, "{");
	g->indent++;
	gen_inside(g, n);
	g->indent--;
	emit(g, "}");
}

/* A branch of an if: a statement, in braces of its own where it is the
 * reader's (the kernel notes its work and captures values for it,
 * placement.c) or reserves the hit's record. */
static void gen_branch(struct gen *g, struct node *n)
{
	bool reserves = reserve_before(g, n, NULL);
	if (g->alt->hit_event < 0 || ((n->side & PLACE_KERNEL) && !reserves)) {
		gen_stmt(g, n);
		return;
	}
	bool pending = g->hit_pending;
	emit(g, "{");
	g->indent++;
	if (reserves)
		open_hit(g);
	gen_stmt(g, n);
	g->indent--;
	emit(g, "}");
	g->hit_pending = pending;   /* reserved in this branch only */
}

static void gen_if(struct gen *g, struct node *n)
{
	/* a condition known when compiling (a script flag's constant): the
	 * branch taken alone, as placement walked it; the other may use maps
	 * only dead code touches, which are not BPF maps (placement.c,
	 * dead_maps_to_reader) */
	int64_t v;
	if (cond_folds(g->c, n->a, &v)) {
		struct node *taken = v ? n->b : n->c;
		if (taken) {
			emit(g, "if (1)");
			bool noted = g->noted;
			gen_branch(g, taken);
			g->noted = noted;
		}
		return;
	}
	char *cond = gen_expr(g, n->a);
	bool waits = false;
	if (n->a->capture >= 0) {   /* the reader decides by the kernel's answer */
		char *t = new_tmp(g);
		emit(g, "__u64 %s = (__u64)(%s);", t, cond);
		free(cond);
		cond = t;
		waits = g->hit_pending;   /* written when a branch reserves the record */
		if (waits) {
			g->pending = xrealloc_array(g->pending, g->npending + 1, sizeof(*g->pending));
			g->pending[g->npending++] = (struct pending_capture){n->a->capture, xstrdup(t)};
		} else {
			store_capture(g, n->a, t);
		}
	}
	emit(g, "if (%s)", cond);
	free(cond);
	bool noted = g->noted;   /* the reader's work noted in a branch is not after the if */
	gen_branch(g, n->b);
	g->noted = noted;
	if (n->c) {
		emit(g, "else");
		gen_branch(g, n->c);
		g->noted = noted;
	}
	if (waits)
		free(g->pending[--g->npending].value);
}

static void gen_block(struct gen *g, struct node *n) { gen_stmts(g, n->a); }
static void gen_call_stmt_of(struct gen *g, struct node *n) { gen_call_stmt(g, n->a); }

static void gen_stmt_at(struct gen *g, struct node *n);

static void gen_stmt(struct gen *g, struct node *n)
{
	if (g->too_deep_at)   /* its C is not used: the driver reports it */
		return;
	const struct node *outer = g->at;
	g->at = n;
	bool sinks = g->hit_pending && needs_hit(n);   /* the record's reservation goes down into n */
	g->sunk += sinks;
	gen_stmt_at(g, n);
	g->sunk -= sinks;
	if (sinks)   /* reserved in n's scope, or not: no statement after needs it (reserve_before) */
		g->hit_pending = true;
	g->at = outer;
}

/* A statement of the reader's in a split alternative: the kernel captures
 * the values it needs, in the ifs it keeps (placement.c). */
static void gen_reader_stmt(struct gen *g, struct node *n)
{
	switch (n->kind) {
	case N_BLOCK:
		gen_stmts(g, n->a);
		return;
	case N_EXPR_STMT:
		if (calls_function(stmt_call(n)))
			gen_stmt(g, stmt_call(n)->resolved);
		else
			gen_captures_in(g, n);
		return;
	case N_IF:
		gen_captures_in(g, n->a);
		gen_stmt(g, n->b);
		if (n->c)
			gen_stmt(g, n->c);
		return;
	case N_FOR: case N_FOR_MAP:   /* the same at every turn: captured once */
		g->loops++;   /* the reader's loop: its points are not looked at */
		gen_stmts(g, for_body(n));
		g->loops--;
		return;
	default:
		gen_captures_in(g, n);
		reader_point(n, g);
	}
}

static void gen_stmt_at(struct gen *g, struct node *n)
{
	if (g->alt->hit_event >= 0 && !(n->side & PLACE_KERNEL)) {
		if (n->side & PLACE_READER)
			reader_work(g);
		if (n->side & PLACE_CAPTURES) {
			bool in_reader = g->in_reader;   /* its inner statements' work is noted */
			g->in_reader = true;
			gen_braced(g, n, gen_reader_stmt);
			g->in_reader = in_reader;
		} else {   /* the kernel goes no further into it but for its points */
			walk_tree(n, &(struct walker){.expansions = true, .pre = reader_point, .ctx = g});
		}
		return;
	}
	switch (n->kind) {
	case N_BLOCK: gen_braced(g, n, gen_block); return;
	case N_EXPR_STMT: gen_braced(g, n, gen_call_stmt_of); return;
	case N_LOCAL_ASSIGN: gen_braced(g, n, gen_local_assign); return;
	case N_MAP_ASSIGN: gen_braced(g, n, gen_map_assign); return;
	case N_IF:
		if (!decided_already(g, n))
			gen_braced(g, n, gen_if);
		return;
	case N_RETURN: gen_return(g); return;
	case N_FOR: gen_for(g, n); return;
	case N_BREAK: emit(g, "break;"); return;
	case N_CONTINUE: emit(g, "continue;"); return;
	default: gen_braced(g, n, gen_record); return;   /* trace statements */
	}
}

/* ---- the program of one alternative ---- */

/* libbpf before 1.2 (Debian 12 has 1.1) stops at PT_REGS_PARM5: the sixth
 * argument's register on the architectures the generator targets. */
static const char parm6_macro[] =
	"#ifndef PT_REGS_PARM6   /* libbpf before 1.2 */\n"
	"#if defined(bpf_target_x86)\n#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->r9)\n"
	"#elif defined(bpf_target_arm64)\n#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->regs[5])\n"
	"#elif defined(bpf_target_riscv)\n#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->a5)\n"
	"#elif defined(bpf_target_s390)\n#define PT_REGS_PARM6(x) (__PT_REGS_CAST(x)->gprs[7])\n"
	"#endif\n#endif\n\n";

/* The statements' C, after the declarations the walk found they need:
 * locals, the values of adds, computed arguments, the hit's time and
 * stage. */
static void gen_body(struct gen *g, struct strbuf *fn)
{
	struct alt_ctx *a = g->alt;
	struct strbuf head = {0}, body = {0};   /* the predicate, the statements */
	g->out = &head;
	g->indent = 1;
	g->at = a->pred ? a->pred : a->block;
	if (a->pred) {
		emit(g, "{");
		g->indent++;
		char *p = gen_expr(g, a->pred);
		emit(g, "if (!(%s))", p);
		emit(g, "\treturn 0;");
		free(p);
		g->indent--;
		emit(g, "}");
	}
	g->out = &body;
	g->in_body = true;
	g->hit_pending = a->hit_event >= 0;   /* reserved where the statements first need it (open_hit) */
	gen_stmts(g, a->block->a);
	/* the hit's time first: the stage notes when its hit began */
	if (a->hit_event >= 0 ? g->now_at_top : a->stage.bytes || g->uses_now)
		sb_puts(&head, "\tconst __u64 ut_now = bpf_ktime_get_ns();\n");
	if (a->stage.bytes) {
		/* after the predicate: a hit it rejects stages nothing.  Without
		 * a buffer (nested too deep) the body still runs: its maps and
		 * aggregations stay exact, only its records are lost.  64 bits
		 * with a loop's reload: clang-14 widens a 32-bit ut_off after
		 * checking it, into a register the verifier has no bound on.
		 * The stage of a hit record is begun by open_hit. */
		if (a->hit_event < 0)   /* a hit record alone fits */
			sb_printf(&head, "\tconst __u32 ut_batch_cap __attribute__((unused)) = %u;\n"
				  "\tchar *ut_batch = ut_batch_begin(%u, ut_now, &ut_id);\n",
				  a->stage.bytes, a->probe_index);
		else
			sb_printf(&head, "\tchar *ut_batch = 0;\n"
				  "\tstruct ut_rec_%d *ut_hit __attribute__((unused)) = 0;\n", a->hit_event);
		sb_printf(&head, "\t__u%d ut_off = 0;\n", a->stage.reloads ? 64 : 32);
		if (a->stage.reloads)
			sb_printf(&head, "\tconst __u64 ut_off_mask = %#x;\n", a->stage.off_mask);
	}
	if (a->stage.bytes || g->returns)
		sb_puts(&body, "ut_done: __attribute__((unused));\n");
	if (g->sheds) {   /* the hit's points decide whether its records go (bpf/ut.h) */
		sb_puts(&head, "\tstruct ut_shed ut_shed = {};\n");
		sb_puts(&body, "\tif (ut_shed_end(&ut_shed))\n\t\tut_off = 0;\n");
	}
	if (a->stage.bytes)
		sb_printf(&body, "\tut_batch_end(ut_batch, ut_off, %u);\n", a->probe_index);
	for (unsigned i = 0; i < a->nlocals; i++) {
		if (!a->locals[i].kernel.why)   /* the reader's */
			continue;
		char *name = xasprintf("l_%s", a->locals[i].name + 1);
		char *d = c_decl(g, &a->locals[i].type, name);
		bool aggregate = a->locals[i].type.kind == T_STR || a->locals[i].type.kind == T_TUPLE;
		sb_printf(fn, "\t%s = %s;\n", d, aggregate ? "{}" : "0");
		free(d);
		free(name);
	}
	for (unsigned i = 0; i < a->nadded; i++)
		sb_printf(fn, "\t__s64 ut_added_%u __attribute__((unused)) = 0;\n", i);
	for (unsigned i = 0; i < a->npred_reads; i++)
		if (a->pred_kept[i])
			sb_printf(fn, "\t__u64 ut_pread_%u = 0;\n\t__u8 ut_pread_%u_set = 0;\n", i, i);
	sb_puts(fn, g->computed_out[0].s ? g->computed_out[0].s : "");
	sb_puts(fn, head.s ? head.s : "");
	sb_puts(fn, g->computed_out[1].s ? g->computed_out[1].s : "");
	sb_puts(fn, body.s ? body.s : "");
	sb_free(&head);
	sb_free(&body);
}

/* -p, -c and --comm filter the hits of probes that tasks hit (not
 * BEGIN, END or intervals), unless the block says unfiltered. */
static bool filters_tasks(const struct alt_ctx *a)
{
	return !a->def->unfiltered && !a->unfiltered;
}

/* Whether the script calls exit() anywhere (in the kernel or the reader). */
static bool script_exits(const struct compiler *c)
{
	for (unsigned i = 0; i < c->prog->nevents; i++)
		if (c->prog->events[i].op == UT_EV_EXIT)
			return true;
	return false;
}

void gen_alternative(struct gen_parts *parts, struct compiler *c, struct alt_ctx *a)
{
	struct gen g = {.c = c, .alt = a, .parts = parts,
			.computed_vars = xcalloc(a->ncomputed_args + 1, sizeof(char *))};
	if (a->uses_parm6 && !parts->parm6_defined) {
		sb_puts(&parts->types, parm6_macro);
		parts->parm6_defined = true;
	}
	struct strbuf fn = {0};
	sb_puts(&fn, "/* ");
	sb_c_comment(&fn, a->loc.file);
	sb_printf(&fn, ":%d:%d ", a->loc.line, a->loc.col);
	sb_c_comment(&fn, a->spec);
	sb_puts(&fn, " */\n");
	a->def->header(c, a, &fn);
	if (a->hit_event >= 0)
		record_struct(&g, a->hit_event);
	/* the filters, pid, tid and the records' headers read the task's ids
	 * once (bpf/ut.h, ut_pid_tgid) */
	sb_puts(&fn, "\t__u64 ut_id __attribute__((unused)) = 0;\n");
	/* after exit() the probes stop, as if detached: kernel maps stay as
	 * they were then (END runs after it) */
	if (a->def->runs == PROBE_ATTACHED && script_exits(c))
		sb_puts(&fn, "\tif (ut_exited())\n\t\treturn 0;\n");
	if (filters_tasks(a))
		sb_puts(&fn, "\tif (!ut_pass_filter(&ut_id))\n\t\treturn 0;\n");
	gen_body(&g, &fn);
	sb_puts(&fn, "\treturn 0;\n}\n\n");
	sb_puts(&parts->types, a->prelude.s ? a->prelude.s : "");
	sb_puts(&parts->funcs, fn.s);
	sb_free(&fn);
	a->too_deep_at = g.too_deep_at;
	free(g.pending);
	sb_free(&g.computed_out[0]);
	sb_free(&g.computed_out[1]);
	for (unsigned i = 0; i < a->ncomputed_args; i++)
		free(g.computed_vars[i]);
	free(g.computed_vars);
}
