/* The reader's side of a script as C (gen_native.h).  Each expression and
 * statement is written as runtime/user_side.c runs it, with what the
 * interpreter looks up at each hit (a field's offset, a local's place, a
 * map's key layout, whether an index is in range) settled here: the same
 * values, order of evaluation, bounds and step count, so a hit gives the
 * same maps and records either way (tests/user_side compares them). */
#include "compiler/gen_native.h"

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "bpf/records.h"
#include "compiler/aggregations.h"
#include "compiler/reader_ops.h"

/* What every generated file starts with: types and the reader's calls;
 * then the helpers the interpreter compiles too (reader_helpers.h), and the
 * step count. */
static const char prelude[] =
	"typedef unsigned long long u64;\n"
	"typedef long long s64;\n"
	"typedef unsigned int u32;\n"
	"typedef unsigned short u16;\n"
	"typedef unsigned char u8;\n"
	"typedef __SIZE_TYPE__ size_t;\n"
	"struct ut_native_env;\n"
	"#define CALL __attribute__((visibility(\"hidden\")))\n"
	"CALL void *ut_native_lookup(struct ut_native_env *, u32 map, const void *key);\n"
	"CALL void *ut_native_value(struct ut_native_env *, u32 map, const void *key);\n"
	"CALL void ut_native_add(struct ut_native_env *, u32 map, const void *key, s64 v);\n"
	"CALL void ut_native_take(struct ut_native_env *, u32 map, void *key, s64 v);\n"
	"CALL void ut_native_delete(struct ut_native_env *, u32 map, const void *key);\n"
	"CALL void ut_native_emit(struct ut_native_env *, const void *record, u32 size);\n"
	"struct ut_native_map_entries { const u8 *entries; u32 n, stride, value_offset; };\n"
	"CALL void ut_native_entries(struct ut_native_env *, u32 map, struct ut_native_map_entries *out);\n"
	"CALL s64 ut_native_percentile(struct ut_native_env *, u32 map, const void *key, u32 ppm);\n"
	"CALL s64 ut_native_enum(struct ut_native_env *, u32 index);\n"
	"CALL void *memcpy(void *, const void *, size_t);\n"
	"CALL void *memmove(void *, const void *, size_t);\n"
	"CALL void *memset(void *, int, size_t);\n";
static const char steps[] = "#define STEP() do { if (!steps) goto out_of_steps; steps--; } while (0)\n";

struct ngen {
	const struct ut_program *p;
	const struct ut_event *ev;   /* the hit's */
	struct strbuf *b;
	unsigned names;              /* temporaries named so far */
	unsigned loops;              /* loops around the statement written */
};

static void int_expr(struct ngen *g, unsigned x);
static void str_expr(struct ngen *g, unsigned x);

static const struct ut_ulocal *local(const struct ngen *g, unsigned slot)
{
	return slot < g->ev->nlocals ? &g->ev->locals[slot] : NULL;
}

/* Writes the value of expression x into field f of the zeroed buffer base. */
static void store(struct ngen *g, unsigned x, const struct ut_field *f, const char *base)
{
	if (f->type == UT_F_STR) {
		sb_printf(g->b, "put_str(%s + %u, ", base, f->offset);
		str_expr(g, x);
		sb_printf(g->b, ", %u);\n", f->size);
		return;
	}
	sb_printf(g->b, "st8(%s + %u, ", base, f->offset);
	int_expr(g, x);
	sb_puts(g->b, ");\n");
}

/* Declares the key buffer `name` and fills it from keys..+nkeys. */
static void key(struct ngen *g, unsigned map, unsigned keys, unsigned nkeys, const char *name)
{
	const struct ut_map *m = &g->p->maps[map];
	unsigned size = m->key_size > 8 * nkeys + 8 ? m->key_size : 8 * nkeys + 8;
	sb_printf(g->b, "u8 %s[%u] __attribute__((aligned(8)));\n", name, (size + 7) & ~7u);
	if (ut_map_whole_int_keys(m)) {
		for (unsigned k = 0; k < nkeys; k++) {
			sb_printf(g->b, "st8(%s + %u, ", name, 8 * k);
			int_expr(g, keys + k < g->p->nukeys ? g->p->ukeys[keys + k] : g->p->nuexprs);
			sb_puts(g->b, ");\n");
		}
		if (m->key_size > 8 * nkeys)
			sb_printf(g->b, "st8(%s + %u, 0);\n", name, 8 * nkeys);
		return;
	}
	sb_printf(g->b, "memset(%s, 0, %u);\n", name, m->key_size);
	for (unsigned k = 0; k < nkeys && k < m->nkeys; k++)
		store(g, keys + k < g->p->nukeys ? g->p->ukeys[keys + k] : g->p->nuexprs, &m->keys[k], name);
}

