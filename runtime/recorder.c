#include "runtime/recorder.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/types.h>

#include "bpf/records.h"
#include "base/alloc.h"
#include "base/hashmap.h"
#include "base/lru.h"
#include "runtime/decode.h"

#define CHUNK_BYTES (1u << 20)
/* Records stay this much longer than the window: a snapshot's trigger
 * reaches the session a little after its time (the reader's poll, the
 * reorder queues), and its window reaches back from that time. */
#define LATE_TRIGGER_NS (500 * 1000000ull)
/* Bounds of what is kept of the records that left the window: names of
 * threads and groups, counters (the oldest go first), open slices and
 * spans (as the engine's own limits). */
#define MAX_NAMES 65536u
#define MAX_COUNTERS 65536u
#define MAX_OPEN (1u << 20)

/* What a record kept past the window costs beyond its bytes: its item in
 * the LRU set, the set's index entry and malloc's header (counted in the
 * recorder's bytes, which its bound holds). */
#define KEPT_OVERHEAD 96

/* Records one after another, each behind its length, 8-byte aligned. */
struct chunk {
	struct chunk *next;
	size_t used, capacity, read;   /* read: where the oldest kept record is */
	unsigned char data[];
};

/* A record kept past the window: what it opened, named or set. */
struct kept {
	struct lru_link link;
	unsigned char *rec;
	uint32_t size;
};

/* Records kept by key, oldest first; past max the oldest goes. */
struct kept_set {
	struct lru_set lru;
	size_t max, bytes;
};

struct ut_recorder {
	const struct ut_program *prog;
	uint64_t window;
	size_t max_bytes;       /* the bound of ut_recorder_bytes */
	uint64_t cut_before;    /* records up to here left for the bound, not the window's time */
	bool cut_noted;
	const struct ut_recorder_cursor *reading;   /* a window being written: its records stay */
	struct chunk *first, *last;
	struct chunk *spare;    /* the last chunk evicted, for the next one (see chunk_drop) */
	size_t chunk_bytes;
	uint64_t oldest_ts, newest_ts;
	uint64_t hold_from;   /* 0: none */
	/* what left the window and still counts; sched: each thread's last
	 * scheduling record that switched it out or woke it (by tid) */
	struct kept_set threads, groups, counters, slices, spans, phases, sched;
	struct hmap depths;   /* a place's open slices */
};

static void kept_init(struct kept_set *s, size_t max)
{
	lru_init(&s->lru, sizeof(struct kept));
	s->max = max;
	s->bytes = 0;
}

static void kept_remove(struct kept_set *s, struct kept *k)
{
	s->bytes -= k->size + KEPT_OVERHEAD;
	free(k->rec);
	lru_remove(&s->lru, k);
}

static bool kept_take(struct kept_set *s, uint64_t a, uint64_t b)
{
	struct kept *k = lru_find(&s->lru, a, b);
	if (k)
		kept_remove(s, k);
	return k != NULL;
}

/* Keeps a copy of rec under (a, b), the newest, replacing one kept there. */
static void kept_put(struct kept_set *s, uint64_t a, uint64_t b, const void *rec, size_t size)
{
	kept_take(s, a, b);
	if (s->lru.count >= s->max)
		kept_remove(s, lru_oldest(&s->lru));
	struct kept *k = lru_add(&s->lru, a, b);
	k->rec = xmalloc(size);
	k->size = (uint32_t)size;
	memcpy(k->rec, rec, size);
	s->bytes += size + KEPT_OVERHEAD;
}

static const struct kept *kept_find(const struct kept_set *s, uint64_t a, uint64_t b)
{
	return lru_find(&s->lru, a, b);
}

static void kept_clear(struct kept_set *s)
{
	struct kept *k;
	while ((k = lru_oldest(&s->lru)))
		kept_remove(s, k);
}

static void kept_free(struct kept_set *s)
{
	kept_clear(s);
	lru_free(&s->lru);
}

/* Chunks are mapped, not malloc'd: a chunk given back leaves no hole in
 * the heap, so the tracer's RSS follows the window's bytes (from malloc,
 * a 30-minute soak under liburing's tests held 310 MB for a 128 MiB
 * window: glibc serves 1 MiB blocks from the heap once one was freed,
 * and the small allocations around them pinned the pages). */
