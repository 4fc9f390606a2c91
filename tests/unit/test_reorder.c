/* Putting records from several CPUs back in time order (runtime/reorder.c):
 * hand-made samples, then random streams checked against the watermark
 * rule.  No BPF. */
#include <linux/types.h>

#include "bpf/records.h"
#include "runtime/reorder.h"
#include "tests/unit/check.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	struct ut_rec_hdr h;
	__u64 id;
};

#define EVENT_OK 1

static size_t rec_len(void *ctx, const void *rec, size_t avail)
{
	(void)ctx;
	const struct rec *r = rec;
	return r->h.event == EVENT_OK && avail >= sizeof(*r) ? sizeof(*r) : 0;
}

struct out {
	uint64_t ts[4096];
	uint64_t id[4096];
	size_t n;
	size_t stop_after;   /* 0: never */
};

static int collect(void *ctx, const void *rec, size_t size)
{
	struct out *o = ctx;
	const struct rec *r = rec;
	if (size == sizeof(*r) && o->n < 4096) {
		o->ts[o->n] = r->h.ts;
		o->id[o->n] = r->id;
	}
	o->n++;
	return o->stop_after && o->n == o->stop_after;
}

/* A sample of n records of one CPU with the given timestamps. */
static void add(struct ut_reorder *r, unsigned cpu, const uint64_t *ts, size_t n)
{
	struct rec s[64];
	for (size_t i = 0; i < n; i++)
		s[i] = (struct rec){.h = {.ts = ts[i], .event = EVENT_OK, .cpu = cpu}, .id = ts[i]};
	ut_reorder_add(r, s, n * sizeof(*s));
}

static bool ts_are(const struct out *o, const uint64_t *want, size_t n)
{
	if (o->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (o->ts[i] != want[i])
			return false;
	return true;
}

static void test_merge(void)
{
	struct ut_reorder *r = ut_reorder_new(2, rec_len, NULL);
	struct out o = {0};
	add(r, 1, (uint64_t[]){10, 20, 30}, 3);
	add(r, 0, (uint64_t[]){5, 15, 25, 35}, 4);
	CHECK("seven queued", ut_reorder_queued(r) == 7);
	CHECK("up to the watermark: four", ut_reorder_release(r, 22, SIZE_MAX, collect, &o) == 4);
	CHECK("merged in time order", ts_are(&o, (uint64_t[]){5, 10, 15, 20}, 4));
	CHECK("three still queued", ut_reorder_queued(r) == 3);
	CHECK("nothing more below the same watermark", ut_reorder_release(r, 22, SIZE_MAX, collect, &o) == 0);
	ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect, &o);
	CHECK("the rest in order", ts_are(&o, (uint64_t[]){5, 10, 15, 20, 25, 30, 35}, 7));
	CHECK("empty", ut_reorder_queued(r) == 0);
	ut_reorder_free(r);
}

/* A nested hit's records go out before the held ones of the hit it
 * interrupted: they come back in order within the CPU. */
static void test_late_within_cpu(void)
{
	struct ut_reorder *r = ut_reorder_new(1, rec_len, NULL);
	struct out o = {0};
	add(r, 0, (uint64_t[]){50}, 1);
	add(r, 0, (uint64_t[]){40, 45, 60}, 3);
	ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect, &o);
	CHECK("nested hit put back in place", ts_are(&o, (uint64_t[]){40, 45, 50, 60}, 4));
	ut_reorder_free(r);
}

/* Over max_queued, the oldest leave whatever the watermark, in time order,
 * until max_queued are left; the watermark alone then holds the rest. */
static void test_bounded(void)
{
	struct ut_reorder *r = ut_reorder_new(2, rec_len, NULL);
	struct out o = {0};
	add(r, 0, (uint64_t[]){10, 30, 50, 70}, 4);
	add(r, 1, (uint64_t[]){20, 40, 60}, 3);
	CHECK("bounded: below the watermark, then the oldest down to three",
	      ut_reorder_release(r, 5, 3, collect, &o) == 4);
	CHECK("bounded: released in time order", ts_are(&o, (uint64_t[]){10, 20, 30, 40}, 4));
	CHECK("bounded: three left", ut_reorder_queued(r) == 3);
	CHECK("bounded: at the bound, the watermark holds them", ut_reorder_release(r, 5, 3, collect, &o) == 0);
	CHECK("bounded: below the bound, the watermark alone", ut_reorder_release(r, 55, 3, collect, &o) == 1);
	ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect, &o);
	CHECK("bounded: the rest in order", ts_are(&o, (uint64_t[]){10, 20, 30, 40, 50, 60, 70}, 7));
	ut_reorder_free(r);
}

static struct ut_lost_rec lost_seen;

static int collect_lost(void *ctx, const void *rec, size_t size)
{
	const struct ut_rec_hdr *h = rec;
	if (h->event == UT_EVENT_LOST && size == sizeof(lost_seen)) {
		memcpy(&lost_seen, rec, size);
		return 0;
	}
	return collect(ctx, rec, size);
}

/* Released records are in time order whatever arrives: a record older
 * than one released already is dropped, and the next release begins with
 * a loss record at the time of the newest released (what was open then may
 * have lost its end). */
