#include "runtime/summary.h"

#include "base/alloc.h"
#include "base/json.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bpf/records.h"
#include "compiler/aggregations.h"
#include "runtime/decode.h"
#include "runtime/stacks.h"
#include "runtime/user_maps.h"

/* One map entry with its per-CPU values combined. */
struct entry {
	unsigned char *key;
	struct ut_avg total;   /* the CPUs' slots, combined as the aggregation's row says */
	int64_t shown;         /* what is printed and sorted by (a bucket's count) */
	uint64_t bucket;       /* hist/lhist */
	char *text;            /* string values */
	unsigned char *tuple;  /* a tuple value's bytes */
};

struct entries {
	struct entry *v;
	size_t n;
	unsigned char *keys;
	uint32_t key_size;
};

static bool is_hist(const struct ut_map *m) { return ut_aggs[m->agg].bucket_label != NULL; }

static void combine(const struct ut_map *m, const unsigned char *vals, int ncpu, size_t stride, struct entry *e)
{
	const struct ut_agg_kind *kind = &ut_aggs[m->agg];
	e->total = (struct ut_avg){0};
	for (int c = 0; c < ncpu; c++) {
		struct ut_avg cpu = {0};
		memcpy(&cpu.sum, vals + (size_t)c * stride, 8);
		if (kind->value_size == sizeof(cpu))
			memcpy(&cpu.count, vals + (size_t)c * stride + 8, 8);
		kind->combine(&e->total, &cpu);
	}
	e->shown = kind->shown(&e->total);
}

static void free_entries(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++) {
		free(es->v[i].text);
		free(es->v[i].tuple);
	}
	free(es->v);
	free(es->keys);
}

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* How many copies of a value a look-up returns (one per possible CPU for a
 * per-CPU map, each padded to 8 bytes) and their stride; <= 0 when the CPU
 * count is unknown. */
static int value_copies(const struct ut_map *m, enum bpf_map_type type, size_t *stride)
{
	bool percpu = type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_PERCPU_ARRAY;
	*stride = percpu ? ((size_t)m->value_size + 7) & ~(size_t)7 : m->value_size;
	return percpu ? libbpf_num_possible_cpus() : 1;
}

/* Appends an entry: key, and its value as ncpu copies stride bytes apart. */
static void add_entry(const struct ut_map *m, const void *key, const unsigned char *vals, int ncpu, size_t stride,
		      struct entries *out, size_t *cap)
{
	if (out->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		out->v = xrealloc_array(out->v, *cap, sizeof(*out->v));
		out->keys = xrealloc_array(out->keys, *cap, m->key_size);
	}
	struct entry *e = &out->v[out->n];
	memcpy(out->keys + out->n * m->key_size, key, m->key_size);
	combine(m, vals, ncpu, stride, e);
	e->text = m->agg == UT_AGG_LAST && m->value_show.display == UT_SHOW_STRING ? xstrndup((const char *)vals, m->value_size) : NULL;
	e->tuple = NULL;
	if (m->ntuple) {
		e->tuple = xmalloc(m->value_size);
		memcpy(e->tuple, vals, m->value_size);
	}
	if (is_hist(m))
		memcpy(&e->bucket, (const unsigned char *)key + m->key_size - 8, 8);
	out->n++;
}

/* The slots of a cached map in the kernel (bpf/ut.h, ut_front_read): an
 * array named after the map's; NULL for other maps. */
static struct bpf_map *front_of(const struct ut_map *m, struct bpf_object *obj)
{
	char name[64];
	snprintf(name, sizeof(name), "%s_front", m->bpf_name);
	return bpf_object__find_map_by_name(obj, name);
}

struct front_slot {
	uint64_t key, value, spilled;
};

/* The keys a cached map holds in its slots (a key of 0 is a free slot). */
static void read_front_entries(const struct ut_map *m, struct bpf_map *front, struct entries *out, size_t *cap)
{
	int fd = bpf_map__fd(front);
	for (uint32_t i = 0; i < bpf_map__max_entries(front); i++) {
		struct front_slot s;
		if (bpf_map_lookup_elem(fd, &i, &s) == 0 && s.key)
			add_entry(m, &s.key, (const unsigned char *)&s.value, 1, sizeof(s.value), out, cap);
	}
}

/* clear() empties the slots and counts none of their keys in the hash
 * (it was emptied first); zero() keeps the keys with zeros. */
static void empty_front(struct bpf_map *front, bool keep_keys)
{
	int fd = bpf_map__fd(front);
	for (uint32_t i = 0; i < bpf_map__max_entries(front); i++) {
		struct front_slot s;
		if (bpf_map_lookup_elem(fd, &i, &s) != 0 || (keep_keys && !s.key))
			continue;
		s.value = 0;
		if (!keep_keys)
			s.key = s.spilled = 0;
		bpf_map_update_elem(fd, &i, &s, BPF_ANY);
	}
}

