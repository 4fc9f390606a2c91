#include "runtime/user_side.h"

#include <stdio.h>
#include <stdlib.h>
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>

#include "bpf/records.h"
#include "base/alloc.h"
#include "base/hashmap.h"
#include "compiler/gen_native.h"
#include "compiler/reader_ops.h"
#include "runtime/cache.h"
#include "runtime/decode.h"
#include "runtime/native.h"
#include "runtime/summary.h"
#include "runtime/user_maps.h"

/* --sample on the user side: the decision drawn at a flow's begin,
 * remembered by (flow kind, key) for its later points and for the spans
 * keyed the same, as bpf/ut.h's ut_flow_sampled does in the kernel.  A
 * bounded table: four ways a set, the oldest replaced; a point whose
 * decision is gone (or was never seen) is kept. */
#define SAMPLE_SETS 16384
#define SAMPLE_WAYS 4

struct sample_slot {
	uint64_t key;
	uint32_t kind;
	uint8_t used, keep;
};

struct sample_set {
	struct sample_slot way[SAMPLE_WAYS];
	uint8_t next;   /* the way replaced next */
};

/* What the compiled user side's calls get (compiler/gen_native.h). */
struct ut_native_env {
	struct ut_user_side *u;
	struct ut_decoder *d;
};
typedef int ut_native_hit_fn(struct ut_native_env *env, const unsigned char *rec);

/* What running an event's statements, or emitting its records, needs
 * that is worked out once when loading: where its locals are in the
 * hit's locals buffer and whether a hit zeroes them (not when each is set
 * before it is read), where its integer fields are in its record, and
 * whether its record is zeroed before its fields are stored (not when
 * integer fields fill it). */
struct event_prep {
	uint32_t first;         /* its first slot's entry in slot_offset */
	uint32_t bytes;         /* of its locals, zeroed at each hit; 0: none read unset */
	uint32_t first_field;   /* its first field's entry in int_at */
	bool zero_record;
};

struct ut_user_side {
	const struct ut_program *prog;
	struct ut_user_maps *maps;
	uint32_t sample_permyriad;
	uint64_t random;
	struct sample_set *samples;       /* allocated at the first sampled point */
	bool *samples_flow;               /* per flow kind: the user side emits some of its points */
	struct event_prep *prep;          /* per event */
	bool *int_keys;                   /* per map: map_key's quick path (ut_map_whole_int_keys) */
	uint32_t *slot_offset;
	int32_t *int_at;                  /* an integer field's offset in its record; -1: a string */
	unsigned char *locals;            /* the running hit's */
	unsigned char *record;            /* an emitted record being filled */
	struct ut_native *native;         /* the compiled user side, or NULL */
	ut_native_hit_fn **hit;           /* per event: its compiled hit, or NULL */
	struct bpf_object *obj;           /* the kernel's maps, for reading whole */
	/* the copies of maps the running hit's loops go over, freed when it
	 * ends (a return inside a loop leaves it at once) */
	struct ut_map_entries *copies;
	size_t ncopies, copies_capacity;
};

/* Whether the header and integer fields of ev fill its record. */
static bool ints_fill(const struct ut_event *ev)
{
	uint32_t words = ev->size / 8, filled = 0;
	bool *word = xcalloc(words + 1, sizeof(bool));
	for (uint32_t w = 0; w < sizeof(struct ut_rec_hdr) / 8 && w < words; w++)
		word[w] = true;
	for (unsigned f = 0; f < ev->nfields; f++) {
		const struct ut_field *fd = &ev->fields[f];
		if (fd->type != UT_F_STR && fd->offset % 8 == 0 && fd->offset / 8 < words)
			word[fd->offset / 8] = true;
	}
	for (uint32_t w = 0; w < words; w++)
		filled += word[w];
	free(word);
	return ev->size % 8 == 0 && filled == words;
}

/* Whether expression x reads a local not in set[] (expressions walked
 * before are in seen[]: what they read was read earlier). */
static bool reads_unset_expr(const struct ut_program *p, unsigned x, const bool *set, bool *seen)
{
	if (x >= p->nuexprs || seen[x])
		return false;
	seen[x] = true;
	const struct ut_uexpr *e = &p->uexprs[x];
	if (e->op == UT_UX_LOCAL && !set[e->slot < UT_ULOCALS_MAX ? e->slot : UT_ULOCALS_MAX])
		return true;
	unsigned ops[3], n = ut_uexpr_operands(e, ops);
	for (unsigned k = 0; k < n; k++)
		if (reads_unset_expr(p, ops[k], set, seen))
			return true;
	for (unsigned k = 0; ut_uexpr_has_keys(e) && k < e->nkeys && e->keys + k < p->nukeys; k++)
		if (reads_unset_expr(p, p->ukeys[e->keys + k], set, seen))
			return true;
	return false;
}

