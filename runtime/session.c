/* The tracing session: a compiled script's probes loaded and attached, the
 * -c command started, records read and decoded into the trace until the
 * end, then the summary. */
#include "runtime/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/alloc.h"
#include "bpf/records.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "probes/kind.h"
#include "runtime/consumer.h"
#include "runtime/decode.h"
#include "runtime/diff.h"
#include "runtime/findings.h"
#include "runtime/live.h"
#include "runtime/loader.h"
#include "runtime/metrics.h"
#include "runtime/native.h"
#include "runtime/recorder.h"
#include "runtime/spool.h"
#include "runtime/stacks.h"
#include "runtime/summary.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"

static volatile sig_atomic_t stop_signal, snapshot_signal;

void ut_on_signal(int sig) { stop_signal = sig; }
void ut_on_snapshot_signal(int sig) { snapshot_signal = sig; }

double ut_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* In the -c child: why the command cannot run goes to uring-trace, which
 * says so (the pipe closes unread when exec succeeds). */
_Noreturn static void command_failed(int report_fd, int status, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (write(report_fd, why, strlen(why)) < 0) {
		/* the exit status still says that it failed */
	}
	_exit(status);
}

/* Whether cmd is more than one simple command for sh: an operator (; & |
 * newline, a subshell or group) outside quotes. */
static bool shell_list(const char *cmd)
{
	char quote = 0;
	for (const char *p = cmd; *p; p++) {
		if (quote == '\'' ? *p == '\'' : quote == '"' ? *p == '"' : false)
			quote = 0;
		else if (quote == '"' && *p == '\\' && p[1])
			p++;
		else if (quote)
			continue;
		else if (*p == '\\' && p[1])
			p++;
		else if (*p == '\'' || *p == '"')
			quote = *p;
		else if (strchr(";&|\n(){}", *p))
			return true;
	}
	return false;
}

/* -c: the child waits on a pipe until the probes are attached, so nothing
 * it does is missed; it runs as `as` (under sudo, the invoking user).  Until it
 * execs the command it is a copy of uring-trace, and named so.
 * *report_fd reads why the command could not run, or nothing.
 * stdout_to_stderr: the command's standard output goes to our standard
 * error (--json - keeps standard output for the JSON). */
