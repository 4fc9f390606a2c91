/* FXT record-level layout shared by the writer, the reader and the engine.
 * Layouts follow the Fuchsia trace format specification: 64-bit
 * little-endian words, a header word whose bits 0-3 are the record type and
 * bits 4-15 the size in words (header included). */
#ifndef UT_FXT_RECORDS_H
#define UT_FXT_RECORDS_H
#include <stdint.h>

#include "fxt/fxt.h"

#define FXT_MAGIC 0x0016547846040010ull
#define FXT_MAX_RECORD_WORDS 4095u   /* the 12-bit size field */
#define FXT_MAX_ARGS 15u             /* the 4-bit argument count */
#define FXT_STRING_SLOTS 32767u      /* string table indices 1..0x7fff */
#define FXT_PINNED_MAX 2048u         /* stable strings, in slots never evicted */
#define FXT_THREAD_SLOTS 255u        /* thread table indices 1..0xff */
/* Longer strings are cut (at a UTF-8 boundary); keeps every record far
 * below the size limit and bounds the string table's memory. */
#define FXT_MAX_STRING_LEN 4096u
#define FXT_PROVIDER_ID 1u
#define FXT_PROVIDER_NAME "uring-trace"

enum fxt_record_type {
	FXT_REC_METADATA = 0,
	FXT_REC_INITIALIZATION = 1,
	FXT_REC_STRING = 2,
	FXT_REC_THREAD = 3,
	FXT_REC_EVENT = 4,
	FXT_REC_BLOB = 5,
	FXT_REC_USERSPACE_OBJECT = 6,
	FXT_REC_KERNEL_OBJECT = 7,
	FXT_REC_SCHEDULING = 8,
	FXT_REC_LOG = 9,
	FXT_REC_LARGE = 15, /* 10-14 are reserved */
};

enum fxt_metadata_type {
	FXT_META_PROVIDER_INFO = 1,
	FXT_META_PROVIDER_SECTION = 2,
	FXT_META_PROVIDER_EVENT = 3,
	FXT_META_TRACE_INFO = 4,
};

enum fxt_event_type {
	FXT_EV_INSTANT = 0,
	FXT_EV_COUNTER = 1,
	FXT_EV_DURATION_BEGIN = 2,
	FXT_EV_DURATION_END = 3,
	FXT_EV_DURATION_COMPLETE = 4,
	FXT_EV_ASYNC_BEGIN = 5,
	FXT_EV_ASYNC_INSTANT = 6,
	FXT_EV_ASYNC_END = 7,
	FXT_EV_FLOW_BEGIN = 8,
	FXT_EV_FLOW_STEP = 9,
	FXT_EV_FLOW_END = 10,
};

enum fxt_arg_type {
	FXT_ARG_NULL = 0,
	FXT_ARG_INT32 = 1,
	FXT_ARG_UINT32 = 2,
	FXT_ARG_INT64 = 3,
	FXT_ARG_UINT64 = 4,
	FXT_ARG_DOUBLE = 5,
	FXT_ARG_STRING = 6,
	FXT_ARG_POINTER = 7,
	FXT_ARG_KOID = 8,
	FXT_ARG_BOOL = 9,
};

/* Scheduling records (FXT_REC_SCHEDULING): the type is in header bits
 * 60-63.  Perfetto draws them as thread states and CPU tracks. */
enum fxt_sched_type {
	FXT_SCHED_LEGACY_CONTEXT_SWITCH = 0, /* not written; read as uninterpreted */
	FXT_SCHED_CONTEXT_SWITCH = 1,
	FXT_SCHED_THREAD_WAKEUP = 2,
};

/* The outgoing thread's state in a context switch record, as Perfetto
 * shows it: new and running as R (runnable), suspended T, blocked S,
 * dying Z, dead X.  FXT has no uninterruptible (D) state. */
