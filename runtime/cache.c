#include "runtime/cache.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/files.h"
#include "base/hash.h"
#include "base/trust.h"
#include "runtime/bpfcc_loader.h"
#include "runtime/elf_strip.h"
#include "kernel/vmlinux.h"

/* snprintf for paths; a path too long for PATH_MAX becomes "", which every
 * file operation then rejects. */
__attribute__((format(printf, 3, 4))) static void path_fmt(char *buf, size_t len,
							  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		buf[0] = 0;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The deepest directory of path that exists, as far as it exists. */
static void existing_part(const char *path, char *part, size_t len)
{
	snprintf(part, len, "%s", path);
	struct stat st;
	while (stat(part, &st) != 0) {
		char *slash = strrchr(part, '/');
		if (!slash || slash == part) {
			snprintf(part, len, "%s", slash ? "/" : ".");
			return;
		}
		*slash = 0;
	}
}

/* The run's own cache when the chosen one is not trusted: new and empty,
 * so everything is compiled afresh; removed at exit. */
static char private_dir[PATH_MAX];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void remove_private_dir(void)
{
	nftw(private_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int use_private_dir(char *dir, size_t len, char *err, size_t errlen)
{
	if (!private_dir[0]) {
		char made[] = "/tmp/uring-trace-cache.XXXXXX";
		if (!mkdtemp(made)) {
			snprintf(err, errlen, "cannot create a private cache directory: %s", strerror(errno));
			return -1;
		}
		snprintf(private_dir, sizeof(private_dir), "%s", made);
		atexit(remove_private_dir);
	}
	snprintf(dir, len, "%s", private_dir);
	return 0;
}

int ut_cache_dir(char *dir, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("UT_CACHE_DIR");
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char chosen[PATH_MAX];
	if (env && *env)
		snprintf(chosen, sizeof(chosen), "%s", env);
	else if (xdg && *xdg)
		path_fmt(chosen, sizeof(chosen), "%s/uring-trace", xdg);
	else if (geteuid() == 0)
		snprintf(chosen, sizeof(chosen), "/var/cache/uring-trace");
	else if (home && *home)
		path_fmt(chosen, sizeof(chosen), "%s/.cache/uring-trace", home);
	else {
		snprintf(err, errlen, "no cache directory: set XDG_CACHE_HOME or HOME");
		return -1;
	}
	/* Root makes directories only where no one else could have put
	 * something first, and uses the cache only if no one else can change
	 * it (base/trust.h). */
	char part[PATH_MAX], why[PATH_MAX + 64];
	existing_part(chosen, part, sizeof(part));
	bool trusted = ut_trusted_dir(part, strcmp(part, chosen) != 0, dir, len, why, sizeof(why));
	if (trusted && make_dirs(chosen) != 0) {
		snprintf(err, errlen, "cannot create cache directory %s: %s", chosen, strerror(errno));
		return -1;
	}
	if (trusted && ut_trusted_dir(chosen, false, dir, len, why, sizeof(why)))
		return 0;
	static char refused[PATH_MAX];
	if (strcmp(refused, chosen) != 0) {
		snprintf(refused, sizeof(refused), "%s", chosen);
		fprintf(stderr,
			"uring-trace: warning: not using the cache %s: %s; as root, uring-trace runs code only "
			"from files that root alone can change, so it compiles afresh in a private directory "
			"(set UT_CACHE_DIR to a directory only root can write to keep what it compiles)\n",
			chosen, why);
	}
	return use_private_dir(dir, len, err, errlen);
}

/* Whether a cached file that clang reads by its path (vmlinux.h, its PCH)
 * is there and trusted; one that is not trusted is said and made again. */
static bool cached_file_ok(const char *path)
{
	char why[PATH_MAX + 64];
	if (ut_trusted_file(path, why, sizeof(why)))
		return true;
	if (errno != ENOENT)
		fprintf(stderr, "uring-trace: warning: not using a cached file: %s; making it afresh\n", why);
	return false;
}

int ut_cache_read(const char *path, void **data, size_t *len)
{
	char why[PATH_MAX + 64];
	if (ut_read_trusted_file(path, data, len, why, sizeof(why)) == 0)
		return 0;
	if (errno == EPERM)
		fprintf(stderr, "uring-trace: warning: not using a cached file: %s; compiling it afresh\n", why);
	return 1;
}

struct cached_file {
	char *path;
	uint64_t bytes;
	struct timespec used;
};

static int least_recently_used(const void *a, const void *b)
{
	const struct cached_file *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

/* The files in dir/sub, added to *v (*n of *cap); another run's file
 * being written (a temporary name) is left alone. */
static void list_cached(const char *dir, const char *sub, struct cached_file **v, size_t *n, size_t *cap)
{
	char path[PATH_MAX];
	path_fmt(path, sizeof(path), "%s/%s", dir, sub);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		char file[PATH_MAX];
		struct stat st;
		path_fmt(file, sizeof(file), "%s/%s", path, de->d_name);
		if (strstr(de->d_name, ".tmp.") || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		grow_array((void **)v, cap, *n + 1, sizeof(**v));
		(*v)[(*n)++] = (struct cached_file){xstrdup(file), (uint64_t)st.st_blocks * 512, st.st_mtim};
	}
	if (d)
		closedir(d);
}

void ut_cache_trim(void)
{
	char dir[PATH_MAX], err[256];
	if (ut_cache_dir(dir, sizeof(dir), err, sizeof(err)) != 0)
		return;
	const char *env = getenv("UT_CACHE_MAX_MB");
	uint64_t max = (env && atoll(env) > 0 ? (uint64_t)atoll(env) : 512) << 20, total = 0;
	struct cached_file *v = NULL;
	size_t n = 0, cap = 0;
	list_cached(dir, "obj", &v, &n, &cap);
	list_cached(dir, "prog", &v, &n, &cap);
	for (size_t i = 0; i < n; i++)
		total += v[i].bytes;
	if (total > max) {
		qsort(v, n, sizeof(*v), least_recently_used);
		for (size_t i = 0; i < n && total > max - max / 4; i++)
			if (v[i].path && unlink(v[i].path) == 0)
				total -= v[i].bytes;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

void ut_cache_used(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

static bool has_ut_h(const char *root)
{
	char path[PATH_MAX];
	path_fmt(path, sizeof(path), "%s/bpf/ut.h", root);
	return access(path, R_OK) == 0;
}

int ut_bpf_root(char *dir, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("UT_BPF_ROOT");
	if (env && *env) {
		snprintf(dir, len, "%s", env);
		if (has_ut_h(dir))
			return 0;
		snprintf(err, errlen, "UT_BPF_ROOT=%s has no bpf/ut.h", env);
		return -1;
	}
	char exe_dir[PATH_MAX];
	if (ut_exe_dir(exe_dir, sizeof(exe_dir)) == 0) {
		/* build/uring-trace and build/tests/test_* in the source tree */
		const char *ups[] = {"..", "../.."};
		for (size_t i = 0; i < 2; i++) {
			char candidate[PATH_MAX];
			path_fmt(candidate, sizeof(candidate), "%s/%s", exe_dir, ups[i]);
			if (has_ut_h(candidate) && realpath(candidate, dir))
				return 0;
		}
	}
	if (has_ut_h(UT_DATADIR)) {
		snprintf(dir, len, "%s", UT_DATADIR);
		return 0;
	}
	snprintf(err, errlen, "bpf/ut.h not found (set UT_BPF_ROOT or install to %s)", UT_DATADIR);
	return -1;
}

int ut_exe_dir(char *dir, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(dir, len, "%s", dirname(exe));
	return 0;
}

static int write_vmlinux_header(const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	ut_temp_path(tmp, sizeof(tmp), path);
	FILE *f = fopen(tmp, "we");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	int rc = ut_vmlinux_dump(f, err, errlen);
	if (fclose(f) != 0 && rc == 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s: %s", tmp, strerror(errno));
		rc = -1;
	}
	if (rc != 0)
		unlink(tmp);
	return rc;
}

/* A PCH only saves time: when it cannot be made, compile without it. */
static bool make_pch(const struct ut_bpfcc *cc, const char *header, const char *const *includes,
		     const char *pch)
{
	char tmp[PATH_MAX];
	ut_temp_path(tmp, sizeof(tmp), pch);
	char *diag = NULL;
	int rc = cc->make_pch(header, includes, tmp, &diag);
	free(diag);
	if (rc == 0 && rename(tmp, pch) == 0)
		return true;
	unlink(tmp);
	return false;
}

/* Where an object is built from and stored. */
struct object_place {
	char cache[PATH_MAX], root[PATH_MAX]; /* cache and bpf/ headers' directories */
	char obj_dir[PATH_MAX], obj_path[PATH_MAX];
	uint64_t btf_hash;
	bool host;                            /* the reader's code, not BPF */
};

/* Compiles c_src with clang and stores the object at at->obj_path; for
 * BPF, vmlinux.h and its PCH are made first when missing.  The reader's
 * code includes nothing. */
static int compile_object(const char *c_src, const struct object_place *at, void **obj, size_t *len, char *err,
			  size_t errlen)
{
	const struct ut_bpfcc *cc = ut_bpfcc_get(err, errlen);
	if (!cc)
		return -1;
	struct ut_bpfcc_opts opts = {.source = c_src, .source_len = strlen(c_src), .host = at->host,
				     .source_name = at->host ? "uring-trace.user.c" : "uring-trace.bpf.c"};
	char btf_dir[PATH_MAX] = "", header[PATH_MAX], pch[PATH_MAX], bpf_dir[PATH_MAX];
	const char *includes[] = {btf_dir, at->root, bpf_dir, NULL};
	if (!at->host) {
		/* a precompiled header only works with the very clang that made it */
		const char *version = cc->version();
		path_fmt(btf_dir, sizeof(btf_dir), "%s/btf-%016llx", at->cache, (unsigned long long)at->btf_hash);
		path_fmt(header, sizeof(header), "%s/vmlinux.h", btf_dir);
		path_fmt(pch, sizeof(pch), "%s/vmlinux-%016llx.pch", btf_dir,
			 (unsigned long long)ut_hash_bytes(UT_HASH_INIT, version, strlen(version)));
		path_fmt(bpf_dir, sizeof(bpf_dir), "%s/bpf", at->root);
	}
	if ((btf_dir[0] && make_dirs(btf_dir) != 0) || make_dirs(at->obj_dir) != 0) {
		snprintf(err, errlen, "cannot create directories in %s: %s", at->cache, strerror(errno));
		return -1;
	}
	if (!at->host) {
		/* a header made again leaves its PCH stale: clang refuses it */
		bool new_header = !cached_file_ok(header);
		if (new_header && write_vmlinux_header(header, err, errlen) != 0)
			return -1;
		opts.include_dirs = includes;
		if ((!new_header && cached_file_ok(pch)) || make_pch(cc, header, includes, pch))
			opts.pch = pch;
	}
	char *diag = NULL;
	if (cc->compile(&opts, obj, len, &diag) != 0) {
		snprintf(err, errlen, "compiling the %s failed%s%s", at->host ? "reader's generated C" : "generated BPF C",
			 diag ? ":\n" : "", diag ? diag : "");
		free(diag);
		return -1;
	}
	free(diag);
	if (!at->host)
		ut_strip_debug_sections(*obj, len);
	if (ut_write_file_atomic(at->obj_path, *obj, *len) != 0) {
		/* The object is good; only the next run loses time. */
		snprintf(err, errlen, "cannot store %s: %s", at->obj_path, strerror(errno));
	}
	return 0;
}

/* What the compiling child sends back, then the object and the error text. */
struct compile_reply {
	int32_t rc;
	uint32_t unused;
	uint64_t obj_len, err_len;
};

/* A compile in a child process: the memory clang keeps once it has run
 * (~90 MB) goes with the child, and a crash inside clang is an error
 * message, not the end of the tracer.  Children of a batch run at the
 * same time (start_child, then finish_child for each). */
struct child {
	pid_t pid;
	int fd;   /* the reply's end; -1: no child */
};

static int start_child(const char *c_src, const struct object_place *at, struct child *c, char *err,
		       size_t errlen)
{
	int fds[2];
	c->fd = -1;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "cannot start the compiler: pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL); /* or the child's exit would write buffered output twice */
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the compiler: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		void *o = NULL;
		size_t n = 0;
		char *child_err = xcalloc(1, errlen);
		int rc = compile_object(c_src, at, &o, &n, child_err, errlen);
		struct compile_reply r = {
			.rc = rc,
			.obj_len = rc == 0 ? n : 0,
			.err_len = strlen(child_err),
		};
		bool sent = ut_write_all(fds[1], &r, sizeof(r)) == 0 && ut_write_all(fds[1], o, r.obj_len) == 0 &&
			    ut_write_all(fds[1], child_err, r.err_len) == 0;
		_exit(sent ? 0 : 1); /* no atexit handlers: they are the parent's */
	}
	close(fds[1]);
	*c = (struct child){.pid = pid, .fd = fds[0]};
	return 0;
}

static int finish_child(struct child *c, void **obj, size_t *len, char *err, size_t errlen)
{
	struct compile_reply r;
	bool received = ut_read_all(c->fd, &r, sizeof(r)) == 0 && r.err_len < errlen;
	if (received) {
		*obj = xmalloc(r.obj_len);
		received = ut_read_all(c->fd, *obj, r.obj_len) == 0 && ut_read_all(c->fd, err, r.err_len) == 0;
	}
	close(c->fd);
	c->fd = -1;
	int status = 0;
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!received) {
		free(*obj);
		*obj = NULL;
		if (WIFSIGNALED(status))
			snprintf(err, errlen, "the compiler (clang, in a child process) was killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(err, errlen, "the compiler (clang, in a child process) exited without a result");
		return -1;
	}
	err[r.err_len] = 0;
	if (r.rc != 0) {
		free(*obj);
		*obj = NULL;
		return -1;
	}
	*len = r.obj_len;
	return 0;
}

/* Where b's object is cached (its key); 0, or -1 with b->err. */
static int place_object(struct ut_object_build *b, struct object_place *at)
{
	char *err = b->err;
	size_t errlen = sizeof(b->err);
	*at = (struct object_place){.host = b->host};
	if (ut_cache_dir(at->cache, sizeof(at->cache), err, errlen) != 0)
		return -1;
	uint64_t key = ut_hash_bytes(UT_HASH_INIT, b->c_src, strlen(b->c_src) + 1);
	key = ut_hash_bytes(key, UT_CLANG_VERSION, sizeof(UT_CLANG_VERSION));
	path_fmt(at->obj_dir, sizeof(at->obj_dir), "%s/obj", at->cache);
	if (b->host) {
		struct utsname u;
		if (uname(&u) == 0)
			key = ut_hash_bytes(key, u.machine, strlen(u.machine));
		path_fmt(at->obj_path, sizeof(at->obj_path), "%s/%016llx.host.o", at->obj_dir, (unsigned long long)key);
		return 0;
	}
	if (ut_bpf_root(at->root, sizeof(at->root), err, errlen) != 0 ||
	    ut_vmlinux_btf_hash(&at->btf_hash, err, errlen) != 0)
		return -1;
	key = ut_hash_bytes(key, &at->btf_hash, sizeof(at->btf_hash));
	/* the headers every generated program includes: a changed one is a
	 * different object */
	static const char *const headers[] = {"ut.h", "records.h"};
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char path[PATH_MAX];
		path_fmt(path, sizeof(path), "%s/bpf/%s", at->root, headers[i]);
		void *text;
		size_t text_len;
		if (ut_read_file(path, &text, &text_len) != 0) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		key = ut_hash_bytes(key, text, text_len);
		free(text);
	}
	path_fmt(at->obj_path, sizeof(at->obj_path), "%s/%016llx.o", at->obj_dir, (unsigned long long)key);
	return 0;
}

void ut_build_objects(struct ut_object_build *builds, unsigned n)
{
	struct object_place *at = xcalloc(n + 1, sizeof(*at));
	struct child *children = xcalloc(n + 1, sizeof(*children));
	for (unsigned i = 0; i < n; i++) {
		struct ut_object_build *b = &builds[i];
		children[i].fd = -1;
		b->obj = NULL;
		b->len = 0;
		b->cached = false;
		b->err[0] = 0;
		if ((b->rc = place_object(b, &at[i])) == 0 && ut_cache_read(at[i].obj_path, &b->obj, &b->len) == 0) {
			b->cached = true;
			ut_cache_used(at[i].obj_path);
		} else if (b->rc == 0) {
			b->rc = start_child(b->c_src, &at[i], &children[i], b->err, sizeof(b->err));
		}
	}
	bool compiled = false;
	for (unsigned i = 0; i < n; i++)
		if (children[i].fd >= 0) {
			builds[i].rc = finish_child(&children[i], &builds[i].obj, &builds[i].len, builds[i].err,
						    sizeof(builds[i].err));
			compiled = true;
		}
	if (compiled)
		ut_cache_trim();
	free(at);
	free(children);
}
