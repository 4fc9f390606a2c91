/* Kernel information for the checker: tracepoint formats from tracefs and
 * types from vmlinux BTF (libbpf's BTF API).  Everything is opened lazily
 * and failures are reported through ut_kernel_error(), never by aborting. */
#include "kernel/kernel.h"

#include "base/alloc.h"
#include "base/hash.h"

#include <bpf/btf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define DEFAULT_TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACEFS "/sys/kernel/debug/tracing"
#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
/* Format files are a few KiB; anything far larger is not a format file. */
#define MAX_FORMAT_FILE (1 << 20)

struct enum_entry {
	const char *name;    /* points into the BTF string section */
	int64_t value;
	uint32_t order;      /* position in BTF, so the first definition wins */
};

struct ut_kernel {
	char error[512];
	char release[sizeof(((struct utsname *)0)->release)];

	bool tracefs_tried;
	char tracefs[PATH_MAX];   /* "" when unavailable */
	struct ut_tracepoint **tracepoints;
	unsigned ntracepoints, tracepoints_cap;

	bool btf_tried;
	struct btf *btf;
	/* per BTF kind, made when first asked: open-addressing index of its
	 * named types (ids, 0 = empty) */
	struct name_index {
		int32_t *ids;
		size_t mask;
	} by_name[NR_BTF_KINDS];
	struct enum_entry *enums;
	size_t nenums;
	bool enums_built;
};

__attribute__((format(printf, 2, 3)))
static void set_error(struct ut_kernel *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->error, sizeof(k->error), fmt, ap);
	va_end(ap);
}

struct ut_kernel *ut_kernel_open(void)
{
	struct ut_kernel *k = xcalloc(1, sizeof(*k));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(k->release, sizeof(k->release), "%s", u.release);
	else
		snprintf(k->release, sizeof(k->release), "unknown");
	return k;
}

static void tracepoint_free(struct ut_tracepoint *tp)
{
	if (!tp)
		return;
	for (unsigned i = 0; i < tp->nfields; i++) {
		free(tp->fields[i].name);
		free(tp->fields[i].c_type);
	}
	free(tp->fields);
	free(tp->category);
	free(tp->name);
	free(tp);
}

void ut_kernel_close(struct ut_kernel *k)
{
	if (!k)
		return;
	for (unsigned i = 0; i < k->ntracepoints; i++)
		tracepoint_free(k->tracepoints[i]);
	free(k->tracepoints);
	btf__free(k->btf);
	for (unsigned kind = 0; kind < NR_BTF_KINDS; kind++)
		free(k->by_name[kind].ids);
	free(k->enums);
	free(k);
}

const char *ut_kernel_error(const struct ut_kernel *k)
{
	return k->error;
}

const char *ut_kernel_release(const struct ut_kernel *k)
{
	return k->release;
}

void ut_strv_free(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A growing, later sorted, list of strings for the *_matching functions. */
struct strv {
	char **v;
	int n, cap;
};

static void strv_push(struct strv *s, const char *str)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = xrealloc_array(s->v, (size_t)s->cap, sizeof(*s->v));
	}
	s->v[s->n++] = xstrdup(str);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts, drops duplicates, hands the array to the caller. */
static int strv_finish(struct strv *s, char ***out)
{
	if (s->n)
		qsort(s->v, (size_t)s->n, sizeof(*s->v), compare_strings);
	int kept = 0;
	for (int i = 0; i < s->n; i++) {
		if (kept && strcmp(s->v[kept - 1], s->v[i]) == 0)
			free(s->v[i]);
		else
			s->v[kept++] = s->v[i];
	}
	*out = s->v;
	return kept;
}

/* ---- tracefs ---------------------------------------------------------- */

