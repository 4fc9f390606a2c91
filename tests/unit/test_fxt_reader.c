/* FXT reader: writer -> reader round trips (plain and gzip), traces cut at
 * record boundaries, corrupted traces reported, garbage never crashing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fxt/records.h"
#include "tools/tools.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/test_fxt_reader_XXXXXX";
static char plain[256], gz[256], work[256];

static char *capture(int (*fn)(const char *, FILE *, bool), const char *p, bool json, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	*rc = fn(p, out, json);
	fclose(out);
	return text;
}

static int dump_adapter(const char *p, FILE *out, bool json)
{
	(void)json;
	return fxt_dump(p, out);
}

static void write_sample(const char *p)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(p, err, sizeof(err));
	struct ut_arg process = { .name = "process", .kind = UT_ARG_KOID, .u = 10 };
	fxt_write_kernel_object(w, FXT_OBJ_PROCESS, 10, "app", NULL, 0);
	fxt_write_kernel_object(w, FXT_OBJ_THREAD, 11, "main", &process, 1);
	struct ut_arg args[] = {
		{ .name = "fd", .kind = UT_ARG_INT, .i = 3 },
		{ .name = "path", .kind = UT_ARG_STR, .s = "/etc/\"x\"" },
		{ .name = "ratio", .kind = UT_ARG_DOUBLE, .d = 0.25 },
	};
	for (uint64_t i = 0; i < 1000; i++) {
		fxt_write_event(w, FXT_EV_DURATION_BEGIN, 100 * i, 10, 11, "io", "read", args, 3, 0);
		fxt_write_event(w, FXT_EV_FLOW_BEGIN, 100 * i, 10, 11, "io", "read", NULL, 0, i + 1);
		fxt_write_event(w, FXT_EV_DURATION_END, 100 * i, 10, 11, "io", "read", NULL, 0, 0);
		fxt_write_event(w, FXT_EV_DURATION_BEGIN, 100 * i + 50, 10, 12, "io", "done", NULL, 0, 0);
		if (i % 2 == 0) /* half the flows end */
			fxt_write_event(w, FXT_EV_FLOW_END, 100 * i + 50, 10, 12, "io", "done", NULL, 0, i + 1);
		fxt_write_event(w, FXT_EV_DURATION_END, 100 * i + 50, 10, 12, "io", "done", NULL, 0, 0);
	}
	/* main sleeps on cpu 1 (the idle task comes in), is woken, runs */
	struct ut_arg out_idle = { .name = "outgoing_weight", .kind = UT_ARG_INT, .i = FXT_IDLE_WEIGHT };
	struct ut_arg in_idle = { .name = "incoming_weight", .kind = UT_ARG_INT, .i = FXT_IDLE_WEIGHT };
	fxt_write_context_switch(w, 100000, 1, FXT_THREAD_BLOCKED, 11, 0, &in_idle, 1);
	fxt_write_thread_wakeup(w, 100050, 1, 11, NULL, 0);
	fxt_write_context_switch(w, 100100, 1, FXT_THREAD_RUNNING, 0, 11, &out_idle, 1);
	if (fxt_writer_close(w, err, sizeof(err)) != 0)
		printf("FAIL close: %s\n", err);
}

