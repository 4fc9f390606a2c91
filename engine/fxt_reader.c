/* FXT reader: parses and validates a trace record by record (headers,
 * sizes, string and thread references, argument sizes) for `dump`,
 * `stats` and, through engine/fxt_reader.h, the SVG renderer.  It reads through zlib, which passes plain files through, so
 * .gz traces need nothing special.  It must survive arbitrary input: every
 * read is bounded by the record's declared size. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine/alloc.h"
#include "engine/fxt_reader.h"
#include "engine/hashmap.h"

#define MAX_ERRORS_KEPT 10
#define ERROR_LEN 200
/* Inline strings of one record, each NUL-terminated: at most the record's
 * bytes plus one terminator per string (a string takes at least a word). */
#define SCRATCH_BYTES (FXT_MAX_RECORD_WORDS * 8 * 2)

struct thread_entry {
	uint64_t pid, tid;
	bool defined;
};

struct fxt_reader {
	gzFile in;
	uint64_t offset; /* of the next record */
	uint64_t *rec;   /* the current record's words */
	char *strings[FXT_STRING_SLOTS + 1];
	/* The string slots defined since the tables were last reset: a reset
	 * (at every provider info record) frees these alone, so that a trace
	 * of provider records reads as fast as one of other records (walking
	 * all 32767 slots each time took 20 s a megabyte). */
	uint16_t defined[FXT_STRING_SLOTS];
	unsigned ndefined;
	struct thread_entry threads[FXT_THREAD_SLOTS + 1];
	char *scratch;
	size_t scratch_used;
	uint64_t records;
	uint64_t errors;
	char error_text[MAX_ERRORS_KEPT][ERROR_LEN];
};

/* Words of the current record being decoded. */
struct cursor {
	const uint64_t *words;
	size_t pos, end;
};

static bool take_word(struct cursor *c, uint64_t *out)
{
	if (c->pos >= c->end)
		return false;
	*out = c->words[c->pos++];
	return true;
}

static uint64_t bits(uint64_t word, unsigned lo, unsigned hi)
{
	unsigned width = hi - lo + 1;
	return width == 64 ? word : (word >> lo) & ((1ull << width) - 1);
}