static struct chunk *chunk_new(size_t capacity)
{
	struct chunk *c = xmap(sizeof(struct chunk) + capacity);
	*c = (struct chunk){.capacity = capacity};
	return c;
}

static void chunk_free(struct chunk *c)
{
	munmap(c, sizeof(*c) + c->capacity);
}

/* The last chunk evicted is kept for the next one: a full window replaces
 * a chunk for a chunk, without a map and its page faults each time. */
static void chunk_drop(struct ut_recorder *r, struct chunk *c)
{
	r->chunk_bytes -= c->capacity;
	if (!r->spare && c->capacity == CHUNK_BYTES) {
		r->spare = c;
		return;
	}
	chunk_free(c);
}

struct ut_recorder *ut_recorder_new(const struct ut_program *prog, uint64_t window_ns, size_t max_bytes)
{
	struct ut_recorder *r = xcalloc(1, sizeof(*r));
	r->prog = prog;
	r->window = window_ns;
	r->max_bytes = max_bytes;
	kept_init(&r->threads, MAX_NAMES);
	kept_init(&r->groups, MAX_NAMES);
	kept_init(&r->counters, MAX_COUNTERS);
	kept_init(&r->slices, MAX_OPEN);
	kept_init(&r->spans, MAX_OPEN);
	kept_init(&r->phases, MAX_OPEN);
	kept_init(&r->sched, MAX_NAMES);
	return r;
}

void ut_recorder_free(struct ut_recorder *r)
{
	if (!r)
		return;
	while (r->first) {
		struct chunk *next = r->first->next;
		chunk_free(r->first);
		r->first = next;
	}
	if (r->spare)
		chunk_free(r->spare);
	kept_free(&r->threads);
	kept_free(&r->groups);
	kept_free(&r->counters);
	kept_free(&r->slices);
	kept_free(&r->spans);
	kept_free(&r->phases);
	kept_free(&r->sched);
	hmap_free(&r->depths);
	free(r);
}

/* A thread or a group's track, as one word: where slices and counters are. */
static uint64_t place_of(const struct ut_record_place *p)
{
	return hmap_hash(p->group_key, (uint64_t)(int64_t)p->group);
}

/* A record leaves the window: what it opens, names or sets is kept. */
static void carry(struct ut_recorder *r, const unsigned char *rec, size_t size)
{
	const struct ut_rec_hdr *h = (const void *)rec;
	if (h->event == UT_EVENT_THREAD) {
		kept_put(&r->threads, h->tid, 0, rec, size);
		return;
	}
	if (h->event == UT_EVENT_LOST) {   /* what was open ends there, unless requests were shed */
		const struct ut_lost_rec *l = (const void *)rec;
		if (size >= sizeof(*l) && l->reason == UT_LOST_SHED)
			return;
		kept_clear(&r->slices);
		kept_clear(&r->spans);
		kept_clear(&r->phases);
		kept_clear(&r->sched);
		hmap_clear(&r->depths);
		return;
	}
	struct ut_record_place p;
	if (!ut_decode_place(r->prog, rec, size, &p))
		return;
	uint64_t place = place_of(&p);
	bool created;
	switch (p.op) {
	case UT_EV_GROUP_NAME:
		kept_put(&r->groups, p.group_key, (uint64_t)p.group, rec, size);
		break;
	case UT_EV_COUNTER:
		kept_put(&r->counters, place, h->event, rec, size);
		break;
	case UT_EV_SLICE_BEGIN: {
		uint64_t *depth = hmap_insert(&r->depths, place, 0, &created);
		kept_put(&r->slices, place, ++*depth, rec, size);
		break;
	}
	case UT_EV_SLICE_END: {
		uint64_t *depth = hmap_find(&r->depths, place, 0);
		if (!depth)
			break;
		kept_take(&r->slices, place, (*depth)--);
		if (!*depth)
			hmap_remove(&r->depths, place, 0);
		break;
	}
	case UT_EV_SPAN_BEGIN:
		kept_take(&r->phases, p.key, place);
		kept_put(&r->spans, p.key, place, rec, size);
		break;
	case UT_EV_SPAN_PHASE:
		if (kept_find(&r->spans, p.key, place))
			kept_put(&r->phases, p.key, place, rec, size);
		break;
	case UT_EV_SPAN_END:
		kept_take(&r->spans, p.key, place);
		kept_take(&r->phases, p.key, place);
		break;
	/* A thread's state (and an uninterruptible sleep's slice) lasts from
	 * its last switch out or wakeup to its switch in.  Replayed in order,
	 * the records kept give each thread the state it was in, or none; a
	 * switch replayed also runs its incoming thread, which was running
	 * then unless a later record, kept too, says otherwise. */
	case UT_EV_SCHED_SWITCH:
	case UT_EV_SCHED_WAKEUP:
		kept_take(&r->sched, p.sched_in, 0);
		if (p.sched_out)
			kept_put(&r->sched, p.sched_out, 0, rec, size);
		break;
	default:
		break;
	}
}

