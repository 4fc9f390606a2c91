/* uring-trace: the command line.  Script -> compiler -> BPF object ->
 * loaded probes -> records -> engine -> trace file, plus the summary.
 * This file reads the options and runs the command asked for: the
 * listing (runtime/list.c), the tracing session (runtime/session.c), the
 * trace file tools, --info. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "compiler/compiler.h"
#include "compiler/diag.h"
#include "compiler/gen_native.h"
#include "compiler/program_io.h"
#include "fxt/fxt.h"
#include "kernel/kernel.h"
#include "tools/tools.h"
#include "tools/render.h"
#include "runtime/cache.h"
#include "runtime/findings.h"
#include "runtime/program_cache.h"
#include "runtime/diff.h"
#include "runtime/info.h"
#include "runtime/list.h"
#include "runtime/native.h"
#include "runtime/options.h"
#include "runtime/session.h"
#include "runtime/usage.h"

#ifndef UT_VERSION
#define UT_VERSION "0.1.0"
#endif

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

/* A size like 4096, 64K, 8M, 2G or 1T, from min to max bytes. */
static int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (end == s || *s == '-')
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || v > max >> shift || v << shift < min)
		return -1;
	*out = v << shift;
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
       OPT_VERSION, OPT_COMM, OPT_RING, OPT_AFTER, OPT_MAX_SNAPSHOTS, OPT_MAX_SIZE, OPT_ALL_IN_KERNEL,
       OPT_RUN_AS, OPT_RING_SIZE, OPT_METRICS, OPT_LIVE, OPT_BASELINE, OPT_DIFF, OPT_FAIL_ON, OPT_SNAPSHOT_ON,
       OPT_SPOOL_SIZE };

/* uring-trace's long options; others are script flags (parse_options). */
static const struct option long_options[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"output", required_argument, NULL, 'o'},
	{"pid", required_argument, NULL, 'p'},
	{"command", required_argument, NULL, 'c'},
	{"duration", required_argument, NULL, 'd'},
	{"comm", required_argument, NULL, OPT_COMM},
	{"run-as", required_argument, NULL, OPT_RUN_AS},
	{"sample", required_argument, NULL, OPT_SAMPLE},
	{"buffer", required_argument, NULL, OPT_BUFFER},
	{"ring", required_argument, NULL, OPT_RING},
	{"ring-size", required_argument, NULL, OPT_RING_SIZE},
	{"spool-size", required_argument, NULL, OPT_SPOOL_SIZE},
	{"after", required_argument, NULL, OPT_AFTER},
	{"max-snapshots", required_argument, NULL, OPT_MAX_SNAPSHOTS},
	{"max-size", required_argument, NULL, OPT_MAX_SIZE},
	{"list", optional_argument, NULL, 'l'},
	{"emit-c", no_argument, NULL, OPT_EMIT_C},
	{"dump", required_argument, NULL, OPT_DUMP},
	{"compile", no_argument, NULL, OPT_COMPILE},
	{"all-in-kernel", no_argument, NULL, OPT_ALL_IN_KERNEL},
	{"summary-only", no_argument, NULL, OPT_SUMMARY_ONLY},
	{"json", required_argument, NULL, OPT_JSON},
	{"metrics", required_argument, NULL, OPT_METRICS},
	{"live", optional_argument, NULL, OPT_LIVE},
	{"baseline", required_argument, NULL, OPT_BASELINE},
	{"diff", required_argument, NULL, OPT_DIFF},
	{"fail-on", required_argument, NULL, OPT_FAIL_ON},
	{"snapshot-on", required_argument, NULL, OPT_SNAPSHOT_ON},
	{"verbose", no_argument, NULL, 'v'},
	{"quiet", no_argument, NULL, 'q'},
	{NULL, 0, NULL, 0},
};

static const char short_options[] = "+he:o:p:c:d:lI:D:vq";

/* Whether a is one of uring-trace's long options ("--buffer=1M"). */
static bool is_long_option(const char *a)
{
	for (const struct option *l = long_options; l->name; l++) {
		size_t n = strlen(l->name);
		if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, l->name, n) == 0 && (a[2 + n] == 0 || a[2 + n] == '='))
			return true;
	}
	return false;
}

