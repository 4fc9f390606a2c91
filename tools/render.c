/* SVG renderer for FXT traces.
 *
 * Pass 1 reads names (processes, threads), the tick rate and the time
 * range (--busiest adds a pass counting events over time).  Pass 2 replays
 * each thread's slice stack as Perfetto keeps it (fxt/reader.h), so
 * flow points bind to the same slices, and reduces what falls in the
 * window to pixels as it goes: slices narrower than a pixel merge
 * with their neighbours, instants and counter samples are kept per pixel
 * column, identical arrows once, and scheduling records become a strip
 * of each thread's states (running, runnable, sleeping, D, ...) under
 * its slices, merged to a box a pixel.  Memory and output therefore grow
 * with the picture's width and the number of threads, not with the
 * trace.
 * Then rows are laid out and the SVG written.  The output depends only on
 * the trace and the options (no clock, no addresses), so tests can compare
 * it. */
#include "tools/render.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hashmap.h"
#include "fxt/fxt.h"
#include "fxt/reader.h"

#define NONE UINT32_MAX

/* Geometry in pixels.  Text is monospace so that label widths can be
 * computed here: DejaVu Sans Mono advances 0.602 em. */
#define FONT_PX 10.0
#define CHAR_PX 6.02
#define MARGIN 10.0
#define LABEL_COLUMN 250.0
#define HEADER_H 62.0   /* title, subtitle, time axis */
#define PROCESS_H 18.0
#define LEVEL_H 15.0
#define COUNTER_H 30.0
#define ROW_PAD 3.0
#define STRIP_H 6.0     /* a thread's state strip */
#define LEGEND_H 40.0
#define LEGEND_LINE_H 16.0

/* Bounds that keep big traces readable and their pictures small. */
#define MAX_LEVELS 12u     /* slice depths drawn per thread */
#define MERGE_PX 1.0       /* a slice narrower than this merges with a neighbour this close */
#define MAX_ROWS 400u      /* thread and counter rows */
#define MAX_SERIES 2000u   /* counter series followed */
#define MAX_LABELS 3000u   /* slice labels; the widest slices get them */
#define MAX_ARROWS 4000u
#define MIN_LABEL_CHARS 3u
#define BUSIEST_BUCKETS 8192u
#define KEPT_ERRORS 3u

/* ---- interned strings ---- */

struct strings {
	char **items;
	size_t count, capacity;
	struct hmap index; /* (hash, salt) -> position */
};

static uint32_t intern(struct strings *s, const char *text)
{
	uint64_t hash = hmap_hash_bytes(text, strlen(text));
	/* a different string with the same hash takes the next salt */
	for (uint64_t salt = 0;; salt++) {
		bool created;
		uint64_t *pos = hmap_insert(&s->index, hash, salt, &created);
		if (created) {
			grow_array((void **)&s->items, &s->capacity, s->count + 1, sizeof(*s->items));
			*pos = s->count;
			s->items[s->count] = xstrdup(text);
			return (uint32_t)s->count++;
		}
		if (strcmp(s->items[*pos], text) == 0)
			return (uint32_t)*pos;
	}
}

static void strings_free(struct strings *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->items[i]);
	free(s->items);
	hmap_free(&s->index);
}

/* ---- what is drawn ---- */

/* One slice, or several adjacent slices narrower than a pixel. */
struct box {
	double x0, x1;
	uint32_t name;    /* NONE: merged slices of different names */
	uint32_t count;   /* slices it stands for */
	uint64_t ticks;   /* the slice's duration when count == 1 */
	bool narrow;      /* narrower than a pixel, or merged: later narrow slices may join */
	bool labelled;
};

struct box_row {
	struct box *items;
	size_t count, capacity;
};

/* One instant, or several within a pixel. */
struct mark {
	double x;
	uint32_t name; /* NONE: several names */
	uint32_t count;
};

struct mark_row {
	struct mark *items;
	size_t count, capacity;
};

/* What a thread does, drawn in its state strip.  D is told apart from S
 * by the context switch's linux_state argument (FXT has no D state). */
enum strip_state {
	STRIP_UNKNOWN, /* before its first scheduling record */
	STRIP_RUNNING,
	STRIP_RUNNABLE, /* preempted or woken: waits for a CPU */
	STRIP_SLEEPING,
	STRIP_UNINTERRUPTIBLE,
	STRIP_STOPPED,
	STRIP_DEAD, /* dying or dead */
	STRIP_STATES
};

static const struct {
	const char *name, *color;
} strip_states[STRIP_STATES] = {
	[STRIP_RUNNING] = { "running", "#34a853" },
	[STRIP_RUNNABLE] = { "runnable", "#f9ab00" },
	[STRIP_SLEEPING] = { "sleeping", "#c6dafc" },
	[STRIP_UNINTERRUPTIBLE] = { "uninterruptible (D)", "#d93025" },
	[STRIP_STOPPED] = { "stopped", "#a142f4" },
	[STRIP_DEAD] = { "dead", "#3c4043" },
};

/* A stretch of a thread's state strip: one state, or a pixel's worth of
 * stretches narrower than a pixel, drawn in the colour of the state that
 * lasted longest in it. */
struct state_box {
	double x0, x1;
	uint32_t count;
	uint64_t ticks[STRIP_STATES];
};

struct state_row {
	struct state_box *items;
	size_t count, capacity;
};

/* A thread track: a real thread, or a group's track or lane. */
struct track {
	uint64_t pid, tid;
	bool shown; /* passes --only */
	struct fxt_slice_stack stack; /* as Perfetto keeps it, to bind flow points */
	struct box_row levels[MAX_LEVELS];
	struct mark_row marks[MAX_LEVELS];
	unsigned nlevels; /* levels holding boxes or marks */
	uint32_t first_series, last_series; /* its counters, in order of appearance */
	struct state_row states;
	enum strip_state state; /* since state_since */
	uint64_t state_since;
	bool arrow_end; /* an arrow in the window starts or ends here */
	double y; /* top of its slice row; < 0 when not drawn */
};

/* One numeric argument of one counter on one track, reduced to pixel
 * columns (NAN where a column has no sample). */
struct series {
	uint32_t track, label;
	double before; /* the last value before the window, or NAN */
	double *lo, *hi, *last;
	double min, max;
	bool any;
	uint32_t next; /* the track's next series */
	double y;      /* top of its row; < 0 when not drawn */
};

struct arrow {
	uint32_t from, to; /* tracks */
	unsigned from_level, to_level;
	double x0, x1;
};

/* Where an open flow was last bound: its next point draws an arrow from
 * here. */
struct flow_point {
	uint32_t track;
	unsigned level;
	uint64_t ts;
};

struct render {
	const struct svg_render_options *o;
	FILE *err;
	struct strings strings;

	/* pass 1 */
	struct hmap process_names; /* (pid, 0) -> string */
	struct hmap thread_names;  /* (tid, 0) -> string */
	struct hmap thread_pids;   /* (tid, 0) -> pid, from the thread's kernel-object record */
	uint64_t ticks_per_second;
	uint64_t first_ts, last_ts, events;
	uint64_t errors;
	char error_text[KEPT_ERRORS][256];

	uint64_t *buckets; /* events per slice of the time range, for --busiest */

	/* the window and the scale */
	uint64_t w0, w1;
	double plot_x, plot_w, px_per_tick;
	size_t columns;

	/* pass 2 */
	struct track *tracks;
	size_t ntracks, tracks_capacity;
	struct hmap track_index; /* (pid, tid) -> track */
	struct series *series;
	size_t nseries, series_capacity;
	struct hmap series_index; /* (track, label) -> series */
	struct arrow *arrows;
	size_t narrows, arrows_capacity;
	struct hmap arrow_index; /* the arrow's pixels -> 1, to draw each once */
	struct flow_point *points;
	size_t npoints, points_capacity;
	uint32_t *free_points;
	size_t nfree_points, free_points_capacity;
	struct hmap open_flows; /* (correlation id, 0) -> point */

