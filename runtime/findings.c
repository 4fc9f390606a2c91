#include "runtime/findings.h"

#include <inttypes.h>
#include <linux/types.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "bpf/records.h"
#include "runtime/decode.h"

/* A key's value or an item of evidence, as a trace argument has it: a
 * number of its kind, or text. */
struct finding_value {
	char *name;                /* evidence: its name; a key's: NULL */
	enum ut_arg_kind kind;
	uint64_t number;           /* the bits of a number (the union's u) */
	char *text;                /* UT_ARG_STR's */
};

struct finding {
	char *identity;            /* the tag, then each key value's text, '\x1f' between them */
	char *tag;
	struct finding_value *key, *evidence;
	unsigned nkey, nevidence;
	enum ut_severity severity; /* the highest made */
	uint64_t count, first_ns;
	uint32_t pid, tid;         /* the thread first made on; 0: uring-trace's own (BEGIN, END) */
	char *message, *fix;       /* the latest made */
};

struct ut_findings {
	struct finding *v;
	size_t n, capacity;
	struct hmap index;         /* identity's two hashes -> its index */
	uint32_t self;             /* uring-trace's pid: BEGIN and END run in it */
};

struct ut_findings *ut_findings_new(void)
{
	struct ut_findings *f = xcalloc(1, sizeof(*f));
	f->self = (uint32_t)getpid();
	return f;
}

static void free_values(struct finding_value *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].text);
	}
	free(v);
}

void ut_findings_free(struct ut_findings *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		struct finding *x = &f->v[i];
		free(x->identity);
		free(x->tag);
		free_values(x->key, x->nkey);
		free_values(x->evidence, x->nevidence);
		free(x->message);
		free(x->fix);
	}
	free(f->v);
	hmap_free(&f->index);
	free(f);
}

int ut_severity_named(const char *name)
{
	for (int s = UT_INFO; s < UT_SEVERITIES; s++)
		if (strcmp(ut_severity_names[s], name) == 0)
			return s;
	return -1;
}

/* A trace argument's value as text: how a key's value is known. */
static void arg_text(const struct ut_arg *a, char *buf, size_t len)
{
	switch (a->kind) {
	case UT_ARG_INT: snprintf(buf, len, "%" PRId64, a->i); break;
	case UT_ARG_UINT: case UT_ARG_KOID: snprintf(buf, len, "%" PRIu64, a->u); break;
	case UT_ARG_PTR: snprintf(buf, len, "0x%" PRIx64, a->u); break;
	case UT_ARG_BOOL: snprintf(buf, len, "%s", a->b ? "true" : "false"); break;
	case UT_ARG_DOUBLE: snprintf(buf, len, "%g", a->d); break;
	default: snprintf(buf, len, "%s", a->s ? a->s : ""); break;
	}
}

static struct finding_value value_of(const struct ut_arg *a, bool named)
{
	return (struct finding_value){.name = named ? xstrdup(a->name) : NULL, .kind = a->kind, .number = a->u,
				      .text = a->kind == UT_ARG_STR ? xstrdup(a->s ? a->s : "") : NULL};
}

/* The record's args from UT_FINDING_PARTS on: its key's values and its
 * evidence, in *keys and *evidence. */
static void parts(const struct ut_program *p, const struct ut_event *ev, const void *rec, size_t size,
		  struct ut_decoded_args *keys, struct ut_decoded_args *evidence)
{
	keys->n = evidence->n = 0;
	for (unsigned i = UT_FINDING_PARTS; i < ev->nargs; i++)
		ut_decode_arg(p, ev, rec, size, i, strcmp(ev->args[i].name, UT_FINDING_KEY) == 0 ? keys : evidence);
}

static struct finding *find(struct ut_findings *f, const char *identity, uint64_t a, uint64_t b)
{
	uint64_t *at = hmap_find(&f->index, a, b);
	if (at && strcmp(f->v[*at].identity, identity) == 0)
		return &f->v[*at];
	for (size_t i = 0; at && i < f->n; i++)   /* the hashes met: a script's strings can be made to */
		if (strcmp(f->v[i].identity, identity) == 0)
			return &f->v[i];
	return NULL;
}