static void test_round_trip(const char *p, const char *label)
{
	int rc;
	char name[128];
	char *stats = capture(fxt_stats, p, false, &rc);
	snprintf(name, sizeof(name), "%s: stats succeeds", label);
	CHECK(name, rc == 0);
	snprintf(name, sizeof(name), "%s: 500 flows complete, 500 incomplete", label);
	CHECK(name, strstr(stats, "flows: 500 complete, 500 incomplete, 0 points outside any slice\n") != NULL);
	snprintf(name, sizeof(name), "%s: counts by name", label);
	CHECK(name, strstr(stats, "duration_begin \"io\" \"read\": 1000\n") &&
		    strstr(stats, "flow_end \"io\" \"done\": 500\n"));
	snprintf(name, sizeof(name), "%s: thread named under its process", label);
	CHECK(name, strstr(stats, "tid 11 pid 10 \"main\"") && strstr(stats, "pid 10 \"app\""));
	snprintf(name, sizeof(name), "%s: scheduling records counted, and per thread", label);
	CHECK(name, strstr(stats, "scheduling: 2 context switches, 1 wakeups\n") &&
		    strstr(stats, "tid 11 pid 10 \"main\" scheduling: 1 switched in, 1 out, 1 woken\n"));
	snprintf(name, sizeof(name), "%s: no errors", label);
	CHECK(name, strstr(stats, "errors: 0\n") != NULL);
	free(stats);

	char *json = capture(fxt_stats, p, true, &rc);
	snprintf(name, sizeof(name), "%s: json stats", label);
	CHECK(name, rc == 0 && json[0] == '{' &&
		    strstr(json, "\"flows\": {\"complete\": 500, \"incomplete\": 500, "
				 "\"points_outside_slices\": 0}") &&
		    strstr(json, "\"errors\": 0") &&
		    strstr(json, "{\"tid\": 11, \"pid\": 10, \"name\": \"main\", \"switched_in\": 1, "
				 "\"switched_out\": 1, \"woken\": 1}") &&
		    strstr(json, "\"scheduling\": {\"context_switches\": 2, \"wakeups\": 1}"));
	free(json);

	char *dump = capture(dump_adapter, p, false, &rc);
	snprintf(name, sizeof(name), "%s: dump shows every argument", label);
	CHECK(name, rc == 0 && strstr(dump, "event duration_begin ts=99900 pid=10 tid=11 cat=\"io\" "
					    "name=\"read\" args={fd: int32 3, path: string "
					    "\"/etc/\\\"x\\\"\", ratio: double 0.25}\n"));
	snprintf(name, sizeof(name), "%s: dump shows scheduling records", label);
	CHECK(name, strstr(dump, " context_switch ts=100000 cpu=1 outgoing_tid=11 outgoing_state=blocked "
				 "incoming_tid=0 args={incoming_weight: int32 -2147483648}\n") &&
		    strstr(dump, " thread_wakeup ts=100050 cpu=1 tid=11\n") &&
		    strstr(dump, " context_switch ts=100100 cpu=1 outgoing_tid=0 outgoing_state=running "
				 "incoming_tid=11 args={outgoing_weight: int32 -2147483648}\n"));
	snprintf(name, sizeof(name), "%s: dump shows flow ids", label);
	CHECK(name, strstr(dump, "event flow_begin ts=500 pid=10 tid=11 cat=\"io\" name=\"read\" id=6\n") != NULL);
	free(dump);
}

static unsigned char *load(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *data = malloc(*n + 1);
	*n = fread(data, 1, *n, f);
	fclose(f);
	return data;
}

static void store(const char *p, const void *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	fwrite(data, 1, n, f);
	fclose(f);
}

static int dump_quiet(const char *p)
{
	FILE *out = fopen("/dev/null", "w");
	int rc = fxt_dump(p, out);
	rc |= fxt_stats(p, out, true) << 1;
	fclose(out);
	return rc;
}

/* Stats count the flow records Perfetto would drop: those with no slice on
 * their thread's stack (see track_slices in fxt/reader.c). */
