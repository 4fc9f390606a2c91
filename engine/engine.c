/* The flow-tracking engine: keeps what is open (slices per track, flows,
 * spans and their lanes) and the real threads it has seen (the least
 * recently used forgotten past a limit), and turns each call into FXT
 * records.
 *
 * Every track is a thread in the trace.  Real threads keep their pid/tid;
 * groups are synthetic processes whose pid and thread ids are taken from
 * UT_SYNTHETIC_KOID_BASE upwards. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "engine/engine.h"
#include "fxt/records.h"
#include "base/hashmap.h"
#include "base/lru.h"

/* Koid 0 is invalid in FXT: pid/tid 0 (the idle task) get these instead. */
#define ZERO_PID_KOID 0x3ffffffeu
#define ZERO_TID_KOID 0x3fffffffu
#define NONE UINT32_MAX
#define DEFAULT_MAX_OPEN_FLOWS (1u << 20)
#define DEFAULT_MAX_OPEN_SLICES 256u
#define DEFAULT_MAX_OPEN_SPANS (1u << 20)
#define DEFAULT_MAX_THREADS (1u << 16)
/* Counter series whose last value a track remembers; more series than
 * this on one track are still written, some of them unchanged. */
#define MAX_COUNTER_SERIES 16u
#define LOST_GROUP_KIND "uring-trace"

/* An open slice: its category and name are a program's stable strings
 * (the writer's: ut_engine_stable_string), kept by address, or copied
 * into the track's arena (slices close in stack order, so the arena is a
 * stack too).  category_at is where its copies begin, whether or not it
 * made any. */
struct slice_frame {
	uint32_t category_at, name_at;
	const char *category, *name;   /* the stable strings, or NULL: copied */
};

/* The last value written for a counter series (counter name, arg name). */
struct counter_series {
	char *names; /* counter name, NUL, arg name */
	/* the string refs of its names when both are stable strings (the
	 * writer's), else 0: a value given with stable names is found by
	 * comparing refs (the same text at two addresses, two events' copies
	 * of a counter's names, has one ref) */
	uint16_t name_ref, arg_ref;
	uint32_t arg_at;
	enum ut_arg_kind kind;
	uint64_t bits;
};

struct track {
	uint32_t pid, tid; /* koids as written */
	uint64_t last_ts;  /* of its last event written */
	char *name;        /* as last written in a kernel-object record */
	struct slice_frame *frames;
	uint32_t depth;
	size_t frames_capacity;
	char *arena;
	size_t arena_used, arena_capacity;
	struct counter_series *series; /* MAX_COUNTER_SERIES, from the first counter */
	uint32_t nseries, next_replaced;
	/* real threads: the innermost open slice is the thread's
	 * uninterruptible sleep (UT_SCHED_D_SLICE) */
	bool in_d_slice;
};

struct process {
	uint32_t koid;
	uint32_t threads; /* real-thread tracks of it that are kept */
	char *name;
};

/* Indices of freed entries of an array, reused before it grows. */
struct free_slots {
	uint32_t *items;
	size_t count, capacity;
};

struct group {
	uint32_t kind;
	uint64_t key;
	uint32_t pid;
	uint32_t main_track;
	char *name;
	uint32_t *lane_tracks; /* track of each lane */
	uint64_t *lane_busy;   /* one bit per lane */
	uint32_t nlanes;
};

/* A name the kernel gave a thread (key: pid koid, tid koid) or a process
 * (key: pid koid, PROCESS_NAME): kept until the thread or process has a
 * record in the trace, which then names it.  A task that never has one
 * (the kernel names whatever task a probe ran on) is left out of the
 * trace instead of being an empty named process.  Comm names: 16 bytes. */
#define PROCESS_NAME UINT64_MAX
#define KNOWN_NAME_MAX 32
struct known_name {
	struct lru_link link;
	char name[KNOWN_NAME_MAX];
};

/* An open flow or span, or a real thread, linked least to most recently
 * used so the oldest can be evicted when there are too many. */
struct open_item {
	struct lru_link link;    /* the key: a, b */
	uint64_t correlation_id; /* flows */
	uint64_t last_ts;        /* flows: of the last point */
	uint32_t index;          /* spans: the group; threads: the track */
	uint32_t lane;           /* spans */
	bool phase_open;         /* spans */
};

struct ut_engine {
	struct fxt_writer *w;
	struct ut_engine_limits limits;
	struct ut_engine_stats stats;
	uint64_t max_ts;
	bool cut;   /* the trace reached limits.max_bytes: nothing more is written */
	const char *cut_why;   /* why: "size limit reached", "disk full" */
	/* what ending every open slice would write: their number and the
	 * bytes of their names (kept room for when the trace is cut) */
	uint64_t open_slices, open_names;
	uint64_t room_until;   /* the file's bytes the writer holds room for */

	struct track *tracks;
	size_t ntracks, tracks_capacity;
	struct free_slots free_tracks;
	struct lru_set threads; /* (pid koid, tid koid) -> real-thread track */
	/* the real thread found last (most records follow one of the same
	 * thread): its track, with no look-up; UINT64_MAX: none */
	uint64_t last_thread;
	uint32_t last_thread_track;

	struct process *processes;
	size_t nprocesses, processes_capacity;
	struct free_slots free_processes;
	struct hmap real_processes; /* pid koid -> process */
	struct lru_set known_names; /* struct known_name, at most 2 * limits.max_threads */

	struct group *groups;
	size_t ngroups, groups_capacity;
	struct hmap group_index; /* (kind, key) -> group */
	/* the group found last, by its kind's address (a stable string) and
	 * key: a ring's counters and spans come one after another; NULL: none */
	const char *last_group_kind;
	uint64_t last_group_key;
	uint32_t last_group;

	char **kinds; /* flow and group kind names; a handful per script */
	const char **kinds_at; /* a stable string (the writer's) each was given as, found by address */
	size_t nkinds, kinds_capacity, kinds_at_capacity;

	struct lru_set flows; /* (kind, key) */
	struct lru_set spans; /* (group, span key) */

	uint32_t next_synthetic_koid;
	uint64_t next_correlation_id;
	uint64_t sched_ts; /* of the last scheduling record written */
};

static char *copy_string(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xcalloc(n, 1), s, n);
}

/* A free index of an array of elem-sized items: a freed one, or a new one
 * at its end (which may move the array). */
