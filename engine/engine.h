/* The flow-tracking engine: turns decoded trace constructs (slices,
 * instants, counters, flows, spans) into a Fuchsia trace.  It is generic:
 * it knows nothing of io_uring or the block layer; scripts decide what
 * means what.  Data flows one way: runtime -> engine -> fxt writer. */
#ifndef UT_ENGINE_H
#define UT_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fxt/fxt.h"

/* Where a construct is drawn.  A thread track is a real thread (named from
 * its comm, grouped under its process).  A group is a synthetic process
 * created by a script (one per io_uring ring, one per disk), identified by
 * (kind, key); its ids are synthetic (fxt/fxt.h, UT_SYNTHETIC_KOID_BASE). */
enum ut_track_kind { UT_TRACK_THREAD, UT_TRACK_GROUP };

struct ut_track {
	enum ut_track_kind kind;
	uint32_t pid, tid;      /* UT_TRACK_THREAD */
	const char *group;      /* UT_TRACK_GROUP: kind name, e.g. "ring" */
	uint64_t key;           /* UT_TRACK_GROUP: key, e.g. the ctx pointer */
};

struct ut_engine_limits {
	size_t max_open_flows;   /* 0 = default (1M) */
	size_t max_open_slices;  /* per track; 0 = default (256) */
	size_t max_open_spans;   /* 0 = default (1M) */
	/* Real threads kept (name, open slices, counter values); past this
	 * the least recently used is forgotten, and a process when its last
	 * thread is.  0 = default (65536: four times the BPF side's table of
	 * threads already named, so a thread forgotten here is named again
	 * before its next event). */
	size_t max_threads;
	/* The trace file stops growing before this many bytes (uncompressed):
	 * a "trace cut" instant says so, later events are dropped (counted in
	 * events_cut), and what is open ends there, marked cut, in room kept
	 * for it.  Room on the disk is held ahead the same way: a full disk
	 * cuts the trace too.  0 = no limit. */
	uint64_t max_bytes;
};

struct ut_engine_stats {
	uint64_t events;             /* calls that produced output */
	uint64_t slices_unmatched_end;
	uint64_t slices_unfinished;  /* closed by ut_engine_finish */
	uint64_t flows_begun, flows_ended, flows_without_begin, flows_evicted;
	uint64_t spans_begun, spans_ended, spans_without_begin, spans_evicted;
	uint64_t slices_evicted;
	uint64_t threads_evicted;    /* their open slices are ended, marked evicted */
	uint64_t processes_evicted;
	uint64_t counters_unchanged; /* counter values not written: same as the last one */
	uint64_t lost_markers;
	uint64_t shed_markers;       /* ut_requests_shed calls, and the requests they said */
	uint64_t requests_shed;
	/* what losses ended (spans, slices) or forgot (flows) */
	uint64_t spans_cut, slices_cut, flows_cut;
	uint64_t events_late;        /* older than one written before: written at its time */
	uint64_t events_cut;         /* dropped: the trace reached max_bytes */
};

struct ut_engine;

/* The engine writes through w; it does not own w. */
struct ut_engine *ut_engine_new(struct fxt_writer *w, const struct ut_engine_limits *lim);
/* Closes what is still open at last_ts (marked unfinished) and frees the
 * open state; stats stay readable until ut_engine_free. */
void ut_engine_finish(struct ut_engine *e, uint64_t last_ts);
void ut_engine_free(struct ut_engine *e);
const struct ut_engine_stats *ut_engine_stats(const struct ut_engine *e);
/* Why the trace was cut ("--max-size reached", "disk full"), or NULL. */
const char *ut_engine_cut_reason(const struct ut_engine *e);
/* The trace was cut because the file system had no room left. */
bool ut_engine_disk_full(const struct ut_engine *e);
/* Prints one line to out naming what the limits evicted, if anything. */
void ut_engine_report_limits(const struct ut_engine *e, FILE *out);

/* Declares that s (a program's name: a category, an event, argument or
 * kind name) stays unchanged at its address until the engine is freed;
 * the trace writer then finds it by address, without comparing text. */
void ut_engine_stable_string(struct ut_engine *e, const char *s);

/* Names.  May be called at any time, any number of times; the newest name
 * wins for records written afterwards.  A thread or process is written
 * (named) with its first record: one named and never seen again is not in
 * the trace. */
void ut_engine_process_name(struct ut_engine *e, uint32_t pid, const char *name);
void ut_engine_thread_name(struct ut_engine *e, uint32_t pid, uint32_t tid, const char *name);
/* Names a group (synthetic process); until named it is "<kind> 0x<key>". */
void ut_engine_group_name(struct ut_engine *e, const char *kind, uint64_t key, const char *name);