/* Whether statements first..+n read a local not in set[] (any operand
 * counts, run or not). */
static bool reads_unset(const struct ut_program *p, unsigned first, unsigned n, const bool *set, bool *seen)
{
	for (unsigned i = first; i < first + n && i < p->nustmts; i++) {
		const struct ut_ustmt *s = &p->ustmts[i];
		bool bodies = s->op == UT_US_IF || s->op == UT_US_FOR || s->op == UT_US_FOR_MAP;
		if (reads_unset_expr(p, s->a, set, seen) || reads_unset_expr(p, s->b, set, seen) ||
		    (bodies && (reads_unset(p, s->body, s->nbody, set, seen) ||
				reads_unset(p, s->body2, s->nbody2, set, seen))))
			return true;
		for (unsigned k = 0; k < s->nkeys && s->keys + k < p->nukeys; k++)
			if (reads_unset_expr(p, p->ukeys[s->keys + k], set, seen))
				return true;
	}
	return false;
}

/* Whether a hit of ev may read a local before setting it: each of its
 * statements in turn, the locals set by the ones before (at the top,
 * where a set always happens) counting as set. */
static bool reads_before_set(const struct ut_program *p, const struct ut_event *ev)
{
	bool *set = xcalloc(UT_ULOCALS_MAX + 1, sizeof(bool)), *seen = xcalloc(p->nuexprs + 1, sizeof(bool));
	bool unset = false;
	for (unsigned i = ev->body; !unset && i < ev->body + ev->nbody && i < p->nustmts; i++) {
		unset = reads_unset(p, i, 1, set, seen);
		if (p->ustmts[i].op == UT_US_LOCAL && p->ustmts[i].slot < UT_ULOCALS_MAX)
			set[p->ustmts[i].slot] = true;
	}
	free(set);
	free(seen);
	return unset;
}

struct ut_user_side *ut_user_side_new(const struct ut_program *prog, struct ut_user_maps *maps,
				      uint32_t sample_permyriad)
{
	struct ut_user_side *u = xcalloc(1, sizeof(*u));
	u->prog = prog;
	u->maps = maps;
	u->sample_permyriad = sample_permyriad && sample_permyriad < 10000 ? sample_permyriad : 10000;
	u->random = 0x9e3779b97f4a7c15ull;
	u->prep = xcalloc(prog->nevents, sizeof(*u->prep));
	size_t nslots = 0, nfields = 0, locals = 0, record = 0;
	for (unsigned e = 0; e < prog->nevents; e++) {
		nslots += prog->events[e].nlocals;
		nfields += prog->events[e].nfields;
	}
	u->slot_offset = xcalloc(nslots + 1, sizeof(*u->slot_offset));
	u->int_at = xcalloc(nfields + 1, sizeof(*u->int_at));
	nslots = nfields = 0;
	for (unsigned e = 0; e < prog->nevents; e++) {
		const struct ut_event *ev = &prog->events[e];
		struct event_prep *ep = &u->prep[e];
		ep->first = (uint32_t)nslots;
		for (unsigned s = 0; s < ev->nlocals; s++) {
			u->slot_offset[nslots++] = ep->bytes;
			ep->bytes += ut_ulocal_bytes(&ev->locals[s]);
		}
		ep->first_field = (uint32_t)nfields;
		for (unsigned f = 0; f < ev->nfields; f++)
			u->int_at[nfields++] = ev->fields[f].type == UT_F_STR ? -1 : (int32_t)ev->fields[f].offset;
		ep->zero_record = !ints_fill(ev);
		if (ep->bytes > locals)
			locals = ep->bytes;
		if (ep->bytes && !reads_before_set(prog, ev))
			ep->bytes = 0;
		if (ev->size > record)
			record = ev->size;
	}
	u->locals = xcalloc(locals, 1);
	u->record = xcalloc(record, 1);
	u->int_keys = xcalloc(prog->nmaps + 1, sizeof(*u->int_keys));
	for (unsigned i = 0; i < prog->nmaps; i++)
		u->int_keys[i] = ut_map_whole_int_keys(&prog->maps[i]);
	u->samples_flow = xcalloc(prog->nflows + 1, sizeof(*u->samples_flow));
	for (unsigned i = 0; i < prog->nustmts; i++) {
		const struct ut_ustmt *s = &prog->ustmts[i];
		if (s->op == UT_US_EMIT && s->event < prog->nevents && prog->events[s->event].flow >= 0)
			u->samples_flow[prog->events[s->event].flow] = true;
	}
	return u;
}