	/* what was left out, for the legend */
	uint64_t slices_drawn, slices_too_deep, instants_drawn, series_dropped, states_drawn;
	uint64_t arrows_dropped, points_unbound, async_events;
	uint64_t labels_dropped, rows_dropped;
	double height;
};

/* ---- reading ---- */

typedef void (*record_fn)(struct render *r, const struct fxt_record_view *v);

/* Runs fn on every readable record of the trace; keeps the reader's errors
 * when keep_errors (they are the same on every pass).  False when the
 * trace cannot be opened. */
static bool read_trace(struct render *r, record_fn fn, bool keep_errors)
{
	struct fxt_reader *in = fxt_reader_open(r->o->input, r->err);
	if (!in)
		return false;
	struct fxt_record_view v;
	enum fxt_next_result res;
	while ((res = fxt_reader_next(in, &v)) != FXT_NEXT_END && res != FXT_NEXT_FATAL)
		if (res == FXT_NEXT_RECORD)
			fn(r, &v);
	if (keep_errors) {
		r->errors = fxt_reader_error_count(in);
		for (uint64_t i = 0; i < r->errors && i < KEPT_ERRORS; i++)
			snprintf(r->error_text[i], sizeof(r->error_text[i]), "%s", fxt_reader_error(in, i));
	}
	fxt_reader_close(in);
	return true;
}

static void set_name(struct render *r, struct hmap *names, uint64_t koid, const char *name)
{
	bool created;
	*hmap_insert(names, koid, 0, &created) = intern(&r->strings, name);
}

static const char *name_of(const struct render *r, const struct hmap *names, uint64_t koid)
{
	const uint64_t *at = hmap_find(names, koid, 0);
	return at ? r->strings.items[*at] : NULL;
}

/* Events, and the scheduling records drawn (a thread asleep has no
 * events). */
static bool has_time(const struct fxt_record_view *v)
{
	return v->type == FXT_REC_EVENT ||
	       (v->type == FXT_REC_SCHEDULING &&
		(v->subtype == FXT_SCHED_CONTEXT_SWITCH || v->subtype == FXT_SCHED_THREAD_WAKEUP));
}

/* Pass 1: names, tick rate, time range. */
static void scan_record(struct render *r, const struct fxt_record_view *v)
{
	if (v->type == FXT_REC_INITIALIZATION) {
		r->ticks_per_second = v->value;
	} else if (v->type == FXT_REC_KERNEL_OBJECT) {
		if (v->subtype == FXT_OBJ_PROCESS) {
			set_name(r, &r->process_names, v->koid, v->name);
		} else if (v->subtype == FXT_OBJ_THREAD) {
			set_name(r, &r->thread_names, v->koid, v->name);
			const struct fxt_arg_view *process = fxt_arg(v, "process");
			bool created;
			if (process && process->type == FXT_ARG_KOID)
				*hmap_insert(&r->thread_pids, v->koid, 0, &created) = process->u;
		}
	} else if (has_time(v)) {
		if (!r->events || v->ts < r->first_ts)
			r->first_ts = v->ts;
		if (!r->events || v->ts > r->last_ts)
			r->last_ts = v->ts;
		r->events++;
	}
}

/* ---- the window ---- */

static double ticks_to_ns(const struct render *r, double ticks)
{
	return ticks * 1e9 / (double)r->ticks_per_second;
}

static uint64_t ms_to_ticks(const struct render *r, double ms)
{
	double ticks = ms * (double)r->ticks_per_second / 1e3;
	return ticks >= 1.8e19 ? UINT64_MAX : (uint64_t)ticks;
}

