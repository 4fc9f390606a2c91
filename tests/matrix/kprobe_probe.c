/* Kernel-matrix probe: collects the facts uring-trace's portability depends
 * on, on whatever kernel it runs (a qemu guest or the host).
 *
 *   kprobe_probe [-v] [BPF_OBJECT]
 *
 * BPF_OBJECT defaults to kprobe_probe.bpf.o next to this executable.
 * -v shows libbpf's messages. If UT_PROBE_READ_FILE names a file (e.g. on
 * an ext4 disk), the trigger reads it too, so the file-system probes fire.
 * Prints, one fact per line:
 *   kernel release=... version=...
 *   btf yes|no
 *   io_uring_tracepoints NAME...
 *   fields EVENT: NAME/SIZE...        (classic tracepoint record, from tracefs;
 *                                       "/str" marks a __data_loc string)
 *   tp_btf_args EVENT: TYPE, ...       (raw/BTF tracepoint arguments, from the
 *                                       kernel's BTF btf_trace_EVENT typedef)
 *   probe KIND TARGET: RESULT          (RESULT: ok hits=N | attached-no-hits |
 *                                       absent | load-failed: ERR | attach-failed: ERR)
 *   summary submit_tracepoint=NAME tracepoint=R raw_tp=R tp_btf=R kprobe=R ...
 * Exits 0 when the facts were collected (whatever they are), 1 otherwise. */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <liburing.h>

/* Slots of the `hits` map: kept in sync with kprobe_probe.bpf.c. */
enum probe_slot {
	SLOT_TRACEPOINT = 0,
	SLOT_RAW_TP = 1,
	SLOT_TP_BTF = 2,
	SLOT_KPROBE = 3,
	SLOT_KRETPROBE = 4,
	SLOT_FENTRY = 5,
	SLOT_FEXIT = 6,
};

enum attach_kind {
	KIND_TRACEPOINT,
	KIND_RAW_TP,
	KIND_TP_BTF,
	KIND_KPROBE,
	KIND_KRETPROBE,
	KIND_FENTRY,
	KIND_FEXIT,
};

struct trial {
	enum attach_kind kind;
	const char *kind_name;   /* as printed, and the key in the summary */
	const char *program;     /* program name in the BPF object */
	const char *target;      /* tracepoint or kernel function */
	enum probe_slot slot;
	bool in_summary;         /* counts for the probe kind's summary verdict */
};

/* vfs_read fires on our own read(); ext4_file_read_iter (what the
 * filesystem-layer probes will need) fires only when UT_PROBE_READ_FILE is
 * on ext4. */
static const struct trial trials[] = {
	{ KIND_TRACEPOINT, "tracepoint", "on_tracepoint", "io_uring_submit_req", SLOT_TRACEPOINT, false },
	{ KIND_TRACEPOINT, "tracepoint", "on_tracepoint", "io_uring_submit_sqe", SLOT_TRACEPOINT, false },
	{ KIND_TRACEPOINT, "tracepoint", "on_tracepoint", "io_uring_complete", SLOT_TRACEPOINT, true },
	{ KIND_RAW_TP, "raw_tp", "on_raw_tp", "io_uring_complete", SLOT_RAW_TP, true },
	{ KIND_TP_BTF, "tp_btf", "on_tp_btf", "io_uring_complete", SLOT_TP_BTF, true },
	{ KIND_KPROBE, "kprobe", "on_kprobe", "vfs_read", SLOT_KPROBE, true },
	{ KIND_KRETPROBE, "kretprobe", "on_kretprobe", "vfs_read", SLOT_KRETPROBE, true },
	{ KIND_FENTRY, "fentry", "on_fentry", "vfs_read", SLOT_FENTRY, true },
	{ KIND_FEXIT, "fexit", "on_fexit", "vfs_read", SLOT_FEXIT, true },
	{ KIND_KPROBE, "kprobe", "on_kprobe", "ext4_file_read_iter", SLOT_KPROBE, false },
	{ KIND_FENTRY, "fentry", "on_fentry", "ext4_file_read_iter", SLOT_FENTRY, false },
};
#define NTRIALS (sizeof(trials) / sizeof(trials[0]))