static pid_t start_command(const char *cmd, const struct ut_identity *as, bool stdout_to_stderr, int *release_fd,
			   int *report_fd)
{
	int release[2], report[2];
	if (pipe2(release, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(report, O_CLOEXEC) < 0) {
		close(release[0]);
		close(release[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		close(release[1]);
		close(report[0]);
		if (read(release[0], &b, 1) != 1)
			_exit(127);   /* uring-trace ended before attaching */
		if (stdout_to_stderr && dup2(2, 1) < 0)
			command_failed(report[1], 126, "cannot run '%s' with its output on standard error: %s", cmd,
				       strerror(errno));
		if (ut_identity_become(as) != 0)
			command_failed(report[1], 126, "cannot run '%s' as user %s: %s", cmd, as->name, strerror(errno));
		/* A plain command runs directly; one with shell syntax runs
		 * through sh: the command (or sh) keeps the pid the probes
		 * filter on, and the processes it starts are followed in BPF. */
		if (!strpbrk(cmd, "|&;<>()$`\\\"'*?[#~=%{}\n")) {
			char *copy = xstrdup(cmd), *argv[256], *save = NULL;
			int n = 0;
			for (char *w = strtok_r(copy, " \t", &save); w && n < 255; w = strtok_r(NULL, " \t", &save))
				argv[n++] = w;
			argv[n] = NULL;
			execvp(argv[0], argv);
			/* as shells do: 127 when there is no such command, 126 when it cannot be run */
			command_failed(report[1], errno == ENOENT ? 127 : 126, "cannot run '%s': %s", argv[0],
				       strerror(errno));
		}
		/* One simple command is exec'ed by sh, keeping its pid; a list
		 * (`cd dir && ./app`, `a; b`) runs as sh wrote it, sh's
		 * children followed ("exec cd dir && ..." would fail). */
		execl("/bin/sh", "sh", "-c", xasprintf("%s%s", shell_list(cmd) ? "" : "exec ", cmd), (char *)NULL);
		command_failed(report[1], 127, "cannot run /bin/sh for '%s': %s", cmd, strerror(errno));
	}
	int fork_errno = errno;
	close(release[0]);
	close(report[1]);
	if (pid < 0) {
		close(release[1]);
		close(report[0]);
		errno = fork_errno;
		return -1;
	}
	*release_fd = release[1];
	*report_fd = report[0];
	return pid;
}

struct session {
	struct options *o;
	struct ut_program *prog;
	struct ut_loaded *loaded;
	struct bpf_object *obj;
	struct ut_consumer *consumer;
	struct fxt_writer *writer;
	struct ut_engine *engine;
	struct ut_decoder dec;
	struct ut_user_maps user_maps;   /* the maps the reader keeps (split execution) */
	struct ut_recorder *recorder;    /* --ring */
	struct ut_spool *spool;          /* the trace's records on their way to engine, which it owns */
	struct ut_spool_stats spooled;   /* what it did, at the stop */
	unsigned snapshots;              /* taken so far */
	struct window_file *snapshot;    /* the one being written */
	volatile uint64_t *requests;     /* bpf/ut.h's ut_requests, mapped (NULL: could not be) */
	bool snapshot_refused_noted, size_noted;
	uint64_t cut_before;             /* --ring: records up to here left for --ring-size */
	bool reader_idle;                /* the last look at the ring buffer found nothing to hand on */
	struct ut_metrics *metrics;      /* --metrics */
	struct ut_live *live;            /* --live */
	double live_at;                  /* its last interval's end */
	/* UT_CAPTURE_RECORDS=FILE: the records the reader takes, in the order
	 * it takes them, each a native u32 length and its bytes (for
	 * bench/replay_bench, which times the reader's work on them) */
	FILE *capture;
	/* --json -: standard output carries the JSON alone; the text that
	 * goes there otherwise (printf, the maps, the -c command's output)
	 * goes to standard error (text_out) */
	bool json_stdout;
	FILE *text_out;
	pid_t child;                     /* the -c command while it runs */
	int child_status;
	int rc;                          /* the exit status */
	/* what the run, then the stop, leave for the report */
	bool tty;                        /* a status line on standard error */
	uint64_t reader_cpu_started;
	struct ut_detach_stats detached;
	bool *kernel_full;               /* per map: a BPF map that filled up */
	uint64_t emitted, lost;          /* probe hits the kernel sent, and lost */
	uint64_t shed;                   /* requests the kernel shed whole */
	struct ut_loaded_runs runs;
	bool trace_cut;                  /* the trace file could not be written whole */
	uint64_t trace_write_ns;
};

static size_t record_len(void *ctx, const void *rec, size_t avail)
{
	struct session *s = ctx;
	return ut_decode_record_len(&s->dec, rec, avail);
}

static int on_record(void *ctx, const void *rec, size_t size)
{
	struct session *s = ctx;
	if (s->capture) {
		uint32_t len = (uint32_t)size;
		fwrite(&len, sizeof(len), 1, s->capture);
		fwrite(rec, 1, size, s->capture);
	}
	ut_decode_record(&s->dec, rec, size);
	return 0;
}

static void on_clear(void *ctx, const char *name)
{
	struct session *s = ctx;
	ut_clear_map(s->prog, s->obj, &s->user_maps, name);
}

static void on_zero(void *ctx, const char *name)
{
	struct session *s = ctx;
	ut_zero_map(s->prog, s->obj, &s->user_maps, name);
}

static void on_print(void *ctx, const char *name, uint64_t top, uint64_t div)
{
	struct session *s = ctx;
	ut_print_map_named(s->prog, s->obj, &s->user_maps, name, top, div, s->dec.print_out);
}

static void totals(struct session *s, uint64_t *emitted, uint64_t *lost)
{
	*emitted = *lost = 0;
	for (unsigned i = 0; i <= s->prog->nprobes; i++) {
		struct ut_probe_totals t = {0};
		if (ut_consumer_counters(s->consumer, i, &t) == 0) {
			*emitted += t.emitted;
			*lost += t.lost;
		}
	}
}

/* The process's resident memory in bytes (0 if /proc says nothing). */
static uint64_t resident_bytes(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Trace timestamps are CLOCK_MONOTONIC (bpf_ktime_get_ns); this instant
 * ties them to the wall clock. */
static void mark_start(struct ut_engine *e)
{
	struct timespec wall;
	clock_gettime(CLOCK_REALTIME, &wall);
	char when[64];
	struct tm tm;
	gmtime_r(&wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	struct ut_arg args[] = {
		{.name = "wall_clock", .kind = UT_ARG_STR, .s = when},
		{.name = "unix_ns", .kind = UT_ARG_UINT, .u = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec},
	};
	struct ut_track self = {.kind = UT_TRACK_THREAD, .pid = (uint32_t)getpid(), .tid = (uint32_t)gettid()};
	ut_engine_process_name(e, self.pid, "uring-trace");
	ut_engine_thread_name(e, self.pid, self.tid, "uring-trace");
	ut_instant(e, now_ns(), &self, "uring-trace", "trace start", args, 2);
}

static void run_once_probes(struct session *s, enum probe_runs when)
{
	for (unsigned i = 0; i < s->prog->nprobes; i++) {
		const struct ut_probe *p = &s->prog->probes[i];
		if (p->nalts != 1 || probe_kind_def(p->alts[0].kind)->runs != when)
			continue;
		struct bpf_program *prog = bpf_object__find_program_by_name(s->obj, p->alts[0].prog_name);
		if (!prog)
			continue;
		LIBBPF_OPTS(bpf_test_run_opts, opts);
		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) != 0)
			fprintf(stderr, "uring-trace: %s at %s:%d could not run: %s\n", p->spec, p->loc.file, p->loc.line,
				strerror(errno));
	}
	ut_consumer_drain(s->consumer);
}

/* Bytes of the trace written so far (the converter's last count while it
 * owns the writer). */
static uint64_t trace_bytes(struct session *s)
{
	if (s->spool) {
		struct ut_spool_stats st;
		ut_spool_stats(s->spool, &st);
		return st.trace_bytes;
	}
	return s->writer ? fxt_writer_bytes(s->writer) : 0;
}

static void status_line(struct session *s, double started, uint64_t *last_records, double *last_t)
{
	double t = ut_now_s();
	uint64_t emitted, lost;
	totals(s, &emitted, &lost);
	double rate = (double)(s->dec.records - *last_records) / (t - *last_t > 0 ? t - *last_t : 1);
	fprintf(stderr, "\r%6.1fs  %10.0f events/s  %llu events  %llu lost  %llu shed  %.1f MB trace   ", t - started,
		rate, (unsigned long long)s->dec.records, (unsigned long long)lost,
		(unsigned long long)ut_consumer_shed(s->consumer), (double)trace_bytes(s) / 1e6);
	*last_records = s->dec.records;
	*last_t = t;
}

/* The built-in programs (runtime/loader.h) this kernel lacks, and what the
 * trace misses without them; with -v also where the others attached. */
static void report_builtins(const struct ut_program *prog, const struct ut_loaded *l, const struct options *o)
{
	for (unsigned i = prog->nprobes; i < ut_loaded_count(l); i++) {
		const struct ut_probe *p = ut_loaded_probe(l, i);
		int a = ut_loaded_alt(l, i);
		if (a < 0 && !o->quiet)
			fprintf(stderr, "uring-trace: note: %s is not attached: tried %s\n", p->spec, ut_loaded_skipped(l, i));
		else if (a >= 0 && o->verbose)
			fprintf(stderr, "uring-trace: %s uses %s:%s\n", p->spec, probe_kind_name(p->alts[a].kind), p->alts[a].target);
	}
}

/* With -c, uring-trace's exit status is the command's when the command
 * ended the trace (128 + N when signal N killed it, as shells do). */
static int command_status(const struct options *o, int status)
{
	if (WIFSIGNALED(status)) {
		if (!o->quiet)
			fprintf(stderr, "uring-trace: '%s' was killed by signal %d (%s)\n", o->command, WTERMSIG(status),
				strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	int code = WEXITSTATUS(status);
	if (code && !o->quiet)
		fprintf(stderr, "uring-trace: '%s' exited with status %d\n", o->command, code);
	return code;
}

/* Probe i's target when it is an attached kind and left out here, else NULL. */
static const char *left_out_target(const struct ut_program *prog, const struct ut_loaded *l, unsigned i)
{
	const struct ut_probe *p = &prog->probes[i];
	if (!p->nalts || probe_kind_def(p->alts[0].kind)->runs != PROBE_ATTACHED || ut_loaded_alt(l, i) >= 0)
		return NULL;
	return p->alts[0].target;
}

/* Whether a probe before i left out the same target (an entry and an exit
 * probe on one function): the note names it once. */
static bool said_before(const struct ut_program *prog, const struct ut_loaded *l, unsigned i)
{
	for (unsigned j = 0; j < i; j++) {
		const char *t = left_out_target(prog, l, j);
		if (t && strcmp(t, prog->probes[i].alts[0].target) == 0)
			return true;
	}
	return false;
}

/* Without -v: one line when the script runs degraded on this kernel, naming
 * the probe kinds it does not run (fentry, kprobe, ...) that alternatives
 * were passed over for, and the optional probes left out (by their first
 * alternative's target: what the kernel lacks). */
static void note_degraded(const struct ut_program *prog, const struct ut_loaded *l)
{
	bool named[UT_PROBE_KIND_COUNT] = {false};
	const char *kinds[UT_PROBE_KIND_COUNT];
	unsigned nkinds = 0, fallbacks = 0, left_out = 0;
	for (unsigned i = 0; i < prog->nprobes; i++) {
		const struct ut_probe *p = &prog->probes[i];
		if (!p->nalts || probe_kind_def(p->alts[0].kind)->runs != PROBE_ATTACHED)
			continue;
		int a = ut_loaded_alt(l, i);
		if (a < 0)
			left_out++;
		else if (a > 0)
			fallbacks++;
		unsigned passed_over = a < 0 ? p->nalts : (unsigned)a;
		for (unsigned j = 0; j < passed_over; j++) {
			enum ut_probe_kind kind = p->alts[j].kind;
			if (!named[kind] && probe_kind_refused(kind)) {
				named[kind] = true;
				kinds[nkinds++] = probe_kind_name(kind);
			}
		}
	}
	if (nkinds == 0 && left_out == 0)
		return;
	fprintf(stderr, "uring-trace: note: ");
	if (nkinds) {
		fprintf(stderr, "this kernel runs no ");
		for (unsigned i = 0; i < nkinds; i++)
			fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < nkinds ? ", " : " or ", kinds[i]);
		fprintf(stderr, " programs: %u probes use another alternative, %u are left out", fallbacks, left_out);
	} else {
		fprintf(stderr, "%u optional probes are not on this kernel and are left out:", left_out);
		for (unsigned i = 0; i < prog->nprobes; i++)
			if (left_out_target(prog, l, i) && !said_before(prog, l, i))
				fprintf(stderr, " %s", prog->probes[i].alts[0].target);
	}
	fprintf(stderr, " (-v says why)\n");
}

/* A map the reader keeps refuses new keys past its bound, as a BPF map
 * does; unlike a BPF map's, its refusals are counted, and said.  A BPF
 * map found full at the end (kernel_full, looked at before END's clear())
 * refused some, how many is not known.  An lru map refuses none: the
 * entries it pushed out are said, as information, where the reader
 * counted them (the kernel's LRU hash does not count them). */
static void report_full_maps(const struct ut_program *prog, const struct ut_user_maps *user, const bool *kernel_full)
{
	for (unsigned i = 0; i < user->n; i++) {
		if (user->maps[i].refused)
			fprintf(stderr, "uring-trace: %s was full (%d entries): %llu updates of new keys were dropped\n",
				prog->maps[i].name, UT_USER_MAP_MAX_ENTRIES, (unsigned long long)user->maps[i].refused);
		if (user->maps[i].evicted)
			fprintf(stderr, "uring-trace: %s: %llu entries pushed out (lru: the least recently used go when "
				"it holds %d)\n", prog->maps[i].name, (unsigned long long)user->maps[i].evicted,
				UT_USER_MAP_MAX_ENTRIES);
	}
	for (unsigned i = 0; kernel_full && i < prog->nmaps; i++)
		if (kernel_full[i])
			fprintf(stderr, "uring-trace: %s is full in the kernel: updates of new keys were dropped; delete() "
				"the keys a script is done with\n", prog->maps[i].name);
}

/* The maps the reader keeps are updated by the hit records that reach it:
 * where hits were lost (the ring buffer was full) or came too late, those
 * maps miss what they did, while the kernel's maps saw every hit.  Says
 * so on text after the summary, or with j writes their names as the items
 * of a JSON array. */
static void report_approximate_maps(const struct ut_program *prog, uint64_t lost, uint64_t shed, FILE *text,
				    FILE *j)
{
	unsigned n = 0;
	for (unsigned i = 0; i < prog->nmaps; i++) {
		if (!prog->maps[i].user_side || prog->maps[i].is_private)
			continue;
		if (j)
			fprintf(j, "%s\"%s\"", n ? "," : "", prog->maps[i].name);
		else
			fprintf(text, "%s%s", n ? ", " : "uring-trace: the summary is approximate: ", prog->maps[i].name);
		n++;
	}
	if (!j && n && shed)
		fprintf(text, " (kept by the reader) miss what the %llu lost or late hits and the %llu requests shed "
			"did; the other maps are exact\n", (unsigned long long)lost, (unsigned long long)shed);
	else if (!j && n)
		fprintf(text, " (kept by the reader) miss what the %llu lost or late hits did; the other maps are "
			"exact\n", (unsigned long long)lost);
}

/* Snapshot n of trace.fxt is trace.n.fxt (trace.n.fxt.gz for trace.fxt.gz,
 * out.n for out). */
static uint64_t reader_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* Why events were lost, and what helps: a reader busy nearly all the
 * time could not keep up whatever the buffer (a bigger one only delays
 * the loss); one that also waited lost them to bursts the buffer could
 * not hold. */
static void report_lost(struct session *s, size_t buffer_bytes)
{
	const struct ut_reader_time *t = ut_consumer_time(s->consumer);
	uint64_t busy = t->reading_ns + t->handing_on_ns, wall = busy + t->waiting_ns;
	if (wall && percent(busy, wall) >= 90)
		fprintf(stderr, "uring-trace: events were lost: the reader could not keep up (busy %.0f %% of its time, "
			"not waiting for records), so a larger --buffer only delays the loss: --sample PCT keeps "
			"whole requests, or trace less (-v says where the reader's time went)\n", percent(busy, wall));
	else
		fprintf(stderr, "uring-trace: events were lost: raise --buffer (now %zu bytes) or trace less\n",
			buffer_bytes);
	if (s->o->summary_only && !s->o->all_in_kernel)
		fprintf(stderr, "uring-trace: findings made from the maps the reader keeps may be wrong (a request whose "
			"completion was lost looks in flight, or slow when its address comes back); --all-in-kernel "
			"keeps every map in the kernel: nothing is sent and the summary is exact at any rate, at more "
			"BPF time a hit (-v says what runs where)\n");
}

struct probe_time {
	unsigned probe;
	struct ut_loaded_runs runs;
};

static int by_time_spent(const void *a, const void *b)
{
	uint64_t x = ((const struct probe_time *)a)->runs.run_ns, y = ((const struct probe_time *)b)->runs.run_ns;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* -v with bpf_stats: each probe's share of the kernel's time, the
 * costliest first (what to trace less, or to move out of a hot probe). */
static void report_probe_runs(struct session *s, const struct ut_loaded_runs *all)
{
	const struct ut_program *prog = s->prog;
	struct probe_time *t = xcalloc(prog->nprobes + 1, sizeof(*t));
	unsigned n = 0;
	uint64_t script_ns = 0, script_runs = 0;
	for (unsigned i = 0; i < prog->nprobes; i++) {
		t[n].probe = i;
		ut_loaded_probe_runs(s->loaded, i, &t[n].runs);
		script_ns += t[n].runs.run_ns;
		script_runs += t[n].runs.runs;
		if (t[n].runs.runs && ut_loaded_alt(s->loaded, i) >= 0)
			n++;
	}
	qsort(t, n, sizeof(*t), by_time_spent);
	for (unsigned i = 0; i < n; i++) {
		const struct ut_probe *p = &prog->probes[t[i].probe];
		const struct ut_alt *alt = &p->alts[ut_loaded_alt(s->loaded, t[i].probe)];
		fprintf(stderr, "uring-trace:   %s:%d %s:%s: %llu run%s, %.0f ns a run, %.0f %% of the probes' time\n",
			p->loc.file, p->loc.line, probe_kind_name(alt->kind), alt->target,
			(unsigned long long)t[i].runs.runs, t[i].runs.runs == 1 ? "" : "s",
			(double)t[i].runs.run_ns / (double)t[i].runs.runs,
			percent(t[i].runs.run_ns, all->run_ns));
	}
	if (all->runs > script_runs)
		fprintf(stderr, "uring-trace:   built-in programs (thread names, -c's processes, flushes): %llu run%s, "
			"%.0f ns a run, %.0f %% of the probes' time\n", (unsigned long long)(all->runs - script_runs),
			all->runs - script_runs == 1 ? "" : "s",
			(double)(all->run_ns - script_ns) / (double)(all->runs - script_runs),
			percent(all->run_ns - script_ns, all->run_ns));
	free(t);
}

/* -v: where the time went, the reader's (the loss of events it could not
 * take is said above) and the probes' in the kernel. */
static void report_time(struct session *s, const struct ut_loaded_runs *runs, uint64_t cpu_ns, uint64_t write_ns)
{
	const struct ut_reader_time *t = ut_consumer_time(s->consumer);
	uint64_t wall = t->waiting_ns + t->reading_ns + t->handing_on_ns;
	/* without a trace, what it takes are hits, whose statements it runs */
	uint64_t records = s->o->summary_only ? s->emitted : s->dec.records;
	if (!records)
		records = 1;
	fprintf(stderr, "uring-trace: the reader used %.2f s of CPU, %.0f ns a %s; of its %.2f s, %.0f %% went to "
		"waiting for records, %.0f %% to reading the ring buffer, %.0f %% to handing records on in time order "
		"(the script's statements in the reader and the trace; %.0f %% to writing the file)\n",
		(double)cpu_ns / 1e9, (double)cpu_ns / (double)records, s->o->summary_only ? "probe hit" : "record", (double)wall / 1e9,
		percent(t->waiting_ns, wall), percent(t->reading_ns, wall), percent(t->handing_on_ns, wall),
		percent(write_ns, wall));
	const struct ut_spool_stats *sp = &s->spooled;
	uint64_t converted = sp->records - sp->loop_records - sp->stop_records;
	if (sp->records)
		fprintf(stderr, "uring-trace: the trace's converter thread used %.2f s of CPU beside it for %llu events, "
			"%.0f ns an event; its spool held at most %.0f MiB (--spool-size %.0f MiB), was full %llu times "
			"and the reader converted %llu events then (%.2f s of its CPU above), and %llu left at the stop "
			"(%.2f s)\n", (double)sp->converter_ns / 1e9, (unsigned long long)converted,
			converted ? (double)sp->converter_ns / (double)converted : 0.0, (double)sp->peak_bytes / (1 << 20),
			(double)s->o->spool_bytes / (1 << 20), (unsigned long long)sp->full_times,
			(unsigned long long)sp->loop_records, (double)sp->loop_ns / 1e9,
			(unsigned long long)sp->stop_records, (double)sp->stop_ns / 1e9);
	if (runs->runs) {
		fprintf(stderr, "uring-trace: the probes ran %llu times in the kernel, %.0f ns a run (bpf_stats)\n",
			(unsigned long long)runs->runs, (double)runs->run_ns / (double)runs->runs);
		report_probe_runs(s, runs);
	} else
		fprintf(stderr, "uring-trace: the probes' time in the kernel is not counted: sysctl "
			"kernel.bpf_stats_enabled=1 counts it\n");
}

static void snapshot_path(const char *output, unsigned n, char *buf, size_t len)
{
	const char *base = strrchr(output, '/');
	base = base ? base + 1 : output;
	const char *ext = strstr(base, ".fxt");
	if (!ext)
		ext = strrchr(base, '.');
	if (!ext || ext == base)
		ext = base + strlen(base);
	snprintf(buf, len, "%.*s.%u%s", (int)(ext - output), output, n, ext);
}

static struct ut_engine *new_engine(const struct options *o, struct fxt_writer *w)
{
	struct ut_engine_limits limits = {.max_bytes = o->max_size};
	return ut_engine_new(w, &limits);
}

static uint64_t seconds_ns(double seconds)
{
	return (uint64_t)(seconds * 1e9 + 0.5);
}

/* A window file says which window it holds: an instant at its start on
 * uring-trace's track, with the time asked for (--ring) and the time held
 * (less when --ring-size let records go first). */
static void mark_window(struct session *s, struct ut_engine *e, uint64_t from, uint64_t to)
{
	uint64_t oldest = ut_recorder_oldest(s->recorder), start = oldest > from ? oldest : from;
	struct ut_arg args[] = {
		{.name = "asked_s", .kind = UT_ARG_DOUBLE, .d = (double)(to - from) / 1e9},
		{.name = "held_s", .kind = UT_ARG_DOUBLE, .d = to > start ? (double)(to - start) / 1e9 : 0},
		{.name = "ring_size_bytes", .kind = UT_ARG_UINT, .u = s->o->ring_bytes},
		{.name = "cut_by_ring_size", .kind = UT_ARG_BOOL, .b = start > from && s->cut_before >= from},
	};
	struct ut_track self = {.kind = UT_TRACK_THREAD, .pid = (uint32_t)getpid(), .tid = (uint32_t)gettid()};
	ut_instant(e, start, &self, "uring-trace", "window", args, 4);
}

/* Said once: the window holds less time than --ring asked, because its
 * records passed --ring-size. */
static void note_ring_cut(struct session *s)
{
	bool first;
	uint64_t cut = s->recorder ? ut_recorder_cut_before(s->recorder, &first) : 0;
	if (!cut)
		return;
	s->cut_before = cut;
	if (first && !s->o->quiet)
		fprintf(stderr, "\nuring-trace: --ring %.3g s: the window's records passed %llu MiB (--ring-size); it "
			"holds the last %.3g s now, and each file written says which window it holds\n",
			s->o->ring_s, (unsigned long long)(s->o->ring_bytes >> 20),
			(double)(ut_recorder_newest(s->recorder) - ut_recorder_oldest(s->recorder)) / 1e9);
}

/* A file the flight recorder's window is written to, a part at a time
 * while tracing goes on (a snapshot), or at once at the end. */
struct window_file {
	char path[PATH_MAX];
	struct fxt_writer *w;
	struct ut_engine *e;
	struct ut_recorder_cursor cur;
	uint64_t from, to, trigger;   /* trigger: a snapshot's, else 0 */
	uint64_t events;
	bool marked;                  /* its trigger's instant is written */
};

static struct window_file *window_open(struct session *s, const char *path, uint64_t from, uint64_t to,
				       uint64_t trigger)
{
	char err[4096];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "uring-trace: cannot write the trace: %s\n", err);
		return NULL;
	}
	struct window_file *f = xcalloc(1, sizeof(*f));
	*f = (struct window_file){.w = w, .e = new_engine(s->o, w), .from = from, .to = to, .trigger = trigger};
	snprintf(f->path, sizeof(f->path), "%s", path);
	ut_decode_declare_names(s->prog, f->e);
	mark_start(f->e);
	mark_window(s, f->e, from, to);
	ut_recorder_start(s->recorder, f->e, from, trigger, &f->cur);
	return f;
}

/* Writes up to max more records (all when at the end); true when the
 * window is whole: a record past its end came, or at the end all did. */
/* A snapshot's "snapshot" instant, at its trigger. */
static void mark_trigger(struct window_file *f)
{
	struct ut_track self = {.kind = UT_TRACK_GROUP, .group = "uring-trace", .key = 0};
	ut_engine_group_name(f->e, self.group, self.key, "uring-trace");
	ut_instant(f->e, f->trigger, &self, "uring-trace", "snapshot", NULL, 0);
	f->marked = true;
}

static bool window_continue(struct session *s, struct window_file *f, uint64_t max, bool at_end)
{
	for (;;) {
		f->events += ut_recorder_continue(s->recorder, f->e, &f->cur, f->to, max);
		if (!f->cur.at_mark)
			break;
		mark_trigger(f);
	}
	bool whole = f->cur.done || (f->cur.caught_up && at_end);
	if (whole && f->trigger && !f->marked)   /* no record came after the trigger */
		mark_trigger(f);
	return whole;
}

static bool window_close(struct session *s, struct window_file *f)
{
	char err[4096];
	ut_engine_finish(f->e, f->to);
	if (!s->o->quiet)
		ut_engine_report_limits(f->e, stderr);
	ut_engine_free(f->e);
	bool ok = fxt_writer_close(f->w, err, sizeof(err)) == 0;
	if (!ok)
		fprintf(stderr, "uring-trace: writing %s failed: %s\n", f->path, err);
	free(f);
	return ok;
}


/* snapshot() or SIGUSR1 at ts: the window up to ts and --after DURATION
 * past it become a file of their own, written while tracing goes on.  A
 * trigger while a snapshot is taken joins it. */
static void take_snapshot_trigger(struct session *s, uint64_t ts)
{
	const struct options *o = s->o;
	if (s->snapshot)
		return;
	if (!s->recorder || s->snapshots >= o->max_snapshots) {
		if (!s->snapshot_refused_noted && !o->quiet)
			fprintf(stderr, "uring-trace: note: a snapshot was asked for (snapshot() or SIGUSR1) and not "
				"taken: %s\n", s->recorder ? "--max-snapshots reached" : "snapshots need --ring DURATION");
		s->snapshot_refused_noted = true;
		return;
	}
	uint64_t window = seconds_ns(o->ring_s), from = ts > window ? ts - window : 1;
	char path[PATH_MAX];
	snapshot_path(o->output, s->snapshots + 1, path, sizeof(path));
	ut_recorder_hold(s->recorder, from);
	s->snapshot = window_open(s, path, from, ts + seconds_ns(o->after_s), ts);
	if (s->snapshot)
		s->snapshots++;
	else
		ut_recorder_release(s->recorder);
}

/* The script called snapshot(): in the kernel, bpf/ut.h's ut_requests
 * holds the first call's time since the last look; in the reader, the
 * decoder does.  A trigger at that time. */
static void script_snapshot(struct session *s)
{
	if (s->dec.snapshot_ts) {
		take_snapshot_trigger(s, s->dec.snapshot_ts);
		s->dec.snapshot_ts = 0;
	}
	uint64_t ts = s->requests ? s->requests[UT_REQUEST_SNAPSHOT] : 0;
	if (!ts)
		return;
	take_snapshot_trigger(s, ts);
	s->requests[UT_REQUEST_SNAPSHOT] = 0;
}

/* Maps the kernel's requests (bpf/ut.h, ut_requests) into the reader:
 * exit() is checked at every record, so a read must be a load. */
static volatile uint64_t *map_requests(struct bpf_object *obj)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, "ut_requests");
	if (!m)
		return NULL;
	void *at = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	return at == MAP_FAILED ? NULL : at;
}

/* Records of a snapshot written between two reads of the ring buffer:
 * about 4 ms of the reader's time. */
#define SNAPSHOT_RECORDS_A_TURN 20000

/* The snapshot being taken gets its next records; once whole (a record
 * past its end came, or 300 ms past its end the reader found nothing more
 * to read), it is closed. */
static void continue_snapshot(struct session *s, bool at_end)
{
	struct window_file *f = s->snapshot;
	if (!f)
		return;
	const uint64_t slack = 300 * 1000000ull;
	/* over its bound, the recorder keeps what the snapshot has not
	 * reached: write all of it now */
	bool all = at_end || ut_recorder_over(s->recorder);
	/* the window's end passed long ago and the reader has nothing more
	 * to read (a reader behind by more than the slack, under a load or a
	 * sanitizer, still has the window's last records to come) */
	bool ended = now_ns() > f->to + slack && s->reader_idle;
	bool whole = window_continue(s, f, all ? UINT64_MAX : SNAPSHOT_RECORDS_A_TURN, at_end || ended);
	if (!whole)
		return;
	unsigned n = s->snapshots;
	uint64_t events = f->events;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", f->path);
	s->snapshot = NULL;
	if (window_close(s, f) && !s->o->quiet)
		fprintf(stderr, "uring-trace: snapshot %u: %llu events written to %s\n", n, (unsigned long long)events,
			path);
	ut_recorder_release(s->recorder);
	/* the snapshot's engine and writer were freed among the recorder's
	 * allocations: give their pages back, or the holes stay in RSS */
	malloc_trim(0);
}

/* Without --max-size a trace grows as long as tracing lasts: say once
 * what keeps it small. */
static void note_trace_size(struct session *s)
{
	if (s->size_noted || !s->writer || s->o->max_size || trace_bytes(s) < (1ull << 30))
		return;
	s->size_noted = true;
	if (!s->o->quiet)
		fprintf(stderr, "\nuring-trace: the trace passed 1 GB (large traces are slow to open in a browser): "
			"--ring 10s keeps only the last seconds, --max-size 1G stops the file there, --sample 10 "
			"keeps one request in ten\n");
}

/* k: the kernel the script was compiled against (its BTF already parsed),
 * or NULL to open it here. */
/* Has the user side run the compiled code in objs (built from this
 * program: main.c built it, or the .uto loader checked it) unless
 * UT_INTERPRET=1; says which the reader runs with -v, and warns when the
 * code cannot run. */
static void use_compiled_user_side(struct ut_user_side *u, const struct ut_program *prog,
				   const struct ut_program_objects *objs, const struct options *o)
{
	char err[512] = "";
	if (!ut_program_has_user_side(prog))
		return;
	if (ut_user_side_interpret_asked())
		snprintf(err, sizeof(err), "UT_INTERPRET=1");
	else if (!ut_native_supported())
		snprintf(err, sizeof(err), "this host runs no compiled code: x86-64 only");
	else if (!objs->user_len)
		snprintf(err, sizeof(err), "no compiled code for it, or the .uto's is damaged or another program's");
	else if (!ut_user_side_compiled(u, objs->user, objs->user_len, err, sizeof(err)) && !o->quiet)
		fprintf(stderr, "uring-trace: warning: the reader interprets the script's user side, more slowly: %s\n",
			err);
	if (o->verbose && ut_user_side_compiled_events(u))
		fprintf(stderr, "uring-trace: the reader runs the user side of %u probe%s as compiled code\n",
			ut_user_side_compiled_events(u), ut_user_side_compiled_events(u) == 1 ? "" : "s");
	else if (o->verbose)
		fprintf(stderr, "uring-trace: the reader interprets the script's user side (%s)\n", err);
}

/* Says which probe alternatives attached (-v), or which degraded. */
static void report_attached(const struct session *s)
{
	const struct ut_program *prog = s->prog;
	if (!s->o->verbose) {
		if (!s->o->quiet)
			note_degraded(prog, s->loaded);
		return;
	}
	for (unsigned i = 0; i < prog->nprobes; i++) {
		int a = ut_loaded_alt(s->loaded, i);
		const char *skipped = ut_loaded_skipped(s->loaded, i);
		if (a >= 0)
			fprintf(stderr, "uring-trace: %s:%d: attached %s:%s%s%s\n", prog->probes[i].loc.file,
				prog->probes[i].loc.line, probe_kind_name(prog->probes[i].alts[a].kind),
				prog->probes[i].alts[a].target, skipped[0] ? " (skipped: " : "",
				skipped[0] ? skipped : "");
		else if (prog->probes[i].nalts && probe_kind_def(prog->probes[i].alts[0].kind)->runs == PROBE_ATTACHED)
			fprintf(stderr, "uring-trace: %s: not attached (%s)\n", prog->probes[i].spec, skipped);
	}
}

/* The start: the trace file and its engine (or the flight recorder), the
 * -c command (held until the probes are attached), the program loaded and
 * attached, the reader's decoder, BEGIN, then the command released.
 * False when the session ends there (s->rc says how). */
static bool session_start(struct session *s, const struct ut_program_objects *objs, struct ut_kernel *k)
{
	struct options *o = s->o;
	struct ut_program *prog = s->prog;
	char err[4096];
	s->json_stdout = o->json && strcmp(o->json, "-") == 0;
	s->text_out = s->json_stdout ? stderr : stdout;
	setvbuf(stdout, NULL, _IOLBF, 0);   /* printf lines come out as they are made, into a pipe too */
	if (o->metrics) {   /* before anything loads: a port in use is said at once */
		s->metrics = ut_metrics_start(o->metrics, err, sizeof(err));
		if (!s->metrics) {
			fprintf(stderr, "uring-trace: %s\n", err);
			s->rc = 2;
			return false;
		}
		if (!o->quiet)
			fprintf(stderr, "uring-trace: metrics at http://%s/metrics\n", ut_metrics_address(s->metrics));
	}
	if (!o->summary_only) {
		s->writer = fxt_writer_open(o->output, err, sizeof(err));
		if (!s->writer) {
			fprintf(stderr, "uring-trace: cannot write the trace: %s\n", err);
			s->rc = 1;
			return false;
		}
		if (o->ring_s) {
			s->recorder = ut_recorder_new(prog, seconds_ns(o->ring_s), o->ring_bytes);
			/* A snapshot's engine grows tables of megabytes and frees
			 * them when the file is written.  glibc raises its mmap
			 * threshold to the largest block freed, so the next
			 * snapshot's tables came from the heap and left it in
			 * holes; a fixed threshold keeps them mapped and given
			 * back when freed. */
			mallopt(M_MMAP_THRESHOLD, 256 * 1024);
		} else {
			s->engine = new_engine(o, s->writer);
		}
	}
	int release_fd = -1, report_fd = -1;
	if (o->command) {
		s->child = start_command(o->command, &o->command_as, s->json_stdout, &release_fd, &report_fd);
		if (s->child < 0) {
			fprintf(stderr, "uring-trace: cannot start '%s': %s\n", o->command, strerror(errno));
			s->child = 0;
			s->rc = 1;
			return false;
		}
	}
	struct ut_load_opts lo = {
		.obj = objs->bpf, .obj_len = objs->bpf_len, .probes = prog->probes, .nprobes = prog->nprobes,
		.disks = prog->disks, .ndisks = prog->ndisks, .enums = prog->enums, .nenums = prog->nenums,
		.ringbuf_bytes = o->buffer_bytes,
		.filter_tgid = s->child ? (uint32_t)s->child : (uint32_t)o->pid,
		.follow_forks = s->child != 0,
		.filter_comm = o->comm,
		.sample_permyriad = o->sample_pct > 0 ? (uint32_t)(o->sample_pct * 100 + 0.5) : 0,
		.verbose = o->verbose,
		.kernel = k,
	};
	s->loaded = ut_load(&lo, err, sizeof(err));
	if (!s->loaded) {
		fprintf(stderr, "uring-trace: %s\n", err);
		if (s->child) {
			kill(s->child, SIGKILL);
			waitpid(s->child, NULL, 0);
			close(report_fd);
			s->child = 0;
		}
		s->rc = 1;
		return false;
	}
	s->obj = ut_loaded_object(s->loaded);
	s->requests = map_requests(s->obj);
	s->consumer = ut_consumer_new(s->obj, record_len, on_record, s, err, sizeof(err));
	if (!s->consumer) {
		fprintf(stderr, "uring-trace: %s\n", err);
		s->child = 0;   /* held: it ends as uring-trace does (the pipe releasing it closes) */
		s->rc = 1;
		return false;
	}
	ut_stacks_open(s->obj, prog, s->child ? s->child : (pid_t)o->pid);
	ut_user_maps_init(&s->user_maps, prog);
	const char *capture = getenv("UT_CAPTURE_RECORDS");
	if (capture && !(s->capture = fopen(capture, "wb")))
		fprintf(stderr, "uring-trace: cannot write %s (UT_CAPTURE_RECORDS): %s\n", capture, strerror(errno));
	s->dec = (struct ut_decoder){.prog = prog, .engine = s->engine, .recorder = s->recorder,
				     .print_out = s->text_out, .clear_map = on_clear, .zero_map = on_zero,
				     .print_map = on_print, .maps_ctx = s,
				     .user_side = ut_user_side_new(prog, &s->user_maps, lo.sample_permyriad),
				     .findings = ut_findings_new(), .snapshot_findings = o->snapshot_on >= 0,
				     .snapshot_on = o->snapshot_on >= 0 ? (enum ut_severity)o->snapshot_on : UT_INFO,
				     .shared_exit_ts = s->requests ? &s->requests[UT_REQUEST_EXIT] : NULL};
	ut_user_side_kernel_maps(s->dec.user_side, s->obj);
	use_compiled_user_side(s->dec.user_side, prog, objs, o);
	if (s->engine)
		ut_decode_declare_names(prog, s->engine);
	report_attached(s);
	report_builtins(prog, s->loaded, o);
	if (s->engine)
		mark_start(s->engine);
	if (s->engine && o->spool_bytes) {
		s->spool = ut_spool_new(prog, s->engine, s->writer, o->spool_bytes, err, sizeof(err));
		if (!s->spool)
			fprintf(stderr, "uring-trace: warning: %s: the reader writes the trace itself\n", err);
		s->dec.spool = s->spool;
	}
	run_once_probes(s, PROBE_RUN_AT_START);
	if (s->child) {
		if (write(release_fd, "g", 1) != 1)
			fprintf(stderr, "uring-trace: cannot start the command\n");
		close(release_fd);
		char why[512];
		ssize_t n = read(report_fd, why, sizeof(why) - 1);
		close(report_fd);
		if (n > 0) {   /* it could not be run */
			fprintf(stderr, "uring-trace: %.*s\n", (int)n, why);
			waitpid(s->child, &s->child_status, 0);
			s->child = 0;
			s->rc = WEXITSTATUS(s->child_status);
			return false;
		}
	}
	return true;
}

/* The run: records read as they come, until the end (-d, Ctrl-C, exit(),
 * the -c command's end); snapshots taken and written on the way. */
/* A finding as a series of uring_trace_findings. */
static void metric_finding(void *ctx, const struct ut_finding_seen *seen)
{
	FILE *f = ctx;
	fputs("uring_trace_findings{tag=", f);
	ut_prometheus_label_value(f, seen->tag);
	fputs(",key=", f);
	ut_prometheus_label_value(f, seen->key);
	fprintf(f, ",severity=\"%s\"} %llu\n", ut_severity_names[seen->severity], (unsigned long long)seen->count);
}

/* --metrics: a fresh text for the scrape that waits for one (and the last
 * one at the end): the tracer's own counts, then the script's maps. */
static void publish_metrics(struct session *s, bool at_end)
{
	if (!s->metrics || (!at_end && !ut_metrics_wanted(s->metrics)))
		return;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	uint64_t emitted, lost;
	totals(s, &emitted, &lost);
	/* the tracer's memory, for a capture left running: what a Prometheus
	 * client library names it, and the flight recorder's part of it */
	const struct {
		const char *name, *type, *help;
		uint64_t value;
		bool shown;
	} own[] = {
		{"uring_trace_events_total", "counter", "records the reader took from the kernel", s->dec.records, true},
		{"uring_trace_events_lost_total", "counter", "records lost: the ring buffer was full", lost, true},
		{"uring_trace_events_late_total", "counter",
		 "records left out: they came after the reader wrote past their time", s->dec.lost_late, true},
		{"uring_trace_requests_shed_total", "counter",
		 "requests the kernel left out whole: the reader was behind", ut_consumer_shed(s->consumer), true},
		{"uring_trace_findings_not_kept_total", "counter", "findings made new once the most were kept, not shown",
		 ut_findings_not_kept(s->dec.findings), true},
		{"process_resident_memory_bytes", "gauge", "the tracer's resident memory", resident_bytes(), true},
		{"uring_trace_ring_bytes", "gauge", "what the flight recorder (--ring) holds, of --ring-size",
		 s->recorder ? ut_recorder_bytes(s->recorder) : 0, s->recorder != NULL},
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].shown)
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", own[i].name, own[i].help, own[i].name,
				own[i].type, own[i].name, (unsigned long long)own[i].value);
	ut_maps_prometheus(s->prog, s->obj, &s->user_maps, f);
	fputs("# HELP uring_trace_findings how many times each finding was made (docs/doctor.md)\n"
	      "# TYPE uring_trace_findings gauge\n", f);
	ut_findings_visit(s->dec.findings, metric_finding, f);
	if (fclose(f) == 0)
		ut_metrics_publish(s->metrics, text, len);
	free(text);
}