static void add_error(struct fxt_reader *r, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_error(struct fxt_reader *r, uint64_t offset, const char *fmt, ...)
{
	if (r->errors < MAX_ERRORS_KEPT) {
		char *dst = r->error_text[r->errors];
		int n = snprintf(dst, ERROR_LEN, "offset 0x%" PRIx64 ": ", offset);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(dst + n, ERROR_LEN - (size_t)n, fmt, ap);
		va_end(ap);
	}
	r->errors++;
}

static void reset_tables(struct fxt_reader *r)
{
	for (unsigned i = 0; i < r->ndefined; i++) {
		free(r->strings[r->defined[i]]);
		r->strings[r->defined[i]] = NULL;
	}
	r->ndefined = 0;
	memset(r->threads, 0, sizeof(r->threads));
}

/* Copies len bytes of inline string into scratch, NUL-terminated. */
static const char *take_inline_string(struct fxt_reader *r, struct cursor *c, size_t len)
{
	size_t words = (len + 7) / 8;
	if (words > c->end - c->pos || r->scratch_used + len + 1 > SCRATCH_BYTES)
		return NULL;
	char *dst = r->scratch + r->scratch_used;
	memcpy(dst, c->words + c->pos, len);
	dst[len] = 0;
	r->scratch_used += len + 1;
	c->pos += words;
	return dst;
}

/* Resolves a 16-bit string ref: 0 empty, 0x8000|len inline, else table. */
static bool take_string_ref(struct fxt_reader *r, struct cursor *c, unsigned ref, const char **out,
			    uint64_t offset)
{
	if (ref == 0) {
		*out = "";
		return true;
	}
	if (ref & 0x8000) {
		*out = take_inline_string(r, c, ref & 0x7fff);
		if (!*out)
			add_error(r, offset, "inline string of %u bytes overruns the record", ref & 0x7fff);
		return *out != NULL;
	}
	*out = r->strings[ref];
	if (!*out)
		add_error(r, offset, "string ref %u is not defined", ref);
	return *out != NULL;
}

static bool take_args(struct fxt_reader *r, struct cursor *c, struct fxt_record_view *v, unsigned nargs)
{
	v->nargs = nargs;
	for (unsigned k = 0; k < nargs; k++) {
		struct fxt_arg_view *a = &v->args[k];
		size_t base = c->pos;
		uint64_t h;
		if (!take_word(c, &h)) {
			add_error(r, v->offset, "argument %u is past the end of the record", k);
			return false;
		}
		size_t size = bits(h, 4, 15);
		if (size == 0 || size > c->end - base) {
			add_error(r, v->offset, "argument %u has size %zu words, record has %zu left", k,
				  size, c->end - base);
			return false;
		}
		a->type = (enum fxt_arg_type)bits(h, 0, 3);
		if (!take_string_ref(r, c, (unsigned)bits(h, 16, 31), &a->name, v->offset))
			return false;
		bool ok = true;
		switch (a->type) {
		case FXT_ARG_NULL:
			break;
		case FXT_ARG_INT32:
			a->i = (int32_t)(uint32_t)bits(h, 32, 63);
			break;
		case FXT_ARG_UINT32:
			a->u = bits(h, 32, 63);
			break;
		case FXT_ARG_BOOL:
			a->u = bits(h, 32, 32);
			break;
		case FXT_ARG_INT64:
			ok = take_word(c, &a->u);
			a->i = (int64_t)a->u;
			break;
		case FXT_ARG_UINT64:
		case FXT_ARG_POINTER:
		case FXT_ARG_KOID:
			ok = take_word(c, &a->u);
			break;
		case FXT_ARG_DOUBLE:
			ok = take_word(c, &a->u);
			memcpy(&a->d, &a->u, 8);
			break;
		case FXT_ARG_STRING:
			if (!take_string_ref(r, c, (unsigned)bits(h, 32, 47), &a->s, v->offset))
				return false;
			break;
		default:
			add_error(r, v->offset, "argument %u has unknown type %u", k, a->type);
			return false;
		}
		if (!ok || c->pos - base != size) {
			add_error(r, v->offset, "argument %u (\"%s\") declares %zu words but holds %zu", k,
				  a->name, size, c->pos - base);
			return false;
		}
	}
	return true;
}

static bool event_has_type_word(unsigned type)
{
	return type == FXT_EV_COUNTER || type >= FXT_EV_DURATION_COMPLETE;
}

static bool parse_event(struct fxt_reader *r, struct cursor *c, struct fxt_record_view *v, uint64_t h)
{
	v->subtype = (unsigned)bits(h, 16, 19);
	if (v->subtype > FXT_EV_FLOW_END) {
		add_error(r, v->offset, "unknown event type %u", v->subtype);
		return false;
	}
	unsigned thread_ref = (unsigned)bits(h, 24, 31);
	if (!take_word(c, &v->ts))
		goto short_record;
	if (thread_ref == 0) {
		if (!take_word(c, &v->pid) || !take_word(c, &v->tid))
			goto short_record;
	} else if (!r->threads[thread_ref].defined) {
		add_error(r, v->offset, "thread ref %u is not defined", thread_ref);
		return false;
	} else {
		v->pid = r->threads[thread_ref].pid;
		v->tid = r->threads[thread_ref].tid;
	}
	if (!take_string_ref(r, c, (unsigned)bits(h, 32, 47), &v->category, v->offset) ||
	    !take_string_ref(r, c, (unsigned)bits(h, 48, 63), &v->name, v->offset) ||
	    !take_args(r, c, v, (unsigned)bits(h, 20, 23)))
		return false;
	v->has_type_word = event_has_type_word(v->subtype);
	if (v->has_type_word && !take_word(c, &v->value))
		goto short_record;
	return true;
short_record:
	add_error(r, v->offset, "event record of %zu words is too short", v->words);
	return false;
}

static bool parse_metadata(struct fxt_reader *r, struct cursor *c, struct fxt_record_view *v, uint64_t h)
{
	v->subtype = (unsigned)bits(h, 16, 19);
	switch (v->subtype) {
	case FXT_META_PROVIDER_INFO:
		v->value = bits(h, 20, 51);
		v->text = take_inline_string(r, c, bits(h, 52, 59));
		if (!v->text) {
			add_error(r, v->offset, "provider name overruns the record");
			return false;
		}
		/* a provider's records use their own tables */
		reset_tables(r);
		return true;
	case FXT_META_TRACE_INFO:
		if (h != FXT_MAGIC) {
			add_error(r, v->offset, "trace info record 0x%016" PRIx64 " is not the magic", h);
			return false;
		}
		return true;
	default:
		v->value = bits(h, 20, 51);
		c->pos = c->end; /* provider section/event: nothing we use */
		return true;
	}
}

static bool parse_kernel_object(struct fxt_reader *r, struct cursor *c, struct fxt_record_view *v,
				uint64_t h)
{
	v->subtype = (unsigned)bits(h, 16, 23);
	if (!take_word(c, &v->koid)) {
		add_error(r, v->offset, "kernel object record has no koid");
		return false;
	}
	return take_string_ref(r, c, (unsigned)bits(h, 24, 39), &v->name, v->offset) &&
	       take_args(r, c, v, (unsigned)bits(h, 40, 43));
}

/* Decodes the record in r->rec; false on a malformed record. */
static bool parse_record(struct fxt_reader *r, struct fxt_record_view *v)
{
	struct cursor c = { r->rec, 1, v->words };
	uint64_t h = r->rec[0];
	r->scratch_used = 0;
	switch (v->type) {
	case FXT_REC_METADATA:
		if (!parse_metadata(r, &c, v, h))
			return false;
		break;
	case FXT_REC_INITIALIZATION:
		if (!take_word(&c, &v->value) || v->value == 0) {
			add_error(r, v->offset, "initialization record without a tick rate");
			return false;
		}
		break;
	case FXT_REC_STRING: {
		v->index = (unsigned)bits(h, 16, 30);
		size_t len = bits(h, 32, 46);
		v->text = take_inline_string(r, &c, len);
		if (v->index == 0 || !v->text) {
			add_error(r, v->offset, "bad string record (index %u, %zu bytes in %zu words)",
				  v->index, len, v->words);
			return false;
		}
		if (!r->strings[v->index])
			r->defined[r->ndefined++] = (uint16_t)v->index;
		free(r->strings[v->index]);
		r->strings[v->index] = strdup(v->text);
		ut_xalloc_check(r->strings[v->index]);
		break;
	}
	case FXT_REC_THREAD:
		v->index = (unsigned)bits(h, 16, 23);
		if (v->index == 0 || !take_word(&c, &v->pid) || !take_word(&c, &v->tid)) {
			add_error(r, v->offset, "bad thread record (index %u, %zu words)", v->index,
				  v->words);
			return false;
		}
		r->threads[v->index] = (struct thread_entry){ v->pid, v->tid, true };
		break;
	case FXT_REC_EVENT:
		if (!parse_event(r, &c, v, h))
			return false;
		break;
	case FXT_REC_KERNEL_OBJECT:
		if (!parse_kernel_object(r, &c, v, h))
			return false;
		break;
	case FXT_REC_BLOB:
	case FXT_REC_USERSPACE_OBJECT:
	case FXT_REC_SCHEDULING:
	case FXT_REC_LOG:
	case FXT_REC_LARGE:
		c.pos = c.end; /* valid records we do not interpret */
		break;
	default:
		add_error(r, v->offset, "reserved record type %u", v->type);
		return false;
	}
	if (c.pos != c.end) {
		add_error(r, v->offset, "record declares %zu words but holds %zu", v->words, c.pos);
		return false;
	}
	return true;
}

/* Reads exactly len bytes; returns the number read (short at end of file)
 * or -1 on a read error. */
static long read_bytes(struct fxt_reader *r, void *dst, size_t len)
{
	size_t got = 0;
	while (got < len) {
		int n = gzread(r->in, (char *)dst + got, (unsigned)(len - got));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (long)got;
}

/* Reads and decodes the next record.  A malformed record whose size is
 * sane is skipped (FXT_NEXT_BAD_RECORD); framing errors end the read. */
enum fxt_next_result fxt_reader_next(struct fxt_reader *r, struct fxt_record_view *v)
{
	memset(v, 0, sizeof(*v));
	v->offset = r->offset;
	long n = read_bytes(r, r->rec, 8);
	if (n == 0)
		return FXT_NEXT_END;
	if (n != 8) {
		add_error(r, v->offset, n < 0 ? "read error" : "file ends inside a record header");
		return FXT_NEXT_FATAL;
	}
	uint64_t h = r->rec[0];
	v->type = (unsigned)bits(h, 0, 3);
	v->words = v->type == FXT_REC_LARGE ? bits(h, 4, 35) : bits(h, 4, 15);
	if (v->words == 0) {
		add_error(r, v->offset, "record of size 0 (header 0x%016" PRIx64 ")", h);
		return FXT_NEXT_FATAL;
	}
	if (r->records == 0 && h != FXT_MAGIC) {
		add_error(r, v->offset, "not an FXT trace: first word 0x%016" PRIx64 " is not the magic", h);
		return FXT_NEXT_FATAL;
	}
	if (v->words > FXT_MAX_RECORD_WORDS) {
		/* only large records can be bigger; skip them without buffering */
		uint64_t skip = (v->words - 1) * 8;
		for (; skip; skip -= 8) {
			if (read_bytes(r, r->rec, 8) != 8) {
				add_error(r, v->offset, "file ends inside a large record");
				return FXT_NEXT_FATAL;
			}
		}
		r->offset += v->words * 8;
		r->records++;
		return FXT_NEXT_RECORD;
	}
	n = read_bytes(r, r->rec + 1, (v->words - 1) * 8);
	if (n < 0 || (size_t)n != (v->words - 1) * 8) {
		add_error(r, v->offset, "file ends inside a record of %zu words", v->words);
		return FXT_NEXT_FATAL;
	}
	r->offset += v->words * 8;
	r->records++;
	return parse_record(r, v) ? FXT_NEXT_RECORD : FXT_NEXT_BAD_RECORD;
}

struct fxt_reader *fxt_reader_open(const char *path, FILE *out)
{
	gzFile in = gzopen(path, "rb");
	if (!in) {
		fprintf(out, "error: open %s: %s\n", path, errno ? strerror(errno) : "cannot open");
		return NULL;
	}
	gzbuffer(in, 1u << 20);
	struct fxt_reader *r = ut_xcalloc(1, sizeof(*r));
	r->in = in;
	r->rec = ut_xcalloc(FXT_MAX_RECORD_WORDS, 8);
	r->scratch = ut_xcalloc(SCRATCH_BYTES, 1);
	return r;
}

uint64_t fxt_reader_error_count(const struct fxt_reader *r)
{
	return r->errors;
}

const char *fxt_reader_error(const struct fxt_reader *r, uint64_t i)
{
	return i < r->errors && i < MAX_ERRORS_KEPT ? r->error_text[i] : NULL;
}

void fxt_reader_close(struct fxt_reader *r)
{
	gzclose(r->in);
	reset_tables(r);
	free(r->rec);
	free(r->scratch);
	free(r);
}

/* Prints s with quotes, escaping what is not printable ASCII. */
static void print_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* JSON string with escapes; bytes >= 0x80 pass through (UTF-8). */
static void print_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static const char *event_type_name(unsigned t)
{
	static const char *const names[] = {
		"instant",        "counter",      "duration_begin", "duration_end",
		"duration_complete", "async_begin", "async_instant", "async_end",
		"flow_begin",     "flow_step",    "flow_end",
	};
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static const char *object_type_name(unsigned t)
{
	return t == FXT_OBJ_PROCESS ? "process" : t == FXT_OBJ_THREAD ? "thread" : "object";
}

static void print_args(FILE *out, const struct fxt_record_view *v)
{
	for (unsigned k = 0; k < v->nargs; k++) {
		const struct fxt_arg_view *a = &v->args[k];
		fputs(k ? ", " : " args={", out);
		fprintf(out, "%s: ", a->name);
		switch (a->type) {
		case FXT_ARG_NULL:
			fputs("null", out);
			break;
		case FXT_ARG_INT32:
			fprintf(out, "int32 %" PRId64, a->i);
			break;
		case FXT_ARG_INT64:
			fprintf(out, "int64 %" PRId64, a->i);
			break;
		case FXT_ARG_UINT32:
			fprintf(out, "uint32 %" PRIu64, a->u);
			break;
		case FXT_ARG_UINT64:
			fprintf(out, "uint64 %" PRIu64, a->u);
			break;
		case FXT_ARG_DOUBLE:
			fprintf(out, "double %.17g", a->d);
			break;
		case FXT_ARG_STRING:
			fputs("string ", out);
			print_quoted(out, a->s);
			break;
		case FXT_ARG_POINTER:
			fprintf(out, "pointer 0x%" PRIx64, a->u);
			break;
		case FXT_ARG_KOID:
			fprintf(out, "koid %" PRIu64, a->u);
			break;
		case FXT_ARG_BOOL:
			fputs(a->u ? "bool true" : "bool false", out);
			break;
		}
	}
	if (v->nargs)
		fputc('}', out);
}

static void dump_record(FILE *out, const struct fxt_record_view *v)
{
	fprintf(out, "0x%08" PRIx64 " ", v->offset);
	switch (v->type) {
	case FXT_REC_METADATA:
		if (v->subtype == FXT_META_TRACE_INFO) {
			fputs("magic", out);
		} else if (v->subtype == FXT_META_PROVIDER_INFO) {
			fprintf(out, "provider_info id=%" PRIu64 " name=", v->value);
			print_quoted(out, v->text);
		} else {
			fprintf(out, "metadata type=%u", v->subtype);
		}
		break;
	case FXT_REC_INITIALIZATION:
		fprintf(out, "initialization ticks_per_second=%" PRIu64, v->value);
		break;
	case FXT_REC_STRING:
		fprintf(out, "string index=%u ", v->index);
		print_quoted(out, v->text);
		break;
	case FXT_REC_THREAD:
		fprintf(out, "thread index=%u pid=%" PRIu64 " tid=%" PRIu64, v->index, v->pid, v->tid);
		break;
	case FXT_REC_EVENT:
		fprintf(out, "event %s ts=%" PRIu64 " pid=%" PRIu64 " tid=%" PRIu64 " cat=",
			event_type_name(v->subtype), v->ts, v->pid, v->tid);
		print_quoted(out, v->category);
		fputs(" name=", out);
		print_quoted(out, v->name);
		print_args(out, v);
		if (v->subtype == FXT_EV_COUNTER)
			fprintf(out, " counter_id=%" PRIu64, v->value);
		else if (v->subtype == FXT_EV_DURATION_COMPLETE)
			fprintf(out, " end_ts=%" PRIu64, v->value);
		else if (v->has_type_word)
			fprintf(out, " id=%" PRIu64, v->value);
		break;
	case FXT_REC_KERNEL_OBJECT:
		fprintf(out, "kernel_object %s koid=%" PRIu64 " name=", object_type_name(v->subtype),
			v->koid);
		print_quoted(out, v->name);
		print_args(out, v);
		break;
	default:
		fprintf(out, "record type=%u words=%zu", v->type, v->words);
		break;
	}
	fputc('\n', out);
}

int fxt_dump(const char *path, FILE *out)
{
	struct fxt_reader *r = fxt_reader_open(path, out);
	if (!r)
		return 1;
	struct fxt_record_view v;
	enum fxt_next_result res;
	while ((res = fxt_reader_next(r, &v)) != FXT_NEXT_END && res != FXT_NEXT_FATAL) {
		if (res == FXT_NEXT_RECORD)
			dump_record(out, &v);
		else
			fprintf(out, "0x%08" PRIx64 " malformed record type=%u words=%zu\n", v.offset,
				v.type, v.words);
	}
	for (uint64_t i = 0; i < r->errors && i < MAX_ERRORS_KEPT; i++)
		fprintf(out, "error: %s\n", r->error_text[i]);
	if (r->errors > MAX_ERRORS_KEPT)
		fprintf(out, "error: ... %" PRIu64 " errors in all\n", r->errors);
	int rc = r->errors ? 1 : 0;
	fxt_reader_close(r);
	return rc;
}

/* ---- stats ---- */

struct name_count {
	unsigned event_type;
	char *category, *name;
	uint64_t count;
};

struct object_entry {
	uint64_t koid, pid; /* pid: for threads, 0 when unknown */
	char *name;         /* NULL until a kernel-object record names it */
};

/* A growable array of objects with a koid -> position index. */
struct object_set {
	struct object_entry *items;
	size_t count, capacity;
	struct hmap index;
};

/* FLOW_ORPHAN: seen first at a step, so it cannot be complete. */
enum flow_state { FLOW_OPEN = 1, FLOW_ORPHAN = 2 };

struct stats {
	uint64_t by_record_type[16];
	uint64_t by_event_type[FXT_EV_FLOW_END + 1];
	struct name_count *names;
	size_t nnames, names_capacity;
	struct hmap name_index; /* (hash of cat+name, type|salt) -> position */
	struct hmap open_flows; /* correlation id -> enum flow_state */
	uint64_t flows_complete;
	uint64_t flows_incomplete; /* closed ones; those still open are added at the end */
	uint64_t flow_points_unbound; /* no slice on their thread to bind to */
	struct fxt_slice_stack *stacks;
	size_t nstacks, stacks_capacity;
	struct hmap stack_index; /* (pid, tid) -> stack */
	struct object_set processes, threads;
};

static struct fxt_slice_stack *stack_of(struct stats *s, uint64_t pid, uint64_t tid)
{
	bool created;
	uint64_t *pos = hmap_insert(&s->stack_index, pid, tid, &created);
	if (created) {
		ut_grow_array((void **)&s->stacks, &s->stacks_capacity, s->nstacks + 1,
			      sizeof(*s->stacks));
		*pos = s->nstacks;
		s->stacks[s->nstacks++] = (struct fxt_slice_stack){ NULL, 0, 0 };
	}
	return &s->stacks[*pos];
}

/* Pops what a slice event at ts takes off the stack, as Perfetto's
 * SliceTracker::MaybeCloseStack: scoped slices that ended before ts, or at
 * ts unless both are zero-length (instants at one time stack up); a slice
 * ended while others begun inside it were open goes with them once ts is
 * past its end. */
static void close_stack(struct fxt_slice_stack *st, uint64_t ts, bool zero_length)
{
	bool open_above = false;
	for (size_t i = st->depth; i-- > 0;) {
		const struct fxt_stacked_slice *sl = &st->items[i];
		if (sl->end == FXT_SLICE_OPEN) {
			open_above = true;
		} else if (open_above) {
			if (ts > sl->end) {
				st->depth = i;
				open_above = false;
			}
		} else if (sl->end < ts || (sl->end == ts && !(sl->start == sl->end && zero_length))) {
			st->depth = i;
		}
	}
}

static const struct fxt_stacked_slice *push_slice(struct fxt_slice_stack *st, uint64_t start,
						  uint64_t end, uint32_t tag, size_t *level)
{
	ut_grow_array((void **)&st->items, &st->capacity, st->depth + 1, sizeof(*st->items));
	*level = st->depth;
	st->items[st->depth] = (struct fxt_stacked_slice){ start, end, tag };
	return &st->items[st->depth++];
}

const struct fxt_stacked_slice *fxt_slice_stack_apply(struct fxt_slice_stack *st,
						      const struct fxt_record_view *v, uint32_t tag,
						      size_t *level)
{
	switch (v->subtype) {
	case FXT_EV_INSTANT:
		close_stack(st, v->ts, true);
		return push_slice(st, v->ts, v->ts, tag, level);
	case FXT_EV_DURATION_COMPLETE:
		close_stack(st, v->ts, v->value == v->ts);
		return push_slice(st, v->ts, v->value < v->ts ? v->ts : v->value, tag, level);
	case FXT_EV_DURATION_BEGIN:
		close_stack(st, v->ts, false);
		push_slice(st, v->ts, FXT_SLICE_OPEN, tag, level);
		return NULL;
	case FXT_EV_DURATION_END:
		close_stack(st, v->ts, false);
		for (size_t i = st->depth; i-- > 0;) {
			if (st->items[i].end != FXT_SLICE_OPEN)
				continue;
			st->items[i].end = v->ts;
			*level = i;
			if (i == st->depth - 1)
				st->depth--;
			return &st->items[i];
		}
		return NULL;
	default:
		return NULL;
	}
}

static void track_slices(struct stats *s, const struct fxt_record_view *v)
{
	struct fxt_slice_stack *st = stack_of(s, v->pid, v->tid);
	size_t level;
	if (v->subtype >= FXT_EV_FLOW_BEGIN && !st->depth)
		s->flow_points_unbound++;
	fxt_slice_stack_apply(st, v, 0, &level);
}


static struct object_entry *object_get(struct object_set *set, uint64_t koid)
{
	bool created;
	uint64_t *pos = hmap_insert(&set->index, koid, 0, &created);
	if (created) {
		if (set->count == set->capacity) {
			set->capacity = set->capacity ? set->capacity * 2 : 64;
			set->items = ut_xrealloc(set->items, set->capacity * sizeof(*set->items));
		}
		*pos = set->count;
		set->items[set->count++] = (struct object_entry){ koid, 0, NULL };
	}
	return &set->items[*pos];
}

static void object_set_name(struct object_entry *o, const char *name)
{
	free(o->name);
	o->name = strdup(name);
	ut_xalloc_check(o->name);
}

static void object_set_free(struct object_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		free(set->items[i].name);
	free(set->items);
	hmap_free(&set->index);
}

static void count_name(struct stats *s, unsigned type, const char *category, const char *name)
{
	size_t clen = strlen(category), nlen = strlen(name);
	uint64_t hash = hmap_hash_bytes(category, clen) * 31 + hmap_hash_bytes(name, nlen);
	/* a different name with the same hash takes the next salt */
	for (uint64_t salt = 0;; salt++) {
		bool created;
		uint64_t *pos = hmap_insert(&s->name_index, hash, type | salt << 8, &created);
		if (created) {
			if (s->nnames == s->names_capacity) {
				s->names_capacity = s->names_capacity ? s->names_capacity * 2 : 64;
				s->names = ut_xrealloc(s->names, s->names_capacity * sizeof(*s->names));
			}
			*pos = s->nnames;
			struct name_count *n = &s->names[s->nnames++];
			n->event_type = type;
			n->category = ut_xalloc_check(strdup(category));
			n->name = ut_xalloc_check(strdup(name));
			n->count = 1;
			return;
		}
		struct name_count *n = &s->names[*pos];
		if (strcmp(n->category, category) == 0 && strcmp(n->name, name) == 0) {
			n->count++;
			return;
		}
	}
}

static void count_flow(struct stats *s, unsigned type, uint64_t id)
{
	bool created;
	if (type == FXT_EV_FLOW_BEGIN) {
		uint64_t *state = hmap_insert(&s->open_flows, id, 0, &created);
		if (!created)
			s->flows_incomplete++; /* the earlier flow with this id never ended */
		*state = FLOW_OPEN;
		return;
	}
	uint64_t *state = hmap_find(&s->open_flows, id, 0);
	if (!state) {
		if (type == FXT_EV_FLOW_STEP)
			*hmap_insert(&s->open_flows, id, 0, &created) = FLOW_ORPHAN;
		else
			s->flows_incomplete++; /* an end alone */
		return;
	}
	if (type == FXT_EV_FLOW_END) {
		if (*state == FLOW_OPEN)
			s->flows_complete++;
		else
			s->flows_incomplete++;
		hmap_remove(&s->open_flows, id, 0);
	}
}

static void count_record(struct stats *s, const struct fxt_record_view *v)
{
	s->by_record_type[v->type]++;
	if (v->type == FXT_REC_THREAD) {
		object_get(&s->processes, v->pid);
		object_get(&s->threads, v->tid)->pid = v->pid;
	} else if (v->type == FXT_REC_KERNEL_OBJECT) {
		if (v->subtype == FXT_OBJ_PROCESS) {
			object_set_name(object_get(&s->processes, v->koid), v->name);
		} else if (v->subtype == FXT_OBJ_THREAD) {
			struct object_entry *t = object_get(&s->threads, v->koid);
			object_set_name(t, v->name);
			for (unsigned k = 0; k < v->nargs; k++)
				if (v->args[k].type == FXT_ARG_KOID && strcmp(v->args[k].name, "process") == 0)
					t->pid = v->args[k].u;
		}
	} else if (v->type == FXT_REC_EVENT) {
		s->by_event_type[v->subtype]++;
		count_name(s, v->subtype, v->category, v->name);
		if (v->subtype >= FXT_EV_FLOW_BEGIN)
			count_flow(s, v->subtype, v->value);
		track_slices(s, v);
	}
}

static int compare_names(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;
	if (x->event_type != y->event_type)
		return x->event_type < y->event_type ? -1 : 1;
	int c = strcmp(x->category, y->category);
	return c ? c : strcmp(x->name, y->name);
}

static int compare_objects(const void *a, const void *b)
{
	const struct object_entry *x = a, *y = b;
	return x->koid < y->koid ? -1 : x->koid > y->koid;
}

static uint64_t flows_incomplete(const struct stats *s)
{
	return s->flows_incomplete + s->open_flows.count;
}

static void print_stats_text(FILE *out, const struct stats *s, const struct fxt_reader *r)
{
	uint64_t events = 0;
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++)
		events += s->by_event_type[t];
	fprintf(out, "records: %" PRIu64 "\n", r->records);
	fprintf(out, "events: %" PRIu64 "\n", events);
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++)
		if (s->by_event_type[t])
			fprintf(out, "  %s: %" PRIu64 "\n", event_type_name(t), s->by_event_type[t]);
	fputs("events by name:\n", out);
	for (size_t i = 0; i < s->nnames; i++) {
		const struct name_count *n = &s->names[i];
		fprintf(out, "  %s ", event_type_name(n->event_type));
		print_quoted(out, n->category);
		fputc(' ', out);
		print_quoted(out, n->name);
		fprintf(out, ": %" PRIu64 "\n", n->count);
	}
	fprintf(out, "flows: %" PRIu64 " complete, %" PRIu64 " incomplete, %" PRIu64
		" points outside any slice\n", s->flows_complete, flows_incomplete(s),
		s->flow_points_unbound);
	fprintf(out, "processes: %zu\n", s->processes.count);
	for (size_t i = 0; i < s->processes.count; i++) {
		const struct object_entry *o = &s->processes.items[i];
		fprintf(out, "  pid %" PRIu64 " ", o->koid);
		print_quoted(out, o->name ? o->name : "");
		fputc('\n', out);
	}
	fprintf(out, "threads: %zu\n", s->threads.count);
	for (size_t i = 0; i < s->threads.count; i++) {
		const struct object_entry *o = &s->threads.items[i];
		fprintf(out, "  tid %" PRIu64 " pid %" PRIu64 " ", o->koid, o->pid);
		print_quoted(out, o->name ? o->name : "");
		fputc('\n', out);
	}
	fprintf(out, "errors: %" PRIu64 "\n", r->errors);
	for (uint64_t i = 0; i < r->errors && i < MAX_ERRORS_KEPT; i++)
		fprintf(out, "  %s\n", r->error_text[i]);
}

static void print_objects_json(FILE *out, const struct object_set *set, bool with_pid)
{
	for (size_t i = 0; i < set->count; i++) {
		const struct object_entry *o = &set->items[i];
		fprintf(out, "%s{\"%s\": %" PRIu64, i ? ", " : "", with_pid ? "tid" : "pid", o->koid);
		if (with_pid)
			fprintf(out, ", \"pid\": %" PRIu64, o->pid);
		fputs(", \"name\": ", out);
		print_json_string(out, o->name ? o->name : "");
		fputc('}', out);
	}
}

static void print_stats_json(FILE *out, const struct stats *s, const struct fxt_reader *r)
{
	uint64_t events = 0;
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++)
		events += s->by_event_type[t];
	fprintf(out, "{\"records\": %" PRIu64 ", \"events\": %" PRIu64 ", \"event_types\": {",
		r->records, events);
	bool first = true;
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++) {
		if (!s->by_event_type[t])
			continue;
		fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", event_type_name(t),
			s->by_event_type[t]);
		first = false;
	}
	fputs("}, \"names\": [", out);
	for (size_t i = 0; i < s->nnames; i++) {
		const struct name_count *n = &s->names[i];
		fprintf(out, "%s{\"type\": \"%s\", \"category\": ", i ? ", " : "",
			event_type_name(n->event_type));
		print_json_string(out, n->category);
		fputs(", \"name\": ", out);
		print_json_string(out, n->name);
		fprintf(out, ", \"count\": %" PRIu64 "}", n->count);
	}
	fprintf(out, "], \"flows\": {\"complete\": %" PRIu64 ", \"incomplete\": %" PRIu64
		", \"points_outside_slices\": %" PRIu64 "}",
		s->flows_complete, flows_incomplete(s), s->flow_points_unbound);
	fputs(", \"processes\": [", out);
	print_objects_json(out, &s->processes, false);
	fputs("], \"threads\": [", out);
	print_objects_json(out, &s->threads, true);
	fprintf(out, "], \"errors\": %" PRIu64 ", \"error_messages\": [", r->errors);
	for (uint64_t i = 0; i < r->errors && i < MAX_ERRORS_KEPT; i++) {
		fputs(i ? ", " : "", out);
		print_json_string(out, r->error_text[i]);
	}
	fputs("]}\n", out);
}

