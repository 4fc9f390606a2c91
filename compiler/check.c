/* The check pass over one alternative's body: statements, the values
 * records hold, loops and map assignments.  Expressions are in
 * check_expr.c.  It writes no C: generation (gen*.c) reads what it left
 * on the tree. */
#include <stdlib.h>
#include <string.h>

#include "compiler/check.h"

static void check_stmt(struct check *ck, struct node *n);

static void check_stmts(struct check *ck, struct node *list)
{
	for (; list; list = list->next)
		check_stmt(ck, list);
}

/* ---- records: statements that reach the trace ---- */

void check_format(struct check *ck, struct node *fmtn, struct node **args, int nargs)
{
	if (fmtn->kind != N_STR) {
		ERR(ck, fmtn, "the format must be a string literal");
		return;
	}
	int need = 0;
	struct ut_directive d;
	for (const char *p = fmtn->str; (p = ut_format_next(p, &d)); p += d.len) {
		char conv = d.conv;
		if (!((conv >= 'a' && conv <= 'z') || (conv >= 'A' && conv <= 'Z'))) {
			ERR(ck, fmtn, "a '%%' in the format starts no directive (write %%%% for a percent sign)");
			return;
		}
		if (!strchr(UT_FORMAT_CONVERSIONS, conv)) {
			ERR(ck, fmtn, "unsupported format directive '%%%c' (use %%d %%u %%x %%s %%r %%p %%c)", conv);
			return;
		}
		bool is_buf = need < nargs && args[need]->type.show == UT_SHOW_BUF;
		if (need < nargs && (conv == 'r') != is_buf) {
			if (conv == 'r')
				ERR(ck, args[need], "%%r prints buf(p, n), not %s", a_type(&args[need]->type));
			else
				ERR(ck, args[need], "buf(p, n) is printed with %%r");
			need++;
			continue;
		}
		if (conv == 'r')
			conv = 's';
		if (d.widest > UT_FORMAT_MAX_WIDTH) {
			ERR(ck, fmtn, "the width or precision of '%.*s' is too large: at most %d", (int)d.len, p,
			    UT_FORMAT_MAX_WIDTH);
			return;
		}
		if (need < nargs && conv == 's' && args[need]->type.kind != T_STR && args[need]->type.kind != T_SHOW &&
		    args[need]->type.show == UT_SHOW_PLAIN)
			ERR(ck, args[need], "%%s needs a string, but this is %s", a_type(&args[need]->type));
		if (need < nargs && conv != 's' && (args[need]->type.kind == T_STR || args[need]->type.kind == T_SHOW))
			ERR(ck, args[need], "%%%c needs a number, but this is %s", conv, a_type(&args[need]->type));
		need++;
	}
	if (need != nargs)
		ERR(ck, fmtn, "the format has %d directive%s but %d value%s follow%s", need, need == 1 ? "" : "s",
		    nargs, nargs == 1 ? "" : "s", nargs == 1 ? "s" : "");
}

int format_args(struct check *ck, struct node *call, struct node **args)
{
	int na = collect_args(call->a, args, CALL_MAX_ARGS);
	if (na > CALL_MAX_ARGS) {
		ERR(ck, call, "%s() takes a format string and up to %d values, not %d", call->str, FORMAT_MAX_VALUES,
		    na - 1);
		return -1;
	}
	if (na < 1) {
		ERR(ck, call, "%s() takes a format string and up to %d values", call->str, FORMAT_MAX_VALUES);
		return -1;
	}
	return na;
}

void check_format_values(struct check *ck, struct node **args, int na)
{
	for (int i = 1; i < na; i++)
		check_value(ck, args[i]);
	check_format(ck, args[0], args + 1, na - 1);
}