static bool has_events_dir(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The tracefs directory, mounting tracefs when it is not and we are root. */
static const char *tracefs_dir(struct ut_kernel *k)
{
	if (k->tracefs_tried)
		goto done;
	k->tracefs_tried = true;
	const char *env = getenv("UT_TRACEFS");
	if (env && *env) {
		if (has_events_dir(env))
			snprintf(k->tracefs, sizeof(k->tracefs), "%s", env);
		else
			set_error(k, "UT_TRACEFS=%s has no events directory", env);
		goto done;
	}
	if (has_events_dir(DEFAULT_TRACEFS)) {
		snprintf(k->tracefs, sizeof(k->tracefs), "%s", DEFAULT_TRACEFS);
	} else if (has_events_dir(DEBUGFS_TRACEFS)) {
		snprintf(k->tracefs, sizeof(k->tracefs), "%s", DEBUGFS_TRACEFS);
	} else if (geteuid() != 0) {
		set_error(k, "tracefs not mounted and cannot be mounted: mounting %s needs root",
			  DEFAULT_TRACEFS);
	} else if (mount("tracefs", DEFAULT_TRACEFS, "tracefs", 0, NULL) != 0) {
		set_error(k, "tracefs not mounted and cannot be mounted: %s", strerror(errno));
	} else if (has_events_dir(DEFAULT_TRACEFS)) {
		snprintf(k->tracefs, sizeof(k->tracefs), "%s", DEFAULT_TRACEFS);
	} else {
		set_error(k, "tracefs mounted on %s but it has no events directory",
			  DEFAULT_TRACEFS);
	}
done:
	return k->tracefs[0] ? k->tracefs : NULL;
}

/* Reads a whole (small) file; tracefs reports size 0, so read to EOF.
 * Returns a NUL-terminated malloc'ed buffer or NULL with errno set. */
static char *read_small_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t len = 0, cap = 4096;
	char *buf = xmalloc(cap);
	while (buf) {
		if (len + 1 == cap) {
			if (cap >= MAX_FORMAT_FILE) {
				free(buf);
				buf = NULL;
				errno = EFBIG;
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t got = read(fd, buf + len, cap - 1 - len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			buf = NULL;
			break;
		}
		if (got == 0) {
			buf[len] = '\0';
			break;
		}
		len += (size_t)got;
	}
	int saved = errno;
	close(fd);
	errno = saved;
	return buf;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static bool parse_u32(const char *s, uint32_t *out)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *trim(end) != '\0' || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool is_char_type(const char *type)
{
	return strcmp(type, "char") == 0 || strcmp(type, "const char") == 0;
}

/* Parses the declaration part of a field line, e.g. "unsigned int flags",
 * "char comm[16]", "__data_loc char[] name".  For __data_loc fields c_type
 * drops the "__data_loc " prefix (is_data_loc says it): "char[]". */
static bool parse_field_decl(char *decl, struct ut_tp_field *f)
{
	static const char data_loc[] = "__data_loc ";
	decl = trim(decl);
	if (strncmp(decl, data_loc, sizeof(data_loc) - 1) == 0) {
		f->is_data_loc = true;
		decl = trim(decl + sizeof(data_loc) - 1);
	}
	char *end = decl + strlen(decl);
	char *suffix = end;   /* "[16]" after the name, or "" */
	if (end > decl && end[-1] == ']') {
		suffix = strrchr(decl, '[');
		end = suffix;
	}
	char *name = end;
	while (name > decl && (isalnum((unsigned char)name[-1]) || name[-1] == '_'))
		name--;
	if (name == end || name == decl)
		return false;
	char *type_end = name;
	char saved_suffix[64];
	snprintf(saved_suffix, sizeof(saved_suffix), "%s", suffix);
	*end = '\0';
	f->name = xstrdup(name);
	*type_end = '\0';
	char *type = trim(decl);
	if (!*type)
		return false;

	/* The element type: "char" in "char comm[16]" and "__data_loc char[]". */
	char element[128];
	snprintf(element, sizeof(element), "%s", type);
	size_t elen = strlen(element);
	bool unsized = elen >= 2 && strcmp(element + elen - 2, "[]") == 0;
	if (unsized)
		element[elen - 2] = '\0';
	char *elem = trim(element);

	f->c_type = xasprintf("%s%s", type, saved_suffix);

	bool is_array = saved_suffix[0] != '\0' || unsized;
	f->is_pointer = !is_array && type[strlen(type) - 1] == '*';
	f->is_string = is_array && is_char_type(elem);
	if (saved_suffix[0]) {
		char digits[64];
		snprintf(digits, sizeof(digits), "%s", saved_suffix + 1);
		digits[strcspn(digits, "]")] = '\0';
		if (!parse_u32(digits, &f->array_len) && f->is_string)
			/* Older kernels print symbolic lengths ("comm[TASK_COMM_LEN]");
			 * for char arrays the byte size is the length. */
			f->array_len = f->size;
	}
	return true;
}

/* One "field:..." line: "field:DECL;\toffset:N;\tsize:N;\tsigned:N;". */
static bool parse_field_line(char *line, struct ut_tp_field *f)
{
	bool have_offset = false, have_size = false;
	char *decl = NULL;
	char *save = NULL;
	for (char *part = strtok_r(line, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		part = trim(part);
		uint32_t v;
		if (strncmp(part, "field:", 6) == 0) {
			decl = part + 6;
		} else if (strncmp(part, "offset:", 7) == 0) {
			if (!parse_u32(part + 7, &f->offset))
				return false;
			have_offset = true;
		} else if (strncmp(part, "size:", 5) == 0) {
			if (!parse_u32(part + 5, &f->size))
				return false;
			have_size = true;
		} else if (strncmp(part, "signed:", 7) == 0) {
			if (!parse_u32(part + 7, &v))
				return false;
			f->is_signed = v != 0;
		}
	}
	/* The declaration is parsed last because array lengths may need size. */
	return decl && have_offset && have_size && parse_field_decl(decl, f);
}

static void field_free(struct ut_tp_field *f)
{
	free(f->name);
	free(f->c_type);
}

/* Fills tp->fields from the text of a format file; false if malformed. */
static bool parse_format(char *text, struct ut_tracepoint *tp, uint32_t *format_id,
			 unsigned *bad_line)
{
	unsigned cap = 0, line_no = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line_no++;
		line = trim(line);
		if (strncmp(line, "ID:", 3) == 0) {
			parse_u32(trim(line + 3), format_id);
			continue;
		}
		if (strncmp(line, "field:", 6) != 0)
			continue;
		struct ut_tp_field f = {0};
		if (!parse_field_line(line, &f)) {
			field_free(&f);
			*bad_line = line_no;
			return false;
		}
		if (strncmp(f.name, "common_", 7) == 0) {
			field_free(&f);
			continue;
		}
		if (tp->nfields == cap) {
			cap = cap ? cap * 2 : 8;
			tp->fields = xrealloc_array(tp->fields, cap, sizeof(*tp->fields));
		}
		tp->fields[tp->nfields++] = f;
	}
	return true;
}

/* Category and event names become path components: keep them to one. */
static bool is_plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static struct ut_tracepoint *load_tracepoint(struct ut_kernel *k, const char *dir,
					     const char *category, const char *name)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, category, name);
	char *text = read_small_file(path);
	if (!text) {
		if (errno == ENOENT)
			set_error(k, "no tracepoint %s:%s on this kernel (%s)", category, name,
				  k->release);
		else
			set_error(k, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	struct ut_tracepoint *tp = xcalloc(1, sizeof(*tp));
	tp->category = xstrdup(category);
	tp->name = xstrdup(name);
	uint32_t format_id = 0;
	unsigned bad_line = 0;
	bool ok = parse_format(text, tp, &format_id, &bad_line);
	free(text);
	if (!ok) {
		set_error(k, "malformed tracepoint format %s (line %u)", path, bad_line);
		tracepoint_free(tp);
		return NULL;
	}
	/* The id file is the reference; the format's "ID:" line says the same. */
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, category, name);
	char *id_text = read_small_file(path);
	if (!id_text || !parse_u32(trim(id_text), &tp->id))
		tp->id = format_id;
	free(id_text);
	return tp;
}

const struct ut_tracepoint *ut_kernel_tracepoint(struct ut_kernel *k, const char *category,
						 const char *name)
{
	for (unsigned i = 0; i < k->ntracepoints; i++) {
		struct ut_tracepoint *tp = k->tracepoints[i];
		if (strcmp(tp->category, category) == 0 && strcmp(tp->name, name) == 0)
			return tp;
	}
	if (!is_plain_name(category) || !is_plain_name(name)) {
		set_error(k, "invalid tracepoint name %s:%s", category, name);
		return NULL;
	}
	const char *dir = tracefs_dir(k);
	if (!dir)
		return NULL;
	if (k->ntracepoints == k->tracepoints_cap) {
		k->tracepoints_cap = k->tracepoints_cap ? k->tracepoints_cap * 2 : 16;
		k->tracepoints = xrealloc_array(k->tracepoints, k->tracepoints_cap, sizeof(*k->tracepoints));
	}
	struct ut_tracepoint *tp = load_tracepoint(k, dir, category, name);
	if (tp)
		k->tracepoints[k->ntracepoints++] = tp;
	return tp;
}

static bool is_directory(int dirfd, const struct dirent *e)
{
	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_DIR;
	struct stat st;
	return fstatat(dirfd, e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* Adds the events of one category directory that match glob. */
static void match_category(int events_fd, const char *category, const char *glob,
			   struct strv *found)
{
	int fd = openat(events_fd, category, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;   /* vanished or unreadable: nothing to list */
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !is_directory(dirfd(d), e))
			continue;
		char full[2 * NAME_MAX + 2];
		snprintf(full, sizeof(full), "%s:%s", category, e->d_name);
		if (fnmatch(glob, full, 0) == 0)
			strv_push(found, full);
	}
	closedir(d);
}

int ut_kernel_tracepoints_matching(struct ut_kernel *k, const char *glob, char ***out)
{
	*out = NULL;
	const char *dir = tracefs_dir(k);
	if (!dir)
		return -1;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/events", dir);
	DIR *d = opendir(path);
	if (!d) {
		set_error(k, "cannot list %s: %s", path, strerror(errno));
		return -1;
	}
	struct strv found = {0};
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] != '.' && is_directory(dirfd(d), e))
			match_category(dirfd(d), e->d_name, glob, &found);
	}
	closedir(d);
	return strv_finish(&found, out);
}

