#include "runtime/loader.h"
#include "kernel/disks.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "kernel/kernel.h"
#include "probes/kind.h"

/* Capability bits (linux/capability.h). */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/* Closing threads for slow (perf-event) links. */
#define MAX_DETACH_THREADS 16

/* The built-in programs of bpf/ut.h, as optional probes with a raw
 * tracepoint and a classic one as alternatives. */
#define BUILTIN_ALTS(event, prog)                                                              \
	{{.kind = UT_PROBE_RAW_TP, .target = event, .prog_name = prog},                        \
	 {.kind = UT_PROBE_TRACEPOINT, .target = "sched/" event, .prog_name = prog "_tp"}}
static struct ut_alt exec_alts[] = BUILTIN_ALTS("sched_process_exec", "ut_rename_exec");
static struct ut_alt fork_alts[] = BUILTIN_ALTS("sched_process_fork", "ut_follow_fork");
static struct ut_alt free_alts[] = BUILTIN_ALTS("sched_process_free", "ut_follow_free");
#define BUILTIN(what, list) {.spec = what, .loc = {"bpf/ut.h", 0, 0}, .optional = true, .nalts = 2, .alts = list}
static const struct ut_probe builtins[UT_BUILTIN_COUNT] = {
	[UT_BUILTIN_EXEC] = BUILTIN("the built-in sched_process_exec program (names a thread again after exec)",
				    exec_alts),
	[UT_BUILTIN_FORK] = BUILTIN("the built-in sched_process_fork program (-c traces the processes the command "
				    "starts)", fork_alts),
	[UT_BUILTIN_FREE] = BUILTIN("the built-in sched_process_free program (-c forgets a process that ended, "
				    "whose pid may be reused)", free_alts),
};

struct probe_choice {
	int alt;            /* alternative being tried or attached; -1 none */
	char skipped[512];  /* alternatives passed over, with reasons */
};

struct ut_loaded {
	struct bpf_object *obj;
	struct ut_probe *probes;  /* the script's, then the built-ins asked for */
	unsigned nprobes, script_probes;
	struct probe_choice *choice;
	struct ut_links *links;   /* per probe: what its attach made; none when not attached */
	uint32_t *disk_devs;      /* the script's diskdev() disks, looked up */
	bool can_flush;           /* ut_flush can run on a chosen CPU (hold_records) */
	bool untrusted_loads;     /* bpf_rdonly_cast works: fields through numbers are loads (bpf/ut.h) */
	bool iter_loops;          /* bpf_iter_num works: the verifier checks a loop's body once (bpf/ut.h) */
	bool detached;
};

/* ---- libbpf messages ---------------------------------------------------
 * Captured while loading: they name the program that failed and carry the
 * verifier log; shown only in verbose mode. */

static char *captured;
static size_t captured_len, captured_cap;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	va_list copy;
	va_copy(copy, ap);
	int n = vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	if (n <= 0)
		return 0;
	if (captured_len + (size_t)n + 1 > captured_cap) {
		captured_cap = (captured_len + (size_t)n + 1) * 2;
		captured = xrealloc(captured, captured_cap);
	}
	vsnprintf(captured + captured_len, captured_cap - captured_len, fmt, ap);
	captured_len += (size_t)n;
	return 0;
}

static void capture_reset(void)
{
	captured_len = 0;
	if (captured)
		captured[0] = 0;
}

/* The program libbpf reported as failing to load: "prog 'NAME': failed to load". */
static bool failed_program(char *name, size_t len)
{
	const char *marker = "': failed to load";
	const char *at = captured ? strstr(captured, marker) : NULL;
	if (!at)
		return false;
	const char *start = at;
	while (start - captured >= 6 && strncmp(start - 6, "prog '", 6) != 0)
		start--;
	if (start - captured < 6 || (size_t)(at - start) >= len)
		return false;
	memcpy(name, start, (size_t)(at - start));
	name[at - start] = 0;
	return true;
}

/* The verifier's verdict: the last line of the load log that is not one
 * of its closing statistics ("processed N insns", "verification time"). */
static void verifier_verdict(char *out, size_t len)
{
	out[0] = 0;
	const char *begin = captured ? strstr(captured, "-- BEGIN PROG LOAD LOG --") : NULL;
	const char *end = begin ? strstr(begin, "-- END PROG LOAD LOG --") : NULL;
	if (!end)
		return;
	const char *line_end = end;
	while (line_end > begin) {
		while (line_end > begin && (line_end[-1] == '\n' || line_end[-1] == ' '))
			line_end--;
		const char *line = line_end;
		while (line > begin && line[-1] != '\n')
			line--;
		if (strncmp(line, "processed ", 10) != 0 && strncmp(line, "verification time", 17) != 0 &&
		    strncmp(line, "-- BEGIN", 8) != 0) {
			snprintf(out, len, "%.*s", (int)(line_end - line), line);
			return;
		}
		line_end = line;
	}
}