int ut_findings_take(struct ut_findings *f, const struct ut_program *p, const struct ut_event *ev, const void *rec,
		     size_t size)
{
	const struct ut_rec_hdr *h = rec;
	struct ut_decoded_args *keys = xmalloc(2 * sizeof(*keys)), *evidence = keys + 1;
	parts(p, ev, rec, size, keys, evidence);
	struct strbuf identity = {0};
	sb_puts(&identity, ev->name.text);
	for (unsigned i = 0; i < keys->n; i++) {
		char text[256];
		arg_text(&keys->args[i], text, sizeof(text));
		sb_printf(&identity, "\x1f%s", text);
	}
	uint64_t a = ut_hash_bytes(UT_HASH_INIT, identity.s, strlen(identity.s)),
		 b = ut_hash_bytes(0x84222325cbf29ce4ull, identity.s, strlen(identity.s));
	struct finding *x = find(f, identity.s, a, b);
	bool first = x == NULL;
	if (first) {
		grow_array((void **)&f->v, &f->capacity, f->n + 1, sizeof(*f->v));
		bool created;
		*hmap_insert(&f->index, a, b, &created) = f->n;
		x = &f->v[f->n++];
		bool self = h->pid == f->self;
		*x = (struct finding){.identity = identity.s, .tag = xstrdup(ev->name.text), .nkey = keys->n,
				      .first_ns = h->ts, .pid = self ? 0 : h->pid, .tid = self ? 0 : h->tid,
				      .severity = UT_INFO};
		identity.s = NULL;
		x->key = xcalloc(keys->n + 1, sizeof(*x->key));
		for (unsigned i = 0; i < keys->n; i++)
			x->key[i] = value_of(&keys->args[i], false);
	}
	sb_free(&identity);
	int before = first ? -1 : (int)x->severity;
	x->count++;
	enum ut_severity severity = ut_finding_severity(ev, rec, size);
	if (severity > x->severity)
		x->severity = severity;
	char text[512];
	free(x->message);
	ut_value_text(p, ev->fields, ev->nfields, rec, size, &ev->args[UT_FINDING_MESSAGE].value, text, sizeof(text));
	x->message = xstrdup(text);
	free(x->fix);
	ut_value_text(p, ev->fields, ev->nfields, rec, size, &ev->args[UT_FINDING_FIX].value, text, sizeof(text));
	x->fix = xstrdup(text);
	free_values(x->evidence, x->nevidence);
	x->nevidence = evidence->n;
	x->evidence = xcalloc(evidence->n + 1, sizeof(*x->evidence));
	for (unsigned i = 0; i < evidence->n; i++)
		x->evidence[i] = value_of(&evidence->args[i], true);
	free(keys);
	return before;
}

int ut_findings_worst(const struct ut_findings *f)
{
	int worst = -1;
	for (size_t i = 0; f && i < f->n; i++)
		if ((int)f->v[i].severity > worst)
			worst = (int)f->v[i].severity;
	return worst;
}

/* The findings in the summary's order: the most severe first, then as
 * first made. */
static size_t *in_order(const struct ut_findings *f)
{
	size_t *order = xcalloc(f->n + 1, sizeof(*order)), n = 0;
	for (int s = UT_CRIT; s >= UT_INFO; s--)
		for (size_t i = 0; i < f->n; i++)
			if ((int)f->v[i].severity == s)
				order[n++] = i;
	return order;
}

static void value_text(const struct finding_value *v, char *buf, size_t len)
{
	struct ut_arg a = {.kind = v->kind, .u = v->number};
	if (v->kind == UT_ARG_STR)
		a.s = v->text;
	arg_text(&a, buf, len);
}