/* ---- BTF -------------------------------------------------------------- */

const struct btf *ut_kernel_btf(struct ut_kernel *k)
{
	if (k->btf_tried)
		return k->btf;
	k->btf_tried = true;
	const char *env = getenv("UT_BTF");
	const char *path = env && *env ? env : DEFAULT_BTF;
	if (access(path, R_OK) != 0) {
		if (path == env)
			set_error(k, "cannot read BTF file %s: %s", path, strerror(errno));
		else if (errno == ENOENT)
			set_error(k, "no kernel BTF at %s: the kernel needs CONFIG_DEBUG_INFO_BTF=y",
				  path);
		else
			set_error(k, "cannot read kernel BTF at %s: %s", path, strerror(errno));
		return NULL;
	}
	k->btf = btf__parse(path, NULL);
	if (!k->btf)
		set_error(k, "cannot parse BTF %s: %s", path, strerror(errno));
	return k->btf;
}

static uint64_t name_hash(const char *s)
{
	return ut_hash_bytes(UT_HASH_INIT, s, strlen(s));
}

/* libbpf's btf__find_by_name_kind() walks every type (~150k in vmlinux);
 * resolving a script's probes and their alternatives asks it hundreds of
 * times, so named types are indexed once, each kind when first asked: a
 * run of a compiled program asks only for typedefs (tp_btf targets, 3k),
 * and indexing the 56k functions too cost it ~7 ms of cache misses. */
