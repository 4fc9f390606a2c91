/* uring-trace: the command line.  Script -> compiler -> BPF object ->
 * loaded probes -> records -> engine -> trace file, plus the summary. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/types.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/records.h"
#include "compiler/compiler.h"
#include "compiler/program_io.h"
#include "engine/engine.h"
#include "engine/fxt.h"
#include "engine/svg_render.h"
#include "runtime/attach.h"
#include "runtime/cache.h"
#include "runtime/consumer.h"
#include "runtime/decode.h"
#include "runtime/info.h"
#include "runtime/loader.h"
#include "runtime/stacks.h"
#include "runtime/summary.h"
#include "runtime/usage.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"

#ifndef UT_VERSION
#define UT_VERSION "0.1.0"
#endif

struct options {
	const char *script;
	const char *program;        /* -e */
	const char *output;         /* -o */
	pid_t pid;                  /* -p */
	const char *command;        /* -c */
	const char *comm;           /* --comm */
	double duration;            /* -d, seconds; 0 = until stopped */
	double sample_pct;          /* --sample */
	size_t buffer_bytes;        /* --buffer */
	const char *list;           /* -l */
	bool list_given;
	bool emit_c, compile_only, verbose, quiet, summary_only;
	enum ut_dump dump;           /* --dump PASS */
	const char *json;
	const char *includes[32];
	unsigned nincludes;
	const char *defines[64];     /* -D NAME=VALUE, script flags --NAME[=VALUE] */
	unsigned ndefines;
	char *flag_defines[64];
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double now_s(void)
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

/* Finds a data directory ("stdlib", "scripts"): source tree, then prefix. */
static const char *data_dir(const char *what, char *buf, size_t len)
{
	/* the source tree (build/..), then the install prefix */
	char exe[PATH_MAX] = ".";
	ut_exe_dir(exe, sizeof(exe));
	const char *env = getenv("UT_DATA_DIR");
	const char *cands[3] = {env, NULL, UT_DATADIR};
	char tree[PATH_MAX + 8];
	snprintf(tree, sizeof(tree), "%s/..", exe);
	cands[1] = tree;
	for (int i = 0; i < 3; i++) {
		if (!cands[i])
			continue;
		snprintf(buf, len, "%s/%s", cands[i], what);
		struct stat st;
		if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
			return buf;
	}
	return NULL;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end || v < 4096 || v > (1ull << 31))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_duration(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	if (strcmp(end, "ms") == 0)
		v /= 1000;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		v *= 60;
	else if (strcmp(end, "h") == 0)
		v *= 3600;
	else if (*end && strcmp(end, "s") != 0)
		return -1;
	*out = v;
	return 0;
}

static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "uring-trace: %s%s%s\nTry 'uring-trace --help'.\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