static int read_bpf_entries(const struct ut_map *m, struct bpf_object *obj, struct entries *out)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, m->bpf_name);
	if (!map)
		return -1;
	int fd = bpf_map__fd(map);
	enum bpf_map_type type = bpf_map__type(map);
	/* a keyless aggregation's one array slot exists from the start: all
	 * zeros is one never hit (or cleared) */
	bool slot = type == BPF_MAP_TYPE_PERCPU_ARRAY;
	size_t stride;
	int ncpu = value_copies(m, type, &stride);
	if (ncpu <= 0)
		return -1;
	unsigned char *vals = xcalloc((size_t)ncpu, stride);
	unsigned char *key = xcalloc(1, m->key_size), *next = xcalloc(1, m->key_size);
	size_t cap = 0;
	void *prev = NULL;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		memcpy(key, next, m->key_size);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, vals) != 0 || (slot && all_zero(vals, stride * (size_t)ncpu)))
			continue;
		add_entry(m, key, vals, ncpu, stride, out, &cap);
	}
	struct bpf_map *front = front_of(m, obj);
	if (front)
		read_front_entries(m, front, out, &cap);
	free(vals);
	free(key);
	free(next);
	return 0;
}

static void read_user_entries(const struct ut_map *m, const struct ut_user_map *um, struct entries *out)
{
	size_t cap = 0;
	for (uint32_t i = 0; i < um->count; i++)
		add_entry(m, ut_user_map_entry_key(um, i), ut_user_map_entry_value(um, i), 1, m->value_size, out, &cap);
}

/* Map i's entries, from the reader's table for a user-side map, else from
 * the object. */
static int read_entries(const struct ut_program *prog, unsigned i, struct bpf_object *obj,
			const struct ut_user_maps *user, struct entries *out)
{
	const struct ut_map *m = &prog->maps[i];
	memset(out, 0, sizeof(*out));
	out->key_size = m->key_size;
	int rc = 0;
	if (!m->user_side)
		rc = read_bpf_entries(m, obj, out);
	else if (user && i < user->n)
		read_user_entries(m, &user->maps[i], out);
	if (rc < 0) {
		free_entries(out);
		return -1;
	}
	for (size_t j = 0; j < out->n; j++)
		out->v[j].key = out->keys + j * m->key_size;
	return 0;
}

bool ut_map_entries_read(const struct ut_program *prog, unsigned i, struct bpf_object *obj,
			 const struct ut_user_maps *user, struct ut_map_entries *out)
{
	const struct ut_map *m = &prog->maps[i];
	struct entries es;
	*out = (struct ut_map_entries){0};
	if ((!m->user_side && !obj) || read_entries(prog, i, obj, user, &es) < 0)
		return false;
	bool text = ut_map_holds_string(m);
	uint32_t value_size = text && m->value_size > 8 ? m->value_size : 8;
	out->value_offset = (m->key_size + 7) & ~7u;
	out->stride = out->value_offset + ((value_size + 7) & ~7u);
	out->n = (uint32_t)es.n;
	out->entries = xcalloc(es.n + 1, out->stride);
	for (size_t j = 0; j < es.n; j++) {
		unsigned char *e = out->entries + j * out->stride;
		memcpy(e, es.v[j].key, m->key_size);
		if (text)
			memcpy(e + out->value_offset, es.v[j].text, strnlen(es.v[j].text, m->value_size));
		else
			memcpy(e + out->value_offset, &es.v[j].shown, 8);
	}
	free_entries(&es);
	return true;
}

void ut_map_entries_free(struct ut_map_entries *es)
{
	free(es->entries);
	*es = (struct ut_map_entries){0};
}

static const struct ut_map *sort_map;

/* The key without the histogram bucket: entries of one histogram. */
static int cmp_key_prefix(const struct entry *a, const struct entry *b)
{
	uint32_t n = sort_map->key_size - (is_hist(sort_map) ? 8 : 0);
	return memcmp(a->key, b->key, n);
}

static int cmp_entries(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	if (is_hist(sort_map)) {
		int c = cmp_key_prefix(a, b);
		if (c)
			return c;
		return a->bucket < b->bucket ? -1 : a->bucket > b->bucket;
	}
	/* smallest first, as bpftrace does: the largest ends next to the prompt */
	if (a->shown != b->shown)
		return a->shown < b->shown ? -1 : 1;
	return memcmp(a->key, b->key, sort_map->key_size);
}

/* The map's entries in print order: histograms by key then bucket, others
 * by value. */
