#include "runtime/stacks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/elfsyms.h"
#include "base/alloc.h"

#define STACK_FRAMES 127   /* UT_STACK_FRAMES in the generated code */

/* struct ut_stack of the generated code */
struct stack {
	uint32_t pid;
	uint32_t nframes;
	uint64_t ip[STACK_FRAMES];
};

struct ksym {
	uint64_t addr;
	const char *name;
};

struct mapping {
	uint64_t start, end, offset;
	char *path;
};

/* A process's executable file mappings, as last read while it existed. */
struct proc {
	pid_t pid;
	unsigned round;          /* the poll that read them last */
	unsigned n;
	struct mapping *m;
};

/* A mapped file's functions; failed: not readable or not ELF. */
struct file {
	char *path;
	bool failed;
	struct ut_elf_syms syms;
};

struct named {
	uint64_t id;             /* 0: a free slot */
	char *text;
};

static struct {
	int fd, added_fd;        /* ut_stacks, ut_stacks_added; -1 without */
	uint64_t added_seen;
	pid_t watch;
	bool user_stacks;        /* the program shows user stacks */
	unsigned round;
	struct named *named;     /* id -> text, open addressing */
	size_t cap, n;
	bool ksyms_read;
	struct ksym *ksyms;
	size_t nksyms;
	char *knames;
	struct proc *procs;
	size_t nprocs;
	struct file *files;
	size_t nfiles;
} st = {.fd = -1, .added_fd = -1};

/* The trace's converter thread (runtime/spool.h) names frames while the
 * reader's loop polls: each entry point holds the lock (recursive: they
 * call each other). */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* ---- kernel frames ---- */

static int by_addr(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Text symbols of /proc/kallsyms; none when their addresses are hidden
 * (all zero without CAP_SYSLOG). */
static void read_kallsyms(void)
{
	st.ksyms_read = true;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	size_t cap = 0, names_len = 0, names_cap = 0;
	char line[512];
	bool any_address = false;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !strchr("tTwW", end[1]) || end[2] != ' ')
			continue;
		char *name = end + 3;
		name[strcspn(name, " \t\n")] = 0;
		size_t len = strlen(name) + 1;
		any_address |= addr != 0;
		grow_array((void **)&st.ksyms, &cap, st.nksyms + 1, sizeof(*st.ksyms));
		grow_array((void **)&st.knames, &names_cap, names_len + len, 1);
		memcpy(st.knames + names_len, name, len);
		/* an offset until the names stop moving */
		st.ksyms[st.nksyms++] = (struct ksym){.addr = addr, .name = (const char *)(uintptr_t)names_len};
		names_len += len;
	}
	fclose(f);
	if (!any_address)
		st.nksyms = 0;
	for (size_t i = 0; i < st.nksyms; i++)
		st.ksyms[i].name = st.knames + (uintptr_t)st.ksyms[i].name;
	if (st.nksyms)
		qsort(st.ksyms, st.nksyms, sizeof(*st.ksyms), by_addr);
}

void ut_kernel_frame(uint64_t ip, char *buf, size_t len)
{
	pthread_mutex_lock(&lock);
	if (!st.ksyms_read)
		read_kallsyms();
	size_t lo = 0, hi = st.nksyms;   /* the last symbol at or before ip */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st.ksyms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		snprintf(buf, len, "0x%" PRIx64, ip);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, st.ksyms[lo - 1].name, ip - st.ksyms[lo - 1].addr);
	pthread_mutex_unlock(&lock);
}

/* ---- user frames ---- */

static void free_mappings(struct proc *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->m[i].path);
	free(p->m);
	p->m = NULL;
	p->n = 0;
}

/* The process is a fork of this program that has not run its command yet
 * (-c): its mappings are ours, not the command's. */