static void test_late_dropped(void)
{
	struct ut_reorder *r = ut_reorder_new(2, rec_len, NULL);
	struct out o = {0};
	add(r, 0, (uint64_t[]){10, 20, 30, 40}, 4);
	add(r, 1, (uint64_t[]){35}, 1);
	ut_reorder_release(r, 5, 2, collect_lost, &o);   /* over the bound: past the watermark */
	CHECK("late: released past the watermark", ts_are(&o, (uint64_t[]){10, 20, 30}, 3));
	add(r, 1, (uint64_t[]){25, 28, 50}, 3);   /* CPU 1 sends older records late */
	CHECK("late: dropped, not queued", ut_reorder_queued(r) == 3 && ut_reorder_late(r) == 2);
	ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect_lost, &o);
	CHECK("late: the rest in time order", ts_are(&o, (uint64_t[]){10, 20, 30, 35, 40, 50}, 6));
	CHECK("late: a loss record at the newest time released, with how many since when",
	      lost_seen.h.ts == 30 && lost_seen.since == 25 && lost_seen.count == 2 &&
		      lost_seen.reason == UT_LOST_LATE);
	ut_reorder_free(r);
}

static void test_malformed_stop_and_free(void)
{
	struct ut_reorder *r = ut_reorder_new(2, rec_len, NULL);
	struct rec s[3] = {
		{.h = {.ts = 1, .event = EVENT_OK}, .id = 1},
		{.h = {.ts = 2, .event = 77}, .id = 2},   /* unknown: the rest is dropped */
		{.h = {.ts = 3, .event = EVENT_OK}, .id = 3},
	};
	ut_reorder_add(r, s, sizeof(s));
	CHECK("records before a malformed one kept", ut_reorder_queued(r) == 1);
	add(r, 9, (uint64_t[]){7, 8}, 2);   /* a CPU past ncpus: last queue */
	ut_reorder_add(r, s, 5);            /* shorter than a header: nothing */
	CHECK("CPU out of range queued", ut_reorder_queued(r) == 3);
	struct out o = {.stop_after = 2};
	CHECK("stops where fn says", ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect, &o) == 2);
	CHECK("one left after the stop", ut_reorder_queued(r) == 1);
	ut_reorder_free(r);   /* with a record queued: ASan checks the copies are freed */
}

/* Random streams: each CPU's records rise in time but arrive in samples of
 * random sizes, CPUs interleaved at random, some samples a little out of
 * order within their CPU.  The watermark is what a reader could know:
 * below every record not yet sent.  Released records must come out sorted
 * and all of them once. */
static void test_random(unsigned seed)
{
	enum { CPUS = 6, PER_CPU = 600 };
	srand(seed);
	uint64_t ts[CPUS][PER_CPU];
	for (unsigned c = 0; c < CPUS; c++) {
		uint64_t t = (uint64_t)rand() % 100;
		for (unsigned i = 0; i < PER_CPU; i++)
			ts[c][i] = t += 1 + (uint64_t)rand() % 50;
	}
	struct ut_reorder *r = ut_reorder_new(CPUS, rec_len, NULL);
	struct out *o = calloc(1, sizeof(*o));
	unsigned sent[CPUS] = {0};
	unsigned total = 0;
	bool watermark_respected = true;
	while (total < CPUS * PER_CPU) {
		unsigned c = (unsigned)rand() % CPUS;
		unsigned n = 1 + (unsigned)rand() % 20;
		if (sent[c] + n > PER_CPU)
			n = PER_CPU - sent[c];
		if (!n)
			continue;
		if (n >= 2 && rand() % 4 == 0) {   /* the last record first (a nested hit) */
			add(r, c, &ts[c][sent[c] + n - 1], 1);
			add(r, c, &ts[c][sent[c]], n - 1);
		} else {
			add(r, c, &ts[c][sent[c]], n);
		}
		sent[c] += n;
		total += n;
		uint64_t watermark = UINT64_MAX;
		for (unsigned k = 0; k < CPUS; k++)
			if (sent[k] < PER_CPU && ts[k][sent[k]] - 1 < watermark)
				watermark = ts[k][sent[k]] - 1;
		size_t before = o->n;
		ut_reorder_release(r, watermark, SIZE_MAX, collect, o);
		for (size_t i = before; i < o->n; i++)
			watermark_respected &= o->ts[i] <= watermark;
	}
	ut_reorder_release(r, UINT64_MAX, SIZE_MAX, collect, o);
	bool sorted = true;
	for (size_t i = 1; i < o->n; i++)
		sorted &= o->ts[i - 1] <= o->ts[i];
	char name[64];
	snprintf(name, sizeof(name), "random seed %u: all released", seed);
	CHECK(name, o->n == CPUS * PER_CPU && ut_reorder_queued(r) == 0);
	snprintf(name, sizeof(name), "random seed %u: in time order", seed);
	CHECK(name, sorted);
	snprintf(name, sizeof(name), "random seed %u: none past the watermark", seed);
	CHECK(name, watermark_respected);
	free(o);
	ut_reorder_free(r);
}

int main(void)
{
	test_merge();
	test_late_within_cpu();
	test_late_dropped();
	test_bounded();
	test_malformed_stop_and_free();
	for (unsigned seed = 1; seed <= 5; seed++)
		test_random(seed);
	CHECK_DONE();
}