static int read_sorted(const struct ut_program *prog, unsigned i, struct bpf_object *obj,
		       const struct ut_user_maps *user, struct entries *es)
{
	if (read_entries(prog, i, obj, user, es) < 0)
		return -1;
	sort_map = &prog->maps[i];
	if (es->n)
		qsort(es->v, es->n, sizeof(*es->v), cmp_entries);
	return 0;
}

/* A stack key's frames (kstack, ustack); NULL for other keys. */
static const char *key_stack(const struct ut_map *m, const struct entry *e, unsigned k)
{
	const struct ut_value *v = &m->key_show[k];
	if (!ut_display_kind(v->display)->frames || v->field >= m->nkeys ||
	    m->keys[v->field].offset + 8 > m->key_size)
		return NULL;
	uint64_t id;
	memcpy(&id, e->key + m->keys[v->field].offset, 8);
	return ut_stack_text(id);
}

static void key_text(const struct ut_program *prog, const struct ut_map *m, const struct entry *e, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (unsigned k = 0; k < m->nkeys && at + 2 < len; k++) {
		char one[256];
		const char *stack = key_stack(m, e, k);
		if (stack) {   /* a frame a line, as bpftrace prints them */
			at += (size_t)snprintf(buf + at, len - at, "%s\n%s", k ? "," : "", stack[0] ? "" : "\t(no stack)\n");
			for (const char *f = stack, *nl; *f && at + 2 < len; f = nl + !!*nl) {
				nl = f + strcspn(f, "\n");
				at += (size_t)snprintf(buf + at, len - at, "\t%.*s\n", (int)(nl - f), f);
			}
		} else {
			ut_value_text(prog, m->keys, m->nkeys, e->key, m->key_size, &m->key_show[k], one, sizeof(one));
			at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "", one);
		}
		if (at >= len)
			at = len - 1;
	}
}

static void print_hist(const struct ut_map *m, const struct entry *v, size_t n, FILE *out)
{
	int64_t peak = 1;
	for (size_t i = 0; i < n; i++)
		if (v[i].shown > peak)
			peak = v[i].shown;
	/* every bucket between the first and the last used one, empty or not */
	uint64_t first = v[0].bucket, last = v[n - 1].bucket;
	size_t i = 0;
	for (uint64_t b = first; b <= last; b++) {
		int64_t count = 0;
		if (i < n && v[i].bucket == b)
			count = v[i++].shown;
		char label[96];
		ut_aggs[m->agg].bucket_label(m, b, label, sizeof(label));
		int bar = (int)(count * 52 / peak);
		fprintf(out, "%-15s %8" PRId64 " |%.*s%*s|\n", label, count, bar,
			"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@", 52 - bar, "");
	}
}

/* A tuple value as bpftrace prints it: "(1, two)". */
static void tuple_text(const struct ut_program *prog, const struct ut_map *m, const struct entry *e, char *buf,
		       size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "(");
	for (unsigned k = 0; k < m->ntuple && e->tuple && at < len; k++) {
		char one[256];
		ut_value_text(prog, m->tuple_fields, m->ntuple, e->tuple, m->value_size, &m->tuple_show[k], one, sizeof(one));
		at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? ", " : "", one);
	}
	if (at < len)
		snprintf(buf + at, len - at, ")");
}

/* An aggregation's number, or a plain value as its display kind shows it. */
static void value_text(const struct ut_program *prog, const struct ut_map *m, const struct entry *e, char *buf, size_t len)
{
	struct ut_field f = {.type = UT_F_S64, .offset = 0, .size = 8};
	if (e->text)
		snprintf(buf, len, "%s", e->text);
	else if (m->ntuple)
		tuple_text(prog, m, e, buf, len);
	else if (ut_aggs[m->agg].value_text)
		ut_aggs[m->agg].value_text(&e->total, buf, len);
	else if (m->agg == UT_AGG_LAST)
		ut_value_text(prog, &f, 1, &e->shown, sizeof(e->shown), &m->value_show, buf, len);
	else
		snprintf(buf, len, "%" PRId64, e->shown);
}

/* The summary's percentiles (ut_summary_percentiles) of a histogram's
 * entries of one key, v[0..n) by bucket. */
static void hist_percentiles(const struct ut_map *m, const struct entry *v, size_t n,
			     int64_t out[UT_SUMMARY_PERCENTILES])
{
	uint64_t *buckets = xcalloc(n + 1, sizeof(*buckets));
	int64_t *counts = xcalloc(n + 1, sizeof(*counts));
	for (size_t i = 0; i < n; i++) {
		buckets[i] = v[i].bucket;
		counts[i] = v[i].shown;
	}
	for (unsigned p = 0; p < UT_SUMMARY_PERCENTILES; p++)
		out[p] = ut_hist_percentile(m, buckets, counts, n, ut_summary_percentiles[p].ppm);
	free(buckets);
	free(counts);
}