static void test_flow_binding(void)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(work, err, sizeof(err));
	/* nothing on the stack: dropped */
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 10, 1, 2, "c", "alone", NULL, 0, 1);
	/* right after an instant: bound to it */
	fxt_write_event(w, FXT_EV_INSTANT, 20, 1, 2, "c", "point", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 20, 1, 2, "c", "point", NULL, 0, 2);
	/* a begin at the instant's time takes it off; inside the begun slice: bound */
	fxt_write_event(w, FXT_EV_DURATION_BEGIN, 20, 1, 2, "c", "outer", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_STEP, 30, 1, 2, "c", "inside", NULL, 0, 2);
	fxt_write_event(w, FXT_EV_DURATION_END, 40, 1, 2, "c", "outer", NULL, 0, 0);
	/* after the end: dropped; on another thread of the process: dropped */
	fxt_write_event(w, FXT_EV_FLOW_STEP, 50, 1, 2, "c", "after", NULL, 0, 2);
	fxt_write_event(w, FXT_EV_FLOW_STEP, 50, 1, 3, "c", "elsewhere", NULL, 0, 2);
	/* a complete event stays on the stack until the next slice event */
	fxt_write_event(w, FXT_EV_DURATION_COMPLETE, 60, 1, 2, "c", "whole", NULL, 0, 70);
	fxt_write_event(w, FXT_EV_FLOW_END, 65, 1, 2, "c", "whole", NULL, 0, 2);
	/* two instants at one time stack up; a later begin pops both */
	fxt_write_event(w, FXT_EV_INSTANT, 80, 1, 2, "c", "a", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_INSTANT, 80, 1, 2, "c", "b", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_DURATION_BEGIN, 90, 1, 2, "c", "next", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_DURATION_END, 90, 1, 2, "c", "next", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 95, 1, 2, "c", "late", NULL, 0, 3);
	fxt_writer_close(w, err, sizeof(err));
	int rc;
	char *stats = capture(fxt_stats, work, false, &rc);
	CHECK("flow binding: 4 points outside any slice, as Perfetto would drop them, are errors",
	      rc == 1 && strstr(stats, ", 4 points outside any slice\n") != NULL &&
		      strstr(stats, "errors: 4\n") && strstr(stats, "flow_step 2 on thread 1/3 has no slice to bind to"));
	free(stats);
}

/* Stats count as errors what Perfetto would mis-nest: time going back on a
 * thread, an end with nothing to end, flow points without a begin, before
 * their begin, or begun twice. */
static void test_order_errors(void)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(work, err, sizeof(err));
	fxt_write_event(w, FXT_EV_DURATION_BEGIN, 100, 1, 2, "c", "a", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_INSTANT, 90, 1, 2, "c", "back", NULL, 0, 0);        /* 1: back in time */
	fxt_write_event(w, FXT_EV_DURATION_END, 110, 1, 2, "c", "a", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_DURATION_END, 120, 1, 2, "c", "a", NULL, 0, 0);     /* 2: nothing to end */
	fxt_write_event(w, FXT_EV_INSTANT, 200, 1, 3, "c", "p", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 200, 1, 3, "c", "p", NULL, 0, 5);
	fxt_write_event(w, FXT_EV_INSTANT, 150, 1, 4, "c", "q", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_END, 150, 1, 4, "c", "q", NULL, 0, 5);        /* 3: before its begin */
	fxt_write_event(w, FXT_EV_INSTANT, 300, 1, 4, "c", "r", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_STEP, 300, 1, 4, "c", "r", NULL, 0, 6);       /* 4: no begin */
	fxt_write_event(w, FXT_EV_INSTANT, 310, 1, 4, "c", "s", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 310, 1, 4, "c", "s", NULL, 0, 7);
	fxt_write_event(w, FXT_EV_INSTANT, 320, 1, 4, "c", "t", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 320, 1, 4, "c", "t", NULL, 0, 7);      /* 5: begun again */
	fxt_writer_close(w, err, sizeof(err));
	int rc;
	char *stats = capture(fxt_stats, work, false, &rc);
	CHECK("order errors: each counted and named",
	      rc == 1 && strstr(stats, "errors: 5\n") &&
		      strstr(stats, "instant at 90 on thread 1/2 goes back before the thread's event at 100") &&
		      strstr(stats, "slice end at 120 on thread 1/2 has no slice to end") &&
		      strstr(stats, "flow 5: flow_end at 150 comes before the flow's previous point at 200") &&
		      strstr(stats, "flow 6: flow_step without a begin") &&
		      strstr(stats, "flow 7 begins again while open"));
	free(stats);
}