enum { OPT_EMIT_C = 256, OPT_DUMP, OPT_COMPILE, OPT_SAMPLE, OPT_BUFFER, OPT_SUMMARY_ONLY, OPT_JSON,
       OPT_VERSION, OPT_COMM };

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"command", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, 'd'},
		{"comm", required_argument, NULL, OPT_COMM},
		{"sample", required_argument, NULL, OPT_SAMPLE},
		{"buffer", required_argument, NULL, OPT_BUFFER},
		{"list", optional_argument, NULL, 'l'},
		{"emit-c", no_argument, NULL, OPT_EMIT_C},
		{"dump", required_argument, NULL, OPT_DUMP},
		{"compile", no_argument, NULL, OPT_COMPILE},
		{"summary-only", no_argument, NULL, OPT_SUMMARY_ONLY},
		{"json", required_argument, NULL, OPT_JSON},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	/* Long options we do not know are the script's flags: --all-rings sets
	 * the script's `const all_rings` to 1, --unit=ms sets `const unit`. */
	int kept = 1;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		bool known = strncmp(a, "--", 2) != 0 || !a[2];
		for (const struct option *l = longs; !known && l->name; l++) {
			size_t n = strlen(l->name);
			known = strncmp(a + 2, l->name, n) == 0 && (a[2 + n] == 0 || a[2 + n] == '=');
		}
		if (strcmp(a, "--") == 0) {
			while (i < argc)
				argv[kept++] = argv[i++];
			break;
		}
		if (known || o->ndefines >= 64) {
			argv[kept++] = a;
			continue;
		}
		char *d = strdup(a + 2);
		for (char *p = d; *p && *p != '='; p++)
			if (*p == '-')
				*p = '_';
		o->flag_defines[o->ndefines] = d;
		o->defines[o->ndefines++] = d;
	}
	argc = kept;
	argv[argc] = NULL;
	int ch;
	while ((ch = getopt_long(argc, argv, "+he:o:p:c:d:lI:D:vq", longs, NULL)) != -1) {
		switch (ch) {
		case 'h': printf(ut_usage_text); exit(0);
		case OPT_VERSION: printf("uring-trace %s\n", UT_VERSION); exit(0);
		case 'e': o->program = optarg; break;
		case 'o': o->output = optarg; break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > INT_MAX)
				die_usage("-p takes a process id", optarg);
			if (kill((pid_t)v, 0) != 0 && errno == ESRCH)
				die_usage("no such process", optarg);
			o->pid = (pid_t)v;
			break;
		}
		case 'c': o->command = optarg; break;
		case 'd':
			if (parse_duration(optarg, &o->duration) < 0)
				die_usage("-d takes a duration like 10, 10s, 500ms or 2m", optarg);
			break;
		case OPT_COMM:
			if (strlen(optarg) > 15)
				die_usage("--comm names are at most 15 characters (the kernel's comm)", optarg);
			o->comm = optarg;
			break;
		case OPT_SAMPLE: {
			char *end;
			o->sample_pct = strtod(optarg, &end);
			if (*end == '%')
				end++;
			if (*end || o->sample_pct <= 0 || o->sample_pct > 100)
				die_usage("--sample takes a percentage above 0 and at most 100", optarg);
			break;
		}
		case OPT_BUFFER:
			if (parse_size(optarg, &o->buffer_bytes) < 0)
				die_usage("--buffer takes a size from 4K to 2G, e.g. 64M", optarg);
			break;
		case 'l': o->list_given = true; o->list = optarg; break;
		case 'D':
			if (o->ndefines < 64)
				o->defines[o->ndefines++] = optarg;
			break;
		case 'I':
			if (o->nincludes < 32)
				o->includes[o->nincludes++] = optarg;
			break;
		case OPT_EMIT_C: o->emit_c = true; break;
		case OPT_DUMP:
			o->dump = ut_dump_named(optarg);
			if (o->dump == UT_DUMP_NONE)
				die_usage("--dump takes a pass: ast, typed, resources or c", optarg);
			break;
		case OPT_COMPILE: o->compile_only = true; break;
		case OPT_SUMMARY_ONLY: o->summary_only = true; break;
		case OPT_JSON: o->json = optarg; break;
		case 'v': o->verbose = true; break;
		case 'q': o->quiet = true; break;
		default: exit(2);
		}
	}
	if (o->list_given && !o->list && optind < argc)
		o->list = argv[optind++];
	if (optind < argc)
		o->script = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument", argv[optind]);
	if (o->script && o->program)
		die_usage("give a script file or -e, not both", NULL);
	if (o->pid && o->command)
		die_usage("give -p or -c, not both", NULL);
	if (o->command && !o->command[strspn(o->command, " \t")])
		die_usage("-c takes a command to run", NULL);
}

/* Kinds -l can list: tracepoints (tracefs) and functions (BTF). */
static bool lists_functions(enum ut_probe_kind k)
{
	return k == UT_PROBE_KPROBE || k == UT_PROBE_KRETPROBE || k == UT_PROBE_FENTRY || k == UT_PROBE_FEXIT;
}