/* A line of a histogram's percentiles, after its buckets. */
static void print_percentiles(const struct ut_map *m, const struct entry *v, size_t n, FILE *out)
{
	int64_t p[UT_SUMMARY_PERCENTILES];
	hist_percentiles(m, v, n, p);
	for (unsigned i = 0; i < UT_SUMMARY_PERCENTILES; i++)
		fprintf(out, "%s%s %" PRId64, i ? ", " : "", ut_summary_percentiles[i].name, p[i]);
	fputc('\n', out);
}

/* A histogram's entries of one key: es->v[start..end), their counts'
 * total. */
struct hist_group {
	size_t start, end;
	int64_t total;
};

static int cmp_groups(const void *pa, const void *pb)
{
	const struct hist_group *a = pa, *b = pb;
	if (a->total != b->total)
		return a->total < b->total ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* A histogram map's keys, each drawn as bpftrace draws them: by their
 * total count, the largest last; the top ones alone when top > 0. */
static void print_hists(const struct ut_program *prog, const struct ut_map *m, struct entries *es, uint64_t top,
			FILE *out)
{
	struct hist_group *groups = xcalloc(es->n, sizeof(*groups));
	size_t ng = 0;
	for (size_t j = 0; j < es->n;) {
		struct hist_group *g = &groups[ng++];
		g->start = j;
		while (j < es->n && cmp_key_prefix(&es->v[g->start], &es->v[j]) == 0)
			g->total += es->v[j++].shown;
		g->end = j;
	}
	qsort(groups, ng, sizeof(*groups), cmp_groups);
	for (size_t i = top && top < ng ? ng - top : 0; i < ng; i++) {
		char key[16384];   /* stacks take a line a frame */
		key_text(prog, m, &es->v[groups[i].start], key, sizeof(key));
		fprintf(out, "%s%s%s%s:\n", m->name, m->nkeys ? "[" : "", key, m->nkeys ? "]" : "");
		print_hist(m, es->v + groups[i].start, groups[i].end - groups[i].start, out);
		print_percentiles(m, es->v + groups[i].start, groups[i].end - groups[i].start, out);
		fputc('\n', out);
	}
	free(groups);
}

/* Map i's entries as bpftrace prints them: a line each, the largest value
 * last; a histogram drawn for each key. */
static void print_map(const struct ut_program *prog, unsigned i, struct entries *es, uint64_t top, FILE *out)
{
	const struct ut_map *m = &prog->maps[i];
	if (is_hist(m)) {
		print_hists(prog, m, es, top, out);
		return;
	}
	for (size_t j = top && top < es->n ? es->n - top : 0; j < es->n; j++) {
		char key[16384], val[512];
		key_text(prog, m, &es->v[j], key, sizeof(key));
		value_text(prog, m, &es->v[j], val, sizeof(val));
		fprintf(out, "%s%s%s%s: %s\n", m->name, m->nkeys ? "[" : "", key, m->nkeys ? "]" : "", val);
	}
}

/* Divides what an aggregation shows by div (print(@m, top, div)). */
static void divide_entries(const struct ut_map *m, struct entries *es, uint64_t div)
{
	if (div <= 1 || (m->agg == UT_AGG_LAST && !ut_display_kind(m->value_show.display)->number))
		return;
	for (size_t j = 0; j < es->n; j++)
		es->v[j].shown /= (int64_t)div;
}

void ut_print_maps(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out)
{
	for (unsigned i = 0; i < prog->nmaps; i++) {
		struct entries es;
		if (prog->maps[i].is_private || read_sorted(prog, i, obj, user, &es) < 0)
			continue;
		if (es.n)
			fputc('\n', out);
		print_map(prog, i, &es, 0, out);
		free_entries(&es);
	}
}

void ut_print_map_named(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user,
			const char *name, uint64_t top, uint64_t div, FILE *out)
{
	for (unsigned i = 0; i < prog->nmaps; i++) {
		struct entries es;
		if (strcmp(prog->maps[i].name, name) != 0 || read_sorted(prog, i, obj, user, &es) < 0)
			continue;
		divide_entries(&prog->maps[i], &es, div);
		print_map(prog, i, &es, top, out);
		free_entries(&es);
	}
}

/* Numbers stay numbers in JSON; values shown as names, hex or text are
 * strings. */
static bool value_is_number(const struct ut_map *m)
{
	return m->agg != UT_AGG_LAST || ut_display_kind(m->value_show.display)->number;
}

/* Field v.field of rec (a key, a tuple) as JSON of its type: a number
 * where the summary shows the number, else its text as a string. */
static void json_field(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
		       const unsigned char *rec, uint32_t size, const struct ut_value *v, FILE *out)
{
	const struct ut_field *f = v->field < nfields ? &fields[v->field] : NULL;
	if (f && f->type != UT_F_STR && ut_display_kind(v->display)->number && f->offset + 8 <= size) {
		uint64_t raw;
		memcpy(&raw, rec + f->offset, 8);
		if (f->type == UT_F_S64)
			fprintf(out, "%" PRId64, (int64_t)raw);
		else
			fprintf(out, "%" PRIu64, raw);
		return;
	}
	char one[256];
	ut_value_text(prog, fields, nfields, rec, size, v, one, sizeof(one));
	ut_json_string(out, one);
}

/* A histogram bucket's bounds as numbers, both included: "min" and "max",
 * null where the bucket is open (values below the first, above the last). */
static void json_bounds(const struct ut_map *m, uint64_t bucket, FILE *out)
{
	struct ut_bucket_bounds b;
	ut_aggs[m->agg].bucket_bounds(m, bucket, &b);
	fputs(",\"min\":", out);
	if (b.has_min)
		fprintf(out, "%" PRId64, b.min);
	else
		fputs("null", out);
	fputs(",\"max\":", out);
	if (b.has_max)
		fprintf(out, "%" PRId64, b.max);
	else
		fputs("null", out);
}

/* The key of entry e as a JSON array: numbers where the summary shows
 * numbers, a stack as an array of its frames, other keys as their text. */
static void json_key(const struct ut_program *prog, const struct ut_map *m, const struct entry *e, FILE *out)
{
	fputc('[', out);
	for (unsigned k = 0; k < m->nkeys; k++) {
		char one[256];
		const char *stack = key_stack(m, e, k);
		fprintf(out, "%s", k ? "," : "");
		if (stack) {   /* an array of frames */
			fputc('[', out);
			for (const char *f = stack, *nl; *f; f = nl + !!*nl) {
				nl = f + strcspn(f, "\n");
				snprintf(one, sizeof(one), "%.*s", (int)(nl - f), f);
				fprintf(out, "%s", f == stack ? "" : ",");
				ut_json_string(out, one);
			}
			fputc(']', out);
			continue;
		}
		json_field(prog, m->keys, m->nkeys, e->key, m->key_size, &m->key_show[k], out);
	}
	fputc(']', out);
}

/* A histogram's entries of one key, v[0..n) by bucket, as one object:
 * its key, how many values it holds, its buckets and its percentiles. */
static void json_hist(const struct ut_program *prog, const struct ut_map *m, const struct entry *v, size_t n, FILE *out)
{
	int64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].shown;
	fputs("{\"key\":", out);
	json_key(prog, m, &v[0], out);
	fprintf(out, ",\"count\":%" PRId64 ",\"buckets\":[", total);
	for (size_t i = 0; i < n; i++) {
		char label[96];
		ut_aggs[m->agg].bucket_label(m, v[i].bucket, label, sizeof(label));
		fputs(i ? ",{\"bucket\":" : "{\"bucket\":", out);
		ut_json_string(out, label);
		json_bounds(m, v[i].bucket, out);
		fprintf(out, ",\"count\":%" PRId64 "}", v[i].shown);
	}
	int64_t p[UT_SUMMARY_PERCENTILES];
	hist_percentiles(m, v, n, p);
	fputs("],\"percentiles\":{", out);
	for (unsigned i = 0; i < UT_SUMMARY_PERCENTILES; i++)
		fprintf(out, "%s\"%s\":%" PRId64, i ? "," : "", ut_summary_percentiles[i].name, p[i]);
	fputs("}}", out);
}