static bool verbose;
static const char *tracefs;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char *find_tracefs(void)
{
	static const char *const candidates[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		snprintf(path, sizeof(path), "%s/events", candidates[i]);
		if (access(path, F_OK) == 0)
			return candidates[i];
	}
	return NULL;
}

static bool io_uring_event_exists(const char *event)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/io_uring/%s/format", tracefs, event);
	return access(path, R_OK) == 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the io_uring tracepoints; *count set. Caller frees. */
static char **list_io_uring_events(size_t *count)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	*count = 0;
	snprintf(path, sizeof(path), "%s/events/io_uring", tracefs);
	d = opendir(path);
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "io_uring_", 9) != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			char **grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				break;
			names = grown;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);
	*count = n;
	return names;
}

/* One line "fields EVENT: name/size ..." from the event's format file,
 * without the common_* header fields. A format line looks like
 * "\tfield:unsigned long long user_data;\toffset:16;\tsize:8;\tsigned:0;". */
static void print_event_fields(const char *event)
{
	char path[PATH_MAX], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/io_uring/%s/format", tracefs, event);
	f = fopen(path, "r");
	if (!f) {
		printf("fields %s: unreadable (%s)\n", event, strerror(errno));
		return;
	}
	printf("fields %s:", event);
	while (fgets(line, sizeof(line), f)) {
		char *decl = strstr(line, "field:");
		char *end, *name, *size;

		if (!decl)
			continue;
		decl += strlen("field:");
		end = strchr(decl, ';');
		if (!end)
			continue;
		*end = '\0';
		/* The name is the last word of the declaration, minus any [N]. */
		name = strrchr(decl, ' ');
		name = name ? name + 1 : decl;
		name[strcspn(name, "[")] = '\0';
		if (strncmp(name, "common_", 7) == 0)
			continue;
		size = strstr(end + 1, "size:");
		if (strncmp(decl, "__data_loc", 10) == 0)
			printf(" %s/str", name);
		else
			printf(" %s/%d", name, size ? atoi(size + 5) : 0);
	}
	printf("\n");
	fclose(f);
}

static void read_file(const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fread(buf, 1, sizeof(buf), f) == sizeof(buf))
		;
	fclose(f);
}

/* C-like spelling of a BTF type ("struct io_kiocb *", "u64"), appended to
 * out. Enough for argument lists; not a general type printer. */
static void append_type_name(const struct btf *btf, __u32 id, char *out, size_t len)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	size_t used = strlen(out);

	if (!t || id == 0) {
		snprintf(out + used, len - used, "void");
		return;
	}
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		append_type_name(btf, t->type, out, len);
		used = strlen(out);
		snprintf(out + used, len - used, " *");
		return;
	case BTF_KIND_CONST:
		snprintf(out + used, len - used, "const ");
		append_type_name(btf, t->type, out, len);
		return;
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		append_type_name(btf, t->type, out, len);
		return;
	case BTF_KIND_STRUCT:
		snprintf(out + used, len - used, "struct %s", btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_UNION:
		snprintf(out + used, len - used, "union %s", btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		snprintf(out + used, len - used, "enum %s", btf__name_by_offset(btf, t->name_off));
		return;
	default:
		snprintf(out + used, len - used, "%s", btf__name_by_offset(btf, t->name_off));
		return;
	}
}

/* "tp_btf_args EVENT: TYPE, ..." from the typedef btf_trace_EVENT, a pointer
 * to a prototype whose first argument (void *) is BPF's own context; the
 * rest are what a tp_btf program receives. */