/* Stats count as errors what Perfetto would misplace in scheduling
 * records: one going back in time on its CPU, a thread with no thread
 * kernel-object record before it, a weight that is not an int32; a state
 * FXT does not define makes the record malformed. */
static void test_scheduling_errors(void)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(work, err, sizeof(err));
	struct ut_arg process = { .name = "process", .kind = UT_ARG_KOID, .u = 1 };
	fxt_write_kernel_object(w, FXT_OBJ_THREAD, 2, "a", &process, 1);
	fxt_write_kernel_object(w, FXT_OBJ_THREAD, 3, "b", &process, 1);
	fxt_write_context_switch(w, 100, 0, FXT_THREAD_BLOCKED, 2, 3, NULL, 0);
	fxt_write_context_switch(w, 90, 1, FXT_THREAD_RUNNING, 3, 2, NULL, 0);     /* another cpu: fine */
	fxt_write_context_switch(w, 95, 0, FXT_THREAD_RUNNING, 3, 2, NULL, 0);     /* 1: back in time */
	fxt_write_thread_wakeup(w, 110, 0, 4, NULL, 0);                           /* 2: thread 4 unnamed */
	struct ut_arg wide = { .name = "incoming_weight", .kind = UT_ARG_INT, .i = 1ll << 40 };
	fxt_write_context_switch(w, 120, 0, FXT_THREAD_BLOCKED, 2, 3, &wide, 1);  /* 3: an int64 weight */
	fxt_write_context_switch(w, 130, 0, 9, 3, 2, NULL, 0);                    /* 4: no such state */
	fxt_writer_close(w, err, sizeof(err));
	int rc;
	char *stats = capture(fxt_stats, work, false, &rc);
	CHECK("scheduling errors: each counted and named",
	      rc == 1 && strstr(stats, "errors: 4\n") &&
		      strstr(stats, "scheduling record at 95 on cpu 0 goes back before the cpu's record at 100") &&
		      strstr(stats, "thread 4 in a scheduling record has no thread kernel-object record before it") &&
		      strstr(stats, "incoming_weight of a scheduling record is not an int32") &&
		      strstr(stats, "context switch with unknown thread state 9"));
	CHECK("scheduling errors: the threads' counts", strstr(stats, "\"a\" scheduling: 2 switched in, 2 out, 0 woken\n") &&
							   strstr(stats, "scheduling: 4 context switches, 1 wakeups\n"));
	free(stats);
	char *dump = capture(dump_adapter, work, false, &rc);
	CHECK("scheduling errors: dump shows the malformed record and the error",
	      rc == 1 && strstr(dump, "malformed record type=8 words=4\n") &&
		      strstr(dump, "error: offset 0x") && strstr(dump, "context switch with unknown thread state 9\n"));
	free(dump);
}

static void test_cuts(const unsigned char *data, size_t n)
{
	/* the writer's file can be cut at any record boundary: find them by
	 * walking the headers, and check every prefix ending on one is valid,
	 * but the empty one (no magic: not a trace) */
	bool boundaries_ok = true, mid_record_bad = true;
	size_t checked = 0;
	store(work, data, 0);
	CHECK("an empty file is reported by dump and stats", dump_quiet(work) == 3);
	for (size_t off = 0; off < n && checked < 200; checked++) {
		uint64_t h;
		memcpy(&h, data + off, 8);
		size_t size = ((h >> 4) & 0xfff) * 8;
		store(work, data, off);
		if (off > 0 && dump_quiet(work) != 0)
			boundaries_ok = false;
		if (size > 8) {
			store(work, data, off + 8);
			if (off > 0 && dump_quiet(work) != 3)
				mid_record_bad = false;
		}
		off += size;
	}
	CHECK("every prefix ending on a record boundary is valid", boundaries_ok);
	CHECK("a prefix ending inside a record is reported by dump and stats", mid_record_bad);
}