/* ---- checks ------------------------------------------------------------ */

static bool has_bpf_capabilities(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return true;  /* cannot tell: let the kernel decide */
	char line[256];
	unsigned long long caps = ~0ull;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	bool admin = caps & (1ull << CAP_SYS_ADMIN_BIT);
	return (admin || (caps & (1ull << CAP_BPF_BIT))) &&
	       (admin || (caps & (1ull << CAP_PERFMON_BIT)));
}

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	if (used >= len - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static FILE *log_of(const struct ut_load_opts *o)
{
	return o->log ? o->log : stderr;
}

/* "file:line" of a probe in a script; a built-in one has no line. */
static const char *probe_at(const struct ut_probe *p, char *buf, size_t len)
{
	if (p->loc.line > 0)
		snprintf(buf, len, "%s:%d", p->loc.file, p->loc.line);
	else
		snprintf(buf, len, "%s", p->loc.file);
	return buf;
}

static void note_skip(struct probe_choice *c, const struct ut_alt *alt, const char *why)
{
	append(c->skipped, sizeof(c->skipped), "%s%s:%s (%s)", c->skipped[0] ? ", " : "",
	       probe_kind_name(alt->kind), alt->target, why);
}

/* Moves probe i to its first usable alternative at or after `from`.  false
 * when none is left: an error for a required probe, a note for an optional
 * one (c->alt is then -1). */
static bool choose_alt(struct ut_kernel *k, const struct ut_load_opts *o, struct ut_loaded *l,
		       unsigned i, unsigned from, char *err, size_t errlen)
{
	const struct ut_probe *p = &l->probes[i];
	struct probe_choice *c = &l->choice[i];
	char at[PATH_MAX + 16];
	for (unsigned j = from; j < p->nalts; j++) {
		char why[200];
		if (!probe_kind_def(p->alts[j].kind)->exists(k, &p->alts[j], why, sizeof(why)) ||
		    !probe_kind_available(k, &p->alts[j], why, sizeof(why))) {
			note_skip(c, &p->alts[j], why);
			continue;
		}
		c->alt = (int)j;
		return true;
	}
	c->alt = -1;
	if (p->optional) {
		if (o->verbose)
			fprintf(log_of(o), "optional probe '%s' (%s) skipped: tried %s\n", p->spec,
				probe_at(p, at, sizeof(at)), c->skipped);
		return true;
	}
	snprintf(err, errlen, "probe '%s' (%s) matches nothing on kernel %s: tried %s", p->spec,
		 probe_at(p, at, sizeof(at)), ut_kernel_release(k), c->skipped);
	return false;
}

/* A rejection (by the verifier or at attach) of probe i's current
 * alternative: on to the next one. */
static bool reject(struct ut_kernel *k, const struct ut_load_opts *o, struct ut_loaded *l, unsigned i,
		   const char *why, char *err, size_t errlen)
{
	struct probe_choice *c = &l->choice[i];
	const struct ut_alt *alt = &l->probes[i].alts[c->alt];
	if (o->verbose)
		fprintf(log_of(o), "probe '%s': %s:%s rejected: %s\n", l->probes[i].spec,
			probe_kind_name(alt->kind), alt->target, why);
	note_skip(c, alt, why);
	return choose_alt(k, o, l, i, (unsigned)c->alt + 1, err, errlen);
}

/* ---- object set-up ----------------------------------------------------- */

static void set_rodata_var(void *data, size_t size, const struct btf_var_secinfo *v,
			   const void *value, size_t value_size)
{
	if (v->offset + value_size <= size && value_size <= v->size)
		memcpy((char *)data + v->offset, value, value_size);
}

/* How many bytes of records a CPU writes before it wakes the reader: as
 * compiled (bpf/ut.h), or less for a small ring: one of a few hundred KiB
 * (--buffer) would fill before any CPU wrote the compiled 256 KiB, and the
 * reader would sleep until its timeout while the hits are lost; so a CPU
 * wakes it after its share of a quarter of the ring. */
static uint64_t wakeup_bytes(const struct ut_load_opts *o, struct bpf_object *obj, uint64_t compiled)
{
	if (o->wakeup_bytes)
		return o->wakeup_bytes;
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "ut_events");
	int cpus = libbpf_num_possible_cpus();
	uint64_t share = events && cpus > 0 ? bpf_map__max_entries(events) / 4 / (uint64_t)cpus : compiled;
	return share < compiled ? (share ? share : 1) : compiled;
}

