/* .uto files: a compiled script (its tables) and its BPF object, so a
 * script compiled once runs on other hosts and kernels without clang.
 *
 * Layout: the magic UT_PROGRAM_MAGIC ("UTO5"), then little-endian fields written in the order
 * of struct ut_program; strings are a u32 length and bytes (0xffffffff for
 * NULL); then the user side's C hash, its object's hash and the object
 * (u64 length, bytes); the BPF object comes last.  Reading checks every length against
 * what is left, so a damaged file is an error, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "base/hash.h"
#include "compiler/aggregations.h"
#include "compiler/gen_native.h"
#include "compiler/program.h"
#include "compiler/program_io.h"

#define NO_STRING 0xffffffffu
/* A record's bytes: fields end by 65536 + 4096 */
#define RECORD_MAX (1u << 17)

struct writer {
	unsigned char *buf;
	size_t len, cap;
	bool failed;
};

static void w_bytes(struct writer *w, const void *p, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n)
			cap *= 2;
		unsigned char *b = realloc(w->buf, cap);
		if (!b) {
			w->failed = true;
			return;
		}
		w->buf = b;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void w_u32(struct writer *w, uint32_t v) { w_bytes(w, &v, 4); }
static void w_u64(struct writer *w, uint64_t v) { w_bytes(w, &v, 8); }

static void w_str(struct writer *w, const char *s)
{
	if (!s) {
		w_u32(w, NO_STRING);
		return;
	}
	uint32_t n = (uint32_t)strlen(s);
	w_u32(w, n);
	w_bytes(w, s, n);
}

static void w_loc(struct writer *w, struct ut_loc l)
{
	w_str(w, l.file);
	w_u32(w, (uint32_t)l.line);
	w_u32(w, (uint32_t)l.col);
}

static void w_value(struct writer *w, const struct ut_value *v)
{
	w_u32(w, v->kind);
	w_u32(w, v->field);
	w_u32(w, v->display);
	w_u32(w, (uint32_t)v->table);
	w_str(w, v->text);
	w_u32(w, v->nfmt);
	for (unsigned i = 0; i < v->nfmt; i++)
		w_value(w, &v->fmt[i]);
}

static void w_fields(struct writer *w, const struct ut_field *f, unsigned n)
{
	w_u32(w, n);
	for (unsigned i = 0; i < n; i++) {
		w_u32(w, f[i].type);
		w_u32(w, f[i].offset);
		w_u32(w, f[i].size);
	}
}

static void w_strv(struct writer *w, char **v, unsigned n)
{
	w_u32(w, n);
	for (unsigned i = 0; i < n; i++)
		w_str(w, v[i]);
}

static void w_uexpr(struct writer *w, const struct ut_uexpr *e)
{
	w_u32(w, e->op);
	w_u32(w, e->is_str);
	w_u32(w, e->sgn);
	w_u32(w, e->n);
	w_u32(w, e->a);
	w_u32(w, e->b);
	w_u32(w, e->c);
	w_u64(w, (uint64_t)e->i);
	w_str(w, e->text);
	w_u32(w, e->field);
	w_u32(w, e->which);
	w_u32(w, e->slot);
	w_u32(w, e->map);
	w_u32(w, e->keys);
	w_u32(w, e->nkeys);
}

static void w_ustmt(struct writer *w, const struct ut_ustmt *s)
{
	w_u32(w, s->op);
	w_loc(w, s->loc);
	w_u32(w, s->a);
	w_u32(w, s->b);
	w_u32(w, s->slot);
	w_u32(w, s->map);
	w_u32(w, s->keys);
	w_u32(w, s->nkeys);
	w_u32(w, s->event);
	w_u32(w, s->body);
	w_u32(w, s->nbody);
	w_u32(w, s->body2);
	w_u32(w, s->nbody2);
}