/* map[keys]'s value: a pointer, NULL when absent. */
static void map_read(struct ngen *g, const struct ut_uexpr *e)
{
	char name[32];
	snprintf(name, sizeof(name), "k%u", g->names++);
	sb_puts(g->b, "({\n");
	key(g, e->map, e->keys, e->nkeys, name);
	sb_printf(g->b, "(const u8 *)ut_native_lookup(env, %u, %s); })", e->map, name);
}

/* map[keys]'s value as an integer (its first 8 bytes) or a string, 0 or
 * "" when absent. */
static void map_value(struct ngen *g, const struct ut_uexpr *e, bool str)
{
	if (e->map >= g->p->nmaps) {
		sb_puts(g->b, str ? "no_str" : "0");
		return;
	}
	unsigned v = g->names++;
	sb_printf(g->b, "({ const u8 *v%u = ", v);
	map_read(g, e);
	if (str)
		sb_printf(g->b, "; v%u ? str_in(v%u, %u) : no_str; })", v, v, g->p->maps[e->map].value_size);
	else
		sb_printf(g->b, "; v%u ? ld8(v%u) : 0; })", v, v);
}

/* Expression x, or NULL when there is none (its value is 0 or ""). */
static const struct ut_uexpr *expr(const struct ngen *g, unsigned x)
{
	return x < g->p->nuexprs ? &g->p->uexprs[x] : NULL;
}

#define BINARY_C(op, c) [op] = #c,
static const char *const binary_c[UT_UX_OP_COUNT] = {UT_UX_BINARY_OPS(BINARY_C)};
#undef BINARY_C

static const char *truncation(unsigned bytes, bool sgn)
{
#define TRUNCATION_C(n, to_signed, to_unsigned) \
	case n: return sgn ? #to_signed : #to_unsigned;
	switch (bytes) {
	UT_UX_TRUNCATIONS(TRUNCATION_C)
	default: return "";
	}
#undef TRUNCATION_C
}

static const unsigned header_offset[] = {
	[UT_UH_TS] = offsetof(struct ut_rec_hdr, ts), [UT_UH_PID] = offsetof(struct ut_rec_hdr, pid),
	[UT_UH_TID] = offsetof(struct ut_rec_hdr, tid), [UT_UH_CPU] = offsetof(struct ut_rec_hdr, cpu),
};

/* An operation on integers: user_side.c's eval_operation. */
static void operation(struct ngen *g, const struct ut_uexpr *e)
{
	struct strbuf *b = g->b;
	switch (e->op) {
	case UT_UX_NEG: case UT_UX_NOT: case UT_UX_BITNOT: case UT_UX_BOOL:
		sb_puts(b, e->op == UT_UX_NEG ? "(0 - " : e->op == UT_UX_NOT ? "(u64)!(" :
			   e->op == UT_UX_BITNOT ? "~(" : "(u64)!!(");
		int_expr(g, e->a);
		sb_puts(b, ")");
		return;
	case UT_UX_LAND: case UT_UX_LOR:
		sb_puts(b, "(u64)((");
		int_expr(g, e->a);
		sb_puts(b, e->op == UT_UX_LAND ? ") && (" : ") || (");
		int_expr(g, e->b);
		sb_puts(b, "))");
		return;
	case UT_UX_TRUNC:
		sb_printf(b, "%s(", truncation(e->n, e->sgn));
		int_expr(g, e->a);
		sb_puts(b, ")");
		return;
	case UT_UX_STR_INT:
		sb_puts(b, "str_int(");
		str_expr(g, e->a);
		sb_printf(b, ", %u)", e->n);
		return;
	case UT_UX_STREQ: case UT_UX_STRNE:
		sb_puts(b, "(u64)(str_eq(");
		str_expr(g, e->a);
		sb_puts(b, ", ");
		str_expr(g, e->b);
		sb_printf(b, ", %u) == %d)", e->n, e->op == UT_UX_STREQ);
		return;
	default:
		break;
	}
	if (e->op >= UT_UX_OP_COUNT || !binary_c[e->op]) {
		sb_puts(b, "0");   /* a string, in an integer's place */
		return;
	}
	/* the operands in the interpreter's order, then the operation */
	sb_puts(b, "({ u64 a = ");
	int_expr(g, e->a);
	sb_puts(b, "; u64 b = ");
	int_expr(g, e->b);
	sb_printf(b, "; %s; })", binary_c[e->op]);
}

