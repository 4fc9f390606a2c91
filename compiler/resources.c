/* The resources pass: what the typed bodies need, sized before any C is
 * written.  Each statement that writes a record gets an event of the
 * program (its record's layout and how user space shows each value);
 * each body the stage its hit's records go out in; each map its key and
 * value layout and its kind of BPF map. */
#include <stdlib.h>
#include <string.h>

#include "compiler/aggregations.h"
#include "compiler/passes.h"
#include "compiler/resources.h"

/* The walk over one alternative's body: set up in one assignment for
 * each (resources). */
struct stage_walk {
	struct compiler *c;
	struct alt_ctx *alt;
	uint32_t bytes;             /* records the body may stage, in bytes (one sample) */
	uint32_t record_max;        /* its largest record */
	bool refills;               /* records may find the stage full: they send it first */
	bool reloads;               /* a loop passes ut_off through the stage */
};

static int name_index(char ***v, unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp((*v)[i], name) == 0)
			return (int)i;
	*v = xrealloc_array(*v, *n + 1, sizeof(char *));
	(*v)[*n] = xstrdup(name);
	return (int)(*n)++;
}

/* ---- records ---- */

unsigned record_add_field(struct record *r, enum ut_field_type type, uint32_t size)
{
	struct ut_event *ev = r->ev;
	unsigned i = ev->nfields++;
	ev->fields = xrealloc_array(ev->fields, ev->nfields, sizeof(*ev->fields));
	ev->fields[i] = (struct ut_field){.type = type, .offset = r->size, .size = type == UT_F_STR ? size : 8};
	r->size += type == UT_F_STR ? (size + 7) & ~7u : 8;
	return i;
}

/* A value the probe computes (n, checked), stored in a field. */
static struct ut_value field_value(struct record *r, const struct node *n)
{
	const struct type *t = &n->type;
	enum ut_field_type ft = t->kind == T_INT ? (t->is_signed ? UT_F_S64 : UT_F_U64) : t->kind == T_PTR ? UT_F_PTR
			      : UT_F_STR;
	return type_shown(t, record_add_field(r, ft, t->size));
}

struct ut_value record_format(struct record *r, struct node *call)
{
	struct node *args[CALL_MAX_ARGS];
	int na = collect_args(call->a, args, CALL_MAX_ARGS);
	struct ut_value v = {.kind = UT_VAL_FORMAT, .nfmt = (unsigned)(na - 1)};
	v.fmt = xcalloc((size_t)na, sizeof(struct ut_value));
	for (int i = 1; i < na; i++)
		v.fmt[i - 1] = record_value(r, args[i]);
	v.text = xstrdup(args[0]->str);
	return v;
}

struct ut_value record_value(struct record *r, struct node *n)
{
	switch (value_form(n)) {
	case VALUE_TEXT:
		return (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(through_functions(n)->str)};
	case VALUE_FORMAT:
		return record_format(r, through_functions(n));
	default:
		return field_value(r, n);
	}
}

static struct record record_begin(struct stage_walk *w, enum ut_event_op op, struct node *n)
{
	struct ut_program *p = w->c->prog;
	p->events = xrealloc_array(p->events, p->nevents + 1, sizeof(*p->events));
	n->event = (int)p->nevents;
	struct ut_event *ev = &p->events[p->nevents++];
	*ev = (struct ut_event){.op = op, .loc = n->loc, .group = -1, .flow = -1, .category = xstrdup(w->alt->spec)};
	return (struct record){ev, 24};   /* struct ut_rec_hdr */
}

/* Records of one probe hit are staged and go out as one ring buffer
 * sample (bpf/ut.h, ut_batch_begin).  Sizes are multiples of 8, so the
 * records of a sample stay aligned. */
static void record_end(struct stage_walk *w, struct record *r, struct node *n)
{
	r->size = (r->size + 7) & ~7u;
	r->ev->size = r->size;
	w->bytes += r->size;
	if (r->size > w->record_max)
		w->record_max = r->size;
	n->stage_full = w->refills;   /* after a loop that may have filled the stage */
}

static void record_track(struct stage_walk *w, struct record *r, struct node *track)
{
	if (!track)
		return;
	r->ev->group = name_index(&w->c->prog->groups, &w->c->prog->ngroups, track->str);
	r->ev->group_key = record_value(r, keyref_key(track));
}

