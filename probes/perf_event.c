/* Probes on perf events: one perf_event program each, run where the event
 * samples.
 *
 *   interval:1s, interval:s:1, interval:hz:10 (i:)  a timer on CPU 0 alone;
 *       its hits belong to no traced process
 *   profile:hz:99, profile:ms:10                      a timer on every CPU
 *   software:EVENT[:PERIOD]  (s:)                     every PERIOD-th event of
 *       a kernel software counter (page faults, context switches), on every CPU
 *   hardware:EVENT[:PERIOD]  (h:)                     the same for a CPU
 *       counter (cycles, cache misses), where the CPU has one
 *
 * Profile, software and hardware hits happen in the task the CPU was
 * running: -p, -c and --comm filter them, and pid 0 is the idle task.  The
 * spellings are bpftrace's. */
#include <errno.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel/kernel.h"
#include "probes/attach.h"
#include "probes/resolve.h"

/* A software or hardware event, as bpftrace names it, and its period when
 * the probe gives none. */
struct perf_event_name {
	const char *name, *alias;
	uint64_t config;
	uint64_t period;
};

static const struct perf_event_name software_events[] = {
	{"cpu-clock", "cpu", PERF_COUNT_SW_CPU_CLOCK, 1000000},
	{"task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, 1000000},
	{"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, 100},
	{"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, 1000},
	{"cpu-migrations", NULL, PERF_COUNT_SW_CPU_MIGRATIONS, 1},
	{"minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, 100},
	{"major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1},
	{"alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS, 1},
	{"emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS, 1},
	{"dummy", NULL, PERF_COUNT_SW_DUMMY, 1},
	{"bpf-output", NULL, PERF_COUNT_SW_BPF_OUTPUT, 1},
	{NULL, NULL, 0, 0},
};

static const struct perf_event_name hardware_events[] = {
	{"cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES, 1000000},
	{"instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS, 1000000},
	{"cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES, 1000000},
	{"cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES, 1000000},
	{"branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000},
	{"branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES, 100000},
	{"bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES, 100000},
	{"frontend-stalls", NULL, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000},
	{"backend-stalls", NULL, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000},
	{"ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES, 1000000},
	{NULL, NULL, 0, 0},
};

/* The events of a counter kind, and the perf type they open with. */
static const struct perf_event_name *events_of(enum ut_probe_kind kind, uint32_t *type)
{
	*type = kind == UT_PROBE_HARDWARE ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	return kind == UT_PROBE_HARDWARE ? hardware_events : software_events;
}

static const struct perf_event_name *event_named(const struct perf_event_name *events, const char *name)
{
	for (const struct perf_event_name *e = events; e->name; e++)
		if (strcmp(e->name, name) == 0 || (e->alias && strcmp(e->alias, name) == 0))
			return e;
	return NULL;
}

/* ---- compiler ---- */

/* A rate as "UNIT:N" (bpftrace's spelling) or "NUNIT": its unit, one of
 * units (space-separated), and its number; false when it is neither. */
static bool parse_rate(const char *target, const char *units, char *unit, size_t ulen, long long *v)
{
	char u[8] = "";
	int used = 0;
	if (sscanf(target, "%lld%7[a-z]%n", v, u, &used) != 2 || target[used]) {
		used = 0;
		if (sscanf(target, "%7[a-z]:%lld%n", u, v, &used) != 2 || target[used])
			return false;
	}
	size_t n = strlen(u);
	for (const char *w = units; *w; w += strcspn(w, " "), w += *w == ' ')
		if (strncmp(w, u, n) == 0 && (w[n] == ' ' || !w[n])) {
			snprintf(unit, ulen, "%s", u);
			return *v > 0;
		}
	return false;
}

/* Nanoseconds per unit of a period ("s", "ms", "us"); 0 for a rate (hz). */
static long long unit_ns(const char *unit)
{
	return strcmp(unit, "s") == 0 ? 1000000000LL : strcmp(unit, "ms") == 0 ? 1000000LL
	     : strcmp(unit, "us") == 0 ? 1000LL : 0;
}

/* The period in ns of a timer at v units; 0 when out of bounds (an hour
 * at most, a rate up to a MHz). */
static long long timer_period_ns(const char *unit, long long v)
{
	long long ns = unit_ns(unit);
	if (!ns)   /* hz */
		return v <= 1000000 ? 1000000000LL / v : 0;
	return v <= 3600LL * 1000000000LL / ns ? v * ns : 0;
}

static int resolve_interval(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	char unit[8];
	long long v, ns = 0;
	if (parse_rate(target, "s ms us hz", unit, sizeof(unit), &v))
		ns = timer_period_ns(unit, v);
	if (!ns) {
		diag_error(c->d, loc, "interval probes are written interval:1s, interval:100ms, interval:us:500 or "
			   "interval:hz:10 (at most an hour)");
		return -1;
	}
	if (ns < 1000000)
		diag_warning(c->d, loc, "intervals shorter than 1ms cost much CPU");
	a->target = xasprintf("%lld", ns);
	return 0;
}

/* profile:hz:N samples N times a second (a frequency the kernel keeps);
 * profile:s|ms|us:N every period.  Target "hz:N" or "ns:PERIOD". */
static int resolve_profile(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	char unit[8];
	long long v, ns = 0;
	if (parse_rate(target, "hz s ms us", unit, sizeof(unit), &v))
		ns = timer_period_ns(unit, v);
	if (!ns) {
		diag_error(c->d, loc, "profile probes are written profile:hz:99, profile:ms:10, profile:s:1 or "
			   "profile:us:500 (at most a MHz, at most an hour)");
		return -1;
	}
	if (ns < 100000)
		diag_warning(c->d, loc, "sampling every CPU more often than every 100us costs much CPU");
	a->target = unit_ns(unit) ? xasprintf("ns:%lld", ns) : xasprintf("hz:%lld", v);
	return 0;
}

/* software:EVENT[:PERIOD] and hardware:EVENT[:PERIOD]: target
 * "EVENT:PERIOD" with the event's own name. */
static int resolve_counter(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	uint32_t type;
	const struct perf_event_name *events = events_of(a->def->kind, &type);
	char name[64];
	size_t len = strcspn(target, ":");
	snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : 0), target);
	const struct perf_event_name *e = event_named(events, name);
	if (!e) {
		char *names[2 * 16];
		unsigned n = 0;
		for (const struct perf_event_name *k = events; k->name && n + 2 <= 2 * 16; k++) {
			names[n++] = (char *)k->name;
			if (k->alias)
				names[n++] = (char *)k->alias;
		}
		const char *near = ut_suggest(name, names, n);
		diag_error(c->d, loc, "no %s event '%s'%s%s%s; uring-trace -l '%s:*' lists them", a->def->name, name,
			   near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "", a->def->name);
		return -1;
	}
	unsigned long long period = e->period;
	if (target[len]) {
		char *end;
		errno = 0;
		period = strtoull(target + len + 1, &end, 10);
		if (*end || errno || !period || target[len + 1] == '-') {
			diag_error(c->d, loc, "%s:%s:PERIOD takes a period of at least 1 event, e.g. %s:%s:%llu",
				   a->def->name, e->name, a->def->name, e->name, (unsigned long long)e->period);
			return -1;
		}
	}
	a->target = xasprintf("%s:%llu", e->name, period);
	return 0;
}

static void header_perf_event(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"perf_event\")\nint %s(void *ctx)\n{\n", a->alt->prog_name);
}

/* ---- -l: the counters' events ---- */

static int list_counter_events(enum ut_probe_kind kind, const char *glob, char ***names)
{
	uint32_t type;
	const struct perf_event_name *events = events_of(kind, &type);
	unsigned n = 0;
	for (const struct perf_event_name *e = events; e->name; e++)
		n++;
	*names = xcalloc(n + 1, sizeof(char *));
	int found = 0;
	for (const struct perf_event_name *e = events; e->name; e++)
		if (fnmatch(glob, e->name, 0) == 0 || (e->alias && fnmatch(glob, e->alias, 0) == 0))
			(*names)[found++] = xstrdup(e->name);
	return found;
}

static int list_software(struct ut_kernel *k, const char *glob, char ***names)
{
	(void)k;
	return list_counter_events(UT_PROBE_SOFTWARE, glob, names);
}

static int list_hardware(struct ut_kernel *k, const char *glob, char ***names)
{
	(void)k;
	return list_counter_events(UT_PROBE_HARDWARE, glob, names);
}

/* -l -v: no arguments; the alias and the period when none is given */
static void list_counter_args(enum ut_probe_kind kind, const char *name, FILE *out)
{
	uint32_t type;
	const struct perf_event_name *e = event_named(events_of(kind, &type), name);
	if (!e)
		return;
	if (e->alias)
		fprintf(out, "    also written %s\n", e->alias);
	fprintf(out, "    period %llu events unless one is given\n", (unsigned long long)e->period);
}

static void list_software_args(struct ut_kernel *k, const char *name, FILE *out)
{
	(void)k;
	list_counter_args(UT_PROBE_SOFTWARE, name, out);
}

static void list_hardware_args(struct ut_kernel *k, const char *name, FILE *out)
{
	(void)k;
	list_counter_args(UT_PROBE_HARDWARE, name, out);
}

/* ---- runtime ---- */

/* The perf event alt samples on, from its target. */
static bool event_attr(const struct ut_alt *alt, struct perf_event_attr *attr, char *why, size_t len)
{
	*attr = (struct perf_event_attr){.size = sizeof(*attr), .type = PERF_TYPE_SOFTWARE,
					 .config = PERF_COUNT_SW_CPU_CLOCK};
	char name[64];
	unsigned long long v = 0;
	if (alt->kind == UT_PROBE_INTERVAL) {
		attr->sample_period = strtoull(alt->target, NULL, 10);
	} else if (alt->kind == UT_PROBE_PROFILE) {
		if (sscanf(alt->target, "hz:%llu", &v) == 1) {
			attr->freq = 1;
			attr->sample_freq = v;
		} else if (sscanf(alt->target, "ns:%llu", &v) == 1) {
			attr->sample_period = v;
		}
	} else if (sscanf(alt->target, "%63[^:]:%llu", name, &v) == 2) {
		uint32_t type;
		const struct perf_event_name *e = event_named(events_of(alt->kind, &type), name);
		if (e) {
			attr->type = type;
			attr->config = e->config;
			attr->sample_period = v;
		}
	}
	if (attr->sample_period || attr->sample_freq)
		return true;
	snprintf(why, len, "bad %s target '%s'", probe_kind_name(alt->kind), alt->target);
	return false;
}

static bool perf_event_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	struct perf_event_attr attr;
	return event_attr(alt, &attr, why, len);
}

static int open_event(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int trial_perf_event(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_load(alt, BPF_PROG_TYPE_PERF_EVENT, 0, 0, NULL, why, len);
}

/* A hardware event opens only where the CPU counts it: a virtual machine
 * usually has no counters at all (the kind is refused), a real CPU may
 * lack one event (only that probe is). */
static int trial_hardware(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	int rc = trial_perf_event(k, alt, why, len);
	struct perf_event_attr attr;
	if (rc != 1 || !event_attr(alt, &attr, why, len))
		return rc;
	int fd = open_event(&attr, 0);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	int e = errno;
	struct perf_event_attr cycles = {.size = sizeof(cycles), .type = PERF_TYPE_HARDWARE,
					 .config = PERF_COUNT_HW_CPU_CYCLES, .sample_period = 1000000};
	int cfd = open_event(&cycles, 0);
	if (cfd >= 0) {
		close(cfd);
		snprintf(why, len, "this CPU does not count %s: %s", alt->target, strerror(e));
		return -1;
	}
	snprintf(why, len, "this machine has no hardware perf events (a virtual machine usually has none): %s",
		 strerror(e));
	return 0;
}

/* Attaches prog to the event on one CPU. */
static int attach_on_cpu(struct bpf_program *prog, struct perf_event_attr *attr, int cpu, struct ut_links *links)
{
	int pfd = open_event(attr, cpu);
	if (pfd < 0)
		return -errno;
	struct bpf_link *link = bpf_program__attach_perf_event(prog, pfd);
	if (!link) {
		int e = errno;
		close(pfd);
		errno = e;
	}
	return probe_links_add(links, link);  /* the link owns pfd now */
}

/* The interval's timer on CPU 0. */
static int attach_interval(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	struct perf_event_attr attr;
	char why[128];
	if (!event_attr(alt, &attr, why, sizeof(why)))
		return -EINVAL;
	return attach_on_cpu(prog, &attr, 0, links);
}

/* The event on every CPU that is online (an offline one refuses it with
 * ENODEV). */
static int attach_every_cpu(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	struct perf_event_attr attr;
	char why[128];
	if (!event_attr(alt, &attr, why, sizeof(why)))
		return -EINVAL;
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus < 0 ? ncpus : -EINVAL;
	unsigned attached = 0;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int rc = attach_on_cpu(prog, &attr, cpu, links);
		if (rc == -ENODEV)
			continue;
		if (rc < 0)
			return rc;
		attached++;
	}
	return attached ? 0 : -ENODEV;
}

const struct probe_kind_def probe_kind_interval = {
	.name = "interval",
	.regs_context = true,
	.short_name = "i",
	.kind = UT_PROBE_INTERVAL,
	.unfiltered = true,
	.resolve = resolve_interval,
	.header = header_perf_event,
	.exists = perf_event_exists,
	.trial = trial_perf_event,
	.attach = attach_interval,
};

const struct probe_kind_def probe_kind_profile = {
	.name = "profile",
	.regs_context = true,
	.short_name = "p",
	.kind = UT_PROBE_PROFILE,
	.info_target = "hz:99",
	.resolve = resolve_profile,
	.header = header_perf_event,
	.exists = perf_event_exists,
	.trial = trial_perf_event,
	.attach = attach_every_cpu,
};

const struct probe_kind_def probe_kind_software = {
	.name = "software",
	.regs_context = true,
	.short_name = "s",
	.kind = UT_PROBE_SOFTWARE,
	.info_target = "cpu-clock:1000000",
	.resolve = resolve_counter,
	.header = header_perf_event,
	.list = list_software,
	.list_args = list_software_args,
	.exists = perf_event_exists,
	.trial = trial_perf_event,
	.attach = attach_every_cpu,
};

const struct probe_kind_def probe_kind_hardware = {
	.name = "hardware",
	.regs_context = true,
	.short_name = "h",
	.kind = UT_PROBE_HARDWARE,
	.info_target = "cpu-cycles:1000000",
	.resolve = resolve_counter,
	.header = header_perf_event,
	.list = list_hardware,
	.list_args = list_hardware_args,
	.exists = perf_event_exists,
	.trial = trial_hardware,
	.attach = attach_every_cpu,
};