void ut_user_side_kernel_maps(struct ut_user_side *u, struct bpf_object *obj)
{
	u->obj = obj;
}

/* A copy of map's entries that lasts until the hit ends. */
static const struct ut_map_entries *map_copy(struct ut_user_side *u, unsigned map)
{
	grow_array((void **)&u->copies, &u->copies_capacity, u->ncopies + 1, sizeof(*u->copies));
	struct ut_map_entries *es = &u->copies[u->ncopies++];
	ut_map_entries_read(u->prog, map, u->obj, u->maps, es);
	return es;
}

static void hit_ended(struct ut_user_side *u)
{
	for (size_t i = 0; i < u->ncopies; i++)
		ut_map_entries_free(&u->copies[i]);
	u->ncopies = 0;
}

struct bucket_count {
	uint64_t bucket;
	int64_t count;
};

static int by_bucket(const void *a, const void *b)
{
	uint64_t x = ((const struct bucket_count *)a)->bucket, y = ((const struct bucket_count *)b)->bucket;
	return x < y ? -1 : x > y;
}

/* percentile(map[key], ppm): over the buckets of the key (the key's last
 * 8 bytes, the bucket's place, are not compared). */
static int64_t percentile(struct ut_user_side *u, unsigned map, const unsigned char *key, uint32_t ppm)
{
	const struct ut_map *m = &u->prog->maps[map];
	struct ut_map_entries es;
	if (m->key_size < 8 || !ut_map_entries_read(u->prog, map, u->obj, u->maps, &es))
		return 0;
	struct bucket_count *v = xcalloc(es.n + 1, sizeof(*v));
	size_t n = 0;
	for (uint32_t i = 0; i < es.n; i++) {
		const unsigned char *e = es.entries + (size_t)i * es.stride;
		if (memcmp(e, key, m->key_size - 8) != 0)
			continue;
		memcpy(&v[n].bucket, e + m->key_size - 8, 8);
		memcpy(&v[n++].count, e + es.value_offset, 8);
	}
	qsort(v, n, sizeof(*v), by_bucket);
	uint64_t *buckets = xcalloc(n + 1, sizeof(*buckets));
	int64_t *counts = xcalloc(n + 1, sizeof(*counts));
	for (size_t i = 0; i < n; i++) {
		buckets[i] = v[i].bucket;
		counts[i] = v[i].count;
	}
	int64_t p = ut_hist_percentile(m, buckets, counts, n, ppm);
	free(buckets);
	free(counts);
	free(v);
	ut_map_entries_free(&es);
	return p;
}

void ut_user_side_free(struct ut_user_side *u)
{
	if (!u)
		return;
	hit_ended(u);
	free(u->copies);
	free(u->samples);
	free(u->samples_flow);
	free(u->prep);
	free(u->int_keys);
	free(u->slot_offset);
	free(u->int_at);
	free(u->locals);
	free(u->record);
	free(u->hit);
	ut_native_free(u->native);
	free(u);
}

/* xorshift64*: the kernel's bpf_get_prandom_u32 is no better a source */
static uint32_t next_random(struct ut_user_side *u)
{
	u->random ^= u->random >> 12;
	u->random ^= u->random << 25;
	u->random ^= u->random >> 27;
	return (uint32_t)((u->random * 0x2545f4914f6cdd1dull) >> 32);
}

static bool sampled(struct ut_user_side *u, uint32_t kind, uint64_t key, bool begin)
{
	if (u->sample_permyriad >= 10000)
		return true;
	if (!u->samples)
		u->samples = xcalloc(SAMPLE_SETS, sizeof(*u->samples));
	struct sample_set *set = &u->samples[hmap_hash(key, kind) & (SAMPLE_SETS - 1)];
	struct sample_slot *found = NULL;
	for (unsigned w = 0; w < SAMPLE_WAYS && !found; w++)
		if (set->way[w].used && set->way[w].key == key && set->way[w].kind == kind)
			found = &set->way[w];
	if (!begin)
		return found ? found->keep : true;
	if (!found) {
		found = &set->way[set->next];
		set->next = (uint8_t)((set->next + 1) % SAMPLE_WAYS);
	}
	*found = (struct sample_slot){.key = key, .kind = kind, .used = 1,
				      .keep = next_random(u) % 10000 < u->sample_permyriad};
	return found->keep;
}