void ut_findings_print(const struct ut_findings *f, FILE *out)
{
	if (!f || !f->n)
		return;
	size_t *order = in_order(f);
	fputs("\nfindings:\n", out);
	for (size_t o = 0; o < f->n; o++) {
		const struct finding *x = &f->v[order[o]];
		char text[256], when[64];
		fprintf(out, "%s %s", ut_severity_names[x->severity], x->tag);
		for (unsigned k = 0; k < x->nkey; k++) {
			value_text(&x->key[k], text, sizeof(text));
			fprintf(out, "%s%s", k ? ", " : "[", text);
		}
		fprintf(out, "%s: %s\n", x->nkey ? "]" : "", x->message);
		ut_wall_time_text("%H:%M:%S.%f", x->first_ns, when, sizeof(when));
		fprintf(out, "\t%" PRIu64 " time%s, first at %s", x->count, x->count == 1 ? "" : "s", when);
		if (x->pid)
			fprintf(out, " in pid %" PRIu32 " tid %" PRIu32 "\n", x->pid, x->tid);
		else
			fputs(" by uring-trace (BEGIN or END)\n", out);
		if (x->fix[0])
			fprintf(out, "\tfix: %s\n", x->fix);
		for (unsigned e = 0; e < x->nevidence; e++) {
			value_text(&x->evidence[e], text, sizeof(text));
			fprintf(out, "%s%s = %s", e ? ", " : "\tevidence: ", x->evidence[e].name, text);
		}
		if (x->nevidence)
			fputc('\n', out);
	}
	free(order);
}

/* Numbers as numbers, pointers and text as strings (as map keys are). */
static void value_json(const struct finding_value *v, FILE *out)
{
	char text[256];
	switch (v->kind) {
	case UT_ARG_INT: fprintf(out, "%" PRId64, (int64_t)v->number); return;
	case UT_ARG_UINT: case UT_ARG_KOID: fprintf(out, "%" PRIu64, v->number); return;
	case UT_ARG_BOOL: fputs(v->number ? "true" : "false", out); return;
	default:
		value_text(v, text, sizeof(text));
		ut_json_string(out, text);
	}
}

void ut_findings_json(const struct ut_findings *f, FILE *out)
{
	fputc('[', out);
	size_t *order = f ? in_order(f) : NULL;
	for (size_t o = 0; f && o < f->n; o++) {
		const struct finding *x = &f->v[order[o]];
		fputs(o ? ",{\"tag\":" : "{\"tag\":", out);
		ut_json_string(out, x->tag);
		fputs(",\"key\":[", out);
		for (unsigned k = 0; k < x->nkey; k++) {
			fputs(k ? "," : "", out);
			value_json(&x->key[k], out);
		}
		fprintf(out, "],\"severity\":\"%s\",\"count\":%" PRIu64 ",\"first_ns\":%" PRIu64 ",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"message\":", ut_severity_names[x->severity], x->count, x->first_ns, x->pid,
			x->tid);
		ut_json_string(out, x->message);
		fputs(",\"fix\":", out);
		ut_json_string(out, x->fix);
		fputs(",\"evidence\":{", out);
		for (unsigned e = 0; e < x->nevidence; e++) {
			fputs(e ? "," : "", out);
			ut_json_string(out, x->evidence[e].name);
			fputc(':', out);
			value_json(&x->evidence[e], out);
		}
		fputs("}}", out);
	}
	free(order);
	fputc(']', out);
}

void ut_findings_visit(const struct ut_findings *f, void (*one)(void *ctx, const struct ut_finding_seen *seen),
		       void *ctx)
{
	size_t *order = f ? in_order(f) : NULL;
	for (size_t o = 0; f && o < f->n; o++) {
		const struct finding *x = &f->v[order[o]];
		char key[512] = "";
		size_t at = 0;
		for (unsigned k = 0; k < x->nkey && at + 1 < sizeof(key); k++) {
			char text[256];
			value_text(&x->key[k], text, sizeof(text));
			at += (size_t)snprintf(key + at, sizeof(key) - at, "%s%s", k ? ", " : "", text);
		}
		struct ut_finding_seen seen = {.tag = x->tag, .key = key, .severity = x->severity, .count = x->count,
					       .message = x->message};
		one(ctx, &seen);
	}
	free(order);
}