/* --live: the interval that ended, drawn. */
static void draw_live(struct session *s)
{
	double now = ut_now_s();
	if (!s->live || now - s->live_at < s->o->live_s)
		return;
	uint64_t emitted, lost;
	totals(s, &emitted, &lost);
	ut_live_draw(s->live, s->obj, &s->user_maps, s->dec.findings, now - s->live_at, s->dec.records, lost);
	s->live_at = now;
}

static void session_run(struct session *s)
{
	struct options *o = s->o;
	if (!o->quiet && !o->command)
		fprintf(stderr, "uring-trace: tracing%s; Ctrl-C to stop\n", s->writer ? "" : " (summary only)");
	s->tty = isatty(2) && !o->quiet && !o->live_s;   /* the live view is the status */
	if (o->live_s) {
		s->live = ut_live_new(s->prog, stdout, !o->summary_only);
		s->live_at = ut_now_s();
	}
	double started = ut_now_s(), last_status = started;
	s->reader_cpu_started = reader_cpu_ns();
	uint64_t last_records = 0;
	while (!stop_signal && !ut_decode_exited(&s->dec)) {
		int n = ut_consumer_poll(s->consumer, 100);
		s->reader_idle = n == 0;
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "uring-trace: reading events failed: %s\n", strerror(-n));
			s->rc = 1;
			break;
		}
		ut_stacks_poll();   /* before the child is reaped: its frames can still be named */
		if (snapshot_signal) {
			snapshot_signal = 0;
			take_snapshot_trigger(s, now_ns());
		}
		script_snapshot(s);
		continue_snapshot(s, false);
		note_trace_size(s);
		note_ring_cut(s);
		publish_metrics(s, false);
		draw_live(s);
		if (s->spool)
			ut_spool_flush(s->spool);
		if (o->duration > 0 && ut_now_s() - started >= o->duration)
			break;
		if (s->child && waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
			s->child = 0;
			break;
		}
		if (ut_now_s() - last_status >= 1.0) {
			if (s->tty)
				status_line(s, started, &last_records, &last_status);
			else
				last_status = ut_now_s();
		}
	}
	if (s->tty)
		fputc('\n', stderr);
}

