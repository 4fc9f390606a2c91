#include "runtime/reorder.h"

#include <stdlib.h>
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>

#include "bpf/records.h"
#include "base/alloc.h"

/* A sample's copy, freed when its last record has been released.  Most
 * samples (a CPU's batch of hits) fit in POOLED_BYTES: their copies are
 * kept for the next samples instead (malloc and free of 2-4 KiB at every
 * sample were 6 % of the reader's time on the nop firehose). */
#define POOLED_BYTES 8192
#define POOLED_KEPT 1024
struct sample_copy {
	size_t records_left;
	struct sample_copy *next_free;
	bool pooled;
	_Alignas(8) unsigned char bytes[];   /* records are read in place */
};

struct queued {
	uint64_t ts;
	const unsigned char *rec;
	size_t len;
	struct sample_copy *copy;
};

/* One CPU's records, oldest first: a ring of `capacity` (a power of two). */
struct cpu_queue {
	struct queued *items;
	size_t capacity, head, count;
};

struct ut_reorder {
	unsigned ncpus;
	struct cpu_queue *queues;
	ut_record_len_fn *len;
	void *len_ctx;
	size_t queued;
	uint64_t released_ts;    /* of the newest record released */
	/* records dropped since the last release: they came after records
	 * newer than them had been released */
	uint64_t late, late_since;
	uint64_t late_total;
	struct sample_copy *free_copies;   /* pooled, released */
	size_t nfree;
};

struct ut_reorder *ut_reorder_new(unsigned ncpus, ut_record_len_fn *len, void *len_ctx)
{
	struct ut_reorder *r = xcalloc(1, sizeof(*r));
	r->ncpus = ncpus ? ncpus : 1;
	r->queues = xcalloc(r->ncpus, sizeof(*r->queues));
	r->len = len;
	r->len_ctx = len_ctx;
	return r;
}

static struct queued *at(struct cpu_queue *q, size_t i)
{
	return &q->items[(q->head + i) & (q->capacity - 1)];
}

static struct sample_copy *take_copy(struct ut_reorder *r, size_t size)
{
	if (size > POOLED_BYTES) {
		struct sample_copy *c = xmalloc(sizeof(*c) + size);
		c->pooled = false;
		return c;
	}
	struct sample_copy *c = r->free_copies;
	if (c) {
		r->free_copies = c->next_free;
		r->nfree--;
		return c;
	}
	c = xmalloc(sizeof(*c) + POOLED_BYTES);
	c->pooled = true;
	return c;
}

static void release_copy(struct ut_reorder *r, struct sample_copy *c)
{
	if (--c->records_left)
		return;
	if (c->pooled && r->nfree < POOLED_KEPT) {
		c->next_free = r->free_copies;
		r->free_copies = c;
		r->nfree++;
	} else {
		free(c);
	}
}

void ut_reorder_free(struct ut_reorder *r)
{
	if (!r)
		return;
	for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
		struct cpu_queue *q = &r->queues[cpu];
		for (size_t i = 0; i < q->count; i++)
			release_copy(r, at(q, i)->copy);
		free(q->items);
	}
	while (r->free_copies) {
		struct sample_copy *c = r->free_copies;
		r->free_copies = c->next_free;
		free(c);
	}
	free(r->queues);
	free(r);
}

static void grow(struct cpu_queue *q)
{
	size_t capacity = q->capacity ? q->capacity * 2 : 256;
	struct queued *items = xcalloc(capacity, sizeof(*items));
	for (size_t i = 0; i < q->count; i++)
		items[i] = *at(q, i);
	free(q->items);
	q->items = items;
	q->capacity = capacity;
	q->head = 0;
}

/* Appends, then moves the record back past newer ones: a CPU's records
 * are nearly in order (a nested hit's go out before the held ones of the
 * hit it interrupted), so this walks a step or two. */
static void push_in_order(struct cpu_queue *q, struct queued item)
{
	if (q->count == q->capacity)
		grow(q);
	size_t i = q->count++;
	while (i > 0 && at(q, i - 1)->ts > item.ts) {
		*at(q, i) = *at(q, i - 1);
		i--;
	}
	*at(q, i) = item;
}

void ut_reorder_add(struct ut_reorder *r, const void *sample, size_t size)
{
	struct sample_copy *copy = take_copy(r, size);
	memcpy(copy->bytes, sample, size);
	copy->records_left = 1;   /* held until every record is queued */
	const unsigned char *p = copy->bytes;
	size_t avail = size;
	while (avail >= sizeof(struct ut_rec_hdr)) {
		size_t len = r->len(r->len_ctx, p, avail);
		if (len < sizeof(struct ut_rec_hdr) || len > avail)
			break;
		const struct ut_rec_hdr *h = (const void *)p;
		p += len;
		avail -= len;
		if (h->ts < r->released_ts) {
			if (!r->late || h->ts < r->late_since)
				r->late_since = h->ts;
			r->late++;
			r->late_total++;
			continue;
		}
		unsigned cpu = h->cpu < r->ncpus ? h->cpu : r->ncpus - 1;
		copy->records_left++;
		push_in_order(&r->queues[cpu], (struct queued){.ts = h->ts, .rec = (const void *)h, .len = len, .copy = copy});
		r->queued++;
	}
	release_copy(r, copy);
}

/* A record at ts may leave: no CPU can still send an older one, or the
 * queues hold too many. */
static bool releasable(const struct ut_reorder *r, uint64_t ts, uint64_t watermark, size_t max_queued)
{
	return ts <= watermark || r->queued > max_queued;
}

/* The records dropped for coming late, as a loss at the time of the
 * newest record released: what was open then may have lost its end. */
static int release_late(struct ut_reorder *r, ut_record_fn *fn, void *ctx)
{
	struct ut_lost_rec lost = {
		.h = {.ts = r->released_ts, .event = UT_EVENT_LOST},
		.since = r->late_since,
		.count = r->late,
		.reason = UT_LOST_LATE,
	};
	r->late = 0;
	return fn(ctx, &lost, sizeof(lost));
}

long ut_reorder_release(struct ut_reorder *r, uint64_t watermark, size_t max_queued, ut_record_fn *fn,
			void *ctx)
{
	long released = 0;
	if (r->late && release_late(r, fn, ctx))
		return released;
	for (;;) {
		/* the queue with the oldest head, and the next oldest head: that
		 * queue's records up to it go out in one run */
		struct cpu_queue *oldest = NULL;
		uint64_t next = UINT64_MAX;
		for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
			struct cpu_queue *q = &r->queues[cpu];
			if (!q->count)
				continue;
			uint64_t ts = at(q, 0)->ts;
			if (!oldest || ts < at(oldest, 0)->ts) {
				if (oldest)
					next = at(oldest, 0)->ts;
				oldest = q;
			} else if (ts < next) {
				next = ts;
			}
		}
		if (!oldest || !releasable(r, at(oldest, 0)->ts, watermark, max_queued))
			return released;
		do {
			struct queued item = *at(oldest, 0);
			oldest->head = (oldest->head + 1) & (oldest->capacity - 1);
			oldest->count--;
			r->queued--;
			r->released_ts = item.ts;
			int stop = fn(ctx, item.rec, item.len);
			release_copy(r, item.copy);
			released++;
			if (stop)
				return released;
		} while (oldest->count && at(oldest, 0)->ts <= next &&
			 releasable(r, at(oldest, 0)->ts, watermark, max_queued));
	}
}

size_t ut_reorder_queued(const struct ut_reorder *r)
{
	return r->queued;
}

uint64_t ut_reorder_late(const struct ut_reorder *r)
{
	return r->late_total;
}