static size_t stored_bytes(size_t size)
{
	return sizeof(uint64_t) + ((size + 7) & ~(size_t)7);
}

/* Records older than limit leave the window. */
static void evict(struct ut_recorder *r, uint64_t limit)
{
	while (r->first) {
		struct chunk *c = r->first;
		while (c->read < c->used) {
			uint64_t size;
			memcpy(&size, c->data + c->read, sizeof(size));
			const unsigned char *rec = c->data + c->read + sizeof(size);
			const struct ut_rec_hdr *h = (const void *)rec;
			if (h->ts >= limit) {
				r->oldest_ts = h->ts;
				return;
			}
			carry(r, rec, (size_t)size);
			c->read += stored_bytes((size_t)size);
		}
		if (c == r->last) {   /* empty: kept for the next records */
			c->used = c->read = 0;
			r->oldest_ts = 0;
			return;
		}
		r->first = c->next;
		chunk_drop(r, c);
	}
}

/* Over the bound, the oldest chunks' records leave, whatever their time,
 * down to a chunk under the bound (the one filling stays); a window being
 * written keeps the records it has not reached (the session writes it
 * faster while the recorder is over: ut_recorder_over). */
static void evict_to_bound(struct ut_recorder *r)
{
	while (ut_recorder_bytes(r) > r->max_bytes && r->first != r->last &&
	       !(r->reading && r->reading->chunk == r->first)) {
		struct chunk *c = r->first;
		uint64_t last_ts = 0;
		while (c->read < c->used) {
			uint64_t size;
			memcpy(&size, c->data + c->read, sizeof(size));
			const unsigned char *rec = c->data + c->read + sizeof(size);
			last_ts = ((const struct ut_rec_hdr *)rec)->ts;
			carry(r, rec, (size_t)size);
			c->read += stored_bytes((size_t)size);
		}
		if (last_ts > r->cut_before)
			r->cut_before = last_ts;
		r->first = c->next;
		chunk_drop(r, c);
		const struct chunk *f = r->first;
		r->oldest_ts = f->read < f->used ? ((const struct ut_rec_hdr *)(f->data + f->read + sizeof(uint64_t)))->ts : 0;
	}
}

void ut_recorder_add(struct ut_recorder *r, const void *rec, size_t size)
{
	const struct ut_rec_hdr *h = rec;
	size_t need = stored_bytes(size);
	struct chunk *c = r->last;
	if (!c || c->capacity - c->used < need) {
		size_t capacity = need > CHUNK_BYTES ? need : CHUNK_BYTES;
		if (r->spare && capacity == CHUNK_BYTES) {
			c = r->spare;
			r->spare = NULL;
			*c = (struct chunk){.capacity = capacity};
		} else {
			c = chunk_new(capacity);
		}
		if (r->last)
			r->last->next = c;
		else
			r->first = c;
		r->last = c;
		r->chunk_bytes += capacity;
	}
	uint64_t stored = size;
	memcpy(c->data + c->used, &stored, sizeof(stored));
	memcpy(c->data + c->used + sizeof(stored), rec, size);
	c->used += need;
	if (!r->oldest_ts)
		r->oldest_ts = h->ts;
	r->newest_ts = h->ts;
	uint64_t keep = r->window + LATE_TRIGGER_NS;
	uint64_t limit = h->ts > keep ? h->ts - keep : 0;
	if (r->hold_from && r->hold_from < limit)
		limit = r->hold_from;
	if (r->oldest_ts < limit)
		evict(r, limit);
	/* what left the window and is kept counts too (a soak's thread
	 * names and scheduling records: 10 MB, the window 9 % over) */
	if (ut_recorder_bytes(r) + CHUNK_BYTES > r->max_bytes)
		evict_to_bound(r);
}