/* The stop: the probes detached and their last records read, END run, the
 * flight recorder's last window written, the trace closed. */
static void session_stop(struct session *s)
{
	struct options *o = s->o;
	struct ut_program *prog = s->prog;
	ut_detach(s->loaded, &s->detached);
	ut_consumer_drain_detached(s->consumer);
	ut_decode_read_end(&s->dec);
	s->kernel_full = xcalloc(prog->nmaps + 1, sizeof(bool));
	for (unsigned i = 0; i < prog->nmaps; i++)
		s->kernel_full[i] = ut_kernel_map_full(&prog->maps[i], s->obj);
	run_once_probes(s, PROBE_RUN_AT_EXIT);
	ut_stacks_poll();
	totals(s, &s->emitted, &s->lost);
	s->lost += ut_consumer_unsent_hits(s->consumer);
	s->shed = ut_consumer_shed(s->consumer);
	ut_loaded_runs(s->loaded, &s->runs);
	if (s->recorder) {
		script_snapshot(s);
		continue_snapshot(s, true);
		/* the last window, in the -o file */
		uint64_t to = s->dec.last_ts ? s->dec.last_ts : now_ns(), window = seconds_ns(o->ring_s), events;
		s->engine = new_engine(o, s->writer);
		ut_decode_declare_names(prog, s->engine);
		mark_start(s->engine);
		mark_window(s, s->engine, to > window ? to - window : 0, to);
		struct ut_recorder_cursor cur;
		ut_recorder_start(s->recorder, s->engine, to > window ? to - window : 0, 0, &cur);
		double writing_started = ut_now_s();
		events = ut_recorder_continue(s->recorder, s->engine, &cur, to, UINT64_MAX);
		if (o->verbose)
			fprintf(stderr, "uring-trace: the window's %llu events (%.0f MiB kept) went to the engine in %.3f s\n",
				(unsigned long long)events, (double)ut_recorder_bytes(s->recorder) / (1 << 20),
				ut_now_s() - writing_started);
		uint64_t from = to > window ? to - window : 0;
		if (!o->quiet && s->cut_before >= from)
			fprintf(stderr, "uring-trace: the last %.3g s (of the %.3g s asked: --ring-size held no more): "
				"%llu events of %llu kept\n", (double)(to - ut_recorder_oldest(s->recorder)) / 1e9, o->ring_s,
				(unsigned long long)events, (unsigned long long)s->dec.records);
		else if (!o->quiet)
			fprintf(stderr, "uring-trace: the last %.3g s: %llu events of %llu kept\n", o->ring_s,
				(unsigned long long)events, (unsigned long long)s->dec.records);
	}
	if (s->spool) {   /* the rest of the trace, converted: the engine is the session's again */
		double converting = ut_now_s();
		ut_spool_finish(s->spool);
		ut_spool_stats(s->spool, &s->spooled);
		if (o->verbose)
			fprintf(stderr, "uring-trace: the spooled records took %.3f s to convert after the stop\n",
				ut_now_s() - converting);
		s->dec.spool = NULL;
	}
	if (s->engine) {
		ut_engine_finish(s->engine, s->dec.last_ts ? s->dec.last_ts : now_ns());
		if (ut_engine_disk_full(s->engine)) {   /* an error, said even with -q */
			fprintf(stderr, "uring-trace: the trace was cut (disk full): %llu events were left out of it, what "
				"was open then ends there marked cut (the summary counts them)\n",
				(unsigned long long)ut_engine_stats(s->engine)->events_cut);
			s->rc = 1;
		}
	}
	if (s->writer) {
		char err[4096];
		uint64_t kept_bytes;
		fxt_writer_flush(s->writer);
		s->trace_write_ns = fxt_writer_write_ns(s->writer);
		uint64_t kept = fxt_writer_events_written(s->writer, &kept_bytes);
		if (fxt_writer_close(s->writer, err, sizeof(err)) != 0) {
			fprintf(stderr, "uring-trace: writing the trace failed: %s; the trace is cut after its first %llu "
				"events (%.1f MB)\n", err, (unsigned long long)kept, (double)kept_bytes / 1e6);
			s->trace_cut = true;
			s->rc = 1;
		}
		s->writer = NULL;
	}
}

