/* Scheduling events as the compiler will lay them out (compiler/program.h:
 * values found by the names of the event's args): decoded into the trace,
 * and replayed by the flight recorder at the start of a window so that
 * each thread is in the state it was in. */
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/records.h"
#include "compiler/program.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/tools.h"
#include "runtime/decode.h"
#include "runtime/recorder.h"
#include "tests/unit/check.h"

struct switch_rec {
	struct ut_rec_hdr h;
	__u64 prev_pid, prev_tid, prev_state, next_pid, next_tid, preempt;
	char prev_comm[16], next_comm[16];
};

struct wakeup_rec {
	struct ut_rec_hdr h;
	__u64 pid, tid, cpu;
	char comm[16];
};

#define U64_FIELD(rec, member) { UT_F_U64, offsetof(struct rec, member), 8 }
#define STR_FIELD(rec, member) { UT_F_STR, offsetof(struct rec, member), 16 }
#define NAMED(name, index) { (char *)(name), { .kind = UT_VAL_FIELD, .field = (index) } }

static struct ut_field switch_fields[] = {
	U64_FIELD(switch_rec, prev_pid),  U64_FIELD(switch_rec, prev_tid), U64_FIELD(switch_rec, prev_state),
	U64_FIELD(switch_rec, next_pid),  U64_FIELD(switch_rec, next_tid), U64_FIELD(switch_rec, preempt),
	STR_FIELD(switch_rec, prev_comm), STR_FIELD(switch_rec, next_comm),
};
static struct ut_named_value switch_args[] = {
	NAMED("prev_pid", 0), NAMED("prev_tid", 1), NAMED("prev_state", 2), NAMED("next_pid", 3),
	NAMED("next_tid", 4), NAMED("preempt", 5), NAMED("prev_comm", 6), NAMED("next_comm", 7),
};
static struct ut_field wakeup_fields[] = {
	U64_FIELD(wakeup_rec, pid), U64_FIELD(wakeup_rec, tid), U64_FIELD(wakeup_rec, cpu),
	STR_FIELD(wakeup_rec, comm),
};
static struct ut_named_value wakeup_args[] = {
	NAMED("pid", 0), NAMED("tid", 1), NAMED("cpu", 2), NAMED("comm", 3),
};

enum { SWITCH_EVENT, WAKEUP_EVENT };
static struct ut_event events[] = {
	[SWITCH_EVENT] = { .op = UT_EV_SCHED_SWITCH, .size = sizeof(struct switch_rec), .nfields = 8,
			   .fields = switch_fields, .category = (char *)"tp_btf:sched_switch", .group = -1,
			   .flow = -1, .nargs = 8, .args = switch_args },
	[WAKEUP_EVENT] = { .op = UT_EV_SCHED_WAKEUP, .size = sizeof(struct wakeup_rec), .nfields = 4,
			   .fields = wakeup_fields, .category = (char *)"tp_btf:sched_waking", .group = -1,
			   .flow = -1, .nargs = 4, .args = wakeup_args },
};
static const struct ut_program program = { .nevents = 2, .events = events };

struct thread {
	__u64 pid, tid;
	const char *comm;
};
static const struct thread worker = { 100, 101, "iou-wrk-100" }, other = { 200, 201, "other" },
			   third = { 300, 301, "third" }, idle = { 0, 0, "swapper/0" };

static struct switch_rec switch_record(uint64_t ts, uint32_t cpu, const struct thread *prev, __u64 state,
				       __u64 preempt, const struct thread *next)
{
	struct switch_rec r = { .h = { .ts = ts, .event = SWITCH_EVENT, .pid = (__u32)prev->pid,
				       .tid = (__u32)prev->tid, .cpu = cpu },
				.prev_pid = prev->pid, .prev_tid = prev->tid, .prev_state = state,
				.next_pid = next->pid, .next_tid = next->tid, .preempt = preempt };
	snprintf(r.prev_comm, sizeof(r.prev_comm), "%s", prev->comm);
	snprintf(r.next_comm, sizeof(r.next_comm), "%s", next->comm);
	return r;
}

