/* Engine scenarios on synthetic event streams; the trace is read back with
 * the FXT reader and checked line by line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/tools.h"
#include "tests/unit/check.h"

static char path[] = "/tmp/test_engine_scenarios_XXXXXX";
static struct fxt_writer *w;
static char *dump, *stats;
static int dump_rc, stats_rc;

static struct ut_engine *start(const struct ut_engine_limits *lim)
{
	char err[256];
	w = fxt_writer_open(path, err, sizeof(err));
	return ut_engine_new(w, lim);
}

/* Finishes e, closes the trace, reads it back into dump and stats. */
static struct ut_engine_stats finish(struct ut_engine *e, uint64_t last_ts)
{
	ut_engine_finish(e, last_ts);
	struct ut_engine_stats st = *ut_engine_stats(e);
	ut_engine_free(e);
	char err[256];
	if (fxt_writer_close(w, err, sizeof(err)) != 0)
		printf("FAIL close: %s\n", err);
	free(dump);
	free(stats);
	size_t len;
	FILE *out = open_memstream(&dump, &len);
	dump_rc = fxt_dump(path, out);
	fclose(out);
	out = open_memstream(&stats, &len);
	stats_rc = fxt_stats(path, out, false);
	fclose(out);
	return st;
}

static const struct ut_track main_thread = { .kind = UT_TRACK_THREAD, .pid = 100, .tid = 100 };

/* Position of needle in dump, or -1. */
static long at(const char *needle)
{
	const char *p = strstr(dump, needle);
	return p ? p - dump : -1;
}