/* Constructs.  ts is in nanoseconds on one monotonic clock. */
void ut_slice_begin(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		    const char *category, const char *name,
		    const struct ut_arg *args, unsigned nargs);
/* Closes the innermost open slice of t; args are added to it. */
void ut_slice_end(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		  const struct ut_arg *args, unsigned nargs);
void ut_instant(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		const char *category, const char *name,
		const struct ut_arg *args, unsigned nargs);
/* One counter track per (track, name, arg name).  A value equal to the
 * last one written for its series is not written again (a counter is drawn
 * as steps, so the trace shows the same). */
void ut_counter(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		const char *name, const struct ut_arg *values, unsigned nvalues);

/* Flows follow one object across threads and processes, keyed by
 * (flow kind, key).  Each point is an instant `name` with the args on
 * thread (pid, tid), followed by the flow record: Perfetto binds the flow
 * record to the innermost slice on the thread, which is that instant.  A key
 * reused after its end starts a new flow; a step or end without a begin
 * starts the flow there. */
enum ut_flow_phase { UT_FLOW_BEGIN, UT_FLOW_STEP, UT_FLOW_END };
void ut_flow(struct ut_engine *e, uint64_t ts, uint32_t pid, uint32_t tid,
	     enum ut_flow_phase phase, const char *flow_kind, uint64_t key,
	     const char *category, const char *name,
	     const struct ut_arg *args, unsigned nargs);

/* Spans: an item in flight on a group (a request on a ring), keyed by
 * (group kind, group key, span key), packed into lanes: each span takes the
 * lowest free lane of its group, so concurrency is visible at a glance.
 * A span begin with a key already open ends the old span first. */
void ut_span_begin(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		   uint64_t span_key, const char *category, const char *name,
		   const struct ut_arg *args, unsigned nargs);
/* Args are added to the span; name, when not NULL, renames it. */
void ut_span_end(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		 uint64_t span_key, const char *name,
		 const struct ut_arg *args, unsigned nargs);

/* Phases of a span (queue, then service): ends the span's current phase,
 * if any, and begins a slice `name` nested inside the span on its lane.
 * The last phase ends with the span. */
void ut_span_phase(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		   uint64_t span_key, const char *name,
		   const struct ut_arg *args, unsigned nargs);

/* Scheduling: what threads do between their events.  Perfetto draws
 * thread states (running, runnable, sleeping, dead) under each thread and
 * a track per CPU.  Scheduling records are written in time order across
 * the trace (one older than the last written is written at that one's
 * time, and counted late), so in time order on each CPU and each thread.
 *
 * A thread taking part: (pid, tid) and, for a thread the engine has not
 * seen, its name (NULL: "thread <tid>"); a name never renames a thread
 * already seen.  tid 0 is a CPU's idle task: it is not a thread of the
 * trace (the CPU is idle). */
struct ut_sched_thread {
	uint32_t pid, tid;
	const char *name;
};

/* The slice an uninterruptible sleep is drawn as on its thread's track
 * (FXT has no D state: Perfetto shows S).  It runs from the switch out
 * to the thread's wakeup, its switch in, or its next event, whichever
 * comes first, and is always the innermost slice of its thread. */
#define UT_SCHED_CATEGORY "sched"
#define UT_SCHED_D_SLICE "uninterruptible (D)"

/* cpu switches from prev, which leaves in prev_state (Linux state bits;
 * UT_TASK_RUNNING when it was preempted, whatever its state), to next.
 * cpu is at most 65535 (the record's field).  The context switch record
 * carries prev's Linux state as the argument "linux_state". */
void ut_sched_switch(struct ut_engine *e, uint64_t ts, uint32_t cpu,
		     const struct ut_sched_thread *prev, uint32_t prev_state,
		     const struct ut_sched_thread *next);
/* woken is made runnable onto cpu (it waits there for the CPU). */
void ut_sched_wakeup(struct ut_engine *e, uint64_t ts, uint32_t cpu,
		     const struct ut_sched_thread *woken);

/* Events were lost between since and ts (how many, and what lost them).
 * A marker on a global "uring-trace" track says so, and everything open
 * is ended there, marked cut_by_lost_events: the end of a span, slice or
 * flow may be among the lost events, and a later end with the same key
 * may belong to another item whose begin was lost too.  Later ends and
 * steps of what was open then find nothing open (a flow step or end
 * starts a new flow). */
void ut_events_lost(struct ut_engine *e, uint64_t ts, uint64_t since, uint64_t lost, const char *what);

/* Whole requests were shed between since and ts (left out by the kernel
 * before the ring buffer overflowed: every point of their flows, and what
 * is keyed to them): a marker on the "uring-trace" track says how many.
 * Nothing open ends: what the trace holds of other requests is whole. */
void ut_requests_shed(struct ut_engine *e, uint64_t ts, uint64_t since, uint64_t requests);

#endif
