/* `uring-trace stats`: what a trace holds (records and events by name,
 * flows, processes, threads and their scheduling), and what Perfetto
 * would mis-nest or drop in it, counted as errors. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hashmap.h"
#include "base/json.h"
#include "fxt/fxt.h"
#include "fxt/reader.h"
#include "tools/tools.h"


struct name_count {
	unsigned event_type;
	char *category, *name;
	uint64_t count;
};

struct object_entry {
	uint64_t koid, pid; /* pid: for threads, 0 when unknown */
	char *name;         /* NULL until a kernel-object record names it */
	/* threads: scheduling records that switch it in or out, or wake it */
	uint64_t switched_in, switched_out, woken;
};

/* A growable array of objects with a koid -> position index. */
struct object_set {
	struct object_entry *items;
	size_t count, capacity;
	struct hmap index;
};

/* An open flow's value in open_flows: the time of its last point, with
 * FLOW_ORPHAN set when it was seen first at a step (it cannot be
 * complete). */
#define FLOW_ORPHAN ((uint64_t)1 << 63)

/* A thread as Perfetto imports it: its slice stack, and the time of its
 * last event (they must not go back: Perfetto nests by time). */
struct thread_state {
	struct fxt_slice_stack stack;
	uint64_t last_ts;
};

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
	uint64_t slices_open_at_end;  /* begun, never ended: "did not end" in Perfetto */
	struct thread_state *thread_states;
	size_t nthread_states, thread_states_capacity;
	struct hmap thread_state_index; /* (pid, tid) -> thread state */
	struct object_set processes, threads;
	uint64_t context_switches, wakeups;
	struct hmap cpu_last_ts; /* cpu -> time of its last scheduling record */
};

static struct thread_state *thread_state_of(struct stats *s, uint64_t pid, uint64_t tid)
{
	bool created;
	uint64_t *pos = hmap_insert(&s->thread_state_index, pid, tid, &created);
	if (created) {
		grow_array((void **)&s->thread_states, &s->thread_states_capacity,
			      s->nthread_states + 1, sizeof(*s->thread_states));
		*pos = s->nthread_states;
		s->thread_states[s->nthread_states++] = (struct thread_state){ 0 };
	}
	return &s->thread_states[*pos];
}

static void track_slices(struct stats *s, struct fxt_reader *r, const struct fxt_record_view *v)
{
	struct thread_state *t = thread_state_of(s, v->pid, v->tid);
	if (v->ts < t->last_ts)
		fxt_reader_add_error(r, v->offset, "%s at %" PRIu64 " on thread %" PRIu64 "/%" PRIu64
			  " goes back before the thread's event at %" PRIu64,
			  fxt_event_type_name(v->subtype), v->ts, v->pid, v->tid, t->last_ts);
	else
		t->last_ts = v->ts;
	size_t level;
	if (v->subtype >= FXT_EV_FLOW_BEGIN && !t->stack.depth) {
		s->flow_points_unbound++;
		fxt_reader_add_error(r, v->offset, "%s %" PRIu64 " on thread %" PRIu64 "/%" PRIu64
			  " has no slice to bind to", fxt_event_type_name(v->subtype), v->value, v->pid, v->tid);
	}
	if (!fxt_slice_stack_apply(&t->stack, v, 0, &level) && v->subtype == FXT_EV_DURATION_END)
		fxt_reader_add_error(r, v->offset, "slice end at %" PRIu64 " on thread %" PRIu64 "/%" PRIu64
			  " has no slice to end", v->ts, v->pid, v->tid);
}


static struct object_entry *object_get(struct object_set *set, uint64_t koid)
{
	bool created;
	uint64_t *pos = hmap_insert(&set->index, koid, 0, &created);
	if (created) {
		if (set->count == set->capacity) {
			set->capacity = set->capacity ? set->capacity * 2 : 64;
			set->items = xrealloc(set->items, set->capacity * sizeof(*set->items));
		}
		*pos = set->count;
		set->items[set->count++] = (struct object_entry){ .koid = koid };
	}
	return &set->items[*pos];
}