/* Whether a is one of uring-trace's own options ("-c", "--buffer=1M"). */
static bool is_own_option(const char *a)
{
	if (a[0] != '-' || !a[1] || a[1] == '+' || a[1] == ':')
		return false;
	return a[1] == '-' ? is_long_option(a) : strchr(short_options, a[1]) != NULL;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	/* Long options we do not know are the script's flags: --all-rings sets
	 * the script's `const all_rings` to 1, --unit=ms sets `const unit`. */
	int kept = 1;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		bool known = strncmp(a, "--", 2) != 0 || !a[2] || is_long_option(a);
		if (strcmp(a, "--") == 0) {
			while (i < argc)
				argv[kept++] = argv[i++];
			break;
		}
		if (known || o->nflags >= 64) {
			argv[kept++] = a;
			continue;
		}
		o->flags[o->nflags++] = a + 2;
	}
	argc = kept;
	argv[argc] = NULL;
	int ch;
	while ((ch = getopt_long(argc, argv, short_options, long_options, NULL)) != -1) {
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
		case OPT_RUN_AS: o->run_as = optarg; break;
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
		case OPT_BUFFER: {
			uint64_t bytes;
			if (parse_size(optarg, 4096, 1ull << 31, &bytes) < 0)
				die_usage("--buffer takes a size from 4K to 2G, e.g. 64M", optarg);
			o->buffer_bytes = (size_t)bytes;
			break;
		}
		case OPT_RING:
			if (parse_duration(optarg, &o->ring_s) < 0)
				die_usage("--ring takes a duration like 5s, 500ms or 2m", optarg);
			break;
		case OPT_RING_SIZE: {
			uint64_t bytes;
			if (parse_size(optarg, 16u << 20, 1ull << 40, &bytes) < 0)
				die_usage("--ring-size takes a size of at least 16M, e.g. 256M or 2G", optarg);
			o->ring_bytes = (size_t)bytes;
			break;
		}
		case OPT_SPOOL_SIZE: {
			uint64_t bytes = 0;
			if (strcmp(optarg, "0") != 0 && parse_size(optarg, 1u << 20, 1ull << 40, &bytes) < 0)
				die_usage("--spool-size takes a size of at least 1M, e.g. 512M, or 0", optarg);
			o->spool_bytes = (size_t)bytes;
			break;
		}
		case OPT_AFTER:
			if (strcmp(optarg, "0") == 0)
				o->after_s = 0;
			else if (parse_duration(optarg, &o->after_s) < 0)
				die_usage("--after takes a duration like 1s or 200ms, or 0", optarg);
			break;
		case OPT_MAX_SNAPSHOTS: {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 10000)
				die_usage("--max-snapshots takes a number from 1 to 10000", optarg);
			o->max_snapshots = (unsigned)v;
			break;
		}
		case OPT_MAX_SIZE:
			if (parse_size(optarg, 1u << 20, UINT64_MAX, &o->max_size) < 0)
				die_usage("--max-size takes a size of at least 1M, e.g. 500M or 2G", optarg);
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
				die_usage("--dump takes a pass: ast, typed, resources, placement, reuse, c, reader-c or program", optarg);
			break;
		case OPT_COMPILE: o->compile_only = true; break;
		case OPT_ALL_IN_KERNEL: o->all_in_kernel = true; break;
		case OPT_SUMMARY_ONLY: o->summary_only = true; break;
		case OPT_JSON: o->json = optarg; break;
		case OPT_METRICS: o->metrics = optarg; break;
		case OPT_BASELINE: o->baseline = optarg; break;
		case OPT_DIFF: o->diff = optarg; break;
		case OPT_LIVE:
			o->live_s = 1;
			if (optarg && parse_duration(optarg, &o->live_s) < 0)
				die_usage("--live takes an interval like 1s or 500ms (--live=2s)", optarg);
			break;
		case OPT_FAIL_ON: case OPT_SNAPSHOT_ON: {
			int level = ut_severity_named(optarg);
			if (level < 0)
				die_usage(ch == OPT_FAIL_ON ? "--fail-on takes a severity: info, warn or crit"
							    : "--snapshot-on takes a severity: info, warn or crit", optarg);
			*(ch == OPT_FAIL_ON ? &o->fail_on : &o->snapshot_on) = level;
			break;
		}
		case 'v': o->verbose = true; break;
		case 'q': o->quiet = true; break;
		default: exit(2);
		}
	}
	if (o->list_given && !o->list && optind < argc)
		o->list = argv[optind++];
	if (optind < argc && !o->program && !o->list_given)
		o->script = argv[optind++];
	/* the script's positional parameters ($1 ...), as bpftrace takes them;
	 * one of our options there was meant for us (`script.ut -c CMD` would
	 * trace the whole machine with "-c" as $1), unless after -- */
	bool verbatim = optind > 1 && strcmp(argv[optind - 1], "--") == 0;   /* getopt took it */
	while (optind < argc && !o->list_given && o->npositional < 64) {
		if (!verbatim && strcmp(argv[optind], "--") == 0) {
			verbatim = true;
			optind++;
			continue;
		}
		if (!verbatim && is_own_option(argv[optind]))
			die_usage("options go before the script (after it, '--' passes them on as its positional "
				  "parameters $1 ...)", argv[optind]);
		o->positional[o->npositional++] = argv[optind++];
	}
	if (optind < argc)
		die_usage(o->list_given ? "unexpected argument" : "at most 64 positional parameters", argv[optind]);
	if (o->pid && o->command)
		die_usage("give -p or -c, not both", NULL);
	if (o->command && !o->command[strspn(o->command, " \t")])
		die_usage("-c takes a command to run", NULL);
	if (o->run_as && !o->command)
		die_usage("--run-as says who runs -c's command: give -c too", NULL);
	if (o->ring_s && o->summary_only)
		die_usage("--ring keeps the trace's last seconds to write them; --summary-only writes no trace", NULL);
	if (o->snapshot_on >= 0 && !o->ring_s)
		die_usage("--snapshot-on writes the flight recorder's window when a finding is made: give --ring too", NULL);
}

