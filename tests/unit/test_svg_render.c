/* SVG renderer: a scene written through the engine is drawn with its
 * tracks, slices, counters, instants and arrows; windows and --only select;
 * the output is deterministic; big traces stay bounded; damaged and
 * randomised traces never crash it and always give well-formed SVG. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/render.h"
#include "tests/unit/check.h"

static char dir[] = "/tmp/test_svg_render_XXXXXX";
static char scene[256], svg[256], work[256], big[256], random_trace[256];

static char *load(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *data = malloc((size_t)len + 1);
	*n = fread(data, 1, (size_t)len, f);
	data[*n] = 0;
	fclose(f);
	return data;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Renders trace to svg with o's window and filter; returns the SVG text
 * (NULL when nothing was written) and the return code in *rc. */
static char *render(const char *trace, struct svg_render_options o, int *rc)
{
	o.input = trace;
	o.output = svg;
	unlink(svg);
	FILE *quiet = fopen("/dev/null", "w");
	*rc = svg_render(&o, quiet);
	fclose(quiet);
	size_t n;
	return load(svg, &n);
}

static struct fxt_writer *open_trace(const char *p)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(p, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return w;
}

static void close_trace(struct ut_engine *e, struct fxt_writer *w, uint64_t last_ts)
{
	char err[256];
	ut_engine_finish(e, last_ts);
	ut_engine_free(e);
	fxt_writer_close(w, err, sizeof(err));
}

/* Process app (10) with threads main (11) and worker (12), a flow
 * main -> worker -> main, and a ring group with two request spans, an
 * "in flight" counter and an instant. */
static void write_scene(const char *p)
{
	struct fxt_writer *w = open_trace(p);
	struct ut_engine *e = ut_engine_new(w, NULL);
	ut_engine_process_name(e, 10, "app");
	ut_engine_thread_name(e, 10, 11, "main");
	ut_engine_thread_name(e, 10, 12, "worker");
	ut_engine_group_name(e, "ring", 1, "ring one");
	struct ut_track main_thread = { .kind = UT_TRACK_THREAD, .pid = 10, .tid = 11 };
	struct ut_track ring = { .kind = UT_TRACK_GROUP, .group = "ring", .key = 1 };
	struct ut_arg in_flight = { .name = "value", .kind = UT_ARG_UINT };

	ut_slice_begin(e, 1000, &main_thread, "c", "outer", NULL, 0);
	ut_slice_begin(e, 2000, &main_thread, "c", "inner <&> \xff", NULL, 0);
	ut_span_begin(e, 2000, "ring", 1, 7, "c", "READ", NULL, 0);
	in_flight.u = 1;
	ut_counter(e, 2000, &ring, "in flight", &in_flight, 1);
	ut_span_begin(e, 2100, "ring", 1, 8, "c", "NOP", NULL, 0);
	in_flight.u = 2;
	ut_counter(e, 2100, &ring, "in flight", &in_flight, 1);
	ut_flow(e, 2500, 10, 11, UT_FLOW_BEGIN, "req", 1, "c", "submit", NULL, 0);
	ut_span_end(e, 2500, "ring", 1, 8, NULL, NULL, 0);
	in_flight.u = 1;
	ut_counter(e, 2500, &ring, "in flight", &in_flight, 1);
	ut_slice_end(e, 3000, &main_thread, NULL, 0);
	ut_flow(e, 4000, 10, 12, UT_FLOW_STEP, "req", 1, "c", "worker picks it up", NULL, 0);
	ut_instant(e, 5000, &ring, "c", "overflow", NULL, 0);
	ut_span_end(e, 6000, "ring", 1, 7, NULL, NULL, 0);
	in_flight.u = 0;
	ut_counter(e, 6000, &ring, "in flight", &in_flight, 1);
	ut_flow(e, 8000, 10, 11, UT_FLOW_END, "req", 1, "c", "complete", NULL, 0);
	ut_slice_end(e, 9000, &main_thread, NULL, 0);
	close_trace(e, w, 9000);
}

static bool well_formed(const char *text)
{
	/* text and attributes are escaped, so every '<' and '>' is markup */
	if (!text || strncmp(text, "<?xml", 5) != 0 || strcmp(text + strlen(text) - 7, "</svg>\n") != 0)
		return false;
	if (count(text, "<") != count(text, ">"))
		return false;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0xff || *p == 0xfe)
			return false;
	return true;
}