void ut_maps_json(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out)
{
	fputc('{', out);
	bool first = true;
	for (unsigned i = 0; i < prog->nmaps; i++) {
		const struct ut_map *m = &prog->maps[i];
		struct entries es;
		if (m->is_private || read_sorted(prog, i, obj, user, &es) < 0)
			continue;
		fprintf(out, "%s", first ? "" : ",");
		first = false;
		ut_json_string(out, m->name);
		fputs(":[", out);
		for (size_t j = 0, next; j < es.n; j = next) {
			fputs(j ? "," : "", out);
			next = j + 1;
			if (is_hist(m)) {   /* the buckets of one key (sorted: read_sorted) */
				while (next < es.n && cmp_key_prefix(&es.v[j], &es.v[next]) == 0)
					next++;
				json_hist(prog, m, es.v + j, next - j, out);
				continue;
			}
			fputs("{\"key\":", out);
			json_key(prog, m, &es.v[j], out);
			if (m->ntuple && es.v[j].tuple) {   /* an array of its elements */
				fputs(",\"value\":[", out);
				for (unsigned k = 0; k < m->ntuple; k++) {
					fputs(k ? "," : "", out);
					json_field(prog, m->tuple_fields, m->ntuple, es.v[j].tuple, m->value_size, &m->tuple_show[k],
						   out);
				}
				fputc(']', out);
			} else if (ut_aggs[m->agg].value_json) {
				char val[512];
				ut_aggs[m->agg].value_json(&es.v[j].total, val, sizeof(val));
				fprintf(out, ",\"value\":%s", val);
			} else {
				char val[512];
				value_text(prog, m, &es.v[j], val, sizeof(val));
				fputs(",\"value\":", out);
				if (value_is_number(m))
					fputs(val, out);
				else
					ut_json_string(out, val);
			}
			fputc('}', out);
		}
		fputc(']', out);
		free_entries(&es);
	}
	fputc('}', out);
}

