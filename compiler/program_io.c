/* .uto files: a compiled script (its tables) and its BPF object, so a
 * script compiled once runs on other hosts and kernels without clang.
 *
 * Layout: the magic UT_PROGRAM_MAGIC, then the program's tables,
 * little-endian, as program_fields.c describes them (strings are a u32
 * length and bytes, 0xffffffff for NULL); then the user side's C hash,
 * its object's hash and the object (u64 length, bytes); the BPF object
 * comes last.  Reading checks every length against what is left, so a
 * damaged file is an error, never a crash; then what the runtime trusts
 * (indexes, formats, the user side's order) is checked here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "compiler/aggregations.h"
#include "compiler/gen_native.h"
#include "compiler/program.h"
#include "compiler/program_fields.h"
#include "compiler/program_io.h"

/* A record's bytes: fields end by 65536 + 4096 */
#define RECORD_MAX (1u << 17)

void ut_program_save(const struct ut_program *p, const struct ut_program_objects *objs, void **out, size_t *out_len)
{
	struct pf_writer w = {0};
	pf_write(&w, UT_PROGRAM_MAGIC, 4);
	pf_save(&w, p);
	pf_write_u64(&w, objs->user_c_hash);
	pf_write_u64(&w, ut_hash_bytes(UT_HASH_INIT, objs->user, objs->user_len));
	pf_write_u64(&w, objs->user_len);
	if (objs->user_len)
		pf_write(&w, objs->user, objs->user_len);
	pf_write_u64(&w, objs->bpf_len);
	pf_write(&w, objs->bpf, objs->bpf_len);
	*out = w.buf;
	*out_len = w.len;
}

/* ---- reading ---- */

/* A format's directives as the compiler allows them: the decoder hands
 * them to snprintf (where %n would write through a value, and a width of
 * 10^9 takes seconds). */
static bool format_ok(const char *f)
{
	struct ut_directive d;
	for (const char *p = f ? f : ""; (p = ut_format_next(p, &d)); p += d.len)
		if (!d.conv || !strchr(UT_FORMAT_CONVERSIONS, d.conv) || d.widest > UT_FORMAT_MAX_WIDTH)
			return false;
	return true;
}

/* Field and value indexes must stay inside their arrays: the decoder
 * trusts them. */
static bool value_ok(const struct ut_value *v, unsigned nfields, unsigned ntables)
{
	if (v->kind == UT_VAL_FIELD && v->field >= nfields)
		return false;
	if (v->kind == UT_VAL_FORMAT && !format_ok(v->text))
		return false;
	if (v->display == UT_SHOW_TABLE && (v->table < 0 || (unsigned)v->table >= ntables))
		return false;
	for (unsigned i = 0; i < v->nfmt; i++)
		if (!value_ok(&v->fmt[i], nfields, ntables))
			return false;
	return true;
}

/* ---- the user side (split execution) ----
 * Checked so that the evaluator (runtime/user_side.c) can trust it:
 * indexes inside their arrays, operands of the kinds their ops take,
 * operands before the expressions that use them and bodies after their
 * statements, each statement in one body at most (so nothing loops, and
 * checking takes one pass), depths bounded.  What depends on the event of
 * a hit (its captured fields and locals) the evaluator checks as it runs. */

/* Key fields of a user-side map, fields of an event the user side emits:
 * each use lists them all, and is checked field by field. */
#define UKEYS_MAX 128
#define EMIT_FIELDS_MAX 1024

static bool expr_is(const struct ut_program *p, unsigned x, unsigned before, bool is_str)
{
	return x < before && p->uexprs[x].is_str == is_str;
}

/* n expressions listed in ukeys from keys, each before `before`, of the
 * kinds of the fields they fill. */
static bool ukeys_ok(const struct ut_program *p, unsigned keys, unsigned n, const struct ut_field *fields,
		     unsigned before)
{
	if (keys > p->nukeys || n > p->nukeys - keys)
		return false;
	for (unsigned k = 0; k < n; k++)
		if (!expr_is(p, p->ukeys[keys + k], before, fields[k].type == UT_F_STR))
			return false;
	return true;
}

static bool umap_ok(const struct ut_program *p, unsigned map, unsigned keys, unsigned nkeys, unsigned before)
{
	return map < p->nmaps && p->maps[map].user_side && nkeys == p->maps[map].nkeys &&
	       ukeys_ok(p, keys, nkeys, p->maps[map].keys, before);
}

