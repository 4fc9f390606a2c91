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

/* The latest made is kept as its record, and its message, fix and
 * evidence are made from it when something shows them (the summary,
 * --json, --live, --metrics): the default script's doctor makes a finding
 * at every request or system call of some workloads (PUNT, BATCH on fio),
 * and making their texts each time was half of the reader's work there. */
struct finding {
	char *identity;            /* the tag, then each key value's text, '\x1f' between them */
	char *tag;
	struct finding_value *key, *evidence;
	unsigned nkey, nevidence;
	enum ut_severity severity; /* the highest made */
	uint64_t count, first_ns;
	uint32_t pid, tid;         /* the thread first made on; 0: uring-trace's own (BEGIN, END) */
	char *message, *fix;       /* the latest made's, once made from its record */
	const struct ut_event *latest_ev;   /* the latest made's event while its texts are not made; else NULL */
	unsigned char *latest;     /* its record */
	size_t latest_capacity;
};

/* A finding's identity as its records have it: the event, then the bytes
 * of its key's fields (finding_bytes). */
struct raw_identity {
	unsigned char *bytes;
	size_t len, finding;
};

/* Findings kept, by default: the summary, --json, the live view and the
 * metrics endpoint (a series each) show every one, and a capture left
 * running for days on a machine whose processes come and go makes new
 * ones all along (a 30-minute soak under liburing's suite: 1,398, keyed
 * by ring and process).  Past the bound new ones are counted, not kept;
 * UT_MAX_FINDINGS sets another (the tests' small one). */
#define MAX_FINDINGS 4096

struct ut_findings {
	const struct ut_program *prog;   /* the records' */
	size_t max;                /* findings kept at most */
	uint64_t not_kept;         /* made new past max */
	int not_kept_worst;        /* their highest severity; -1: none */
	struct finding *v;
	size_t n, capacity;
	struct hmap index;         /* identity's two hashes -> its index */
	struct raw_identity *raw;  /* identities by their records' bytes */
	size_t nraw, raw_capacity;
	struct hmap raw_index;     /* their bytes' hash and length -> an index in raw */
	bool raw_met;              /* two identities' bytes had one hash and length: one is found by its text */
	unsigned char *how;        /* per event of prog: HOW_* once known */
	uint32_t self;             /* uring-trace's pid: BEGIN and END run in it */
};

struct ut_findings *ut_findings_new(void)
{
	struct ut_findings *f = xcalloc(1, sizeof(*f));
	f->self = (uint32_t)getpid();
	const char *max = getenv("UT_MAX_FINDINGS");
	f->max = max && atoi(max) > 0 ? (size_t)atoi(max) : MAX_FINDINGS;
	f->not_kept_worst = -1;
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
		free(x->latest);
	}
	free(f->v);
	hmap_free(&f->index);
	for (size_t i = 0; i < f->nraw; i++)
		free(f->raw[i].bytes);
	free(f->raw);
	hmap_free(&f->raw_index);
	free(f->how);
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

/* Whether v's text is made from the record's bytes alone: not a stack's
 * (named from the stack table) or a disk's (from /sys) name, which could
 * read differently later. */
static bool text_from_bytes(const struct ut_value *v)
{
	if (v->kind == UT_VAL_FORMAT) {
		for (unsigned i = 0; i < v->nfmt; i++)
			if (!text_from_bytes(&v->fmt[i]))
				return false;
		return true;
	}
	return v->kind != UT_VAL_FIELD ||
	       (v->display != UT_SHOW_KSTACK && v->display != UT_SHOW_USTACK && v->display != UT_SHOW_USYM &&
		v->display != UT_SHOW_DISK);
}

static bool add_bytes(unsigned char *out, size_t cap, size_t *len, const void *bytes, size_t n)
{
	if (n > cap - *len)
		return false;
	memcpy(out + *len, bytes, n);
	*len += n;
	return true;
}

/* The bytes value v's text is made of: its fields' (a string's up to its
 * NUL and the NUL; buf()'s all: its first byte counts them). */