/* --json: the counts and the maps. */
/* The summary as JSON (docs/json.md) into j. */
static void write_json(struct session *s, FILE *j)
{
	fprintf(j, "{\"schema\":%d,\"events\":%llu,\"lost\":%llu,\"shed\":%llu,\"late\":%llu,\"missed\":%llu,"
		"\"approximate\":[", UT_JSON_SCHEMA, (unsigned long long)s->dec.records, (unsigned long long)s->lost,
		(unsigned long long)s->shed,
		(unsigned long long)s->dec.lost_late, (unsigned long long)s->runs.missed);
	if (s->lost || s->dec.lost_late || s->shed)
		report_approximate_maps(s->prog, s->lost + s->dec.lost_late, s->shed, NULL, j);
	fputs("],\"maps\":", j);
	ut_maps_json(s->prog, s->obj, &s->user_maps, j);
	fputs(",\"findings\":", j);
	ut_findings_json(s->dec.findings, j);
	fprintf(j, ",\"findings_not_kept\":%llu}\n", (unsigned long long)ut_findings_not_kept(s->dec.findings));
}

/* --json FILE, --baseline FILE: the summary as JSON written to path ("-":
 * standard output). */
static void report_json(struct session *s, const char *path)
{
	FILE *j = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!j) {
		fprintf(stderr, "uring-trace: cannot write %s: %s\n", path, strerror(errno));
		s->rc = 1;
		return;
	}
	write_json(s, j);
	if (j != stdout && fclose(j) != 0) {
		fprintf(stderr, "uring-trace: cannot write %s: %s\n", path, strerror(errno));
		s->rc = 1;
	}
}