static uint64_t add_clamped(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Counts events per bucket of the trace's time range, for --busiest. */
static void count_record(struct render *r, const struct fxt_record_view *v)
{
	if (!has_time(v) || v->ts < r->first_ts || v->ts > r->last_ts)
		return;
	double span = (double)(r->last_ts - r->first_ts) + 1;
	size_t b = (size_t)((double)(v->ts - r->first_ts) / span * BUSIEST_BUCKETS);
	r->buckets[b < BUSIEST_BUCKETS ? b : BUSIEST_BUCKETS - 1]++;
}

/* The window of --busiest's length holding the most events (the earliest
 * of equals). */
static bool choose_busiest(struct render *r, uint64_t length)
{
	uint64_t span = r->last_ts - r->first_ts;
	if (length >= span) {
		r->w0 = r->first_ts;
		r->w1 = r->last_ts;
		return true;
	}
	r->buckets = xcalloc(BUSIEST_BUCKETS, sizeof(*r->buckets));
	bool ok = read_trace(r, count_record, false);
	double bucket_ticks = ((double)span + 1) / BUSIEST_BUCKETS;
	size_t k = (size_t)ceil((double)length / bucket_ticks);
	if (k < 1)
		k = 1;
	if (k > BUSIEST_BUCKETS)
		k = BUSIEST_BUCKETS;
	uint64_t sum = 0, best = 0;
	size_t best_at = 0;
	for (size_t i = 0; i < BUSIEST_BUCKETS; i++) {
		sum += r->buckets[i];
		if (i >= k)
			sum -= r->buckets[i - k];
		if (i + 1 >= k && sum > best) {
			best = sum;
			best_at = i + 1 - k;
		}
	}
	free(r->buckets);
	r->buckets = NULL;
	r->w0 = r->first_ts + (uint64_t)((double)best_at * bucket_ticks);
	if (r->w0 > r->last_ts - length)
		r->w0 = r->last_ts - length;
	r->w1 = r->w0 + length;
	return ok;
}

/* Sets the window from the options; returns 0, or 2 with a message when
 * it selects nothing. */
static int choose_window(struct render *r)
{
	const struct svg_render_options *o = r->o;
	double trace_ms = ticks_to_ns(r, (double)(r->last_ts - r->first_ts)) / 1e6;
	if (o->busiest_ms > 0) {
		if (!choose_busiest(r, ms_to_ticks(r, o->busiest_ms)))
			return 1;
	} else {
		r->w0 = o->has_from ? add_clamped(r->first_ts, ms_to_ticks(r, o->from_ms)) : r->first_ts;
		r->w1 = o->has_to ? add_clamped(r->first_ts, ms_to_ticks(r, o->to_ms)) : r->last_ts;
		if (r->w0 > r->last_ts) {
			fprintf(r->err, "uring-trace render: --from %g ms is after the trace's last event (%.3f ms after its first): choose a smaller --from\n",
				o->from_ms, trace_ms);
			return 2;
		}
		if (r->w1 < r->w0 || (r->w1 == r->w0 && o->has_to)) {
			fprintf(r->err, "uring-trace render: the window --from %g ms --to %g ms is empty: --to must be after --from\n",
				o->has_from ? o->from_ms : 0.0, o->to_ms);
			return 2;
		}
	}
	if (r->w1 == r->w0)
		r->w1 = r->w0 + 1; /* a single instant still gets a time axis */
	double width = o->width ? o->width : SVG_DEFAULT_WIDTH;
	r->plot_x = MARGIN + LABEL_COLUMN;
	r->plot_w = width - r->plot_x - MARGIN;
	r->px_per_tick = r->plot_w / (double)(r->w1 - r->w0);
	r->columns = (size_t)r->plot_w;
	return 0;
}

/* x of ts, held within a little outside the plot so that arrows leaving
 * the window point the right way. */
static double x_of(const struct render *r, uint64_t ts)
{
	double ticks = ts >= r->w0 ? (double)(ts - r->w0) : -(double)(r->w0 - ts);
	double x = r->plot_x + ticks * r->px_per_tick;
	double lo = r->plot_x - 20, hi = r->plot_x + r->plot_w + 20;
	return x < lo ? lo : x > hi ? hi : x;
}

static double x_in_plot(const struct render *r, uint64_t ts)
{
	double x = x_of(r, ts);
	return x < r->plot_x ? r->plot_x : x > r->plot_x + r->plot_w ? r->plot_x + r->plot_w : x;
}

/* ---- pass 2: tracks, slices, instants ---- */

static bool contains_text(const char *haystack, const char *needle)
{
	return haystack && strstr(haystack, needle);
}

/* --only: a thread is kept when its or its process's name contains one
 * of the words, or its tid or pid is one of them. */
static bool passes_filter(const struct render *r, uint64_t pid, uint64_t tid)
{
	if (!r->o->nonly)
		return true;
	const char *thread = name_of(r, &r->thread_names, tid);
	const char *process = name_of(r, &r->process_names, pid);
	char tid_text[24], pid_text[24];
	snprintf(tid_text, sizeof(tid_text), "%" PRIu64, tid);
	snprintf(pid_text, sizeof(pid_text), "%" PRIu64, pid);
	for (size_t i = 0; i < r->o->nonly; i++) {
		const char *word = r->o->only[i];
		if (contains_text(thread, word) || contains_text(process, word) ||
		    strcmp(word, tid_text) == 0 || strcmp(word, pid_text) == 0)
			return true;
	}
	return false;
}

static uint32_t track_for(struct render *r, uint64_t pid, uint64_t tid)
{
	bool created;
	uint64_t *at = hmap_insert(&r->track_index, pid, tid, &created);
	if (!created)
		return (uint32_t)*at;
	grow_array((void **)&r->tracks, &r->tracks_capacity, r->ntracks + 1, sizeof(*r->tracks));
	*at = r->ntracks;
	struct track *t = &r->tracks[r->ntracks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->shown = passes_filter(r, pid, tid);
	t->first_series = t->last_series = NONE;
	t->y = -1;
	return (uint32_t)r->ntracks++;
}

/* Whether [begin, end] at level of t is drawn; counts what is too deep. */
static bool in_view(struct render *r, const struct track *t, unsigned level, uint64_t begin,
		    uint64_t end)
{
	if (!t->shown || end < r->w0 || begin > r->w1)
		return false;
	if (level >= MAX_LEVELS) {
		r->slices_too_deep++;
		return false;
	}
	return true;
}

/* Joins one more slice or instant called name to a merged box or mark. */
static void merge_into(uint32_t *name, uint32_t *count, uint32_t joining)
{
	if (*name != joining)
		*name = NONE;
	(*count)++;
}

static void use_level(struct track *t, unsigned level)
{
	if (level + 1 > t->nlevels)
		t->nlevels = level + 1;
}

/* Adds slice [begin, end] at level; a slice narrower than a pixel joins
 * the previous narrow box of its level when it is that close. */
static void add_box(struct render *r, struct track *t, unsigned level, uint64_t begin,
		    uint64_t end, uint32_t name)
{
	if (!in_view(r, t, level, begin, end))
		return;
	r->slices_drawn++;
	double x0 = x_in_plot(r, begin), x1 = x_in_plot(r, end);
	struct box_row *row = &t->levels[level];
	bool narrow = x1 - x0 < MERGE_PX;
	struct box *last = row->count ? &row->items[row->count - 1] : NULL;
	if (narrow && last && last->narrow && x0 - last->x1 < MERGE_PX) {
		if (x1 > last->x1)
			last->x1 = x1;
		merge_into(&last->name, &last->count, name);
		return;
	}
	grow_array((void **)&row->items, &row->capacity, row->count + 1, sizeof(*row->items));
	row->items[row->count++] = (struct box){ x0, x1, name, 1, end - begin, narrow, false };
	use_level(t, level);
}

/* An instant is a zero-length slice on its thread's stack (flow points
 * bind to it), drawn as a marker at its level. */
static void add_mark(struct render *r, struct track *t, unsigned level, uint64_t ts, uint32_t name)
{
	if (!in_view(r, t, level, ts, ts))
		return;
	r->instants_drawn++;
	double x = x_in_plot(r, ts);
	struct mark_row *row = &t->marks[level];
	struct mark *last = row->count ? &row->items[row->count - 1] : NULL;
	if (last && x - last->x < MERGE_PX) {
		merge_into(&last->name, &last->count, name);
		return;
	}
	grow_array((void **)&row->items, &row->capacity, row->count + 1, sizeof(*row->items));
	row->items[row->count++] = (struct mark){ x, name, 1 };
	use_level(t, level);
}

/* ---- counters ---- */

static bool arg_number(const struct fxt_arg_view *a, double *out)
{
	switch (a->type) {
	case FXT_ARG_INT32:
	case FXT_ARG_INT64:
		*out = (double)a->i;
		return true;
	case FXT_ARG_UINT32:
	case FXT_ARG_UINT64:
		*out = (double)a->u;
		return true;
	case FXT_ARG_DOUBLE:
		*out = a->d;
		return isfinite(a->d);
	default:
		return false;
	}
}

static struct series *series_for(struct render *r, uint32_t track, const char *counter,
				 const char *arg)
{
	/* the engine names a counter's single value "value" */
	char label[512];
	if (strcmp(arg, "value") == 0)
		snprintf(label, sizeof(label), "%s", counter);
	else
		snprintf(label, sizeof(label), "%s %s", counter, arg);
	uint32_t id = intern(&r->strings, label);
	uint64_t *at = hmap_find(&r->series_index, track, id);
	if (at)
		return &r->series[*at];
	if (r->nseries >= MAX_SERIES) {
		r->series_dropped++;
		return NULL;
	}
	bool created;
	*hmap_insert(&r->series_index, track, id, &created) = r->nseries;
	grow_array((void **)&r->series, &r->series_capacity, r->nseries + 1, sizeof(*r->series));
	struct series *s = &r->series[r->nseries++];
	memset(s, 0, sizeof(*s));
	s->track = track;
	s->label = id;
	s->before = NAN;
	s->next = NONE;
	s->y = -1;
	s->lo = xcalloc(r->columns, sizeof(double));
	s->hi = xcalloc(r->columns, sizeof(double));
	s->last = xcalloc(r->columns, sizeof(double));
	for (size_t c = 0; c < r->columns; c++)
		s->lo[c] = s->hi[c] = s->last[c] = NAN;
	struct track *t = &r->tracks[track];
	uint32_t si = (uint32_t)(r->nseries - 1);
	if (t->last_series == NONE)
		t->first_series = si;
	else
		r->series[t->last_series].next = si;
	t->last_series = si;
	return s;
}

static void note_range(struct series *s, double v)
{
	if (!s->any || v < s->min)
		s->min = v;
	if (!s->any || v > s->max)
		s->max = v;
	s->any = true;
}

static void add_counter(struct render *r, uint32_t track, const struct fxt_record_view *v)
{
	if (!r->tracks[track].shown || v->ts > r->w1)
		return;
	for (unsigned k = 0; k < v->nargs; k++) {
		double value;
		if (!arg_number(&v->args[k], &value))
			continue;
		struct series *s = series_for(r, track, v->name, v->args[k].name);
		if (!s)
			continue;
		if (v->ts < r->w0) {
			s->before = value; /* samples come in time order per track */
			continue;
		}
		size_t c = (size_t)(x_in_plot(r, v->ts) - r->plot_x);
		if (c >= r->columns)
			c = r->columns - 1;
		if (isnan(s->lo[c]) || value < s->lo[c])
			s->lo[c] = value;
		if (isnan(s->hi[c]) || value > s->hi[c])
			s->hi[c] = value;
		s->last[c] = value;
		note_range(s, value);
	}
}

/* ---- flows ---- */

static void add_arrow(struct render *r, const struct flow_point *from, const struct flow_point *to)
{
	uint64_t lo = from->ts < to->ts ? from->ts : to->ts, hi = from->ts < to->ts ? to->ts : from->ts;
	if (hi < r->w0 || lo > r->w1 || !r->tracks[from->track].shown || !r->tracks[to->track].shown)
		return;
	struct arrow a = { from->track, to->track, from->level, to->level, x_of(r, from->ts),
			   x_of(r, to->ts) };
	/* arrows that land on the same pixels are drawn once; x is within
	 * [-20, width + 20], so +32 keeps the packed fields positive */
	uint64_t key = (uint64_t)(a.x0 + 32) << 40 | (uint64_t)(a.x1 + 32) << 16 |
		       (uint64_t)(a.from_level & 0xff) << 8 | (a.to_level & 0xff);
	bool created;
	hmap_insert(&r->arrow_index, (uint64_t)a.from << 32 | a.to, key, &created);
	if (!created)
		return;
	if (r->narrows >= MAX_ARROWS) {
		r->arrows_dropped++;
		return;
	}
	grow_array((void **)&r->arrows, &r->arrows_capacity, r->narrows + 1, sizeof(*r->arrows));
	r->arrows[r->narrows++] = a;
	r->tracks[a.from].arrow_end = r->tracks[a.to].arrow_end = true;
}

static void forget_flow(struct render *r, uint64_t id)
{
	uint64_t *at = hmap_find(&r->open_flows, id, 0);
	if (!at)
		return;
	grow_array((void **)&r->free_points, &r->free_points_capacity, r->nfree_points + 1,
		      sizeof(*r->free_points));
	r->free_points[r->nfree_points++] = (uint32_t)*at;
	hmap_remove(&r->open_flows, id, 0);
}

/* A flow point binds to the innermost slice open on its thread, as in
 * Perfetto; an arrow joins it to the flow's previous bound point.  A point
 * with no slice open is not drawn; the flow continues from its last bound
 * point. */
static void add_flow_point(struct render *r, uint32_t track, const struct fxt_record_view *v)
{
	const struct fxt_slice_stack *st = &r->tracks[track].stack;
	uint64_t id = v->value;
	if (v->subtype == FXT_EV_FLOW_BEGIN)
		forget_flow(r, id);
	if (!st->depth) {
		r->points_unbound++;
		if (v->subtype == FXT_EV_FLOW_END)
			forget_flow(r, id);
		return;
	}
	struct flow_point here = { track, (unsigned)st->depth - 1, v->ts };
	uint64_t *at = hmap_find(&r->open_flows, id, 0);
	if (at)
		add_arrow(r, &r->points[*at], &here);
	if (v->subtype == FXT_EV_FLOW_END) {
		forget_flow(r, id);
		return;
	}
	if (!at) {
		uint32_t slot;
		if (r->nfree_points) {
			slot = r->free_points[--r->nfree_points];
		} else {
			grow_array((void **)&r->points, &r->points_capacity, r->npoints + 1,
				      sizeof(*r->points));
			slot = (uint32_t)r->npoints++;
		}
		bool created;
		at = hmap_insert(&r->open_flows, id, 0, &created);
		*at = slot;
	}
	r->points[*at] = here;
}

/* ---- thread states ---- */

/* t's state ends at ts: the part in the window goes into its strip.  A
 * stretch narrower than a pixel joins the last stretch while that is
 * narrower than a pixel too and this close. */
static void end_state(struct render *r, struct track *t, uint64_t ts)
{
	if (t->state == STRIP_UNKNOWN || !t->shown || ts <= t->state_since || ts < r->w0 ||
	    t->state_since > r->w1)
		return;
	r->states_drawn++;
	double x0 = x_in_plot(r, t->state_since), x1 = x_in_plot(r, ts);
	struct state_row *row = &t->states;
	struct state_box *last = row->count ? &row->items[row->count - 1] : NULL;
	if (!(x1 - x0 < MERGE_PX && last && last->x1 - last->x0 < MERGE_PX && x0 - last->x1 < MERGE_PX)) {
		grow_array((void **)&row->items, &row->capacity, row->count + 1, sizeof(*row->items));
		last = &row->items[row->count++];
		*last = (struct state_box){ .x0 = x0, .x1 = x1 };
	}
	if (x1 > last->x1)
		last->x1 = x1;
	last->ticks[t->state] += ts - t->state_since;
	last->count++;
}

/* Thread tid is in state from ts on. */
static void set_state(struct render *r, uint64_t tid, uint64_t ts, enum strip_state state)
{
	const uint64_t *pid = hmap_find(&r->thread_pids, tid, 0);
	uint32_t ti = track_for(r, pid ? *pid : 0, tid); /* may move r->tracks */
	struct track *t = &r->tracks[ti];
	end_state(r, t, ts);
	t->state = state;
	t->state_since = ts;
}

/* Whether the record's weight argument name marks the idle thread. */
static bool is_idle(const struct fxt_record_view *v, const char *name)
{
	const struct fxt_arg_view *a = fxt_arg(v, name);
	return a && a->type == FXT_ARG_INT32 && a->i == FXT_IDLE_WEIGHT;
}

/* The outgoing thread's state; a blocked one is D when the writer's
 * linux_state argument says so. */
static enum strip_state outgoing_state(const struct fxt_record_view *v)
{
	switch (v->outgoing_state) {
	case FXT_THREAD_SUSPENDED:
		return STRIP_STOPPED;
	case FXT_THREAD_BLOCKED: {
		const struct fxt_arg_view *linux_state = fxt_arg(v, "linux_state");
		bool d = linux_state && linux_state->type == FXT_ARG_UINT32 &&
			 ut_sched_state_of((uint32_t)linux_state->u) == UT_SCHED_UNINTERRUPTIBLE;
		return d ? STRIP_UNINTERRUPTIBLE : STRIP_SLEEPING;
	}
	case FXT_THREAD_DYING:
	case FXT_THREAD_DEAD:
		return STRIP_DEAD;
	default: /* new, running: runnable */
		return STRIP_RUNNABLE;
	}
}

static void draw_scheduling(struct render *r, const struct fxt_record_view *v)
{
	if (v->subtype == FXT_SCHED_CONTEXT_SWITCH) {
		if (!is_idle(v, "outgoing_weight"))
			set_state(r, v->tid, v->ts, outgoing_state(v));
		if (!is_idle(v, "incoming_weight"))
			set_state(r, v->incoming_tid, v->ts, STRIP_RUNNING);
	} else if (v->subtype == FXT_SCHED_THREAD_WAKEUP && !is_idle(v, "weight")) {
		set_state(r, v->tid, v->ts, STRIP_RUNNABLE);
	}
}

/* Pass 2: the drawing. */
static void draw_record(struct render *r, const struct fxt_record_view *v)
{
	if (v->type == FXT_REC_SCHEDULING)
		draw_scheduling(r, v);
	if (v->type != FXT_REC_EVENT)
		return;
	uint32_t ti = track_for(r, v->pid, v->tid);
	struct track *t = &r->tracks[ti];
	const struct fxt_stacked_slice *done;
	size_t level;
	switch ((enum fxt_event_type)v->subtype) {
	case FXT_EV_DURATION_BEGIN:
	case FXT_EV_DURATION_END:
	case FXT_EV_DURATION_COMPLETE:
		/* an end's name does not matter: it closes the innermost slice */
		done = fxt_slice_stack_apply(&t->stack, v,
					     v->subtype == FXT_EV_DURATION_END ? 0 : intern(&r->strings, v->name),
					     &level);
		if (done)
			add_box(r, t, (unsigned)level, done->start,
				done->end < done->start ? done->start : done->end, done->tag);
		break;
	case FXT_EV_INSTANT:
		done = fxt_slice_stack_apply(&t->stack, v, intern(&r->strings, v->name), &level);
		add_mark(r, t, (unsigned)level, done->start, done->tag);
		break;
	case FXT_EV_COUNTER:
		add_counter(r, ti, v);
		break;
	case FXT_EV_FLOW_BEGIN:
	case FXT_EV_FLOW_STEP:
	case FXT_EV_FLOW_END:
		add_flow_point(r, ti, v);
		break;
	case FXT_EV_ASYNC_BEGIN:
	case FXT_EV_ASYNC_INSTANT:
	case FXT_EV_ASYNC_END:
		r->async_events++;
		break;
	}
}

/* Slices still open at the end, and threads' last states, are drawn up
 * to the last event. */
static void close_open_slices(struct render *r)
{
	for (size_t i = 0; i < r->ntracks; i++) {
		struct track *t = &r->tracks[i];
		end_state(r, t, r->last_ts);
		for (size_t level = 0; level < t->stack.depth; level++) {
			const struct fxt_stacked_slice *sl = &t->stack.items[level];
			if (sl->end == FXT_SLICE_OPEN)
				add_box(r, t, (unsigned)level, sl->start,
					r->last_ts < sl->start ? sl->start : r->last_ts, sl->tag);
		}
	}
}

/* ---- labels ---- */

static int compare_widths_descending(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

static double box_width(const struct box *b)
{
	return b->x1 - b->x0;
}

static bool label_fits(const struct box *b)
{
	return b->name != NONE && box_width(b) - 4 >= MIN_LABEL_CHARS * CHAR_PX;
}

/* Marks the boxes that get a label: all that fit, or the widest
 * MAX_LABELS of them (in drawing order among equals). */
static void choose_labels(struct render *r)
{
	size_t candidates = 0;
	for (size_t i = 0; i < r->ntracks; i++)
		for (unsigned l = 0; l < MAX_LEVELS; l++)
			for (size_t k = 0; k < r->tracks[i].levels[l].count; k++)
				candidates += r->tracks[i].y >= 0 && label_fits(&r->tracks[i].levels[l].items[k]);
	double threshold = 0;
	if (candidates > MAX_LABELS) {
		double *widths = xcalloc(candidates, sizeof(*widths));
		size_t n = 0;
		for (size_t i = 0; i < r->ntracks; i++)
			for (unsigned l = 0; l < MAX_LEVELS; l++)
				for (size_t k = 0; k < r->tracks[i].levels[l].count; k++) {
					const struct box *b = &r->tracks[i].levels[l].items[k];
					if (r->tracks[i].y >= 0 && label_fits(b))
						widths[n++] = box_width(b);
				}
		qsort(widths, n, sizeof(*widths), compare_widths_descending);
		threshold = widths[MAX_LABELS - 1];
		free(widths);
	}
	size_t labelled = 0;
	for (size_t i = 0; i < r->ntracks; i++)
		for (unsigned l = 0; l < MAX_LEVELS; l++)
			for (size_t k = 0; k < r->tracks[i].levels[l].count; k++) {
				struct box *b = &r->tracks[i].levels[l].items[k];
				if (r->tracks[i].y < 0 || !label_fits(b) || box_width(b) < threshold ||
				    labelled >= MAX_LABELS)
					continue;
				b->labelled = true;
				labelled++;
			}
	r->labels_dropped = candidates - labelled;
}

/* ---- layout ---- */

static bool is_group(uint64_t koid)
{
	return koid >= UT_SYNTHETIC_KOID_BASE;
}

static bool track_visible(const struct track *t)
{
	return t->shown && (t->nlevels || t->first_series != NONE || t->arrow_end || t->states.count);
}

static const struct track *sort_tracks;

/* Processes by pid (groups, with their huge pids, after real processes);
 * in a process its main thread first, then by tid. */
static int compare_tracks(const void *a, const void *b)
{
	const struct track *x = &sort_tracks[*(const uint32_t *)a];
	const struct track *y = &sort_tracks[*(const uint32_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	bool xm = x->tid == x->pid, ym = y->tid == y->pid;
	if (xm != ym)
		return xm ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static bool series_visible(const struct series *s)
{
	return s->any || !isnan(s->before);
}

static unsigned levels_drawn(const struct track *t)
{
	return t->nlevels ? t->nlevels : 1;
}

/* Its slices' levels, then its state strip when it has one. */
static double slice_row_height(const struct track *t)
{
	return levels_drawn(t) * LEVEL_H + (t->states.count ? STRIP_H : 0) + ROW_PAD;
}

/* The legend, with a line for thread states when there are some. */
static double legend_height(const struct render *r)
{
	return LEGEND_H + (r->states_drawn ? LEGEND_LINE_H : 0);
}

/* Tracks in drawing order; sets each drawn track's and series' y and the
 * picture's height.  Returns the order (ntracks entries, NONE-terminated
 * early when fewer are visible). */
static uint32_t *layout(struct render *r)
{
	uint32_t *order = xcalloc(r->ntracks + 1, sizeof(*order));
	size_t n = 0;
	for (size_t i = 0; i < r->ntracks; i++)
		if (track_visible(&r->tracks[i]))
			order[n++] = (uint32_t)i;
	order[n] = NONE;
	sort_tracks = r->tracks;
	qsort(order, n, sizeof(*order), compare_tracks);
	double y = HEADER_H;
	unsigned rows = 0;
	const struct track *previous = NULL;
	for (size_t i = 0; i < n; i++) {
		struct track *t = &r->tracks[order[i]];
		bool slice_row = t->nlevels || t->arrow_end || t->states.count;
		unsigned own_rows = slice_row ? 1 : 0;
		for (uint32_t s = t->first_series; s != NONE; s = r->series[s].next)
			own_rows += series_visible(&r->series[s]);
		if (rows + own_rows > MAX_ROWS) {
			r->rows_dropped += own_rows;
			continue;
		}
		rows += own_rows;
		if (!previous || t->pid != previous->pid)
			y += PROCESS_H;
		previous = t;
		t->y = y;
		if (slice_row)
			y += slice_row_height(t);
		for (uint32_t s = t->first_series; s != NONE; s = r->series[s].next) {
			if (series_visible(&r->series[s])) {
				r->series[s].y = y;
				y += COUNTER_H;
			}
		}
	}
	r->height = y + legend_height(r);
	return order;
}

/* ---- SVG text ---- */

/* Copies the next character of s to out as valid XML text: bytes that are
 * not UTF-8, control characters and non-characters become '?'.  Returns
 * the bytes consumed. */
static size_t next_xml_char(const unsigned char *s, char out[5])
{
	unsigned c = s[0];
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			len = 0;
			break;
		}
		cp = cp << 6 | (s[i] & 0x3f);
	}
	static const uint32_t smallest[] = { 0, 0, 0x80, 0x800, 0x10000 };
	bool valid = len && cp >= smallest[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
		     cp != 0xfffe && cp != 0xffff && cp >= 0x20 && cp != 0x7f;
	if (!valid) {
		out[0] = '?';
		out[1] = 0;
		return 1;
	}
	memcpy(out, s, len);
	out[len] = 0;
	return len;
}

static size_t count_chars(const char *s)
{
	size_t n = 0;
	char c[5];
	for (const unsigned char *p = (const unsigned char *)s; *p; p += next_xml_char(p, c))
		n++;
	return n;
}

/* Writes s escaped for XML, at most max_chars characters: a longer s is
 * cut and ends with an ellipsis. */
static void put_text(FILE *out, const char *s, size_t max_chars)
{
	size_t total = count_chars(s);
	size_t keep = total <= max_chars ? total : max_chars ? max_chars - 1 : 0;
	char c[5];
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < keep; i++) {
		p += next_xml_char(p, c);
		if (c[0] == '&')
			fputs("&amp;", out);
		else if (c[0] == '<')
			fputs("&lt;", out);
		else if (c[0] == '>')
			fputs("&gt;", out);
		else
			fputs(c, out);
	}
	if (total > keep && max_chars)
		fputs("\u2026", out);
}

static size_t chars_in(double px)
{
	return px <= 0 ? 0 : (size_t)(px / CHAR_PX);
}

/* ---- SVG numbers and colours ---- */

struct time_unit {
	double ns;
	const char *name;
};

/* The largest unit that ns holds at least once (ns for less). */
static const struct time_unit *unit_for(double ns)
{
	static const struct time_unit units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "\u00b5s" }, { 1, "ns" },
	};
	size_t u = 0;
	while (u < 3 && ns < units[u].ns)
		u++;
	return &units[u];
}

static void format_duration(char *buf, size_t len, double ns)
{
	const struct time_unit *unit = unit_for(ns);
	double v = ns / unit->ns;
	int decimals = unit->ns == 1 ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0;
	snprintf(buf, len, "%.*f %s", decimals, v, unit->name);
}

static void format_value(char *buf, size_t len, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* A colour per name (stable across runs): its hash picks the hue. */
static void name_color(const char *name, double lightness, char out[8])
{
	uint64_t h = hmap_hash_bytes(name, strlen(name));
	double hue = (double)(h % 360), s = 0.55, l = lightness;
	double c = (1 - fabs(2 * l - 1)) * s, hp = hue / 60, x = c * (1 - fabs(fmod(hp, 2) - 1));
	double rgb[3] = { 0, 0, 0 };
	int sector = (int)hp;
	static const int places[6][3] = { { 0, 1, 2 }, { 1, 0, 2 }, { 2, 0, 1 },
					  { 2, 1, 0 }, { 1, 2, 0 }, { 0, 2, 1 } };
	/* sector k has c at places[k][0], x at places[k][1], 0 at places[k][2] */
	rgb[places[sector][0]] = c;
	rgb[places[sector][1]] = x;
	double m = l - c / 2;
	snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround((rgb[0] + m) * 255),
		 (unsigned)lround((rgb[1] + m) * 255), (unsigned)lround((rgb[2] + m) * 255));
}

/* ---- SVG parts ---- */

static const char *string_at(const struct render *r, uint32_t id)
{
	return id == NONE ? "" : r->strings.items[id];
}

static void write_head(const struct render *r, FILE *out, double width)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"%.0f\">\n",
		width, r->height, width, r->height, FONT_PX);
	fputs("<style>\n"
	      ".title{font-size:13px;font-weight:bold}\n"
	      ".process{font-weight:bold;fill:#202124}\n"
	      ".band{fill:#e8eaed}\n"
	      ".stripe{fill:#f8f9fa}\n"
	      ".track,.series{fill:#3c4043}\n"
	      ".grid{stroke:#dadce0;stroke-width:1}\n"
	      ".tick{fill:#5f6368}\n"
	      ".slice{stroke:#ffffff;stroke-width:0.5}\n"
	      ".thin{stroke:none}\n"
	      ".merged{fill:#9aa0a6}\n"
	      ".label{fill:#202124}\n"
	      ".instant{stroke:#ffffff;stroke-width:0.5}\n"
	      ".counter{fill-opacity:0.25;stroke-width:1}\n"
	      ".flow{fill:none;stroke:#1a237e;stroke-width:1;stroke-opacity:0.65}\n"
	      ".note{fill:#5f6368}\n"
	      ".state{stroke:none}\n"
	      "</style>\n",
	      out);
	fprintf(out,
		"<defs><marker id=\"arrowhead\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">"
		"<path d=\"M0,0 L8,4 L0,8 z\" fill=\"#1a237e\"/></marker>"
		"<clipPath id=\"plot\"><rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%.0f\"/></clipPath></defs>\n",
		r->plot_x, r->plot_w, r->height);
	fprintf(out, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, r->height);
}