void check_value(struct check *ck, struct node *n)
{
	struct node *fn = n->kind == N_CALL ? find_decl(ck->c->fns, ck->c->nfns, n->str) : NULL;
	if (fn && fn->b->kind != N_BLOCK) {   /* a script function's value is its body's */
		if (expand_macro(ck, n, fn)) {
			check_expansion(ck, n, check_value);
			n->type = n->resolved->type;
		}
		return;
	}
	if (n->kind == N_STR) {
		n->type = t_str((int)strlen(n->str) + 1);
		return;
	}
	const struct call_def *def = n->kind == N_CALL && !fn ? call_named(n->str) : NULL;
	if (def && def->format) {
		struct node *args[CALL_MAX_ARGS];
		int na = format_args(ck, n, args);
		if (na < 0)
			return;
		check_format_values(ck, args, na);
		n->type = (struct type){.kind = T_SHOW};
		n->ref = REF_FUNCTION;
		n->sym = (int)(def - calls);
		return;
	}
	check_expr(ck, n);
	if (n->type.kind == T_SHOW)
		ERR(ck, n, "formatted text can only be a name or an argument");
	if (n->type.kind == T_TUPLE)
		ERR(ck, n, "a tuple is a map's key or value, or a local's; print a map of them with print(@m), "
		    "or its elements ($t.0)");
}

static void check_name(struct check *ck, struct node *n, const char *what)
{
	check_value(ck, n);
	if (n->type.kind == T_INT && n->type.show == UT_SHOW_PLAIN)
		ERR(ck, n, "%s names are text: use a string, fmt(), or a table lookup", what);
}

static void check_track(struct check *ck, struct node *track)
{
	if (!track)
		return;
	check_value(ck, keyref_key(track));
	if (value_form(keyref_key(track)) == VALUE_TEXT)
		ERR(ck, keyref_key(track), "a track key must be a value computed by the probe, not a literal");
}

/* A flow or span key: an integer or a pointer (--sample decides on it). */
static void check_key(struct check *ck, struct node *keyref)
{
	check_expr(ck, keyref_key(keyref));
	struct type *t = &keyref_key(keyref)->type;
	if (t->kind != T_INT && t->kind != T_PTR)
		ERR(ck, keyref_key(keyref), "the key of %s[...] must be an integer or a pointer, not %s", keyref->str, a_type(t));
}

void check_with(struct check *ck, struct node *with, bool counter, struct node *n)
{
	for (struct node *w = with; w; w = w->next) {
		for (struct node *o = with; o != w; o = o->next)
			if (strcmp(o->str, w->str) == 0)
				ERR(ck, w, "argument '%s' is given twice", w->str);
		check_value(ck, w->a);
	}
	for (struct node *w = with; counter && w; w = w->next)
		if (value_form(w->a) != VALUE_FIELD || (w->a->type.kind != T_INT && w->a->type.kind != T_PTR))
			ERR(ck, n, "counter values must be numbers");
}

/* The values of a scheduling record (their names: ut_sched_value_names;
 * runtime/decode.c finds them through ut_event.sched_field): thread ids and
 * states are numbers, names text; `what` tells the user what one is when
 * it is missing.  A list ends at UT_SV_COUNT. */
struct sched_value {
	enum ut_sched_value value;
	bool required, text;
	const char *what;
};
static const struct sched_value switch_values[] = {
	{UT_SV_PREV_PID, true, false, "the outgoing thread's process id, e.g. args.prev.tgid"},
	{UT_SV_PREV_TID, true, false, "the outgoing thread's id, e.g. args.prev.pid"},
	{UT_SV_PREV_STATE, true, false, "the outgoing thread's Linux state, e.g. args.prev_state"},
	{UT_SV_NEXT_PID, true, false, "the incoming thread's process id, e.g. args.next.tgid"},
	{UT_SV_NEXT_TID, true, false, "the incoming thread's id, e.g. args.next.pid"},
	{UT_SV_PREEMPT, false, false, NULL}, {UT_SV_PREV_COMM, false, true, NULL},
	{UT_SV_NEXT_COMM, false, true, NULL}, {UT_SV_CPU, false, false, NULL}, {UT_SV_COUNT, false, false, NULL},
};
static const struct sched_value wakeup_values[] = {
	{UT_SV_PID, true, false, "the woken thread's process id, e.g. args.p.tgid"},
	{UT_SV_TID, true, false, "the woken thread's id, e.g. args.p.pid"},
	{UT_SV_COMM, false, true, NULL}, {UT_SV_CPU, false, false, NULL}, {UT_SV_COUNT, false, false, NULL},
};