int ut_program_save(const struct ut_program *p, const struct ut_program_objects *objs, void **out, size_t *out_len)
{
	struct writer w = {0};
	w_bytes(&w, UT_PROGRAM_MAGIC, 4);
	w_strv(&w, p->strings, p->nstrings);
	w_u32(&w, p->nprobes);
	for (unsigned i = 0; i < p->nprobes; i++) {
		const struct ut_probe *pr = &p->probes[i];
		w_str(&w, pr->spec);
		w_loc(&w, pr->loc);
		w_u32(&w, pr->optional);
		w_u32(&w, pr->nalts);
		for (unsigned a = 0; a < pr->nalts; a++) {
			w_u32(&w, pr->alts[a].kind);
			w_str(&w, pr->alts[a].target);
			w_str(&w, pr->alts[a].prog_name);
			w_str(&w, pr->alts[a].signature);
		}
	}
	w_u32(&w, p->nevents);
	for (unsigned i = 0; i < p->nevents; i++) {
		const struct ut_event *e = &p->events[i];
		w_u32(&w, e->op);
		w_loc(&w, e->loc);
		w_u32(&w, e->size);
		w_fields(&w, e->fields, e->nfields);
		w_str(&w, e->category);
		w_value(&w, &e->name);
		w_u32(&w, (uint32_t)e->group);
		w_value(&w, &e->group_key);
		w_u32(&w, (uint32_t)e->flow);
		w_value(&w, &e->key);
		w_u32(&w, e->nargs);
		for (unsigned a = 0; a < e->nargs; a++) {
			w_str(&w, e->args[a].name);
			w_value(&w, &e->args[a].value);
		}
		w_u32(&w, e->body);
		w_u32(&w, e->nbody);
		w_u32(&w, e->nlocals);
		for (unsigned l = 0; l < e->nlocals; l++) {
			w_u32(&w, e->locals[l].is_str);
			w_u32(&w, e->locals[l].size);
		}
	}
	w_strv(&w, p->groups, p->ngroups);
	w_strv(&w, p->flows, p->nflows);
	w_u32(&w, p->ntables);
	for (unsigned i = 0; i < p->ntables; i++) {
		w_str(&w, p->tables[i].name);
		w_u32(&w, p->tables[i].nentries);
		for (unsigned e = 0; e < p->tables[i].nentries; e++) {
			w_u64(&w, (uint64_t)p->tables[i].entries[e].key);
			w_str(&w, p->tables[i].entries[e].name);
		}
	}
	w_u32(&w, p->nmaps);
	for (unsigned i = 0; i < p->nmaps; i++) {
		const struct ut_map *m = &p->maps[i];
		w_str(&w, m->name);
		w_str(&w, m->bpf_name);
		w_u32(&w, m->agg);
		w_u64(&w, (uint64_t)m->lhist_min);
		w_u64(&w, (uint64_t)m->lhist_max);
		w_u64(&w, (uint64_t)m->lhist_step);
		w_fields(&w, m->keys, m->nkeys);
		for (unsigned k = 0; k < m->nkeys; k++)
			w_value(&w, &m->key_show[k]);
		w_u32(&w, m->key_size);
		w_u32(&w, m->value_size);
		w_value(&w, &m->value_show);
		w_fields(&w, m->tuple_fields, m->ntuple);
		for (unsigned k = 0; k < m->ntuple; k++)
			w_value(&w, &m->tuple_show[k]);
		w_u32(&w, m->user_side);
	}
	w_u32(&w, p->ndisks);
	for (unsigned i = 0; i < p->ndisks; i++) {
		w_str(&w, p->disks[i].name);
		w_loc(&w, p->disks[i].loc);
	}
	w_u32(&w, p->nuexprs);
	for (unsigned i = 0; i < p->nuexprs; i++)
		w_uexpr(&w, &p->uexprs[i]);
	w_u32(&w, p->nustmts);
	for (unsigned i = 0; i < p->nustmts; i++)
		w_ustmt(&w, &p->ustmts[i]);
	w_u32(&w, p->nukeys);
	for (unsigned i = 0; i < p->nukeys; i++)
		w_u32(&w, p->ukeys[i]);
	w_u64(&w, objs->user_c_hash);
	w_u64(&w, ut_hash_bytes(UT_HASH_INIT, objs->user, objs->user_len));
	w_u64(&w, objs->user_len);
	if (objs->user_len)
		w_bytes(&w, objs->user, objs->user_len);
	w_u64(&w, objs->bpf_len);
	w_bytes(&w, objs->bpf, objs->bpf_len);
	if (w.failed) {
		free(w.buf);
		return -1;
	}
	*out = w.buf;
	*out_len = w.len;
	return 0;
}

/* ---- reading ---- */