static void write_title(const struct render *r, FILE *out, size_t visible_tracks)
{
	char window_from[32], window_to[32], total[32];
	format_duration(window_from, sizeof(window_from), ticks_to_ns(r, (double)(r->w0 - r->first_ts)));
	format_duration(window_to, sizeof(window_to), ticks_to_ns(r, (double)(r->w1 - r->first_ts)));
	format_duration(total, sizeof(total), ticks_to_ns(r, (double)(r->last_ts - r->first_ts)));
	fprintf(out, "<text class=\"title\" x=\"%.0f\" y=\"18\">", MARGIN);
	put_text(out, r->o->input, 160);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"note\" x=\"%.0f\" y=\"33\">window %s to %s of %s after the first event; "
		"tracks %zu, slices %" PRIu64 ", arrows %zu, instants %" PRIu64 "</text>\n",
		MARGIN, window_from, window_to, total, visible_tracks, r->slices_drawn, r->narrows,
		r->instants_drawn);
}

/* Grid lines and time labels: about one tick per 100 pixels at a 1-2-5
 * step, labelled in the unit that suits the window's end. */
static void write_axis(const struct render *r, FILE *out)
{
	double from_ns = ticks_to_ns(r, (double)(r->w0 - r->first_ts));
	double to_ns = ticks_to_ns(r, (double)(r->w1 - r->first_ts));
	double raw = (to_ns - from_ns) * 100 / r->plot_w;
	double step = pow(10, floor(log10(raw)));
	step *= raw <= step ? 1 : raw <= 2 * step ? 2 : raw <= 5 * step ? 5 : 10;
	const struct time_unit *unit = unit_for(to_ns);
	double in_unit = step / unit->ns;
	int decimals = in_unit >= 1 ? 0 : (int)ceil(-log10(in_unit) - 1e-9);
	if (decimals > 9)
		decimals = 9;
	double grid_bottom = r->height - legend_height(r);
	double first = ceil(from_ns / step);
	for (unsigned k = 0; k < 1000 && (first + k) * step <= to_ns + step * 1e-9; k++) {
		double t = (first + k) * step;
		double x = r->plot_x + (t - from_ns) / (to_ns - from_ns) * r->plot_w;
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x,
			HEADER_H - 6, x, grid_bottom);
		char label[48];
		snprintf(label, sizeof(label), "%.*f %s", decimals, t / unit->ns, unit->name);
		/* the last label ends at the plot's edge instead of crossing it */
		bool at_edge = x + count_chars(label) * CHAR_PX / 2 > r->plot_x + r->plot_w + MARGIN;
		fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
			x, HEADER_H - 9, at_edge ? "end" : "middle", label);
	}
}