/* v's name; NULL at the end of a list */
static const char *value_name(const struct sched_value *v)
{
	return v->value < UT_SV_COUNT ? ut_sched_value_names[v->value] : NULL;
}

static void check_sched(struct check *ck, struct node *n)
{
	const struct sched_value *values = n->op == SCHED_SWITCH ? switch_values : wakeup_values;
	const char *what = n->op == SCHED_SWITCH ? "sched switch" : "sched wakeup";
	char *names[16];
	unsigned nnames = 0;
	struct strbuf list = {0};
	for (const struct sched_value *v = values; value_name(v); v++) {
		names[nnames++] = (char *)value_name(v);
		sb_printf(&list, "%s%s", v == values ? "" : ", ", value_name(v));
	}
	/* a misspelt name is not said again as the value missing */
	const char *suggested[16];
	unsigned nsuggested = 0;
	for (struct node *w = n->c; w; w = w->next) {
		const struct sched_value *v = values;
		while (value_name(v) && strcmp(value_name(v), w->str) != 0)
			v++;
		if (!value_name(v)) {
			const char *near = ut_suggest(w->str, names, nnames);
			if (near) {
				suggested[nsuggested++] = near;
				ERR(ck, w, "%s has no value '%s' (did you mean '%s'?)", what, w->str, near);
			} else {
				ERR(ck, w, "%s has no value '%s' (its values are %s)", what, w->str, list.s);
			}
			continue;
		}
		bool text = w->a->type.kind == T_STR;
		if (text != v->text)
			ERR(ck, w->a, "%s's %s is %s, not %s", what, value_name(v), v->text ? "text" : "a number",
			    a_type(&w->a->type));
	}
	sb_free(&list);
	for (const struct sched_value *v = values; v->required; v++) {
		struct node *w = n->c;
		while (w && strcmp(w->str, value_name(v)) != 0)
			w = w->next;
		bool misspelt = false;
		for (unsigned i = 0; i < nsuggested; i++)
			misspelt |= strcmp(suggested[i], value_name(v)) == 0;
		if (!w && !misspelt)
			ERR(ck, n, "%s needs %s = ... (%s)", what, value_name(v), v->what);
	}
}

static void check_trace(struct check *ck, struct node *n)
{
	switch (n->kind) {
	case N_SLICE:
		if (n->a)
			check_name(ck, n->a, "slice");
		check_track(ck, n->b);
		break;
	case N_INSTANT: case N_COUNTER:
		check_name(ck, n->a, n->kind == N_INSTANT ? "instant" : "counter");
		check_track(ck, n->b);
		break;
	case N_FLOW:
		check_key(ck, n->a);
		if (n->b)
			check_name(ck, n->b, "flow point");
		break;
	case N_SPAN:
		check_value(ck, keyref_key(n->a));
		check_key(ck, n->b);
		if (n->d)
			check_name(ck, n->d, "span");
		else if (n->op != OP_END)
			ERR(ck, n, "span %s needs a name", n->op == OP_BEGIN ? "begin" : "phase");
		break;
	case N_SCHED:
		break;
	default:   /* N_TRACK_NAME */
		check_track(ck, n->a);
		check_name(ck, n->b, "track");
		break;
	}
	check_with(ck, n->c, n->kind == N_COUNTER, n);
	if (n->kind == N_SCHED)
		check_sched(ck, n);
}

/* ---- maps ---- */