static struct name_index *name_index(struct ut_kernel *k, int kind)
{
	struct name_index *x = &k->by_name[kind];
	if (x->ids)
		return x;
	uint32_t n = btf__type_cnt(k->btf), of_kind = 0;
	for (uint32_t id = 1; id < n; id++)
		of_kind += btf_kind(btf__type_by_id(k->btf, id)) == kind;
	size_t cap = 1;
	while (cap < (size_t)of_kind * 2)
		cap <<= 1;
	x->ids = xcalloc(cap, sizeof(*x->ids));
	x->mask = cap - 1;
	for (uint32_t id = 1; id < n && of_kind; id++) {
		const struct btf_type *t = btf__type_by_id(k->btf, id);
		const char *name = btf__name_by_offset(k->btf, t->name_off);
		if (btf_kind(t) != kind || !name || !*name)
			continue;
		size_t i = name_hash(name) & x->mask;
		while (x->ids[i])
			i = (i + 1) & x->mask;
		x->ids[i] = (int32_t)id;
	}
	return x;
}

int32_t ut_kernel_find(struct ut_kernel *k, const char *name, int kind)
{
	if (!ut_kernel_btf(k) || kind <= 0 || kind >= NR_BTF_KINDS)
		return -1;
	struct name_index *x = name_index(k, kind);
	for (size_t i = name_hash(name) & x->mask; x->ids[i]; i = (i + 1) & x->mask) {
		const struct btf_type *t = btf__type_by_id(k->btf, (uint32_t)x->ids[i]);
		if (strcmp(btf__name_by_offset(k->btf, t->name_off), name) == 0)
			return x->ids[i];
	}
	return -1;
}

/* The type with id, or NULL when BTF is missing or id is out of range. */
static const struct btf_type *type_by_id(struct ut_kernel *k, int32_t id)
{
	const struct btf *btf = ut_kernel_btf(k);
	if (!btf)
		return NULL;
	if (id < 0 || (uint32_t)id >= btf__type_cnt(btf)) {
		set_error(k, "BTF type id %d out of range", (int)id);
		return NULL;
	}
	return btf__type_by_id(btf, (uint32_t)id);
}

/* Follows typedefs and qualifiers (const, volatile, restrict, type tags). */
static int32_t skip_aliases(struct ut_kernel *k, int32_t id)
{
	const struct btf_type *t;
	while (id != 0 && (t = type_by_id(k, id)) && (btf_is_typedef(t) || btf_is_mod(t)))
		id = (int32_t)t->type;
	return id;
}

static const char *type_name(struct ut_kernel *k, const struct btf_type *t)
{
	return btf__name_by_offset(k->btf, t->name_off);
}