/* The CPUs shed the requests that begin while the ring holds more than
 * this unread, until it holds less than half of it (bpf/ut.h, ut_shed_end):
 * half the ring, or UT_SHED_MARK bytes (tests make it small, or 0: never
 * shed). */
static uint64_t shed_mark(struct bpf_object *obj)
{
	const char *mark = getenv("UT_SHED_MARK");
	if (mark)
		return strtoull(mark, NULL, 10);
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "ut_events");
	return events ? bpf_map__max_entries(events) / 2 : 0;
}

/* The filters and the script's disks are read-only data: set them in the
 * object before load so the verifier can prune what they switch off. */
static int set_rodata(struct bpf_object *obj, const struct ut_load_opts *o, const struct ut_loaded *l)
{
	struct bpf_map *map = NULL, *m;
	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name);
		if (n >= 7 && strcmp(name + n - 7, ".rodata") == 0)
			map = m;
	}
	const struct btf *btf = bpf_object__btf(obj);
	int sec = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!map || sec <= 0)
		return 0;  /* an object without filters */
	size_t size;
	const void *initial = bpf_map__initial_value(map, &size);
	if (!initial)
		return -ENOMEM;
	void *data = xmalloc(size);
	memcpy(data, initial, size);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);   /* bpf_ktime_get_ns()'s clock */
	uint64_t start_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	char comm[16] = "";
	if (o->filter_comm)
		strncpy(comm, o->filter_comm, sizeof(comm) - 1);
	const struct btf_type *t = btf__type_by_id(btf, (unsigned)sec);
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, v++) {
		unsigned disk, enumerator;
		const char *name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
		if (strcmp(name, "ut_filter_tgid") == 0)
			set_rodata_var(data, size, v, &o->filter_tgid, sizeof(o->filter_tgid));
		else if (strcmp(name, "ut_follow_forks") == 0)
			set_rodata_var(data, size, v, &(uint32_t){o->follow_forks}, sizeof(uint32_t));
		else if (strcmp(name, "ut_filter_comm") == 0)
			set_rodata_var(data, size, v, comm, sizeof(comm));
		else if (strcmp(name, "ut_sample_permyriad") == 0 && o->sample_permyriad)
			set_rodata_var(data, size, v, &o->sample_permyriad, sizeof(o->sample_permyriad));
		else if (strcmp(name, "ut_wakeup_bytes") == 0 && v->offset + sizeof(uint64_t) <= size) {
			uint64_t compiled;
			memcpy(&compiled, (const char *)data + v->offset, sizeof(compiled));
			uint64_t wake = wakeup_bytes(o, obj, compiled);
			set_rodata_var(data, size, v, &wake, sizeof(wake));
		}
		else if (strcmp(name, "ut_start_ns") == 0)
			set_rodata_var(data, size, v, &start_ns, sizeof(start_ns));
		else if (strcmp(name, "ut_shed_above") == 0 || strcmp(name, "ut_shed_below") == 0) {
			uint64_t mark = shed_mark(obj) / (name[8] == 'a' ? 1 : 2);
			set_rodata_var(data, size, v, &mark, sizeof(mark));
		}
		else if (strcmp(name, "ut_hold_bytes") == 0 && !l->can_flush)
			set_rodata_var(data, size, v, &(uint32_t){0}, sizeof(uint32_t));
		else if (strcmp(name, "ut_untrusted_loads") == 0)
			set_rodata_var(data, size, v, &(uint32_t){l->untrusted_loads}, sizeof(uint32_t));
		else if (strcmp(name, "ut_iter_loops") == 0)
			set_rodata_var(data, size, v, &(uint32_t){l->iter_loops}, sizeof(uint32_t));
		else if (sscanf(name, "ut_disk_%u", &disk) == 1 && disk < o->ndisks) {
			uint64_t dev = l->disk_devs[disk];
			set_rodata_var(data, size, v, &dev, sizeof(dev));
		}
		else if (sscanf(name, "ut_enum_%u", &enumerator) == 1 && enumerator < o->nenums)
			set_rodata_var(data, size, v, &o->enums[enumerator].value, sizeof(int64_t));
	}
	int rc = bpf_map__set_initial_value(map, data, size);
	free(data);
	return rc;
}

/* Ring buffer sizes must be a power of two and a multiple of the page. */
static uint32_t ringbuf_size(size_t want)
{
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	while (size < want && size < (1u << 31))
		size <<= 1;
	return (uint32_t)size;
}