struct reader {
	struct byte_reader in;
	const char *const *strings;   /* the file's interned strings, for locations */
	unsigned nstrings;
};

static bool r_bytes(struct reader *r, void *out, size_t n)
{
	return byte_read(&r->in, out, n);
}

static uint32_t r_u32(struct reader *r)
{
	return byte_u32(&r->in);
}

static uint64_t r_u64(struct reader *r)
{
	return byte_u64(&r->in);
}

/* A count of items of at least min_size bytes each that must fit in what is left. */
static unsigned r_count(struct reader *r, size_t min_size)
{
	uint32_t n = r_u32(r);
	if (r->in.bad || (min_size && n > r->in.left / min_size)) {
		r->in.bad = true;
		return 0;
	}
	return n;
}

static char *r_str(struct reader *r)
{
	uint32_t n = r_u32(r);
	if (n == NO_STRING || r->in.bad)
		return NULL;
	if (n > r->in.left) {
		r->in.bad = true;
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		r->in.bad = true;
		return NULL;
	}
	r_bytes(r, s, n);
	s[n] = 0;
	return s;
}

static struct ut_loc r_loc(struct reader *r)
{
	struct ut_loc l = {0};
	char *file = r_str(r);
	for (unsigned i = 0; file && i < r->nstrings; i++)
		if (strcmp(r->strings[i], file) == 0)
			l.file = r->strings[i];
	free(file);
	l.line = (int)r_u32(r);
	l.col = (int)r_u32(r);
	return l;
}

static void *r_array(struct reader *r, unsigned n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		r->in.bad = true;
	return p;
}

static void r_value(struct reader *r, struct ut_value *v, int depth)
{
	v->kind = (enum ut_value_kind)r_u32(r);
	v->field = r_u32(r);
	v->display = (enum ut_display)r_u32(r);
	v->table = (int)r_u32(r);
	v->text = r_str(r);
	v->nfmt = r_count(r, 24);
	if (depth > 4 || v->kind > UT_VAL_TEXT || v->display >= UT_SHOW_COUNT)
		r->in.bad = true;
	if (r->in.bad) {
		v->nfmt = 0;
		return;
	}
	v->fmt = r_array(r, v->nfmt, sizeof(*v->fmt));
	for (unsigned i = 0; i < v->nfmt && !r->in.bad; i++)
		r_value(r, &v->fmt[i], depth + 1);
}

static struct ut_field *r_fields(struct reader *r, unsigned *n)
{
	*n = r_count(r, 12);
	struct ut_field *f = r_array(r, *n, sizeof(*f));
	for (unsigned i = 0; f && i < *n && !r->in.bad; i++) {
		f[i].type = (enum ut_field_type)r_u32(r);
		f[i].offset = r_u32(r);
		f[i].size = r_u32(r);
		/* numbers are 8 bytes: the decoder reads them so */
		if (f[i].type > UT_F_STR || f[i].size > 4096 || f[i].offset > 65536 ||
		    (f[i].type != UT_F_STR && f[i].size != 8))
			r->in.bad = true;
	}
	return f;
}