/* depth[x]: the longest chain of operands from expression x down. */
static bool uexpr_ok(const struct ut_program *p, unsigned i, uint8_t *depth)
{
	const struct ut_uexpr *e = &p->uexprs[i];
	bool ok;
	switch (e->op) {
	case UT_UX_INT: ok = !e->is_str; break;
	case UT_UX_ENUM: ok = !e->is_str && e->i >= 0 && (uint64_t)e->i < p->nenums; break;
	case UT_UX_HEADER: ok = !e->is_str && e->which <= UT_UH_CPU; break;
	case UT_UX_STR: ok = e->is_str && e->text; break;
	case UT_UX_CAPTURED: case UT_UX_LOCAL: ok = true; break;
	case UT_UX_MAP:
		ok = umap_ok(p, e->map, e->keys, e->nkeys, i) && e->is_str == ut_map_holds_string(&p->maps[e->map]);
		break;
	case UT_UX_PERCENTILE:   /* of either side's histogram */
		ok = !e->is_str && e->map < p->nmaps && ut_aggs[p->maps[e->map].agg].bucket &&
		     e->nkeys == p->maps[e->map].nkeys && ukeys_ok(p, e->keys, e->nkeys, p->maps[e->map].keys, i);
		break;
	case UT_UX_NEG: case UT_UX_NOT: case UT_UX_BITNOT: case UT_UX_BOOL: case UT_UX_TRUNC:
		ok = !e->is_str && expr_is(p, e->a, i, false);
		break;
	case UT_UX_STR_INT:
		ok = !e->is_str && e->n <= 8 && expr_is(p, e->a, i, true);
		break;
	case UT_UX_STREQ: case UT_UX_STRNE:
		ok = !e->is_str && expr_is(p, e->a, i, true) && expr_is(p, e->b, i, true);
		break;
	case UT_UX_COND:
		ok = expr_is(p, e->a, i, false) && expr_is(p, e->b, i, e->is_str) && expr_is(p, e->c, i, e->is_str);
		break;
	default:   /* two integers */
		ok = e->op < UT_UX_OP_COUNT && !e->is_str && expr_is(p, e->a, i, false) && expr_is(p, e->b, i, false);
	}
	if (!ok)
		return false;
	unsigned ops[3], deepest = 0, nops = ut_uexpr_operands(e, ops);
	for (unsigned k = 0; k < nops; k++)
		if (depth[ops[k]] > deepest)
			deepest = depth[ops[k]];
	for (unsigned k = 0; ut_uexpr_has_keys(e) && k < e->nkeys; k++)
		if (depth[p->ukeys[e->keys + k]] > deepest)
			deepest = depth[p->ukeys[e->keys + k]];
	depth[i] = (uint8_t)(deepest + 1);
	return deepest < UT_UEXPR_MAX_DEPTH;
}

/* A body of statement i: after it, and in no other body (inside). */
static bool body_ok(const struct ut_program *p, unsigned i, unsigned body, unsigned n, uint8_t *depth, bool *inside)
{
	if (!n)
		return true;
	if (body <= i || body > p->nustmts || n > p->nustmts - body)
		return false;
	for (unsigned j = body; j < body + n; j++) {
		if (inside[j])
			return false;
		inside[j] = true;
		if (depth[j] >= depth[i])
			depth[i] = (uint8_t)(depth[j] + 1);
	}
	return true;
}

/* depth[s]: the bodies nested from statement s down (its bodies are
 * checked before it). */