static void check_aggregation(struct check *ck, struct node *n, struct map_info *m, const struct ut_agg_kind *kind)
{
	struct compiler *c = ck->c;
	int idx = (int)(m - c->maps);
	enum ut_agg agg = (enum ut_agg)(kind - ut_aggs);
	if (n->op != '=') {
		ERR(ck, n, "use '=' with %s()", n->b->str);
		return;
	}
	if (m->kind == MAP_VALUE || (m->kind == MAP_AGG && m->agg != agg)) {
		ERR(ck, n, "%s is used as %s here but differently at %d:%d", m->name, n->b->str, m->loc.line, m->loc.col);
		return;
	}
	m->kind = MAP_AGG;
	m->assigned = true;
	m->agg = agg;
	struct node *args[4];
	int na = collect_args(agg_args(n), args, 4);
	int want = (int)kind->nargs;
	if (na != want) {
		ERR(ck, n->b, "%s() takes %d argument%s, not %d", n->b->str, want, want == 1 ? "" : "s", na);
		return;
	}
	if (want > 1) {   /* lhist's bounds */
		int64_t bounds[3];
		for (int i = 1; i < 4; i++)
			if (!const_int(c, args[i], &bounds[i - 1], 0)) {
				ERR(ck, args[i], "lhist()'s bounds and step must be constant integers (numbers, consts "
						 "and arithmetic on them)");
				return;
			}
		int64_t lo = bounds[0], hi = bounds[1], step = bounds[2];
		if (step <= 0 || hi <= lo || ((uint64_t)hi - (uint64_t)lo) / (uint64_t)step > 1000) {
			ERR(ck, args[3], "lhist() needs min < max and a step giving at most 1000 buckets");
			return;
		}
		m->lhist_min = lo, m->lhist_max = hi, m->lhist_step = step;
	}
	if (want) {
		check_expr(ck, args[0]);
		if (!is_int(&args[0]->type))
			ERR(ck, args[0], "%s() needs an integer, not %s", n->b->str, a_type(&args[0]->type));
	}
	check_map_key(ck, idx, n->a);
}

static void check_map_assign(struct check *ck, struct node *n)
{
	struct compiler *c = ck->c;
	struct map_info *m = map_get(ck, n->a);
	if (!m)
		return;
	const struct ut_agg_kind *kind = n->b->kind == N_CALL ? ut_agg_named(n->b->str) : NULL;
	if (kind) {
		check_aggregation(ck, n, m, kind);
		return;
	}
	if (m->kind == MAP_AGG) {
		ERR(ck, n, "%s holds %s(); it cannot also be assigned a value", m->name, ut_aggs[m->agg].name);
		return;
	}
	int idx = (int)(m - c->maps);
	check_expr(ck, n->b);
	m = &c->maps[idx];   /* the value may read maps: c->maps may have moved */
	struct type *t = &n->b->type;
	if (t->kind == T_SHOW || t->kind == T_VOID) {
		ERR(ck, n->b, "a map value must be an integer, pointer or string, not %s", type_name(t));
		return;
	}
	if (m->kind == MAP_VALUE && !m->assigned && t->kind != T_STR) {
		/* only read so far (typed as an integer provisionally): the
		 * first assignment decides */
		m->kind = MAP_UNSET;
	}
	if (m->kind == MAP_VALUE && m->value_type.kind != t->kind) {
		ERR(ck, n, "%s holds %s here but %s at %d:%d", m->name, a_type(t), a_type(&m->value_type),
		    m->loc.line, m->loc.col);
		return;
	}
	int tuple = t->kind == T_TUPLE && m->kind == MAP_VALUE ? tuple_merge(c, m->value_type.tuple, t->tuple, 0) : 0;
	if (tuple < 0) {
		ERR(ck, n, "%s holds tuples of other values at %d:%d (tuples it holds have the same number of elements, "
		    "of the same kinds)", m->name, m->loc.line, m->loc.col);
		return;
	}
	if (t->kind == T_TUPLE && m->kind == MAP_VALUE)
		m->value_type.tuple = (int16_t)tuple;
	if (n->op != '=' && t->kind != T_INT) {
		ERR(ck, n, "'+=' and '-=' need an integer");
		return;
	}
	m->assigned = true;
	if (m->kind == MAP_UNSET || (t->kind == T_STR && t->size > m->value_type.size)) {
		m->value_type = *t;
		m->value_type.direct = false;
	}
	m->kind = MAP_VALUE;
	check_map_key(ck, idx, n->a);
}

/* ---- statements ---- */