static bool value_bytes(const struct ut_event *ev, const void *rec, const struct ut_value *v, unsigned char *out,
			size_t cap, size_t *len)
{
	if (v->kind == UT_VAL_FORMAT) {
		for (unsigned i = 0; i < v->nfmt; i++)
			if (!value_bytes(ev, rec, &v->fmt[i], out, cap, len))
				return false;
		return true;
	}
	if (v->kind != UT_VAL_FIELD)
		return true;   /* text or nothing: the same in every record of the event */
	const struct ut_field *f = &ev->fields[v->field];
	const char *at = (const char *)rec + f->offset;
	size_t n = f->type != UT_F_STR ? sizeof(uint64_t)
		   : v->display == UT_SHOW_BUF ? f->size : strnlen(at, f->size);
	return add_bytes(out, cap, len, at, n) && (f->type != UT_F_STR || add_bytes(out, cap, len, "", 1));
}

#define FINDING_BYTES 512

/* A finding's identity as the record has it, in out (*len bytes): its
 * event, then the bytes its key's values are made of (HOW_BY_BYTES: the
 * key's text is made of them alone).  False where they do not fit. */
static bool finding_bytes(const struct ut_program *p, const struct ut_event *ev, const void *rec,
			  unsigned char *out, size_t *len)
{
	uint32_t event = (uint32_t)(ev - p->events);
	*len = 0;
	add_bytes(out, FINDING_BYTES, len, &event, sizeof(event));
	for (unsigned i = UT_FINDING_PARTS; i < ev->nargs; i++)
		if (strcmp(ev->args[i].name, UT_FINDING_KEY) == 0 &&
		    !value_bytes(ev, rec, &ev->args[i].value, out, FINDING_BYTES, len))
			return false;
	return true;
}

/* A hash of the bytes of an identity (its length is the other word of
 * its key in raw_index), a word at a time. */
static uint64_t bytes_hash(const unsigned char *bytes, size_t len)
{
	uint64_t h = len;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;
		memcpy(&w, bytes + i, len - i < 8 ? len - i : 8);
		h = hmap_hash(h, w);
	}
	return h;
}

/* The finding of a record's identity, by its bytes; NULL when not known
 * that way. */
static struct finding *find_raw(struct ut_findings *f, const unsigned char *bytes, size_t len, uint64_t hash)
{
	uint64_t *at = hmap_find(&f->raw_index, hash, len);
	if (!at)
		return NULL;
	const struct raw_identity *r = &f->raw[*at];
	return r->len == len && memcmp(r->bytes, bytes, len) == 0 ? &f->v[r->finding] : NULL;
}

static void add_raw(struct ut_findings *f, const unsigned char *bytes, size_t len, uint64_t hash, size_t finding)
{
	bool created;
	uint64_t *at = hmap_insert(&f->raw_index, hash, len, &created);
	if (!created) {   /* another identity's bytes have this hash and length: this one is found by its text */
		f->raw_met = true;
		return;
	}
	grow_array((void **)&f->raw, &f->raw_capacity, f->nraw + 1, sizeof(*f->raw));
	unsigned char *copy = xmalloc(len);
	memcpy(copy, bytes, len);
	f->raw[f->nraw] = (struct raw_identity){.bytes = copy, .len = len, .finding = finding};
	*at = f->nraw++;
}

/* The finding of the record's identity, made from its key's text, created
 * when new (*first); NULL when new and f holds its max already. */
static struct finding *find_by_text(struct ut_findings *f, const struct ut_event *ev, const void *rec, size_t size,
				    bool *first)
{
	const struct ut_rec_hdr *h = rec;
	struct ut_decoded_args *keys = xmalloc(2 * sizeof(*keys)), *evidence = keys + 1;
	parts(f->prog, ev, rec, size, keys, evidence);
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
	*first = x == NULL;
	if (*first && f->n < f->max) {
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
	free(keys);
	return x;
}

/* The latest made's message, fix and evidence, made from its record. */
static void make_texts(const struct ut_findings *f, struct finding *x, const struct ut_event *ev, const void *rec,
		       size_t size)
{
	const struct ut_program *p = f->prog;
	struct ut_decoded_args *keys = xmalloc(2 * sizeof(*keys)), *evidence = keys + 1;
	parts(p, ev, rec, size, keys, evidence);
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
	x->latest_ev = NULL;
}

/* The texts of every finding's latest made, before they are shown. */
static void make_all_texts(struct ut_findings *f)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (f->v[i].latest_ev)
			make_texts(f, &f->v[i], f->v[i].latest_ev, f->v[i].latest, f->v[i].latest_ev->size);
}