/* Probe index and alternative of a program, by name; false if the program
 * belongs to no probe. */
static bool find_program(const struct ut_loaded *l, const char *name, unsigned *probe, unsigned *alt)
{
	for (unsigned i = 0; i < l->nprobes; i++)
		for (unsigned j = 0; j < l->probes[i].nalts; j++)
			if (l->probes[i].alts[j].prog_name &&
			    strcmp(l->probes[i].alts[j].prog_name, name) == 0) {
				*probe = i;
				*alt = j;
				return true;
			}
	return false;
}

/* Before 6.1 the verifier lets perf_event programs (profile, software,
 * hardware and interval probes: they may run in NMI context) use only
 * preallocated hash maps.  Tried here with a program that looks a key up
 * in a map that is not preallocated. */
static bool perf_event_takes_unpreallocated_maps(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, map_opts, .map_flags = BPF_F_NO_PREALLOC);
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "ut_try_map", 8, 8, 1, &map_opts);
	if (map < 0)
		return true;   /* the load itself will say what is wrong */
	const struct bpf_insn lookup[] = {
		{.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1, .src_reg = BPF_PSEUDO_MAP_FD, .imm = map},
		{0},
		{.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int prog = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "ut_try_prealloc", "GPL", lookup,
				 sizeof(lookup) / sizeof(lookup[0]), NULL);
	close(map);
	if (prog < 0)
		return false;
	close(prog);
	return true;
}

/* Preallocated hash maps for kernels whose perf_event programs need them:
 * as many entries as bpftrace's maps hold by default (every entry is
 * allocated when the map is created: 65536 stacks would take 64 MiB). */
#define PREALLOC_MAX_ENTRIES 4096