static bool runs_this_program(pid_t pid)
{
	char exe[64];
	struct stat a, b;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	return pid != getpid() && stat(exe, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Reads pid's executable file mappings; the ones read before stay when it
 * has none now (it ended, or is a zombie). */
static void read_mappings(struct proc *p)
{
	p->round = st.round;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	FILE *f = fopen(path, "r");
	if (!f || runs_this_program(p->pid)) {
		if (f)
			fclose(f);
		return;
	}
	struct proc fresh = {.pid = p->pid, .round = st.round};
	size_t cap = 0;
	char line[4096 + 128];
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, offset;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &at) != 4 || !at)
			continue;
		char *file = line + at;
		file[strcspn(file, "\n")] = 0;
		if (perms[2] != 'x' || file[0] != '/')
			continue;
		grow_array((void **)&fresh.m, &cap, fresh.n + 1, sizeof(*fresh.m));
		char *copy = xstrdup(file);
		fresh.m[fresh.n++] = (struct mapping){.start = start, .end = end, .offset = offset, .path = copy};
	}
	fclose(f);
	if (fresh.n) {
		free_mappings(p);
		*p = fresh;
	} else {
		free(fresh.m);
	}
}

/* The process's mappings, read again once per poll while it exists. */
static struct proc *proc_of(pid_t pid)
{
	for (size_t i = 0; i < st.nprocs; i++)
		if (st.procs[i].pid == pid) {
			if (st.procs[i].round != st.round)
				read_mappings(&st.procs[i]);
			return &st.procs[i];
		}
	st.procs = xrealloc_array(st.procs, st.nprocs + 1, sizeof(*st.procs));
	struct proc *p = &st.procs[st.nprocs++];
	*p = (struct proc){.pid = pid};
	read_mappings(p);
	return p;
}

static struct file *file_of(const char *path)
{
	for (size_t i = 0; i < st.nfiles; i++)
		if (strcmp(st.files[i].path, path) == 0)
			return &st.files[i];
	st.files = xrealloc_array(st.files, st.nfiles + 1, sizeof(*st.files));
	struct file *f = &st.files[st.nfiles++];
	char err[128];
	*f = (struct file){.path = xstrdup(path)};
	f->failed = ut_elf_syms_read(path, &f->syms, err, sizeof(err)) != 0;
	return f;
}

static void user_frame(struct proc *p, uint64_t ip, char *buf, size_t len)
{
	const struct mapping *m = NULL;
	for (unsigned i = 0; p && i < p->n && !m; i++)
		if (ip >= p->m[i].start && ip < p->m[i].end)
			m = &p->m[i];
	if (!m) {
		snprintf(buf, len, "0x%" PRIx64, ip);
		return;
	}
	uint64_t offset = ip - m->start + m->offset, addr;
	struct file *f = file_of(m->path);
	const struct ut_elf_sym *s = NULL;
	if (!f->failed && ut_elf_offset_addr(&f->syms, offset, &addr) == 0)
		s = ut_elf_sym_at(&f->syms, addr);
	if (s) {
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, addr - s->addr);
	} else {
		const char *base = strrchr(m->path, '/');
		snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : m->path, offset);
	}
}

void ut_user_frame(pid_t pid, uint64_t ip, char *buf, size_t len)
{
	pthread_mutex_lock(&lock);
	user_frame(proc_of(pid), ip, buf, len);
	pthread_mutex_unlock(&lock);
}

/* ---- stacks by id ---- */

static struct named *slot_of(uint64_t id)
{
	size_t mask = st.cap - 1, i = (size_t)(id ^ id >> 29) & mask;
	while (st.named[i].id && st.named[i].id != id)
		i = (i + 1) & mask;
	return &st.named[i];
}

static void remember(uint64_t id, char *text)
{
	if ((st.n + 1) * 2 > st.cap) {
		struct named *old = st.named;
		size_t old_cap = st.cap;
		st.cap = st.cap ? st.cap * 2 : 1024;
		st.named = xcalloc(st.cap, sizeof(*st.named));
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].id)
				*slot_of(old[i].id) = old[i];
		free(old);
	}
	*slot_of(id) = (struct named){.id = id, .text = text};
	st.n++;
}

static char *stack_text(const struct stack *s)
{
	size_t cap = 256, at = 0;
	char *text = xmalloc(cap);
	text[0] = 0;
	struct proc *p = s->pid ? proc_of((pid_t)s->pid) : NULL;
	unsigned n = s->nframes < STACK_FRAMES ? s->nframes : STACK_FRAMES;
	for (unsigned i = 0; i < n; i++) {
		char frame[512];
		if (s->pid)
			user_frame(p, s->ip[i], frame, sizeof(frame));
		else
			ut_kernel_frame(s->ip[i], frame, sizeof(frame));
		size_t len = strlen(frame);
		if (at + len + 2 > cap) {
			cap = (at + len + 2) * 2;
			text = xrealloc(text, cap);
		}
		if (i)
			text[at++] = '\n';
		memcpy(text + at, frame, len);
		at += len;
		text[at] = 0;
	}
	return text;
}