static void write_process_header(const struct render *r, FILE *out, const struct track *t,
				 double width)
{
	double y = t->y - PROCESS_H;
	fprintf(out, "<rect class=\"band\" x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\"/>\n", y,
		width, PROCESS_H - 1);
	const char *name = name_of(r, &r->process_names, t->pid);
	char text[600];
	if (is_group(t->pid))
		snprintf(text, sizeof(text), "%s", name ? name : "group");
	else if (name)
		snprintf(text, sizeof(text), "%s  pid %" PRIu64, name, t->pid);
	else
		snprintf(text, sizeof(text), "process %" PRIu64, t->pid);
	fprintf(out, "<text class=\"process\" x=\"%.0f\" y=\"%.1f\">", MARGIN, y + 13);
	put_text(out, text, chars_in(width - 2 * MARGIN));
	fputs("</text>\n", out);
}

static void write_track_label(const struct render *r, FILE *out, const struct track *t)
{
	const char *name = name_of(r, &r->thread_names, t->tid);
	char text[600];
	if (is_group(t->tid))
		snprintf(text, sizeof(text), "%s", name ? name : "track");
	else
		snprintf(text, sizeof(text), "%s %" PRIu64, name ? name : "thread", t->tid);
	fprintf(out, "<text class=\"track\" x=\"%.0f\" y=\"%.1f\">", MARGIN + 8, t->y + 11);
	put_text(out, text, chars_in(LABEL_COLUMN - 16));
	fputs("</text>\n", out);
}