static void test_scene(void)
{
	int rc;
	char *text = render(scene, (struct svg_render_options){ 0 }, &rc);
	CHECK("scene renders", rc == 0 && text);
	if (!text)
		return;
	CHECK("scene is well-formed SVG", well_formed(text));
	CHECK("process header", strstr(text, ">app  pid 10</text>") != NULL);
	CHECK("thread rows", strstr(text, ">main 11</text>") && strstr(text, ">worker 12</text>"));
	CHECK("group header and lanes", strstr(text, "class=\"process\"") &&
					    strstr(text, ">ring one</text>") &&
					    strstr(text, ">lane 1</text>") && strstr(text, ">lane 2</text>"));
	CHECK("slices with durations", strstr(text, "<title>outer 8.00 \u00b5s</title>") &&
					      strstr(text, "<title>READ 4.00 \u00b5s</title>") &&
					      strstr(text, "<title>NOP 400 ns</title>"));
	CHECK("names escaped, bad bytes replaced", strstr(text, "inner &lt;&amp;&gt; ?") != NULL);
	CHECK("wide slices labelled", strstr(text, "class=\"label\"") && strstr(text, ">outer</text>"));
	CHECK("two arrows", count(text, "class=\"flow\"") == 2);
	CHECK("one counter with its maximum", count(text, "class=\"counter\"") == 1 &&
						  strstr(text, ">in flight (max 2)</text>"));
	/* the engine writes flow points as instants: submit, worker picks it up, complete */
	CHECK("instants and flow points", count(text, "class=\"instant\"") == 4 &&
						  strstr(text, "<title>overflow</title>") &&
						  strstr(text, "<title>worker picks it up</title>"));
	CHECK("time axis", strstr(text, "class=\"tick\"") && strstr(text, ">0 \u00b5s</text>") &&
				   strstr(text, ">8 \u00b5s</text>"));
	CHECK("title names the trace and the window",
	      strstr(text, scene) && strstr(text, "window 0 ns to 8.00 \u00b5s of 8.00 \u00b5s"));
	char *again = render(scene, (struct svg_render_options){ 0 }, &rc);
	CHECK("output is deterministic", again && strcmp(text, again) == 0);
	free(again);
	free(text);
}

static void test_window(void)
{
	int rc;
	/* from 4 us after the first event (ts 5000) to the end */
	char *text = render(scene, (struct svg_render_options){ .has_from = true, .from_ms = 0.004 }, &rc);
	CHECK("window renders", rc == 0 && well_formed(text));
	if (text) {
		CHECK("slices before the window left out", !strstr(text, "inner") && !strstr(text, "NOP"));
		CHECK("slices overlapping the window kept", strstr(text, "<title>outer") && strstr(text, "<title>READ"));
		CHECK("only the arrow into the window", count(text, "class=\"flow\"") == 1);
		CHECK("the row an arrow comes from is drawn", strstr(text, ">worker 12<") != NULL);
		CHECK("the counter keeps its value from before the window",
		      strstr(text, ">in flight (max 1)</text>") != NULL);
	}
	free(text);

	text = render(scene, (struct svg_render_options){ .has_from = true, .from_ms = 1 }, &rc);
	CHECK("window after the trace is refused", rc == 2 && !text);
	free(text);
	text = render(scene, (struct svg_render_options){ .has_from = true, .from_ms = 0.005,
							  .has_to = true, .to_ms = 0.002 }, &rc);
	CHECK("window ending before it begins is refused", rc == 2 && !text);
	free(text);

	/* the burst at 2.0-2.5 us: begins, counters, NOP, the submit */
	text = render(scene, (struct svg_render_options){ .busiest_ms = 0.001 }, &rc);
	CHECK("busiest 1 us window is the burst", rc == 0 && text && strstr(text, "<title>NOP") &&
							   strstr(text, "<title>submit") &&
							   !strstr(text, "<title>overflow") &&
							   !strstr(text, "<title>complete"));
	free(text);
}

static void test_only(void)
{
	int rc;
	const char *worker[] = { "worker" };
	char *text = render(scene, (struct svg_render_options){ .only = worker, .nonly = 1 }, &rc);
	CHECK("--only worker", rc == 0 && text && strstr(text, ">worker 12<") && !strstr(text, ">main 11<") &&
				       !strstr(text, "ring one"));
	CHECK("--only: arrows to hidden threads are not drawn", text && count(text, "class=\"flow\"") == 0);
	free(text);
	const char *ring_and_main[] = { "ring", "11" };
	text = render(scene, (struct svg_render_options){ .only = ring_and_main, .nonly = 2 }, &rc);
	CHECK("--only by name and by tid", rc == 0 && text && strstr(text, ">main 11<") &&
						  strstr(text, ">lane 1<") && !strstr(text, ">worker 12<"));
	free(text);
}