static uint32_t take_slot(void **array, size_t *count, size_t *capacity, size_t elem,
			  struct free_slots *free_slots)
{
	if (free_slots->count)
		return free_slots->items[--free_slots->count];
	grow_array(array, capacity, *count + 1, elem);
	return (uint32_t)(*count)++;
}

static void give_slot(struct free_slots *free_slots, uint32_t i)
{
	grow_array((void **)&free_slots->items, &free_slots->capacity, free_slots->count + 1,
		      sizeof(*free_slots->items));
	free_slots->items[free_slots->count++] = i;
}

static void note_ts(struct ut_engine *e, uint64_t ts)
{
	if (ts > e->max_ts)
		e->max_ts = ts;
}

/* Room for any one event and the marker that says the trace is cut: a
 * record is at most 32 KiB, with the strings and thread it may bring. */
#define CUT_RESERVE_BYTES (64u << 10)
/* An open slice's end record beyond its names: header, time, thread and
 * the two string references (inline or a string record each), the "cut"
 * argument. */
#define END_RECORD_BYTES 96u
/* The room asked of the file system at a time, past what is needed. */
#define ROOM_AHEAD_BYTES (8u << 20)

static void write_cut_marker(struct ut_engine *e);

static const char DISK_FULL[] = "disk full";

/* What the trace must still be able to take: any one event, the cut
 * marker, and the ends of every open slice and span. */
static uint64_t room_needed(const struct ut_engine *e)
{
	return CUT_RESERVE_BYTES + e->open_slices * END_RECORD_BYTES + e->open_names;
}

/* Whether one more event fits with room kept to end what is open: under
 * max_bytes, and in file-system blocks held for the file ahead of time (a
 * full disk then cuts the trace where it can still end everything). */
static bool room_left(struct ut_engine *e)
{
	uint64_t end = fxt_writer_bytes(e->w) + room_needed(e);
	if (e->limits.max_bytes && end > e->limits.max_bytes) {
		e->cut_why = "--max-size reached";
		return false;
	}
	if (end > e->room_until) {
		uint64_t ahead = end + ROOM_AHEAD_BYTES;
		if (e->limits.max_bytes && ahead > e->limits.max_bytes)
			ahead = e->limits.max_bytes;
		/* as far ahead as there is room for, down to what is needed */
		while (!fxt_writer_hold_room(e->w, ahead)) {
			if (ahead == end) {
				e->cut_why = DISK_FULL;
				return false;
			}
			ahead = end + (ahead - end) / 2;
		}
		e->room_until = ahead;
	}
	return true;
}

/* An event at ts is written: false once the trace was cut (the size
 * limit, or no room on the disk): the event is dropped, counted, and the
 * file ends on whole records, every slice ended (ut_engine_finish). */
static bool writing(struct ut_engine *e, uint64_t ts)
{
	note_ts(e, ts);
	if (!e->cut && !room_left(e)) {
		write_cut_marker(e);
		e->cut = true;
	}
	if (e->cut)
		e->stats.events_cut++;
	return !e->cut;
}

/* The time to write an event on track t at: a track's events are written
 * in time order whatever the caller gives (Perfetto nests a thread's
 * slices by time), so one older than the track's last is written at that
 * one's time, and counted.  The reader hands records on in time order
 * (runtime/reorder.c); this keeps the trace valid when a caller does not. */
static uint64_t track_time(struct ut_engine *e, struct track *t, uint64_t ts)
{
	if (ts >= t->last_ts) {
		t->last_ts = ts;
		return ts;
	}
	e->stats.events_late++;
	return t->last_ts;
}

/* ---- tracks and names ---- */

static uint32_t real_koid(uint32_t id, uint32_t zero_koid)
{
	return id ? id : zero_koid;
}

/* A new track (may move e->tracks). */
static uint32_t new_track(struct ut_engine *e, uint32_t pid, uint32_t tid)
{
	uint32_t ti = take_slot((void **)&e->tracks, &e->ntracks, &e->tracks_capacity,
				sizeof(*e->tracks), &e->free_tracks);
	struct track *t = &e->tracks[ti];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return ti;
}

/* Frees what t holds and zeroes it (a freed slot holds nothing). */
static void free_track_state(struct track *t)
{
	free(t->name);
	free(t->frames);
	free(t->arena);
	for (uint32_t i = 0; i < t->nseries; i++)
		free(t->series[i].names);
	free(t->series);
	memset(t, 0, sizeof(*t));
}

/* Writes the thread's kernel-object record when its name changes. */
static void name_track(struct ut_engine *e, uint32_t ti, const char *name)
{
	struct track *t = &e->tracks[ti];
	if (t->name && strcmp(t->name, name) == 0)
		return;
	free(t->name);
	t->name = copy_string(name);
	struct ut_arg process = { .name = "process", .kind = UT_ARG_KOID, .u = t->pid };
	fxt_write_kernel_object(e->w, FXT_OBJ_THREAD, t->tid, name, &process, 1);
}

/* The name the kernel gave (pid koid, tid koid or PROCESS_NAME), or NULL. */
static const char *known_name(const struct ut_engine *e, uint32_t pid_koid, uint64_t tid_key)
{
	const struct known_name *k = lru_find(&e->known_names, pid_koid, tid_key);
	return k ? k->name : NULL;
}

static void remember_name(struct ut_engine *e, uint32_t pid_koid, uint64_t tid_key, const char *name)
{
	struct known_name *k = lru_find(&e->known_names, pid_koid, tid_key);
	if (k) {
		lru_touch(&e->known_names, k);
	} else {
		if (e->known_names.count >= 2 * e->limits.max_threads)
			lru_remove(&e->known_names, lru_oldest(&e->known_names));
		k = lru_add(&e->known_names, pid_koid, tid_key);
	}
	snprintf(k->name, sizeof(k->name), "%s", name);
}

static void name_process_koid(struct ut_engine *e, char **stored, uint32_t koid, const char *name)
{
	if (*stored && strcmp(*stored, name) == 0)
		return;
	free(*stored);
	*stored = copy_string(name);
	fxt_write_kernel_object(e->w, FXT_OBJ_PROCESS, koid, name, NULL, 0);
}

void ut_engine_stable_string(struct ut_engine *e, const char *s)
{
	fxt_string_stable(e->w, s);
}