static void write_box(const struct render *r, FILE *out, const struct box *b, double y)
{
	/* narrow slices are drawn 1.5 px wide, darker and without a border, so
	 * that zero-length ones (flow points) show */
	bool thin = b->x1 - b->x0 < 2;
	double w = b->x1 - b->x0 < 1.5 ? 1.5 : b->x1 - b->x0;
	char color[8], duration[32];
	const char *name = string_at(r, b->name);
	if (b->count > 1 && b->name == NONE) {
		fprintf(out, "<rect class=\"merged\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%" PRIu32 " slices</title></rect>\n",
			b->x0, y, w, LEVEL_H - 1, b->count);
		return;
	}
	name_color(name, thin ? 0.45 : 0.72, color);
	fprintf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
		thin ? "slice thin" : "slice", b->x0, y, w, LEVEL_H - 1, color);
	put_text(out, name, 200);
	if (b->count > 1) {
		fprintf(out, " \u00d7 %" PRIu32, b->count);
	} else {
		format_duration(duration, sizeof(duration), ticks_to_ns(r, (double)b->ticks));
		fprintf(out, " %s", duration);
	}
	fputs("</title></rect>\n", out);
	if (b->labelled) {
		fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\">", b->x0 + 2, y + 10.5);
		put_text(out, name, chars_in(w - 4));
		fputs("</text>\n", out);
	}
}