/* 100000 slices of 100 ns a microsecond apart, a counter sampled with
 * each and a flow from every second one to another thread: what is drawn
 * stays bounded by the picture. */
static void test_big(void)
{
	struct fxt_writer *w = open_trace(big);
	struct ut_engine *e = ut_engine_new(w, NULL);
	struct ut_track a = { .kind = UT_TRACK_THREAD, .pid = 1, .tid = 1 };
	struct ut_track ring = { .kind = UT_TRACK_GROUP, .group = "ring", .key = 1 };
	struct ut_arg v = { .name = "value", .kind = UT_ARG_UINT };
	uint64_t ts = 1000;
	for (unsigned i = 0; i < 100000; i++, ts += 1000) {
		ut_slice_begin(e, ts, &a, "c", i % 2 ? "odd" : "even", NULL, 0);
		if (i % 2 == 0)
			ut_flow(e, ts + 50, 1, 1, UT_FLOW_BEGIN, "f", i, "c", "go", NULL, 0);
		ut_slice_end(e, ts + 100, &a, NULL, 0);
		if (i % 2 == 0)
			ut_flow(e, ts + 500, 1, 2, UT_FLOW_END, "f", i, "c", "done", NULL, 0);
		v.u = i % 17;
		ut_counter(e, ts, &ring, "depth", &v, 1);
	}
	close_trace(e, w, ts);
	int rc;
	char *text = render(big, (struct svg_render_options){ 0 }, &rc);
	CHECK("big trace renders", rc == 0 && well_formed(text));
	if (text) {
		size_t rects = count(text, "<rect class=\"slice") + count(text, "<rect class=\"merged");
		size_t marks = count(text, "class=\"instant\"");
		CHECK("big trace: slices merged to a few boxes per pixel", rects > 0 && rects < 2 * 1200);
		CHECK("big trace: instants merged per pixel", marks > 0 && marks < 2 * 2 * 1200);
		CHECK("big trace: equal arrows drawn once", count(text, "class=\"flow\"") < 2 * 1200);
		CHECK("big trace: picture under 2 MB", strlen(text) < 2u << 20);
	}
	free(text);
	/* 40 ms at 20000 pixels: 20000 arrows a pixel apart */
	text = render(big, (struct svg_render_options){ .has_to = true, .to_ms = 40, .width = 20000 }, &rc);
	CHECK("wide big trace renders", rc == 0 && well_formed(text));
	CHECK("wide big trace: arrows capped and said so",
	      text && count(text, "class=\"flow\"") == 4000 && strstr(text, "arrows not drawn"));
	free(text);
}

/* 10 threads of 400 slices of 4.4 to 5 us: at 20000 pixels most are
 * wide enough for a label, but only the cap's worth get one. */
static void test_labels(void)
{
	struct fxt_writer *w = open_trace(big);
	struct ut_engine *e = ut_engine_new(w, NULL);
	uint64_t ts = 0;
	for (unsigned i = 0; i < 400; i++) {
		for (uint32_t tid = 1; tid <= 10; tid++) {
			struct ut_track t = { .kind = UT_TRACK_THREAD, .pid = 1, .tid = tid };
			ut_slice_begin(e, ts + tid, &t, "c", "lab", NULL, 0);
			ut_slice_end(e, ts + tid + 5000 - (i % 7) * 100, &t, NULL, 0);
		}
		ts += 10000;
	}
	close_trace(e, w, ts);
	int rc;
	char *text = render(big, (struct svg_render_options){ .width = 20000 }, &rc);
	CHECK("labels capped at the widest 3000", rc == 0 && text && count(text, ">lab</text>") == 3000 &&
							  strstr(text, " labels left out"));
	free(text);
}

/* A worker runs, sleeps in D inside its request's slice, is woken, waits
 * for the CPU, runs, sleeps; the main thread runs meanwhile, is
 * preempted, and dies. */