enum fxt_thread_state {
	FXT_THREAD_NEW = 0,
	FXT_THREAD_RUNNING = 1,
	FXT_THREAD_SUSPENDED = 2,
	FXT_THREAD_BLOCKED = 3,
	FXT_THREAD_DYING = 4,
	FXT_THREAD_DEAD = 5,
};
#define FXT_MAX_CPU 0xffffu /* the 16-bit cpu field */
/* A context switch's incoming_weight / outgoing_weight, a wakeup's weight
 * (int32 arguments): this value marks the idle thread, which Perfetto
 * leaves out of thread states and CPU tracks. */
#define FXT_IDLE_WEIGHT INT32_MIN

/* Zircon object types used in kernel-object records. */
enum fxt_object_type { FXT_OBJ_PROCESS = 1, FXT_OBJ_THREAD = 2 };

/* Writes one event record on thread (pid, tid).  type_word is the
 * type-specific trailing word (counter id, end time or correlation id) and
 * is written only for event types that have one.  Arguments beyond 15 are
 * dropped.  Strings and the thread are interned first. */
void fxt_write_event(struct fxt_writer *w, enum fxt_event_type type, uint64_t ts,
		     uint32_t pid, uint32_t tid, const char *category, const char *name,
		     const struct ut_arg *args, unsigned nargs, uint64_t type_word);
/* Writes a flow point on thread (pid, tid): an instant with the arguments,
 * then the flow record (FXT_EV_FLOW_BEGIN, _STEP or _END) of
 * correlation_id, which Perfetto binds to the instant (a zero-length
 * slice on the thread's stack until its next slice event). */
void fxt_write_flow_point(struct fxt_writer *w, enum fxt_event_type flow, uint64_t ts, uint32_t pid,
			  uint32_t tid, const char *category, const char *name, const struct ut_arg *args,
			  unsigned nargs, uint64_t correlation_id);
/* Writes a kernel-object record (names a process or thread). */
void fxt_write_kernel_object(struct fxt_writer *w, enum fxt_object_type type, uint64_t koid,
			     const char *name, const struct ut_arg *args, unsigned nargs);
/* Writes a context switch record on cpu (at most FXT_MAX_CPU): the
 * outgoing thread leaves in state outgoing, the incoming one runs.
 * Threads are tids: Perfetto places each in the process its thread
 * kernel-object record names, which must come first. */
void fxt_write_context_switch(struct fxt_writer *w, uint64_t ts, uint32_t cpu,
			      enum fxt_thread_state outgoing, uint64_t outgoing_tid,
			      uint64_t incoming_tid, const struct ut_arg *args, unsigned nargs);
/* Writes a thread wakeup record: tid is woken onto cpu. */
void fxt_write_thread_wakeup(struct fxt_writer *w, uint64_t ts, uint32_t cpu, uint64_t tid,
			     const struct ut_arg *args, unsigned nargs);
/* Interns s (NULL and "" are the empty ref 0), writing a string record when
 * it gets a slot; returns the string ref. */
uint16_t fxt_string_ref(struct fxt_writer *w, const char *s);
/* Declares that s stays unchanged at its address while the writer lives
 * (a program's names): once interned, its slot is never evicted and s is
 * found by its address alone.  At most FXT_PINNED_MAX strings; past that
 * they are interned as any other. */
void fxt_string_stable(struct fxt_writer *w, const char *s);
/* Whether s was declared stable (and fits the pinned strings). */
bool fxt_string_is_stable(struct fxt_writer *w, const char *s);
/* The string ref of s when it is stable (interned as fxt_string_ref does),
 * else 0.  Stable strings of the same text have the same ref: their slot
 * is the text's for good, so refs compare them. */
uint16_t fxt_stable_ref(struct fxt_writer *w, const char *s);
/* Interns thread (pid, tid), writing a thread record when it gets a slot;
 * returns the thread ref (1..255). */
uint8_t fxt_thread_ref(struct fxt_writer *w, uint32_t pid, uint32_t tid);

#endif
