/* Engine + FXT writer throughput on one core, for an io_uring-like mix:
 * per request a flow begin at submit (3 args), a span on the ring, a flow
 * step on a worker thread, a flow end at completion (res arg) and the span
 * end; a counter every ~16 events.  32 requests are in flight at once.
 * Prints events/s and bytes/event. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/fxt.h"

#define IN_FLIGHT 32
#define RING_KEY 0xffff888012345000ull

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t requests = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	const char *path = argc > 2 ? argv[2] : "/tmp/engine_bench.fxt";
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct ut_engine *e = ut_engine_new(w, NULL);
	ut_engine_thread_name(e, 4242, 4242, "app");
	for (uint32_t i = 0; i < 4; i++)
		ut_engine_thread_name(e, 4242, 4300 + i, "iou-wrk");
	ut_engine_group_name(e, "ring", RING_KEY, "ring 0 (fd 3)");
	const struct ut_track ring = { .kind = UT_TRACK_GROUP, .group = "ring", .key = RING_KEY };

	uint64_t ts = 1000000, events = 0;
	double start = now_seconds();
	for (uint64_t r = 0; r < requests + IN_FLIGHT; r++) {
		if (r < requests) {
			struct ut_arg sub[] = {
				{ .name = "opcode", .kind = UT_ARG_UINT, .u = 22 },
				{ .name = "fd", .kind = UT_ARG_INT, .i = 5 },
				{ .name = "len", .kind = UT_ARG_UINT, .u = 4096 },
			};
			ut_flow(e, ts, 4242, 4242, UT_FLOW_BEGIN, "req", r, "io_uring", "submit", sub, 3);
			ut_span_begin(e, ts, "ring", RING_KEY, r, "io_uring", "READ", NULL, 0);
			ut_flow(e, ts + 200, 4242, 4300 + (uint32_t)(r % 4), UT_FLOW_STEP, "req", r,
				"io_uring", "io-wq", NULL, 0);
			events += 3;
		}
		if (r >= IN_FLIGHT) {
			uint64_t done = r - IN_FLIGHT;
			struct ut_arg res = { .name = "res", .kind = UT_ARG_INT, .i = 4096 };
			ut_flow(e, ts + 300, 4242, 4242, UT_FLOW_END, "req", done, "io_uring", "complete",
				&res, 1);
			ut_span_end(e, ts + 300, "ring", RING_KEY, done, NULL, NULL, 0);
			events += 2;
		}
		if (r % 3 == 0) { /* ~ every 16 events */
			struct ut_arg v = { .name = "inflight", .kind = UT_ARG_UINT, .u = IN_FLIGHT };
			ut_counter(e, ts + 300, &ring, "ring", &v, 1);
			events++;
		}
		ts += 1000;
	}
	ut_engine_finish(e, ts);
	double elapsed = now_seconds() - start;
	uint64_t bytes = fxt_writer_bytes(w);
	ut_engine_free(e);
	if (fxt_writer_close(w, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("events: %llu in %.3f s: %.2f M events/s, %.1f bytes/event (%llu bytes)\n",
	       (unsigned long long)events, elapsed, (double)events / elapsed / 1e6,
	       (double)bytes / (double)events, (unsigned long long)bytes);
	unlink(path);
	return 0;
}