static bool ustmt_ok(const struct ut_program *p, unsigned i, uint8_t *depth, bool *inside)
{
	const struct ut_ustmt *s = &p->ustmts[i];
	unsigned nx = p->nuexprs;
	bool map = umap_ok(p, s->map, s->keys, s->nkeys, nx);
	const struct ut_map *m = map ? &p->maps[s->map] : NULL;
	const struct ut_event *ev = s->event < p->nevents ? &p->events[s->event] : NULL;
	bool ok;
	depth[i] = 1;
	switch (s->op) {
	case UT_US_LOCAL: ok = s->a < nx; break;
	case UT_US_MAP_SET: ok = map && m->agg == UT_AGG_LAST && expr_is(p, s->a, nx, ut_map_holds_string(m)); break;
	case UT_US_MAP_ADD:
		ok = map && m->agg == UT_AGG_LAST && !ut_map_holds_string(m) && expr_is(p, s->a, nx, false);
		break;
	case UT_US_AGG: ok = map && m->agg != UT_AGG_LAST && (!ut_aggs[m->agg].nargs || expr_is(p, s->a, nx, false)); break;
	case UT_US_DELETE: ok = map; break;
	case UT_US_IF:
		ok = expr_is(p, s->a, nx, false) && body_ok(p, i, s->body, s->nbody, depth, inside) &&
		     body_ok(p, i, s->body2, s->nbody2, depth, inside);
		break;
	case UT_US_FOR:
		ok = expr_is(p, s->a, nx, false) && expr_is(p, s->b, nx, false) &&
		     body_ok(p, i, s->body, s->nbody, depth, inside);
		break;
	case UT_US_FOR_MAP:   /* over either side's map of values, counts, sums, averages, minima, maxima */
		ok = s->map < p->nmaps && p->maps[s->map].nkeys && !p->maps[s->map].ntuple &&
		     !ut_aggs[p->maps[s->map].agg].bucket && !ut_aggs[p->maps[s->map].agg].value_text &&
		     body_ok(p, i, s->body, s->nbody, depth, inside);
		break;
	case UT_US_BREAK: case UT_US_CONTINUE: case UT_US_RETURN: ok = true; break;
	case UT_US_EMIT:
		ok = ev && ev->op != UT_EV_HIT && ev->nfields <= EMIT_FIELDS_MAX && s->nkeys == ev->nfields &&
		     ukeys_ok(p, s->keys, s->nkeys, ev->fields, nx);
		break;
	default: ok = false;
	}
	return ok && depth[i] <= UT_USTMT_MAX_DEPTH;
}

static bool user_side_ok(const struct ut_program *p)
{
	for (unsigned i = 0; i < p->nmaps; i++) {
		const struct ut_map *m = &p->maps[i];
		bool hist = ut_aggs[m->agg].bucket != NULL;
		uint32_t value = ut_map_holds_string(m) ? 1 : ut_aggs[m->agg].value_size;
		if (!m->user_side)
			continue;
		if (m->bpf_name || m->nkeys > UKEYS_MAX || m->value_size < value || (hist && m->key_size < 8))
			return false;
		for (unsigned k = 0; k < m->nkeys; k++)   /* clear of the bucket */
			if (hist && m->keys[k].offset + m->keys[k].size > m->key_size - 8)
				return false;
	}
	for (unsigned i = 0; i < p->nevents; i++) {
		const struct ut_event *e = &p->events[i];
		if (e->op == UT_EV_HIT && e->nbody && (e->body > p->nustmts || e->nbody > p->nustmts - e->body))
			return false;
	}
	uint8_t *depth = xcalloc(p->nuexprs + p->nustmts + 1, 1);
	bool *inside = xcalloc(p->nustmts + 1, sizeof(*inside));
	bool ok = true;
	for (unsigned i = 0; ok && i < p->nuexprs; i++)
		ok = uexpr_ok(p, i, depth);
	for (unsigned i = p->nustmts; ok && i-- > 0;)
		ok = ustmt_ok(p, i, depth + p->nuexprs, inside);
	free(depth);
	free(inside);
	return ok;
}