/* The map called name ("@x"), its index in *i; NULL when there is none. */
static const struct ut_map *map_named(const struct ut_program *prog, const char *name, unsigned *i)
{
	for (*i = 0; *i < prog->nmaps; (*i)++)
		if (strcmp(prog->maps[*i].name, name) == 0)
			return &prog->maps[*i];
	return NULL;
}

/* The kernel's remembered reads of its maps (bpf/ut.h, ut_memo_read) are
 * of an older generation once user space has changed a map: every map
 * takes a generation never used before (which map changed is the
 * compiler's business; clear() and zero() are rare), bits 40-62 all ones
 * where the kernel's hold a CPU number (bit 63 would turn the memo off),
 * and remembered again. */
static void forget_memo(struct bpf_object *obj)
{
	static uint64_t changes;
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "ut_memo_gens");
	if (!m)
		return;
	size_t size = (size_t)bpf_map__max_entries(m) * sizeof(uint64_t);
	uint64_t *gens = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (gens == MAP_FAILED)
		return;
	changes++;
	for (uint32_t i = 0; i < bpf_map__max_entries(m); i++)
		__atomic_store_n(&gens[i], 0x7fffffull << 40 | changes, __ATOMIC_SEQ_CST);
	munmap(gens, size);
}

/* clear(@x), keep_keys false: the entries of the map called name go;
 * zero(@x), keep_keys true: their values become zeros.  A keyless
 * aggregation's one slot (a per-CPU array) cannot be deleted: it takes
 * zeros, which read as never hit, either way. */
static void empty_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user,
		      const char *name, bool keep_keys)
{
	unsigned i;
	const struct ut_map *m = map_named(prog, name, &i);
	if (!m)
		return;
	if (m->user_side) {
		if (user && i < user->n)
			(keep_keys ? ut_user_map_zero : ut_user_map_clear)(&user->maps[i]);
		return;
	}
	struct bpf_map *map = bpf_object__find_map_by_name(obj, m->bpf_name);
	if (!map)
		return;
	int fd = bpf_map__fd(map);
	enum bpf_map_type type = bpf_map__type(map);
	size_t stride;
	int ncpu = value_copies(m, type, &stride);
	unsigned char *zeros = ncpu > 0 ? xcalloc((size_t)ncpu, stride) : NULL;
	unsigned char *key = xcalloc(1, m->key_size), *next = xcalloc(1, m->key_size);
	void *prev = NULL;
	if (zeros && type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		uint32_t index = 0;
		bpf_map_update_elem(fd, &index, zeros, BPF_ANY);
	} else if (keep_keys) {
		while (zeros && bpf_map_get_next_key(fd, prev, next) == 0) {
			memcpy(key, next, m->key_size);
			prev = key;
			bpf_map_update_elem(fd, key, zeros, BPF_EXIST);
		}
	} else {
		while (bpf_map_get_next_key(fd, NULL, key) == 0)
			if (bpf_map_delete_elem(fd, key) != 0)
				break;
	}
	struct bpf_map *front = front_of(m, obj);
	if (front)
		empty_front(front, keep_keys);
	forget_memo(obj);
	free(zeros);
	free(key);
	free(next);
}

void ut_clear_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user, const char *name)
{
	empty_map(prog, obj, user, name, false);
}

void ut_zero_map(const struct ut_program *prog, struct bpf_object *obj, struct ut_user_maps *user, const char *name)
{
	empty_map(prog, obj, user, name, true);
}

