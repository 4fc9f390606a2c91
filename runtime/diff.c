#include "runtime/diff.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/summary.h"

/* Rows of one map shown at most: the largest changes. */
#define CHANGES_A_MAP 12

struct ut_summary_json {
	struct json_object *root;
};

static struct ut_summary_json *checked(struct json_object *root, const char *what, char *why, size_t len)
{
	struct json_object *schema, *maps;
	if (!root || !json_object_is_type(root, json_type_object)) {
		snprintf(why, len, "%s is not JSON (uring-trace --json or --baseline writes the summary)", what);
	} else if (!json_object_object_get_ex(root, "schema", &schema) || !json_object_is_type(schema, json_type_int) ||
		   !json_object_object_get_ex(root, "maps", &maps) || !json_object_is_type(maps, json_type_object)) {
		snprintf(why, len, "%s is not a uring-trace summary of schema 1 or later (no \"schema\" and \"maps\")", what);
	} else if (json_object_get_int(schema) > UT_JSON_SCHEMA) {
		snprintf(why, len, "%s is of schema %d; this uring-trace reads up to %d", what, json_object_get_int(schema),
			 UT_JSON_SCHEMA);
	} else {
		struct ut_summary_json *s = xcalloc(1, sizeof(*s));
		s->root = root;
		return s;
	}
	json_object_put(root);
	return NULL;
}

struct ut_summary_json *ut_summary_json_read(const char *path, char *why, size_t len)
{
	struct json_object *root = json_object_from_file(path);
	if (!root) {
		snprintf(why, len, "cannot read %s: %s", path, json_util_get_last_err());
		return NULL;
	}
	return checked(root, path, why, len);
}

struct ut_summary_json *ut_summary_json_parse(const char *text, char *why, size_t len)
{
	return checked(json_tokener_parse(text), "this run's summary", why, len);
}

void ut_summary_json_free(struct ut_summary_json *s)
{
	if (!s)
		return;
	json_object_put(s->root);
	free(s);
}

/* What a map entry is worth in a comparison: its value or count, and a
 * histogram's p50 and p99 (NAN when it has none); text values compare as
 * text. */
struct worth {
	double n, p50, p99;
	const char *text;
};

static const struct worth NONE = {NAN, NAN, NAN, NULL};

static double number_of(struct json_object *o)
{
	return o && (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double))
		       ? json_object_get_double(o)
		       : NAN;
}

static struct worth worth_of(struct json_object *entry)
{
	struct worth w = NONE;
	struct json_object *v, *p, *x;
	if (json_object_object_get_ex(entry, "count", &v) && json_object_object_get_ex(entry, "percentiles", &p)) {
		w.n = number_of(v);
		w.p50 = json_object_object_get_ex(p, "p50", &x) ? number_of(x) : NAN;
		w.p99 = json_object_object_get_ex(p, "p99", &x) ? number_of(x) : NAN;
	} else if (json_object_object_get_ex(entry, "value", &v)) {
		w.n = number_of(v);
		if (isnan(w.n))   /* text, a tuple, stats' object */
			w.text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
	}
	return w;
}

/* An entry's key as the text summary writes it: READ, inline. */
static void key_text(struct json_object *entry, char *buf, size_t len)
{
	struct json_object *key;
	buf[0] = 0;
	if (!json_object_object_get_ex(entry, "key", &key) || !json_object_is_type(key, json_type_array))
		return;
	size_t at = 0;
	for (size_t i = 0; i < json_object_array_length(key) && at + 1 < len; i++) {
		struct json_object *k = json_object_array_get_idx(key, i);
		const char *t = json_object_is_type(k, json_type_string) ? json_object_get_string(k)
									  : json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", t);
	}
}

struct change {
	char key[256];
	struct worth before, after;
	bool is_new, gone;
	double size;   /* what orders them: the largest first */
};

static int largest_first(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	return (x->size < y->size) - (x->size > y->size);
}