static void write_mark(const struct render *r, FILE *out, const struct mark *m, double y)
{
	char color[8] = "#5f6368";
	if (m->name != NONE)
		name_color(string_at(r, m->name), 0.45, color);
	fprintf(out, "<path class=\"instant\" fill=\"%s\" d=\"M%.1f,%.1f l-4,-8 h8 z\"><title>", color,
		m->x, y + 10);
	if (m->name == NONE)
		fprintf(out, "%" PRIu32 " instants", m->count);
	else
		put_text(out, string_at(r, m->name), 200);
	fputs("</title></path>\n", out);
}

static void write_state(const struct render *r, FILE *out, const struct state_box *b, double y)
{
	unsigned longest = STRIP_RUNNING;
	for (unsigned s = STRIP_RUNNING; s < STRIP_STATES; s++)
		if (b->ticks[s] > b->ticks[longest])
			longest = s;
	double w = b->x1 - b->x0 < 1 ? 1 : b->x1 - b->x0;
	fprintf(out, "<rect class=\"state\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
		b->x0, y, w, STRIP_H - 1, strip_states[longest].color);
	if (b->count > 1) {
		fprintf(out, "%" PRIu32 " states, mostly %s", b->count, strip_states[longest].name);
	} else {
		char duration[32];
		format_duration(duration, sizeof(duration), ticks_to_ns(r, (double)b->ticks[longest]));
		fprintf(out, "%s %s", strip_states[longest].name, duration);
	}
	fputs("</title></rect>\n", out);
}

static void write_track(const struct render *r, FILE *out, const struct track *t, bool stripe,
			double width)
{
	if (!t->nlevels && !t->arrow_end && !t->states.count)
		return;
	double h = slice_row_height(t);
	if (stripe)
		fprintf(out, "<rect class=\"stripe\" x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\"/>\n",
			t->y, width, h);
	write_track_label(r, out, t);
	for (unsigned l = 0; l < t->nlevels; l++)
		for (size_t k = 0; k < t->levels[l].count; k++)
			write_box(r, out, &t->levels[l].items[k], t->y + 1 + l * LEVEL_H);
	for (unsigned l = 0; l < t->nlevels; l++)
		for (size_t k = 0; k < t->marks[l].count; k++)
			write_mark(r, out, &t->marks[l].items[k], t->y + 1 + l * LEVEL_H);
	for (size_t k = 0; k < t->states.count; k++)
		write_state(r, out, &t->states.items[k], t->y + 1 + levels_drawn(t) * LEVEL_H);
}

/* A counter as a filled step plot: each pixel column rises to its
 * highest sample, falls to its lowest and settles on its last.  The
 * counters of one track take distinct colours by their position. */
