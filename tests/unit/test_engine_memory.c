/* Bounded engine memory: 100k short-lived threads (each with a name, a
 * slice left open, a counter and a flow point) keep the heap flat once the
 * thread limit is reached.  The heap in use is read from the allocator
 * (glibc's mallinfo2, or ASan's counter in the sanitized build); the same
 * stream with a limit above the thread count shows what unbounded growth
 * looks like, so the measure is known to see it. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef __SANITIZE_ADDRESS__
/* ASan's runtime (its header is not installed with gcc here) */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/tools.h"
#include "tests/unit/check.h"

#define THREADS 100000u
/* Measured from here on: by then the writer's string table (32767 slots,
 * bounded on its own) is full of the processes' default names. */
#define WARM_THREADS 40000u
#define LIMIT 1024u

static size_t heap_in_use(void)
{
#ifdef __SANITIZE_ADDRESS__
	return __sanitizer_get_current_allocated_bytes();
#else
	return mallinfo2().uordblks;
#endif
}

struct run {
	struct ut_engine_stats stats;
	long long growth; /* heap bytes gained from WARM_THREADS to THREADS (may be < 0) */
};

/* Threads 1000+i of process 100+i%processes, each seen once and never again. */
static struct run run_threads(const char *path, size_t max_threads, uint32_t processes)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	struct ut_engine_limits lim = { .max_threads = max_threads };
	struct ut_engine *e = ut_engine_new(w, &lim);
	size_t warm = 0;
	for (uint32_t i = 0; i < THREADS; i++) {
		if (i == WARM_THREADS)
			warm = heap_in_use();
		uint32_t pid = 100 + i % processes, tid = 1000 + i;
		uint64_t ts = 10 * (uint64_t)i;
		const struct ut_track t = { .kind = UT_TRACK_THREAD, .pid = pid, .tid = tid };
		ut_engine_thread_name(e, pid, tid, "worker");
		ut_engine_process_name(e, pid, "app");
		ut_slice_begin(e, ts, &t, "c", "work", NULL, 0);
		struct ut_arg v = { .name = "value", .kind = UT_ARG_UINT, .u = i };
		ut_counter(e, ts + 1, &t, "n", &v, 1);
		ut_flow(e, ts + 2, pid, tid, UT_FLOW_BEGIN, "req", i, "c", "submit", NULL, 0);
		if (i > 0) /* the previous thread's request ends here */
			ut_flow(e, ts + 3, pid, tid, UT_FLOW_END, "req", i - 1, "c", "done", NULL, 0);
	}
	struct run r = { .growth = (long long)heap_in_use() - (long long)warm };
	ut_engine_finish(e, 10 * (uint64_t)THREADS);
	r.stats = *ut_engine_stats(e);
	ut_engine_free(e);
	if (fxt_writer_close(w, err, sizeof(err)) != 0)
		printf("FAIL close: %s\n", err);
	return r;
}

int main(void)
{
	char path[] = "/tmp/test_engine_memory_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);

	struct run bounded = run_threads(path, LIMIT, 10);
	char *stats = NULL;
	size_t len;
	FILE *out = open_memstream(&stats, &len);
	int rc = fxt_stats(path, out, false);
	fclose(out);
	struct run one_thread_each = run_threads(path, LIMIT, THREADS);
	struct run unbounded = run_threads(path, 2 * THREADS, 10);

	printf("heap growth over %u threads: %lld bytes with a limit of %u threads (10 processes), "
	       "%lld (a process each), %lld without a limit\n", THREADS - WARM_THREADS,
	       bounded.growth, LIMIT, one_thread_each.growth, unbounded.growth);
	CHECK("without a limit the heap grows with every thread (the measure sees growth)",
	      unbounded.growth > (long long)(THREADS - WARM_THREADS) * 100);
	CHECK("with a limit the heap stays flat (under 64 KB for 60k more threads)",
	      bounded.growth < 64 * 1024 && one_thread_each.growth < 64 * 1024);
	CHECK("threads past the limit are evicted, least recently used first",
	      bounded.stats.threads_evicted == THREADS - LIMIT && unbounded.stats.threads_evicted == 0);
	CHECK("a process is kept while one of its threads is, forgotten with its last",
	      bounded.stats.processes_evicted == 0 &&
		      one_thread_each.stats.processes_evicted == THREADS - LIMIT);
	CHECK("open slices of evicted threads are ended, not left open",
	      bounded.stats.slices_unfinished == LIMIT && bounded.stats.slices_evicted == 0);
	CHECK("flows are unaffected by thread eviction",
	      bounded.stats.flows_ended == THREADS - 1 && bounded.stats.flows_evicted == 0);
	CHECK("the trace is valid, every flow complete and every point bound to a slice",
	      rc == 0 && strstr(stats, "flows: 99999 complete, 1 incomplete, 0 points outside any slice\n") &&
		      strstr(stats, "duration_begin: 100000\n") && strstr(stats, "duration_end: 100000\n"));
	free(stats);
	unlink(path);
	CHECK_DONE();
}