static int preallocate_hash_maps(struct bpf_object *obj)
{
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		enum bpf_map_type type = bpf_map__type(map);
		__u32 flags = bpf_map__map_flags(map);
		if ((type != BPF_MAP_TYPE_HASH && type != BPF_MAP_TYPE_PERCPU_HASH) || !(flags & BPF_F_NO_PREALLOC))
			continue;
		int rc = bpf_map__set_map_flags(map, flags & ~(__u32)BPF_F_NO_PREALLOC);
		if (rc == 0 && bpf_map__max_entries(map) > PREALLOC_MAX_ENTRIES)
			rc = bpf_map__set_max_entries(map, PREALLOC_MAX_ENTRIES);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static struct bpf_object *open_object(struct ut_kernel *k, const struct ut_load_opts *o, struct ut_loaded *l,
				      char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "uring_trace");
	struct bpf_object *obj = bpf_object__open_mem(o->obj, o->obj_len, &open_opts);
	if (!obj) {
		snprintf(err, errlen, "cannot open the BPF object: %s", strerror(errno));
		return NULL;
	}
	int rc = 0;
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "ut_events");
	if (events && o->ringbuf_bytes)
		rc = bpf_map__set_max_entries(events, ringbuf_size(o->ringbuf_bytes));
	/* -c's processes: a map sized for them, else a token one */
	struct bpf_map *traced = bpf_object__find_map_by_name(obj, "ut_traced_tgids");
	if (traced && !o->follow_forks && rc == 0)
		rc = bpf_map__set_max_entries(traced, 1);
	/* without --sample no flow's draw is kept: a token map (an LRU map
	 * allocates every entry when it is created, 5 MiB for this one) */
	struct bpf_map *sample = bpf_object__find_map_by_name(obj, "ut_flow_sample");
	if (sample && (o->sample_permyriad == 0 || o->sample_permyriad >= 10000) && rc == 0)
		rc = bpf_map__set_max_entries(sample, 1);
	if (rc == 0)
		rc = set_rodata(obj, o, l);
	/* a script compiled by an older uring-trace has no built-in programs */
	for (unsigned i = l->script_probes; i < l->nprobes; i++) {
		if (l->choice[i].alt < 0)
			continue;
		const struct ut_alt *alt = &l->probes[i].alts[l->choice[i].alt];
		if (!bpf_object__find_program_by_name(obj, alt->prog_name)) {
			note_skip(&l->choice[i], alt, "not in this compiled script: compile it again");
			l->choice[i].alt = -1;
		}
	}
	struct bpf_program *prog;
	bool perf_event_programs = false;
	bpf_object__for_each_program(prog, obj) {
		/* Only the chosen alternatives load; a program no probe names
		 * stays off too.  BEGIN/END load but are never attached: the
		 * caller runs them once (bpf_prog_test_run), and so is ut_flush
		 * (bpf/ut.h), on each CPU that holds records. */
		unsigned i, j;
		if (rc != 0)
			break;
		bool found = find_program(l, bpf_program__name(prog), &i, &j);
		const struct probe_kind_def *def = found ? probe_kind_def(l->probes[i].alts[j].kind) : NULL;
		bool chosen = found ? l->choice[i].alt == (int)j || def->runs != PROBE_ATTACHED
				    : l->can_flush && strcmp(bpf_program__name(prog), "ut_flush") == 0;
		rc = bpf_program__set_autoload(prog, chosen);
		if (rc == 0 && chosen && found && def->runs == PROBE_ATTACHED && def->prepare)
			rc = def->prepare(k, obj, prog, &l->probes[i].alts[j]);
		perf_event_programs |= chosen && bpf_program__type(prog) == BPF_PROG_TYPE_PERF_EVENT;
	}
	if (rc == 0 && perf_event_programs && !perf_event_takes_unpreallocated_maps()) {
		if (o->verbose)
			fprintf(log_of(o), "perf_event programs need preallocated maps on this kernel: "
				"the hash maps hold %d entries each\n", PREALLOC_MAX_ENTRIES);
		rc = preallocate_hash_maps(obj);
	}
	if (rc != 0) {
		snprintf(err, errlen, "cannot prepare the BPF object: %s", strerror(-rc));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* Whether this kernel runs a raw_tp program on a chosen CPU when asked
 * (BPF_F_TEST_RUN_ON_CPU): ut_flush needs it to send what an idle CPU
 * holds.  Tried with a program that returns 1. */
static bool can_run_on_cpu(void)
{
	const struct bpf_insn return_1[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "ut_try_cpu", "GPL", return_1, 2, NULL);
	if (fd < 0)
		return false;
	int cpu = sched_getcpu();
	bool ok = ut_run_on_cpu(fd, cpu > 0 ? (unsigned)cpu : 0);
	close(fd);
	return ok;
}

/* Whether the kernel takes insns as a tracepoint program (a trial). */
static bool loads_as_tracepoint(const char *name, const struct bpf_insn *insns, size_t n)
{
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, name, "GPL", insns, n, NULL);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Whether this kernel lets tracing programs turn a number into a BTF
 * pointer they read by loads (the bpf_rdonly_cast kfunc, 6.2+): tried
 * with a tracepoint program that casts 0 to a task_struct. */
static bool can_cast_untrusted(struct ut_kernel *k)
{
	int32_t cast = ut_kernel_find(k, "bpf_rdonly_cast", BTF_KIND_FUNC);
	int32_t task = ut_kernel_struct(k, "task_struct");
	if (cast <= 0 || task <= 0)
		return false;
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = task},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = cast},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	return loads_as_tracepoint("ut_try_cast", insns, sizeof(insns) / sizeof(insns[0]));
}

/* Whether tracing programs may loop with the numbers iterator (the
 * bpf_iter_num kfuncs, 6.4+): tried with a tracepoint program that makes
 * one over [0, 1) on its stack, takes a turn and lets it go. */
static bool can_iterate_numbers(struct ut_kernel *k)
{
	int32_t make = ut_kernel_find(k, "bpf_iter_num_new", BTF_KIND_FUNC);
	int32_t next = ut_kernel_find(k, "bpf_iter_num_next", BTF_KIND_FUNC);
	int32_t done = ut_kernel_find(k, "bpf_iter_num_destroy", BTF_KIND_FUNC);
	if (make <= 0 || next <= 0 || done <= 0)
		return false;
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 1},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = make},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = next},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8},
		{.code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_KFUNC_CALL, .imm = done},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	return loads_as_tracepoint("ut_try_iter", insns, sizeof(insns) / sizeof(insns[0]));
}

bool ut_run_on_cpu(int prog_fd, unsigned cpu)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
	return bpf_prog_test_run_opts(prog_fd, &opts) == 0 && opts.retval == 1;
}

/* ---- load and attach --------------------------------------------------- */

/* A disk the script names must exist here (it may differ from the machine
 * that compiled the script). */
static bool look_up_disk(const struct ut_disk_ref *d, uint32_t *dev, char *err, size_t errlen)
{
	char why[1024];
	if (ut_disk_lookup(d->name, dev, why, sizeof(why)) == 0)
		return true;
	snprintf(err, errlen, "%s:%d:%d: %s", d->loc.file ? d->loc.file : "?", d->loc.line, d->loc.col, why);
	return false;
}

/* A kernel enumerator's value on this kernel (it may differ from the one
 * that compiled the script): absent, its fallback, or an error. */