int ut_kernel_type(struct ut_kernel *k, int32_t id, struct ut_ktype *out)
{
	memset(out, 0, sizeof(*out));
	id = skip_aliases(k, id);
	out->id = id;
	if (id == 0) {
		out->kind = UT_KT_VOID;
		return ut_kernel_btf(k) ? 0 : -1;
	}
	const struct btf_type *t = type_by_id(k, id);
	if (!t)
		return -1;
	const char *name = type_name(k, t);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		out->kind = btf_int_encoding(t) & BTF_INT_BOOL ? UT_KT_BOOL : UT_KT_INT;
		out->size = t->size;
		out->is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
		out->is_char = t->size == 1 && (strcmp(name, "char") == 0 ||
						strcmp(name, "signed char") == 0 ||
						strcmp(name, "unsigned char") == 0);
		snprintf(out->name, sizeof(out->name), "%s", name);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		out->kind = UT_KT_ENUM;
		out->size = t->size;
		out->is_signed = btf_kflag(t);
		snprintf(out->name, sizeof(out->name), "%s", name);
		break;
	case BTF_KIND_PTR:
		out->kind = UT_KT_PTR;
		out->size = (uint32_t)btf__pointer_size(k->btf);
		out->target = skip_aliases(k, (int32_t)t->type);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		out->kind = btf_is_struct(t) ? UT_KT_STRUCT : UT_KT_UNION;
		out->size = t->size;
		snprintf(out->name, sizeof(out->name), "%s", name);
		break;
	case BTF_KIND_FWD:
		/* A declared but undefined struct/union: named, no size, no members. */
		out->kind = btf_kflag(t) ? UT_KT_UNION : UT_KT_STRUCT;
		snprintf(out->name, sizeof(out->name), "%s", name);
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		out->kind = UT_KT_ARRAY;
		out->target = skip_aliases(k, (int32_t)a->type);
		out->nelems = a->nelems;
		int64_t size = btf__resolve_size(k->btf, (uint32_t)id);
		out->size = size > 0 ? (uint32_t)size : 0;
		break;
	}
	case BTF_KIND_FUNC_PROTO:
		out->kind = UT_KT_FUNC_PROTO;
		break;
	default:
		out->kind = UT_KT_OTHER;
		if (btf_is_float(t))
			out->size = t->size;
		snprintf(out->name, sizeof(out->name), "%s", name);
		break;
	}
	return 0;
}

/* An integer type of the same size and signedness, for anonymous enums. */
static const char *int_spelling(uint32_t size, bool is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? "signed char" : "unsigned char";
	case 2:
		return is_signed ? "short" : "unsigned short";
	case 8:
		return is_signed ? "long long" : "unsigned long long";
	default:
		return is_signed ? "int" : "unsigned int";
	}
}

static void spell_type(struct ut_kernel *k, int32_t id, char *buf, size_t len);

/* Spells the type a pointer points to; false when it cannot be named
 * (anonymous struct/union, function, array): the pointer is then "void *". */
static bool spell_pointee(struct ut_kernel *k, int32_t id, char *buf, size_t len)
{
	/* Qualifiers are dropped: generated code works on copies. */
	const struct btf_type *t;
	while (id != 0 && (t = type_by_id(k, id)) && btf_is_mod(t))
		id = (int32_t)t->type;
	if (id == 0) {
		snprintf(buf, len, "void");
		return true;
	}
	t = type_by_id(k, id);
	if (!t || btf_is_func_proto(t) || btf_is_array(t))
		return false;
	spell_type(k, id, buf, len);
	return buf[0] != '\0';
}

static void spell_type(struct ut_kernel *k, int32_t id, char *buf, size_t len)
{
	buf[0] = '\0';
	if (id == 0) {
		snprintf(buf, len, "void");
		return;
	}
	const struct btf_type *t = type_by_id(k, id);
	if (!t)
		return;
	const char *name = type_name(k, t);
	switch (btf_kind(t)) {
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
		snprintf(buf, len, "%s", name);
		break;
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		spell_type(k, (int32_t)t->type, buf, len);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		if (*name)
			snprintf(buf, len, "enum %s", name);
		else
			snprintf(buf, len, "%s", int_spelling(t->size, btf_kflag(t)));
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_FWD:
		if (*name) {
			bool is_union = btf_is_union(t) || (btf_is_fwd(t) && btf_kflag(t));
			snprintf(buf, len, "%s %s", is_union ? "union" : "struct", name);
		}
		break;
	case BTF_KIND_PTR: {
		char pointee[256];
		if (!spell_pointee(k, (int32_t)t->type, pointee, sizeof(pointee)))
			snprintf(buf, len, "void *");
		else if (pointee[strlen(pointee) - 1] == '*')
			snprintf(buf, len, "%s*", pointee);
		else
			snprintf(buf, len, "%s *", pointee);
		break;
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		char element[256];
		spell_type(k, (int32_t)a->type, element, sizeof(element));
		if (element[0])
			snprintf(buf, len, "%s[%u]", element, a->nelems);
		break;
	}
	default:
		break;
	}
}