static uint32_t kind_id(struct ut_engine *e, const char *kind)
{
	if (!kind)
		kind = "";
	for (size_t i = 0; i < e->nkinds; i++)
		if (e->kinds_at[i] == kind)
			return (uint32_t)i;
	bool stable = e->w && fxt_string_is_stable(e->w, kind);
	for (size_t i = 0; i < e->nkinds; i++)
		if (e->kinds[i][0] == kind[0] && strcmp(e->kinds[i], kind) == 0) {
			if (stable)
				e->kinds_at[i] = kind;
			return (uint32_t)i;
		}
	grow_array((void **)&e->kinds, &e->kinds_capacity, e->nkinds + 1, sizeof(*e->kinds));
	grow_array((void **)&e->kinds_at, &e->kinds_at_capacity, e->nkinds + 1, sizeof(*e->kinds_at));
	e->kinds[e->nkinds] = copy_string(kind);
	e->kinds_at[e->nkinds] = stable ? kind : NULL;
	return (uint32_t)e->nkinds++;
}

static uint32_t synthetic_koid(struct ut_engine *e)
{
	return UT_SYNTHETIC_KOID_BASE + e->next_synthetic_koid++;
}

static void name_group(struct ut_engine *e, uint32_t gi, const char *name)
{
	struct group *g = &e->groups[gi];
	name_process_koid(e, &g->name, g->pid, name);
	name_track(e, g->main_track, name);
}

static uint32_t find_group(struct ut_engine *e, const char *kind, uint64_t key)
{
	if (kind && kind == e->last_group_kind && key == e->last_group_key)
		return e->last_group;
	uint64_t *pos = hmap_find(&e->group_index, kind_id(e, kind), key);
	return pos ? (uint32_t)*pos : NONE;
}

/* The group (kind, key), created on first use and named default_name or,
 * when that is NULL, "<kind> 0x<key>". */
static uint32_t group_for(struct ut_engine *e, const char *kind, uint64_t key,
			  const char *default_name)
{
	if (kind && kind == e->last_group_kind && key == e->last_group_key)
		return e->last_group;
	uint32_t kid = kind_id(e, kind);
	bool created;
	uint64_t *pos = hmap_insert(&e->group_index, kid, key, &created);
	uint32_t gi = (uint32_t)*pos;
	if (!created) {
		if (e->kinds_at[kid] == kind) {   /* a stable string: its address is the kind */
			e->last_group_kind = kind;
			e->last_group_key = key;
			e->last_group = gi;
		}
		return gi;
	}
	gi = (uint32_t)e->ngroups;
	*pos = gi;
	grow_array((void **)&e->groups, &e->groups_capacity, e->ngroups + 1, sizeof(*e->groups));
	e->ngroups++;
	struct group *g = &e->groups[gi];
	memset(g, 0, sizeof(*g));
	g->kind = kid;
	g->key = key;
	g->pid = synthetic_koid(e);
	g->main_track = new_track(e, g->pid, synthetic_koid(e));
	char name[160];
	if (!default_name) {
		snprintf(name, sizeof(name), "%.120s 0x%" PRIx64, e->kinds[kid], key);
		default_name = name;
	}
	name_group(e, gi, default_name);
	return gi;
}

/* ---- slices ---- */

static bool stable_string(const struct ut_engine *e, const char *s)
{
	return e->w && fxt_string_is_stable(e->w, s);
}

/* s kept for slice f: by address when stable (NULL returned), else copied
 * into t's arena at *at. */
static const char *keep_name(const struct ut_engine *e, struct track *t, const char *s, uint32_t *at)
{
	*at = (uint32_t)t->arena_used;
	if (stable_string(e, s))
		return s;
	size_t len = strlen(s) + 1;
	grow_array((void **)&t->arena, &t->arena_capacity, t->arena_used + len, 1);
	memcpy(t->arena + t->arena_used, s, len);
	t->arena_used += len;
	return NULL;
}

static const char *frame_category(const struct track *t, const struct slice_frame *f)
{
	return f->category ? f->category : t->arena + f->category_at;
}

static const char *frame_name(const struct track *t, const struct slice_frame *f)
{
	return f->name ? f->name : t->arena + f->name_at;
}

/* Forgets the outermost open slice of t (it stays unterminated in the
 * trace) to make room under the per-track limit. */
static void drop_outermost_slice(struct track *t)
{
	uint32_t cut = t->frames[1].category_at;
	if (cut) {   /* (none when the first slice's names are stable: the arena may be NULL) */
		memmove(t->arena, t->arena + cut, t->arena_used - cut);
		t->arena_used -= cut;
	}
	memmove(t->frames, t->frames + 1, (t->depth - 1) * sizeof(*t->frames));
	t->depth--;
	for (uint32_t i = 0; i < t->depth; i++) {
		t->frames[i].category_at -= cut;
		t->frames[i].name_at -= cut;
	}
}

static void push_slice(struct ut_engine *e, uint32_t ti, uint64_t ts, const char *category,
		       const char *name, const struct ut_arg *args, unsigned nargs)
{
	struct track *t = &e->tracks[ti];
	if (!category)
		category = "";
	if (!name)
		name = "";
	if (t->depth >= e->limits.max_open_slices) {
		size_t names = t->arena_used;
		if (t->depth == 1) {
			t->depth = 0;
			t->arena_used = 0;
		} else {
			drop_outermost_slice(t);
		}
		e->open_slices--;
		e->open_names -= names - t->arena_used;
		e->stats.slices_evicted++;
	}
	size_t before = t->arena_used;
	/* A track holds one or two slices at a time (a span's lane, one): a
	 * first array of two, not grow_array's sixteen (336 bytes less a
	 * track; a snapshot of liburing's suite has ten thousand lanes). */
	if (!t->frames_capacity) {
		t->frames = xmalloc(2 * sizeof(*t->frames));
		t->frames_capacity = 2;
	}
	grow_array((void **)&t->frames, &t->frames_capacity, t->depth + 1, sizeof(*t->frames));
	struct slice_frame *f = &t->frames[t->depth++];
	f->category = keep_name(e, t, category, &f->category_at);
	f->name = keep_name(e, t, name, &f->name_at);
	e->open_slices++;
	e->open_names += t->arena_used - before;   /* a stable string's record is in the trace already */
	fxt_write_event(e->w, FXT_EV_DURATION_BEGIN, track_time(e, t, ts), t->pid, t->tid, category,
			name, args, nargs, 0);
}

