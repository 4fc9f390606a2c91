/* Deferred conversion (issue 38): the reader's loop hands each record of
 * the trace to the spool, a copy in memory, and a thread of its own turns
 * them into the trace (runtime/decode.c's ut_decode_trace, the engine, the
 * FXT writer) beside it, at idle priority (SCHED_IDLE): what the loop does
 * for a trace event is a copy, and the conversion takes the CPU time
 * nothing else wants, never a workload's.  The maps, printf() and exit()
 * stay the loop's, as they come.
 *
 * The spool is bounded in bytes.  When it is full the loop converts the
 * oldest chunk itself (its CPU time, as when it wrote the trace itself),
 * so the ring buffer waits instead of memory growing: past half of it the
 * kernel sheds whole requests.  The thread converts a slice of records at
 * a time holding the engine; the loop that needs it raises the thread to
 * normal priority until its slice ends (idle, a machine busy with other
 * work would starve it holding the engine).  The stop converts what is
 * left in the loop. */
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

/* Ends the converter thread and converts what is left; the engine is the
 * caller's again.  Once only. */
void ut_spool_finish(struct ut_spool *s);

/* What the spool did, for -v. */
struct ut_spool_stats {
	uint64_t records;        /* spooled */
	uint64_t peak_bytes;     /* of chunks held at once */
	uint64_t full_times;     /* times the loop found it full */
	uint64_t loop_records;   /* ... and converted records itself */
	uint64_t loop_ns;        /* ... in this much of its CPU time */
	uint64_t converter_ns;   /* the converter thread's CPU time (after ut_spool_finish) */
	uint64_t stop_records;   /* left at the stop, and converted by the loop */
	uint64_t stop_ns;        /* ... in this much of its CPU time */
	uint64_t trace_bytes;    /* the trace's, as the converter last saw it */
};
void ut_spool_stats(struct ut_spool *s, struct ut_spool_stats *out);

void ut_spool_free(struct ut_spool *s);

#endif