static void check_call_stmt(struct check *ck, struct node *n)
{
	struct node *e = n->a;
	if (e->kind != N_CALL) {
		ERR(ck, e, "this expression does nothing; did you mean to assign it?");
		check_expr(ck, e);
		return;
	}
	struct node *fn = find_decl(ck->c->fns, ck->c->nfns, e->str);
	if (fn && fn->b->kind == N_BLOCK) {
		if (expand_macro(ck, e, fn))
			check_expansion(ck, e, check_stmt);
		return;
	}
	const struct call_def *def = call_named(e->str);
	if (def && def->statement) {
		e->ref = REF_STATEMENT;
		e->sym = (int)(def - calls);
		def->statement->check(ck, e);
		return;
	}
	check_expr(ck, e);
	if (e->type.kind != T_VOID && !ck->c->d->errors)
		ERR(ck, e, "the value of %s() is not used", e->str);
}

/* The value of a constant integer expression: numbers, constants (-D
 * values too) and arithmetic on them.  False when it is not one, or
 * would divide by zero.  depth bounds chains of constants (a cycle is
 * reported by check_expr()). */
bool const_int(struct compiler *c, const struct node *n, int64_t *v, int depth)
{
	uint64_t x, y;
	int64_t sx, sy;
	if (depth > 256)
		return false;
	switch (n->kind) {
	case N_INT:
		*v = n->num;
		return true;
	case N_IDENT: {
		struct node *k = find_decl(c->consts, c->nconsts, n->str);
		if (!k)   /* a builtin constant (warn), checked */
			return n->ref == REF_CONST && n->resolved && const_int(c, n->resolved, v, depth + 1);
		return k->sym != -2 && const_int(c, k->a, v, depth + 1);
	}
	case N_UNOP:
		if (!const_int(c, n->a, &sx, depth + 1))
			return false;
		x = (uint64_t)sx;
		*v = n->op == '-' ? (int64_t)(0 - x) : n->op == '~' ? (int64_t)~x : !x;
		return true;
	case N_BINOP:
		if (!const_int(c, n->a, &sx, depth + 1) || !const_int(c, n->b, &sy, depth + 1))
			return false;
		x = (uint64_t)sx, y = (uint64_t)sy;
		switch (n->op) {
		case '+': *v = (int64_t)(x + y); return true;
		case '-': *v = (int64_t)(x - y); return true;
		case '*': *v = (int64_t)(x * y); return true;
		case '&': *v = (int64_t)(x & y); return true;
		case '|': *v = (int64_t)(x | y); return true;
		case '^': *v = (int64_t)(x ^ y); return true;
		case OP_SHL: *v = y < 64 ? (int64_t)(x << y) : 0; return true;
		case OP_SHR: *v = y < 64 ? sx >> y : sx < 0 ? -1 : 0; return true;
		case '/': case '%':
			if (!sy)
				return false;
			if (sy == -1)   /* INT64_MIN / -1 does not overflow here */
				*v = n->op == '/' ? (int64_t)(0 - x) : 0;
			else
				*v = n->op == '/' ? sx / sy : sx % sy;
			return true;
		default:
			return false;
		}
	default:
		return false;
	}
}

static int add_local(struct check *ck, struct local l)
{
	struct alt_ctx *a = ck->alt;
	a->locals = xrealloc_array(a->locals, a->nlocals + 1, sizeof(*a->locals));
	a->locals[a->nlocals] = l;
	return (int)a->nlocals++;
}

/* A bound the loop folds to its value. */
static void fold_bound(struct node **bound, int64_t value)
{
	struct node *k = node_new(N_INT, (*bound)->loc);
	k->num = value;
	k->type = t_int(8, value < 0);
	node_free(*bound);
	*bound = k;
}

/* for ($i : A..B) { ... }: $i takes A, A+1, ..., B-1.  The bounds are
 * constants: the verifier walks the loop iteration by iteration, hence
 * the bound on iterations (nested loops multiply).  $i is a signed 64-bit
 * local, in scope only in the body; the loop alone sets it. */
