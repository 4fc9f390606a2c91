/* Randomised event streams (fixed seeds) through engine and writer; the
 * reader must find the trace valid and consistent with the engine's own
 * counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/tools.h"
#include "tests/unit/check.h"

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33) % n;
}

static uint64_t stat_value(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

static void run(uint64_t seed, const char *path)
{
	rng_state = seed;
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	struct ut_engine_limits lim = { .max_open_flows = 64, .max_open_slices = 8, .max_open_spans = 32 };
	struct ut_engine *e = ut_engine_new(w, &lim);
	static const char *const names[] = { "read", "write", "fsync", "", "a name with spaces", "é" };
	uint64_t ts = 1;
	for (int i = 0; i < 20000; i++) {
		ts += rnd(3); /* equal timestamps happen */
		uint64_t event_ts = ts > 10 && rnd(50) == 0 ? ts - rnd(10) : ts; /* and some come late */
		uint32_t pid = 1 + rnd(4), tid = pid * 100 + rnd(3);
		struct ut_track t = { .kind = UT_TRACK_THREAD, .pid = pid, .tid = tid };
		if (rnd(4) == 0)
			t = (struct ut_track){ .kind = UT_TRACK_GROUP, .group = rnd(2) ? "ring" : "disk",
					       .key = rnd(3) };
		struct ut_arg args[3] = {
			{ .name = "x", .kind = UT_ARG_INT, .i = (int64_t)rnd(1000) - 500 },
			{ .name = "y", .kind = UT_ARG_UINT, .u = (uint64_t)rnd(7) << rnd(60) },
			{ .name = "z", .kind = UT_ARG_STR, .s = names[rnd(6)] },
		};
		const char *name = names[rnd(6)];
		/* scheduling between the same threads: D slices among theirs */
		static const uint32_t states[] = { UT_TASK_RUNNING, UT_TASK_INTERRUPTIBLE, UT_TASK_UNINTERRUPTIBLE,
						   UT_TASK_UNINTERRUPTIBLE | UT_TASK_NOLOAD, UT_TASK_DEAD };
		struct ut_sched_thread running = { pid, tid, name };
		struct ut_sched_thread other = { 1 + rnd(4), 0, NULL };
		other.tid = rnd(5) ? other.pid * 100 + rnd(3) : 0; /* or the idle task */
		switch (rnd(15)) {
		case 0: case 1:
			ut_slice_begin(e, event_ts, &t, "c", name, args, rnd(4));
			break;
		case 2: case 3:
			ut_slice_end(e, event_ts, &t, args, rnd(2));
			break;
		case 4:
			ut_instant(e, event_ts, &t, "c", name, args, 3);
			break;
		case 5:
			ut_counter(e, event_ts, &t, "n", args, 2);
			break;
		case 6: case 7:
			ut_flow(e, event_ts, pid, tid, (enum ut_flow_phase)rnd(3), "req", rnd(50), "io", name,
				args, rnd(4));
			break;
		case 8: case 9:
			ut_span_begin(e, event_ts, "ring", rnd(2), rnd(40), "io", name, args, rnd(4));
			break;
		case 10:
			ut_span_phase(e, event_ts, "ring", rnd(2), rnd(40), name, NULL, 0);
			break;
		case 11:
			ut_span_end(e, event_ts, "ring", rnd(2), rnd(40), rnd(2) ? NULL : "renamed", args, rnd(2));
			break;
		case 12: case 13:
			ut_sched_switch(e, event_ts, rnd(2), &running, states[rnd(5)], &other);
			break;
		default:
			ut_sched_wakeup(e, event_ts, rnd(2), &other);
			break;
		}
		if (rnd(500) == 0)
			ut_engine_thread_name(e, pid, tid, names[rnd(6)]);
		if (rnd(2000) == 0)
			ut_events_lost(e, ts, ts - rnd(100), rnd(100), "test");
	}
	ut_engine_finish(e, ts);
	struct ut_engine_stats st = *ut_engine_stats(e);
	ut_engine_free(e);
	CHECK("random: writer closes", fxt_writer_close(w, err, sizeof(err)) == 0);

	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);
	int rc = fxt_stats(path, out, false);
	fclose(out);
	char label[96];
	snprintf(label, sizeof(label), "random seed %llu: reader finds the trace valid",
		 (unsigned long long)seed);
	CHECK(label, rc == 0 && stat_value(text, "errors: ") == 0);
	snprintf(label, sizeof(label), "random seed %llu: every slice begun is ended (evicted ones stay open)",
		 (unsigned long long)seed);
	CHECK(label, stat_value(text, "  duration_begin: ") ==
			     stat_value(text, "  duration_end: ") + st.slices_evicted);
	snprintf(label, sizeof(label), "random seed %llu: complete flows match the engine",
		 (unsigned long long)seed);
	CHECK(label, stat_value(text, "flows: ") == st.flows_ended);
	snprintf(label, sizeof(label), "random seed %llu: engine produced output",
		 (unsigned long long)seed);
	CHECK(label, st.events > 10000 && st.flows_begun > 0 && st.spans_begun > 0 &&
		     stat_value(text, "\nscheduling: ") > 1000 && strstr(text, "\"uninterruptible (D)\": "));
	if (rc != 0)
		fputs(text, stdout);
	free(text);
}

int main(void)
{
	char path[] = "/tmp/test_engine_random_XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	for (uint64_t seed = 1; seed <= 5; seed++)
		run(seed, path);
	unlink(path);
	CHECK_DONE();
}