bool ut_user_side_keeps(struct ut_user_side *u, const void *rec, size_t size)
{
	const struct ut_rec_hdr *h = rec;
	if (u->sample_permyriad >= 10000 || h->event >= u->prog->nevents)
		return true;   /* not sampling: every point is kept */
	const struct ut_event *ev = &u->prog->events[h->event];
	if (ev->flow < 0 || (unsigned)ev->flow >= u->prog->nflows || !u->samples_flow[ev->flow] ||
	    ev->key.kind != UT_VAL_FIELD || ev->key.field >= ev->nfields)
		return true;
	const struct ut_field *f = &ev->fields[ev->key.field];
	uint64_t key;
	if (f->offset + 8 > size)
		return true;
	memcpy(&key, (const unsigned char *)rec + f->offset, 8);
	return sampled(u, (uint32_t)ev->flow, key, ev->op == UT_EV_FLOW_BEGIN);
}

/* ---- one hit ---- */

/* The hit's statements, expressions, maps and events are as checked when
 * a program is loaded (compiler/program_io.c); what depends on the hit's
 * event (its captured fields and locals) is checked here: a slot or field
 * the event does not have reads as 0 or "" and takes no writes. */
struct hit {
	struct ut_user_side *u;
	struct ut_decoder *d;
	const struct ut_program *prog;
	const struct ut_uexpr *uexprs;   /* the program's */
	const struct ut_event *ev;
	const unsigned char *rec;
	const uint32_t *slot_offset;   /* the event's */
	const int32_t *int_at;         /* the event's */
	uint32_t steps;                /* left */
};

/* The helpers the native code has too (compiler/reader_ops.h): a string
 * value (struct str) is len bytes, none of them NUL, then (as far as its
 * array goes) NULs. */
typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
#include "compiler/reader_helpers.h"

static unsigned char *local_at(const struct hit *h, unsigned slot)
{
	return h->u->locals + h->slot_offset[slot];
}

static uint64_t local_int(const struct hit *h, unsigned slot)
{
	uint64_t v;
	memcpy(&v, local_at(h, slot), 8);
	return v;
}

static void set_local_int(const struct hit *h, unsigned slot, uint64_t v)
{
	memcpy(local_at(h, slot), &v, 8);
}

static inline uint64_t eval_int(struct hit *h, unsigned i);
static struct str eval_str(struct hit *h, unsigned i);

/* Writes the value of expression x into field f of the zeroed buffer at base. */
static void store_field(struct hit *h, unsigned x, const struct ut_field *f, unsigned char *base)
{
	if (f->type == UT_F_STR) {
		struct str s = eval_str(h, x);
		memcpy(base + f->offset, s.p, s.len < f->size ? s.len : f->size);
		return;
	}
	uint64_t v = eval_int(h, x);
	memcpy(base + f->offset, &v, 8);
}

static void map_key(struct hit *h, unsigned map, unsigned keys, unsigned nkeys, unsigned char *key)
{
	const struct ut_map *m = &h->prog->maps[map];
	if (h->u->int_keys[map]) {
		for (unsigned k = 0; k < nkeys; k++) {
			uint64_t v = eval_int(h, h->prog->ukeys[keys + k]);
			memcpy(key + 8 * k, &v, 8);
		}
		if (m->key_size > 8 * nkeys)   /* a bucket's place: aggregate writes it */
			memset(key + 8 * nkeys, 0, 8);
		return;
	}
	memset(key, 0, m->key_size);
	for (unsigned k = 0; k < nkeys && k < m->nkeys; k++)
		store_field(h, h->prog->ukeys[keys + k], &m->keys[k], key);
}

/* The value of map[keys], or NULL when absent. */
static const unsigned char *map_read(struct hit *h, const struct ut_uexpr *e)
{
	unsigned char key[UT_MAP_KEY_MAX];
	map_key(h, e->map, e->keys, e->nkeys, key);
	return ut_user_map_lookup(&h->u->maps->maps[e->map], key);
}

static uint64_t header_value(const struct hit *h, unsigned which)
{
	const struct ut_rec_hdr *hdr = (const void *)h->rec;
	switch (which) {
	case UT_UH_TS: return hdr->ts;
	case UT_UH_PID: return hdr->pid;
	case UT_UH_TID: return hdr->tid;
	case UT_UH_CPU: return hdr->cpu;
	default: return 0;
	}
}

static uint64_t truncated(uint64_t v, unsigned bytes, bool sgn)
{
#define TRUNCATE(n, to_signed, to_unsigned) \
	case n: return sgn ? to_signed(v) : to_unsigned(v);
	switch (bytes) {
	UT_UX_TRUNCATIONS(TRUNCATE)
	default: return v;
	}
#undef TRUNCATE
}

