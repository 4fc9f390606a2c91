#include "runtime/consumer.h"

#include <linux/types.h>

#include "base/alloc.h"
#include "bpf/records.h"
#include "runtime/loader.h"
#include "runtime/reorder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How often the reader works out which records no CPU can still precede
 * (and flushes the CPUs that hold records) while records flow: the delay
 * records wait in the reorder queues.  Short, because the ring buffer is
 * not read while what a sync frees is handed on (at 3 M records/s, 20 ms
 * of them took as long again, and filled an 8 MiB ring). */
#define SYNC_NS (5 * 1000000ull)
/* A CPU whose hit has been running (preempted) this long stops holding
 * the others back: its records come out of order instead of the queues
 * growing without bound. */
#define MAX_WAIT_NS (200 * 1000000ull)
/* A hit reads its time a little before it marks itself running (and the
 * mark takes a while to reach other CPUs): while probes are attached, a
 * CPU seen idle is known quiet from this long before the look. */
#define SKEW_NS (50 * 1000ull)
/* Records the reorder queues may hold.  When the reader falls behind, one
 * ring buffer read can last as long as the CPUs keep it busy; it stops at
 * this many (ENOBUFS from on_sample) so that records are handed on and
 * the loop around it looks at the clock and at signals.  A release also
 * leaves no more than half of them queued, whatever the watermark: a hit
 * preempted for long then costs order, not memory.  UT_READER_QUEUE sets
 * another bound (at least 64), for tests. */
#define MAX_QUEUED (64 * 1024)
/* How long the last drain waits for a hit that began before the detach. */
#define DETACHED_WAIT_NS (1000 * 1000000ull)

struct ut_consumer {
	struct ring_buffer *rb;
	struct ut_reorder *reorder;
	ut_record_fn *fn;
	void *ctx;
	int counters_fd;            /* -1 when the object has no ut_counters */
	int cpu_state_fd;           /* ut_cpu, -1 when the object has none */
	int flush_fd;               /* ut_flush, -1 when not loaded */
	unsigned ncpus;
	struct ut_probe_counters *per_cpu;   /* bpf/records.h */
	struct ut_cpu_state *cpu_states;
	uint64_t *quiet_until;      /* per CPU: no record older than this is to come */
	uint64_t last_sync;
	size_t max_queued;          /* MAX_QUEUED, or UT_READER_QUEUE */
	bool queues_full;           /* the last read stopped at max_queued */
	uint64_t full_reads;        /* reads that did */
	uint64_t unsent_hits;       /* held by a CPU when the last drain gave up */
	struct ut_reader_time time;
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct ut_consumer *c = ctx;
	ut_reorder_add(c->reorder, data, size);
	c->queues_full = ut_reorder_queued(c->reorder) >= c->max_queued;
	return c->queues_full ? -ENOBUFS : 0;   /* libbpf stops reading, this sample taken */
}

/* Reads what the ring holds, up to max_queued records queued; first
 * waits up to timeout_ms for a wake-up, unless timeout_ms < 0. */
static int read_ring(struct ut_consumer *c, int timeout_ms)
{
	c->queues_full = false;
	uint64_t t0 = monotonic_ns();
	if (timeout_ms >= 0) {
		struct epoll_event ready;
		int err = epoll_wait(ring_buffer__epoll_fd(c->rb), &ready, 1, timeout_ms) < 0 ? -errno : 0;
		uint64_t woken = monotonic_ns();
		c->time.waiting_ns += woken - t0;
		if (err)   /* -EINTR on a signal, as ring_buffer__poll said it */
			return err;
		t0 = woken;
	}
	int n = ring_buffer__consume(c->rb);
	c->time.reading_ns += monotonic_ns() - t0;
	if (!c->queues_full)
		return n;
	c->full_reads++;
	return 0;
}

const struct ut_reader_time *ut_consumer_time(const struct ut_consumer *c)
{
	return &c->time;
}

uint64_t ut_consumer_full_reads(const struct ut_consumer *c)
{
	return c->full_reads;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);
	return m ? bpf_map__fd(m) : -1;
}

struct ut_consumer *ut_consumer_new(struct bpf_object *obj, ut_record_len_fn *len, ut_record_fn *fn,
				    void *ctx, char *err, size_t errlen)
{
	int events_fd = map_fd(obj, "ut_events");
	if (events_fd < 0) {
		snprintf(err, errlen, "the BPF object has no loaded ut_events ring buffer");
		return NULL;
	}
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		snprintf(err, errlen, "cannot set up the ring buffer reader: %s", strerror(-ncpus));
		return NULL;
	}
	struct ut_consumer *c = xcalloc(1, sizeof(*c));
	c->fn = fn;
	c->ctx = ctx;
	c->ncpus = (unsigned)ncpus;
	const char *queue = getenv("UT_READER_QUEUE");
	long queue_bound = queue ? atol(queue) : 0;
	c->max_queued = queue_bound >= 64 ? (size_t)queue_bound : MAX_QUEUED;
	c->counters_fd = map_fd(obj, "ut_counters");
	c->cpu_state_fd = map_fd(obj, "ut_cpu");
	struct bpf_program *flush = bpf_object__find_program_by_name(obj, "ut_flush");
	c->flush_fd = flush ? bpf_program__fd(flush) : -1;
	c->per_cpu = xcalloc(c->ncpus, sizeof(*c->per_cpu));
	c->cpu_states = xcalloc(c->ncpus, sizeof(*c->cpu_states));
	c->quiet_until = xcalloc(c->ncpus, sizeof(*c->quiet_until));
	c->reorder = ut_reorder_new(c->ncpus, len, ctx);
	c->rb = ring_buffer__new(events_fd, on_sample, c, NULL);
	if (!c->rb) {
		snprintf(err, errlen, "cannot set up the ring buffer reader: %s", strerror(errno));
		ut_consumer_free(c);
		return NULL;
	}
	return c;
}