/* Ends the innermost open slice of track ti; false if none is open. */
static bool pop_slice(struct ut_engine *e, uint32_t ti, uint64_t ts, const char *rename,
		      const struct ut_arg *args, unsigned nargs)
{
	struct track *t = &e->tracks[ti];
	if (!t->depth)
		return false;
	struct slice_frame *f = &t->frames[--t->depth];
	t->in_d_slice = false; /* when open it is the innermost: this one */
	e->open_slices--;
	e->open_names -= t->arena_used - f->category_at;
	fxt_write_event(e->w, FXT_EV_DURATION_END, track_time(e, t, ts), t->pid, t->tid, frame_category(t, f),
			rename ? rename : frame_name(t, f), args, nargs, 0);
	t->arena_used = f->category_at;
	return true;
}

/* ---- real threads and processes ---- */

/* The real process pid, created (and named, by default "process <pid>")
 * on first sight; name, when not NULL, renames it.  Returns its index. */
static uint32_t real_process(struct ut_engine *e, uint32_t pid, const char *name)
{
	uint32_t koid = real_koid(pid, ZERO_PID_KOID);
	bool created;
	uint64_t *pos = hmap_insert(&e->real_processes, koid, 0, &created);
	char fallback[32];
	if (created) {
		uint32_t pi = take_slot((void **)&e->processes, &e->nprocesses,
					&e->processes_capacity, sizeof(*e->processes),
					&e->free_processes);
		*pos = pi;
		e->processes[pi] = (struct process){ koid, 0, NULL };
		if (!name)
			name = known_name(e, koid, PROCESS_NAME);
		if (!name) {
			snprintf(fallback, sizeof(fallback), "process %" PRIu32, pid);
			name = fallback;
		}
	}
	uint32_t pi = (uint32_t)*pos;
	if (name)
		name_process_koid(e, &e->processes[pi].name, koid, name);
	return pi;
}

/* Forgets the least recently used real thread: its open slices end now,
 * marked evicted, and its process goes with its last kept thread. */
static void evict_oldest_thread(struct ut_engine *e)
{
	struct open_item *it = lru_oldest(&e->threads);
	uint32_t ti = it->index;
	struct ut_arg evicted = { .name = "evicted", .kind = UT_ARG_BOOL, .b = true };
	while (pop_slice(e, ti, e->max_ts, NULL, &evicted, 1))
		;
	uint32_t pid_koid = e->tracks[ti].pid;
	free_track_state(&e->tracks[ti]);
	give_slot(&e->free_tracks, ti);
	lru_remove(&e->threads, it);
	e->last_thread = UINT64_MAX;
	e->stats.threads_evicted++;

	uint64_t *pos = hmap_find(&e->real_processes, pid_koid, 0);
	struct process *p = &e->processes[*pos];
	if (--p->threads == 0) {
		free(p->name);
		p->name = NULL;
		give_slot(&e->free_processes, (uint32_t)*pos);
		hmap_remove(&e->real_processes, pid_koid, 0);
		e->stats.processes_evicted++;
	}
}

/* The track of a real thread kept (marked the most recently used), or NONE. */
static uint32_t kept_thread(struct ut_engine *e, uint32_t pid_koid, uint32_t tid_koid)
{
	uint64_t key = (uint64_t)pid_koid << 32 | tid_koid;
	if (key == e->last_thread)
		return e->last_thread_track;   /* the newest already */
	struct open_item *it = lru_find(&e->threads, pid_koid, tid_koid);
	if (!it)
		return NONE;
	lru_touch(&e->threads, it);
	e->last_thread = key;
	e->last_thread_track = it->index;
	return it->index;
}

/* The track of real thread (pid, tid); name as for real_process. */
static uint32_t real_thread(struct ut_engine *e, uint32_t pid, uint32_t tid, const char *name)
{
	uint32_t pid_koid = real_koid(pid, ZERO_PID_KOID), tid_koid = real_koid(tid, ZERO_TID_KOID);
	uint32_t kept = kept_thread(e, pid_koid, tid_koid);
	if (kept != NONE) {
		if (name)
			name_track(e, kept, name);
		return kept;
	}
	if (!name)
		name = known_name(e, pid_koid, tid_koid);
	/* a process's main thread has its name (a thread seen only in another's
	 * scheduling record comes with no process name) */
	const char *process_name = NULL;
	if (pid == tid && name && !known_name(e, pid_koid, PROCESS_NAME))
		process_name = name;
	/* the process first: evicting its last other thread must not forget it */
	uint32_t pi = real_process(e, pid, process_name); /* may move e->processes */
	e->processes[pi].threads++;
	if (e->threads.count >= e->limits.max_threads)
		evict_oldest_thread(e);
	uint32_t ti = new_track(e, pid_koid, tid_koid);
	struct open_item *added = lru_add(&e->threads, pid_koid, tid_koid);
	added->index = ti;
	e->last_thread = (uint64_t)pid_koid << 32 | tid_koid;
	e->last_thread_track = ti;
	char fallback[32];
	if (!name) {
		snprintf(fallback, sizeof(fallback), "thread %" PRIu32, tid);
		name = fallback;
	}
	name_track(e, ti, name);
	return ti;
}

/* A thread's uninterruptible sleep ends at ts: it was woken, or runs. */
static void end_d_slice(struct ut_engine *e, uint32_t ti, uint64_t ts)
{
	if (e->tracks[ti].in_d_slice)
		pop_slice(e, ti, ts, NULL, NULL, 0);
}

/* The track of t, which has an event at ts.  A thread with an event runs,
 * so its uninterruptible sleep ends there if its switch in was not seen:
 * the sleep's slice stays the innermost, and an end meant for another
 * slice never ends it. */
static uint32_t track_at(struct ut_engine *e, const struct ut_track *t, uint64_t ts)
{
	if (t->kind == UT_TRACK_GROUP) {
		uint32_t gi = group_for(e, t->group, t->key, NULL); /* may move e->groups */
		return e->groups[gi].main_track;
	}
	uint32_t ti = real_thread(e, t->pid, t->tid, NULL);
	end_d_slice(e, ti, ts);
	return ti;
}

/* ---- spans and lanes ---- */

