/* Fuchsia trace format (FXT) writer and reader: the public surface the
 * engine, the runtime and the tools use.  Record-level details stay in
 * fxt/records.h. */
#ifndef UT_FXT_H
#define UT_FXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fxt_writer;

/* A typed argument attached to a slice, instant, counter, span or flow
 * point.  Strings are borrowed for the duration of the call. */
enum ut_arg_kind {
	UT_ARG_INT,    /* signed 64-bit */
	UT_ARG_UINT,   /* unsigned 64-bit */
	UT_ARG_DOUBLE,
	UT_ARG_BOOL,
	UT_ARG_STR,
	UT_ARG_PTR,    /* shown as a pointer */
	UT_ARG_KOID,   /* a pid or tid */
};

struct ut_arg {
	const char *name;
	enum ut_arg_kind kind;
	union {
		int64_t i;
		uint64_t u;
		double d;
		bool b;
		const char *s;
	};
};

/* Groups' pids and tids are taken from here upwards, far above any real
 * pid (< 2^22); readers of a trace use it to tell groups from processes. */
#define UT_SYNTHETIC_KOID_BASE 0x40000000u

/* A context switch of the traces this tool writes carries the outgoing
 * thread's Linux state as the argument "linux_state" (engine/engine.c);
 * its readers (tools/render.c) tell the states apart as the engine does.
 * The Linux task state bits (task_struct.__state, as tp_btf:sched_switch's
 * prev_state gives them) that matter.  The classic tracepoint's
 * prev_state is another encoding. */
#define UT_TASK_RUNNING 0x0000u
#define UT_TASK_INTERRUPTIBLE 0x0001u
#define UT_TASK_UNINTERRUPTIBLE 0x0002u
#define UT_TASK_STOPPED 0x0004u
#define UT_TASK_TRACED 0x0008u
#define UT_EXIT_DEAD 0x0010u
#define UT_EXIT_ZOMBIE 0x0020u
#define UT_TASK_DEAD 0x0080u
#define UT_TASK_NOLOAD 0x0400u      /* with UNINTERRUPTIBLE: TASK_IDLE, not D */
#define UT_TASK_RTLOCK_WAIT 0x1000u /* blocked on a sleeping spinlock: D */

/* What a thread switched out in a Linux state does until it runs again. */
enum ut_sched_state {
	UT_SCHED_RUNNABLE,        /* preempted: waits for a CPU (R) */
	UT_SCHED_SLEEPING,        /* interruptible sleep, or idle waiting (S) */
	UT_SCHED_UNINTERRUPTIBLE, /* D: usually waiting for IO */
	UT_SCHED_STOPPED,         /* stopped or traced (T) */
	UT_SCHED_DYING,           /* zombie (Z) */
	UT_SCHED_DEAD,            /* exited (X) */
};
enum ut_sched_state ut_sched_state_of(uint32_t linux_state);

/* Opens path for writing ("-" is not allowed); a name ending in ".gz" is
 * gzip-compressed.  Writes magic, provider info and the initialization
 * record (1 tick = 1 ns).  On failure returns NULL and a message in err. */
struct fxt_writer *fxt_writer_open(const char *path, char *err, size_t errlen);
/* Flushes buffered records; a trace flushed is valid up to that point. */
int fxt_writer_flush(struct fxt_writer *w);
/* Flushes and closes; returns 0, or -1 with the first write error in err. */
int fxt_writer_close(struct fxt_writer *w, char *err, size_t errlen);
/* First write error seen (NULL if none): writes never fail silently. */
const char *fxt_writer_error(const struct fxt_writer *w);
uint64_t fxt_writer_bytes(const struct fxt_writer *w);
/* Has the file system hold room for the file up to `bytes` (fallocate,
 * its size unchanged): false when there is none (a full disk, a quota);
 * true when the file system cannot hold room, or it is not a file. */
bool fxt_writer_hold_room(struct fxt_writer *w, uint64_t bytes);
/* The event records in the file and its size in *bytes: after a write
 * error, those before the buffer that failed (the file is cut there, on a
 * record boundary, when it is a regular file); with gzip, those handed to
 * zlib.  Flush first to count everything. */
uint64_t fxt_writer_events_written(const struct fxt_writer *w, uint64_t *bytes);
/* Wall-clock time spent handing buffers to the file (write, or zlib). */
uint64_t fxt_writer_write_ns(const struct fxt_writer *w);

#endif