int fxt_stats(const char *path, FILE *out, bool json)
{
	struct fxt_reader *r = fxt_reader_open(path, out);
	if (!r)
		return 1;
	struct stats s;
	memset(&s, 0, sizeof(s));
	struct fxt_record_view v;
	enum fxt_next_result res;
	while ((res = fxt_reader_next(r, &v)) != FXT_NEXT_END && res != FXT_NEXT_FATAL)
		if (res == FXT_NEXT_RECORD)
			count_record(&s, &v);

	if (s.nnames)
		qsort(s.names, s.nnames, sizeof(*s.names), compare_names);
	if (s.processes.count)
		qsort(s.processes.items, s.processes.count, sizeof(struct object_entry), compare_objects);
	if (s.threads.count)
		qsort(s.threads.items, s.threads.count, sizeof(struct object_entry), compare_objects);
	if (json)
		print_stats_json(out, &s, r);
	else
		print_stats_text(out, &s, r);

	int rc = r->errors ? 1 : 0;
	for (size_t i = 0; i < s.nnames; i++) {
		free(s.names[i].category);
		free(s.names[i].name);
	}
	free(s.names);
	hmap_free(&s.name_index);
	hmap_free(&s.open_flows);
	for (size_t i = 0; i < s.nstacks; i++)
		free(s.stacks[i].items);
	free(s.stacks);
	hmap_free(&s.stack_index);
	object_set_free(&s.processes);
	object_set_free(&s.threads);
	fxt_reader_close(r);
	return rc;
}