static void check_for(struct check *ck, struct node *n)
{
	const char *var = n->str;
	int64_t first = 0, end = 0;
	bool ok = true;
	for (struct node *b = n->a; b; b = b == n->a ? n->b : NULL) {
		int errors = ck->c->d->errors;
		check_expr(ck, b);
		if (ck->c->d->errors > errors) {
			ok = false;
		} else if (!const_int(ck->c, b, b == n->a ? &first : &end, 0)) {
			ERR(ck, b, "a for loop's bounds are constant integers (numbers, consts, -D values and "
			    "arithmetic on them); to stop at a value known when the probe runs, loop up to "
			    "a constant maximum and 'break' there");
			ok = false;
		}
	}
	uint64_t iterations = ok && end > first ? (uint64_t)end - (uint64_t)first : 0;
	uint64_t in_all = iterations * ck->loop_iterations;
	if (ok && end < first) {
		ERR(ck, n->b, "this loop's end (%lld) is below its start (%lld): it would never run; "
		    "$i takes START, START+1, ..., END-1", (long long)end, (long long)first);
		ok = false;
	} else if (ok && iterations > UT_MAX_LOOP_ITERATIONS) {
		ERR(ck, n->b, "this loop would run %llu times; a for loop runs at most %d (the BPF verifier "
		    "checks every iteration): loop over fewer values", (unsigned long long)iterations,
		    UT_MAX_LOOP_ITERATIONS);
		ok = false;
	} else if (ok && in_all > UT_MAX_LOOP_ITERATIONS) {
		ERR(ck, n->b, "this loop would run %llu times in all, inside the loops around it; nested loops "
		    "run at most %d times in all (the BPF verifier checks every iteration)",
		    (unsigned long long)in_all, UT_MAX_LOOP_ITERATIONS);
		ok = false;
	}
	int l = find_local(ck, var);
	if (l >= 0 && !ck->alt->locals[l].loop_var) {
		ERR(ck, n, "%s is already a local of this probe (assigned at %d:%d); give the loop's variable "
		    "a name of its own", var, ck->alt->locals[l].loc.line, ck->alt->locals[l].loc.col);
		return;
	}
	if (in_loop_of(ck, var)) {
		ERR(ck, n, "%s is already the variable of a loop around this one; give this loop's variable "
		    "another name", var);
		return;
	}
	if (ck->loop_depth == UT_MAX_LOOP_DEPTH) {
		ERR(ck, n, "for loops nest at most %d deep", UT_MAX_LOOP_DEPTH);
		return;
	}
	if (l < 0)
		l = add_local(ck, (struct local){.name = xstrdup(var), .type = t_int(8, true), .loc = n->loc,
						 .loop_var = true});
	n->ref = REF_LOCAL;
	n->sym = l;
	if (ok) {
		fold_bound(&n->a, first);
		fold_bound(&n->b, end);
	}
	uint64_t around = ck->loop_iterations;
	ck->loop_vars[ck->loop_depth++] = var;
	ck->loop_iterations = ok && iterations ? in_all : around;
	check_stmts(ck, for_body(n));
	ck->loop_depth--;
	ck->loop_iterations = around;
}

/* The type of the entry local of map m: its key's k-th value, or (k -1)
 * its value: a plain value as it is, an aggregation's number. */
static struct type entry_type(const struct map_info *m, int k)
{
	struct type t = k >= 0 ? m->key_types[k] : m->kind == MAP_AGG ? t_int(8, true) : m->value_type;
	t.direct = false;
	return t;
}

/* for ($kv : @m) { ... }: the body runs for each entry of @m, in the
 * reader (placement.c), $kv.0 its key ($kv.0.0 ... of several keys) and
 * $kv.1 its value, locals of the loop's own (node.sym the first: the key's
 * values, then the value). */