bool ut_recorder_over(const struct ut_recorder *r)
{
	return ut_recorder_bytes(r) > r->max_bytes;
}

uint64_t ut_recorder_cut_before(struct ut_recorder *r, bool *first_time)
{
	/* the window's own time would have let them go anyway */
	uint64_t window_start = r->newest_ts > r->window ? r->newest_ts - r->window : 0;
	uint64_t cut = r->cut_before > window_start ? r->cut_before : 0;
	*first_time = cut && !r->cut_noted;
	r->cut_noted |= cut != 0;
	return cut;
}

void ut_recorder_hold(struct ut_recorder *r, uint64_t from)
{
	r->hold_from = from ? from : 1;
}

void ut_recorder_release(struct ut_recorder *r)
{
	r->hold_from = 0;
	r->reading = NULL;
}

uint64_t ut_recorder_oldest(const struct ut_recorder *r)
{
	return r->oldest_ts;
}

uint64_t ut_recorder_newest(const struct ut_recorder *r)
{
	return r->newest_ts;
}

size_t ut_recorder_bytes(const struct ut_recorder *r)
{
	return r->chunk_bytes + r->threads.bytes + r->groups.bytes + r->counters.bytes + r->slices.bytes +
	       r->spans.bytes + r->phases.bytes + r->sched.bytes;
}

/* Writes each record kept in s to e, at ts when it is older. */
static void replay(struct ut_recorder *r, const struct kept_set *s, struct ut_engine *e, uint64_t ts,
		   const struct kept_set *follow)
{
	for (const struct kept *k = lru_oldest(&s->lru); k; k = lru_newer(&s->lru, k)) {
		struct ut_rec_hdr *h = (void *)k->rec;
		if (h->ts < ts)
			h->ts = ts;
		ut_decode_trace(r->prog, e, k->rec, k->size);
		const struct kept *next = follow ? kept_find(follow, k->link.a, k->link.b) : NULL;
		if (next) {
			h = (void *)next->rec;
			if (h->ts < ts)
				h->ts = ts;
			ut_decode_trace(r->prog, e, next->rec, next->size);
		}
	}
}

void ut_recorder_start(struct ut_recorder *r, struct ut_engine *e, uint64_t from, uint64_t mark,
			struct ut_recorder_cursor *cur)
{
	if (r->oldest_ts && r->oldest_ts < from)
		evict(r, from);
	/* what the window starts with, as it was when its first record
	 * came: names, counters, open slices, open spans in their phase */
	uint64_t start = r->oldest_ts > from ? r->oldest_ts : from;
	replay(r, &r->threads, e, start, NULL);
	replay(r, &r->groups, e, start, NULL);
	replay(r, &r->counters, e, start, NULL);
	replay(r, &r->slices, e, start, NULL);
	replay(r, &r->sched, e, start, NULL); /* after slices: a D slice is the innermost */
	replay(r, &r->spans, e, start, &r->phases);
	*cur = (struct ut_recorder_cursor){.chunk = r->first, .at = r->first ? r->first->read : 0, .from = from,
					   .mark = mark};
	r->reading = cur;
}

uint64_t ut_recorder_continue(struct ut_recorder *r, struct ut_engine *e, struct ut_recorder_cursor *cur,
			      uint64_t to, uint64_t max)
{
	uint64_t written = 0;
	cur->at_mark = cur->caught_up = false;
	while (cur->chunk && !cur->done && written < max) {
		struct chunk *c = cur->chunk;
		if (cur->at >= c->used) {
			if (!c->next) {
				cur->caught_up = true;
				break;
			}
			cur->chunk = c->next;
			cur->at = c->next->read;
			continue;
		}
		uint64_t size;
		memcpy(&size, c->data + cur->at, sizeof(size));
		const unsigned char *rec = c->data + cur->at + sizeof(size);
		const struct ut_rec_hdr *h = (const void *)rec;
		if (h->ts > to) {
			cur->done = true;
			break;
		}
		if (cur->mark && h->ts > cur->mark) {
			cur->mark = 0;
			cur->at_mark = true;
			break;
		}
		cur->at += stored_bytes((size_t)size);
		if (h->ts < cur->from)
			continue;
		ut_decode_trace(r->prog, e, rec, (size_t)size);
		written++;
	}
	if (!cur->chunk)
		cur->caught_up = true;
	return written;
}
