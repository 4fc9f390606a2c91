/* The flight recorder (--ring DURATION): the trace's records of the last
 * DURATION stay in memory, as the reader hands them on (in time order),
 * and are written as a trace only when asked: at the end of tracing, or
 * for a snapshot.  Records are kept as they came from the ring buffer
 * (about 50 bytes each, where the engine and the FXT writer would spend
 * their time), so a window costs its records' bytes.
 *
 * What leaves the window is not forgotten entirely: the names of threads
 * and groups, the slices and spans still open, the last value of each
 * counter and the scheduling record that put each thread in its state
 * (switched out, woken) are kept (each as the record that made it), so
 * that a window written alone is a whole trace: named, with what was open
 * at its start beginning there. */
#ifndef UT_RECORDER_H
#define UT_RECORDER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/program.h"

struct ut_engine;
struct ut_recorder;

/* Keeps the last window_ns of records in at most max_bytes (records and
 * what is kept of those that left: ut_recorder_bytes); over that, the
 * oldest leave before their time and the window is shorter. */
struct ut_recorder *ut_recorder_new(const struct ut_program *prog, uint64_t window_ns, size_t max_bytes);
void ut_recorder_free(struct ut_recorder *r);

/* Keeps a copy of a trace record (records come in time order); those
 * older than the window before it leave, unless held. */
void ut_recorder_add(struct ut_recorder *r, const void *rec, size_t size);

/* Records from `from` on stay until ut_recorder_release (a snapshot waits
 * for the records after its trigger); so do, whatever the bound, those
 * the cursor of ut_recorder_start has not reached. */
void ut_recorder_hold(struct ut_recorder *r, uint64_t from);
void ut_recorder_release(struct ut_recorder *r);

/* Time of the oldest and newest record kept (0 when none). */
uint64_t ut_recorder_oldest(const struct ut_recorder *r);
uint64_t ut_recorder_newest(const struct ut_recorder *r);
/* Bytes of records and state kept. */
size_t ut_recorder_bytes(const struct ut_recorder *r);
/* Over the bound: a window being written holds records the bound would
 * let go (write it faster). */
bool ut_recorder_over(const struct ut_recorder *r);
/* Records up to the time returned left for the bound while the window
 * still covered them (0: none did); *first_time the first call that says
 * so. */
uint64_t ut_recorder_cut_before(struct ut_recorder *r, bool *first_time);

/* Writing a window into an engine, a part at a time (the ring buffer is
 * read in between): ut_recorder_start writes what was open before `from`
 * (begun there); each ut_recorder_continue writes up to max more records
 * up to `to`.  Records keep coming meanwhile; those from `from` on stay
 * while ut_recorder_hold(from) holds them. */
struct ut_recorder_cursor {
	void *chunk;
	size_t at;
	uint64_t from;
	uint64_t mark;    /* continue stops before the first record after it (0: none) */
	bool at_mark;     /* it did: write the mark, then continue */
	bool caught_up;   /* every record kept so far is written */
	bool done;        /* a record past `to` came: the window is whole */
};
void ut_recorder_start(struct ut_recorder *r, struct ut_engine *e, uint64_t from, uint64_t mark,
		       struct ut_recorder_cursor *cur);
uint64_t ut_recorder_continue(struct ut_recorder *r, struct ut_engine *e, struct ut_recorder_cursor *cur,
			      uint64_t to, uint64_t max);

#endif