bool ut_kernel_map_full(const struct ut_map *m, struct bpf_object *obj)
{
	struct bpf_map *map = m->bpf_name ? bpf_object__find_map_by_name(obj, m->bpf_name) : NULL;
	/* not an lru map's BPF_MAP_TYPE_LRU_HASH: it never refuses a key, and
	 * the probe's key would push out one of the script's */
	if (!map || (bpf_map__type(map) != BPF_MAP_TYPE_HASH && bpf_map__type(map) != BPF_MAP_TYPE_PERCPU_HASH))
		return false;
	size_t stride;
	int ncpu = value_copies(m, bpf_map__type(map), &stride);
	unsigned char *key = xmalloc(m->key_size), *vals = xcalloc((size_t)(ncpu > 0 ? ncpu : 1), stride);
	bool full = false;
	if (ncpu > 0) {
		/* a key no script writes, most likely; one more entry fits or not */
		memset(key, 0xa5, m->key_size);
		int fd = bpf_map__fd(map);
		if (bpf_map_update_elem(fd, key, vals, BPF_NOEXIST) == 0)
			bpf_map_delete_elem(fd, key);
		else
			full = errno == E2BIG;
	}
	free(key);
	free(vals);
	return full;
}

/* ---- Prometheus's text format (the metrics endpoint, --metrics) ---- */

/* Into a metric or label name: [a-zA-Z0-9_] kept, the rest '_'; a name
 * that would start with a digit gets prefix. */
static void metric_name_part(const char *s, const char *prefix, char *out, size_t len)
{
	size_t at = 0;
	if (isdigit((unsigned char)*s))
		at = (size_t)snprintf(out, len, "%s", prefix);
	for (; *s && at + 1 < len; s++)
		out[at++] = isalnum((unsigned char)*s) || *s == '_' ? *s : '_';
	out[at < len ? at : len - 1] = 0;
}

/* A histogram's unit, from its map's name (@latency_us): values in
 * seconds for Prometheus (its base unit) when the name says a time. */
struct metric_unit {
	const char *suffix, *base;   /* "_us" becomes "_seconds" */
	double scale;
};
static const struct metric_unit time_units[] = {
	{"_ns", "_seconds", 1e-9}, {"_us", "_seconds", 1e-6}, {"_ms", "_seconds", 1e-3}, {"_s", "_seconds", 1},
};

/* The metric's name for map m ("@latency_us": uring_trace_latency_seconds,
 * *scale 1e-6), before a counter's "_total". */
static void metric_name(const struct ut_map *m, char *out, size_t len, double *scale)
{
	char base[256];
	metric_name_part(m->name[1] ? m->name + 1 : "map", "m", base, sizeof(base));
	*scale = 1;
	size_t n = strlen(base);
	for (size_t i = 0; is_hist(m) && i < sizeof(time_units) / sizeof(time_units[0]); i++) {
		size_t s = strlen(time_units[i].suffix);
		if (n > s && strcmp(base + n - s, time_units[i].suffix) == 0) {
			base[n - s] = 0;
			*scale = time_units[i].scale;
			snprintf(out, len, "uring_trace_%s%s", base, time_units[i].base);
			return;
		}
	}
	snprintf(out, len, "uring_trace_%s", base);
}