const char *ut_kernel_type_c(struct ut_kernel *k, int32_t id, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	spell_type(k, id, buf, len);
	return buf;
}

int32_t ut_kernel_struct(struct ut_kernel *k, const char *name)
{
	if (!ut_kernel_btf(k))
		return -1;   /* keeps the error saying why BTF is missing */
	int32_t id = ut_kernel_find(k, name, BTF_KIND_STRUCT);
	if (id <= 0)
		id = ut_kernel_find(k, name, BTF_KIND_UNION);
	if (id <= 0) {
		set_error(k, "no struct %s in kernel BTF", name);
		return -1;
	}
	return id;
}

int32_t ut_kernel_c_pointee(struct ut_kernel *k, const char *c_type)
{
	/* the words other than qualifiers, and the stars */
	char base[128] = "";
	unsigned stars = 0;
	size_t at = 0;
	for (const char *p = c_type; *p;) {
		size_t n = strcspn(p, " *");
		if (n) {
			bool qualifier = (n == 5 && strncmp(p, "const", 5) == 0) || (n == 8 && strncmp(p, "volatile", 8) == 0) ||
					 (n == 6 && strncmp(p, "__user", 6) == 0);
			if (!qualifier && at + n + 2 < sizeof(base))
				at += (size_t)snprintf(base + at, sizeof(base) - at, "%s%.*s", at ? " " : "", (int)n, p);
			p += n;
		}
		stars += *p == '*';
		p += *p != 0;
	}
	if (!ut_kernel_btf(k) || !stars || stars > 2 || !base[0])
		return 0;
	int32_t id = strncmp(base, "struct ", 7) == 0 ? ut_kernel_struct(k, base + 7) : ut_kernel_find(k, base, BTF_KIND_INT);
	if (id <= 0 && strncmp(base, "struct ", 7) != 0)
		id = ut_kernel_find(k, base, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return 0;
	if (stars == 1)
		return id;
	/* a pointer to pointers: a pointer type to the base, as BTF has one */
	int32_t target = skip_aliases(k, id);
	for (uint32_t i = 1; i < btf__type_cnt(k->btf); i++) {
		const struct btf_type *t = btf__type_by_id(k->btf, i);
		if (btf_is_ptr(t) && skip_aliases(k, (int32_t)t->type) == target)
			return (int32_t)i;
	}
	return 0;
}

/* The members of a struct/union (after aliases), or NULL with *n = 0. */
static const struct btf_member *members_of(struct ut_kernel *k, int32_t id,
					   const struct btf_type **type, unsigned *n)
{
	*n = 0;
	const struct btf_type *t = type_by_id(k, skip_aliases(k, id));
	if (!t || !btf_is_composite(t))
		return NULL;
	*type = t;
	*n = btf_vlen(t);
	return btf_members(t);
}

/* Depth-first search through anonymous struct/union members. */
static bool find_member(struct ut_kernel *k, int32_t struct_id, const char *member,
			uint32_t base_bits, bool nested, struct ut_member *out)
{
	const struct btf_type *t = NULL;
	unsigned n;
	const struct btf_member *m = members_of(k, struct_id, &t, &n);
	for (unsigned i = 0; i < n; i++) {
		const char *name = btf__name_by_offset(k->btf, m[i].name_off);
		uint32_t offset = base_bits + btf_member_bit_offset(t, i);
		if (*name) {
			if (strcmp(name, member) != 0)
				continue;
			out->type = (int32_t)m[i].type;
			out->offset_bits = offset;
			out->bitfield_size = btf_member_bitfield_size(t, i);
			out->via_anon = nested;
			return true;
		}
		if (find_member(k, (int32_t)m[i].type, member, offset, true, out))
			return true;
	}
	return false;
}

int ut_kernel_member(struct ut_kernel *k, int32_t struct_id, const char *member,
		     struct ut_member *out)
{
	memset(out, 0, sizeof(*out));
	if (find_member(k, struct_id, member, 0, false, out))
		return 0;
	if (k->btf)
		set_error(k, "no member %s", member);
	return -1;
}

static void collect_member_names(struct ut_kernel *k, int32_t struct_id, struct strv *names)
{
	const struct btf_type *t = NULL;
	unsigned n;
	const struct btf_member *m = members_of(k, struct_id, &t, &n);
	for (unsigned i = 0; i < n; i++) {
		const char *name = btf__name_by_offset(k->btf, m[i].name_off);
		if (*name)
			strv_push(names, name);
		else   /* an anonymous struct or union: its members are this one's */
			collect_member_names(k, (int32_t)m[i].type, names);
	}
}

int ut_kernel_member_names(struct ut_kernel *k, int32_t struct_id, char ***out)
{
	struct strv names = {0};
	collect_member_names(k, struct_id, &names);
	*out = names.v;
	return names.n;
}

/* The prototype of FUNC `name`, or NULL. */
static const struct btf_type *func_proto(struct ut_kernel *k, const char *name)
{
	if (!ut_kernel_btf(k))
		return NULL;
	int32_t id = ut_kernel_find(k, name, BTF_KIND_FUNC);
	const struct btf_type *t = id > 0 ? type_by_id(k, id) : NULL;
	t = t ? type_by_id(k, (int32_t)t->type) : NULL;
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* Copies parameters [first, vlen) of a prototype; a trailing unnamed
 * void parameter marks varargs and is left out. */
static int copy_params(struct ut_kernel *k, const struct btf_type *proto, unsigned first,
		       struct ut_param **out, unsigned *n)
{
	const struct btf_param *p = btf_params(proto);
	unsigned vlen = btf_vlen(proto);
	if (vlen > 0 && p[vlen - 1].type == 0)
		vlen--;
	unsigned count = vlen > first ? vlen - first : 0;
	*out = xcalloc(count + 1, sizeof(**out));
	for (unsigned i = 0; i < count; i++) {
		const struct btf_param *param = &p[first + i];
		snprintf((*out)[i].name, sizeof((*out)[i].name), "%s",
			 btf__name_by_offset(k->btf, param->name_off));
		(*out)[i].type = (int32_t)param->type;
	}
	*n = count;
	return 0;
}

int32_t ut_kernel_tp_btf_typedef(struct ut_kernel *k, const char *tp_name)
{
	char name[256];
	snprintf(name, sizeof(name), "btf_trace_%s", tp_name);
	return ut_kernel_find(k, name, BTF_KIND_TYPEDEF);
}

/* The btf_trace_NAME typedef's prototype has no parameter names.  The
 * kernel's tracepoint iterator __traceiter_NAME has the same prototype
 * (void *__data first) with names, so names come from there when it
 * matches. */
static int tp_btf_params(struct ut_kernel *k, const char *tp_name, struct ut_param **out, unsigned *n,
			 bool with_names)
{
	*out = NULL;
	*n = 0;
	if (!ut_kernel_btf(k))
		return -1;
	int32_t id = ut_kernel_tp_btf_typedef(k, tp_name);
	const struct btf_type *t = id > 0 ? type_by_id(k, id) : NULL;
	t = t ? type_by_id(k, (int32_t)t->type) : NULL;
	t = t && btf_is_ptr(t) ? type_by_id(k, (int32_t)t->type) : NULL;
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) == 0) {
		set_error(k, "no BTF tracepoint %s (no typedef btf_trace_%s)", tp_name, tp_name);
		return -1;
	}
	char name[256];
	if (copy_params(k, t, 1, out, n) != 0)
		return -1;
	if (!with_names)
		return 0;
	snprintf(name, sizeof(name), "__traceiter_%s", tp_name);
	const struct btf_type *named = func_proto(k, name);
	if (named && btf_vlen(named) == btf_vlen(t)) {
		const struct btf_param *p = btf_params(named);
		for (unsigned i = 0; i < *n; i++)
			snprintf((*out)[i].name, sizeof((*out)[i].name), "%s",
				 btf__name_by_offset(k->btf, p[i + 1].name_off));
	}
	return 0;
}