/* Flags and -D set a script's constants: without a script to compile
 * (-l, a compiled .uto) there are none, and a flag is a misspelt option. */
_Noreturn static void no_constants_to_set(const struct options *o, const char *why)
{
	if (o->nflags) {
		const char *names[sizeof(long_options) / sizeof(long_options[0])];
		unsigned n = 0;
		for (; long_options[n].name; n++)
			names[n] = long_options[n].name;
		size_t len = strcspn(o->flags[0], "=");
		char typed[64];
		snprintf(typed, sizeof(typed), "%.*s", (int)(len < sizeof(typed) ? len : sizeof(typed) - 1), o->flags[0]);
		const char *near = ut_suggest(typed, (char *const *)names, n);
		fprintf(stderr, "uring-trace: unknown option '--%s'%s%s%s: %s\n", typed, near ? " (did you mean '--" : "",
			near ? near : "", near ? "'?)" : "", why);
	} else {
		fprintf(stderr, "uring-trace: -D %s: %s\n", o->defines[0], why);
	}
	fprintf(stderr, "Try 'uring-trace --help'.\n");
	exit(2);
}

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
	const char **only = xcalloc((size_t)argc, sizeof(*only));
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

/* The script's objects, built at the same time (each from the cache
 * when there): its BPF object, and the reader's user side for this
 * machine (none where the script has no user side, or where it did not
 * build: the reader interprets it then).  builds[] hold them, to be
 * freed.  0, or 1 when the BPF object did not build. */
static int build_objects(const struct ut_program *prog, const struct options *o, struct ut_object_build builds[2],
			 struct ut_program_objects *objs)
{
	char *user_c = ut_native_supported() ? ut_gen_native(prog) : NULL;
	struct ut_object_build *bpf = &builds[0], *user = &builds[1];
	*bpf = (struct ut_object_build){.c_src = prog->bpf_c};
	*user = (struct ut_object_build){.c_src = user_c, .host = true};
	double t0 = ut_now_s();
	ut_build_objects(builds, user_c ? 2 : 1);
	double ms = (ut_now_s() - t0) * 1000;
	if (bpf->rc != 0) {
		fprintf(stderr, "uring-trace: the generated BPF C did not compile (a bug in uring-trace: please report it with --emit-c output):\n%s\n",
			bpf->err);
		free(user_c);
		free(user->obj);
		return 1;
	}
	if (bpf->err[0] && !o->quiet)
		fprintf(stderr, "uring-trace: warning: the compiled BPF object is not cached, the next run compiles "
			"again (set UT_CACHE_DIR to a writable directory): %s\n", bpf->err);
	if (o->verbose)
		fprintf(stderr, "uring-trace: BPF object %s (%.0f ms)\n", bpf->cached ? "from cache" : "compiled", ms);
	*objs = (struct ut_program_objects){.bpf = bpf->obj, .bpf_len = bpf->len};
	if (user_c && user->rc != 0) {
		fprintf(stderr, "uring-trace: warning: the reader's generated C did not compile (a bug in uring-trace: please "
			"report it); the reader interprets the script's user side, more slowly:\n%s\n", user->err);
	} else if (user_c) {
		if (user->err[0] && !o->quiet)
			fprintf(stderr, "uring-trace: warning: the reader's compiled code is not cached: %s\n", user->err);
		if (o->verbose)
			fprintf(stderr, "uring-trace: the reader's user side %s\n", user->cached ? "from cache" : "compiled");
		objs->user = user->obj;
		objs->user_len = user->len;
		objs->user_c_hash = ut_hash_bytes(UT_HASH_INIT, user_c, strlen(user_c) + 1);
	}
	free(user_c);
	return 0;
}