static uint64_t eval_operation(struct hit *h, const struct ut_uexpr *e);

/* Leaves, most of what is evaluated, where they are used; operations in
 * eval_operation. */
static inline uint64_t eval_int(struct hit *h, unsigned i)
{
	const struct ut_uexpr *e = &h->uexprs[i];
	uint64_t v;
	switch (e->op) {
	case UT_UX_INT: return (uint64_t)e->i;
	case UT_UX_ENUM: return (uint64_t)h->prog->enums[e->i].value;
	case UT_UX_CAPTURED:
		if (e->field >= h->ev->nfields || h->int_at[e->field] < 0)
			return 0;
		memcpy(&v, h->rec + h->int_at[e->field], 8);
		return v;
	case UT_UX_HEADER: return header_value(h, e->which);
	case UT_UX_LOCAL: return e->slot < h->ev->nlocals ? local_int(h, e->slot) : 0;
	default: return eval_operation(h, e);
	}
}

/* Operations with a key or strings to build, apart from eval_operation:
 * its arithmetic then needs no stack of theirs to set up. */
static __attribute__((noinline)) uint64_t eval_map_int(struct hit *h, const struct ut_uexpr *e)
{
	const unsigned char *v = map_read(h, e);
	uint64_t a = 0;
	if (v)
		memcpy(&a, v, 8);
	return a;
}

static __attribute__((noinline)) uint64_t eval_str_operation(struct hit *h, const struct ut_uexpr *e)
{
	if (e->op == UT_UX_STR_INT)
		return str_int(eval_str(h, e->a), e->n);
	return str_eq(eval_str(h, e->a), eval_str(h, e->b), e->n) == (e->op == UT_UX_STREQ);
}

static __attribute__((noinline)) uint64_t eval_percentile(struct hit *h, const struct ut_uexpr *e)
{
	unsigned char key[UT_MAP_KEY_MAX];
	map_key(h, e->map, e->keys, e->nkeys, key);
	return (uint64_t)percentile(h->u, e->map, key, (uint32_t)e->i);
}

static uint64_t eval_operation(struct hit *h, const struct ut_uexpr *e)
{
	uint64_t a, b;
	switch (e->op) {
	case UT_UX_MAP: return eval_map_int(h, e);
	case UT_UX_PERCENTILE: return eval_percentile(h, e);
	case UT_UX_NEG: return 0 - eval_int(h, e->a);
	case UT_UX_NOT: return !eval_int(h, e->a);
	case UT_UX_BITNOT: return ~eval_int(h, e->a);
	case UT_UX_BOOL: return !!eval_int(h, e->a);
	case UT_UX_LAND: return eval_int(h, e->a) && eval_int(h, e->b);
	case UT_UX_LOR: return eval_int(h, e->a) || eval_int(h, e->b);
	case UT_UX_COND: return eval_int(h, e->a) ? eval_int(h, e->b) : eval_int(h, e->c);
	case UT_UX_TRUNC: return truncated(eval_int(h, e->a), e->n, e->sgn);
	case UT_UX_STR_INT: case UT_UX_STREQ: case UT_UX_STRNE:
		return eval_str_operation(h, e);
#define BINARY_CASE(op, c) case op:
	UT_UX_BINARY_OPS(BINARY_CASE)
		break;
#undef BINARY_CASE
	default:   /* a string, or a leaf (eval_int's) */
		return 0;
	}
	a = eval_int(h, e->a);
	b = eval_int(h, e->b);
	switch (e->op) {
#define BINARY(op, c) case op: return c;
	UT_UX_BINARY_OPS(BINARY)
#undef BINARY
	default: return 0;
	}
}

static struct str eval_str(struct hit *h, unsigned i)
{
	const struct ut_uexpr *e = &h->uexprs[i];
	switch (e->op) {
	case UT_UX_STR:
		return (struct str){e->text, strlen(e->text)};
	case UT_UX_CAPTURED:
		if (e->field >= h->ev->nfields)
			return no_str;
		return str_in(h->rec + h->ev->fields[e->field].offset, h->ev->fields[e->field].size);
	case UT_UX_LOCAL:
		if (e->slot >= h->ev->nlocals)
			return no_str;
		return str_in(local_at(h, e->slot), ut_ulocal_capacity(&h->ev->locals[e->slot]));
	case UT_UX_MAP: {
		const unsigned char *v = map_read(h, e);
		return v ? str_in(v, h->prog->maps[e->map].value_size) : no_str;
	}
	case UT_UX_COND:
		return eval_int(h, e->a) ? eval_str(h, e->b) : eval_str(h, e->c);
	default:   /* an integer */
		return no_str;
	}
}