static int count(const char *needle)
{
	int n = 0;
	for (const char *p = dump; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_nested_slices(void)
{
	struct ut_engine *e = start(NULL);
	ut_engine_thread_name(e, 100, 100, "app");
	ut_slice_begin(e, 10, &main_thread, "c", "outer", NULL, 0);
	ut_slice_begin(e, 20, &main_thread, "c", "inner", NULL, 0);
	struct ut_arg res = { .name = "res", .kind = UT_ARG_INT, .i = -11 };
	ut_slice_end(e, 30, &main_thread, &res, 1);
	ut_slice_end(e, 40, &main_thread, NULL, 0);
	char *report = NULL;
	size_t len;
	FILE *out = open_memstream(&report, &len);
	ut_engine_report_limits(e, out);
	fclose(out);
	CHECK("nested slices: no limit reached, nothing reported", len == 0);
	free(report);
	struct ut_engine_stats st = finish(e, 50);
	long b1 = at("duration_begin ts=10 pid=100 tid=100 cat=\"c\" name=\"outer\"");
	long b2 = at("duration_begin ts=20 pid=100 tid=100 cat=\"c\" name=\"inner\"");
	long e2 = at("duration_end ts=30 pid=100 tid=100 cat=\"c\" name=\"inner\" args={res: int32 -11}");
	long e1 = at("duration_end ts=40 pid=100 tid=100 cat=\"c\" name=\"outer\"");
	CHECK("nested slices: begin outer, begin inner, end inner (with args), end outer",
	      b1 >= 0 && b1 < b2 && b2 < e2 && e2 < e1);
	CHECK("nested slices: thread named with its process (a main thread's name when the process has none)",
	      at("kernel_object thread koid=100 name=\"app\" args={process: koid 100}") >= 0 &&
		      at("kernel_object process koid=100 name=\"app\"") >= 0);
	CHECK("nested slices: nothing unmatched or unfinished",
	      st.slices_unmatched_end == 0 && st.slices_unfinished == 0 && st.events == 4);
	CHECK("nested slices: trace valid", dump_rc == 0 && stats_rc == 0);
}

static void test_lost_begin_and_end(void)
{
	struct ut_engine *e = start(NULL);
	ut_slice_end(e, 5, &main_thread, NULL, 0); /* lost begin */
	ut_slice_begin(e, 10, &main_thread, "c", "open", NULL, 0); /* lost end */
	struct ut_engine_stats st = finish(e, 99);
	CHECK("lost begin: end counted, not written", st.slices_unmatched_end == 1 &&
							  count("duration_end") == 1);
	CHECK("lost end: closed at finish, marked unfinished",
	      st.slices_unfinished == 1 &&
		      at("duration_end ts=99 pid=100 tid=100 cat=\"c\" name=\"open\" args={unfinished: bool true}") >= 0);
	CHECK("lost begin/end: trace valid", dump_rc == 0);
}

/* Each flow record comes right after an instant with the same time,
 * thread, category and name (the slice Perfetto binds it to). */
static bool flow_points_on_instants(void)
{
	int points = 0;
	for (const char *p = dump; (p = strstr(p, "event flow_")); p++) {
		const char *line = p;
		while (line > dump && line[-1] != '\n')
			line--;
		if (line == dump)
			return false;
		const char *prev = line - 1;
		while (prev > dump && prev[-1] != '\n')
			prev--;
		/* from "ts=" to " id=" must match the instant's from "ts=" */
		const char *same = strstr(p, "ts="), *same_end = strstr(p, " id=");
		const char *prev_ts = strstr(prev, "ts=");
		if (strncmp(strchr(prev, ' ') + 1, "event instant ", 14) != 0 || !prev_ts ||
		    prev_ts > line || strncmp(prev_ts, same, (size_t)(same_end - same)) != 0)
			return false;
		points++;
	}
	return points > 0;
}

static void test_flows_across_threads(void)
{
	struct ut_engine *e = start(NULL);
	/* two interleaved requests: submitted by 100/100, served by workers in
	 * another process 200, completed back on 100/101 */
	ut_flow(e, 10, 100, 100, UT_FLOW_BEGIN, "req", 1, "io", "submit", NULL, 0);
	ut_flow(e, 11, 100, 100, UT_FLOW_BEGIN, "req", 2, "io", "submit", NULL, 0);
	ut_flow(e, 20, 200, 201, UT_FLOW_STEP, "req", 2, "io", "work", NULL, 0);
	ut_flow(e, 21, 200, 202, UT_FLOW_STEP, "req", 1, "io", "work", NULL, 0);
	ut_flow(e, 30, 100, 101, UT_FLOW_END, "req", 1, "io", "complete", NULL, 0);
	ut_flow(e, 31, 100, 101, UT_FLOW_END, "req", 2, "io", "complete", NULL, 0);
	struct ut_engine_stats st = finish(e, 40);
	CHECK("flows: both complete", strstr(stats, "flows: 2 complete, 0 incomplete") != NULL);
	CHECK("flows: distinct ids per flow",
	      at("flow_step ts=20 pid=200 tid=201 cat=\"io\" name=\"work\" id=2") >= 0 &&
		      at("flow_step ts=21 pid=200 tid=202 cat=\"io\" name=\"work\" id=1") >= 0);
	CHECK("flows: each point an instant on its own thread, then the flow record",
	      flow_points_on_instants() &&
		      at("event instant ts=20 pid=200 tid=201 cat=\"io\" name=\"work\"\n") >= 0);
	CHECK("flows: no point outside a slice (as Perfetto binds them)",
	      strstr(stats, ", 0 points outside any slice") != NULL);
	CHECK("flows: counted", st.flows_begun == 2 && st.flows_ended == 2 && st.flows_without_begin == 0);
}

static void test_flow_key_reuse_and_missing_begin(void)
{
	struct ut_engine *e = start(NULL);
	ut_flow(e, 10, 100, 100, UT_FLOW_BEGIN, "req", 7, "io", "a", NULL, 0);
	ut_flow(e, 11, 100, 100, UT_FLOW_END, "req", 7, "io", "b", NULL, 0);
	ut_flow(e, 12, 100, 100, UT_FLOW_BEGIN, "req", 7, "io", "a", NULL, 0);
	ut_flow(e, 13, 100, 100, UT_FLOW_END, "req", 7, "io", "b", NULL, 0);
	ut_flow(e, 14, 100, 100, UT_FLOW_STEP, "req", 8, "io", "s", NULL, 0); /* no begin */
	ut_flow(e, 15, 100, 100, UT_FLOW_END, "req", 8, "io", "b", NULL, 0);
	ut_flow(e, 16, 100, 100, UT_FLOW_STEP, "other", 7, "io", "s", NULL, 0); /* other kind */
	struct ut_engine_stats st = finish(e, 20);
	CHECK("key reuse: a new flow with a new id",
	      at("flow_begin ts=10 pid=100 tid=100 cat=\"io\" name=\"a\" id=1") >= 0 &&
		      at("flow_begin ts=12 pid=100 tid=100 cat=\"io\" name=\"a\" id=2") >= 0 &&
		      at("flow_end ts=13 pid=100 tid=100 cat=\"io\" name=\"b\" id=2") >= 0);
	CHECK("step without begin starts the flow there",
	      at("flow_begin ts=14 pid=100 tid=100 cat=\"io\" name=\"s\" id=3") >= 0 &&
		      at("flow_end ts=15 pid=100 tid=100 cat=\"io\" name=\"b\" id=3") >= 0);
	CHECK("flow kinds are separate key spaces",
	      at("flow_begin ts=16 pid=100 tid=100 cat=\"io\" name=\"s\" id=4") >= 0);
	CHECK("flows without begin counted", st.flows_without_begin == 2 && st.flows_ended == 3);
	CHECK("key reuse: reader sees 3 complete, 1 incomplete",
	      strstr(stats, "flows: 3 complete, 1 incomplete") != NULL);
}

/* The tid of the first duration_begin named name. */
static unsigned long tid_of(const char *name)
{
	char needle[128];
	snprintf(needle, sizeof(needle), "name=\"%s\"", name);
	const char *p = strstr(dump, needle);
	if (!p)
		return 0;
	while (p > dump && strncmp(p, "tid=", 4) != 0)
		p--;
	return strtoul(p + 4, NULL, 10);
}

static void test_span_lanes(void)
{
	struct ut_engine *e = start(NULL);
	ut_engine_group_name(e, "ring", 0xabc, "ring 3");
	ut_span_begin(e, 10, "ring", 0xabc, 1, "io", "A", NULL, 0);
	ut_span_begin(e, 11, "ring", 0xabc, 2, "io", "B", NULL, 0);
	ut_span_begin(e, 12, "ring", 0xabc, 3, "io", "C", NULL, 0);
	ut_span_phase(e, 13, "ring", 0xabc, 2, "queue", NULL, 0);
	ut_span_phase(e, 14, "ring", 0xabc, 2, "service", NULL, 0);
	struct ut_arg res = { .name = "res", .kind = UT_ARG_INT, .i = 4096 };
	ut_span_end(e, 15, "ring", 0xabc, 2, "B done", &res, 1);
	ut_span_begin(e, 16, "ring", 0xabc, 4, "io", "D", NULL, 0);
	ut_span_begin(e, 17, "ring", 0xabc, 5, "io", "E", NULL, 0);
	ut_span_end(e, 18, "ring", 0xabc, 99, NULL, NULL, 0); /* never began */
	ut_span_begin(e, 19, "disk", 1, 1, "io", "F", NULL, 0); /* another group */
	struct ut_engine_stats st = finish(e, 30);
	unsigned long a = tid_of("A"), b = tid_of("B"), c = tid_of("C"), d = tid_of("D"),
		      x = tid_of("E"), f = tid_of("F");
	CHECK("lanes: concurrent spans on distinct lanes", a && b && c && a != b && b != c && a != c);
	CHECK("lanes: a freed lane is reused by the next span", d == b);
	CHECK("lanes: then a new lane", x != a && x != b && x != c);
	CHECK("lanes: lanes are threads of the group's synthetic process",
	      a >= 0x40000000 && at("kernel_object process koid=1073741824 name=\"ring 3\"") >= 0 &&
		      at("name=\"lane 3\" args={process: koid 1073741824}") >= 0);
	CHECK("lanes: other groups have their own process",
	      f > x && at("kernel_object process koid=") >= 0 && strstr(dump, "name=\"disk 0x1\""));
	CHECK("span phases nest inside the span, end renames and carries args",
	      at("duration_begin ts=13") < at("duration_end ts=14") &&
		      at("duration_begin ts=14") < at("duration_end ts=15") &&
		      at("name=\"service\"\n") < at("name=\"B done\" args={res: int32 4096}") &&
		      at("name=\"B done\" args={res: int32 4096}") >= 0);
	CHECK("spans counted", st.spans_begun == 6 && st.spans_ended == 1 &&
				       st.spans_without_begin == 1 && st.slices_unfinished == 5);
	CHECK("spans: trace valid", dump_rc == 0 && stats_rc == 0);
}

static void test_counters_instants_lost(void)
{
	struct ut_engine *e = start(NULL);
	const struct ut_track ring = { .kind = UT_TRACK_GROUP, .group = "ring", .key = 5 };
	struct ut_arg v[] = { { .name = "inflight", .kind = UT_ARG_UINT, .u = 3 },
			      { .name = "ratio", .kind = UT_ARG_DOUBLE, .d = 0.5 } };
	ut_counter(e, 10, &ring, "ring", v, 2);
	ut_instant(e, 11, &main_thread, "sched", "wakeup", NULL, 0);
	ut_events_lost(e, 12, 5, 77, "ring buffer");
	struct ut_engine_stats st = finish(e, 20);
	CHECK("counter: one record with the values, on the group's thread, id = thread",
	      at("event counter ts=10 pid=1073741824 tid=1073741825 cat=\"\" name=\"ring\" "
		 "args={inflight: uint32 3, ratio: double 0.5} counter_id=1073741825") >= 0);
	CHECK("instant on a real thread",
	      at("event instant ts=11 pid=100 tid=100 cat=\"sched\" name=\"wakeup\"") >= 0);
	CHECK("lost marker on the uring-trace track",
	      at("kernel_object process koid=1073741826 name=\"uring-trace\"") >= 0 &&
		      at("name=\"events lost\" args={lost: uint32 77, since_ns: uint32 7, what: string \"ring buffer\"}") >= 0 &&
		      st.lost_markers == 1);
}

/* A loss ends what is open: its end may be among the lost events, and the
 * next end with its key may be another item's, whose begin was lost too. */
static void test_loss_cuts_open(void)
{
	struct ut_engine *e = start(NULL);
	ut_slice_begin(e, 10, &main_thread, "sys", "io_uring_enter", NULL, 0);
	ut_flow(e, 11, 100, 100, UT_FLOW_BEGIN, "req", 7, "io", "submit", NULL, 0);
	ut_span_begin(e, 11, "ring", 1, 7, "io", "first", NULL, 0);
	ut_events_lost(e, 20, 15, 3, "ring buffer");
	/* after the loss: the ends of items begun again in the lost events */
	ut_slice_end(e, 30, &main_thread, NULL, 0);
	ut_span_end(e, 31, "ring", 1, 7, NULL, NULL, 0);
	ut_flow(e, 31, 100, 100, UT_FLOW_END, "req", 7, "io", "complete", NULL, 0);
	struct ut_engine_stats st = finish(e, 40);
	CHECK("loss: the open slice and span end at the loss, marked",
	      at("duration_end ts=20 pid=100 tid=100 cat=\"sys\" name=\"io_uring_enter\" args={cut_by_lost_events: bool true}") >= 0 &&
		      at("duration_end ts=20 pid=1073741824 tid=1073741826 cat=\"io\" name=\"first\" args={cut_by_lost_events: bool true}") >= 0 &&
		      st.slices_cut == 1 && st.spans_cut == 1 && st.flows_cut == 1);
	CHECK("loss: later ends find nothing open (not ended twice, not attached)",
	      count("duration_end") == 2 && st.slices_unmatched_end == 1 && st.spans_without_begin == 1 &&
		      at("flow_begin ts=31 pid=100 tid=100 cat=\"io\" name=\"complete\" id=2") >= 0);
	CHECK("loss: trace valid", dump_rc == 0 && stats_rc == 0);
}

/* Events given out of time order are written in order: at the time of the
 * newest written before them (counted). */
static void test_time_order(void)
{
	struct ut_engine *e = start(NULL);
	ut_slice_begin(e, 50, &main_thread, "c", "late begin", NULL, 0);
	ut_instant(e, 40, &main_thread, "c", "older", NULL, 0);
	ut_slice_end(e, 30, &main_thread, NULL, 0);
	ut_flow(e, 60, 100, 101, UT_FLOW_BEGIN, "req", 1, "io", "submit", NULL, 0);
	ut_flow(e, 55, 100, 100, UT_FLOW_END, "req", 1, "io", "complete", NULL, 0);
	struct ut_engine_stats st = finish(e, 70);
	CHECK("time order: older events written at the time of their thread's or flow's newest",
	      at("event instant ts=50 pid=100 tid=100 cat=\"c\" name=\"older\"") >= 0 &&
		      at("duration_end ts=50 pid=100 tid=100") >= 0 &&
		      at("flow_end ts=60 pid=100 tid=100") >= 0 && st.events_late == 3);
	CHECK("time order: trace valid", dump_rc == 0 && stats_rc == 0 && strstr(stats, "errors: 0\n"));
}

/* Unchanged values are skipped per series (counter name, value name),
 * whatever order and subset of values a record has. */
static void test_counter_series(void)
{
	struct ut_engine *e = start(NULL);
	struct ut_arg ab[] = { { .name = "a", .kind = UT_ARG_UINT, .u = 1 }, { .name = "b", .kind = UT_ARG_UINT, .u = 2 } };
	struct ut_arg ba[] = { { .name = "b", .kind = UT_ARG_UINT, .u = 2 }, { .name = "a", .kind = UT_ARG_UINT, .u = 3 } };
	struct ut_arg a3[] = { { .name = "a", .kind = UT_ARG_UINT, .u = 3 } };
	struct ut_arg b5[] = { { .name = "b", .kind = UT_ARG_UINT, .u = 5 } };
	ut_counter(e, 10, &main_thread, "c", ab, 2);
	ut_counter(e, 11, &main_thread, "c", ba, 2);
	ut_counter(e, 12, &main_thread, "c", a3, 1);
	ut_counter(e, 13, &main_thread, "d", a3, 1);
	ut_counter(e, 14, &main_thread, "c", b5, 1);
	ut_counter(e, 15, &main_thread, "c", ba, 2);
	struct ut_engine_stats st = finish(e, 20);
	CHECK("series: both values first",
	      at("ts=10 pid=100 tid=100 cat=\"\" name=\"c\" args={a: uint32 1, b: uint32 2}") >= 0);
	CHECK("series: values in another order, only the changed one",
	      at("ts=11 pid=100 tid=100 cat=\"\" name=\"c\" args={a: uint32 3}") >= 0);
	CHECK("series: a value alone, unchanged: no record", at("ts=12 ") < 0);
	CHECK("series: same value name under another counter name is its own series",
	      at("ts=13 pid=100 tid=100 cat=\"\" name=\"d\" args={a: uint32 3}") >= 0);
	CHECK("series: the second value alone", at("ts=14 pid=100 tid=100 cat=\"\" name=\"c\" args={b: uint32 5}") >= 0);
	CHECK("series: b back to 2, a unchanged",
	      at("ts=15 pid=100 tid=100 cat=\"\" name=\"c\" args={b: uint32 2}") >= 0);
	CHECK("series: unchanged values counted", st.counters_unchanged == 3);
}

static void test_limits(void)
{
	struct ut_engine_limits lim = { .max_open_flows = 4, .max_open_slices = 3, .max_open_spans = 2 };
	struct ut_engine *e = start(&lim);
	for (uint64_t k = 0; k < 10; k++)
		ut_flow(e, 10 + k, 100, 100, UT_FLOW_BEGIN, "req", k, "io", "f", NULL, 0);
	ut_flow(e, 30, 100, 100, UT_FLOW_END, "req", 9, "io", "f", NULL, 0);  /* still open */
	ut_flow(e, 31, 100, 100, UT_FLOW_END, "req", 0, "io", "f", NULL, 0);  /* evicted */
	for (int i = 0; i < 5; i++)
		ut_slice_begin(e, 40, &main_thread, "c", "deep", NULL, 0);
	for (uint64_t k = 0; k < 3; k++)
		ut_span_begin(e, 50 + k, "ring", 1, k, "io", "s", NULL, 0);
	struct ut_engine_stats st = finish(e, 60);
	CHECK("limits: oldest flows evicted", st.flows_evicted == 6 && st.flows_ended == 1 &&
						      st.flows_without_begin == 1);
	CHECK("limits: oldest slices evicted past the per-track limit",
	      st.slices_evicted == 2 && st.slices_unfinished == 3 + 2);
	CHECK("limits: oldest span ended as evicted",
	      st.spans_evicted == 1 && at("duration_end ts=52") >= 0 &&
		      strstr(dump, "args={evicted: bool true}"));
}

static void test_thread_limit(void)
{
	struct ut_engine_limits lim = { .max_threads = 2 };
	struct ut_engine *e = start(&lim);
	const struct ut_track a = { .kind = UT_TRACK_THREAD, .pid = 100, .tid = 101 };
	const struct ut_track b = { .kind = UT_TRACK_THREAD, .pid = 200, .tid = 201 };
	const struct ut_track c = { .kind = UT_TRACK_THREAD, .pid = 200, .tid = 202 };
	const struct ut_track d = { .kind = UT_TRACK_THREAD, .pid = 300, .tid = 301 };
	const struct ut_arg v = { .name = "v", .kind = UT_ARG_UINT, .u = 1 };
	ut_engine_thread_name(e, 100, 101, "a");
	ut_slice_begin(e, 10, &a, "c", "open in a", NULL, 0);
	ut_engine_thread_name(e, 200, 201, "b");
	ut_instant(e, 15, &b, "c", "in b", NULL, 0);
	ut_instant(e, 20, &a, "c", "a again", NULL, 0);    /* a is now more recent than b */
	ut_slice_begin(e, 30, &c, "c", "in c", NULL, 0);   /* evicts b */
	ut_slice_end(e, 40, &a, NULL, 0);                  /* a was kept */
	ut_slice_begin(e, 50, &b, "c", "b back", NULL, 0); /* evicts c, its slice open */
	ut_counter(e, 60, &d, "n", &v, 1);                 /* evicts a, the last of process 100 */
	ut_instant(e, 70, &a, "c", "a back", NULL, 0);     /* evicts b, the last of process 200 */
	char *report = NULL;
	size_t len;
	FILE *out = open_memstream(&report, &len);
	ut_engine_report_limits(e, out);
	fclose(out);
	CHECK("thread limit: reported with the other limits",
	      strstr(report, "limits reached") && strstr(report, " 0 open flows (of 1048576)") &&
		      strstr(report, " 4 threads (of 2 kept)\n"));
	free(report);
	struct ut_engine_stats st = finish(e, 80);
	CHECK("thread limit: least recently used evicted (b, c, a, b)",
	      st.threads_evicted == 4 && st.slices_unmatched_end == 0 &&
		      at("duration_end ts=40 pid=100 tid=101 cat=\"c\" name=\"open in a\"\n") >= 0);
	CHECK("thread limit: an evicted thread's open slices end at eviction, marked",
	      at("duration_end ts=50 pid=200 tid=202 cat=\"c\" name=\"in c\" args={evicted: bool true}") >= 0 &&
		      at("duration_end ts=70 pid=200 tid=201 cat=\"c\" name=\"b back\" args={evicted: bool true}") >= 0);
	CHECK("thread limit: a process goes with its last kept thread, and is named again on return",
	      st.processes_evicted == 2 && count("kernel_object process koid=200 ") == 1 &&
		      count("kernel_object process koid=100 ") == 2);
	CHECK("thread limit: trace valid, every slice ended",
	      dump_rc == 0 && stats_rc == 0 && st.slices_unfinished == 0 &&
		      count("duration_begin") == count("duration_end"));
}

/* The kernel names each task a probe ran on; a task with no record in
 * the trace stays out of it (no empty named process), one that has records
 * gets its name with the first, and a rename (exec) of one written is
 * written at once. */
static void test_names_written_with_first_record(void)
{
	struct ut_engine *e = start(NULL);
	const struct ut_track t = { .kind = UT_TRACK_THREAD, .pid = 100, .tid = 101 };
	ut_engine_thread_name(e, 300, 301, "bystander");
	ut_engine_process_name(e, 300, "bystander");
	ut_engine_thread_name(e, 100, 101, "worker");
	ut_engine_process_name(e, 100, "app");
	ut_instant(e, 10, &t, "c", "first", NULL, 0);
	ut_engine_thread_name(e, 100, 101, "after-exec");
	ut_engine_process_name(e, 100, "after-exec");
	ut_instant(e, 20, &t, "c", "second", NULL, 0);
	struct ut_engine_stats st = finish(e, 30);
	(void)st;
	long thread = at("kernel_object thread koid=101 name=\"worker\""), first = at("name=\"first\"");
	CHECK("names: a task with no record is not in the trace",
	      count("koid=300") == 0 && count("koid=301") == 0 && !strstr(dump, "bystander"));
	CHECK("names: the kernel's names are written before the thread's first record",
	      thread >= 0 && at("kernel_object process koid=100 name=\"app\"") >= 0 && thread < first &&
		      !strstr(dump, "name=\"thread 101\"") && !strstr(dump, "name=\"process 100\""));
	long renamed = at("kernel_object thread koid=101 name=\"after-exec\"");
	CHECK("names: a rename of a thread in the trace is written at once",
	      renamed > first && renamed < at("name=\"second\"") &&
		      at("kernel_object process koid=100 name=\"after-exec\"") > first);
	CHECK("names: trace valid", dump_rc == 0 && stats_rc == 0);
}

static void test_many_threads_and_strings(void)
{
	struct ut_engine *e = start(NULL);
	char name[32];
	for (uint32_t t = 0; t < 1000; t++) {
		snprintf(name, sizeof(name), "worker-%u", t);
		ut_engine_thread_name(e, 500 + t % 7, 10000 + t, name);
	}
	for (int round = 0; round < 3; round++)
		for (uint32_t t = 0; t < 1000; t++) {
			const struct ut_track tr = { .kind = UT_TRACK_THREAD, .pid = 500 + t % 7, .tid = 10000 + t };
			ut_instant(e, 100 + t, &tr, "c", "tick", NULL, 0);
		}
	/* 100k distinct strings: three times the string table */
	for (uint32_t i = 0; i < 100000; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		struct ut_arg a = { .name = "v", .kind = UT_ARG_STR, .s = name };
		ut_instant(e, 5000 + i, &main_thread, "c", name, &a, 1);
	}
	finish(e, 200000);
	CHECK("1000 threads through 255 thread slots: trace valid", dump_rc == 0 && stats_rc == 0);
	CHECK("1000 threads: every instant on its own thread",
	      at("event instant ts=1099 pid=505 tid=10999 cat=\"c\" name=\"tick\"") >= 0 &&
		      count("name=\"tick\"") == 3000);
	CHECK("1000 threads: named under their processes",
	      strstr(stats, "tid 10999 pid 505 \"worker-999\"") != NULL);
	CHECK("100k strings through 32767 slots: names resolve after eviction",
	      at("event instant ts=5000 pid=100 tid=100 cat=\"c\" name=\"s0\" args={v: string \"s0\"}") >= 0 &&
		      at("event instant ts=104999 pid=100 tid=100 cat=\"c\" name=\"s99999\" args={v: string \"s99999\"}") >= 0 &&
		      at("name=\"s54321\" args={v: string \"s54321\"}") >= 0);
	CHECK("100k strings: string slots reused", at("string index=32767 ") >= 0 &&
							   count("string index=1 ") > 2);
}

static const struct ut_track worker_track = { .kind = UT_TRACK_THREAD, .pid = 100, .tid = 101 };
static const struct ut_sched_thread worker = { .pid = 100, .tid = 101, .name = "worker" };
static const struct ut_sched_thread other = { .pid = 200, .tid = 201, .name = "other" };
static const struct ut_sched_thread idle = { 0 };

/* Linux states as Perfetto shows them, and D made visible: a worker's
 * request sleeps in D (a slice nested in the request's), is woken, waits
 * for the CPU, runs; is preempted by a thread not seen before, which then
 * sleeps interruptibly. */
static void test_sched_states(void)
{
	struct ut_engine *e = start(NULL);
	ut_engine_thread_name(e, 100, 101, "iou-wrk-100");
	ut_slice_begin(e, 10, &worker_track, "io", "work", NULL, 0);
	ut_sched_switch(e, 20, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	ut_sched_wakeup(e, 50, 0, &worker);
	ut_sched_switch(e, 60, 0, &idle, UT_TASK_RUNNING, &worker);
	ut_slice_end(e, 70, &worker_track, NULL, 0);
	ut_sched_switch(e, 80, 1, &worker, UT_TASK_RUNNING, &other);
	ut_sched_switch(e, 90, 1, &other, UT_TASK_INTERRUPTIBLE, &worker);
	struct ut_engine_stats st = finish(e, 100);
	CHECK("sched: switch to idle, worker blocked, its Linux state kept",
	      at("context_switch ts=20 cpu=0 outgoing_tid=101 outgoing_state=blocked incoming_tid=0 "
		 "args={linux_state: uint32 2, incoming_weight: int32 -2147483648}\n") >= 0);
	CHECK("sched: the wakeup", at("thread_wakeup ts=50 cpu=0 tid=101\n") >= 0);
	CHECK("sched: switch from idle", at("context_switch ts=60 cpu=0 outgoing_tid=0 outgoing_state=running "
					    "incoming_tid=101 args={outgoing_weight: int32 -2147483648}\n") >= 0);
	long work = at("duration_begin ts=10 pid=100 tid=101 cat=\"io\" name=\"work\"");
	long d_begin = at("duration_begin ts=20 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"");
	long d_end = at("duration_end ts=50 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"\n");
	long work_end = at("duration_end ts=70 pid=100 tid=101 cat=\"io\" name=\"work\"\n");
	CHECK("sched: D from the switch out to the wakeup, nested in the request's slice",
	      work >= 0 && work < d_begin && d_begin < d_end && d_end < work_end &&
		      count("name=\"uninterruptible (D)\"") == 2);
	CHECK("sched: a preempted thread is runnable",
	      at("context_switch ts=80 cpu=1 outgoing_tid=101 outgoing_state=running incoming_tid=201 "
		 "args={linux_state: uint32 0}\n") >= 0);
	long named = at("kernel_object thread koid=201 name=\"other\" args={process: koid 200}");
	CHECK("sched: a thread not seen before is named before its first scheduling record",
	      named >= 0 && named < at("context_switch ts=80 ") &&
		      at("kernel_object process koid=200 name=\"process 200\"") >= 0);
	CHECK("sched: interruptible sleep is blocked, no slice",
	      at("context_switch ts=90 cpu=1 outgoing_tid=201 outgoing_state=blocked incoming_tid=101 "
		 "args={linux_state: uint32 1}\n") >= 0 && count("pid=200 tid=201 cat=\"sched\"") == 0);
	CHECK("sched: a name never renames a thread seen", count("kernel_object thread koid=101 ") == 1);
	CHECK("sched: stats counts per thread",
	      strstr(stats, "tid 101 pid 100 \"iou-wrk-100\" scheduling: 2 switched in, 2 out, 1 woken\n") &&
		      strstr(stats, "tid 201 pid 200 \"other\" scheduling: 1 switched in, 1 out, 0 woken\n") &&
		      strstr(stats, "scheduling: 4 context switches, 1 wakeups\n"));
	CHECK("sched: calls counted, nothing late", st.events == 7 && st.events_late == 0);
	CHECK("sched: trace valid", dump_rc == 0 && stats_rc == 0 && strstr(stats, "errors: 0\n"));
}

static void test_sched_state_mapping(void)
{
	CHECK("Linux states: running (preempted) is runnable",
	      ut_sched_state_of(UT_TASK_RUNNING) == UT_SCHED_RUNNABLE);
	CHECK("Linux states: S, and TASK_IDLE and parked (0x40) sleep",
	      ut_sched_state_of(UT_TASK_INTERRUPTIBLE) == UT_SCHED_SLEEPING &&
		      ut_sched_state_of(UT_TASK_UNINTERRUPTIBLE | UT_TASK_NOLOAD) == UT_SCHED_SLEEPING &&
		      ut_sched_state_of(0x40) == UT_SCHED_SLEEPING);
	CHECK("Linux states: D, killable D (0x102) and rtlock waits are uninterruptible",
	      ut_sched_state_of(UT_TASK_UNINTERRUPTIBLE) == UT_SCHED_UNINTERRUPTIBLE &&
		      ut_sched_state_of(0x100 | UT_TASK_UNINTERRUPTIBLE) == UT_SCHED_UNINTERRUPTIBLE &&
		      ut_sched_state_of(UT_TASK_RTLOCK_WAIT) == UT_SCHED_UNINTERRUPTIBLE);
	CHECK("Linux states: stopped (0x104) and traced", ut_sched_state_of(0x104) == UT_SCHED_STOPPED &&
								 ut_sched_state_of(UT_TASK_TRACED) == UT_SCHED_STOPPED);
	CHECK("Linux states: dead and zombie", ut_sched_state_of(UT_TASK_DEAD) == UT_SCHED_DEAD &&
						       ut_sched_state_of(UT_EXIT_DEAD) == UT_SCHED_DEAD &&
						       ut_sched_state_of(UT_EXIT_ZOMBIE) == UT_SCHED_DYING);
	struct ut_engine *e = start(NULL);
	ut_sched_switch(e, 10, 0, &worker, 0x104, &idle);
	ut_sched_switch(e, 20, 0, &idle, 0, &worker);
	ut_sched_switch(e, 30, 0, &worker, UT_TASK_UNINTERRUPTIBLE | UT_TASK_NOLOAD, &idle);
	ut_sched_switch(e, 40, 0, &idle, 0, &worker);
	ut_sched_switch(e, 50, 0, &worker, UT_TASK_DEAD, &idle);
	finish(e, 60);
	CHECK("Linux states: as FXT states",
	      at("context_switch ts=10 cpu=0 outgoing_tid=101 outgoing_state=suspended ") >= 0 &&
		      at("context_switch ts=30 cpu=0 outgoing_tid=101 outgoing_state=blocked ") >= 0 &&
		      at("context_switch ts=50 cpu=0 outgoing_tid=101 outgoing_state=dead ") >= 0);
	CHECK("Linux states: only D draws a slice", count("duration_begin") == 0 && stats_rc == 0);
}

/* The D slice ends at the thread's switch in when its wakeup was not
 * seen, at its next event when neither was, and an end meant for another
 * slice of the thread never ends it in that slice's place. */
static void test_sched_d_slice_ends(void)
{
	struct ut_engine *e = start(NULL);
	ut_slice_begin(e, 10, &worker_track, "sys", "enter", NULL, 0);
	ut_sched_switch(e, 20, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &other);
	ut_sched_switch(e, 30, 0, &other, UT_TASK_INTERRUPTIBLE, &worker);
	ut_sched_switch(e, 40, 1, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	ut_slice_end(e, 50, &worker_track, NULL, 0);
	ut_sched_switch(e, 60, 1, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	ut_flow(e, 70, 100, 101, UT_FLOW_BEGIN, "req", 1, "io", "submit", NULL, 0);
	ut_sched_switch(e, 80, 1, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	ut_sched_switch(e, 90, 1, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	finish(e, 100);
	CHECK("D ends at the switch in", at("duration_end ts=30 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"\n") >= 0);
	long d_end = at("duration_end ts=50 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"\n");
	long enter_end = at("duration_end ts=50 pid=100 tid=101 cat=\"sys\" name=\"enter\"\n");
	CHECK("D ends at the thread's next event, before the slice end meant for its request",
	      d_end >= 0 && d_end < enter_end);
	long flow_d_end = at("duration_end ts=70 pid=100 tid=101 cat=\"sched\"");
	CHECK("D ends before a flow point of the thread (which binds to its instant)",
	      flow_d_end >= 0 && flow_d_end < at("event instant ts=70 pid=100 tid=101"));
	CHECK("D ends at the thread's next switch out when it ran unseen",
	      at("duration_end ts=90 pid=100 tid=101 cat=\"sched\"") >= 0 &&
		      at("duration_end ts=100 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\" args={unfinished: bool true}") >= 0);
	CHECK("D slices: every begin ended, trace valid",
	      count("duration_begin") == count("duration_end") && dump_rc == 0 && stats_rc == 0 &&
		      strstr(stats, "errors: 0\n"));
}

/* A loss ends an open D slice with the rest; the thread's switch in then
 * ends nothing.  Scheduling records go in time order across the trace
 * whatever the caller gives; limits and the size cap hold. */
static void test_sched_losses_order_limits(void)
{
	struct ut_engine *e = start(NULL);
	ut_slice_begin(e, 10, &worker_track, "io", "work", NULL, 0);
	ut_sched_switch(e, 20, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &idle);
	ut_events_lost(e, 30, 25, 4, "ring buffer");
	ut_sched_switch(e, 40, 0, &idle, 0, &worker);
	ut_slice_end(e, 50, &worker_track, NULL, 0);
	struct ut_engine_stats st = finish(e, 60);
	CHECK("sched loss: the D slice is cut with the rest",
	      at("duration_end ts=30 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\" args={cut_by_lost_events: bool true}") >= 0 &&
		      at("duration_end ts=30 pid=100 tid=101 cat=\"io\" name=\"work\" args={cut_by_lost_events: bool true}") >= 0 &&
		      st.slices_cut == 2);
	CHECK("sched loss: the switch in ends nothing more", count("duration_end") == 2 &&
								  st.slices_unmatched_end == 1 &&
								  dump_rc == 0 && stats_rc == 0);

	e = start(NULL);
	ut_sched_switch(e, 100, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &other);
	ut_sched_wakeup(e, 90, 1, &worker);                         /* another cpu, older */
	ut_sched_switch(e, 95, 1, &idle, 0, &worker);               /* older still */
	st = finish(e, 110);
	CHECK("sched order: older records written at the newest one's time, counted",
	      at("thread_wakeup ts=100 cpu=1 tid=101") >= 0 &&
		      at("context_switch ts=100 cpu=1 outgoing_tid=0 ") >= 0 && st.events_late == 2);
	CHECK("sched order: D begun and ended in order, trace valid",
	      at("duration_end ts=100 pid=100 tid=101 cat=\"sched\"") >= 0 && stats_rc == 0 &&
		      strstr(stats, "errors: 0\n"));

	/* one thread kept: the incoming thread's track forgets the outgoing
	 * one's, its D slice ended as evicted */
	struct ut_engine_limits one = { .max_threads = 1 };
	e = start(&one);
	ut_sched_switch(e, 10, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &other);
	ut_sched_switch(e, 20, 0, &other, UT_TASK_UNINTERRUPTIBLE, &worker);
	st = finish(e, 30);
	CHECK("sched thread limit: both switches written, slices ended as evicted",
	      count("context_switch") == 2 && st.threads_evicted == 2 &&
		      at("duration_end ts=10 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\" args={evicted: bool true}") >= 0 &&
		      count("duration_begin") == count("duration_end") && stats_rc == 0);

	/* the size cap: records stop at it, the trace ends whole */
	struct ut_engine_limits capped = { .max_bytes = 128 << 10 };
	e = start(&capped);
	for (uint64_t k = 0; k < 20000; k++) {
		ut_sched_switch(e, 10 * k, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &other);
		ut_sched_wakeup(e, 10 * k + 3, 0, &worker);
		ut_sched_switch(e, 10 * k + 5, 0, &other, UT_TASK_RUNNING, &worker);
	}
	st = finish(e, 200000);
	long cut = at("name=\"trace cut: --max-size reached\"");
	CHECK("sched size cap: cut, nothing after the marker, trace valid",
	      cut >= 0 && !strstr(dump + cut, "context_switch") && !strstr(dump + cut, "thread_wakeup") &&
		      st.events_cut > 0 && dump_rc == 0);
	struct stat file;
	CHECK("sched size cap: an open D slice ends where the trace was cut, marked cut, within the cap",
	      stat(path, &file) == 0 && file.st_size <= 128 << 10 && stats_rc == 0 && strstr(stats, "errors: 0\n") &&
		      strstr(stats, "slices open at the end: 0\n") && count("duration_begin") == count("duration_end") &&
		      strstr(dump + cut, "name=\"uninterruptible (D)\" args={cut: bool true}"));
}

int main(void)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	test_nested_slices();
	test_lost_begin_and_end();
	test_flows_across_threads();
	test_flow_key_reuse_and_missing_begin();
	test_span_lanes();
	test_counters_instants_lost();
	test_loss_cuts_open();
	test_time_order();
	test_counter_series();
	test_limits();
	test_thread_limit();
	test_names_written_with_first_record();
	test_many_threads_and_strings();
	test_sched_states();
	test_sched_state_mapping();
	test_sched_d_slice_ends();
	test_sched_losses_order_limits();
	free(dump);
	free(stats);
	unlink(path);
	CHECK_DONE();
}