/* --diff FILE: what changed since the summary in FILE, after the maps. */
static void report_diff(struct session *s)
{
	char *text = NULL, why[512];
	size_t len = 0;
	FILE *j = open_memstream(&text, &len);
	if (!j)
		return;
	write_json(s, j);
	if (fclose(j) != 0)
		return;
	struct ut_summary_json *now = ut_summary_json_parse(text, why, sizeof(why));
	if (now)
		ut_summary_diff(s->o->diff_against, now, s->o->diff, s->text_out);
	else
		fprintf(stderr, "uring-trace: --diff: %s\n", why);
	ut_summary_json_free(now);
	free(text);
}

/* The report: the maps, --json, and the summary on standard error. */
static void session_report(struct session *s)
{
	struct options *o = s->o;
	struct ut_program *prog = s->prog;
	uint64_t lost = s->lost, missed = s->runs.missed;
	ut_print_maps(prog, s->obj, &s->user_maps, s->text_out);
	ut_findings_print(s->dec.findings, s->text_out);
	publish_metrics(s, true);   /* the summary's figures, for a last scrape */
	if (o->json)
		report_json(s, o->json);
	if (o->baseline)
		report_json(s, o->baseline);
	if (o->diff_against)
		report_diff(s);
	if (o->quiet)
		return;
	fprintf(stderr, "uring-trace: %llu events, %llu lost", (unsigned long long)s->dec.records,
		(unsigned long long)lost);
	if (s->shed)
		fprintf(stderr, ", %llu requests shed", (unsigned long long)s->shed);
	if (s->trace_cut)
		fprintf(stderr, "; the trace in %s is cut", o->output);
	else if (!o->summary_only)
		fprintf(stderr, "; trace written to %s (open it at https://ui.perfetto.dev)", o->output);
	fputc('\n', stderr);
	if (lost)
		report_lost(s, o->buffer_bytes ? o->buffer_bytes : (size_t)8 << 20);
	if (s->shed)
		fprintf(stderr, "uring-trace: %llu requests were shed whole: the ring buffer was more than half full (the "
			"reader was behind), so the kernel left out the requests that began then, with everything keyed to "
			"them; the trace's flows are whole, and its \"requests shed\" marks say when\n",
			(unsigned long long)s->shed);
	if (s->dec.lost_late)
		fprintf(stderr, "uring-trace: %llu records reached the reader after it had written past their "
			"time and were left out (the reader was behind): trace less, or use --sample\n",
			(unsigned long long)s->dec.lost_late);
	if (missed)
		fprintf(stderr, "uring-trace: the kernel skipped %llu probe hits (a probe's program was already "
			"running on that CPU, interrupted or hit by itself): counts and flows miss them\n",
			(unsigned long long)missed);
	if (s->engine) {
		ut_engine_report_limits(s->engine, stderr);
		const struct ut_engine_stats *es = ut_engine_stats(s->engine);
		if (es->events_cut && !ut_engine_disk_full(s->engine))
			fprintf(stderr, "uring-trace: the trace was cut (%s): %llu events were left out of it, what was "
				"open then ends there marked cut (the summary counts them)\n", ut_engine_cut_reason(s->engine),
				(unsigned long long)es->events_cut);
	}
	report_full_maps(prog, &s->user_maps, s->kernel_full);
	if (lost || s->dec.lost_late || s->shed)
		report_approximate_maps(prog, lost + s->dec.lost_late, s->shed, stderr, NULL);
	if (s->dec.malformed)
		fprintf(stderr, "uring-trace: %llu records could not be used (unknown or short, or a hit whose "
			"statements ran past their bound): the compiled script or the records are damaged\n",
			(unsigned long long)s->dec.malformed);
	if (o->verbose) {
		/* what the ring carried, or would have: a split probe's hit is one record */
		fprintf(stderr, "uring-trace: the kernel sent %llu probe hits and lost %llu\n",
			(unsigned long long)s->emitted, (unsigned long long)lost);
		fprintf(stderr, "uring-trace: detached %u links (%u slow) in %.1f ms\n", s->detached.links,
			s->detached.slow_links, s->detached.ms);
		fprintf(stderr, "uring-trace: the reader fell behind %llu times (its queue of records reached "
			"its bound and was handed on at once)\n",
			(unsigned long long)ut_consumer_full_reads(s->consumer));
		report_time(s, &s->runs, reader_cpu_ns() - s->reader_cpu_started, s->trace_write_ns);
	}
}

