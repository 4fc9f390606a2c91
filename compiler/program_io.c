/* .uto files: a compiled script (its tables) and its BPF object, so a
 * script compiled once runs on other hosts and kernels without clang.
 *
 * Layout: the magic UT_PROGRAM_MAGIC ("UTO2"), then little-endian fields written in the order
 * of struct ut_program; strings are a u32 length and bytes (0xffffffff for
 * NULL); the BPF object comes last.  Reading checks every length against
 * what is left, so a damaged file is an error, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/program.h"
#include "compiler/program_io.h"

#define NO_STRING 0xffffffffu

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

int ut_program_save(const struct ut_program *p, const void *obj, size_t obj_len, void **out, size_t *out_len)
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
	}
	w_u32(&w, p->ndisks);
	for (unsigned i = 0; i < p->ndisks; i++) {
		w_str(&w, p->disks[i].name);
		w_loc(&w, p->disks[i].loc);
	}
	w_u64(&w, obj_len);
	w_bytes(&w, obj, obj_len);
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
	const unsigned char *p;
	size_t left;
	bool bad;
	const char *const *strings;   /* the file's interned strings, for locations */
	unsigned nstrings;
};

static bool r_bytes(struct reader *r, void *out, size_t n)
{
	if (r->bad || n > r->left) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static uint32_t r_u32(struct reader *r)
{
	uint32_t v;
	r_bytes(r, &v, 4);
	return v;
}

static uint64_t r_u64(struct reader *r)
{
	uint64_t v;
	r_bytes(r, &v, 8);
	return v;
}

/* A count of items of at least min_size bytes each that must fit in what is left. */
static unsigned r_count(struct reader *r, size_t min_size)
{
	uint32_t n = r_u32(r);
	if (r->bad || (min_size && n > r->left / min_size)) {
		r->bad = true;
		return 0;
	}
	return n;
}

static char *r_str(struct reader *r)
{
	uint32_t n = r_u32(r);
	if (n == NO_STRING || r->bad)
		return NULL;
	if (n > r->left) {
		r->bad = true;
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		r->bad = true;
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
		r->bad = true;
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
	if (depth > 4 || v->kind > UT_VAL_TEXT || v->display > UT_SHOW_STRING)
		r->bad = true;
	if (r->bad) {
		v->nfmt = 0;
		return;
	}
	v->fmt = r_array(r, v->nfmt, sizeof(*v->fmt));
	for (unsigned i = 0; i < v->nfmt && !r->bad; i++)
		r_value(r, &v->fmt[i], depth + 1);
}

static struct ut_field *r_fields(struct reader *r, unsigned *n)
{
	*n = r_count(r, 12);
	struct ut_field *f = r_array(r, *n, sizeof(*f));
	for (unsigned i = 0; f && i < *n && !r->bad; i++) {
		f[i].type = (enum ut_field_type)r_u32(r);
		f[i].offset = r_u32(r);
		f[i].size = r_u32(r);
		if (f[i].type > UT_F_STR || f[i].size > 4096 || f[i].offset > 65536)
			r->bad = true;
	}
	return f;
}

static char **r_strv(struct reader *r, unsigned *n)
{
	*n = r_count(r, 4);
	char **v = r_array(r, *n, sizeof(char *));
	for (unsigned i = 0; v && i < *n && !r->bad; i++)
		v[i] = r_str(r);
	for (unsigned i = 0; v && i < *n; i++)
		if (!v[i])
			v[i] = strdup("");
	return v;
}

/* Field and value indexes must stay inside their arrays: the decoder
 * trusts them. */
static bool value_ok(const struct ut_value *v, unsigned nfields, unsigned ntables)
{
	if (v->kind == UT_VAL_FIELD && v->field >= nfields)
		return false;
	if (v->display == UT_SHOW_TABLE && (v->table < 0 || (unsigned)v->table >= ntables))
		return false;
	for (unsigned i = 0; i < v->nfmt; i++)
		if (!value_ok(&v->fmt[i], nfields, ntables))
			return false;
	return true;
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
		if (e->op >= UT_EV_OP_COUNT || e->size < 24 || !e->category)
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
		for (unsigned a = 0; a < e->nargs; a++)
			if (!value_ok(&e->args[a].value, e->nfields, p->ntables))
				return false;
	}
	for (unsigned i = 0; i < p->nmaps; i++) {
		const struct ut_map *m = &p->maps[i];
		if (!m->name || !m->bpf_name || m->agg > UT_AGG_LAST || m->key_size > 1024 || m->value_size > 1024)
			return false;
		for (unsigned k = 0; k < m->nkeys; k++)
			if (m->keys[k].offset + m->keys[k].size > m->key_size || !value_ok(&m->key_show[k], m->nkeys, p->ntables))
				return false;
	}
	return true;
}

struct ut_program *ut_program_load(const void *data, size_t len, const void **obj, size_t *obj_len,
				   char *err, size_t errlen)
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
	struct reader r = {.p = (const unsigned char *)data + 4, .left = len - 4};
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
	for (unsigned i = 0; i < p->nprobes && !r.bad; i++) {
		struct ut_probe *pr = &p->probes[i];
		pr->spec = r_str(&r);
		pr->loc = r_loc(&r);
		pr->optional = r_u32(&r) != 0;
		pr->nalts = r_count(&r, 12);
		pr->alts = r_array(&r, pr->nalts, sizeof(*pr->alts));
		for (unsigned a = 0; a < pr->nalts && !r.bad; a++) {
			pr->alts[a].kind = (enum ut_probe_kind)r_u32(&r);
			pr->alts[a].target = r_str(&r);
			pr->alts[a].prog_name = r_str(&r);
			pr->alts[a].signature = r_str(&r);
		}
	}
	p->nevents = r_count(&r, 32);
	p->events = r_array(&r, p->nevents, sizeof(*p->events));
	for (unsigned i = 0; i < p->nevents && !r.bad; i++) {
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
		for (unsigned a = 0; a < e->nargs && !r.bad; a++) {
			e->args[a].name = r_str(&r);
			r_value(&r, &e->args[a].value, 0);
		}
	}
	p->groups = r_strv(&r, &p->ngroups);
	p->flows = r_strv(&r, &p->nflows);
	p->ntables = r_count(&r, 8);
	p->tables = r_array(&r, p->ntables, sizeof(*p->tables));
	for (unsigned i = 0; i < p->ntables && !r.bad; i++) {
		p->tables[i].name = r_str(&r);
		p->tables[i].nentries = r_count(&r, 12);
		p->tables[i].entries = r_array(&r, p->tables[i].nentries, sizeof(*p->tables[i].entries));
		for (unsigned e = 0; e < p->tables[i].nentries && !r.bad; e++) {
			p->tables[i].entries[e].key = (int64_t)r_u64(&r);
			p->tables[i].entries[e].name = r_str(&r);
			if (!p->tables[i].entries[e].name)
				p->tables[i].entries[e].name = strdup("");
		}
	}
	p->nmaps = r_count(&r, 40);
	p->maps = r_array(&r, p->nmaps, sizeof(*p->maps));
	for (unsigned i = 0; i < p->nmaps && !r.bad; i++) {
		struct ut_map *m = &p->maps[i];
		m->name = r_str(&r);
		m->bpf_name = r_str(&r);
		m->agg = (enum ut_agg)r_u32(&r);
		m->lhist_min = (int64_t)r_u64(&r);
		m->lhist_max = (int64_t)r_u64(&r);
		m->lhist_step = (int64_t)r_u64(&r);
		m->keys = r_fields(&r, &m->nkeys);
		m->key_show = r_array(&r, m->nkeys, sizeof(*m->key_show));
		for (unsigned k = 0; k < m->nkeys && !r.bad; k++)
			r_value(&r, &m->key_show[k], 0);
		m->key_size = r_u32(&r);
		m->value_size = r_u32(&r);
		r_value(&r, &m->value_show, 0);
		if (m->lhist_step <= 0 && m->agg == UT_AGG_LHIST)
			r.bad = true;
	}
	p->ndisks = r_count(&r, 16);
	p->disks = r_array(&r, p->ndisks, sizeof(*p->disks));
	for (unsigned i = 0; i < p->ndisks && !r.bad; i++) {
		p->disks[i].name = r_str(&r);
		p->disks[i].loc = r_loc(&r);
		if (!p->disks[i].name)
			r.bad = true;
	}
	uint64_t n = r_u64(&r);
	if (r.bad || n != r.left || !program_ok(p)) {
		snprintf(err, errlen, "the compiled script is damaged or from another version of uring-trace");
		ut_program_free(p);
		return NULL;
	}
	*obj = r.p;
	*obj_len = (size_t)n;
	return p;
}