static bool same(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void number(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", v == floor(v) ? 0 : 2, v);
}

static void print_change(const struct change *c, FILE *out)
{
	char b[32], a[32];
	fprintf(out, "  %-40.40s ", c->key[0] ? c->key : "(no key)");
	if (c->before.text || c->after.text) {
		fprintf(out, "%s -> %s\n", c->before.text ? c->before.text : "-", c->after.text ? c->after.text : "-");
		return;
	}
	number(c->before.n, b, sizeof(b));
	number(c->after.n, a, sizeof(a));
	fprintf(out, "%10s -> %-10s", b, a);
	if (c->is_new || c->gone)
		fprintf(out, " %s", c->is_new ? "(new)" : "(gone)");
	else if (c->before.n)
		fprintf(out, " %+.0f%%", (c->after.n - c->before.n) / c->before.n * 100);
	if (!isnan(c->after.p50) || !isnan(c->before.p50)) {
		char b50[32], a50[32], b99[32], a99[32];
		number(c->before.p50, b50, sizeof(b50));
		number(c->after.p50, a50, sizeof(a50));
		number(c->before.p99, b99, sizeof(b99));
		number(c->after.p99, a99, sizeof(a99));
		fprintf(out, "  p50 %s -> %s, p99 %s -> %s", b50, a50, b99, a99);
	}
	fputc('\n', out);
}

/* The entries of one map that differ. */
static void diff_map(const char *name, struct json_object *before, struct json_object *after, FILE *out)
{
	size_t nb = before ? json_object_array_length(before) : 0, na = after ? json_object_array_length(after) : 0;
	struct change *v = xcalloc(nb + na + 1, sizeof(*v));
	size_t n = 0;
	struct json_object *by_key = json_object_new_object();   /* the baseline's entries by key */
	for (size_t i = 0; i < nb; i++) {
		char key[256];
		key_text(json_object_array_get_idx(before, i), key, sizeof(key));
		json_object_object_add(by_key, key, json_object_get(json_object_array_get_idx(before, i)));
	}
	for (size_t i = 0; i < na; i++) {
		struct json_object *e = json_object_array_get_idx(after, i), *was;
		struct change c = {.before = NONE, .after = worth_of(e)};
		key_text(e, c.key, sizeof(c.key));
		if (json_object_object_get_ex(by_key, c.key, &was)) {
			c.before = worth_of(was);
			json_object_object_del(by_key, c.key);
		} else {
			c.is_new = true;
		}
		bool changed = c.is_new || !same(c.before.n, c.after.n) || !same(c.before.p50, c.after.p50) ||
			       !same(c.before.p99, c.after.p99) ||
			       (c.before.text && c.after.text && strcmp(c.before.text, c.after.text) != 0);
		if (!changed)
			continue;
		c.size = c.is_new ? (isnan(c.after.n) ? 1 : fabs(c.after.n)) : fabs(c.after.n - c.before.n);
		v[n++] = c;
	}
	json_object_object_foreach(by_key, key, was)   /* in the baseline only */
	{
		struct change c = {.before = worth_of(was), .after = NONE, .gone = true};
		snprintf(c.key, sizeof(c.key), "%s", key);
		c.size = isnan(c.before.n) ? 1 : fabs(c.before.n);
		v[n++] = c;
	}
	if (n) {
		qsort(v, n, sizeof(*v), largest_first);
		fprintf(out, "%s: %zu of its keys changed\n", name, n);
		for (size_t i = 0; i < n && i < CHANGES_A_MAP; i++)
			print_change(&v[i], out);
		if (n > CHANGES_A_MAP)
			fprintf(out, "  ... %zu more\n", n - CHANGES_A_MAP);
	}
	json_object_put(by_key);
	free(v);
}

/* A finding's identity, "TAG[key]", and its severity. */
static void finding_id(struct json_object *f, char *buf, size_t len, const char **severity)
{
	struct json_object *tag, *key, *sev;
	char keys[200] = "";
	if (json_object_object_get_ex(f, "key", &key) && json_object_array_length(key)) {
		struct json_object *wrapper = json_object_new_object();
		json_object_object_add(wrapper, "key", json_object_get(key));
		key_text(wrapper, keys, sizeof(keys));
		json_object_put(wrapper);
	}
	snprintf(buf, len, "%s%s%s%s", json_object_object_get_ex(f, "tag", &tag) ? json_object_get_string(tag) : "?",
		 keys[0] ? "[" : "", keys, keys[0] ? "]" : "");
	*severity = json_object_object_get_ex(f, "severity", &sev) ? json_object_get_string(sev) : "?";
}

static void diff_findings(struct json_object *before, struct json_object *after, FILE *out)
{
	struct json_object *was = json_object_new_object();
	size_t nb = before ? json_object_array_length(before) : 0, na = after ? json_object_array_length(after) : 0;
	for (size_t i = 0; i < nb; i++) {
		char id[256];
		const char *sev;
		finding_id(json_object_array_get_idx(before, i), id, sizeof(id), &sev);
		json_object_object_add(was, id, json_object_new_string(sev));
	}
	bool said = false;
	for (size_t i = 0; i < na; i++) {
		char id[256];
		const char *sev;
		struct json_object *f = json_object_array_get_idx(after, i), *old, *msg;
		finding_id(f, id, sizeof(id), &sev);
		const char *message = json_object_object_get_ex(f, "message", &msg) ? json_object_get_string(msg) : "";
		if (!json_object_object_get_ex(was, id, &old)) {
			fprintf(out, "%s  + %s %s: %s (new)\n", said ? "" : "findings:\n", sev, id, message);
			said = true;
			continue;
		}
		if (strcmp(json_object_get_string(old), sev) != 0) {
			fprintf(out, "%s  ~ %s %s: %s (was %s)\n", said ? "" : "findings:\n", sev, id, message,
				json_object_get_string(old));
			said = true;
		}
		json_object_object_del(was, id);
	}
	json_object_object_foreach(was, id, sev)
	{
		fprintf(out, "%s  - %s %s (gone)\n", said ? "" : "findings:\n", json_object_get_string(sev), id);
		said = true;
	}
	json_object_put(was);
}

void ut_summary_diff(const struct ut_summary_json *before, const struct ut_summary_json *after, const char *before_name,
		     FILE *out)
{
	struct json_object *mb, *ma, *fb = NULL, *fa = NULL, *eb, *ea;
	json_object_object_get_ex(before->root, "maps", &mb);
	json_object_object_get_ex(after->root, "maps", &ma);
	json_object_object_get_ex(before->root, "findings", &fb);
	json_object_object_get_ex(after->root, "findings", &fa);
	fprintf(out, "\nagainst %s (%.0f events then, %.0f now):\n", before_name,
		json_object_object_get_ex(before->root, "events", &eb) ? number_of(eb) : NAN,
		json_object_object_get_ex(after->root, "events", &ea) ? number_of(ea) : NAN);
	json_object_object_foreach(ma, name, entries)
	{
		struct json_object *old = NULL;
		json_object_object_get_ex(mb, name, &old);
		diff_map(name, old, entries, out);
	}
	json_object_object_foreach(mb, gone_name, gone_entries)
	{
		struct json_object *now;
		if (!json_object_object_get_ex(ma, gone_name, &now))
			diff_map(gone_name, gone_entries, NULL, out);
	}
	diff_findings(fb, fa, out);
}