/* Names the stack now (it is read from ut_stacks) and keeps the text. */
static const char *name_stack(uint64_t id)
{
	struct stack s;
	if (st.fd < 0 || bpf_map_lookup_elem(st.fd, &id, &s) != 0)
		return "[stack not kept: the stack table was full]";
	char *text = stack_text(&s);
	remember(id, text);
	return text;
}

static const char *stack_text_of(uint64_t id)
{
	if (!id)
		return "";
	if (st.cap) {
		struct named *n = slot_of(id);
		if (n->id)
			return n->text;
	}
	return name_stack(id);
}

const char *ut_stack_text(uint64_t id)
{
	pthread_mutex_lock(&lock);
	const char *text = stack_text_of(id);
	pthread_mutex_unlock(&lock);
	return text;
}

/* ---- the session ---- */

static bool shows(const struct ut_value *v, enum ut_display d)
{
	if (v->kind == UT_VAL_FIELD)
		return v->display == d;
	for (unsigned i = 0; v->kind == UT_VAL_FORMAT && i < v->nfmt; i++)
		if (shows(&v->fmt[i], d))
			return true;
	return false;
}

/* Anything the program shows as a user stack: keys, values, record fields. */
static bool program_shows(const struct ut_program *prog, enum ut_display d)
{
	for (unsigned i = 0; i < prog->nmaps; i++) {
		const struct ut_map *m = &prog->maps[i];
		if (shows(&m->value_show, d))
			return true;
		for (unsigned k = 0; k < m->nkeys; k++)
			if (shows(&m->key_show[k], d))
				return true;
	}
	for (unsigned i = 0; i < prog->nevents; i++) {
		const struct ut_event *e = &prog->events[i];
		if (shows(&e->name, d) || shows(&e->group_key, d) || shows(&e->key, d))
			return true;
		for (unsigned a = 0; a < e->nargs; a++)
			if (shows(&e->args[a].value, d))
				return true;
	}
	return false;
}

void ut_stacks_open(struct bpf_object *obj, const struct ut_program *prog, pid_t watch)
{
	struct bpf_map *stacks = bpf_object__find_map_by_name(obj, "ut_stacks");
	struct bpf_map *added = bpf_object__find_map_by_name(obj, "ut_stacks_added");
	if (!stacks || !added || bpf_map__value_size(stacks) != sizeof(struct stack))
		return;
	st.fd = bpf_map__fd(stacks);
	st.added_fd = bpf_map__fd(added);
	st.watch = watch;
	st.user_stacks = program_shows(prog, UT_SHOW_USTACK) || program_shows(prog, UT_SHOW_USYM);
}

static void stacks_poll(void)
{
	if (st.fd < 0)
		return;
	st.round++;
	if (st.watch > 0 && st.user_stacks)
		proc_of(st.watch);
	uint32_t zero = 0;
	uint64_t added = 0;
	if (bpf_map_lookup_elem(st.added_fd, &zero, &added) != 0 || added == st.added_seen)
		return;
	st.added_seen = added;
	uint64_t key, next, *prev = NULL;
	while (bpf_map_get_next_key(st.fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!st.cap || !slot_of(key)->id)
			name_stack(key);
	}
}

void ut_stacks_poll(void)
{
	pthread_mutex_lock(&lock);
	stacks_poll();
	pthread_mutex_unlock(&lock);
}

void ut_stacks_close(void)
{
	for (size_t i = 0; i < st.cap; i++)
		free(st.named[i].text);
	free(st.named);
	free(st.ksyms);
	free(st.knames);
	for (size_t i = 0; i < st.nprocs; i++)
		free_mappings(&st.procs[i]);
	free(st.procs);
	for (size_t i = 0; i < st.nfiles; i++) {
		free(st.files[i].path);
		ut_elf_syms_free(&st.files[i].syms);
	}
	free(st.files);
	memset(&st, 0, sizeof(st));
	st.fd = st.added_fd = -1;
}