void ut_consumer_free(struct ut_consumer *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	ut_reorder_free(c->reorder);
	free(c->per_cpu);
	free(c->cpu_states);
	free(c->quiet_until);
	free(c);
}

/* Runs ut_flush on the CPU: true when it holds nothing any more. */
static bool flush_cpu(struct ut_consumer *c, unsigned cpu)
{
	return c->flush_fd >= 0 && ut_run_on_cpu(c->flush_fd, cpu);
}

/* How old a record the CPU may still send, from a copy of its state: one
 * of its running hit, or one it holds. */
static uint64_t oldest_to_come(const struct ut_cpu_state *st)
{
	uint64_t oldest = st->batch_depth ? st->hit_ts : UINT64_MAX;
	if (st->held && st->held_since < oldest)
		oldest = st->held_since;
	return oldest;
}

/* A fresh copy of every CPU's state into c->cpu_states: false when the
 * object has none or the look-up failed. */
static bool read_cpu_states(struct ut_consumer *c)
{
	return c->cpu_state_fd >= 0 && bpf_map_lookup_elem(c->cpu_state_fd, &(__u32){0}, c->cpu_states) == 0;
}

/* Which records can go: looks at each CPU's state, flushes the idle CPUs
 * that hold records, reads the ring, and releases what no CPU can still
 * send an older record than.  A hit running (or preempted) holds the
 * others back from its start, up to MAX_WAIT_NS. */
static int sync_and_release(struct ut_consumer *c, uint64_t skew)
{
	uint64_t now = monotonic_ns();
	uint64_t quiet = now - skew;
	uint64_t t0 = now;
	c->last_sync = now;
	bool states = read_cpu_states(c);
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		const struct ut_cpu_state *st = &c->cpu_states[cpu];
		uint64_t until = quiet;
		if (states && (st->batch_depth || (st->held && !flush_cpu(c, cpu)))) {
			uint64_t oldest = oldest_to_come(st);
			if (oldest <= until)
				until = oldest ? oldest - 1 : 0;
		}
		if (until + MAX_WAIT_NS < quiet)
			until = quiet - MAX_WAIT_NS;
		if (until > c->quiet_until[cpu])
			c->quiet_until[cpu] = until;
	}
	c->time.reading_ns += monotonic_ns() - t0;   /* the CPUs' states, their flushes */
	int n = read_ring(c, -1);
	if (n < 0)
		return n;
	uint64_t watermark = UINT64_MAX;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
		if (c->quiet_until[cpu] < watermark)
			watermark = c->quiet_until[cpu];
	t0 = monotonic_ns();
	long released = ut_reorder_release(c->reorder, watermark, c->max_queued / 2, c->fn, c->ctx);
	c->time.handing_on_ns += monotonic_ns() - t0;
	return (int)released;
}

int ut_consumer_poll(struct ut_consumer *c, int timeout_ms)
{
	/* quiet (nothing queued): wake only as often as asked */
	if (ut_reorder_queued(c->reorder) && timeout_ms > (int)(SYNC_NS / 1000000))
		timeout_ms = (int)(SYNC_NS / 1000000);
	/* The BPF side wakes the reader only every ut_wakeup_bytes, and epoll
	 * reports the ring only after a wake-up: what a quiet trace left is
	 * read at the next sync. */
	int n = read_ring(c, timeout_ms);
	if (n < 0)
		return n;
	if (!c->queues_full && monotonic_ns() - c->last_sync < SYNC_NS)
		return 0;
	return sync_and_release(c, SKEW_NS);
}

int ut_consumer_drain(struct ut_consumer *c)
{
	int n;
	do
		n = sync_and_release(c, 0);
	while (n >= 0 && c->queues_full);
	return n;
}

/* Hits the CPUs still hold or run, from a fresh look at their states. */
static uint64_t hits_pending(struct ut_consumer *c)
{
	if (!read_cpu_states(c))
		return 0;
	uint64_t hits = 0;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
		hits += c->cpu_states[cpu].held_hits + (c->cpu_states[cpu].batch_depth ? 1 : 0);
	return hits;
}

int ut_consumer_drain_detached(struct ut_consumer *c)
{
	uint64_t give_up = monotonic_ns() + DETACHED_WAIT_NS;
	for (;;) {
		int n = ut_consumer_drain(c);
		uint64_t pending = n < 0 ? 0 : hits_pending(c);
		if (!pending)
			return n;
		if (monotonic_ns() > give_up) {
			c->unsent_hits = pending;
			return n;
		}
		struct timespec pause = {0, 1000000};
		nanosleep(&pause, NULL);
	}
}

uint64_t ut_consumer_unsent_hits(const struct ut_consumer *c)
{
	return c->unsent_hits;
}

uint64_t ut_consumer_shed(struct ut_consumer *c)
{
	uint64_t shed = 0;
	if (!read_cpu_states(c))
		return 0;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++)
		shed += c->cpu_states[cpu].shed_requests;
	return shed;
}

int ut_consumer_counters(struct ut_consumer *c, uint32_t probe, struct ut_probe_totals *out)
{
	*out = (struct ut_probe_totals){0};
	if (c->counters_fd < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(c->counters_fd, &probe, c->per_cpu) != 0)
		return -errno;
	for (unsigned cpu = 0; cpu < c->ncpus; cpu++) {
		out->emitted += c->per_cpu[cpu].emitted;
		out->lost += c->per_cpu[cpu].lost;
	}
	return 0;
}