/* Expression x as a string (struct str) or as a u64: user_side.c's
 * eval_str, and eval_int for leaves, where a value of the other kind
 * reads as "" or 0, a string local's first 8 bytes as an integer and an
 * integer local's 8 bytes as a string. */
static void value(struct ngen *g, unsigned x, bool str)
{
	struct strbuf *b = g->b;
	const struct ut_uexpr *e = expr(g, x);
	const struct ut_field *f = e && e->op == UT_UX_CAPTURED && e->field < g->ev->nfields ? &g->ev->fields[e->field]
											      : NULL;
	const struct ut_ulocal *l = e && e->op == UT_UX_LOCAL ? local(g, e->slot) : NULL;
	const char *none = str ? "no_str" : "0";
	switch (e ? e->op : UT_UX_OP_COUNT) {
	case UT_UX_INT:
		if (str)
			sb_puts(b, none);
		else
			sb_printf(b, "%lluull", (unsigned long long)e->i);
		return;
	case UT_UX_ENUM:
		if (str)
			sb_puts(b, none);
		else
			sb_printf(b, "(u64)ut_native_enum(env, %uu)", (unsigned)e->i);
		return;
	case UT_UX_STR:
		if (!str) {
			sb_puts(b, none);
			return;
		}
		sb_puts(b, "((struct str){\"");
		sb_c_string(b, e->text ? e->text : "");
		sb_printf(b, "\", %zu})", e->text ? strlen(e->text) : 0);
		return;
	case UT_UX_CAPTURED:
		if (f && str)
			sb_printf(b, "str_in(rec + %u, %u)", f->offset, f->size);
		else if (f && f->type != UT_F_STR)
			sb_printf(b, "ld8(rec + %u)", f->offset);
		else
			sb_puts(b, none);
		return;
	case UT_UX_HEADER:
		if (str || e->which >= sizeof(header_offset) / sizeof(header_offset[0]))
			sb_puts(b, none);
		else
			sb_printf(b, "%s(rec + %u)", e->which == UT_UH_TS ? "ld8" : "ld4", header_offset[e->which]);
		return;
	case UT_UX_LOCAL:
		if (l && str)
			sb_printf(b, "str_in(%sl%u, %u)", l->is_str ? "" : "&", e->slot, ut_ulocal_capacity(l));
		else if (l)
			sb_printf(b, l->is_str ? "ld8(l%u)" : "l%u", e->slot);
		else
			sb_puts(b, none);
		return;
	case UT_UX_MAP:
		map_value(g, e, str);
		return;
	case UT_UX_PERCENTILE: {
		if (str || e->map >= g->p->nmaps) {
			sb_puts(b, none);
			return;
		}
		char name[32];
		snprintf(name, sizeof(name), "k%u", g->names++);
		sb_puts(b, "({\n");
		key(g, e->map, e->keys, e->nkeys, name);
		sb_printf(b, "(u64)ut_native_percentile(env, %u, %s, %uu); })", e->map, name, (unsigned)e->i);
		return;
	}
	case UT_UX_COND:
		sb_puts(b, "((");
		int_expr(g, e->a);
		sb_puts(b, ") ? (");
		value(g, e->b, str);
		sb_puts(b, ") : (");
		value(g, e->c, str);
		sb_puts(b, "))");
		return;
	case UT_UX_OP_COUNT:
		sb_puts(b, none);
		return;
	default:
		if (str)
			sb_puts(b, none);   /* an integer, in a string's place */
		else
			operation(g, e);
	}
}

static void int_expr(struct ngen *g, unsigned x)
{
	value(g, x, false);
}

static void str_expr(struct ngen *g, unsigned x)
{
	value(g, x, true);
}

static void stmts(struct ngen *g, unsigned first, unsigned n);

static void assign_local(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_ulocal *l = local(g, s->slot);
	if (!l)
		return;
	if (!l->is_str) {
		sb_printf(g->b, "l%u = ", s->slot);
		int_expr(g, s->a);
		sb_puts(g->b, ";\n");
		return;
	}
	sb_puts(g->b, "{\nstruct str s = ");
	str_expr(g, s->a);
	sb_printf(g->b, ";\nu64 n = s.len < %u ? s.len : %u;\n", l->size, l->size);
	sb_printf(g->b, "memmove(l%u, s.p, n);\nmemset(l%u + n, 0, %u - n);\n}\n", s->slot, s->slot,
		  ut_ulocal_bytes(l));
}

