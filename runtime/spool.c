#include "runtime/spool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "fxt/fxt.h"
#include "runtime/decode.h"

/* Records go into chunks, each a u64 length then the record, padded to
 * whole words (the ring's records are: they stay aligned). */
#define CHUNK_BYTES (1u << 20)
/* Records the converter thread converts holding the engine, at a time. */
#define SLICE_RECORDS 1024

struct chunk {
	struct chunk *next;
	size_t used;   /* words filled */
	size_t done;   /* words converted */
	uint64_t data[(CHUNK_BYTES - 3 * sizeof(size_t)) / 8];
};

struct ut_spool {
	const struct ut_program *prog;
	struct ut_engine *engine;
	struct fxt_writer *writer;
	pthread_t thread;
	bool running;            /* the thread */
	pid_t converter_tid;
	/* the engine and the first chunk's conversion: whoever holds it
	 * converts, the converter thread a slice at a time, the loop when it
	 * needs room */
	pthread_mutex_t engine_lock;
	pthread_mutex_t lock;    /* what follows */
	pthread_cond_t work;     /* a chunk to convert, or the end */
	struct chunk *first, *last, *free;   /* to convert, oldest first; free */
	size_t chunks, max_chunks;
	bool finishing;
	struct ut_spool_stats stats;
	struct chunk *filling;   /* the loop's, out of the lock */
};

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Thread tid's policy: SCHED_IDLE, or SCHED_OTHER (normal).  Without the
 * right to (no CAP_SYS_NICE) it stays as it is: the loop then waits for
 * the converter as long as the machine starves it. */
static void set_policy(pid_t tid, int policy)
{
	struct sched_param none = {0};
	if (sched_setscheduler(tid, policy, &none) != 0) {
		/* as it was */
	}
}

/* Converts up to max records of the oldest chunk, the engine held; a chunk
 * converted whole is free again.  Records converted. */
static size_t convert_some(struct ut_spool *s, size_t max)
{
	pthread_mutex_lock(&s->lock);
	struct chunk *c = s->first;
	pthread_mutex_unlock(&s->lock);
	size_t n = 0;
	for (; c && c->done < c->used && n < max; n++) {
		uint64_t len = c->data[c->done];
		ut_decode_trace(s->prog, s->engine, &c->data[c->done + 1], (size_t)len);
		c->done += 1 + (len + 7) / 8;
	}
	if (c && c->done == c->used) {
		uint64_t bytes = fxt_writer_bytes(s->writer);
		pthread_mutex_lock(&s->lock);
		s->stats.trace_bytes = bytes;
		s->first = c->next;
		if (!s->first)
			s->last = NULL;
		c->next = s->free;
		s->free = c;
		pthread_mutex_unlock(&s->lock);
	}
	return n;
}

static void *converter(void *arg)
{
	struct ut_spool *s = arg;
	set_policy(0, SCHED_IDLE);
	for (;;) {
		pthread_mutex_lock(&s->lock);
		while (!s->first && !s->finishing)
			pthread_cond_wait(&s->work, &s->lock);
		bool finishing = s->finishing;
		pthread_mutex_unlock(&s->lock);
		if (finishing)   /* the loop converts the rest */
			break;
		pthread_mutex_lock(&s->engine_lock);
		convert_some(s, SLICE_RECORDS);
		pthread_mutex_unlock(&s->engine_lock);
	}
	s->stats.converter_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void *converter_start(void *arg)
{
	struct ut_spool *s = arg;
	pthread_mutex_lock(&s->lock);
	s->converter_tid = gettid();
	pthread_mutex_unlock(&s->lock);
	return converter(arg);
}

struct ut_spool *ut_spool_new(const struct ut_program *prog, struct ut_engine *e, struct fxt_writer *w,
			      size_t max_bytes, char *err, size_t errlen)
{
	struct ut_spool *s = xcalloc(1, sizeof(*s));
	s->prog = prog;
	s->engine = e;
	s->writer = w;
	s->max_chunks = max_bytes / CHUNK_BYTES ? max_bytes / CHUNK_BYTES : 1;
	pthread_mutex_init(&s->engine_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->work, NULL);
	int rc = pthread_create(&s->thread, NULL, converter_start, s);
	s->running = rc == 0;
	if (rc) {
		snprintf(err, errlen, "cannot start the trace's converter thread: %s", strerror(rc));
		ut_spool_free(s);
		return NULL;
	}
	return s;
}

/* The engine, for the loop: the converter gives it up at the end of its
 * slice, which it runs at normal priority meanwhile (idle, a machine busy
 * with other work would starve it holding the engine). */
static void engine_for_the_loop(struct ut_spool *s)
{
	if (pthread_mutex_trylock(&s->engine_lock) == 0)
		return;
	pthread_mutex_lock(&s->lock);
	pid_t tid = s->converter_tid;   /* 0 until the thread has run: it holds nothing then */
	pthread_mutex_unlock(&s->lock);
	if (tid)
		set_policy(tid, SCHED_OTHER);
	pthread_mutex_lock(&s->engine_lock);
	if (tid)
		set_policy(tid, SCHED_IDLE);
}

/* A chunk to fill: a free one, a new one under the bound, or one the loop
 * frees itself, converting the rest of the oldest chunk. */
static struct chunk *take_chunk(struct ut_spool *s)
{
	pthread_mutex_lock(&s->lock);
	if (!s->free && s->chunks >= s->max_chunks) {
		pthread_mutex_unlock(&s->lock);
		uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		engine_for_the_loop(s);
		size_t n = convert_some(s, SIZE_MAX);
		pthread_mutex_unlock(&s->engine_lock);
		pthread_mutex_lock(&s->lock);
		s->stats.full_times++;
		s->stats.loop_records += n;
		s->stats.loop_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
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
	c->used = c->done = 0;
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
	engine_for_the_loop(s);   /* the converter's last slice ends */
	pthread_mutex_unlock(&s->engine_lock);
	pthread_join(s->thread, NULL);
	s->running = false;
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (size_t n; (n = convert_some(s, SIZE_MAX));)
		s->stats.stop_records += n;
	s->stats.stop_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
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
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->engine_lock);
	free(s);
}