static uint32_t take_lowest_free_lane(struct ut_engine *e, uint32_t gi)
{
	struct group *g = &e->groups[gi];
	uint32_t words = (g->nlanes + 63) / 64;
	for (uint32_t w = 0; w < words; w++) {
		if (g->lane_busy[w] == UINT64_MAX)
			continue;
		uint32_t lane = w * 64 + (uint32_t)__builtin_ctzll(~g->lane_busy[w]);
		if (lane >= g->nlanes)
			break;
		g->lane_busy[w] |= 1ull << (lane % 64);
		return lane;
	}
	/* all lanes busy: a new one, a new thread of the group */
	uint32_t lane = g->nlanes++;
	g->lane_tracks = xrealloc(g->lane_tracks, (size_t)g->nlanes * sizeof(*g->lane_tracks));
	if (lane % 64 == 0) {
		g->lane_busy = xrealloc(g->lane_busy, (size_t)(lane / 64 + 1) * sizeof(uint64_t));
		g->lane_busy[lane / 64] = 0;
	}
	g->lane_busy[lane / 64] |= 1ull << (lane % 64);
	uint32_t pid = g->pid;
	uint32_t ti = new_track(e, pid, synthetic_koid(e));
	e->groups[gi].lane_tracks[lane] = ti;
	char name[32];
	snprintf(name, sizeof(name), "lane %" PRIu32, lane + 1);
	name_track(e, ti, name);
	return lane;
}

/* Ends span s (its phase first) and frees its lane. */
static void end_span(struct ut_engine *e, uint64_t ts, struct open_item *s, const char *rename,
		     const struct ut_arg *args, unsigned nargs)
{
	struct group *g = &e->groups[s->index];
	uint32_t ti = g->lane_tracks[s->lane];
	if (s->phase_open)
		pop_slice(e, ti, ts, NULL, NULL, 0);
	pop_slice(e, ti, ts, rename, args, nargs);
	g->lane_busy[s->lane / 64] &= ~(1ull << (s->lane % 64));
	lru_remove(&e->spans, s);
}

/* ---- public API ---- */

struct ut_engine *ut_engine_new(struct fxt_writer *w, const struct ut_engine_limits *lim)
{
	struct ut_engine *e = xcalloc(1, sizeof(*e));
	e->w = w;
	if (lim)
		e->limits = *lim;
	if (!e->limits.max_open_flows)
		e->limits.max_open_flows = DEFAULT_MAX_OPEN_FLOWS;
	if (!e->limits.max_open_slices)
		e->limits.max_open_slices = DEFAULT_MAX_OPEN_SLICES;
	if (!e->limits.max_open_spans)
		e->limits.max_open_spans = DEFAULT_MAX_OPEN_SPANS;
	if (!e->limits.max_threads)
		e->limits.max_threads = DEFAULT_MAX_THREADS;
	lru_init(&e->flows, sizeof(struct open_item));
	lru_init(&e->spans, sizeof(struct open_item));
	lru_init(&e->threads, sizeof(struct open_item));
	e->last_thread = UINT64_MAX;
	lru_init(&e->known_names, sizeof(struct known_name));
	return e;
}

const struct ut_engine_stats *ut_engine_stats(const struct ut_engine *e)
{
	return &e->stats;
}

void ut_engine_report_limits(const struct ut_engine *e, FILE *out)
{
	const struct ut_engine_stats *st = &e->stats;
	if (!st->flows_evicted && !st->spans_evicted && !st->slices_evicted && !st->threads_evicted)
		return;
	fprintf(out,
		"uring-trace: trace limits reached, the oldest were dropped: %" PRIu64
		" open flows (of %zu), %" PRIu64 " open spans (of %zu), %" PRIu64
		" slices nested deeper than %zu, %" PRIu64 " threads (of %zu kept)\n",
		st->flows_evicted, e->limits.max_open_flows, st->spans_evicted,
		e->limits.max_open_spans, st->slices_evicted, e->limits.max_open_slices,
		st->threads_evicted, e->limits.max_threads);
}

void ut_engine_process_name(struct ut_engine *e, uint32_t pid, const char *name)
{
	if (e->cut)
		return;
	uint32_t koid = real_koid(pid, ZERO_PID_KOID);
	remember_name(e, koid, PROCESS_NAME, name ? name : "");
	if (hmap_find(&e->real_processes, koid, 0))   /* renamed (exec) */
		real_process(e, pid, name ? name : "");
}

void ut_engine_thread_name(struct ut_engine *e, uint32_t pid, uint32_t tid, const char *name)
{
	if (e->cut)
		return;
	uint32_t pid_koid = real_koid(pid, ZERO_PID_KOID), tid_koid = real_koid(tid, ZERO_TID_KOID);
	remember_name(e, pid_koid, tid_koid, name ? name : "");
	uint32_t kept = kept_thread(e, pid_koid, tid_koid);
	if (kept != NONE)   /* renamed (exec) */
		name_track(e, kept, name ? name : "");
}

void ut_engine_group_name(struct ut_engine *e, const char *kind, uint64_t key, const char *name)
{
	if (e->cut)
		return;
	name_group(e, group_for(e, kind, key, NULL), name ? name : "");
}

void ut_slice_begin(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		    const char *category, const char *name,
		    const struct ut_arg *args, unsigned nargs)
{
	if (!writing(e, ts))
		return;
	push_slice(e, track_at(e, t, ts), ts, category, name, args, nargs);
	e->stats.events++;
}

void ut_slice_end(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		  const struct ut_arg *args, unsigned nargs)
{
	if (!writing(e, ts))
		return;
	if (pop_slice(e, track_at(e, t, ts), ts, NULL, args, nargs))
		e->stats.events++;
	else
		e->stats.slices_unmatched_end++;
}

void ut_instant(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		const char *category, const char *name,
		const struct ut_arg *args, unsigned nargs)
{
	if (!writing(e, ts))
		return;
	uint32_t ti = track_at(e, t, ts); /* may move e->tracks */
	struct track *tr = &e->tracks[ti];
	fxt_write_event(e->w, FXT_EV_INSTANT, track_time(e, tr, ts), tr->pid, tr->tid, category, name,
			args, nargs, 0);
	e->stats.events++;
}

/* The value's bits, for comparing with the last one of its series. */
static uint64_t counter_bits(const struct ut_arg *v)
{
	switch (v->kind) {
	case UT_ARG_DOUBLE: {
		uint64_t bits;
		memcpy(&bits, &v->d, sizeof(bits));
		return bits;
	}
	case UT_ARG_BOOL:
		return v->b;
	default:
		return v->u;
	}
}

/* A series' names: the strings, and their refs when both are stable (else 0). */
struct series_names {
	const char *name, *arg;
	uint16_t name_ref, arg_ref;
};