static void check_for_map(struct check *ck, struct node *n)
{
	struct compiler *c = ck->c;
	const char *var = n->str;
	struct node *ref = n->a;
	unsigned mi = 0;
	while (mi < c->nmaps && strcmp(c->maps[mi].name, ref->str) != 0)
		mi++;
	const struct map_info *m = mi < c->nmaps ? &c->maps[mi] : NULL;
	if (ref->a)
		ERR(ck, ref, "a for loop takes the whole map, without keys: for (%s : %s)", var, ref->str);
	else if (!m || m->kind == MAP_UNSET)
		ERR(ck, ref, "for over %s, which no probe before it assigns", ref->str);
	else if (m->kind == MAP_AGG && ut_aggs[m->agg].bucket_label)
		ERR(ck, ref, "%s is a histogram: a loop would go over its buckets; percentile(%s[...], 99) gives a "
		    "percentile of its values", m->name, m->name);
	else if (m->kind == MAP_AGG && ut_aggs[m->agg].value_text)
		ERR(ck, ref, "%s holds %s(), more than one number an entry; loop over a count(), sum() or avg() of the "
		    "values", m->name, ut_aggs[m->agg].name);
	else if (m->kind == MAP_VALUE && m->value_type.kind == T_TUPLE)
		ERR(ck, ref, "%s holds tuples, and a loop over a map runs in the reader, which keeps no tuples", m->name);
	else if (!m->nkeys)
		ERR(ck, ref, "%s has no keys, no entries to loop over: read it as %s", m->name, m->name);
	else if (find_local(ck, var) >= 0)
		ERR(ck, n, "%s is already a local of this probe; give the loop's entry a name of its own", var);
	else if (in_loop_of(ck, var))
		ERR(ck, n, "%s is already the variable of a loop around this one; give this loop's another name", var);
	else if (ck->loop_depth == UT_MAX_LOOP_DEPTH)
		ERR(ck, n, "for loops nest at most %d deep", UT_MAX_LOOP_DEPTH);
	else
		goto ok;
	return;
ok:
	ref->ref = REF_MAP;
	ref->sym = (int)mi;
	n->ref = REF_LOCAL;
	n->sym = (int)ck->alt->nlocals;
	for (int k = 0; k <= (int)m->nkeys; k++) {
		int key = k < (int)m->nkeys ? k : -1;
		char *name = key < 0 ? xasprintf("%s.1", var) : m->nkeys == 1 ? xasprintf("%s.0", var)
										  : xasprintf("%s.0.%d", var, key);
		add_local(ck, (struct local){.name = name, .type = entry_type(m, key), .loc = n->loc, .loop_var = true,
					     .entry_of = n, .entry_key = key});
	}
	ck->loop_vars[ck->loop_depth] = var;
	ck->loop_maps[ck->loop_depth++] = n;
	check_stmts(ck, for_body(n));
	ck->loop_maps[--ck->loop_depth] = NULL;
}

static enum walk_next entry_read_type(struct node *n, void *ctx)
{
	const struct alt_ctx *a = ctx;
	if (n->kind == N_LOCAL && n->ref == REF_LOCAL && a->locals[n->sym].entry_of)
		n->type = a->locals[n->sym].type;
	return WALK_INTO;
}

void check_map_entries(struct compiler *c, struct alt_ctx *a)
{
	bool any = false;
	for (unsigned i = 0; i < a->nlocals; i++) {
		struct local *l = &a->locals[i];
		if (l->entry_of) {
			l->type = entry_type(&c->maps[l->entry_of->a->sym], l->entry_key);
			any = true;
		}
	}
	if (any)
		walk_list(a->block, &(struct walker){.expansions = true, .pre = entry_read_type, .ctx = a});
}