static struct wakeup_rec wakeup_record(uint64_t ts, uint32_t waker_cpu, const struct thread *t, __u64 cpu)
{
	struct wakeup_rec r = { .h = { .ts = ts, .event = WAKEUP_EVENT, .cpu = waker_cpu },
				.pid = t->pid, .tid = t->tid, .cpu = cpu };
	snprintf(r.comm, sizeof(r.comm), "%s", t->comm);
	return r;
}

static char path[] = "/tmp/test_sched_records_XXXXXX";
static struct fxt_writer *w;
static char *dump, *stats;
static int stats_rc;

static struct ut_engine *start(void)
{
	char err[256];
	w = fxt_writer_open(path, err, sizeof(err));
	return ut_engine_new(w, NULL);
}

static void finish(struct ut_engine *e, uint64_t last_ts)
{
	ut_engine_finish(e, last_ts);
	ut_engine_free(e);
	char err[256];
	fxt_writer_close(w, err, sizeof(err));
	free(dump);
	free(stats);
	size_t len;
	FILE *out = open_memstream(&dump, &len);
	fxt_dump(path, out);
	fclose(out);
	out = open_memstream(&stats, &len);
	stats_rc = fxt_stats(path, out, false);
	fclose(out);
}

static bool has(const char *needle)
{
	return strstr(dump, needle) != NULL;
}