static void write_series(const struct render *r, FILE *out, const struct series *s,
			 unsigned position)
{
	static const char *const palette[] = { "#1a73e8", "#188038", "#e37400",
						"#9334e6", "#129eaf", "#d93025" };
	const char *color = palette[position % (sizeof(palette) / sizeof(palette[0]))];
	double lo = s->any && s->min < 0 ? s->min : 0, hi = s->any ? s->max : 0;
	if (!isnan(s->before)) {
		lo = s->before < lo ? s->before : lo;
		hi = s->before > hi ? s->before : hi;
	}
	if (hi <= lo)
		hi = lo + 1;
	double base = s->y + COUNTER_H - 3, scale = (COUNTER_H - 8) / (hi - lo);
	const char *label = string_at(r, s->label);
	char max_text[40];
	format_value(max_text, sizeof(max_text), hi);
	char text[600];
	snprintf(text, sizeof(text), "%s (max %s)", label, max_text);
	fprintf(out, "<text class=\"series\" x=\"%.0f\" y=\"%.1f\">", MARGIN + 8, s->y + 18);
	put_text(out, text, chars_in(LABEL_COLUMN - 16));
	fprintf(out, "</text>\n<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		r->plot_x, base, r->plot_x + r->plot_w, base);
	fprintf(out, "<path class=\"counter\" fill=\"%s\" stroke=\"%s\" d=\"", color, color);
	bool started = false;
	if (!isnan(s->before)) {
		fprintf(out, "M%.1f,%.1fV%.1f", r->plot_x, base, base - (s->before - lo) * scale);
		started = true;
	}
	for (size_t c = 0; c < r->columns; c++) {
		if (isnan(s->last[c]))
			continue;
		double x = r->plot_x + (double)c;
		if (started)
			fprintf(out, "H%.1f", x);
		else
			fprintf(out, "M%.1f,%.1f", x, base);
		started = true;
		fprintf(out, "V%.1fV%.1fV%.1f", base - (s->hi[c] - lo) * scale,
			base - (s->lo[c] - lo) * scale, base - (s->last[c] - lo) * scale);
	}
	fprintf(out, "H%.1fV%.1fZ\"><title>", r->plot_x + r->plot_w, base);
	put_text(out, text, 200);
	fputs("</title></path>\n", out);
}

static double level_middle(const struct track *t, unsigned level)
{
	unsigned shown = level < t->nlevels ? level : t->nlevels ? t->nlevels - 1 : 0;
	return t->y + 1 + shown * LEVEL_H + LEVEL_H / 2;
}

/* Arrows as curves that leave and enter horizontally; an arrow between
 * two points of one row arcs above it. */
static void write_arrows(const struct render *r, FILE *out)
{
	fputs("<g clip-path=\"url(#plot)\">\n", out);
	for (size_t i = 0; i < r->narrows; i++) {
		const struct arrow *a = &r->arrows[i];
		const struct track *from = &r->tracks[a->from], *to = &r->tracks[a->to];
		if (from->y < 0 || to->y < 0)
			continue;
		double y0 = level_middle(from, a->from_level), y1 = level_middle(to, a->to_level);
		double dx = a->x1 - a->x0;
		double bend = dx >= 0 ? dx / 2 : 12 - dx / 2; /* backwards in time: a loop */
		double lift = 0;
		if (fabs(y1 - y0) < 1) { /* one row: an arc, flatter when short */
			bend = dx >= 0 ? dx / 3 : bend;
			lift = 4 + fabs(dx) / 4;
			if (lift > LEVEL_H)
				lift = LEVEL_H;
		}
		fprintf(out, "<path class=\"flow\" marker-end=\"url(#arrowhead)\" d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
			a->x0, y0, a->x0 + bend, y0 - lift, a->x1 - bend, y1 - lift, a->x1, y1);
	}
	fputs("</g>\n", out);
}

static void append_note(char *buf, size_t size, size_t *used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append_note(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
	if (*used + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *used, size - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n < size - *used ? (size_t)n : size - *used - 1;
}

/* The colours of the state strips, on a line of their own. */
static void write_state_legend(FILE *out, double y)
{
	fprintf(out, "<text class=\"note\" x=\"%.0f\" y=\"%.1f\">thread states:</text>\n", MARGIN, y);
	double x = MARGIN + 100;
	for (unsigned s = STRIP_RUNNING; s < STRIP_STATES; s++) {
		fprintf(out, "<rect class=\"state legend\" x=\"%.0f\" y=\"%.1f\" width=\"14\" height=\"%.0f\" fill=\"%s\"/>"
			"<text class=\"note\" x=\"%.0f\" y=\"%.1f\">%s</text>\n",
			x, y - 7, STRIP_H - 1, strip_states[s].color, x + 18, y, strip_states[s].name);
		x += 18 + (double)count_chars(strip_states[s].name) * CHAR_PX + 16;
	}
}

static void write_legend(const struct render *r, FILE *out)
{
	double y = r->height - legend_height(r) + 16;
	char color[8];
	name_color("slice", 0.72, color);
	/* legend items carry the class "legend" too, so that counting a
	 * class counts only what the trace holds */
	fprintf(out, "<rect class=\"slice legend\" x=\"%.0f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>"
		"<text class=\"note\" x=\"%.0f\" y=\"%.1f\">slice (colour by name)</text>\n",
		MARGIN, y - 9, color, MARGIN + 18, y);
	fprintf(out, "<rect class=\"merged legend\" x=\"%.0f\" y=\"%.1f\" width=\"14\" height=\"10\"/>"
		"<text class=\"note\" x=\"%.0f\" y=\"%.1f\">slices narrower than a pixel, merged</text>\n",
		MARGIN + 180, y - 9, MARGIN + 198, y);
	fprintf(out, "<path class=\"flow legend\" marker-end=\"url(#arrowhead)\" d=\"M%.0f,%.1f h22\"/>"
		"<text class=\"note\" x=\"%.0f\" y=\"%.1f\">flow</text>\n",
		MARGIN + 440, y - 4, MARGIN + 470, y);
	fprintf(out, "<path class=\"instant legend\" fill=\"#5f6368\" d=\"M%.0f,%.1f l-4,-8 h8 z\"/>"
		"<text class=\"note\" x=\"%.0f\" y=\"%.1f\">instant</text>\n",
		MARGIN + 515, y, MARGIN + 525, y);
	fprintf(out, "<text class=\"note\" x=\"%.0f\" y=\"%.1f\">counters: filled steps, their maximum in the label</text>\n",
		MARGIN + 590, y);
	if (r->states_drawn) {
		y += LEGEND_LINE_H;
		write_state_legend(out, y);
	}

	/* what was left out, and why */
	char notes[1024] = "";
	size_t used = 0;
	if (r->errors)
		append_note(notes, sizeof(notes), &used, "trace damaged (%" PRIu64 " errors; first: %s); drawn: what could be read. ", r->errors,
		     r->error_text[0]);
	if (r->rows_dropped)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " rows not drawn (at most %u; --only narrows). ", r->rows_dropped, MAX_ROWS);
	if (r->labels_dropped)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " labels left out (the widest %u drawn). ", r->labels_dropped, MAX_LABELS);
	if (r->arrows_dropped)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " arrows not drawn (at most %u). ", r->arrows_dropped, MAX_ARROWS);
	if (r->slices_too_deep)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " slices deeper than %u levels not drawn. ", r->slices_too_deep, MAX_LEVELS);
	if (r->series_dropped)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " counter samples beyond %u series not drawn. ", r->series_dropped, MAX_SERIES);
	if (r->points_unbound)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " flow points outside any slice. ", r->points_unbound);
	if (r->async_events)
		append_note(notes, sizeof(notes), &used, "%" PRIu64 " async events not drawn. ", r->async_events);
	if (notes[0]) {
		fprintf(out, "<text class=\"note\" x=\"%.0f\" y=\"%.1f\">", MARGIN, y + 16);
		put_text(out, notes, 400);
		fputs("</text>\n", out);
	}
}

static int write_svg(struct render *r)
{
	const struct svg_render_options *o = r->o;
	double width = o->width ? o->width : SVG_DEFAULT_WIDTH;
	uint32_t *order = layout(r);
	choose_labels(r);
	bool to_stdout = strcmp(o->output, "-") == 0;
	FILE *out = to_stdout ? stdout : fopen(o->output, "w");
	if (!out) {
		fprintf(r->err, "uring-trace render: cannot write %s: %s\n", o->output, strerror(errno));
		free(order);
		return 1;
	}
	size_t visible = 0;
	for (size_t i = 0; order[i] != NONE; i++)
		visible += r->tracks[order[i]].y >= 0;
	write_head(r, out, width);
	write_title(r, out, visible);
	write_axis(r, out);
	const struct track *previous = NULL;
	bool stripe = false;
	for (size_t i = 0; order[i] != NONE; i++) {
		const struct track *t = &r->tracks[order[i]];
		if (t->y < 0)
			continue;
		if (!previous || t->pid != previous->pid)
			write_process_header(r, out, t, width);
		previous = t;
		write_track(r, out, t, stripe, width);
		stripe = !stripe;
		unsigned position = 0;
		for (uint32_t s = t->first_series; s != NONE; s = r->series[s].next)
			if (r->series[s].y >= 0)
				write_series(r, out, &r->series[s], position++);
	}
	write_arrows(r, out);
	write_legend(r, out);
	fputs("</svg>\n", out);
	free(order);
	bool failed = ferror(out) != 0;
	if (to_stdout)
		failed |= fflush(out) != 0;
	else
		failed |= fclose(out) != 0;
	if (failed) {
		fprintf(r->err, "uring-trace render: writing %s failed: %s\n", o->output, strerror(errno));
		return 1;
	}
	return 0;
}

static void render_free(struct render *r)
{
	strings_free(&r->strings);
	hmap_free(&r->process_names);
	hmap_free(&r->thread_names);
	hmap_free(&r->thread_pids);
	for (size_t i = 0; i < r->ntracks; i++) {
		struct track *t = &r->tracks[i];
		free(t->stack.items);
		free(t->states.items);
		for (unsigned l = 0; l < MAX_LEVELS; l++) {
			free(t->levels[l].items);
			free(t->marks[l].items);
		}
	}
	free(r->tracks);
	hmap_free(&r->track_index);
	for (size_t i = 0; i < r->nseries; i++) {
		free(r->series[i].lo);
		free(r->series[i].hi);
		free(r->series[i].last);
	}
	free(r->series);
	hmap_free(&r->series_index);
	free(r->arrows);
	hmap_free(&r->arrow_index);
	free(r->points);
	free(r->free_points);
	hmap_free(&r->open_flows);
}

int svg_render(const struct svg_render_options *o, FILE *err)
{
	struct render r;
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.err = err;
	r.ticks_per_second = 1000000000;
	int rc = 1;
	if (!read_trace(&r, scan_record, true))
		goto done;
	if (!r.events) {
		fprintf(err, "uring-trace render: %s holds no events%s%s\n", o->input,
			r.errors ? ": " : "", r.errors ? r.error_text[0] : "");
		goto done;
	}
	rc = choose_window(&r);
	if (rc)
		goto done;
	if (!read_trace(&r, draw_record, false)) {
		rc = 1;
		goto done;
	}
	close_open_slices(&r);
	rc = write_svg(&r);
	if (!rc && r.errors) {
		fprintf(err, "uring-trace render: %s is damaged (%" PRIu64 " errors; first: %s); %s shows what could be read\n",
			o->input, r.errors, r.error_text[0], o->output);
		rc = 1;
	}
done:
	render_free(&r);
	return rc;
}