/* ---- statements ---- */

static void assign_local(struct hit *h, unsigned slot, unsigned x)
{
	if (slot >= h->ev->nlocals)
		return;
	const struct ut_ulocal *l = &h->ev->locals[slot];
	if (!l->is_str) {
		set_local_int(h, slot, eval_int(h, x));
		return;
	}
	struct str s = eval_str(h, x);
	size_t n = s.len < l->size ? s.len : l->size;
	unsigned char *to = local_at(h, slot);
	memmove(to, s.p, n);   /* s may be this local */
	memset(to + n, 0, ut_ulocal_bytes(l) - n);
}

static __attribute__((noinline)) void map_set(struct hit *h, const struct ut_ustmt *s)
{
	const struct ut_map *m = &h->prog->maps[s->map];
	/* the value first: it may be in this map, which the insert can move */
	unsigned char value[UT_MAP_VALUE_MAX], key[UT_MAP_KEY_MAX];
	struct ut_field f = {.type = ut_map_holds_string(m) ? UT_F_STR : UT_F_S64, .size = m->value_size};
	memset(value, 0, m->value_size);
	store_field(h, s->a, &f, value);
	map_key(h, s->map, s->keys, s->nkeys, key);
	void *to = ut_user_map_value(&h->u->maps->maps[s->map], key);
	if (to)
		memcpy(to, value, m->value_size);
}

/* The aggregation of map takes v under key (its bucket's, when it has
 * them: the key's last 8 bytes). */
static void take(struct ut_user_side *u, unsigned map, unsigned char *key, int64_t v)
{
	const struct ut_map *m = &u->prog->maps[map];
	const struct ut_agg_kind *kind = &ut_aggs[m->agg];
	if (kind->bucket) {
		uint64_t bucket = kind->bucket(v, m);
		memcpy(key + m->key_size - 8, &bucket, 8);
		v = 1;
	}
	ut_user_map_take(&u->maps->maps[map], key, kind, v);
}

static __attribute__((noinline)) void aggregate(struct hit *h, const struct ut_ustmt *s)
{
	unsigned char key[UT_MAP_KEY_MAX];
	int64_t v = ut_aggs[h->prog->maps[s->map].agg].nargs ? (int64_t)eval_int(h, s->a) : 1;
	map_key(h, s->map, s->keys, s->nkeys, key);
	take(h->u, s->map, key, v);
}

/* How a run of statements ended. */
enum ending { GO_ON, BREAK, CONTINUE, RETURN, OUT_OF_STEPS };

/* exit() ends the hit, as in the kernel. */
static __attribute__((noinline)) enum ending emit(struct hit *h, const struct ut_ustmt *s)
{
	const struct ut_event *ev = &h->prog->events[s->event];
	if (ev->op == UT_EV_HIT)   /* refused when loading: never run a hit inside a hit */
		return GO_ON;
	unsigned char *r = h->u->record;
	if (h->u->prep[s->event].zero_record)
		memset(r, 0, ev->size);
	struct ut_rec_hdr hdr = *(const struct ut_rec_hdr *)(const void *)h->rec;
	hdr.event = s->event;
	memcpy(r, &hdr, sizeof(hdr));
	for (unsigned f = 0; f < ev->nfields && f < s->nkeys; f++)
		store_field(h, h->prog->ukeys[s->keys + f], &ev->fields[f], r);
	ut_decode_record(h->d, r, ev->size);   /* which samples it (ut_user_side_keeps) */
	return ev->op == UT_EV_EXIT ? RETURN : GO_ON;
}

/* Counts a statement or a loop's turn against the hit's bound. */
static bool step(struct hit *h)
{
	if (!h->steps)
		return false;
	h->steps--;
	return true;
}

static enum ending run_list(struct hit *h, unsigned first, unsigned n);

/* A loop's turn: its step, then its body.  GO_ON: the next turn; BREAK:
 * out of the loop; else how the hit ends. */
static enum ending loop_turn(struct hit *h, const struct ut_ustmt *s)
{
	if (!step(h))
		return OUT_OF_STEPS;
	enum ending e = run_list(h, s->body, s->nbody);
	return e == CONTINUE ? GO_ON : e;
}