/* -l -v: the arguments a probe's body can read, as "    type name". */
static void list_arguments(struct ut_kernel *k, const struct probe_kind_def *def, const char *name)
{
	char buf[256];
	if (def->kind == UT_PROBE_TRACEPOINT) {
		const char *colon = strchr(name, ':');
		char cat[128];
		snprintf(cat, sizeof(cat), "%.*s", colon ? (int)(colon - name) : 0, name);
		const struct ut_tracepoint *tp = colon ? ut_kernel_tracepoint(k, cat, colon + 1) : NULL;
		for (unsigned i = 0; tp && i < tp->nfields; i++)
			printf("    %s %s\n", tp->fields[i].c_type, tp->fields[i].name);
		return;
	}
	struct ut_param *params = NULL;
	unsigned n = 0;
	int32_t ret = -1;
	const char *colon = strchr(name, ':');
	int rc = lists_functions(def->kind) ? ut_kernel_func_params(k, name, &params, &n, &ret)
					    : ut_kernel_tp_btf_params(k, colon ? colon + 1 : name, &params, &n);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		const char *type = ut_kernel_type_c(k, params[i].type, buf, sizeof(buf));
		printf("    %s%s%s\n", type, type[0] && type[strlen(type) - 1] == '*' ? "" : " ",
		       params[i].name[0] ? params[i].name : "?");
	}
	if (rc == 0 && ret >= 0 && (def->kind == UT_PROBE_KRETPROBE || def->kind == UT_PROBE_FEXIT))
		printf("    %s retval\n", ut_kernel_type_c(k, ret, buf, sizeof(buf)));
	free(params);
}

static int list_probes(const char *pattern, bool with_arguments)
{
	struct ut_kernel *k = ut_kernel_open();
	const char *p = pattern && *pattern ? pattern : "tracepoint:*";
	const struct probe_kind_def *def = probe_kind_def(UT_PROBE_TRACEPOINT);
	const char *glob = p;
	const char *colon = strchr(p, ':');
	if (colon && colon - p < 32) {
		char kind[32];
		snprintf(kind, sizeof(kind), "%.*s", (int)(colon - p), p);
		const struct probe_kind_def *named = probe_kind_find(kind);
		if (named && (named->kind == UT_PROBE_TRACEPOINT || named->kind == UT_PROBE_TP_BTF ||
			      named->kind == UT_PROBE_RAW_TP || lists_functions(named->kind))) {
			def = named;
			glob = colon + 1;
		}
	}
	char **names = NULL;
	int n = lists_functions(def->kind) ? ut_kernel_functions_matching(k, glob, &names)
					   : ut_kernel_tracepoints_matching(k, glob, &names);
	if (n < 0) {
		fprintf(stderr, "uring-trace: cannot list probes: %s\n", ut_kernel_error(k));
		ut_kernel_close(k);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		printf("%s:%s\n", def->name, names[i]);
		if (with_arguments)
			list_arguments(k, def, names[i]);
	}
	ut_strv_free(names, n);
	ut_kernel_close(k);
	return n > 0 ? 0 : 1;
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

/* -c: the child waits on a pipe until the probes are attached, so nothing
 * it does is missed; under sudo it runs as the invoking user.  Until it
 * execs the command it is a copy of uring-trace, and named so.
 * *report_fd reads why the command could not run, or nothing. */
static pid_t start_command(const char *cmd, int *release_fd, int *report_fd)
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
		const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
		if (getuid() == 0 && su && sg && (setgid((gid_t)atoi(sg)) != 0 || setuid((uid_t)atoi(su)) != 0))
			command_failed(report[1], 126, "cannot run '%s' as user %s: %s", cmd, su, strerror(errno));
		/* A plain command runs directly; one with shell syntax runs
		 * through sh, which execs it: either way the command keeps the
		 * pid the probes filter on (the processes it starts are
		 * followed in BPF). */
		if (!strpbrk(cmd, "|&;<>()$`\\\"'*?[#~=%{}\n")) {
			char *copy = strdup(cmd), *argv[256], *save = NULL;
			if (!copy)
				command_failed(report[1], 127, "cannot run '%s': out of memory", cmd);
			int n = 0;
			for (char *w = strtok_r(copy, " \t", &save); w && n < 255; w = strtok_r(NULL, " \t", &save))
				argv[n++] = w;
			argv[n] = NULL;
			execvp(argv[0], argv);
			/* as shells do: 127 when there is no such command, 126 when it cannot be run */
			command_failed(report[1], errno == ENOENT ? 127 : 126, "cannot run '%s': %s", argv[0],
				       strerror(errno));
		}
		char *line = malloc(strlen(cmd) + 6);
		if (!line)
			command_failed(report[1], 127, "cannot run '%s': out of memory", cmd);
		sprintf(line, "exec %s", cmd);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
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
};

static size_t record_len(void *ctx, const void *rec, size_t avail)
{
	struct session *s = ctx;
	return ut_decode_record_len(&s->dec, rec, avail);
}