void ut_prometheus_label_value(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* The labels of entry e: each key under its name (the expression that gave
 * it: op, path, ctx; key0... when it has none), and extra (le="..."). */
static void metric_labels(const struct ut_program *prog, const struct ut_map *m, const struct entry *e, const char *extra,
			  FILE *out)
{
	if (!m->nkeys && !extra)
		return;
	fputc('{', out);
	for (unsigned k = 0; k < m->nkeys; k++) {
		char name[64], value[512];
		const char *given = m->key_names && m->key_names[k][0] ? m->key_names[k] : NULL;
		if (given)
			metric_name_part(given, "key_", name, sizeof(name));
		else
			snprintf(name, sizeof(name), "key%u", k);
		for (unsigned j = 0; j < k; j++)   /* the same name twice: the second numbered */
			if (m->key_names && strcmp(m->key_names[j], m->key_names[k]) == 0)
				snprintf(name + strlen(name), sizeof(name) - strlen(name), "_%u", k);
		const char *stack = key_stack(m, e, k);
		if (stack) {   /* frames joined with ';', as flame graphs take them */
			snprintf(value, sizeof(value), "%s", stack);
			for (char *c = value; *c; c++)
				*c = *c == '\n' ? ';' : *c;
		} else {
			ut_value_text(prog, m->keys, m->nkeys, e->key, m->key_size, &m->key_show[k], value, sizeof(value));
		}
		fprintf(out, "%s%s=", k ? "," : "", name);
		ut_prometheus_label_value(out, value);
	}
	if (extra)
		fprintf(out, "%s%s", m->nkeys ? "," : "", extra);
	fputc('}', out);
}

/* A histogram's entries of one key as a Prometheus histogram: every
 * bucket from the lowest to the highest taken (the empty ones too, so
 * that a bucket's series does not come and go), cumulative, its upper
 * bound in the metric's unit; the sum from each bucket's middle (BPF
 * histograms keep counts, not values: an estimate). */
static void metric_hist(const struct ut_program *prog, const struct ut_map *m, const char *name, double scale,
			const struct entry *v, size_t n, FILE *out)
{
	int64_t cumulative = 0;
	double sum = 0;
	size_t at = 0;
	for (uint64_t b = v[0].bucket; b <= v[n - 1].bucket; b++) {
		int64_t count = 0;
		if (at < n && v[at].bucket == b)
			count = v[at++].shown;
		struct ut_bucket_bounds bounds;
		ut_aggs[m->agg].bucket_bounds(m, b, &bounds);
		cumulative += count;
		double lo = bounds.has_min ? (double)bounds.min : bounds.has_max ? (double)bounds.max : 0;
		double hi = bounds.has_max ? (double)bounds.max : lo;
		sum += (double)count * (lo + hi) / 2 * scale;
		if (!bounds.has_max)
			continue;   /* above the last bound: +Inf's */
		char le[64];
		snprintf(le, sizeof(le), "le=\"%.9g\"", (double)bounds.max * scale);
		fprintf(out, "%s_bucket", name);
		metric_labels(prog, m, &v[0], le, out);
		fprintf(out, " %" PRId64 "\n", cumulative);
	}
	fprintf(out, "%s_bucket", name);
	metric_labels(prog, m, &v[0], "le=\"+Inf\"", out);
	fprintf(out, " %" PRId64 "\n%s_sum", cumulative, name);
	metric_labels(prog, m, &v[0], NULL, out);
	fprintf(out, " %.9g\n%s_count", sum, name);
	metric_labels(prog, m, &v[0], NULL, out);
	fprintf(out, " %" PRId64 "\n", cumulative);
}

void ut_maps_prometheus(const struct ut_program *prog, struct bpf_object *obj, const struct ut_user_maps *user, FILE *out)
{
	for (unsigned i = 0; i < prog->nmaps; i++) {
		const struct ut_map *m = &prog->maps[i];
		struct entries es;
		if (m->is_private || m->ntuple || !value_is_number(m) || read_sorted(prog, i, obj, user, &es) < 0)
			continue;   /* text values and tuples are no metrics */
		char name[300];
		double scale;
		metric_name(m, name, sizeof(name), &scale);
		bool counter = m->agg == UT_AGG_COUNT;
		if (counter && (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total") != 0))
			strcat(name, "_total");
		const char *agg = ut_aggs[m->agg].name ? ut_aggs[m->agg].name : "value";
		fprintf(out, "# HELP %s uring-trace map %s (%s)\n# TYPE %s %s\n", name, m->name, agg, name,
			is_hist(m) ? "histogram" : counter ? "counter" : "gauge");
		for (size_t j = 0, next; j < es.n; j = next) {
			next = j + 1;
			if (is_hist(m)) {   /* the buckets of one key (sorted: read_sorted) */
				while (next < es.n && cmp_key_prefix(&es.v[j], &es.v[next]) == 0)
					next++;
				metric_hist(prog, m, name, scale, es.v + j, next - j, out);
				continue;
			}
			fputs(name, out);
			metric_labels(prog, m, &es.v[j], NULL, out);
			if (m->agg == UT_AGG_AVG || m->agg == UT_AGG_STATS)
				fprintf(out, " %.9g\n", es.v[j].total.count ? (double)es.v[j].total.sum / (double)es.v[j].total.count : 0);
			else
				fprintf(out, " %" PRId64 "\n", es.v[j].shown);
		}
		free_entries(&es);
	}
}

void ut_map_visit(const struct ut_program *prog, unsigned i, struct bpf_object *obj, const struct ut_user_maps *user,
		  void (*row)(void *ctx, const struct ut_map_row *r), void *ctx)
{
	const struct ut_map *m = &prog->maps[i];
	struct entries es;
	if (m->ntuple || !value_is_number(m) || read_entries(prog, i, obj, user, &es) < 0)
		return;
	for (size_t j = 0; j < es.n; j++) {
		char key[1024];
		key_text(prog, m, &es.v[j], key, sizeof(key));
		struct ut_map_row r = {.key = key, .value = es.v[j].shown, .bucket = is_hist(m), .index = es.v[j].bucket};
		if (m->agg == UT_AGG_AVG || m->agg == UT_AGG_STATS)
			r.value = es.v[j].total.count ? es.v[j].total.sum / (int64_t)es.v[j].total.count : 0;
		if (r.bucket)
			ut_aggs[m->agg].bucket_bounds(m, r.index, &r.bounds);
		row(ctx, &r);
	}
	free_entries(&es);
}