static bool look_up_enum(struct ut_kernel *k, struct ut_enum_ref *e, char *err, size_t errlen)
{
	int64_t v;
	bool here = ut_kernel_enum_value(k, e->name, &v) == 0;
	if (e->use == UT_ENUM_EXISTS)
		e->value = here;
	else if (here)
		e->value = v;
	else if (e->use == UT_ENUM_OR_DEFAULT)
		e->value = e->fallback;
	else {
		snprintf(err, errlen,
			 "%s:%d:%d: kernel %s has no enumerator %s (the script was compiled on a kernel that has): "
			 "write %s ?\? VALUE for a value where it is missing, or test exists(%s)",
			 e->loc.file ? e->loc.file : "?", e->loc.line, e->loc.col, ut_kernel_release(k), e->name, e->name,
			 e->name);
		return false;
	}
	return true;
}

enum step { STEP_DONE, STEP_RETRY, STEP_FAIL };

/* Loads the object with the current choices.  A program the kernel
 * rejects moves its probe on (STEP_RETRY). */
static enum step load_once(struct ut_kernel *k, const struct ut_load_opts *o,
			   struct ut_loaded *l, char *err, size_t errlen)
{
	capture_reset();
	int rc = bpf_object__load(l->obj);
	if (rc == 0)
		return STEP_DONE;
	char name[128];
	unsigned i, j;
	if (!failed_program(name, sizeof(name)) || !find_program(l, name, &i, &j) ||
	    l->choice[i].alt != (int)j) {
		if (rc == -EPERM)
			snprintf(err, errlen, "loading BPF programs was refused: %s "
					      "(needs CAP_BPF and CAP_PERFMON, or root)", strerror(-rc));
		else
			snprintf(err, errlen, "loading the BPF object failed: %s", strerror(-rc));
		if (o->verbose && captured)
			fprintf(log_of(o), "%s", captured);
		return STEP_FAIL;
	}
	const struct ut_probe *p = &l->probes[i];
	const struct ut_alt *alt = &p->alts[j];
	char verdict[256], why[300], at[PATH_MAX + 16];
	verifier_verdict(verdict, sizeof(verdict));
	if (verdict[0])
		snprintf(why, sizeof(why), "verifier: %s", verdict);
	else
		snprintf(why, sizeof(why), "load refused: %s", strerror(-rc));
	if (o->verbose && captured)
		fprintf(log_of(o), "libbpf log for probe '%s' (%s:%s):\n%s", p->spec,
			probe_kind_name(alt->kind), alt->target, captured);
	/* libbpf's words for a field or type this kernel does not have
	 * (rq->q->disk before 5.15): the kernel lacks what the alternative
	 * reads, and the next one is there for it */
	bool kernel_lacks_field = strstr(verdict, "failed to resolve CO-RE relocation") != NULL;
	if (reject(k, o, l, i, why, err, errlen)) {
		/* an alternative that exists but does not verify otherwise is a
		 * bug in the script or the compiler, not the kernel lacking it:
		 * say so, even though the next alternative may do */
		if (!o->verbose && !kernel_lacks_field)
			fprintf(log_of(o), "uring-trace: warning: probe '%s' (%s): the BPF verifier rejected "
				"%s:%s (%s); trying the next alternative (-v shows the verifier log)\n",
				p->spec, probe_at(p, at, sizeof(at)), probe_kind_name(alt->kind), alt->target, why);
		return STEP_RETRY;
	}
	if (verdict[0])
		snprintf(err, errlen, "probe '%s' (%s): the BPF verifier rejected %s:%s: %s%s",
			 p->spec, probe_at(p, at, sizeof(at)), probe_kind_name(alt->kind), alt->target,
			 verdict, o->verbose ? "" : " (-v shows the verifier log)");
	return STEP_FAIL;
}

static enum step attach_all(struct ut_kernel *k, const struct ut_load_opts *o,
			    struct ut_loaded *l, char *err, size_t errlen)
{
	enum step step = STEP_DONE;
	for (unsigned i = 0; i < l->nprobes && step != STEP_FAIL; i++) {
		struct probe_choice *c = &l->choice[i];
		if (c->alt < 0)
			continue;
		const struct ut_alt *alt = &l->probes[i].alts[c->alt];
		struct bpf_program *prog = bpf_object__find_program_by_name(l->obj, alt->prog_name);
		int rc = prog ? probe_kind_def(alt->kind)->attach(prog, alt, &l->links[i]) : -ENOENT;
		if (rc == 0)
			continue;
		char why[200];
		snprintf(why, sizeof(why), "attach failed: %s",
			 prog ? strerror(-rc) : "no such program in the object");
		step = reject(k, o, l, i, why, err, errlen) ? STEP_RETRY : STEP_FAIL;
	}
	return step;
}