static enum ending run_for(struct hit *h, const struct ut_ustmt *s)
{
	if (s->slot >= h->ev->nlocals)
		return GO_ON;
	for (set_local_int(h, s->slot, eval_int(h, s->a)); (int64_t)local_int(h, s->slot) < (int64_t)eval_int(h, s->b);
	     set_local_int(h, s->slot, local_int(h, s->slot) + 1)) {
		enum ending e = loop_turn(h, s);
		if (e != GO_ON)
			return e == BREAK ? GO_ON : e;
	}
	return GO_ON;
}

/* The locals from slot on take entry e's key values, then its value. */
static void take_entry(struct hit *h, const struct ut_ustmt *s, const struct ut_map_entries *es, const unsigned char *e)
{
	const struct ut_map *m = &h->prog->maps[s->map];
	for (unsigned k = 0; k <= m->nkeys; k++) {
		unsigned slot = s->slot + k;
		if (slot >= h->ev->nlocals)
			return;
		const struct ut_ulocal *l = &h->ev->locals[slot];
		bool value = k == m->nkeys;
		const unsigned char *at = value ? e + es->value_offset : e + m->keys[k].offset;
		if (!l->is_str) {
			set_local_int(h, slot, ld8(at));
			continue;
		}
		struct str v = str_in(at, value ? m->value_size : m->keys[k].size);
		size_t n = v.len < l->size ? v.len : l->size;
		memcpy(local_at(h, slot), v.p, n);
		memset(local_at(h, slot) + n, 0, ut_ulocal_bytes(l) - n);
	}
}

/* for ($kv : @m): over a copy of the map's entries, so the body may change
 * the map (delete the entry it is at) */
static enum ending run_for_map(struct hit *h, const struct ut_ustmt *s)
{
	const struct ut_map_entries *es = map_copy(h->u, s->map);
	for (uint32_t i = 0; i < es->n; i++) {
		take_entry(h, s, es, es->entries + (size_t)i * es->stride);
		enum ending e = loop_turn(h, s);
		if (e != GO_ON)
			return e == BREAK ? GO_ON : e;
	}
	return GO_ON;
}

static __attribute__((noinline)) void map_add(struct hit *h, const struct ut_ustmt *s)
{
	unsigned char key[UT_MAP_KEY_MAX];
	int64_t v = (int64_t)eval_int(h, s->a);
	map_key(h, s->map, s->keys, s->nkeys, key);
	ut_user_map_add(&h->u->maps->maps[s->map], key, v);
}

static __attribute__((noinline)) void map_delete(struct hit *h, const struct ut_ustmt *s)
{
	unsigned char key[UT_MAP_KEY_MAX];
	map_key(h, s->map, s->keys, s->nkeys, key);
	ut_user_map_delete(&h->u->maps->maps[s->map], key);
}

/* The statements' work is in functions of their own (not inlined): the
 * dispatch, run for every statement, then has no key buffers to set up. */
static enum ending run_stmt(struct hit *h, const struct ut_ustmt *s)
{
	switch (s->op) {
	case UT_US_LOCAL:
		assign_local(h, s->slot, s->a);
		return GO_ON;
	case UT_US_MAP_SET:
		map_set(h, s);
		return GO_ON;
	case UT_US_MAP_ADD:
		map_add(h, s);
		return GO_ON;
	case UT_US_AGG:
		aggregate(h, s);
		return GO_ON;
	case UT_US_DELETE:
		map_delete(h, s);
		return GO_ON;
	case UT_US_IF:
		return eval_int(h, s->a) ? run_list(h, s->body, s->nbody) : run_list(h, s->body2, s->nbody2);
	case UT_US_FOR:
		return run_for(h, s);
	case UT_US_FOR_MAP:
		return run_for_map(h, s);
	case UT_US_BREAK: return BREAK;
	case UT_US_CONTINUE: return CONTINUE;
	case UT_US_RETURN: return RETURN;
	case UT_US_EMIT:
		return emit(h, s);
	default:
		return GO_ON;
	}
}

static enum ending run_list(struct hit *h, unsigned first, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (!step(h))
			return OUT_OF_STEPS;
		enum ending e = run_stmt(h, &h->prog->ustmts[first + i]);
		if (e != GO_ON)
			return e;
	}
	return GO_ON;
}

