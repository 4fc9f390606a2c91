/* Reading an FXT trace record by record, for consumers other than `dump`
 * and `stats` (the SVG renderer).  The reader validates every record and
 * resolves string and thread references; it survives arbitrary input. */
#ifndef UT_FXT_READER_H
#define UT_FXT_READER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fxt/records.h"

struct fxt_arg_view {
	const char *name;
	enum fxt_arg_type type;
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
};

/* One parsed record.  Its strings point into the reader's tables or
 * scratch space: valid until the next call to fxt_reader_next. */
struct fxt_record_view {
	uint64_t offset;
	unsigned type;
	size_t words;
	unsigned subtype; /* metadata, event, object or scheduling type */
	unsigned index;   /* string or thread table index */
	uint64_t ts, pid, tid, koid, value; /* value: ticks, provider id, type word */
	bool has_type_word;
	/* scheduling records: the CPU, and for a context switch the outgoing
	 * thread's state (tid) and the incoming thread; a wakeup's thread is
	 * tid */
	unsigned cpu, outgoing_state;
	uint64_t incoming_tid;
	const char *category, *name, *text;
	struct fxt_arg_view args[FXT_MAX_ARGS];
	unsigned nargs;
};

/* FXT_NEXT_BAD_RECORD: a malformed record of sane size, skipped (the read
 * goes on); FXT_NEXT_FATAL: the framing is lost, the read ends. */
enum fxt_next_result { FXT_NEXT_RECORD, FXT_NEXT_BAD_RECORD, FXT_NEXT_END, FXT_NEXT_FATAL };

struct fxt_reader;

/* Opens path (plain or gzip); on failure prints why to err, returns NULL. */
struct fxt_reader *fxt_reader_open(const char *path, FILE *err);
enum fxt_next_result fxt_reader_next(struct fxt_reader *r, struct fxt_record_view *v);
uint64_t fxt_reader_error_count(const struct fxt_reader *r);
/* The text of error i ("offset 0x...: what"); only the first few are kept,
 * NULL for the others. */
const char *fxt_reader_error(const struct fxt_reader *r, uint64_t i);
void fxt_reader_close(struct fxt_reader *r);

/* v's first argument called name, or NULL. */
const struct fxt_arg_view *fxt_arg(const struct fxt_record_view *v, const char *name);

/* Perfetto's slice stack of one thread, for readers that bind flow
 * records as Perfetto does (to the innermost slice on the stack) or drop
 * them (no slice).  Scoped slices (instants, complete events) leave the
 * stack only at the thread's next slice event that starts after them, so
 * a flow record right after an instant binds to it.  Records are taken in
 * file order: Perfetto sorts them by time, and a trace written in time
 * order per thread reads the same.  Zero-initialised is empty. */
#define FXT_SLICE_OPEN UINT64_MAX /* end of a begun slice not yet ended */
struct fxt_stacked_slice {
	uint64_t start, end;
	uint32_t tag; /* the caller's, e.g. its id for the slice's name */
};

struct fxt_slice_stack {
	struct fxt_stacked_slice *items;
	size_t depth, capacity;
};

/* Applies slice event v (begin, end, instant, complete; others are
 * ignored) to st.  Returns the slice that is complete now, with its stack
 * level in *level: the scoped slice an instant or complete event pushed,
 * or the slice an end closed (the innermost one begun and not ended).
 * NULL for a begin or an end with nothing to close.  Valid until the next
 * call. */
const struct fxt_stacked_slice *fxt_slice_stack_apply(struct fxt_slice_stack *st,
						      const struct fxt_record_view *v, uint32_t tag,
						      size_t *level);

/* Records read so far, and the errors found (fxt_reader_error gives the
 * first few); the tools add what Perfetto would mis-nest. */
uint64_t fxt_reader_records(const struct fxt_reader *r);
void fxt_reader_add_error(struct fxt_reader *r, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Names of an event type, a kernel-object type and a thread state, for
 * the tools' text ("unknown" when out of range). */
const char *fxt_event_type_name(unsigned t);
const char *fxt_object_type_name(unsigned t);
const char *fxt_thread_state_name(unsigned s);

#endif