static char **r_strv(struct reader *r, unsigned *n)
{
	*n = r_count(r, 4);
	char **v = r_array(r, *n, sizeof(char *));
	for (unsigned i = 0; v && i < *n && !r->in.bad; i++)
		v[i] = r_str(r);
	for (unsigned i = 0; v && i < *n; i++)
		if (!v[i])
			v[i] = strdup("");
	return v;
}

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
	case UT_UX_HEADER: ok = !e->is_str && e->which <= UT_UH_CPU; break;
	case UT_UX_STR: ok = e->is_str && e->text; break;
	case UT_UX_CAPTURED: case UT_UX_LOCAL: ok = true; break;
	case UT_UX_MAP:
		ok = umap_ok(p, e->map, e->keys, e->nkeys, i) && e->is_str == ut_map_holds_string(&p->maps[e->map]);
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
	for (unsigned k = 0; e->op == UT_UX_MAP && k < e->nkeys; k++)
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
	uint8_t *depth = calloc(p->nuexprs + p->nustmts + 1, 1);
	bool *inside = calloc(p->nustmts + 1, sizeof(*inside));
	bool ok = depth && inside;
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
	struct reader r = {.in = {.p = (const unsigned char *)data + 4, .left = len - 4}};
	struct ut_program *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->strings = r_strv(&r, &p->nstrings);
	r.strings = (const char *const *)p->strings;
	r.nstrings = p->nstrings;
	p->nprobes = r_count(&r, 16);
	p->probes = r_array(&r, p->nprobes, sizeof(*p->probes));
	for (unsigned i = 0; i < p->nprobes && !r.in.bad; i++) {
		struct ut_probe *pr = &p->probes[i];
		pr->spec = r_str(&r);
		pr->loc = r_loc(&r);
		pr->optional = r_u32(&r) != 0;
		pr->nalts = r_count(&r, 12);
		pr->alts = r_array(&r, pr->nalts, sizeof(*pr->alts));
		for (unsigned a = 0; a < pr->nalts && !r.in.bad; a++) {
			pr->alts[a].kind = (enum ut_probe_kind)r_u32(&r);
			pr->alts[a].target = r_str(&r);
			pr->alts[a].prog_name = r_str(&r);
			pr->alts[a].signature = r_str(&r);
		}
	}
	p->nevents = r_count(&r, 32);
	p->events = r_array(&r, p->nevents, sizeof(*p->events));
	for (unsigned i = 0; i < p->nevents && !r.in.bad; i++) {
		struct ut_event *e = &p->events[i];
		e->op = (enum ut_event_op)r_u32(&r);
		e->loc = r_loc(&r);
		e->size = r_u32(&r);
		e->fields = r_fields(&r, &e->nfields);
		e->category = r_str(&r);
		r_value(&r, &e->name, 0);
		e->group = (int)r_u32(&r);
		r_value(&r, &e->group_key, 0);
		e->flow = (int)r_u32(&r);
		r_value(&r, &e->key, 0);
		e->nargs = r_count(&r, 8);
		e->args = r_array(&r, e->nargs, sizeof(*e->args));
		for (unsigned a = 0; a < e->nargs && !r.in.bad; a++) {
			e->args[a].name = r_str(&r);
			r_value(&r, &e->args[a].value, 0);
		}
		e->body = r_u32(&r);
		e->nbody = r_u32(&r);
		e->nlocals = r_count(&r, 8);
		e->locals = r_array(&r, e->nlocals, sizeof(*e->locals));
		for (unsigned l = 0; l < e->nlocals && !r.in.bad; l++) {
			e->locals[l].is_str = r_u32(&r) != 0;
			uint32_t size = r_u32(&r);
			if (size > UT_ULOCAL_MAX_BYTES)
				r.in.bad = true;
			e->locals[l].size = (uint16_t)size;
		}
		if (e->nlocals > UT_ULOCALS_MAX)
			r.in.bad = true;
	}
	p->groups = r_strv(&r, &p->ngroups);
	p->flows = r_strv(&r, &p->nflows);
	p->ntables = r_count(&r, 8);
	p->tables = r_array(&r, p->ntables, sizeof(*p->tables));
	for (unsigned i = 0; i < p->ntables && !r.in.bad; i++) {
		p->tables[i].name = r_str(&r);
		p->tables[i].nentries = r_count(&r, 12);
		p->tables[i].entries = r_array(&r, p->tables[i].nentries, sizeof(*p->tables[i].entries));
		for (unsigned e = 0; e < p->tables[i].nentries && !r.in.bad; e++) {
			p->tables[i].entries[e].key = (int64_t)r_u64(&r);
			p->tables[i].entries[e].name = r_str(&r);
			if (!p->tables[i].entries[e].name)
				p->tables[i].entries[e].name = strdup("");
		}
	}
	p->nmaps = r_count(&r, 40);
	p->maps = r_array(&r, p->nmaps, sizeof(*p->maps));
	for (unsigned i = 0; i < p->nmaps && !r.in.bad; i++) {
		struct ut_map *m = &p->maps[i];
		m->name = r_str(&r);
		m->bpf_name = r_str(&r);
		m->agg = (enum ut_agg)r_u32(&r);
		m->lhist_min = (int64_t)r_u64(&r);
		m->lhist_max = (int64_t)r_u64(&r);
		m->lhist_step = (int64_t)r_u64(&r);
		m->keys = r_fields(&r, &m->nkeys);
		m->key_show = r_array(&r, m->nkeys, sizeof(*m->key_show));
		for (unsigned k = 0; k < m->nkeys && !r.in.bad; k++)
			r_value(&r, &m->key_show[k], 0);
		m->key_size = r_u32(&r);
		m->value_size = r_u32(&r);
		r_value(&r, &m->value_show, 0);
		m->tuple_fields = r_fields(&r, &m->ntuple);
		m->tuple_show = r_array(&r, m->ntuple, sizeof(*m->tuple_show));
		for (unsigned k = 0; m->tuple_show && k < m->ntuple && !r.in.bad; k++)
			r_value(&r, &m->tuple_show[k], 0);
		m->user_side = r_u32(&r) != 0;
		if (m->agg < UT_AGG_KINDS && ut_aggs[m->agg].nargs > 1 && m->lhist_step <= 0)   /* lhist's buckets */
			r.in.bad = true;
	}
	p->ndisks = r_count(&r, 16);
	p->disks = r_array(&r, p->ndisks, sizeof(*p->disks));
	for (unsigned i = 0; i < p->ndisks && !r.in.bad; i++) {
		p->disks[i].name = r_str(&r);
		p->disks[i].loc = r_loc(&r);
		if (!p->disks[i].name)
			r.in.bad = true;
	}
	p->nuexprs = r_count(&r, 64);
	p->uexprs = r_array(&r, p->nuexprs, sizeof(*p->uexprs));
	for (unsigned i = 0; i < p->nuexprs && !r.in.bad; i++) {
		struct ut_uexpr *e = &p->uexprs[i];
		e->op = (enum ut_uexpr_op)r_u32(&r);
		e->is_str = r_u32(&r) != 0;
		e->sgn = r_u32(&r) != 0;
		e->n = (uint16_t)r_u32(&r);
		e->a = r_u32(&r);
		e->b = r_u32(&r);
		e->c = r_u32(&r);
		e->i = (int64_t)r_u64(&r);
		e->text = r_str(&r);
		e->field = r_u32(&r);
		e->which = r_u32(&r);
		e->slot = r_u32(&r);
		e->map = r_u32(&r);
		e->keys = r_u32(&r);
		e->nkeys = r_u32(&r);
	}
	p->nustmts = r_count(&r, 60);
	p->ustmts = r_array(&r, p->nustmts, sizeof(*p->ustmts));
	for (unsigned i = 0; i < p->nustmts && !r.in.bad; i++) {
		struct ut_ustmt *st = &p->ustmts[i];
		st->op = (enum ut_ustmt_op)r_u32(&r);
		st->loc = r_loc(&r);
		st->a = r_u32(&r);
		st->b = r_u32(&r);
		st->slot = r_u32(&r);
		st->map = r_u32(&r);
		st->keys = r_u32(&r);
		st->nkeys = r_u32(&r);
		st->event = r_u32(&r);
		st->body = r_u32(&r);
		st->nbody = r_u32(&r);
		st->body2 = r_u32(&r);
		st->nbody2 = r_u32(&r);
	}
	p->nukeys = r_count(&r, 4);
	p->ukeys = r_array(&r, p->nukeys, sizeof(*p->ukeys));
	for (unsigned i = 0; i < p->nukeys && !r.in.bad; i++)
		p->ukeys[i] = r_u32(&r);
	*objs = (struct ut_program_objects){.user_c_hash = r_u64(&r)};
	uint64_t user_hash = r_u64(&r), n = r_u64(&r);
	const void *user = byte_take(&r.in, (size_t)n);
	/* damaged code is not run: the reader interprets instead */
	if (user && n && ut_hash_bytes(UT_HASH_INIT, user, (size_t)n) == user_hash) {
		objs->user = user;
		objs->user_len = (size_t)n;
	}
	n = r_u64(&r);
	if (r.in.bad || n != r.in.left || !program_ok(p)) {
		snprintf(err, errlen, "the compiled script is damaged or from another version of uring-trace");
		ut_program_free(p);
		return NULL;
	}
	objs->bpf = r.in.p;
	objs->bpf_len = (size_t)n;
	if (objs->user_len && !built_from(p, objs->user_c_hash)) {   /* another program's: interpreted */
		objs->user = NULL;
		objs->user_len = 0;
	}
	for (unsigned i = 0; i < p->nevents; i++)
		ut_event_index_sched(&p->events[i]);
	return p;
}