int ut_kernel_tp_btf_params(struct ut_kernel *k, const char *tp_name, struct ut_param **out, unsigned *n)
{
	return tp_btf_params(k, tp_name, out, n, true);
}

int ut_kernel_func_params(struct ut_kernel *k, const char *func, struct ut_param **out,
			  unsigned *n, int32_t *ret_type)
{
	*out = NULL;
	*n = 0;
	const struct btf_type *proto = func_proto(k, func);
	if (!proto) {
		if (k->btf)
			set_error(k, "no function %s in kernel BTF", func);
		return -1;
	}
	*ret_type = (int32_t)proto->type;
	return copy_params(k, proto, 0, out, n);
}

int ut_kernel_signature(struct ut_kernel *k, const char *name, bool tracepoint, char *buf, size_t len)
{
	struct ut_param *params;
	unsigned n;
	int32_t ret = -1;
	/* types only: a tracepoint's parameter names would cost the index of
	 * every function (__traceiter_NAME) to a run of a compiled program */
	if ((tracepoint ? tp_btf_params(k, name, &params, &n, false)
			: ut_kernel_func_params(k, name, &params, &n, &ret)) < 0)
		return -1;
	size_t used = 0;
	char type[256];
	buf[0] = 0;
	for (unsigned i = 0; i < n + (ret >= 0) && used < len; i++) {
		ut_kernel_type_c(k, i < n ? params[i].type : ret, type, sizeof(type));
		int w = snprintf(buf + used, len - used, "%s%s%s", i ? ", " : "", i == n ? "-> " : "", type);
		used += w > 0 ? (size_t)w : 0;
	}
	free(params);
	return used < len ? 0 : -1;
}