static void map_set(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_map *m = &g->p->maps[s->map];
	struct ut_field f = {.type = ut_map_holds_string(m) ? UT_F_STR : UT_F_S64, .size = m->value_size};
	/* the value first: it may be in this map, which the insert can move */
	sb_printf(g->b, "{\nu8 value[%u] __attribute__((aligned(8)));\nmemset(value, 0, %u);\n",
		  (m->value_size + 15) & ~7u, m->value_size);
	store(g, s->a, &f, "value");
	key(g, s->map, s->keys, s->nkeys, "key");
	sb_printf(g->b, "u8 *to = ut_native_value(env, %u, key);\nif (to)\nmemcpy(to, value, %u);\n}\n", s->map,
		  m->value_size);
}

/* `+=`, an aggregation, delete: the value first, then the key. */
static void map_update(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_map *m = &g->p->maps[s->map];
	sb_puts(g->b, "{\ns64 v = ");
	if (s->op == UT_US_DELETE || (s->op == UT_US_AGG && !ut_aggs[m->agg].nargs))
		sb_puts(g->b, "1");
	else
		int_expr(g, s->a);
	sb_puts(g->b, ";\n(void)v;\n");
	key(g, s->map, s->keys, s->nkeys, "key");
	if (s->op == UT_US_MAP_ADD)
		sb_printf(g->b, "ut_native_add(env, %u, key, v);\n}\n", s->map);
	else if (s->op == UT_US_AGG)
		sb_printf(g->b, "ut_native_take(env, %u, key, v);\n}\n", s->map);
	else
		sb_printf(g->b, "ut_native_delete(env, %u, key);\n}\n", s->map);
}

static void emit(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_event *ev = &g->p->events[s->event];
	if (ev->op == UT_EV_HIT)   /* refused when loading, as in the interpreter */
		return;
	sb_printf(g->b, "{\nu8 r[%u] __attribute__((aligned(8)));\nmemset(r, 0, %u);\n", ev->size, ev->size);
	sb_printf(g->b, "memcpy(r, rec, %zu);\nst4(r + %zu, %u);\n", sizeof(struct ut_rec_hdr),
		  offsetof(struct ut_rec_hdr, event), s->event);
	for (unsigned f = 0; f < ev->nfields && f < s->nkeys; f++)
		store(g, s->keys + f < g->p->nukeys ? g->p->ukeys[s->keys + f] : g->p->nuexprs, &ev->fields[f], "r");
	sb_printf(g->b, "ut_native_emit(env, r, %u);\n", ev->size);
	if (ev->op == UT_EV_EXIT)
		sb_puts(g->b, "return 0;\n");
	sb_puts(g->b, "}\n");
}

static void loop(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_ulocal *l = local(g, s->slot);
	if (!l)
		return;
	char get[32], set[32];
	snprintf(get, sizeof(get), l->is_str ? "ld8(l%u)" : "l%u", s->slot);
	snprintf(set, sizeof(set), l->is_str ? "st8(l%u, (" : "(l%u = (", s->slot);
	sb_printf(g->b, "for (%s", set);
	int_expr(g, s->a);
	sb_printf(g->b, ")); (s64)%s < (s64)(", get);
	int_expr(g, s->b);
	sb_printf(g->b, "); %s%s + 1))) {\nSTEP();\n", set, get);
	g->loops++;
	stmts(g, s->body, s->nbody);
	g->loops--;
	sb_puts(g->b, "}\n");
}

/* A local takes the value at `from` (an expression of a const u8 *): an
 * integer's 8 bytes, or a string of at most cap bytes. */
static void take_value(struct ngen *g, unsigned slot, const char *from, uint32_t cap)
{
	const struct ut_ulocal *l = local(g, slot);
	if (!l)
		return;
	if (!l->is_str) {
		sb_printf(g->b, "l%u = ld8(%s);\n", slot, from);
		return;
	}
	sb_printf(g->b, "{\nstruct str s = str_in(%s, %u);\nu64 n = s.len < %u ? s.len : %u;\n", from, cap, l->size,
		  l->size);
	sb_printf(g->b, "memcpy(l%u, s.p, n);\nmemset(l%u + n, 0, %u - n);\n}\n", slot, slot, ut_ulocal_bytes(l));
}