/* What an event's findings allow (how): their identity found by the
 * bytes of their key's fields, their texts made when shown. */
enum { HOW_KNOWN = 1, HOW_BY_BYTES = 2, HOW_LATER = 4 };

static unsigned char how_of(const struct ut_event *ev)
{
	unsigned char how = HOW_KNOWN | HOW_BY_BYTES | HOW_LATER;
	for (unsigned i = 0; i < ev->nargs; i++) {
		const struct ut_value *v = &ev->args[i].value;
		if (text_from_bytes(v))
			continue;
		how &= (unsigned char)~HOW_LATER;
		if (i >= UT_FINDING_PARTS && strcmp(ev->args[i].name, UT_FINDING_KEY) == 0)
			how &= (unsigned char)~HOW_BY_BYTES;
	}
	return how;
}

int ut_findings_take(struct ut_findings *f, const struct ut_program *p, const struct ut_event *ev, const void *rec,
		     size_t size)
{
	size_t event = (size_t)(ev - p->events);
	if (!f->prog) {
		f->prog = p;
		f->how = xcalloc(p->nevents + 1, 1);
	}
	if (!f->how[event])
		f->how[event] = how_of(ev);
	unsigned char bytes[FINDING_BYTES];
	size_t len = 0;
	bool by_bytes = (f->how[event] & HOW_BY_BYTES) && finding_bytes(p, ev, rec, bytes, &len), first = false;
	uint64_t hash = by_bytes ? bytes_hash(bytes, len) : 0;
	struct finding *x = by_bytes ? find_raw(f, bytes, len, hash) : NULL;
	/* Past the bound, an identity its bytes do not find is not kept (when
	 * every kept one's bytes find it): no text to make, at every record
	 * of findings made all along. */
	bool not_kept = !x && by_bytes && f->n >= f->max && !f->raw_met;
	if (!x && !not_kept) {
		x = find_by_text(f, ev, rec, size, &first);
		not_kept = !x;
		if (x && by_bytes)
			add_raw(f, bytes, len, hash, (size_t)(x - f->v));
	}
	if (not_kept) {   /* new, past the bound: counted; nothing to mark */
		f->not_kept++;
		int severity = (int)ut_finding_severity(ev, rec, size);
		if (severity > f->not_kept_worst)
			f->not_kept_worst = severity;
		return (int)UT_CRIT;
	}
	int before = first ? -1 : (int)x->severity;
	x->count++;
	enum ut_severity severity = ut_finding_severity(ev, rec, size);
	if (severity > x->severity)
		x->severity = severity;
	/* the record's event has a size of its own (decode_one checked it) */
	grow_array((void **)&x->latest, &x->latest_capacity, ev->size, 1);
	memcpy(x->latest, rec, ev->size);
	x->latest_ev = ev;
	if (!(f->how[event] & HOW_LATER))
		make_texts(f, x, ev, x->latest, ev->size);
	return before;
}

uint64_t ut_findings_not_kept(const struct ut_findings *f)
{
	return f ? f->not_kept : 0;
}

int ut_findings_worst(const struct ut_findings *f)
{
	int worst = f ? f->not_kept_worst : -1;
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

void ut_findings_print(struct ut_findings *f, FILE *out)
{
	make_all_texts(f);
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
	if (f->not_kept)
		fprintf(out, "%" PRIu64 " more findings, made once %zu were kept, are not listed (the most severe: %s)\n",
			f->not_kept, f->max, ut_severity_names[f->not_kept_worst]);
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

void ut_findings_json(struct ut_findings *f, FILE *out)
{
	make_all_texts(f);
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

void ut_findings_visit(struct ut_findings *f, void (*one)(void *ctx, const struct ut_finding_seen *seen),
		       void *ctx)
{
	make_all_texts(f);
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