static void close_object(struct ut_loaded *l)
{
	for (unsigned i = 0; i < l->nprobes; i++) {
		for (unsigned j = 0; j < l->links[i].n; j++)
			bpf_link__destroy(l->links[i].v[j]);
		l->links[i].n = 0;
	}
	bpf_object__close(l->obj);
	l->obj = NULL;
}

/* -v: which way a kernel feature tried at load went. */
static void say_which(const struct ut_load_opts *o, bool yes, const char *if_yes, const char *if_not)
{
	if (o->verbose)
		fprintf(log_of(o), "uring-trace: %s\n", yes ? if_yes : if_not);
}

struct ut_loaded *ut_load(const struct ut_load_opts *o, char *err, size_t errlen)
{
	if (!has_bpf_capabilities()) {
		snprintf(err, errlen, "tracing needs CAP_BPF and CAP_PERFMON (or root)");
		return NULL;
	}
	struct ut_kernel *k = o->kernel ? o->kernel : ut_kernel_open();
	struct ut_loaded *l = xcalloc(1, sizeof(*l));
	/* the script's probes, then the built-ins: exec always, fork and free for -c */
	const bool asked[UT_BUILTIN_COUNT] = {
		[UT_BUILTIN_EXEC] = true, [UT_BUILTIN_FORK] = o->follow_forks, [UT_BUILTIN_FREE] = o->follow_forks,
	};
	l->probes = xcalloc(o->nprobes + UT_BUILTIN_COUNT, sizeof(*l->probes));
	if (o->nprobes)
		memcpy(l->probes, o->probes, o->nprobes * sizeof(*l->probes));
	l->nprobes = l->script_probes = o->nprobes;
	for (unsigned b = 0; b < UT_BUILTIN_COUNT; b++)
		if (asked[b])
			l->probes[l->nprobes++] = builtins[b];
	l->choice = xcalloc(l->nprobes + 1, sizeof(*l->choice));
	l->links = xcalloc(l->nprobes + 1, sizeof(*l->links));
	l->disk_devs = xcalloc(o->ndisks + 1, sizeof(*l->disk_devs));
	l->can_flush = can_run_on_cpu();
	l->untrusted_loads = can_cast_untrusted(k);
	say_which(o, l->untrusted_loads, "fields read through pointers held as numbers are loads (bpf_rdonly_cast)",
		  "this kernel has no bpf_rdonly_cast (6.2+): fields read through pointers held as numbers are "
		  "bpf_probe_read_kernel calls (slower)");
	l->iter_loops = can_iterate_numbers(k);
	say_which(o, l->iter_loops, "the verifier checks a loop's body once (bpf_iter_num)",
		  "this kernel has no bpf_iter_num (6.4+): the verifier follows every turn of a loop (slower to load)");
	say_which(o, l->can_flush, "each CPU holds its records up to 2 KiB; the reader sends what an idle CPU holds",
		  "this kernel cannot run a program on a chosen CPU (BPF_F_TEST_RUN_ON_CPU): each probe hit's records "
		  "go to the ring buffer at its end (slower)");
	libbpf_print_fn_t previous_print = libbpf_set_print(capture_print);
	bool ok = true;
	for (unsigned i = 0; ok && i < o->ndisks; i++)
		ok = look_up_disk(&o->disks[i], &l->disk_devs[i], err, errlen);
	for (unsigned i = 0; ok && i < o->nenums; i++)
		ok = look_up_enum(k, &o->enums[i], err, errlen);
	for (unsigned i = 0; ok && i < l->nprobes; i++) {
		l->choice[i].alt = -1;
		const struct ut_probe *p = &l->probes[i];
		if (p->nalts && probe_kind_def(p->alts[0].kind)->runs == PROBE_ATTACHED)
			ok = choose_alt(k, o, l, i, 0, err, errlen);
	}
	/* Every retry moves one probe past an alternative, so this ends. */
	enum step step = ok ? STEP_RETRY : STEP_FAIL;
	while (step == STEP_RETRY) {
		l->obj = open_object(k, o, l, err, errlen);
		if (!l->obj) {
			step = STEP_FAIL;
			break;
		}
		step = load_once(k, o, l, err, errlen);
		if (step == STEP_DONE)
			step = attach_all(k, o, l, err, errlen);
		if (step != STEP_DONE)
			close_object(l);
	}
	libbpf_set_print(previous_print);
	if (k != o->kernel)
		ut_kernel_close(k);
	if (step == STEP_FAIL) {
		ut_unload(l);
		return NULL;
	}
	return l;
}