static bool program_ok(const struct ut_program *p)
{
	for (unsigned i = 0; i < p->nprobes; i++)
		for (unsigned a = 0; a < p->probes[i].nalts; a++)
			if (p->probes[i].alts[a].kind >= UT_PROBE_KIND_COUNT || !p->probes[i].alts[a].prog_name ||
			    !p->probes[i].alts[a].target)
				return false;
	for (unsigned i = 0; i < p->nevents; i++) {
		const struct ut_event *e = &p->events[i];
		/* a size the compiler gives: records follow one another in a
		 * sample, and the decoder reads each one's header where it is */
		if (e->op >= UT_EV_OP_COUNT || e->size < 24 || e->size > RECORD_MAX || e->size % 8 || !e->category)
			return false;
		for (unsigned a = 0; a < e->nargs; a++)
			if (!e->args[a].name)
				return false;
		for (unsigned f = 0; f < e->nfields; f++)
			if (e->fields[f].offset + e->fields[f].size > e->size)
				return false;
		if (!value_ok(&e->name, e->nfields, p->ntables) || !value_ok(&e->group_key, e->nfields, p->ntables) ||
		    !value_ok(&e->key, e->nfields, p->ntables))
			return false;
		if ((e->group >= 0 && (unsigned)e->group >= p->ngroups) || (e->flow >= 0 && (unsigned)e->flow >= p->nflows))
			return false;
		if (e->key.kind == UT_VAL_FIELD && e->fields[e->key.field].type == UT_F_STR)
			return false;   /* a flow or span key is a number */
		for (unsigned a = 0; a < e->nargs; a++)
			if (!value_ok(&e->args[a].value, e->nfields, p->ntables))
				return false;
		/* a finding's tag, and its severity, message and fix (enum ut_finding_arg) */
		if (e->op == UT_EV_FINDING && (e->name.kind != UT_VAL_TEXT || !e->name.text || e->nargs < UT_FINDING_PARTS))
			return false;
	}
	for (unsigned i = 0; i < p->nmaps; i++) {
		const struct ut_map *m = &p->maps[i];
		if (!m->name || (!m->bpf_name && !m->user_side) || m->agg >= UT_AGG_KINDS || m->key_size > UT_MAP_KEY_MAX ||
		    m->value_size > UT_MAP_VALUE_MAX)
			return false;
		for (unsigned k = 0; k < m->nkeys; k++)
			if (m->keys[k].offset + m->keys[k].size > m->key_size || !value_ok(&m->key_show[k], m->nkeys, p->ntables))
				return false;
		/* a tuple: a plain value in BPF (the reader's maps hold none) */
		if (m->ntuple && (m->agg != UT_AGG_LAST || m->user_side))
			return false;
		for (unsigned k = 0; k < m->ntuple; k++)
			if (m->tuple_fields[k].offset + m->tuple_fields[k].size > m->value_size ||
			    !value_ok(&m->tuple_show[k], m->ntuple, p->ntables))
				return false;
	}
	return user_side_ok(p);
}

/* Whether code built from C of hash c_hash was built from p's: its C,
 * written again (a millisecond for the default script), has that hash. */
static bool built_from(const struct ut_program *p, uint64_t c_hash)
{
	char *c_src = ut_gen_native(p);
	bool same = c_src && ut_hash_bytes(UT_HASH_INIT, c_src, strlen(c_src) + 1) == c_hash;
	free(c_src);
	return same;
}

struct ut_program *ut_program_load(const void *data, size_t len, struct ut_program_objects *objs, char *err,
				   size_t errlen)
{
	if (len < 4 || memcmp(data, UT_PROGRAM_MAGIC, 3) != 0) {
		snprintf(err, errlen, "not a compiled uring-trace script (no %s header)", UT_PROGRAM_MAGIC);
		return NULL;
	}
	if (memcmp(data, UT_PROGRAM_MAGIC, 4) != 0) {
		snprintf(err, errlen, "compiled by another version of uring-trace (format %.4s, this one reads %s); compile the script again with --compile",
			 (const char *)data, UT_PROGRAM_MAGIC);
		return NULL;
	}
	struct byte_reader in = {.p = (const unsigned char *)data + 4, .left = len - 4};
	struct ut_program *p = xcalloc(1, sizeof(*p));
	pf_load(&in, p);
	*objs = (struct ut_program_objects){.user_c_hash = byte_u64(&in)};
	uint64_t user_hash = byte_u64(&in), n = byte_u64(&in);
	const void *user = byte_take(&in, (size_t)n);
	/* damaged code is not run: the reader interprets instead */
	if (user && n && ut_hash_bytes(UT_HASH_INIT, user, (size_t)n) == user_hash) {
		objs->user = user;
		objs->user_len = (size_t)n;
	}
	n = byte_u64(&in);
	if (in.bad || n != in.left || !program_ok(p)) {
		snprintf(err, errlen, "the compiled script is damaged or from another version of uring-trace");
		ut_program_free(p);
		return NULL;
	}
	objs->bpf = in.p;
	objs->bpf_len = (size_t)n;
	if (objs->user_len && !built_from(p, objs->user_c_hash)) {   /* another program's: interpreted */
		objs->user = NULL;
		objs->user_len = 0;
	}
	for (unsigned i = 0; i < p->nevents; i++)
		ut_event_index_sched(&p->events[i]);
	return p;
}