static void object_set_name(struct object_entry *o, const char *name)
{
	free(o->name);
	o->name = xstrdup(name);
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
				s->names = xrealloc(s->names, s->names_capacity * sizeof(*s->names));
			}
			*pos = s->nnames;
			struct name_count *n = &s->names[s->nnames++];
			n->event_type = type;
			n->category = xstrdup(category);
			n->name = xstrdup(name);
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

/* Follows flow ids as Perfetto does (by id, across the trace), counting
 * as errors a second begin of an open id (Perfetto ignores it), a step or
 * end with no begin, and a point before the flow's previous one (an arrow
 * back in time: the end sorts before its begin). */
static void count_flow(struct stats *s, struct fxt_reader *r, const struct fxt_record_view *v)
{
	uint64_t id = v->value;
	bool created;
	if (v->subtype == FXT_EV_FLOW_BEGIN) {
		uint64_t *last = hmap_insert(&s->open_flows, id, 0, &created);
		if (!created) {
			s->flows_incomplete++; /* the earlier flow with this id never ended */
			fxt_reader_add_error(r, v->offset, "flow %" PRIu64 " begins again while open", id);
		}
		*last = v->ts & ~FLOW_ORPHAN;
		return;
	}
	uint64_t *last = hmap_find(&s->open_flows, id, 0);
	if (!last) {
		fxt_reader_add_error(r, v->offset, "flow %" PRIu64 ": %s without a begin", id,
			  fxt_event_type_name(v->subtype));
		if (v->subtype == FXT_EV_FLOW_STEP)
			*hmap_insert(&s->open_flows, id, 0, &created) = FLOW_ORPHAN | v->ts;
		else
			s->flows_incomplete++; /* an end alone */
		return;
	}
	if (v->ts < (*last & ~FLOW_ORPHAN))
		fxt_reader_add_error(r, v->offset, "flow %" PRIu64 ": %s at %" PRIu64
			  " comes before the flow's previous point at %" PRIu64, id,
			  fxt_event_type_name(v->subtype), v->ts, *last & ~FLOW_ORPHAN);
	else
		*last = (*last & FLOW_ORPHAN) | v->ts;
	if (v->subtype == FXT_EV_FLOW_END) {
		if (*last & FLOW_ORPHAN)
			s->flows_incomplete++;
		else
			s->flows_complete++;
		hmap_remove(&s->open_flows, id, 0);
	}
}

/* Whether the scheduling record's weight argument `name` marks the idle
 * thread.  A weight that is not an int32 makes Perfetto drop the record:
 * an error. */
static bool is_idle(struct fxt_reader *r, const struct fxt_record_view *v, const char *name)
{
	const struct fxt_arg_view *a = fxt_arg(v, name);
	if (a && a->type != FXT_ARG_INT32)
		fxt_reader_add_error(r, v->offset, "%s of a scheduling record is not an int32: Perfetto drops the record",
			  name);
	return a && a->type == FXT_ARG_INT32 && a->i == FXT_IDLE_WEIGHT;
}

/* A thread in a scheduling record (not the idle thread): Perfetto places
 * its tid in the process its thread kernel-object record named before. */
static struct object_entry *sched_thread(struct stats *s, struct fxt_reader *r,
					 const struct fxt_record_view *v, uint64_t tid)
{
	struct object_entry *t = object_get(&s->threads, tid);
	if (!t->name)
		fxt_reader_add_error(r, v->offset, "thread %" PRIu64 " in a scheduling record has no thread kernel-object record before it: Perfetto puts it in no process",
			  tid);
	return t;
}

/* Counts a context switch or wakeup for its threads, and as an error a
 * record going back in time on its CPU: Perfetto does not sort them. */