/* The -c command's end: ended if it still runs (uring-trace ended first),
 * else its exit status is the session's.  Then --fail-on: a finding at
 * its severity or above makes the status 3, unless uring-trace failed. */
static void command_end(struct session *s)
{
	if (s->child) {
		kill(s->child, SIGTERM);
		waitpid(s->child, &s->child_status, 0);
	} else if (s->o->command && s->rc == 0) {
		s->rc = command_status(s->o, s->child_status);
	}
	bool failed = s->rc == 1 || s->rc == 2;
	if (s->o->fail_on >= 0 && ut_findings_worst(s->dec.findings) >= s->o->fail_on && !failed)
		s->rc = 3;
}

/* What the session holds, freed. */
static void session_free(struct session *s)
{
	char err[256];
	ut_spool_free(s->spool);   /* its thread owns the engine while it runs */
	free(s->kernel_full);
	if (s->engine)
		ut_engine_free(s->engine);
	if (s->writer)
		fxt_writer_close(s->writer, err, sizeof(err));
	if (s->consumer)
		ut_consumer_free(s->consumer);
	if (s->loaded)
		ut_unload(s->loaded);
	ut_stacks_close();
	ut_user_side_free(s->dec.user_side);
	ut_findings_free(s->dec.findings);
	ut_user_maps_free(&s->user_maps);
	ut_recorder_free(s->recorder);
	if (s->requests)
		munmap((void *)s->requests, (size_t)sysconf(_SC_PAGESIZE));
	if (s->capture)
		fclose(s->capture);
	ut_metrics_stop(s->metrics);
	ut_live_free(s->live);
}

int ut_trace(struct options *o, struct ut_program *prog, const struct ut_program_objects *objs, struct ut_kernel *k)
{
	struct session s = {.o = o, .prog = prog};
	if (session_start(&s, objs, k)) {
		session_run(&s);
		session_stop(&s);
		session_report(&s);
		command_end(&s);
	}
	session_free(&s);
	return s.rc;
}