static int compare_enum_entries(const void *a, const void *b)
{
	const struct enum_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void add_enumerators(struct ut_kernel *k, const struct btf_type *t, uint32_t order,
			    size_t *cap)
{
	unsigned n = btf_vlen(t);
	for (unsigned i = 0; i < n; i++) {
		if (k->nenums == *cap) {
			*cap = *cap ? *cap * 2 : 4096;
			k->enums = xrealloc_array(k->enums, *cap, sizeof(*k->enums));
		}
		struct enum_entry *e = &k->enums[k->nenums++];
		e->order = order;
		/* kflag says the enum is signed; values are stored as raw bits. */
		if (btf_is_enum(t)) {
			const struct btf_enum *v = &btf_enum(t)[i];
			e->name = btf__name_by_offset(k->btf, v->name_off);
			e->value = btf_kflag(t) ? (int64_t)v->val : (int64_t)(uint32_t)v->val;
		} else {
			const struct btf_enum64 *v = &btf_enum64(t)[i];
			e->name = btf__name_by_offset(k->btf, v->name_off);
			e->value = (int64_t)btf_enum64_value(v);
		}
	}
}

/* Sorted index of every enumerator in BTF, built on first use. */
static bool build_enum_index(struct ut_kernel *k)
{
	if (k->enums_built)
		return true;
	if (!ut_kernel_btf(k))
		return false;
	size_t cap = 0;
	uint32_t count = btf__type_cnt(k->btf);
	for (uint32_t id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(k->btf, id);
		if (btf_is_any_enum(t))
			add_enumerators(k, t, id, &cap);
	}
	if (k->nenums)
		qsort(k->enums, k->nenums, sizeof(*k->enums), compare_enum_entries);
	k->enums_built = true;
	return true;
}

int ut_kernel_enum_value(struct ut_kernel *k, const char *enumerator, int64_t *value)
{
	if (!build_enum_index(k))
		return -1;
	/* Lower bound, so duplicates resolve to the first definition. */
	size_t lo = 0, hi = k->nenums;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(k->enums[mid].name, enumerator) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->nenums || strcmp(k->enums[lo].name, enumerator) != 0) {
		set_error(k, "no enumerator %s in kernel BTF", enumerator);
		return -1;
	}
	*value = k->enums[lo].value;
	return 0;
}

int ut_kernel_functions_matching(struct ut_kernel *k, const char *glob, char ***out)
{
	*out = NULL;
	if (!ut_kernel_btf(k))
		return -1;
	struct strv found = {0};
	uint32_t count = btf__type_cnt(k->btf);
	for (uint32_t id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(k->btf, id);
		if (!btf_is_func(t))
			continue;
		const char *name = type_name(k, t);
		if (fnmatch(glob, name, 0) == 0)
			strv_push(&found, name);
	}
	return strv_finish(&found, out);
}

/* ---- suggestions ------------------------------------------------------ */

/* Levenshtein distance with two rows. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev = xcalloc(lb + 1, sizeof(*prev));
	size_t *cur = xcalloc(lb + 1, sizeof(*cur));
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t substitute = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t remove = prev[j] + 1, insert = cur[j - 1] + 1;
			size_t best = substitute < remove ? substitute : remove;
			cur[j] = best < insert ? best : insert;
		}
		size_t *swap = prev;
		prev = cur;
		cur = swap;
	}
	size_t result = prev[lb];
	free(prev);
	free(cur);
	return result;
}

const char *ut_suggest(const char *name, char *const *candidates, unsigned n)
{
	size_t limit = strlen(name) / 3;
	if (limit < 1)
		limit = 1;
	const char *best = NULL;
	size_t best_distance = SIZE_MAX;
	for (unsigned i = 0; i < n; i++) {
		if (!candidates[i])
			continue;
		size_t d = edit_distance(name, candidates[i]);
		if (d <= limit && d < best_distance) {
			best = candidates[i];
			best_distance = d;
		}
	}
	return best;
}

bool ut_kernel_has_symbol(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	char line[512];
	size_t n = strlen(name);
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sym = strchr(line, ' ');   /* "address type name[\t[module]]" */
		sym = sym && sym[1] && sym[2] == ' ' ? sym + 3 : NULL;
		found = sym && strncmp(sym, name, n) == 0 && sym[n] == '\n';
	}
	fclose(f);
	return found;
}