static void test_corruption(const unsigned char *data, size_t n)
{
	unsigned char *copy = malloc(n);
	/* record at offset 0x30 is the kernel object's string "app" (2 words) */
	memcpy(copy, data, n);
	copy[0] ^= 1;
	store(work, copy, n);
	CHECK("bad magic is reported", dump_quiet(work) == 3);

	memcpy(copy, data, n);
	memset(copy + 0x30, 0, 2); /* size 0 header */
	store(work, copy, n);
	CHECK("a record of size 0 is reported", dump_quiet(work) == 3);

	/* find the first event and point its name at an undefined string */
	size_t off = 0;
	uint64_t h = 0;
	while (off < n) {
		memcpy(&h, data + off, 8);
		if ((h & 0xf) == FXT_REC_EVENT)
			break;
		off += ((h >> 4) & 0xfff) * 8;
	}
	memcpy(copy, data, n);
	uint64_t bad = (h & 0x0000ffffffffffffull) | 0x7000ull << 48;
	memcpy(copy + off, &bad, 8);
	store(work, copy, n);
	CHECK("an undefined string ref is reported", dump_quiet(work) == 3);

	memcpy(copy, data, n);
	bad = (h & ~0xff000000ull) | 0x99ull << 24;
	memcpy(copy + off, &bad, 8);
	store(work, copy, n);
	CHECK("an undefined thread ref is reported", dump_quiet(work) == 3);

	/* the first argument's size: 1 word declared as 3 */
	memcpy(copy, data, n);
	uint64_t arg;
	memcpy(&arg, data + off + 16, 8);
	arg = (arg & ~0xfff0ull) | 3 << 4;
	memcpy(copy + off + 16, &arg, 8);
	store(work, copy, n);
	CHECK("an argument size mismatch is reported", dump_quiet(work) == 3);

	int rc;
	memcpy(copy, data, n);
	memcpy(copy + off, &bad, 8);
	store(work, copy, n);
	char *stats = capture(fxt_stats, work, false, &rc);
	CHECK("stats names the error and its offset, and what it costs (the begin is not read)",
	      rc == 1 && strstr(stats, "errors: 3\n") && strstr(stats, "offset 0x108: thread ref 153 is not defined") &&
		      strstr(stats, "flow_begin 1 on thread 10/11 has no slice to bind to") &&
		      strstr(stats, "slice end at 0 on thread 10/11 has no slice to end"));
	free(stats);
	free(copy);
}

/* A provider info record resets the string and thread tables: a string
 * defined before it is not defined after it.  A trace of many provider
 * records reads as fast as any other (a reset walked all 32767 string
 * slots: 200,000 of them took 20 s of CPU). */
static void test_provider_resets(void)
{
	enum { PROVIDERS = 200000 };
	const uint64_t provider = FXT_REC_METADATA | 1 << 4 | (uint64_t)FXT_META_PROVIDER_INFO << 16 | (uint64_t)1 << 20;
	/* "abc" in string slot 7, and a process named by it */
	const uint64_t string = FXT_REC_STRING | 2 << 4 | (uint64_t)7 << 16 | (uint64_t)3 << 32;
	const uint64_t named = FXT_REC_KERNEL_OBJECT | 2 << 4 | (uint64_t)FXT_OBJ_PROCESS << 16 | (uint64_t)7 << 24;
	size_t n = 0;
	uint64_t *words = malloc((PROVIDERS + 16) * sizeof(*words));
	words[n++] = FXT_MAGIC;
	words[n++] = string;
	memcpy(&words[n++], "abc\0\0\0\0", 8);
	words[n++] = named;
	words[n++] = 42;
	for (unsigned i = 0; i < PROVIDERS; i++)
		words[n++] = provider;
	words[n++] = named;
	words[n++] = 43;
	store(work, words, n * sizeof(*words));
	free(words);
	int rc;
	clock_t start = clock();
	char *stats = capture(fxt_stats, work, false, &rc);
	double cpu = (double)(clock() - start) / CLOCKS_PER_SEC;
	CHECK("a string is defined until a provider record", strstr(stats, "pid 42 \"abc\""));
	CHECK("a string is not defined after a provider record", rc == 1 && strstr(stats, "errors: 1\n") &&
										  strstr(stats, "string ref 7 is not defined"));
	printf("%u provider records read in %.2f s of CPU\n", PROVIDERS, cpu);
	CHECK("provider records read in linear time", cpu < 5);
	free(stats);
}