/* A flow or span key, sampled on (--sample keeps whole flows). */
static void record_key(struct stage_walk *w, struct record *r, struct node *keyref)
{
	r->ev->flow = name_index(&w->c->prog->flows, &w->c->prog->nflows, keyref->str);
	r->ev->key = field_value(r, keyref_key(keyref));
}

void record_arg(struct record *r, const char *name, struct ut_value v)
{
	r->ev->args = xrealloc_array(r->ev->args, r->ev->nargs + 1, sizeof(*r->ev->args));
	r->ev->args[r->ev->nargs++] = (struct ut_named_value){xstrdup(name), v};
}

static void record_args(struct record *r, struct node *with)
{
	for (struct node *a = with; a; a = a->next)
		record_arg(r, a->str, record_value(r, a->a));
}

static enum ut_event_op phase_op(int op, enum ut_event_op b, enum ut_event_op s, enum ut_event_op e)
{
	return op == OP_BEGIN ? b : op == OP_END ? e : s;
}

static void trace_record(struct stage_walk *w, struct node *n)
{
	struct record r;
	switch (n->kind) {
	case N_SLICE:
		r = record_begin(w, n->op == OP_BEGIN ? UT_EV_SLICE_BEGIN : UT_EV_SLICE_END, n);
		if (n->a)
			r.ev->name = record_value(&r, n->a);
		record_track(w, &r, n->b);
		break;
	case N_INSTANT: case N_COUNTER:
		r = record_begin(w, n->kind == N_INSTANT ? UT_EV_INSTANT : UT_EV_COUNTER, n);
		r.ev->name = record_value(&r, n->a);
		record_track(w, &r, n->b);
		break;
	case N_FLOW:
		r = record_begin(w, phase_op(n->op, UT_EV_FLOW_BEGIN, UT_EV_FLOW_STEP, UT_EV_FLOW_END), n);
		record_key(w, &r, n->a);
		if (n->b)
			r.ev->name = record_value(&r, n->b);
		else
			r.ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(w->alt->target)};
		break;
	case N_SPAN:
		r = record_begin(w, phase_op(n->op, UT_EV_SPAN_BEGIN, UT_EV_SPAN_PHASE, UT_EV_SPAN_END), n);
		r.ev->group = name_index(&w->c->prog->groups, &w->c->prog->ngroups, n->a->str);
		r.ev->group_key = record_value(&r, keyref_key(n->a));
		record_key(w, &r, n->b);
		if (n->d)
			r.ev->name = record_value(&r, n->d);
		break;
	case N_SCHED:
		r = record_begin(w, n->op == SCHED_SWITCH ? UT_EV_SCHED_SWITCH : UT_EV_SCHED_WAKEUP, n);
		break;
	default:   /* N_TRACK_NAME */
		r = record_begin(w, UT_EV_GROUP_NAME, n);
		record_track(w, &r, n->a);
		r.ev->name = record_value(&r, n->b);
		break;
	}
	record_args(&r, n->c);
	record_end(w, &r, n);
}

/* A statement builtin's record (statements.c). */
static void call_record(struct stage_walk *w, struct node *call)
{
	const struct statement_def *st = statement_of(call);
	struct record r = record_begin(w, st->op, call);
	if (st->record)
		st->record(&r, call);
	record_end(w, &r, call);
}

/* ---- statements ---- */

static void stage_stmt(struct stage_walk *w, struct node *n);

static void stage_stmts(struct stage_walk *w, struct node *list)
{
	for (; list; list = list->next)
		stage_stmt(w, list);
}

/* The stage holds the records before a loop, and room for the loop's: all
 * of them, up to UT_LOOP_STAGE_BYTES (at least one iteration's).  When
 * they may not all fit, each iteration starts by sending the stage if its
 * records would not fit, and the records after the loop check one by one. */
static void stage_for(struct stage_walk *w, struct node *n)
{
	uint64_t iterations = n->b->num > n->a->num ? (uint64_t)n->b->num - (uint64_t)n->a->num : 0;
	uint32_t before = w->bytes;
	bool refills = w->refills;
	w->refills = false;
	stage_stmts(w, for_body(n));
	uint64_t iteration = w->bytes - before;
	uint64_t all = iteration * (iterations ? iterations : 1);
	uint64_t share = all <= UT_LOOP_STAGE_BYTES ? all : iteration > UT_LOOP_STAGE_BYTES ? iteration : UT_LOOP_STAGE_BYTES;
	w->bytes = before + (uint32_t)share;
	w->refills = refills || share < all;
	n->stage_bytes = (uint32_t)iteration;
	n->stage_full = share < all;
	w->reloads |= iteration > 0;
}