/* The runs of the programs of probe (all programs when probe < 0). */
static void count_runs(const struct ut_loaded *l, int probe, struct ut_loaded_runs *out)
{
	*out = (struct ut_loaded_runs){0};
	struct bpf_program *p;
	bpf_object__for_each_program(p, l->obj) {
		unsigned p_probe, p_alt;
		if (probe >= 0 && (sscanf(bpf_program__name(p), "ut_p%u_a%u", &p_probe, &p_alt) != 2 ||
				   p_probe != (unsigned)probe))
			continue;
		struct bpf_prog_info info = {0};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
			out->missed += info.recursion_misses;
			out->runs += info.run_cnt;
			out->run_ns += info.run_time_ns;
		}
	}
}

void ut_loaded_runs(const struct ut_loaded *l, struct ut_loaded_runs *out)
{
	count_runs(l, -1, out);
}

void ut_loaded_probe_runs(const struct ut_loaded *l, unsigned probe, struct ut_loaded_runs *out)
{
	count_runs(l, (int)probe, out);
}

struct bpf_object *ut_loaded_object(const struct ut_loaded *l)
{
	return l->obj;
}

const struct ut_probe *ut_loaded_probe(const struct ut_loaded *l, unsigned probe)
{
	return &l->probes[probe];
}

unsigned ut_loaded_count(const struct ut_loaded *l)
{
	return l->nprobes;
}

int ut_loaded_alt(const struct ut_loaded *l, unsigned probe)
{
	return probe < l->nprobes ? l->choice[probe].alt : -1;
}

const char *ut_loaded_skipped(const struct ut_loaded *l, unsigned probe)
{
	return probe < l->nprobes ? l->choice[probe].skipped : "";
}

/* ---- detach ------------------------------------------------------------ */

struct closer {
	pthread_t thread;
	struct bpf_link **links;
	unsigned first, count, stride;
};

static void *close_links(void *arg)
{
	struct closer *c = arg;
	for (unsigned i = c->first; i < c->count; i += c->stride)
		bpf_link__destroy(c->links[i]);
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void ut_detach(struct ut_loaded *l, struct ut_detach_stats *stats)
{
	double start = now_ms();
	struct ut_detach_stats s = {0};
	unsigned total = 0;
	for (unsigned i = 0; i < l->nprobes; i++)
		total += l->links[i].n;
	struct bpf_link **slow = xcalloc(total ? total : 1, sizeof(*slow));
	for (unsigned i = 0; i < l->nprobes; i++) {
		if (!l->links[i].n)
			continue;
		const struct ut_alt *alt = &l->probes[i].alts[l->choice[i].alt];
		bool slow_kind = probe_kind_def(alt->kind)->slow_detach;
		for (unsigned j = 0; j < l->links[i].n; j++) {
			s.links++;
			if (slow_kind)
				slow[s.slow_links++] = l->links[i].v[j];
			else
				bpf_link__destroy(l->links[i].v[j]);
		}
		l->links[i].n = 0;
	}
	/* Each perf-event close waits for an RCU grace period; closing from
	 * several threads lets the waits overlap. */
	struct closer closers[MAX_DETACH_THREADS];
	unsigned nthreads = s.slow_links < MAX_DETACH_THREADS ? s.slow_links : MAX_DETACH_THREADS;
	for (unsigned t = 0; t < nthreads; t++)
		closers[t] = (struct closer){.links = slow, .first = t, .count = s.slow_links,
					     .stride = nthreads};
	unsigned started = 0;
	while (started < nthreads &&
	       pthread_create(&closers[started].thread, NULL, close_links, &closers[started]) == 0)
		started++;
	for (unsigned t = started; t < nthreads; t++)  /* threads we could not start */
		close_links(&closers[t]);
	for (unsigned t = 0; t < started; t++)
		pthread_join(closers[t].thread, NULL);
	free(slow);
	l->detached = true;
	s.ms = now_ms() - start;
	if (stats)
		*stats = s;
}

void ut_unload(struct ut_loaded *l)
{
	if (!l)
		return;
	if (l->links && !l->detached)
		ut_detach(l, NULL);
	if (l->obj)
		bpf_object__close(l->obj);
	for (unsigned i = 0; l->links && i < l->nprobes; i++)
		free(l->links[i].v);
	free(l->probes);
	free(l->choice);
	free(l->links);
	free(l->disk_devs);
	free(l);
}