static bool is_series(const struct counter_series *s, const struct series_names *n)
{
	if (s->arg_ref && n->arg_ref)
		return s->arg_ref == n->arg_ref && s->name_ref == n->name_ref;
	/* the first characters first: series on one track differ by their arg */
	return s->names[s->arg_at] == n->arg[0] && strcmp(s->names + s->arg_at, n->arg) == 0 &&
	       strcmp(s->names, n->name) == 0;
}

/* Index of series n on t, looked for at guess first; nseries if none. */
static uint32_t find_series(const struct track *t, const struct series_names *n, uint32_t guess)
{
	if (guess < t->nseries && is_series(&t->series[guess], n))
		return guess;
	for (uint32_t i = 0; i < t->nseries; i++)
		if (is_series(&t->series[i], n))
			return i;
	return t->nseries;
}

/* True when v differs from the last value written for (name, v->name) on
 * t, which then remembers v.  Strings are not numbers Perfetto draws, and
 * are always written.  *next is where the series is looked for first: a
 * counter's values come in the same order every time, so after the
 * series of one value comes the next one's. */
static bool counter_changed(struct ut_engine *e, struct track *t, const char *name, uint16_t name_ref,
			    const struct ut_arg *v, uint32_t *next)
{
	if (v->kind == UT_ARG_STR)
		return true;
	struct series_names n = {.name = name, .arg = v->name ? v->name : "", .name_ref = name_ref};
	n.arg_ref = name_ref && e->w ? fxt_stable_ref(e->w, n.arg) : 0;
	if (!n.arg_ref)
		n.name_ref = 0;
	const char *arg = n.arg;
	uint64_t bits = counter_bits(v);
	uint32_t found = find_series(t, &n, *next);
	if (found < t->nseries) {
		struct counter_series *s = &t->series[found];
		bool changed = s->kind != v->kind || s->bits != bits;
		s->kind = v->kind;
		s->bits = bits;
		*next = found + 1;
		return changed;
	}
	if (!t->series)
		t->series = xcalloc(MAX_COUNTER_SERIES, sizeof(*t->series));
	uint32_t i = t->nseries;
	if (i < MAX_COUNTER_SERIES) {
		t->nseries++;
	} else { /* full: take turns replacing one */
		i = t->next_replaced;
		t->next_replaced = (t->next_replaced + 1) % MAX_COUNTER_SERIES;
		free(t->series[i].names);
	}
	size_t name_len = strlen(name), arg_len = strlen(arg);
	struct counter_series *s = &t->series[i];
	s->names = xcalloc(name_len + arg_len + 2, 1);
	memcpy(s->names, name, name_len);
	memcpy(s->names + name_len + 1, arg, arg_len);
	s->arg_at = (uint32_t)(name_len + 1);
	s->name_ref = n.name_ref;
	s->arg_ref = n.arg_ref;
	s->kind = v->kind;
	s->bits = bits;
	*next = i + 1;
	return true;
}

void ut_counter(struct ut_engine *e, uint64_t ts, const struct ut_track *t,
		const char *name, const struct ut_arg *values, unsigned nvalues)
{
	if (!writing(e, ts))
		return;
	uint32_t ti = track_at(e, t, ts); /* may move e->tracks */
	struct track *tr = &e->tracks[ti];
	if (!name)
		name = "";
	if (nvalues > FXT_MAX_ARGS)
		nvalues = FXT_MAX_ARGS;
	struct ut_arg changed[FXT_MAX_ARGS];
	unsigned nchanged = 0;
	uint32_t next_series = 0;   /* a track's first counter is looked for first */
	uint16_t name_ref = e->w ? fxt_stable_ref(e->w, name) : 0;
	for (unsigned i = 0; i < nvalues; i++) {
		if (counter_changed(e, tr, name, name_ref, &values[i], &next_series))
			changed[nchanged++] = values[i];
		else
			e->stats.counters_unchanged++;
	}
	if (!nchanged)
		return;
	/* Perfetto keys counters by (process, name, arg, counter id): the
	 * thread's koid as id gives each thread its own counter tracks */
	fxt_write_event(e->w, FXT_EV_COUNTER, track_time(e, tr, ts), tr->pid, tr->tid, "", name, changed,
			nchanged, tr->tid);
	e->stats.events++;
}

void ut_flow(struct ut_engine *e, uint64_t ts, uint32_t pid, uint32_t tid,
	     enum ut_flow_phase phase, const char *flow_kind, uint64_t key,
	     const char *category, const char *name,
	     const struct ut_arg *args, unsigned nargs)
{
	if (!writing(e, ts))
		return;
	uint32_t ti = real_thread(e, pid, tid, NULL);
	end_d_slice(e, ti, ts);
	uint32_t kid = kind_id(e, flow_kind);
	struct open_item *f = lru_find(&e->flows, kid, key);
	enum fxt_event_type record = phase == UT_FLOW_STEP ? FXT_EV_FLOW_STEP : FXT_EV_FLOW_END;
	if (phase == UT_FLOW_BEGIN || !f) {
		if (phase == UT_FLOW_BEGIN)
			e->stats.flows_begun++;
		else
			e->stats.flows_without_begin++;
		if (f) /* begun again while open: the old flow is abandoned */
			lru_remove(&e->flows, f);
		if (e->flows.count >= e->limits.max_open_flows) {
			lru_remove(&e->flows, lru_oldest(&e->flows));
			e->stats.flows_evicted++;
		}
		f = lru_add(&e->flows, kid, key);
		f->correlation_id = ++e->next_correlation_id;
		f->last_ts = ts;
		record = FXT_EV_FLOW_BEGIN;
	} else if (phase == UT_FLOW_END) {
		e->stats.flows_ended++;
	}
	/* an arrow never points back in time (Perfetto would sort the end
	 * before its begin), nor does its thread's time go back */
	if (ts < f->last_ts) {
		e->stats.events_late++;
		ts = f->last_ts;
	}
	struct track *t = &e->tracks[ti];
	ts = track_time(e, t, ts);
	f->last_ts = ts;
	uint64_t id = f->correlation_id;
	if (phase == UT_FLOW_END)
		lru_remove(&e->flows, f);

	/* Perfetto binds a flow record to the innermost slice on the thread's
	 * stack.  An instant is a zero-length slice that stays on that stack
	 * until the thread's next slice event, so the flow record right after
	 * it binds to it (2 words and the args, where a begin/end pair around
	 * the flow record took 4). */
	fxt_write_flow_point(e->w, record, ts, t->pid, t->tid, category, name, args, nargs, id);
	e->stats.events++;
}