static void test_garbage(const unsigned char *data, size_t n)
{
	/* fixed seeds: flip random bytes of a valid trace, and pure noise after
	 * the magic; the reader must finish (ASan/UBSan watch the rest) */
	srand(1234);
	unsigned char *copy = malloc(n);
	int reported = 0;
	for (int round = 0; round < 300; round++) {
		memcpy(copy, data, n);
		for (int k = 0; k < 1 + round % 8; k++)
			copy[8 + (size_t)rand() % (n - 8)] = (unsigned char)rand();
		size_t len = round % 3 == 0 ? (size_t)rand() % n : n;
		store(work, copy, len);
		reported += dump_quiet(work) != 0;
	}
	for (int round = 0; round < 100; round++) {
		size_t len = 8 + (size_t)rand() % 4096;
		for (size_t i = 8; i < len; i++)
			copy[i] = (unsigned char)rand();
		store(work, copy, len);
		reported += dump_quiet(work) != 0;
	}
	printf("garbage: %d of 400 corrupted files reported\n", reported);
	CHECK("the reader survives 400 corrupted files and reports most", reported > 300);
	free(copy);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(plain, sizeof(plain), "%s/t.fxt", dir);
	snprintf(gz, sizeof(gz), "%s/t.fxt.gz", dir);
	snprintf(work, sizeof(work), "%s/work.fxt", dir);
	write_sample(plain);
	write_sample(gz);
	test_round_trip(plain, "plain");
	test_round_trip(gz, "gzip");

	size_t n_plain, n_gz;
	unsigned char *data = load(plain, &n_plain);
	unsigned char *zdata = load(gz, &n_gz);
	CHECK("gzip file is compressed", zdata[0] == 0x1f && zdata[1] == 0x8b && n_gz < n_plain / 4);
	free(zdata);

	int rc;
	char *missing = capture(fxt_stats, "/nonexistent/x.fxt", false, &rc);
	CHECK("a missing file is an error", rc == 1);
	free(missing);

	char err[256];
	CHECK("writing to - is refused", fxt_writer_open("-", err, sizeof(err)) == NULL);
	CHECK("opening an unwritable path fails with a message",
	      fxt_writer_open("/nonexistent/dir/x.fxt", err, sizeof(err)) == NULL &&
		      strstr(err, "/nonexistent/dir/x.fxt"));
	struct fxt_writer *full = fxt_writer_open("/dev/full", err, sizeof(err));
	if (full) {
		fxt_writer_flush(full);
		CHECK("a write error is recorded", fxt_writer_error(full) != NULL);
		CHECK("close reports the write error", fxt_writer_close(full, err, sizeof(err)) == -1 &&
							 strstr(err, "/dev/full"));
	}

	test_flow_binding();
	test_order_errors();
	test_scheduling_errors();
	test_provider_resets();
	test_cuts(data, n_plain);
	test_corruption(data, n_plain);
	test_garbage(data, n_plain);
	free(data);
	unlink(plain);
	unlink(gz);
	unlink(work);
	rmdir(dir);
	CHECK_DONE();
}
