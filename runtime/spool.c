#include "runtime/spool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "fxt/fxt.h"
#include "runtime/decode.h"

/* Records go into chunks, each a u64 length then the record, padded to
 * whole words (the ring's records are: they stay aligned). */
#define CHUNK_BYTES (1u << 20)

struct chunk {
	struct chunk *next;
	size_t used;
	uint64_t data[(CHUNK_BYTES - 2 * sizeof(void *)) / 8];
};

struct ut_spool {
	const struct ut_program *prog;
	struct ut_engine *engine;
	struct fxt_writer *writer;
	pthread_t thread;
	bool running;            /* the thread */
	pthread_mutex_t lock;
	pthread_cond_t work, room;   /* a chunk to convert, or the end; a chunk freed */
	/* under lock: the chunks to convert, oldest first, and the free ones */
	struct chunk *first, *last, *free;
	size_t queued, chunks, max_chunks;
	bool finishing;
	bool urgent;             /* the loop waited for room: until a quarter is left queued */
	struct ut_spool_stats stats;
	struct chunk *filling;   /* the loop's, out of the lock */
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's policy: SCHED_IDLE, or SCHED_OTHER (normal).
 * Without the right to change it back (no CAP_SYS_NICE, RLIMIT_NICE) it
 * stays idle: the end waits for it all the same. */
static void set_policy(int policy)
{
	struct sched_param none = {0};
	if (sched_setscheduler(0, policy, &none) != 0) {
		/* as it was */
	}
}

static void convert(struct ut_spool *s, const struct chunk *c)
{
	for (size_t at = 0; at < c->used;) {
		uint64_t len = c->data[at];
		ut_decode_trace(s->prog, s->engine, &c->data[at + 1], (size_t)len);
		at += 1 + (len + 7) / 8;
	}
}

static void *converter(void *arg)
{
	struct ut_spool *s = arg;
	/* idle, but while the loop waits for room (a machine busy with other
	 * work starved it: the loop slept on a full spool for most of a nop
	 * firehose's run) and at the end */
	set_policy(SCHED_IDLE);
	bool normal = false;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->first && !s->finishing)
			pthread_cond_wait(&s->work, &s->lock);
		struct chunk *c = s->first;
		if (!c)
			break;
		s->first = c->next;
		if (!s->first)
			s->last = NULL;
		s->queued--;
		if (s->urgent && s->queued * 4 <= s->max_chunks && !s->finishing)
			s->urgent = false;
		bool want_normal = s->urgent || s->finishing;
		pthread_mutex_unlock(&s->lock);
		if (want_normal != normal) {
			normal = want_normal;
			set_policy(normal ? SCHED_OTHER : SCHED_IDLE);
		}
		convert(s, c);
		uint64_t bytes = fxt_writer_bytes(s->writer);
		pthread_mutex_lock(&s->lock);
		s->stats.trace_bytes = bytes;
		c->next = s->free;
		s->free = c;
		pthread_cond_signal(&s->room);
	}
	pthread_mutex_unlock(&s->lock);
	s->stats.converter_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

struct ut_spool *ut_spool_new(const struct ut_program *prog, struct ut_engine *e, struct fxt_writer *w,
			      size_t max_bytes, char *err, size_t errlen)
{
	struct ut_spool *s = xcalloc(1, sizeof(*s));
	s->prog = prog;
	s->engine = e;
	s->writer = w;
	s->max_chunks = max_bytes / CHUNK_BYTES ? max_bytes / CHUNK_BYTES : 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->room, NULL);
	int rc = pthread_create(&s->thread, NULL, converter, s);
	s->running = rc == 0;
	if (rc) {
		snprintf(err, errlen, "cannot start the trace's converter thread: %s", strerror(rc));
		ut_spool_free(s);
		return NULL;
	}
	return s;
}

/* A chunk to fill: a free one, a new one under the bound, or the first
 * one the converter frees (the loop waits). */
static struct chunk *take_chunk(struct ut_spool *s)
{
	pthread_mutex_lock(&s->lock);
	if (!s->free && s->chunks >= s->max_chunks) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);
		s->stats.full_waits++;
		s->urgent = true;
		while (!s->free)
			pthread_cond_wait(&s->room, &s->lock);
		s->stats.full_wait_ns += now_ns(CLOCK_MONOTONIC) - t0;
	}
	struct chunk *c = s->free;
	if (c) {
		s->free = c->next;
	} else {
		c = xmalloc(sizeof(*c));
		s->chunks++;
		if (s->chunks * CHUNK_BYTES > s->stats.peak_bytes)
			s->stats.peak_bytes = s->chunks * CHUNK_BYTES;
	}
	pthread_mutex_unlock(&s->lock);
	c->used = 0;
	c->next = NULL;
	return c;
}

/* The chunk the loop fills goes to the converter. */
static void hand_over(struct ut_spool *s)
{
	struct chunk *c = s->filling;
	if (!c || !c->used)
		return;
	s->filling = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->last)
		s->last->next = c;
	else
		s->first = c;
	s->last = c;
	s->queued++;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
}

void ut_spool_flush(struct ut_spool *s)
{
	pthread_mutex_lock(&s->lock);
	bool idle = !s->first;
	pthread_mutex_unlock(&s->lock);
	if (idle)
		hand_over(s);
}

void ut_spool_add(struct ut_spool *s, const void *rec, size_t size)
{
	size_t words = 1 + (size + 7) / 8;
	if (words > sizeof(s->filling->data) / 8)
		return;   /* no record is that long: a record is at most 64 KiB */
	if (s->filling && s->filling->used + words > sizeof(s->filling->data) / 8)
		hand_over(s);
	if (!s->filling)
		s->filling = take_chunk(s);
	uint64_t *at = &s->filling->data[s->filling->used];
	at[0] = size;
	at[words - 1] = 0;   /* the padding */
	memcpy(at + 1, rec, size);
	s->filling->used += words;
	s->stats.records++;
}

void ut_spool_finish(struct ut_spool *s)
{
	hand_over(s);
	pthread_mutex_lock(&s->lock);
	s->finishing = true;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->running = false;
}

void ut_spool_stats(struct ut_spool *s, struct ut_spool_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->stats;
	pthread_mutex_unlock(&s->lock);
}

void ut_spool_free(struct ut_spool *s)
{
	if (!s)
		return;
	if (s->running)
		ut_spool_finish(s);
	free(s->filling);
	while (s->free) {
		struct chunk *c = s->free;
		s->free = c->next;
		free(c);
	}
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->room);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