static void test_states(void)
{
	struct fxt_writer *w = open_trace(work);
	struct ut_engine *e = ut_engine_new(w, NULL);
	ut_engine_process_name(e, 10, "app");
	struct ut_sched_thread main_thread = { .pid = 10, .tid = 11, .name = "main" };
	struct ut_sched_thread worker = { .pid = 10, .tid = 12, .name = "worker" };
	struct ut_sched_thread idle = { 0 };
	struct ut_track worker_track = { .kind = UT_TRACK_THREAD, .pid = 10, .tid = 12 };
	ut_sched_switch(e, 1000, 0, &idle, UT_TASK_RUNNING, &worker);
	ut_slice_begin(e, 1000, &worker_track, "io", "work", NULL, 0);
	ut_sched_switch(e, 2000, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &main_thread);
	ut_sched_wakeup(e, 5000, 0, &worker);
	ut_sched_switch(e, 6000, 0, &main_thread, UT_TASK_RUNNING, &worker);
	ut_slice_end(e, 6500, &worker_track, NULL, 0);
	ut_sched_switch(e, 7000, 0, &worker, UT_TASK_INTERRUPTIBLE, &main_thread);
	ut_sched_switch(e, 8000, 0, &main_thread, UT_TASK_DEAD, &idle);
	close_trace(e, w, 8000);
	int rc;
	char *text = render(work, (struct svg_render_options){ 0 }, &rc);
	CHECK("states render", rc == 0 && well_formed(text));
	if (!text)
		return;
	CHECK("states: the worker's strip",
	      strstr(text, "<title>running 1.00 \u00b5s</title>") &&
		      strstr(text, "<title>uninterruptible (D) 3.00 \u00b5s</title></rect>\n<rect class=\"state\"") &&
		      strstr(text, "<title>runnable 1.00 \u00b5s</title>") &&
		      strstr(text, "<title>sleeping 1.00 \u00b5s</title>"));
	CHECK("states: the main thread's strip", strstr(text, "<title>running 4.00 \u00b5s</title>") &&
							  count(text, "<rect class=\"state\"") == 5 + 3);
	CHECK("states: D is a slice too, inside the request's (its strip and its slice)",
	      count(text, "<rect class=\"slice\"") == 2 &&
		      count(text, "<title>uninterruptible (D) 3.00 \u00b5s</title>") == 2);
	CHECK("states: a legend of their colours", strstr(text, ">thread states:</text>") &&
							 count(text, "<rect class=\"state legend\"") == 6);
	CHECK("states: a thread with states only has a row", strstr(text, ">main 11</text>") != NULL);
	free(text);
	text = render(scene, (struct svg_render_options){ 0 }, &rc);
	CHECK("states: no legend line without them", text && !strstr(text, "thread states"));
	free(text);
	const char *only_worker[] = { "worker" };
	text = render(work, (struct svg_render_options){ .only = only_worker, .nonly = 1 }, &rc);
	CHECK("states: --only keeps the worker's strip alone",
	      text && count(text, "<rect class=\"state\"") == 5 && !strstr(text, ">main 11<"));
	free(text);
	text = render(work, (struct svg_render_options){ .has_from = true, .from_ms = 0.0032,
							 .has_to = true, .to_ms = 0.0038 }, &rc);
	CHECK("states: a window inside a state shows that state alone, whole in its title",
	      text && count(text, "<rect class=\"state\"") == 2 &&
		      count(text, "<title>uninterruptible (D) 3.00 \u00b5s</title>") == 2 &&
		      strstr(text, "<title>running 4.00 \u00b5s</title>") && !strstr(text, "runnable 1"));
	free(text);

	/* 100000 switches between two threads: the strips keep a box a
	 * pixel, in the colour of the state that lasted longest there */
	w = open_trace(big);
	e = ut_engine_new(w, NULL);
	for (uint64_t k = 0; k < 100000; k++) {
		ut_sched_switch(e, 1000 * k, 0, &worker, UT_TASK_UNINTERRUPTIBLE, &main_thread);
		ut_sched_wakeup(e, 1000 * k + 700, 1, &worker);
		ut_sched_switch(e, 1000 * k + 800, 0, &main_thread, UT_TASK_RUNNING, &worker);
	}
	close_trace(e, w, 100000000);
	text = render(big, (struct svg_render_options){ 0 }, &rc);
	CHECK("many states: merged per pixel", rc == 0 && well_formed(text) &&
						      count(text, "<rect class=\"state\"") < 2 * 2 * 1200 &&
						      count(text, "<rect class=\"state\"") > 2 * 900);
	CHECK("many states: the longest state's colour", text &&
							      strstr(text, " states, mostly uninterruptible (D)</title>") &&
							      !strstr(text, " states, mostly sleeping"));
	free(text);
}

static uint64_t rng_state = 42;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33) % n;
}