static void count_scheduling(struct stats *s, struct fxt_reader *r, const struct fxt_record_view *v)
{
	bool created;
	uint64_t *last = hmap_insert(&s->cpu_last_ts, v->cpu, 0, &created);
	if (!created && v->ts < *last)
		fxt_reader_add_error(r, v->offset, "scheduling record at %" PRIu64 " on cpu %u goes back before the cpu's record at %" PRIu64,
			  v->ts, v->cpu, *last);
	else
		*last = v->ts;
	if (v->subtype == FXT_SCHED_CONTEXT_SWITCH) {
		s->context_switches++;
		if (!is_idle(r, v, "outgoing_weight"))
			sched_thread(s, r, v, v->tid)->switched_out++;
		if (!is_idle(r, v, "incoming_weight"))
			sched_thread(s, r, v, v->incoming_tid)->switched_in++;
	} else if (v->subtype == FXT_SCHED_THREAD_WAKEUP) {
		s->wakeups++;
		if (!is_idle(r, v, "weight"))
			sched_thread(s, r, v, v->tid)->woken++;
	}
}

static void count_record(struct stats *s, struct fxt_reader *r, const struct fxt_record_view *v)
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
			const struct fxt_arg_view *process = fxt_arg(v, "process");
			if (process && process->type == FXT_ARG_KOID)
				t->pid = process->u;
		}
	} else if (v->type == FXT_REC_EVENT) {
		s->by_event_type[v->subtype]++;
		count_name(s, v->subtype, v->category, v->name);
		if (v->subtype >= FXT_EV_FLOW_BEGIN)
			count_flow(s, r, v);
		track_slices(s, r, v);
	} else if (v->type == FXT_REC_SCHEDULING) {
		count_scheduling(s, r, v);
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
	fprintf(out, "records: %" PRIu64 "\n", fxt_reader_records(r));
	fprintf(out, "events: %" PRIu64 "\n", events);
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++)
		if (s->by_event_type[t])
			fprintf(out, "  %s: %" PRIu64 "\n", fxt_event_type_name(t), s->by_event_type[t]);
	fputs("events by name:\n", out);
	for (size_t i = 0; i < s->nnames; i++) {
		const struct name_count *n = &s->names[i];
		fprintf(out, "  %s ", fxt_event_type_name(n->event_type));
		tool_print_quoted(out, n->category);
		fputc(' ', out);
		tool_print_quoted(out, n->name);
		fprintf(out, ": %" PRIu64 "\n", n->count);
	}
	fprintf(out, "flows: %" PRIu64 " complete, %" PRIu64 " incomplete, %" PRIu64
		" points outside any slice\n", s->flows_complete, flows_incomplete(s),
		s->flow_points_unbound);
	fprintf(out, "slices open at the end: %" PRIu64 "\n", s->slices_open_at_end);
	fprintf(out, "processes: %zu\n", s->processes.count);
	for (size_t i = 0; i < s->processes.count; i++) {
		const struct object_entry *o = &s->processes.items[i];
		fprintf(out, "  pid %" PRIu64 " ", o->koid);
		tool_print_quoted(out, o->name ? o->name : "");
		fputc('\n', out);
	}
	fprintf(out, "threads: %zu\n", s->threads.count);
	for (size_t i = 0; i < s->threads.count; i++) {
		const struct object_entry *o = &s->threads.items[i];
		fprintf(out, "  tid %" PRIu64 " pid %" PRIu64 " ", o->koid, o->pid);
		tool_print_quoted(out, o->name ? o->name : "");
		if (o->switched_in || o->switched_out || o->woken)
			fprintf(out, " scheduling: %" PRIu64 " switched in, %" PRIu64 " out, %" PRIu64 " woken",
				o->switched_in, o->switched_out, o->woken);
		fputc('\n', out);
	}
	fprintf(out, "scheduling: %" PRIu64 " context switches, %" PRIu64 " wakeups\n",
		s->context_switches, s->wakeups);
	fprintf(out, "errors: %" PRIu64 "\n", fxt_reader_error_count(r));
	for (uint64_t i = 0; fxt_reader_error(r, i); i++)
		fprintf(out, "  %s\n", fxt_reader_error(r, i));
}