void ut_span_begin(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		   uint64_t span_key, const char *category, const char *name,
		   const struct ut_arg *args, unsigned nargs)
{
	if (!writing(e, ts))
		return;
	uint32_t gi = group_for(e, group, group_key, NULL);
	struct open_item *s = lru_find(&e->spans, gi, span_key);
	if (s)
		end_span(e, ts, s, NULL, NULL, 0);
	if (e->spans.count >= e->limits.max_open_spans) {
		struct ut_arg evicted = { .name = "evicted", .kind = UT_ARG_BOOL, .b = true };
		end_span(e, ts, lru_oldest(&e->spans), NULL, &evicted, 1);
		e->stats.spans_evicted++;
	}
	uint32_t lane = take_lowest_free_lane(e, gi);
	push_slice(e, e->groups[gi].lane_tracks[lane], ts, category, name, args, nargs);
	s = lru_add(&e->spans, gi, span_key);
	s->index = gi;
	s->lane = lane;
	e->stats.spans_begun++;
	e->stats.events++;
}

/* The open span (group, group_key, span_key), or NULL (counted). */
static struct open_item *find_open_span(struct ut_engine *e, const char *group, uint64_t group_key,
					uint64_t span_key)
{
	uint32_t gi = find_group(e, group, group_key);
	struct open_item *s = gi == NONE ? NULL : lru_find(&e->spans, gi, span_key);
	if (!s)
		e->stats.spans_without_begin++;
	return s;
}

/* The open span an end or phase at ts is for; NULL when there is none
 * (counted) or the trace is cut. */
static struct open_item *span_event(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
				    uint64_t span_key)
{
	if (!writing(e, ts))
		return NULL;
	return find_open_span(e, group, group_key, span_key);
}

void ut_span_end(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		 uint64_t span_key, const char *name,
		 const struct ut_arg *args, unsigned nargs)
{
	struct open_item *s = span_event(e, ts, group, group_key, span_key);
	if (!s)
		return;
	end_span(e, ts, s, name, args, nargs);
	e->stats.spans_ended++;
	e->stats.events++;
}

void ut_span_phase(struct ut_engine *e, uint64_t ts, const char *group, uint64_t group_key,
		   uint64_t span_key, const char *name,
		   const struct ut_arg *args, unsigned nargs)
{
	struct open_item *s = span_event(e, ts, group, group_key, span_key);
	if (!s)
		return;
	uint32_t ti = e->groups[s->index].lane_tracks[s->lane];
	if (s->phase_open)
		pop_slice(e, ti, ts, NULL, NULL, 0);
	struct track *t = &e->tracks[ti];
	if (!t->depth) { /* the span's slice was evicted from the stack */
		s->phase_open = false;
		e->stats.spans_without_begin++;
		return;
	}
	/* the phase takes the span's category; copy it out of the arena,
	 * which push_slice may move */
	const char *span_category = frame_category(t, &t->frames[t->depth - 1]);
	char *category = copy_string(span_category);
	push_slice(e, ti, ts, category, name, args, nargs);
	free(category);
	s->phase_open = true;
	e->stats.events++;
}

/* ---- scheduling ---- */

static enum fxt_thread_state fxt_state_of(enum ut_sched_state s)
{
	switch (s) {
	case UT_SCHED_RUNNABLE:
		return FXT_THREAD_RUNNING;
	case UT_SCHED_STOPPED:
		return FXT_THREAD_SUSPENDED;
	case UT_SCHED_DYING:
		return FXT_THREAD_DYING;
	case UT_SCHED_DEAD:
		return FXT_THREAD_DEAD;
	default: /* sleeping, uninterruptible: FXT has no D */
		return FXT_THREAD_BLOCKED;
	}
}

/* The time to write a scheduling record at: Perfetto does not sort them,
 * so they go in time order across the trace (per CPU and per thread). */
static uint64_t sched_time(struct ut_engine *e, uint64_t ts)
{
	if (ts >= e->sched_ts) {
		e->sched_ts = ts;
		return ts;
	}
	e->stats.events_late++;
	return e->sched_ts;
}

/* The track of a thread in a scheduling record; a thread not seen yet is
 * named (its kernel-object record first: Perfetto places a scheduling
 * record's tid in the process that record names). */
static uint32_t sched_thread(struct ut_engine *e, const struct ut_sched_thread *t)
{
	uint32_t kept = kept_thread(e, real_koid(t->pid, ZERO_PID_KOID), real_koid(t->tid, ZERO_TID_KOID));
	return kept != NONE ? kept : real_thread(e, t->pid, t->tid, t->name);
}

void ut_sched_switch(struct ut_engine *e, uint64_t ts, uint32_t cpu,
		     const struct ut_sched_thread *prev, uint32_t prev_state,
		     const struct ut_sched_thread *next)
{
	if (!writing(e, ts))
		return;
	ts = sched_time(e, ts);
	enum ut_sched_state state = ut_sched_state_of(prev_state);
	struct ut_arg args[2];
	unsigned nargs = 0;
	uint64_t prev_koid = 0, next_koid = 0; /* 0: the idle task */
	if (prev->tid) {
		uint32_t ti = sched_thread(e, prev);
		end_d_slice(e, ti, ts); /* it ran: its switch in was not seen */
		if (state == UT_SCHED_UNINTERRUPTIBLE) {
			push_slice(e, ti, ts, UT_SCHED_CATEGORY, UT_SCHED_D_SLICE, NULL, 0);
			e->tracks[ti].in_d_slice = true;
		}
		prev_koid = e->tracks[ti].tid;
		args[nargs++] = (struct ut_arg){ .name = "linux_state", .kind = UT_ARG_UINT, .u = prev_state };
	} else {
		args[nargs++] = (struct ut_arg){ .name = "outgoing_weight", .kind = UT_ARG_INT, .i = FXT_IDLE_WEIGHT };
	}
	if (next->tid) {
		uint32_t ti = sched_thread(e, next); /* may forget prev's track: it is written */
		end_d_slice(e, ti, ts);
		next_koid = e->tracks[ti].tid;
	} else {
		args[nargs++] = (struct ut_arg){ .name = "incoming_weight", .kind = UT_ARG_INT, .i = FXT_IDLE_WEIGHT };
	}
	fxt_write_context_switch(e->w, ts, cpu, fxt_state_of(state), prev_koid, next_koid, args, nargs);
	e->stats.events++;
}