/* A random mix of every construct on a few threads and groups. */
static void write_random(const char *p)
{
	struct fxt_writer *w = open_trace(p);
	struct ut_engine_limits lim = { .max_open_flows = 64, .max_open_slices = 20, .max_open_spans = 32 };
	struct ut_engine *e = ut_engine_new(w, &lim);
	static const char *const names[] = { "read", "write", "", "x y", "\xc3\xa9", "<a&b>" };
	uint64_t ts = 1;
	for (int i = 0; i < 5000; i++) {
		ts += rnd(50);
		uint32_t pid = 1 + rnd(3), tid = pid * 100 + rnd(3);
		struct ut_track t = { .kind = UT_TRACK_THREAD, .pid = pid, .tid = tid };
		if (rnd(4) == 0)
			t = (struct ut_track){ .kind = UT_TRACK_GROUP, .group = "ring", .key = rnd(2) };
		struct ut_arg arg = { .name = rnd(2) ? "value" : "other", .kind = UT_ARG_INT,
				      .i = (int64_t)rnd(100) - 20 };
		const char *name = names[rnd(6)];
		struct ut_sched_thread a = { pid, tid, name }, b = { 1 + rnd(3), 100 + rnd(300), NULL };
		switch (rnd(11)) {
		case 0: case 1: ut_slice_begin(e, ts, &t, "c", name, &arg, 1); break;
		case 2: case 3: ut_slice_end(e, ts, &t, NULL, 0); break;
		case 4: ut_instant(e, ts, &t, "c", name, NULL, 0); break;
		case 5: ut_counter(e, ts, &t, name, &arg, 1); break;
		case 6: ut_flow(e, ts, pid, tid, (enum ut_flow_phase)rnd(3), "f", rnd(20), "c", name, NULL, 0); break;
		case 7: ut_span_begin(e, ts, "ring", rnd(2), rnd(40), "c", name, NULL, 0); break;
		case 8: ut_span_end(e, ts, "ring", rnd(2), rnd(40), NULL, NULL, 0); break;
		case 9: ut_sched_switch(e, ts, rnd(2), &a, rnd(0x100), rnd(4) ? &b : &(struct ut_sched_thread){ 0 }); break;
		case 10: ut_sched_wakeup(e, ts, rnd(2), &b); break;
		}
	}
	close_trace(e, w, ts);
}

static void store(const char *p, const char *data, size_t n)
{
	FILE *f = fopen(p, "wb");
	fwrite(data, 1, n, f);
	fclose(f);
}

/* Cut and corrupted copies of a random trace: the renderer returns 0 or
 * 1 (damaged), never crashes, and what it writes is well-formed. */
static void test_damaged(void)
{
	write_random(random_trace);
	int rc;
	char *text = render(random_trace, (struct svg_render_options){ 0 }, &rc);
	CHECK("random trace renders", rc == 0 && well_formed(text));
	free(text);
	size_t n;
	char *data = load(random_trace, &n);
	unsigned bad = 0, damaged_said = 0, damaged = 0;
	for (int i = 0; i < 150; i++) {
		char *copy = malloc(n);
		memcpy(copy, data, n);
		size_t len = n;
		if (i % 3 == 0)
			len = 8 + rnd((uint32_t)n - 8); /* cut anywhere */
		else
			for (int k = 0; k < 1 + i % 5; k++) /* flip bytes */
				copy[rnd((uint32_t)n)] ^= (char)(1 + rnd(255));
		store(work, copy, len);
		free(copy);
		text = render(work, (struct svg_render_options){ .width = 800 }, &rc);
		if (rc == 1 && text)
			damaged++;
		if (rc == 1 && text && strstr(text, "trace damaged"))
			damaged_said++;
		if ((rc != 0 && rc != 1) || (text && !well_formed(text)) || (rc == 0 && !text))
			bad++;
		free(text);
	}
	free(data);
	CHECK("damaged traces: always 0 or 1, well-formed when written", bad == 0);
	CHECK("damaged traces: some found damaged, and the picture says so",
	      damaged > 0 && damaged_said == damaged);
}

static void test_unreadable(void)
{
	int rc;
	char missing[300];
	snprintf(missing, sizeof(missing), "%s/missing.fxt", dir);
	char *text = render(missing, (struct svg_render_options){ 0 }, &rc);
	CHECK("missing trace: 1, nothing written", rc == 1 && !text);
	free(text);
	store(work, "not a trace at all", 18);
	text = render(work, (struct svg_render_options){ 0 }, &rc);
	CHECK("not a trace: 1, nothing written", rc == 1 && !text);
	free(text);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(scene, sizeof(scene), "%s/scene.fxt", dir);
	snprintf(svg, sizeof(svg), "%s/out.svg", dir);
	snprintf(work, sizeof(work), "%s/work.fxt", dir);
	snprintf(big, sizeof(big), "%s/big.fxt", dir);
	snprintf(random_trace, sizeof(random_trace), "%s/random.fxt", dir);
	write_scene(scene);
	test_scene();
	test_window();
	test_only();
	test_big();
	test_labels();
	test_states();
	test_damaged();
	test_unreadable();
	const char *files[] = { scene, svg, work, big, random_trace };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(dir);
	CHECK_DONE();
}
