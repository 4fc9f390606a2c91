/* Engine + FXT writer throughput on one core, for two io_uring-like mixes.
 * An event is one engine call.  Prints events/s and bytes/event per mix.
 *
 * flows: per request a flow begin at submit (3 args), a span on the ring,
 *   a flow step on a worker thread, a flow end at completion (res arg) and
 *   the span end; a counter every ~16 events whose value always changes.
 *   32 requests are in flight at once.
 * script: what the default script (scripts/io_uring.ut) emits, in batches
 *   of 32 requests per io_uring_enter slice: per request a flow begin
 *   "submit" (op, user_data, flags), a span begin (user_data) and the ring
 *   counter (in_flight, sq_pending, cq_ready); one request in four is
 *   punted to io-wq (a flow step with rw and flags) and completes on a
 *   worker; at completion a flow end (res, cflags), the span end (res,
 *   path) and the counter again.  in_flight changes at every event,
 *   cq_ready at every completion, sq_pending twice per batch (in the traces
 *   of nop_firehose only in_flight changed). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fxt/fxt.h"

#define IN_FLIGHT 32
#define BATCH 32
#define RING_KEY 0xffff888012345000ull
#define APP 4242u
#define WORKER 4300u

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct ut_track ring = { .kind = UT_TRACK_GROUP, .group = "ring", .key = RING_KEY };

static uint64_t mix_flows(struct ut_engine *e, uint64_t requests, uint64_t *ts_out)
{
	uint64_t ts = 1000000, events = 0;
	for (uint64_t r = 0; r < requests + IN_FLIGHT; r++) {
		if (r < requests) {
			struct ut_arg sub[] = {
				{ .name = "opcode", .kind = UT_ARG_UINT, .u = 22 },
				{ .name = "fd", .kind = UT_ARG_INT, .i = 5 },
				{ .name = "len", .kind = UT_ARG_UINT, .u = 4096 },
			};
			ut_flow(e, ts, APP, APP, UT_FLOW_BEGIN, "req", r, "io_uring", "submit", sub, 3);
			ut_span_begin(e, ts, "ring", RING_KEY, r, "io_uring", "READ", NULL, 0);
			ut_flow(e, ts + 200, APP, WORKER + (uint32_t)(r % 4), UT_FLOW_STEP, "req", r,
				"io_uring", "io-wq", NULL, 0);
			events += 3;
		}
		if (r >= IN_FLIGHT) {
			uint64_t done = r - IN_FLIGHT;
			struct ut_arg res = { .name = "res", .kind = UT_ARG_INT, .i = 4096 };
			ut_flow(e, ts + 300, APP, APP, UT_FLOW_END, "req", done, "io_uring", "complete",
				&res, 1);
			ut_span_end(e, ts + 300, "ring", RING_KEY, done, NULL, NULL, 0);
			events += 2;
		}
		if (r % 3 == 0) { /* ~ every 16 events */
			struct ut_arg v = { .name = "completed", .kind = UT_ARG_UINT, .u = r };
			ut_counter(e, ts + 300, &ring, "ring", &v, 1);
			events++;
		}
		ts += 1000;
	}
	*ts_out = ts;
	return events;
}

static void ring_counter(struct ut_engine *e, uint64_t ts, uint64_t inflight, uint64_t sq_pending,
			 uint64_t cq_ready)
{
	struct ut_arg v[] = {
		{ .name = "in_flight", .kind = UT_ARG_UINT, .u = inflight },
		{ .name = "sq_pending", .kind = UT_ARG_UINT, .u = sq_pending },
		{ .name = "cq_ready", .kind = UT_ARG_UINT, .u = cq_ready },
	};
	ut_counter(e, ts, &ring, "ring", v, 3);
}