static void stage_stmt(struct stage_walk *w, struct node *n)
{
	switch (n->kind) {
	case N_BLOCK:
		stage_stmts(w, n->a);
		return;
	case N_EXPR_STMT:
		if (calls_function(stmt_call(n)))
			stage_stmt(w, stmt_call(n)->resolved);
		else if (!statement_of(stmt_call(n))->updates_map)
			call_record(w, stmt_call(n));
		return;
	case N_MAP_ASSIGN:
		/* a string value is staged in a per-CPU buffer (unless it is in
		 * map memory already) */
		if (n->b->type.kind == T_STR && (!call_of(n->b) || !call_of(n->b)->map_memory))
			w->c->uses_scratch = true;
		return;
	case N_IF:
		stage_stmt(w, n->b);
		if (n->c)
			stage_stmt(w, n->c);
		return;
	case N_FOR:
		stage_for(w, n);
		return;
	case N_FOR_MAP:   /* the reader's: its records are the reader's to write */
		stage_stmts(w, for_body(n));
		return;
	default:
		if (is_trace_construct(n))
			trace_record(w, n);
		return;
	}
}

static void stage_alternative(struct compiler *c, struct alt_ctx *a)
{
	struct stage_walk w = {.c = c, .alt = a};
	stage_stmts(&w, a->block->a);
	a->stage = (struct stage){.bytes = w.bytes, .record_max = w.record_max, .reloads = w.reloads};
	if (w.reloads) {
		/* gen_for's ut_off: room past the cap, a mask over it, and a
		 * whole record past the mask */
		while (a->stage.off_mask < w.bytes + 7)
			a->stage.off_mask = a->stage.off_mask << 1 | 1;
	}
}

uint32_t stage_buffer_bytes(const struct stage *s)
{
	return s->reloads ? s->off_mask + 1 + s->record_max : s->bytes;
}

void value_fields(struct node *v, field_each each, void *ctx)
{
	switch (value_form(v)) {
	case VALUE_TEXT:
		return;
	case VALUE_FORMAT:
		format_fields(through_functions(v), each, ctx);
		return;
	default:
		each(ctx, v, false);
	}
}

void format_fields(struct node *call, field_each each, void *ctx)
{
	for (struct node *arg = call->a->next; arg; arg = arg->next)
		value_fields(arg, each, ctx);
}

void record_fields(struct node *n, field_each each, void *ctx)
{
	switch (n->kind) {
	case N_SLICE: case N_INSTANT: case N_COUNTER:
		if (n->a)
			value_fields(n->a, each, ctx);
		if (n->b)
			value_fields(keyref_key(n->b), each, ctx);
		break;
	case N_FLOW:
		each(ctx, keyref_key(n->a), true);
		if (n->b)
			value_fields(n->b, each, ctx);
		break;
	case N_SPAN:
		value_fields(keyref_key(n->a), each, ctx);
		each(ctx, keyref_key(n->b), true);
		if (n->d)
			value_fields(n->d, each, ctx);
		break;
	case N_TRACK_NAME:
		value_fields(keyref_key(n->a), each, ctx);
		value_fields(n->b, each, ctx);
		break;
	case N_SCHED:   /* its values only */
		break;
	default:   /* a statement builtin's */
		if (statement_of(n)->fields)
			statement_of(n)->fields(n, each, ctx);
		return;
	}
	for (struct node *w = n->c; w; w = w->next)
		value_fields(w->a, each, ctx);
}

/* ---- maps ---- */

static uint32_t key_field_size(const struct type *t)
{
	return t->kind == T_STR ? ((uint32_t)t->size + 7) & ~7u : 8;
}

/* One BPF map per script map; the program's map table tells user space
 * its layout. */