static int on_record(void *ctx, const void *rec, size_t size)
{
	struct session *s = ctx;
	ut_decode_record(&s->dec, rec, size);
	return 0;
}

static void on_clear(void *ctx, const char *name)
{
	struct session *s = ctx;
	ut_clear_map(s->prog, s->obj, &s->user_maps, name);
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

static void run_once_probes(struct session *s, enum ut_probe_kind kind)
{
	for (unsigned i = 0; i < s->prog->nprobes; i++) {
		const struct ut_probe *p = &s->prog->probes[i];
		if (p->nalts != 1 || p->alts[0].kind != kind)
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

static void status_line(struct session *s, double started, uint64_t *last_records, double *last_t)
{
	double t = now_s();
	uint64_t emitted, lost;
	totals(s, &emitted, &lost);
	double rate = (double)(s->dec.records - *last_records) / (t - *last_t > 0 ? t - *last_t : 1);
	fprintf(stderr, "\r%6.1fs  %10.0f events/s  %llu events  %llu lost  %.1f MB trace   ", t - started, rate,
		(unsigned long long)s->dec.records, (unsigned long long)lost,
		s->writer ? (double)fxt_writer_bytes(s->writer) / 1e6 : 0.0);
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
			fprintf(stderr, "uring-trace: %s uses %s:%s\n", p->spec, ut_kind_name(p->alts[a].kind), p->alts[a].target);
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

/* Without -v: one line when the script runs degraded on this kernel, naming
 * the probe kinds it does not run (fentry, kprobe, ...) that alternatives
 * were passed over for, and counting the optional probes left out. */
static void note_degraded(const struct ut_program *prog, const struct ut_loaded *l)
{
	bool named[UT_PROBE_KIND_COUNT] = {false};
	const char *kinds[UT_PROBE_KIND_COUNT];
	unsigned nkinds = 0, fallbacks = 0, left_out = 0;
	for (unsigned i = 0; i < prog->nprobes; i++) {
		const struct ut_probe *p = &prog->probes[i];
		if (!p->nalts || !ut_kind_is_bpf(p->alts[0].kind))
			continue;
		int a = ut_loaded_alt(l, i);
		if (a < 0)
			left_out++;
		else if (a > 0)
			fallbacks++;
		unsigned passed_over = a < 0 ? p->nalts : (unsigned)a;
		for (unsigned j = 0; j < passed_over; j++) {
			enum ut_probe_kind kind = p->alts[j].kind;
			if (!named[kind] && ut_kind_refused(kind)) {
				named[kind] = true;
				kinds[nkinds++] = ut_kind_name(kind);
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
		fprintf(stderr, "%u optional probes are not on this kernel and are left out", left_out);
	}
	fprintf(stderr, " (-v lists them)\n");
}

/* A map the reader keeps refuses new keys past its bound, as a BPF map
 * does; unlike a BPF map's, its refusals are counted, and said. */
static void report_full_maps(const struct ut_program *prog, const struct ut_user_maps *user)
{
	for (unsigned i = 0; i < user->n; i++)
		if (user->maps[i].refused)
			fprintf(stderr, "uring-trace: %s was full (%d entries): %llu updates of new keys were dropped\n",
				prog->maps[i].name, UT_USER_MAP_MAX_ENTRIES, (unsigned long long)user->maps[i].refused);
}

/* k: the kernel the script was compiled against (its BTF already parsed),
 * or NULL to open it here. */
static int trace(struct options *o, struct ut_program *prog, const void *obj, size_t obj_len, struct ut_kernel *k)
{
	struct session s = {.o = o, .prog = prog};
	char err[4096];
	int rc = 0;
	if (!o->summary_only) {
		s.writer = fxt_writer_open(o->output, err, sizeof(err));
		if (!s.writer) {
			fprintf(stderr, "uring-trace: cannot write the trace: %s\n", err);
			return 1;
		}
		s.engine = ut_engine_new(s.writer, NULL);
	}
	int release_fd = -1, report_fd = -1, child_status = 0;
	pid_t child = 0;
	if (o->command) {
		child = start_command(o->command, &release_fd, &report_fd);
		if (child < 0) {
			fprintf(stderr, "uring-trace: cannot start '%s': %s\n", o->command, strerror(errno));
			rc = 1;
			goto out;
		}
	}
	struct ut_load_opts lo = {
		.obj = obj, .obj_len = obj_len, .probes = prog->probes, .nprobes = prog->nprobes,
		.disks = prog->disks, .ndisks = prog->ndisks,
		.ringbuf_bytes = o->buffer_bytes,
		.filter_tgid = child ? (uint32_t)child : (uint32_t)o->pid,
		.follow_forks = child != 0,
		.filter_comm = o->comm,
		.sample_permyriad = o->sample_pct > 0 ? (uint32_t)(o->sample_pct * 100 + 0.5) : 0,
		.verbose = o->verbose,
		.kernel = k,
	};
	s.loaded = ut_load(&lo, err, sizeof(err));
	if (!s.loaded) {
		fprintf(stderr, "uring-trace: %s\n", err);
		if (child) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			close(report_fd);
		}
		rc = 1;
		goto out;
	}
	s.obj = ut_loaded_object(s.loaded);
	s.consumer = ut_consumer_new(s.obj, record_len, on_record, &s, err, sizeof(err));
	if (!s.consumer) {
		fprintf(stderr, "uring-trace: %s\n", err);
		rc = 1;
		goto out;
	}
	ut_stacks_open(s.obj, prog, child ? child : (pid_t)o->pid);
	ut_user_maps_init(&s.user_maps, prog);
	s.dec = (struct ut_decoder){.prog = prog, .engine = s.engine, .print_out = stdout,
				    .clear_map = on_clear, .clear_ctx = &s,
				    .user_side = ut_user_side_new(prog, &s.user_maps, lo.sample_permyriad)};
	ut_decoder_declare_names(&s.dec);
	if (o->verbose)
		for (unsigned i = 0; i < prog->nprobes; i++) {
			int a = ut_loaded_alt(s.loaded, i);
			const char *skipped = ut_loaded_skipped(s.loaded, i);
			if (a >= 0)
				fprintf(stderr, "uring-trace: %s:%d: attached %s:%s%s%s\n", prog->probes[i].loc.file,
					prog->probes[i].loc.line, ut_kind_name(prog->probes[i].alts[a].kind),
					prog->probes[i].alts[a].target, skipped[0] ? " (skipped: " : "",
					skipped[0] ? skipped : "");
			else if (prog->probes[i].nalts && prog->probes[i].alts[0].kind != UT_PROBE_BEGIN &&
				 prog->probes[i].alts[0].kind != UT_PROBE_END)
				fprintf(stderr, "uring-trace: %s: not attached (%s)\n", prog->probes[i].spec, skipped);
		}
	else if (!o->quiet)
		note_degraded(prog, s.loaded);
	report_builtins(prog, s.loaded, o);
	if (s.engine)
		mark_start(s.engine);
	run_once_probes(&s, UT_PROBE_BEGIN);
	if (child) {
		if (write(release_fd, "g", 1) != 1)
			fprintf(stderr, "uring-trace: cannot start the command\n");
		close(release_fd);
		char why[512];
		ssize_t n = read(report_fd, why, sizeof(why) - 1);
		close(report_fd);
		if (n > 0) {
			fprintf(stderr, "uring-trace: %.*s\n", (int)n, why);
			waitpid(child, &child_status, 0);
			rc = WEXITSTATUS(child_status);
			goto out;
		}
	}
	if (!o->quiet && !o->command)
		fprintf(stderr, "uring-trace: tracing%s; Ctrl-C to stop\n", s.writer ? "" : " (summary only)");
	bool tty = isatty(2) && !o->quiet;
	double started = now_s(), last_status = started;
	uint64_t last_records = 0;
	while (!stop_signal && !s.dec.exit_requested) {
		int n = ut_consumer_poll(s.consumer, 100);
		if (n < 0 && n != -EINTR) {
			fprintf(stderr, "uring-trace: reading events failed: %s\n", strerror(-n));
			rc = 1;
			break;
		}
		ut_stacks_poll();   /* before the child is reaped: its frames can still be named */
		if (o->duration > 0 && now_s() - started >= o->duration)
			break;
		if (child && waitpid(child, &child_status, WNOHANG) == child) {
			child = 0;
			break;
		}
		if (now_s() - last_status >= 1.0) {
			if (tty)
				status_line(&s, started, &last_records, &last_status);
			else
				last_status = now_s();
		}
	}
	if (tty)
		fputc('\n', stderr);
	struct ut_detach_stats ds;
	ut_detach(s.loaded, &ds);
	ut_consumer_drain(s.consumer);
	run_once_probes(&s, UT_PROBE_END);
	ut_stacks_poll();
	uint64_t emitted, lost;
	totals(&s, &emitted, &lost);
	uint64_t missed = ut_loaded_missed(s.loaded);
	if (s.engine)
		ut_engine_finish(s.engine, s.dec.last_ts ? s.dec.last_ts : now_ns());
	if (s.writer) {
		if (fxt_writer_close(s.writer, err, sizeof(err)) != 0) {
			fprintf(stderr, "uring-trace: writing %s failed: %s\n", o->output, err);
			rc = 1;
		}
		s.writer = NULL;
	}
	ut_print_maps(prog, s.obj, &s.user_maps, stdout);
	if (o->json) {
		FILE *j = strcmp(o->json, "-") == 0 ? stdout : fopen(o->json, "w");
		if (!j) {
			fprintf(stderr, "uring-trace: cannot write %s: %s\n", o->json, strerror(errno));
			rc = 1;
		} else {
			fprintf(j, "{\"events\":%llu,\"lost\":%llu,\"late\":%llu,\"missed\":%llu,\"maps\":",
				(unsigned long long)s.dec.records, (unsigned long long)lost,
				(unsigned long long)s.dec.lost_late, (unsigned long long)missed);
			ut_maps_json(prog, s.obj, &s.user_maps, j);
			fputs("}\n", j);
			if (j != stdout)
				fclose(j);
		}
	}
	if (!o->quiet) {
		fprintf(stderr, "uring-trace: %llu events, %llu lost", (unsigned long long)s.dec.records,
			(unsigned long long)lost);
		if (!o->summary_only)
			fprintf(stderr, "; trace written to %s (open it at https://ui.perfetto.dev)", o->output);
		fputc('\n', stderr);
		if (lost)
			fprintf(stderr, "uring-trace: events were lost: raise --buffer (now %zu bytes) or trace less\n",
				o->buffer_bytes ? o->buffer_bytes : (size_t)8 << 20);
		if (s.dec.lost_late)
			fprintf(stderr, "uring-trace: %llu records reached the reader after it had written past their "
				"time and were left out (the reader was behind): trace less, or use --sample\n",
				(unsigned long long)s.dec.lost_late);
		if (missed)
			fprintf(stderr, "uring-trace: the kernel skipped %llu probe hits (a probe's program was already "
				"running on that CPU, interrupted or hit by itself): counts and flows miss them\n",
				(unsigned long long)missed);
		if (s.engine)
			ut_engine_report_limits(s.engine, stderr);
		report_full_maps(prog, &s.user_maps);
		if (s.dec.malformed)
			fprintf(stderr, "uring-trace: %llu records could not be used (unknown or short, or a hit whose "
				"statements ran past their bound): the compiled script or the records are damaged\n",
				(unsigned long long)s.dec.malformed);
		if (o->verbose) {
			fprintf(stderr, "uring-trace: detached %u links (%u slow) in %.1f ms\n", ds.links, ds.slow_links, ds.ms);
			fprintf(stderr, "uring-trace: the reader fell behind %llu times (its queue of records reached "
				"its bound and was handed on at once)\n",
				(unsigned long long)ut_consumer_full_reads(s.consumer));
		}
	}
	if (child) {   /* uring-trace ended first */
		kill(child, SIGTERM);
		waitpid(child, &child_status, 0);
	} else if (o->command && rc == 0) {
		rc = command_status(o, child_status);
	}
out:
	if (s.engine)
		ut_engine_free(s.engine);
	if (s.writer)
		fxt_writer_close(s.writer, err, sizeof(err));
	if (s.consumer)
		ut_consumer_free(s.consumer);
	if (s.loaded)
		ut_unload(s.loaded);
	ut_stacks_close();
	ut_user_side_free(s.dec.user_side);
	ut_user_maps_free(&s.user_maps);
	return rc;
}

/* A time in milliseconds for render's window options. */
static double parse_render_ms(const char *option, const char *text)
{
	char *end;
	double ms = strtod(text, &end);
	if (end == text || *end || !(ms >= 0 && ms < 1e12)) {
		char msg[96];
		snprintf(msg, sizeof(msg), "%s takes milliseconds after the trace's first event, like 2.5", option);
		die_usage(msg, text);
	}
	return ms;
}

/* `uring-trace render [options] TRACE.fxt`: the trace as an SVG picture. */
static int render_command(int argc, char **argv)
{
	enum { RENDER_FROM = 256, RENDER_TO, RENDER_BUSIEST, RENDER_WIDTH, RENDER_ONLY };
	static const struct option longs[] = {
		{"output", required_argument, NULL, 'o'},
		{"from", required_argument, NULL, RENDER_FROM},
		{"to", required_argument, NULL, RENDER_TO},
		{"busiest", required_argument, NULL, RENDER_BUSIEST},
		{"width", required_argument, NULL, RENDER_WIDTH},
		{"only", required_argument, NULL, RENDER_ONLY},
		{NULL, 0, NULL, 0},
	};
	struct svg_render_options ro = {0};
	const char **only = calloc((size_t)argc, sizeof(*only));
	if (!only)
		return 1;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "o:", longs, NULL)) != -1) {
		switch (c) {
		case 'o': ro.output = optarg; break;
		case RENDER_FROM: ro.from_ms = parse_render_ms("--from", optarg); ro.has_from = true; break;
		case RENDER_TO: ro.to_ms = parse_render_ms("--to", optarg); ro.has_to = true; break;
		case RENDER_BUSIEST:
			ro.busiest_ms = parse_render_ms("--busiest", optarg);
			if (ro.busiest_ms <= 0)
				die_usage("--busiest takes the window's length in milliseconds, above 0", optarg);
			break;
		case RENDER_WIDTH: {
			unsigned long w = strtoul(optarg, &end, 10);
			if (*end || w < SVG_MIN_WIDTH || w > SVG_MAX_WIDTH)
				die_usage("--width takes pixels from 600 to 20000", optarg);
			ro.width = (unsigned)w;
			break;
		}
		case RENDER_ONLY: only[ro.nonly++] = optarg; break;
		default: die_usage("usage: uring-trace render [-o FILE.svg] [--from MS] [--to MS] [--busiest MS] [--width PX] [--only NAME] TRACE.fxt", NULL);
		}
	}
	if (optind != argc - 1)
		die_usage("usage: uring-trace render [-o FILE.svg] [--from MS] [--to MS] [--busiest MS] [--width PX] [--only NAME] TRACE.fxt", NULL);
	if (ro.busiest_ms > 0 && (ro.has_from || ro.has_to))
		die_usage("give --busiest or --from/--to, not both", NULL);
	ro.input = argv[optind];
	/* trace.fxt and trace.fxt.gz draw to trace.svg */
	char output[PATH_MAX];
	if (!ro.output) {
		size_t len = strlen(ro.input);
		for (const char *ext = ".fxt.gz\0.fxt\0"; *ext; ext += strlen(ext) + 1) {
			size_t n = strlen(ext);
			if (len > n && strcmp(ro.input + len - n, ext) == 0) {
				len -= n;
				break;
			}
		}
		snprintf(output, sizeof(output), "%.*s.svg", (int)len, ro.input);
		ro.output = output;
	}
	ro.only = only;
	int rc = svg_render(&ro, stderr);
	if (rc == 0 && strcmp(ro.output, "-") != 0)
		fprintf(stderr, "uring-trace: wrote %s\n", ro.output);
	free(only);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--info") == 0)
		return ut_print_info(stdout);
	if (argc >= 2 && (strcmp(argv[1], "dump") == 0 || strcmp(argv[1], "stats") == 0)) {
		bool json = argc == 4 && strcmp(argv[2], "--json") == 0;
		if (argc != 3 && !json)
			die_usage("usage: uring-trace dump|stats [--json] FILE", NULL);
		const char *file = argv[argc - 1];
		return argv[1][0] == 'd' ? fxt_dump(file, stdout) : fxt_stats(file, stdout, json);
	}
	if (argc >= 2 && strcmp(argv[1], "render") == 0)
		return render_command(argc - 1, argv + 1);
	struct options o = {.output = "trace.fxt"};
	parse_options(argc, argv, &o);
	if (o.compile_only && strcmp(o.output, "trace.fxt") == 0)
		die_usage("--compile needs -o FILE.uto", NULL);
	if (o.list_given)
		return list_probes(o.list, o.verbose);
	char stdlib[PATH_MAX], scripts[PATH_MAX], deflt[PATH_MAX + 16];
	const char *stdlib_dir = data_dir("stdlib", stdlib, sizeof(stdlib));
	if (!o.script && !o.program) {
		if (!data_dir("scripts", scripts, sizeof(scripts))) {
			fprintf(stderr, "uring-trace: no script given and the default scripts/io_uring.ut is not installed\n");
			return 2;
		}
		snprintf(deflt, sizeof(deflt), "%s/io_uring.ut", scripts);
		o.script = deflt;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* A compiled script (.uto) runs as it is: no compiler, no clang. */
	void *image = NULL;
	size_t image_len = 0;
	char err[8192];
	if (o.script && ut_read_file(o.script, &image, &image_len) == 0 && image_len >= 4 &&
	    memcmp(image, UT_PROGRAM_MAGIC, 3) == 0) {
		const void *obj;
		size_t obj_len;
		struct ut_program *prog = ut_program_load(image, image_len, &obj, &obj_len, err, sizeof(err));
		if (!prog) {
			fprintf(stderr, "uring-trace: %s: %s\n", o.script, err);
			free(image);
			return 1;
		}
		int rc = o.emit_c || o.dump || o.compile_only ? 2 : trace(&o, prog, obj, obj_len, NULL);
		if (rc == 2)
			fprintf(stderr, "uring-trace: %s is already compiled: --emit-c, --dump and --compile need the .ut source\n",
				o.script);
		ut_program_free(prog);
		free(image);
		return rc;
	}
	free(image);

	struct ut_kernel *k = ut_kernel_open();
	struct diag d;
	diag_init(&d, stderr);
	struct ut_compile_opts co = {
		.file = o.script, .text = o.program, .include_dirs = o.includes, .ninclude_dirs = o.nincludes,
		.stdlib_dir = stdlib_dir, .dump = o.dump, .dump_to = stdout, .verbose = o.verbose,
		.defines = o.defines, .ndefines = o.ndefines,
	};
	struct ut_program *prog = ut_compile(&co, k, &d);
	int rc = 0;
	if (!prog) {
		fprintf(stderr, "uring-trace: %d error%s; nothing was traced\n", d.errors, d.errors == 1 ? "" : "s");
		rc = 1;
		goto done;
	}
	if (o.emit_c || o.dump) {
		if (o.emit_c)
			fputs(prog->bpf_c, stdout);
		goto done;
	}
	void *obj = NULL;
	size_t obj_len = 0;
	bool cached = false;
	double t0 = now_s();
	if (ut_build_object(prog->bpf_c, &obj, &obj_len, &cached, err, sizeof(err)) != 0) {
		fprintf(stderr, "uring-trace: the generated BPF C did not compile (a bug in uring-trace: please report it with --emit-c output):\n%s\n", err);
		rc = 1;
		goto done;
	}
	if (err[0] && !o.quiet)
		fprintf(stderr, "uring-trace: warning: the compiled BPF object is not cached, the next run compiles "
			"again (set UT_CACHE_DIR to a writable directory): %s\n", err);
	if (o.verbose)
		fprintf(stderr, "uring-trace: BPF object %s (%.0f ms)\n", cached ? "from cache" : "compiled", (now_s() - t0) * 1000);
	if (o.compile_only) {
		void *out;
		size_t out_len;
		if (ut_program_save(prog, obj, obj_len, &out, &out_len) != 0 || ut_write_file_atomic(o.output, out, out_len) != 0) {
			fprintf(stderr, "uring-trace: cannot write %s: %s\n", o.output, strerror(errno));
			rc = 1;
		} else if (!o.quiet) {
			fprintf(stderr, "uring-trace: wrote %s (%zu bytes); run it with: uring-trace %s\n", o.output, out_len,
				o.output);
		}
		if (rc == 0)
			free(out);
		free(obj);
		goto done;
	}
	rc = trace(&o, prog, obj, obj_len, k);
	free(obj);
done:
	for (unsigned i = 0; i < o.ndefines; i++)
		free(o.flag_defines[i]);
	ut_program_free(prog);
	if (k)
		ut_kernel_close(k);
	return rc;
}