static void print_tp_btf_args(const struct btf *btf, const char *event)
{
	char typedef_name[128], arg[128];
	const struct btf_type *t;
	const struct btf_param *params;
	__s32 id;

	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", event);
	id = btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF);
	if (id < 0) {
		printf("tp_btf_args %s: absent\n", event);
		return;
	}
	t = btf__type_by_id(btf, id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;          /* the pointer */
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_func_proto(t)) {
		printf("tp_btf_args %s: unexpected BTF\n", event);
		return;
	}
	params = btf_params(t);
	printf("tp_btf_args %s:", event);
	for (int i = 1; i < btf_vlen(t); i++) {
		arg[0] = '\0';
		append_type_name(btf, params[i].type, arg, sizeof(arg));
		printf("%s %s", i > 1 ? "," : "", arg);
	}
	printf("\n");
}

/* What the probes watch: one io_uring NOP (submit and complete tracepoints)
 * and a few read() calls (vfs_read), plus $UT_PROBE_READ_FILE. */
static void trigger_events(void)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	const char *extra_file = getenv("UT_PROBE_READ_FILE");
	int ret;

	ret = io_uring_queue_init(8, &ring, 0);
	if (ret == 0) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 42;
		if (io_uring_submit_and_wait(&ring, 1) == 1 &&
		    io_uring_wait_cqe(&ring, &cqe) == 0)
			io_uring_cqe_seen(&ring, cqe);
		io_uring_queue_exit(&ring);
	} else {
		fprintf(stderr, "kprobe_probe: io_uring_queue_init: %s\n", strerror(-ret));
	}
	for (int i = 0; i < 3; i++)
		read_file("/proc/self/stat");
	if (extra_file && *extra_file)
		read_file(extra_file);
}

static struct bpf_link *attach(const struct trial *t, struct bpf_program *prog)
{
	switch (t->kind) {
	case KIND_TRACEPOINT:
		return bpf_program__attach_tracepoint(prog, "io_uring", t->target);
	case KIND_RAW_TP:
		return bpf_program__attach_raw_tracepoint(prog, t->target);
	case KIND_KPROBE:
		return bpf_program__attach_kprobe(prog, false, t->target);
	case KIND_KRETPROBE:
		return bpf_program__attach_kprobe(prog, true, t->target);
	case KIND_TP_BTF:
	case KIND_FENTRY:
	case KIND_FEXIT:
		return bpf_program__attach_trace(prog);
	}
	errno = EINVAL;
	return NULL;
}

static bool needs_btf_target(enum attach_kind kind)
{
	return kind == KIND_TP_BTF || kind == KIND_FENTRY || kind == KIND_FEXIT;
}

/* Loads only t->program from the object, attaches it, triggers the events
 * and writes the verdict into result. Returns true when it fired. */
static bool run_trial(const char *object_path, const struct trial *t,
		      char *result, size_t result_len)
{
	struct bpf_object *obj;
	struct bpf_program *prog, *p;
	struct bpf_link *link = NULL;
	struct bpf_map *hits;
	__u32 key = t->slot;
	__u64 count = 0;
	bool fired = false;
	int err;

	if (t->kind == KIND_TRACEPOINT && !io_uring_event_exists(t->target)) {
		snprintf(result, result_len, "absent");
		return false;
	}
	obj = bpf_object__open_file(object_path, NULL);
	if (!obj) {
		snprintf(result, result_len, "open-failed: %s", strerror(errno));
		return false;
	}
	prog = bpf_object__find_program_by_name(obj, t->program);
	hits = bpf_object__find_map_by_name(obj, "hits");
	if (!prog || !hits) {
		snprintf(result, result_len, "object lacks %s or hits", t->program);
		goto out;
	}
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	if (needs_btf_target(t->kind)) {
		err = bpf_program__set_attach_target(prog, 0, t->target);
		if (err) {
			snprintf(result, result_len, "load-failed: %s", strerror(-err));
			goto out;
		}
	}
	err = bpf_object__load(obj);
	if (err) {
		snprintf(result, result_len, "load-failed: %s", strerror(-err));
		goto out;
	}
	link = attach(t, prog);
	if (!link) {
		snprintf(result, result_len, "attach-failed: %s", strerror(errno));
		goto out;
	}
	trigger_events();
	err = bpf_map__lookup_elem(hits, &key, sizeof(key), &count, sizeof(count), 0);
	if (err) {
		snprintf(result, result_len, "map-read-failed: %s", strerror(-err));
		goto out;
	}
	fired = count > 0;
	if (fired)
		snprintf(result, result_len, "ok hits=%llu", (unsigned long long)count);
	else
		snprintf(result, result_len, "attached-no-hits");
out:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return fired;
}