static uint64_t mix_script(struct ut_engine *e, uint64_t requests, uint64_t *ts_out)
{
	static const char *const cat = "tracepoint:io_uring:io_uring_submit_req";
	const struct ut_track app = { .kind = UT_TRACK_THREAD, .pid = APP, .tid = APP };
	uint64_t ts = 1000000, events = 0;
	for (uint64_t first = 0; first < requests; first += BATCH) {
		uint64_t n = requests - first < BATCH ? requests - first : BATCH;
		struct ut_arg enter[] = {
			{ .name = "fd", .kind = UT_ARG_INT, .i = 3 },
			{ .name = "to_submit", .kind = UT_ARG_UINT, .u = n },
			{ .name = "min_complete", .kind = UT_ARG_UINT, .u = 0 },
			{ .name = "flags", .kind = UT_ARG_PTR, .u = 0 },
		};
		ut_slice_begin(e, ts, &app, "syscalls", "io_uring_enter", enter, 4);
		events++;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = first + i;
			ts += 300;
			struct ut_arg sub[] = {
				{ .name = "op", .kind = UT_ARG_STR, .s = "READ" },
				{ .name = "user_data", .kind = UT_ARG_PTR, .u = r },
				{ .name = "flags", .kind = UT_ARG_PTR, .u = 0 },
			};
			ut_flow(e, ts, APP, APP, UT_FLOW_BEGIN, "request", r, cat, "submit", sub, 3);
			ut_span_begin(e, ts + 50, "ring", RING_KEY, r, cat, "READ", sub + 1, 1);
			ring_counter(e, ts + 100, i + 1, n, 0);
			events += 3;
			if (r % 4 == 0) {
				struct ut_arg async[] = {
					{ .name = "rw", .kind = UT_ARG_INT, .i = 0 },
					{ .name = "flags", .kind = UT_ARG_PTR, .u = 0x80000 },
				};
				ut_flow(e, ts + 200, APP, APP, UT_FLOW_STEP, "request", r, cat,
					"queue_async_work", async, 2);
				events++;
			}
		}
		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = first + i;
			ts += 300;
			uint32_t tid = r % 4 == 0 ? WORKER + (uint32_t)(r / 4 % 4) : APP;
			struct ut_arg done[] = {
				{ .name = "res", .kind = UT_ARG_INT, .i = 4096 },
				{ .name = "cflags", .kind = UT_ARG_PTR, .u = 0 },
				{ .name = "path", .kind = UT_ARG_STR, .s = r % 4 == 0 ? "async (io-wq)" : "inline" },
			};
			ut_flow(e, ts, APP, tid, UT_FLOW_END, "request", r, cat, "READ", done, 2);
			ut_span_end(e, ts + 50, "ring", RING_KEY, r, NULL, (struct ut_arg[]){ done[0], done[2] }, 2);
			ring_counter(e, ts + 100, n - i - 1, 0, i + 1);
			events += 3;
		}
		struct ut_arg ret[] = {
			{ .name = "ret", .kind = UT_ARG_INT, .i = (int64_t)n },
			{ .name = "submitted", .kind = UT_ARG_UINT, .u = n },
			{ .name = "completed", .kind = UT_ARG_UINT, .u = n },
		};
		ts += 300;
		ut_slice_end(e, ts, &app, ret, 3);
		events++;
	}
	*ts_out = ts;
	return events;
}

static int run(const char *label, uint64_t (*mix)(struct ut_engine *, uint64_t, uint64_t *),
	       uint64_t requests, const char *path)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct ut_engine *e = ut_engine_new(w, NULL);
	ut_engine_process_name(e, APP, "app");
	ut_engine_thread_name(e, APP, APP, "app");
	for (uint32_t i = 0; i < 4; i++)
		ut_engine_thread_name(e, APP, WORKER + i, "iou-wrk-4242");
	ut_engine_group_name(e, "ring", RING_KEY, "ring 0 (fd 3)");

	double start = now_seconds();
	uint64_t last_ts;
	uint64_t events = mix(e, requests, &last_ts);
	ut_engine_finish(e, last_ts);
	double elapsed = now_seconds() - start;
	uint64_t bytes = fxt_writer_bytes(w);
	ut_engine_free(e);
	if (fxt_writer_close(w, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%-7s events: %llu in %.3f s: %.2f M events/s, %.1f bytes/event (%llu bytes)\n", label,
	       (unsigned long long)events, elapsed, (double)events / elapsed / 1e6,
	       (double)bytes / (double)events, (unsigned long long)bytes);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t requests = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	const char *path = argc > 2 ? argv[2] : "/tmp/engine_bench.fxt";
	return run("flows", mix_flows, requests, path) || run("script", mix_script, requests, path);
}
