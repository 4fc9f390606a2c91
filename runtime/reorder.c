#include "runtime/reorder.h"

#include <stdlib.h>
#include <linux/types.h>
#include <stdbool.h>
#include <string.h>

#include "bpf/records.h"
#include "base/alloc.h"

/* A sample's copy, freed when its last record has been released. */
struct sample_copy {
	size_t records_left;
	unsigned char bytes[];
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

static void release_copy(struct sample_copy *c)
{
	if (--c->records_left == 0)
		free(c);
}

void ut_reorder_free(struct ut_reorder *r)
{
	if (!r)
		return;
	for (unsigned cpu = 0; cpu < r->ncpus; cpu++) {
		struct cpu_queue *q = &r->queues[cpu];
		for (size_t i = 0; i < q->count; i++)
			release_copy(at(q, i)->copy);
		free(q->items);
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
	struct sample_copy *copy = xmalloc(sizeof(*copy) + size);
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
	release_copy(copy);
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
			release_copy(item.copy);
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
