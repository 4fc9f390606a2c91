/* Deferred conversion (issue 38): the reader's loop hands each record of
 * the trace to the spool, a copy in memory, and a thread of its own turns
 * them into the trace (runtime/decode.c's ut_decode_trace, the engine, the
 * FXT writer) beside it, at idle priority (SCHED_IDLE): what the loop does
 * for a trace event is a copy, and the conversion takes the CPU time
 * nothing else wants.  The maps, printf() and exit() stay the loop's, as
 * they come.
 *
 * The spool is bounded in bytes.  When it is full the loop waits for the
 * converter to free a chunk (counted, and timed), so the ring buffer fills
 * instead of memory: the kernel then sheds whole requests, or loses hits
 * past that.  Meanwhile, until it has a quarter of the bound left to
 * convert, the converter runs at normal priority (a machine busy with
 * other work would starve it, and the loop with it), and at the stop,
 * until it has converted everything. */
#ifndef UT_SPOOL_H
#define UT_SPOOL_H
#include <stddef.h>
#include <stdint.h>

#include "compiler/program.h"

struct fxt_writer;
struct ut_engine;
struct ut_spool;

/* Starts the converter thread, which owns e and its writer w until
 * ut_spool_finish: nothing else may touch them meanwhile.  max_bytes is
 * the bound (at least one chunk).  NULL with err when the thread cannot
 * be started. */
struct ut_spool *ut_spool_new(const struct ut_program *prog, struct ut_engine *e, struct fxt_writer *w,
			      size_t max_bytes, char *err, size_t errlen);

/* A copy of a record of the trace, converted in the order given. */
void ut_spool_add(struct ut_spool *s, const void *rec, size_t size);

/* Hands what the loop has spooled to the converter, even when its chunk
 * is not full, if the converter has nothing else to do: a slow stream
 * reaches the trace at once, and chunks go out full otherwise. */
void ut_spool_flush(struct ut_spool *s);

/* Converts everything spooled (the converter at normal priority) and
 * ends its thread; the engine is the caller's again.  Once only. */
void ut_spool_finish(struct ut_spool *s);

/* What the spool did, for -v. */
struct ut_spool_stats {
	uint64_t records;        /* spooled */
	uint64_t peak_bytes;     /* of chunks held at once */
	uint64_t full_waits;     /* times the loop waited for room */
	uint64_t full_wait_ns;   /* ... and for how long in all */
	uint64_t converter_ns;   /* the converter thread's CPU time (after ut_spool_finish) */
	uint64_t trace_bytes;    /* the trace's, as the converter last saw it */
};
void ut_spool_stats(struct ut_spool *s, struct ut_spool_stats *out);

void ut_spool_free(struct ut_spool *s);

#endif