static const char *default_object_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return "kprobe_probe.bpf.o";
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return "kprobe_probe.bpf.o";
	snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "kprobe_probe.bpf.o");
	return buf;
}

int main(int argc, char **argv)
{
	char path_buf[PATH_MAX], result[NTRIALS][160];
	const char *object_path = NULL, *submit_tracepoint = "none";
	bool fired[NTRIALS];
	struct utsname uts;
	char **events;
	size_t nevents;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = true;
		else if (!object_path)
			object_path = argv[i];
		else {
			fprintf(stderr, "usage: %s [-v] [BPF_OBJECT]\n", argv[0]);
			return 1;
		}
	}
	if (!object_path)
		object_path = default_object_path(path_buf, sizeof(path_buf));
	libbpf_set_print(print_libbpf);
	setvbuf(stdout, NULL, _IOLBF, 0);

	uname(&uts);
	printf("kernel release=%s version=%s\n", uts.release, uts.version);
	printf("btf %s\n", access("/sys/kernel/btf/vmlinux", R_OK) == 0 ? "yes" : "no");
	tracefs = find_tracefs();
	if (!tracefs) {
		printf("tracefs missing\n");
		return 1;
	}
	events = list_io_uring_events(&nevents);
	printf("io_uring_tracepoints");
	for (size_t i = 0; i < nevents; i++)
		printf(" %s", events[i]);
	printf("\n");
	for (size_t i = 0; i < nevents; i++)
		print_event_fields(events[i]);

	/* Typed arguments: io_uring's, and the block events the iostack
	 * tests use (their prototypes changed across versions too). */
	struct btf *vmlinux_btf = btf__load_vmlinux_btf();
	if (vmlinux_btf) {
		static const char *const block_events[] = {
			"block_rq_issue", "block_rq_complete", "block_rq_insert",
			"block_io_start", "block_io_done", "block_bio_queue",
		};
		for (size_t i = 0; i < nevents; i++)
			print_tp_btf_args(vmlinux_btf, events[i]);
		for (size_t i = 0; i < sizeof(block_events) / sizeof(block_events[0]); i++)
			print_tp_btf_args(vmlinux_btf, block_events[i]);
		btf__free(vmlinux_btf);
	} else {
		printf("tp_btf_args: no vmlinux BTF (%s)\n", strerror(errno));
	}
	for (size_t i = 0; i < nevents; i++)
		free(events[i]);
	free(events);

	for (size_t i = 0; i < NTRIALS; i++) {
		fired[i] = run_trial(object_path, &trials[i], result[i], sizeof(result[i]));
		printf("probe %s %s: %s\n", trials[i].kind_name, trials[i].target, result[i]);
		if (trials[i].kind == KIND_TRACEPOINT && fired[i] &&
		    strncmp(trials[i].target, "io_uring_submit_", 16) == 0)
			submit_tracepoint = trials[i].target;
	}

	/* One verdict per kind: "ok" if its main trial fired, else the reason. */
	printf("summary submit_tracepoint=%s", submit_tracepoint);
	for (size_t i = 0; i < NTRIALS; i++) {
		if (!trials[i].in_summary)
			continue;
		if (fired[i])
			printf(" %s=ok", trials[i].kind_name);
		else
			printf(" %s=%.*s", trials[i].kind_name,
			       (int)strcspn(result[i], ":"), result[i]);
	}
	printf("\n");
	return 0;
}