static void check_local_assign(struct check *ck, struct node *n)
{
	struct node *loop = map_loop_of(ck, n->str);
	if (loop) {
		ERR(ck, n, "%s is the entry of the for loop over %s at %d:%d: only the loop sets it; copy %s.0 or %s.1 "
		    "to another local", n->str, loop->a->str, loop->loc.line, loop->loc.col, n->str, n->str);
		return;
	}
	if (is_positional(n->str)) {
		ERR(ck, n, "%s is a positional parameter (given after the script on the command line); "
		    "it cannot be assigned: copy it to a local", n->str);
		return;
	}
	check_expr(ck, n->a);
	struct type *t = &n->a->type;
	int l = find_local(ck, n->str);
	const struct local *local = l >= 0 ? &ck->alt->locals[l] : NULL;
	if (local && local->loop_var) {
		if (in_loop_of(ck, n->str))
			ERR(ck, n, "%s is the variable of this for loop (%d:%d): only the loop changes it; "
			    "copy it to another local to compute with it", n->str, local->loc.line, local->loc.col);
		else
			ERR(ck, n, "%s is the variable of the for loop at %d:%d; give this local another name",
			    n->str, local->loc.line, local->loc.col);
		return;
	}
	if (t->kind == T_SHOW || t->kind == T_VOID) {
		ERR(ck, n->a, "a local holds an integer, pointer or string, not %s", type_name(t));
		return;
	}
	if (!local) {
		struct local nl = {.name = xstrdup(n->str), .type = *t, .loc = n->loc};
		nl.type.direct = false;   /* starts as 0 and may be assigned on some paths only */
		if (t->kind == T_STR)
			nl.type.size = 64 > t->size ? 64 : t->size;
		if (t->kind == T_TUPLE)   /* its strings too */
			nl.type.tuple = (int16_t)tuple_merge(ck->c, t->tuple, t->tuple, 64);
		l = add_local(ck, nl);
	} else if (local->type.kind != t->kind) {
		ERR(ck, n, "%s holds %s; it cannot take %s", n->str, a_type(&local->type), a_type(t));
	} else if (t->kind == T_TUPLE) {
		int tuple = tuple_merge(ck->c, local->type.tuple, t->tuple, 64);
		if (tuple < 0)
			ERR(ck, n, "%s holds a tuple of other values (%d:%d); it cannot take this one", n->str, local->loc.line,
			    local->loc.col);
		else
			ck->alt->locals[l].type.tuple = (int16_t)tuple;
	}
	n->ref = REF_LOCAL;
	n->sym = l;
}

static void check_stmt(struct check *ck, struct node *n)
{
	switch (n->kind) {
	case N_BLOCK:
		check_stmts(ck, n->a);
		return;
	case N_EXPR_STMT:
		check_call_stmt(ck, n);
		return;
	case N_LOCAL_ASSIGN:
		check_local_assign(ck, n);
		return;
	case N_MAP_ASSIGN:
		check_map_assign(ck, n);
		return;
	case N_IF:
		check_expr(ck, n->a);
		if (!is_cond(&n->a->type))
			ERR(ck, n->a, "the condition must be an integer or a pointer, not %s", a_type(&n->a->type));
		check_stmt(ck, n->b);
		if (n->c)
			check_stmt(ck, n->c);
		return;
	case N_RETURN:
		return;
	case N_FOR:
		check_for(ck, n);
		return;
	case N_FOR_MAP:
		check_for_map(ck, n);
		return;
	case N_BREAK: case N_CONTINUE:
		if (ck->loop_depth)
			return;
		if (n->kind == N_BREAK)
			ERR(ck, n, "'break' leaves a for loop, and this one is in none; "
			    "to leave the probe's body, use 'return'");
		else
			ERR(ck, n, "'continue' goes on with a for loop's next iteration, and this one is in none; "
			    "to leave the probe's body, use 'return'");
		return;
	default:
		if (is_trace_construct(n))
			check_trace(ck, n);
		else
			ERR(ck, n, "this is not a statement");
	}
}

void check_alternative(struct compiler *c, struct alt_ctx *a)
{
	struct check ck = {.c = c, .alt = a, .loop_iterations = 1};
	if (a->pred) {
		check_expr(&ck, a->pred);
		if (!is_cond(&a->pred->type))
			ERR(&ck, a->pred, "the predicate must be an integer or pointer condition, not %s",
			    a_type(&a->pred->type));
	}
	check_stmts(&ck, a->block->a);
	if (!ck.reads_args) {
		/* nothing depends on the argument types: any kernel's will do
		 * (sched_process_exit gained a bool argument after 6.12) */
		free(a->alt->signature);
		a->alt->signature = NULL;
	}
}