/* Traces with the program kept for this compile (runtime/program_cache.h),
 * its exit status in *rc; false when none is kept. */
static bool run_kept(struct options *o, const struct ut_program_cache *kept, int *rc)
{
	size_t len;
	char *report, err[512];
	void *image = ut_program_cache_get(kept, &len, &report);
	if (!image)
		return false;
	struct ut_program_objects objs;
	struct ut_program *prog = ut_program_load(image, len, &objs, err, sizeof(err));
	bool ran = prog != NULL;
	if (prog) {
		if (o->verbose)
			fprintf(stderr, "%suring-trace: the compiled program from the cache (%s): its scripts are unchanged\n",
				report, kept->path);
		*rc = ut_trace(o, prog, &objs, NULL);
		ut_program_free(prog);
	}
	free(report);
	free(image);
	return ran;
}

/* Keeps the program compiled for this run (runtime/program_cache.h); -v
 * says why when it is not kept. */
static void keep_program(const struct ut_program_cache *kept, const struct ut_program *prog,
			 const struct ut_program_objects *objs, const struct ut_compile_inputs *inputs,
			 const char *report, bool warned, bool verbose)
{
	char why[PATH_MAX + 128];
	void *image;
	size_t len;
	bool ok = false;
	if (warned) {
		snprintf(why, sizeof(why), "the compile warned (its warnings are shown at each run)");
	} else {
		ut_program_save(prog, objs, &image, &len);
		ok = ut_program_cache_put(kept, prog, inputs, report, image, len, why, sizeof(why));
		free(image);
	}
	if (!ok && verbose)
		fprintf(stderr, "uring-trace: the compiled program is not kept in the cache: %s\n", why);
}

/* Compiles (or takes from the cache, or loads as .uto) the script o names
 * and traces with it, or does what --emit-c, --dump or --compile ask. */