void ut_user_side_run(struct ut_user_side *u, struct ut_decoder *d, const void *rec, size_t size)
{
	const struct ut_rec_hdr *hdr = rec;
	const struct ut_event *ev = &u->prog->events[hdr->event];
	if (size < ev->size) {
		d->malformed++;
		return;
	}
	if (u->hit && u->hit[hdr->event]) {
		struct ut_native_env env = {u, d};
		if (u->hit[hdr->event](&env, rec))
			d->malformed++;
		hit_ended(u);
		return;
	}
	const struct event_prep *ep = &u->prep[hdr->event];
	struct hit h = {.u = u, .d = d, .prog = u->prog, .uexprs = u->prog->uexprs, .ev = ev, .rec = rec,
			.slot_offset = u->slot_offset + ep->first, .int_at = u->int_at + ep->first_field,
			.steps = UT_HIT_MAX_STEPS};
	if (ep->bytes)
		memset(u->locals, 0, ep->bytes);
	/* break or continue outside a loop ends the hit, as return does */
	if (run_list(&h, ev->body, ev->nbody) == OUT_OF_STEPS)
		d->malformed++;
	hit_ended(u);
}

/* ---- the compiled user side: what its code calls ---- */

static void *ut_native_lookup(struct ut_native_env *env, uint32_t map, const void *key)
{
	return ut_user_map_lookup(&env->u->maps->maps[map], key);
}

static void *ut_native_value(struct ut_native_env *env, uint32_t map, const void *key)
{
	return ut_user_map_value(&env->u->maps->maps[map], key);
}

static void ut_native_add(struct ut_native_env *env, uint32_t map, const void *key, int64_t v)
{
	ut_user_map_add(&env->u->maps->maps[map], key, v);
}

static void ut_native_take(struct ut_native_env *env, uint32_t map, void *key, int64_t v)
{
	take(env->u, map, key, v);
}

static void ut_native_delete(struct ut_native_env *env, uint32_t map, const void *key)
{
	ut_user_map_delete(&env->u->maps->maps[map], key);
}

static void ut_native_emit(struct ut_native_env *env, const void *record, uint32_t size)
{
	ut_decode_record(env->d, record, size);
}

static void ut_native_entries(struct ut_native_env *env, uint32_t map, struct ut_native_map_entries *out)
{
	const struct ut_map_entries *es = map_copy(env->u, map);
	*out = (struct ut_native_map_entries){es->entries, es->n, es->stride, es->value_offset};
}

static int64_t ut_native_percentile(struct ut_native_env *env, uint32_t map, const void *key, uint32_t ppm)
{
	return percentile(env->u, map, key, ppm);
}

static int64_t ut_native_enum(struct ut_native_env *env, uint32_t index)
{
	return env->u->prog->enums[index].value;
}

bool ut_user_side_compiled(struct ut_user_side *u, const void *obj, size_t len, char *err, size_t errlen)
{
#define CALL_ROW(f) {#f, (void *)f},
	const struct ut_native_symbol calls[] = {
		UT_NATIVE_CALLS(CALL_ROW)
		{"memcpy", (void *)memcpy}, {"memmove", (void *)memmove}, {"memset", (void *)memset},
		{"memcmp", (void *)memcmp},
	};
#undef CALL_ROW
	struct ut_native *n = ut_native_load(obj, len, calls, sizeof(calls) / sizeof(calls[0]), err, errlen);
	if (!n)
		return false;
	ut_native_hit_fn **hit = xcalloc(u->prog->nevents + 1, sizeof(*hit));
	for (unsigned e = 0; e < u->prog->nevents; e++) {
		char name[32];
		snprintf(name, sizeof(name), "ut_hit_%u", e);
		if (u->prog->events[e].op == UT_EV_HIT)
			hit[e] = (ut_native_hit_fn *)ut_native_find(n, name);
	}
	ut_native_free(u->native);
	free(u->hit);
	u->native = n;
	u->hit = hit;
	return true;
}

unsigned ut_user_side_compiled_events(const struct ut_user_side *u)
{
	unsigned n = 0;
	for (unsigned e = 0; u->hit && e < u->prog->nevents; e++)
		n += u->hit[e] != NULL;
	return n;
}

int ut_user_side_build(struct ut_user_side *u, char *err, size_t errlen)
{
	char *c_src = ut_gen_native(u->prog);
	if (!c_src)
		return 0;
	struct ut_object_build b = {.c_src = c_src, .host = true};
	ut_build_objects(&b, 1);
	bool loaded = b.rc == 0 && ut_user_side_compiled(u, b.obj, b.len, b.err, sizeof(b.err));
	if (!loaded)
		snprintf(err, errlen, "%s", b.err);
	free(b.obj);
	free(c_src);
	return loaded ? 1 : -1;
}

bool ut_user_side_interpret_asked(void)
{
	const char *interpret = getenv("UT_INTERPRET");
	return interpret && strcmp(interpret, "1") == 0;
}