static void print_objects_json(FILE *out, const struct object_set *set, bool with_pid)
{
	for (size_t i = 0; i < set->count; i++) {
		const struct object_entry *o = &set->items[i];
		fprintf(out, "%s{\"%s\": %" PRIu64, i ? ", " : "", with_pid ? "tid" : "pid", o->koid);
		if (with_pid)
			fprintf(out, ", \"pid\": %" PRIu64, o->pid);
		fputs(", \"name\": ", out);
		ut_json_string(out, o->name ? o->name : "");
		if (with_pid)
			fprintf(out, ", \"switched_in\": %" PRIu64 ", \"switched_out\": %" PRIu64
				", \"woken\": %" PRIu64, o->switched_in, o->switched_out, o->woken);
		fputc('}', out);
	}
}

static void print_stats_json(FILE *out, const struct stats *s, const struct fxt_reader *r)
{
	uint64_t events = 0;
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++)
		events += s->by_event_type[t];
	fprintf(out, "{\"records\": %" PRIu64 ", \"events\": %" PRIu64 ", \"event_types\": {",
		fxt_reader_records(r), events);
	bool first = true;
	for (unsigned t = 0; t <= FXT_EV_FLOW_END; t++) {
		if (!s->by_event_type[t])
			continue;
		fprintf(out, "%s\"%s\": %" PRIu64, first ? "" : ", ", fxt_event_type_name(t),
			s->by_event_type[t]);
		first = false;
	}
	fputs("}, \"names\": [", out);
	for (size_t i = 0; i < s->nnames; i++) {
		const struct name_count *n = &s->names[i];
		fprintf(out, "%s{\"type\": \"%s\", \"category\": ", i ? ", " : "",
			fxt_event_type_name(n->event_type));
		ut_json_string(out, n->category);
		fputs(", \"name\": ", out);
		ut_json_string(out, n->name);
		fprintf(out, ", \"count\": %" PRIu64 "}", n->count);
	}
	fprintf(out, "], \"flows\": {\"complete\": %" PRIu64 ", \"incomplete\": %" PRIu64
		", \"points_outside_slices\": %" PRIu64 "}",
		s->flows_complete, flows_incomplete(s), s->flow_points_unbound);
	fputs(", \"processes\": [", out);
	print_objects_json(out, &s->processes, false);
	fputs("], \"threads\": [", out);
	print_objects_json(out, &s->threads, true);
	fprintf(out, "], \"scheduling\": {\"context_switches\": %" PRIu64 ", \"wakeups\": %" PRIu64 "}",
		s->context_switches, s->wakeups);
	fprintf(out, ", \"slices_open_at_end\": %" PRIu64, s->slices_open_at_end);
	fprintf(out, ", \"errors\": %" PRIu64 ", \"error_messages\": [", fxt_reader_error_count(r));
	for (uint64_t i = 0; fxt_reader_error(r, i); i++) {
		fputs(i ? ", " : "", out);
		ut_json_string(out, fxt_reader_error(r, i));
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
			count_record(&s, r, &v);

	/* a slice begun and never ended: Perfetto stretches it to the end of
	 * the trace, marked "did not end" (counted, not an error: every
	 * prefix of a trace on a record boundary is a valid trace) */
	for (size_t i = 0; i < s.nthread_states; i++) {
		const struct fxt_slice_stack *st = &s.thread_states[i].stack;
		for (size_t j = 0; j < st->depth; j++)
			s.slices_open_at_end += st->items[j].end == FXT_SLICE_OPEN;
	}
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

	int rc = fxt_reader_error_count(r) ? 1 : 0;
	for (size_t i = 0; i < s.nnames; i++) {
		free(s.names[i].category);
		free(s.names[i].name);
	}
	free(s.names);
	hmap_free(&s.name_index);
	hmap_free(&s.open_flows);
	for (size_t i = 0; i < s.nthread_states; i++)
		free(s.thread_states[i].stack.items);
	free(s.thread_states);
	hmap_free(&s.thread_state_index);
	object_set_free(&s.processes);
	object_set_free(&s.threads);
	hmap_free(&s.cpu_last_ts);
	fxt_reader_close(r);
	return rc;
}