static int run_script(struct options *o)
{
	char stdlib[PATH_MAX], scripts[PATH_MAX], deflt[PATH_MAX + 16];
	const char *stdlib_dir = data_dir("stdlib", stdlib, sizeof(stdlib));
	if (!o->script && !o->program) {
		if (!data_dir("scripts", scripts, sizeof(scripts))) {
			fprintf(stderr, "uring-trace: no script given and the default scripts/io_uring.ut is not installed\n");
			return 2;
		}
		snprintf(deflt, sizeof(deflt), "%s/io_uring.ut", scripts);
		o->script = deflt;
	}
	signal(SIGINT, ut_on_signal);
	signal(SIGTERM, ut_on_signal);
	signal(SIGUSR1, ut_on_snapshot_signal);
	signal(SIGPIPE, SIG_IGN);

	/* A compiled script (.uto) runs as it is: no compiler, no clang. */
	void *image = NULL;
	size_t image_len = 0;
	char err[8192];
	if (o->script && ut_read_file(o->script, &image, &image_len) == 0 && image_len >= 4 &&
	    memcmp(image, UT_PROGRAM_MAGIC, 3) == 0) {
		if (o->nflags || o->ndefines)
			no_constants_to_set(o, "a compiled script's constants are set when it is compiled (--compile)");
		if (o->npositional)
			die_usage("a compiled script's positional parameters are given when it is compiled (--compile)",
				  o->positional[0]);
		struct ut_program_objects objs;
		struct ut_program *prog = ut_program_load(image, image_len, &objs, err, sizeof(err));
		if (!prog) {
			fprintf(stderr, "uring-trace: %s: %s\n", o->script, err);
			free(image);
			return 1;
		}
		int rc = o->emit_c || o->dump || o->compile_only ? 2 : ut_trace(o, prog, &objs, NULL);
		if (rc == 2)
			fprintf(stderr, "uring-trace: %s is already compiled: --emit-c, --dump and --compile need the .ut source\n",
				o->script);
		ut_program_free(prog);
		free(image);
		return rc;
	}
	free(image);

	const char *options[sizeof(long_options) / sizeof(long_options[0])];
	for (size_t i = 0; i < sizeof(long_options) / sizeof(long_options[0]); i++)
		options[i] = long_options[i].name;
	struct ut_compile_opts co = {
		.file = o->script, .text = o->program, .include_dirs = o->includes, .ninclude_dirs = o->nincludes,
		.stdlib_dir = stdlib_dir, .dump = o->dump, .dump_to = stdout,
		.flags = o->flags, .nflags = o->nflags, .defines = o->defines, .ndefines = o->ndefines, .options = options,
		.positional = o->positional, .npositional = o->npositional,
		.all_in_kernel = o->all_in_kernel, .no_trace = o->summary_only, .portable = o->compile_only,
	};
	/* A run of a script compiled before, unchanged, on this boot, runs
	 * the program kept then; else it is compiled, and kept. */
	struct ut_program_cache kept = {.path = ""};
	int kept_rc;
	if (!o->emit_c && !o->dump && !o->compile_only && ut_program_cache_find(&kept, &co) && run_kept(o, &kept, &kept_rc))
		return kept_rc;
	struct ut_kernel *k = ut_kernel_open();
	struct diag d;
	diag_init(&d, stderr);
	/* -v's account of the compile is kept with the program, to be told
	 * again when it runs from the cache */
	char *report = NULL;
	size_t report_len = 0;
	FILE *report_to = kept.path[0] ? open_memstream(&report, &report_len) : NULL;
	struct ut_compile_inputs inputs = {0};
	co.report = report_to ? report_to : o->verbose ? stderr : NULL;
	co.inputs = kept.path[0] ? &inputs : NULL;   /* what a kept program depends on */
	struct ut_program *prog = ut_compile(&co, k, &d);
	if (report_to && fclose(report_to) == 0 && o->verbose)
		fputs(report, stderr);
	int rc = 0;
	if (!prog) {
		fprintf(stderr, "uring-trace: %d error%s; nothing was traced\n", d.errors, d.errors == 1 ? "" : "s");
		rc = 1;
		goto done;
	}
	if (o->emit_c || o->dump) {
		if (o->emit_c)
			fputs(prog->bpf_c, stdout);
		goto done;
	}
	struct ut_object_build builds[2];
	struct ut_program_objects objs;
	if ((rc = build_objects(prog, o, builds, &objs)) != 0)
		goto done;
	if (o->compile_only) {
		void *out;
		size_t out_len;
		ut_program_save(prog, &objs, &out, &out_len);
		if (ut_write_file_atomic(o->output, out, out_len) != 0) {
			fprintf(stderr, "uring-trace: cannot write %s: %s\n", o->output, strerror(errno));
			rc = 1;
		} else if (!o->quiet) {
			fprintf(stderr, "uring-trace: wrote %s (%zu bytes); run it with: uring-trace %s\n", o->output, out_len,
				o->output);
		}
		free(out);
	} else {
		if (kept.path[0])
			keep_program(&kept, prog, &objs, &inputs, report, d.warnings > 0, o->verbose);
		rc = ut_trace(o, prog, &objs, k);
	}
	free(builds[0].obj);
	free(builds[1].obj);
done:
	ut_program_free(prog);
	ut_compile_inputs_free(&inputs);
	free(report);
	if (k)
		ut_kernel_close(k);
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
	struct options o = {.output = "trace.fxt", .after_s = 1, .max_snapshots = 10, .ring_bytes = UT_RING_BYTES,
			    .fail_on = -1, .snapshot_on = -1, .spool_bytes = UT_SPOOL_BYTES};
	parse_options(argc, argv, &o);
	if (o.compile_only && strcmp(o.output, "trace.fxt") == 0)
		die_usage("--compile needs -o FILE.uto", NULL);
	if (o.list_given && (o.nflags || o.ndefines))
		no_constants_to_set(&o, "-l runs no script whose constant it could set");
	if (o.list_given)
		return ut_list_probes(o.list, o.verbose);
	char why[512];
	if (o.command && ut_identity_resolve(o.run_as, &o.command_as, why, sizeof(why)) != 0) {
		fprintf(stderr, "uring-trace: %s\n", why);
		return 2;
	}
	if (o.diff && !(o.diff_against = ut_summary_json_read(o.diff, why, sizeof(why)))) {
		fprintf(stderr, "uring-trace: --diff: %s\n", why);
		return 2;
	}
	int rc = run_script(&o);
	ut_identity_free(&o.command_as);
	ut_summary_json_free(o.diff_against);
	return rc;
}