void ut_sched_wakeup(struct ut_engine *e, uint64_t ts, uint32_t cpu,
		     const struct ut_sched_thread *woken)
{
	if (!woken->tid || !writing(e, ts)) /* the idle task is never woken */
		return;
	ts = sched_time(e, ts);
	uint32_t ti = sched_thread(e, woken);
	end_d_slice(e, ti, ts);
	fxt_write_thread_wakeup(e->w, ts, cpu, e->tracks[ti].tid, NULL, 0);
	e->stats.events++;
}

/* Ends every open span and slice at ts, marked with arg, and forgets the
 * open flows. */
static void cut_open(struct ut_engine *e, uint64_t ts, const struct ut_arg *arg)
{
	while (lru_oldest(&e->spans)) {
		end_span(e, ts, lru_oldest(&e->spans), NULL, arg, 1);
		e->stats.spans_cut++;
	}
	for (size_t i = 0; i < e->ntracks; i++)
		while (pop_slice(e, (uint32_t)i, ts, NULL, arg, 1))
			e->stats.slices_cut++;
	e->stats.flows_cut += e->flows.count;
	lru_free(&e->flows);
}

static void write_cut_marker(struct ut_engine *e)
{
	uint32_t gi = group_for(e, LOST_GROUP_KIND, 0, "uring-trace");
	struct track *t = &e->tracks[e->groups[gi].main_track];
	struct ut_arg args[] = {
		{ .name = "max_bytes", .kind = UT_ARG_UINT, .u = e->limits.max_bytes },
		{ .name = "events_written", .kind = UT_ARG_UINT, .u = e->stats.events },
	};
	char name[64];
	snprintf(name, sizeof(name), "trace cut: %s", e->cut_why);
	fxt_write_event(e->w, FXT_EV_INSTANT, track_time(e, t, e->max_ts), t->pid, t->tid, "uring-trace", name,
			args, 2, 0);
}

/* A mark at ts on the uring-trace track: name, how many (count_name:
 * count), since when, and what. */
static void mark_stream(struct ut_engine *e, uint64_t ts, const char *name, const char *count_name, uint64_t count,
			uint64_t since, const char *what)
{
	uint32_t gi = group_for(e, LOST_GROUP_KIND, 0, "uring-trace");
	struct track *t = &e->tracks[e->groups[gi].main_track];
	struct ut_arg args[] = {
		{ .name = count_name, .kind = UT_ARG_UINT, .u = count },
		{ .name = "since_ns", .kind = UT_ARG_UINT, .u = since <= ts ? ts - since : 0 },
		{ .name = "what", .kind = UT_ARG_STR, .s = what ? what : "" },
	};
	fxt_write_event(e->w, FXT_EV_INSTANT, track_time(e, t, ts), t->pid, t->tid, "uring-trace", name, args, 3, 0);
	e->stats.events++;
}

void ut_events_lost(struct ut_engine *e, uint64_t ts, uint64_t since, uint64_t lost, const char *what)
{
	if (!writing(e, ts))
		return;
	mark_stream(e, ts, "events lost", "lost", lost, since, what);
	struct ut_arg cut = { .name = "cut_by_lost_events", .kind = UT_ARG_BOOL, .b = true };
	cut_open(e, ts, &cut);
	e->stats.lost_markers++;
}

void ut_requests_shed(struct ut_engine *e, uint64_t ts, uint64_t since, uint64_t requests)
{
	if (!writing(e, ts))
		return;
	mark_stream(e, ts, "requests shed", "shed", requests, since,
		    "whole requests left out before the ring buffer overflowed (the reader was behind)");
	e->stats.shed_markers++;
	e->stats.requests_shed += requests;
}

/* Closes everything still open at last_ts (never before a timestamp already
 * written) and releases the open state; stats stay readable until
 * ut_engine_free. */
void ut_engine_finish(struct ut_engine *e, uint64_t last_ts)
{
	/* a cut trace ends what is open where it was cut, in the room kept */
	if (last_ts > e->max_ts && !e->cut)
		e->max_ts = last_ts;
	struct ut_arg unfinished = { .name = e->cut ? "cut" : "unfinished", .kind = UT_ARG_BOOL, .b = true };
	for (size_t i = 0; i < e->ntracks; i++) {
		while (pop_slice(e, (uint32_t)i, e->max_ts, NULL, &unfinished, 1))
			e->stats.slices_unfinished++;
		free(e->tracks[i].frames);
		free(e->tracks[i].arena);
		e->tracks[i].frames = NULL;
		e->tracks[i].arena = NULL;
		e->tracks[i].frames_capacity = e->tracks[i].arena_capacity = 0;
		e->tracks[i].arena_used = 0;
	}
	for (size_t i = 0; i < e->ngroups; i++)
		if (e->groups[i].nlanes)
			memset(e->groups[i].lane_busy, 0,
			       (e->groups[i].nlanes + 63) / 64 * sizeof(uint64_t));
	lru_free(&e->flows);
	lru_free(&e->spans);
}

const char *ut_engine_cut_reason(const struct ut_engine *e)
{
	return e->cut ? e->cut_why : NULL;
}

bool ut_engine_disk_full(const struct ut_engine *e)
{
	return e->cut && e->cut_why == DISK_FULL;
}

void ut_engine_free(struct ut_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->ntracks; i++)
		free_track_state(&e->tracks[i]);
	for (size_t i = 0; i < e->nprocesses; i++)
		free(e->processes[i].name);
	free(e->tracks);
	free(e->free_tracks.items);
	lru_free(&e->threads);
	lru_free(&e->known_names);
	free(e->processes);
	free(e->free_processes.items);
	hmap_free(&e->real_processes);
	for (size_t i = 0; i < e->ngroups; i++) {
		free(e->groups[i].name);
		free(e->groups[i].lane_tracks);
		free(e->groups[i].lane_busy);
	}
	free(e->groups);
	hmap_free(&e->group_index);
	for (size_t i = 0; i < e->nkinds; i++)
		free(e->kinds[i]);
	free(e->kinds);
	free(e->kinds_at);
	lru_free(&e->flows);
	lru_free(&e->spans);
	free(e);
}