static void test_decode(void)
{
	struct ut_engine *e = start();
	struct switch_rec sleeps = switch_record(10, 1, &worker, UT_TASK_UNINTERRUPTIBLE, 0, &idle);
	struct wakeup_rec woken = wakeup_record(20, 0, &worker, 3);
	struct switch_rec preempted = switch_record(30, 3, &other, UT_TASK_UNINTERRUPTIBLE, 1, &worker);
	ut_decode_trace(&program, e, &sleeps, sizeof(sleeps));
	ut_decode_trace(&program, e, &woken, sizeof(woken));
	ut_decode_trace(&program, e, &preempted, sizeof(preempted));
	finish(e, 40);
	CHECK("decode: threads named by their comm fields",
	      has("kernel_object thread koid=101 name=\"iou-wrk-100\" args={process: koid 100}") &&
		      has("kernel_object thread koid=201 name=\"other\" args={process: koid 200}"));
	CHECK("decode: the switch on the header's cpu, the idle task as idle",
	      has("context_switch ts=10 cpu=1 outgoing_tid=101 outgoing_state=blocked incoming_tid=0 "
		  "args={linux_state: uint32 2, incoming_weight: int32 -2147483648}\n"));
	CHECK("decode: the wakeup on the cpu field (the target), D ends there",
	      has("thread_wakeup ts=20 cpu=3 tid=101\n") &&
		      has("duration_begin ts=10 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"") &&
		      has("duration_end ts=20 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\""));
	CHECK("decode: preempted is runnable whatever the state",
	      has("context_switch ts=30 cpu=3 outgoing_tid=201 outgoing_state=running incoming_tid=101 "
		  "args={linux_state: uint32 0}\n") && !has("tid=201 cat=\"sched\""));
	CHECK("decode: trace valid", stats_rc == 0);
}

/* A window written by the flight recorder starts with each thread in the
 * state its last record before the window put it in: the worker asleep
 * in D (its slice begins at the window's start), the other thread asleep;
 * the third thread ran again before the window, so its sleep is not
 * replayed. */
static void test_recorder_replay(void)
{
	struct ut_recorder *rec = ut_recorder_new(&program, 1500, SIZE_MAX);
	struct switch_rec records[] = {
		switch_record(100, 0, &worker, UT_TASK_UNINTERRUPTIBLE, 0, &other),
		switch_record(150, 1, &third, UT_TASK_INTERRUPTIBLE, 0, &idle),
		switch_record(200, 0, &other, UT_TASK_INTERRUPTIBLE, 0, &idle),
		switch_record(250, 1, &idle, UT_TASK_RUNNING, 0, &third),
	};
	for (size_t i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		ut_recorder_add(rec, &records[i], sizeof(records[i]));
	struct wakeup_rec wake_other = wakeup_record(1800, 1, &other, 0);
	struct wakeup_rec wake_worker = wakeup_record(2000, 1, &worker, 0);
	struct switch_rec runs = switch_record(2300, 0, &idle, UT_TASK_RUNNING, 0, &worker);
	ut_recorder_add(rec, &wake_other, sizeof(wake_other)); /* the first four leave the window */
	ut_recorder_add(rec, &wake_worker, sizeof(wake_worker));
	ut_recorder_add(rec, &runs, sizeof(runs));

	struct ut_engine *e = start();
	struct ut_recorder_cursor cur;
	ut_recorder_start(rec, e, 1000, 0, &cur);
	uint64_t written = ut_recorder_continue(rec, e, &cur, UINT64_MAX, 100);
	finish(e, 2400);
	ut_recorder_free(rec);
	CHECK("replay: the window's own records", written == 3);
	CHECK("replay: the worker's and the other thread's sleeps start the window",
	      has("context_switch ts=1800 cpu=0 outgoing_tid=101 outgoing_state=blocked incoming_tid=201 ") &&
		      has("context_switch ts=1800 cpu=0 outgoing_tid=201 outgoing_state=blocked incoming_tid=0 "));
	CHECK("replay: the worker's D slice from the window's start to its wakeup",
	      has("duration_begin ts=1800 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\"") &&
		      has("duration_end ts=2000 pid=100 tid=101 cat=\"sched\" name=\"uninterruptible (D)\""));
	CHECK("replay: a thread switched in again before the window is not replayed asleep",
	      !has("outgoing_tid=301") && !has("incoming_tid=301"));
	CHECK("replay: trace valid", stats_rc == 0 && strstr(stats, "errors: 0\n"));
}

/* --ring-size: records over the bound leave before their time, and
 * memory stays within it; the first time says so; a window being written
 * keeps what it has not reached until it reaches it. */
static void test_recorder_bound(void)
{
	const size_t bound = 16u << 20;
	struct ut_recorder *rec = ut_recorder_new(&program, UINT64_MAX / 2, bound);
	size_t most = 0;
	uint64_t ts = 1;
	for (unsigned i = 0; i < 400000; i++, ts++) {
		/* threads by the ten thousand (their last records are kept
		 * past the window, and count in the bound) */
		struct thread many = { 100, 1000 + i % 60000, "many" };
		struct wakeup_rec w = wakeup_record(ts, 1, &many, 0);
		ut_recorder_add(rec, &w, sizeof(w));
		size_t bytes = ut_recorder_bytes(rec);
		most = bytes > most ? bytes : most;
	}
	bool first = false, again = true;
	uint64_t cut = ut_recorder_cut_before(rec, &first);
	ut_recorder_cut_before(rec, &again);
	CHECK("bound: memory stays within --ring-size", most <= bound && !ut_recorder_over(rec));
	CHECK("bound: the oldest records left before their time, said once",
	      cut > 0 && first && !again && ut_recorder_oldest(rec) > cut && ut_recorder_newest(rec) == ts - 1);

	/* a window being written holds its records while more come */
	struct ut_engine *e = start();
	struct ut_recorder_cursor cur;
	uint64_t from = ut_recorder_oldest(rec);
	ut_recorder_hold(rec, from);
	ut_recorder_start(rec, e, from, 0, &cur);
	for (unsigned i = 0; i < 200000; i++, ts++) {
		struct wakeup_rec w = wakeup_record(ts, 1, &worker, 0);
		ut_recorder_add(rec, &w, sizeof(w));
	}
	bool held = ut_recorder_over(rec) && ut_recorder_oldest(rec) == from;
	uint64_t written = ut_recorder_continue(rec, e, &cur, UINT64_MAX, UINT64_MAX);
	ut_recorder_release(rec);
	struct wakeup_rec w = wakeup_record(ts, 1, &worker, 0);
	ut_recorder_add(rec, &w, sizeof(w));
	CHECK("bound: a window being written keeps its records, then they go",
	      held && written == ts - from && !ut_recorder_over(rec));
	finish(e, ts);
	ut_recorder_free(rec);
}

int main(void)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	for (unsigned i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		ut_event_index_sched(&events[i]);   /* as ut_compile and ut_program_load do */
	test_decode();
	test_recorder_replay();
	test_recorder_bound();
	free(dump);
	free(stats);
	unlink(path);
	CHECK_DONE();
}
