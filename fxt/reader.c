/* FXT reader: parses and validates a trace record by record (headers,
 * sizes, string and thread references, argument sizes) for the tools
 * (tools/: dump, stats, render), and models Perfetto's slice stacks.  It
 * reads through zlib, which passes plain files through, so .gz traces need
 * nothing special.  It must survive arbitrary input: every read is
 * bounded by the record's declared size. */
#include "fxt/reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/alloc.h"

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
			fxt_reader_add_error(r, offset, "inline string of %u bytes overruns the record", ref & 0x7fff);
		return *out != NULL;
	}
	*out = r->strings[ref];
	if (!*out)
		fxt_reader_add_error(r, offset, "string ref %u is not defined", ref);
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
			fxt_reader_add_error(r, v->offset, "argument %u is past the end of the record", k);
			return false;
		}
		size_t size = bits(h, 4, 15);
		if (size == 0 || size > c->end - base) {
			fxt_reader_add_error(r, v->offset, "argument %u has size %zu words, record has %zu left", k,
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
			fxt_reader_add_error(r, v->offset, "argument %u has unknown type %u", k, a->type);
			return false;
		}
		if (!ok || c->pos - base != size) {
			fxt_reader_add_error(r, v->offset, "argument %u (\"%s\") declares %zu words but holds %zu", k,
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
		fxt_reader_add_error(r, v->offset, "unknown event type %u", v->subtype);
		return false;
	}
	unsigned thread_ref = (unsigned)bits(h, 24, 31);
	if (!take_word(c, &v->ts))
		goto short_record;
	if (thread_ref == 0) {
		if (!take_word(c, &v->pid) || !take_word(c, &v->tid))
			goto short_record;
	} else if (!r->threads[thread_ref].defined) {
		fxt_reader_add_error(r, v->offset, "thread ref %u is not defined", thread_ref);
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
	fxt_reader_add_error(r, v->offset, "event record of %zu words is too short", v->words);
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
			fxt_reader_add_error(r, v->offset, "provider name overruns the record");
			return false;
		}
		/* a provider's records use their own tables */
		reset_tables(r);
		return true;
	case FXT_META_TRACE_INFO:
		if (h != FXT_MAGIC) {
			fxt_reader_add_error(r, v->offset, "trace info record 0x%016" PRIx64 " is not the magic", h);
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
		fxt_reader_add_error(r, v->offset, "kernel object record has no koid");
		return false;
	}
	return take_string_ref(r, c, (unsigned)bits(h, 24, 39), &v->name, v->offset) &&
	       take_args(r, c, v, (unsigned)bits(h, 40, 43));
}

/* Context switch and thread wakeup records; other scheduling types
 * (the legacy context switch) are valid records read as they are. */
static bool parse_scheduling(struct fxt_reader *r, struct cursor *c, struct fxt_record_view *v,
			     uint64_t h)
{
	v->subtype = (unsigned)bits(h, 60, 63);
	if (v->subtype != FXT_SCHED_CONTEXT_SWITCH && v->subtype != FXT_SCHED_THREAD_WAKEUP) {
		c->pos = c->end;
		return true;
	}
	v->cpu = (unsigned)bits(h, 20, 35);
	if (!take_word(c, &v->ts) || !take_word(c, &v->tid) ||
	    (v->subtype == FXT_SCHED_CONTEXT_SWITCH && !take_word(c, &v->incoming_tid))) {
		fxt_reader_add_error(r, v->offset, "scheduling record of %zu words is too short", v->words);
		return false;
	}
	if (v->subtype == FXT_SCHED_CONTEXT_SWITCH) {
		v->outgoing_state = (unsigned)bits(h, 36, 39);
		if (v->outgoing_state > FXT_THREAD_DEAD) {
			fxt_reader_add_error(r, v->offset, "context switch with unknown thread state %u", v->outgoing_state);
			return false;
		}
	}
	return take_args(r, c, v, (unsigned)bits(h, 16, 19));
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
			fxt_reader_add_error(r, v->offset, "initialization record without a tick rate");
			return false;
		}
		break;
	case FXT_REC_STRING: {
		v->index = (unsigned)bits(h, 16, 30);
		size_t len = bits(h, 32, 46);
		v->text = take_inline_string(r, &c, len);
		if (v->index == 0 || !v->text) {
			fxt_reader_add_error(r, v->offset, "bad string record (index %u, %zu bytes in %zu words)",
				  v->index, len, v->words);
			return false;
		}
		if (!r->strings[v->index])
			r->defined[r->ndefined++] = (uint16_t)v->index;
		free(r->strings[v->index]);
		r->strings[v->index] = xstrdup(v->text);
		break;
	}
	case FXT_REC_THREAD:
		v->index = (unsigned)bits(h, 16, 23);
		if (v->index == 0 || !take_word(&c, &v->pid) || !take_word(&c, &v->tid)) {
			fxt_reader_add_error(r, v->offset, "bad thread record (index %u, %zu words)", v->index,
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
	case FXT_REC_SCHEDULING:
		if (!parse_scheduling(r, &c, v, h))
			return false;
		break;
	case FXT_REC_BLOB:
	case FXT_REC_USERSPACE_OBJECT:
	case FXT_REC_LOG:
	case FXT_REC_LARGE:
		c.pos = c.end; /* valid records we do not interpret */
		break;
	default:
		fxt_reader_add_error(r, v->offset, "reserved record type %u", v->type);
		return false;
	}
	if (c.pos != c.end) {
		fxt_reader_add_error(r, v->offset, "record declares %zu words but holds %zu", v->words, c.pos);
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
	if (n == 0 && r->records == 0) {
		fxt_reader_add_error(r, v->offset, "the file is empty: not an FXT trace, which starts with its magic record");
		return FXT_NEXT_FATAL;
	}
	if (n == 0)
		return FXT_NEXT_END;
	if (n != 8) {
		fxt_reader_add_error(r, v->offset, n < 0 ? "read error" : "file ends inside a record header");
		return FXT_NEXT_FATAL;
	}
	uint64_t h = r->rec[0];
	v->type = (unsigned)bits(h, 0, 3);
	v->words = v->type == FXT_REC_LARGE ? bits(h, 4, 35) : bits(h, 4, 15);
	if (v->words == 0) {
		fxt_reader_add_error(r, v->offset, "record of size 0 (header 0x%016" PRIx64 ")", h);
		return FXT_NEXT_FATAL;
	}
	if (r->records == 0 && h != FXT_MAGIC) {
		fxt_reader_add_error(r, v->offset, "not an FXT trace: first word 0x%016" PRIx64 " is not the magic", h);
		return FXT_NEXT_FATAL;
	}
	if (v->words > FXT_MAX_RECORD_WORDS) {
		/* only large records can be bigger; skip them without buffering */
		uint64_t skip = (v->words - 1) * 8;
		for (; skip; skip -= 8) {
			if (read_bytes(r, r->rec, 8) != 8) {
				fxt_reader_add_error(r, v->offset, "file ends inside a large record");
				return FXT_NEXT_FATAL;
			}
		}
		r->offset += v->words * 8;
		r->records++;
		return FXT_NEXT_RECORD;
	}
	n = read_bytes(r, r->rec + 1, (v->words - 1) * 8);
	if (n < 0 || (size_t)n != (v->words - 1) * 8) {
		fxt_reader_add_error(r, v->offset, "file ends inside a record of %zu words", v->words);
		return FXT_NEXT_FATAL;
	}
	r->offset += v->words * 8;
	r->records++;
	return parse_record(r, v) ? FXT_NEXT_RECORD : FXT_NEXT_BAD_RECORD;
}

const struct fxt_arg_view *fxt_arg(const struct fxt_record_view *v, const char *name)
{
	for (unsigned k = 0; k < v->nargs; k++)
		if (strcmp(v->args[k].name, name) == 0)
			return &v->args[k];
	return NULL;
}

struct fxt_reader *fxt_reader_open(const char *path, FILE *out)
{
	gzFile in = gzopen(path, "rb");
	if (!in) {
		fprintf(out, "error: open %s: %s\n", path, errno ? strerror(errno) : "cannot open");
		return NULL;
	}
	gzbuffer(in, 1u << 20);
	struct fxt_reader *r = xcalloc(1, sizeof(*r));
	r->in = in;
	r->rec = xcalloc(FXT_MAX_RECORD_WORDS, 8);
	r->scratch = xcalloc(SCRATCH_BYTES, 1);
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

uint64_t fxt_reader_records(const struct fxt_reader *r)
{
	return r->records;
}

void fxt_reader_add_error(struct fxt_reader *r, uint64_t offset, const char *fmt, ...)
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

const char *fxt_event_type_name(unsigned t)
{
	static const char *const names[] = {
		"instant",        "counter",      "duration_begin", "duration_end",
		"duration_complete", "async_begin", "async_instant", "async_end",
		"flow_begin",     "flow_step",    "flow_end",
	};
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

const char *fxt_object_type_name(unsigned t)
{
	return t == FXT_OBJ_PROCESS ? "process" : t == FXT_OBJ_THREAD ? "thread" : "object";
}

const char *fxt_thread_state_name(unsigned s)
{
	static const char *const names[] = { "new", "running", "suspended", "blocked", "dying", "dead" };
	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
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
	grow_array((void **)&st->items, &st->capacity, st->depth + 1, sizeof(*st->items));
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

/* Applies an event to its thread as Perfetto would, and counts as errors
 * what Perfetto would mis-nest or drop: time going back on the thread, an
 * end with no slice open, a flow point with no slice to bind to. */