/* for ($kv : @m) over a copy of its entries: user_side.c's run_for_map */
static void map_loop(struct ngen *g, const struct ut_ustmt *s)
{
	const struct ut_map *m = &g->p->maps[s->map];
	unsigned v = g->names++;
	sb_printf(g->b, "{\nstruct ut_native_map_entries m%u;\nut_native_entries(env, %u, &m%u);\n", v, s->map, v);
	sb_printf(g->b, "for (u32 i%u = 0; i%u < m%u.n; i%u++) {\nSTEP();\n", v, v, v, v);
	sb_printf(g->b, "const u8 *e%u = m%u.entries + (u64)i%u * m%u.stride;\n", v, v, v, v);
	for (unsigned k = 0; k <= m->nkeys && local(g, s->slot + k); k++) {
		char from[64];
		if (k < m->nkeys)
			snprintf(from, sizeof(from), "e%u + %u", v, m->keys[k].offset);
		else
			snprintf(from, sizeof(from), "e%u + m%u.value_offset", v, v);
		take_value(g, s->slot + k, from, k < m->nkeys ? m->keys[k].size : m->value_size);
	}
	g->loops++;
	stmts(g, s->body, s->nbody);
	g->loops--;
	sb_puts(g->b, "}\n}\n");
}

static void stmt(struct ngen *g, const struct ut_ustmt *s)
{
	switch (s->op) {
	case UT_US_LOCAL:
		assign_local(g, s);
		return;
	case UT_US_MAP_SET:
		if (s->map < g->p->nmaps)
			map_set(g, s);
		return;
	case UT_US_MAP_ADD: case UT_US_AGG: case UT_US_DELETE:
		if (s->map < g->p->nmaps)
			map_update(g, s);
		return;
	case UT_US_IF:
		sb_puts(g->b, "if (");
		int_expr(g, s->a);
		sb_puts(g->b, ") {\n");
		stmts(g, s->body, s->nbody);
		sb_puts(g->b, "} else {\n");
		stmts(g, s->body2, s->nbody2);
		sb_puts(g->b, "}\n");
		return;
	case UT_US_FOR:
		loop(g, s);
		return;
	case UT_US_FOR_MAP:
		if (s->map < g->p->nmaps)
			map_loop(g, s);
		return;
	case UT_US_BREAK: case UT_US_CONTINUE:
		/* outside a loop, they end the hit as return does */
		sb_puts(g->b, !g->loops ? "return 0;\n" : s->op == UT_US_BREAK ? "break;\n" : "continue;\n");
		return;
	case UT_US_RETURN:
		sb_puts(g->b, "return 0;\n");
		return;
	case UT_US_EMIT:
		if (s->event < g->p->nevents)
			emit(g, s);
		return;
	default:
		return;
	}
}

/* Each statement counts a step first, as in the interpreter's run_list. */
static void stmts(struct ngen *g, unsigned first, unsigned n)
{
	for (unsigned i = 0; i < n && first + i < g->p->nustmts; i++) {
		sb_puts(g->b, "STEP();\n");
		stmt(g, &g->p->ustmts[first + i]);
	}
}

static void hit_function(struct ngen *g, unsigned event)
{
	const struct ut_event *ev = g->ev = &g->p->events[event];
	struct strbuf *b = g->b;
	sb_printf(b, "\n/* ");
	sb_c_comment(b, ev->category ? ev->category : "");
	sb_printf(b, " */\nint ut_hit_%u(struct ut_native_env *env, const u8 *rec)\n{\n", event);
	sb_printf(b, "u32 steps = %uu;\n", UT_HIT_MAX_STEPS);
	/* zeroed at each hit: the interpreter zeroes its locals when one may
	 * be read before it is set, and none is read otherwise */
	for (unsigned s = 0; s < ev->nlocals; s++)
		if (ev->locals[s].is_str)
			sb_printf(b, "u8 l%u[%u] __attribute__((aligned(8))) = {0};\n", s, ut_ulocal_bytes(&ev->locals[s]));
		else
			sb_printf(b, "u64 l%u = 0;\n", s);
	stmts(g, ev->body, ev->nbody);
	sb_puts(b, "return 0;\nout_of_steps: __attribute__((unused));\nreturn 1;\n}\n");
}

char *ut_gen_native(const struct ut_program *p)
{
	struct strbuf b = {0};
	struct ngen g = {.p = p, .b = &b};
	sb_puts(&b, "/* The reader's side of a uring-trace script (compiler/gen_native.c). */\n");
	sb_puts(&b, prelude);
	sb_puts(&b, ut_reader_helpers_c);
	sb_puts(&b, steps);
	if (!ut_program_has_user_side(p)) {
		sb_free(&b);
		return NULL;
	}
	for (unsigned e = 0; e < p->nevents; e++)
		if (ut_event_has_user_side(&p->events[e]))
			hit_function(&g, e);
	return b.s;
}