static void map_layout(struct compiler *c, unsigned i)
{
	struct map_info *m = &c->maps[i];
	struct ut_map *out = &c->prog->maps[i];
	const struct ut_agg_kind *kind = &ut_aggs[m->agg];   /* UT_AGG_LAST: plain values */
	*out = (struct ut_map){.name = xstrdup(m->name), .bpf_name = xasprintf("m_%u", i),
			       .agg = m->agg, .lhist_min = m->lhist_min,
			       .lhist_max = m->lhist_max, .lhist_step = m->lhist_step, .nkeys = m->nkeys,
			       .is_private = m->is_private, .is_lru = m->is_lru};
	out->keys = xcalloc(m->nkeys + 1, sizeof(*out->keys));
	out->key_show = xcalloc(m->nkeys + 1, sizeof(*out->key_show));
	out->key_names = xcalloc(m->nkeys + 1, sizeof(*out->key_names));
	uint32_t off = 0;
	for (unsigned k = 0; k < m->nkeys; k++) {
		const struct type *t = &m->key_types[k];
		uint32_t size = key_field_size(t);
		out->keys[k] = (struct ut_field){.type = t->kind == T_STR ? UT_F_STR : t->kind == T_PTR ? UT_F_PTR
							: t->is_signed ? UT_F_S64 : UT_F_U64,
						 .offset = off, .size = size};
		out->key_show[k] = type_shown(t, k);
		out->key_names[k] = xstrdup(m->key_names[k] ? m->key_names[k] : "");
		off += size;
	}
	if (kind->bpf_bucket)
		off += 8;   /* the bucket */
	/* A keyless aggregation whose zeros mean never hit (count, avg, min,
	 * max) is a one-slot array (its look-up is inlined by the verifier,
	 * where a hash hashes and locks): the summary leaves an all-zero slot
	 * out and clear() writes zeros.  Values and sums stay hashes (0 is a
	 * value they print), as do maps a probe deletes (arrays cannot). */
	bool slot = off == 0 && !m->deleted_in_bpf && m->kind == MAP_AGG && kind->zero_is_unset;
	m->storage = slot ? MAP_PERCPU_SLOT : m->kind == MAP_AGG ? MAP_PERCPU_HASH : MAP_SHARED_HASH;
	out->key_size = off ? off : slot ? 4 : 8;
	out->value_size = kind->value_size;
	if (m->kind == MAP_VALUE && m->value_type.kind == T_STR) {
		out->value_size = ((uint32_t)m->value_type.size + 7) & ~7u;
		out->value_show = (struct ut_value){.kind = UT_VAL_FIELD, .display = UT_SHOW_STRING};
	} else if (m->kind == MAP_VALUE && m->value_type.kind == T_TUPLE) {
		const struct tuple_info *t = &c->tuples[m->value_type.tuple];
		out->value_size = t->size;
		out->value_show = (struct ut_value){.kind = UT_VAL_FIELD};
		out->ntuple = t->n;
		out->tuple_fields = xcalloc(t->n, sizeof(*out->tuple_fields));
		out->tuple_show = xcalloc(t->n, sizeof(*out->tuple_show));
		for (unsigned e = 0; e < t->n; e++) {
			const struct type *et = &t->el[e];
			out->tuple_fields[e] = (struct ut_field){.type = et->kind == T_STR ? UT_F_STR : et->kind == T_PTR ? UT_F_PTR
								    : et->is_signed ? UT_F_S64 : UT_F_U64,
								 .offset = t->offset[e], .size = et->kind == T_STR ? et->size : 8};
			out->tuple_show[e] = type_shown(et, e);
		}
	} else if (m->kind == MAP_VALUE) {
		out->value_show = type_shown(&m->value_type, 0);
	}
}

void resources(struct compiler *c)
{
	for (unsigned i = 0; i < c->nalts; i++) {
		stage_alternative(c, c->alts[i]);
		if (stage_buffer_bytes(&c->alts[i]->stage) > c->max_stage_bytes)
			c->max_stage_bytes = stage_buffer_bytes(&c->alts[i]->stage);
		if (c->alts[i]->path_calls > c->path_slots)
			c->path_slots = c->alts[i]->path_calls;
	}
	c->uses_scratch |= c->path_slots > 0;
	c->prog->nmaps = c->nmaps;
	c->prog->maps = xcalloc(c->nmaps, sizeof(*c->prog->maps));
	for (unsigned i = 0; i < c->nmaps; i++)
		map_layout(c, i);
}
