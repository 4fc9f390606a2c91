#include "runtime/program_cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/alloc.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "compiler/program_io.h"
#include "runtime/cache.h"
#include "kernel/vmlinux.h"
#include "probes/kind.h"

#define ENTRY_MAGIC "UTPC1\0\0\0"   /* 8 bytes */

/* What tells a file or directory's contents apart without reading it. */
struct file_id {
	uint64_t dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns;
};

/* false for what its times do not follow (a FIFO, a device) */
static bool file_id(const char *path, struct file_id *id)
{
	struct stat st;
	if (stat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return false;
	*id = (struct file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
			       (uint64_t)st.st_mtim.tv_sec, (uint64_t)st.st_mtim.tv_nsec,
			       (uint64_t)st.st_ctim.tv_sec, (uint64_t)st.st_ctim.tv_nsec};
	return true;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return ut_hash_bytes(h, s ? s : "", strlen(s ? s : "") + 1);
}

static uint64_t hash_file_id(uint64_t h, const char *path)
{
	struct file_id id = {0};
	file_id(path, &id);
	return ut_hash_bytes(hash_str(h, path), &id, sizeof(id));
}

/* A small file's bytes ("" when it cannot be read: the same for every run). */
static uint64_t hash_contents(uint64_t h, const char *path)
{
	void *data = NULL;
	size_t len = 0;
	if (ut_read_file(path, &data, &len) != 0)
		len = 0;
	h = ut_hash_bytes(hash_str(h, path), data ? data : "", len);
	free(data);
	return h;
}

/* An option's path as the compiler will resolve it. */
static uint64_t hash_path(uint64_t h, const char *path)
{
	char real[PATH_MAX];
	return hash_str(h, path && realpath(path, real) ? real : path);
}

static uint64_t hash_strings(uint64_t h, const char *const *v, unsigned n)
{
	h = ut_hash_bytes(h, &n, sizeof(n));
	for (unsigned i = 0; i < n; i++)
		h = hash_str(h, v[i]);
	return h;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

bool ut_program_cache_find(struct ut_program_cache *c, const struct ut_compile_opts *co)
{
	c->path[0] = 0;
	c->started = wall_now();
	char dir[PATH_MAX], root[PATH_MAX], err[256];
	uint64_t btf;
	if (ut_cache_dir(dir, sizeof(dir), err, sizeof(err)) != 0 || ut_bpf_root(root, sizeof(root), err, sizeof(err)) != 0 ||
	    ut_vmlinux_btf_hash(&btf, err, sizeof(err)) != 0)
		return false;
	uint64_t h = hash_str(UT_HASH_INIT, "uring-trace program cache 1");
	h = hash_str(h, UT_PROGRAM_MAGIC);
	/* this build of the tool and the BPF code every program includes */
	h = hash_file_id(h, "/proc/self/exe");
	char header[PATH_MAX + 32];
	snprintf(header, sizeof(header), "%s/bpf/ut.h", root);
	h = hash_file_id(h, header);
	snprintf(header, sizeof(header), "%s/bpf/records.h", root);
	h = hash_file_id(h, header);
	/* the kernel: its types, and while this boot lasts, the tracepoints
	 * and functions that modules and dynamic events add */
	h = ut_hash_bytes(h, &btf, sizeof(btf));
	h = hash_contents(h, "/proc/sys/kernel/random/boot_id");
	h = hash_contents(h, "/proc/modules");
	const char *tracefs = getenv("UT_TRACEFS");
	h = hash_str(h, tracefs);
	char dynamic[PATH_MAX + 32];
	snprintf(dynamic, sizeof(dynamic), "%s/dynamic_events", tracefs && *tracefs ? tracefs : "/sys/kernel/tracing");
	h = hash_contents(h, dynamic);
	/* what the compiler is given */
	h = hash_path(h, co->file);
	h = hash_str(h, co->text);
	h = ut_hash_bytes(h, &co->ninclude_dirs, sizeof(co->ninclude_dirs));
	for (unsigned i = 0; i < co->ninclude_dirs; i++)
		h = hash_path(h, co->include_dirs[i]);
	h = hash_path(h, co->stdlib_dir);
	h = hash_strings(h, co->flags, co->nflags);
	h = hash_strings(h, co->defines, co->ndefines);
	h = hash_strings(h, co->positional, co->npositional);
	h = ut_hash_bytes(h, &co->all_in_kernel, sizeof(co->all_in_kernel));
	h = ut_hash_bytes(h, &co->no_trace, sizeof(co->no_trace));   /* its trace compiled out */
	int n = snprintf(c->path, sizeof(c->path), "%s/prog/%016llx.utc", dir, (unsigned long long)h);
	if (n < 0 || (size_t)n >= sizeof(c->path))
		c->path[0] = 0;
	return c->path[0] != 0;
}

/* ---- the entry: magic, inputs, -v's report, image.  Written whole or not
 * at all (renamed into place), like the cached objects, and like them not
 * hashed: the .uto loader checks the image's structure and the reader's
 * code against its hash, libbpf the BPF object. */

/* Bytes preceded by their length, as a NUL-ended string (malloc'ed). */
static char *take_string(struct byte_reader *r)
{
	uint64_t len = byte_u64(r);
	const char *at = byte_take(r, len);
	if (!at)
		return NULL;
	return xstrndup(at, len);
}

void *ut_program_cache_get(const struct ut_program_cache *c, size_t *len, char **report)
{
	*report = NULL;
	void *data;
	size_t size;
	if (!c->path[0] || ut_cache_read(c->path, &data, &size) != 0)
		return NULL;
	void *image = NULL;
	struct byte_reader r = {data, size, false};
	const void *magic = byte_take(&r, 8);
	if (!magic || memcmp(magic, ENTRY_MAGIC, 8) != 0)
		goto out;
	uint64_t ninputs = byte_u64(&r);
	for (uint64_t i = 0; i < ninputs && !r.bad; i++) {
		struct file_id kept, now;
		const void *at = byte_take(&r, sizeof(kept));
		char *path = take_string(&r);
		if (at)
			memcpy(&kept, at, sizeof(kept));
		bool same = path && file_id(path, &now) && memcmp(&kept, &now, sizeof(now)) == 0;
		free(path);
		if (!same)
			goto out;
	}
	*report = take_string(&r);
	uint64_t image_len = byte_u64(&r);
	const void *at = byte_take(&r, image_len);
	if (!at || !*report || r.left != 0)
		goto out;
	image = memmove(data, at, image_len);   /* the buffer's pages are touched already */
	*len = image_len;
	ut_cache_used(c->path);
out:
	if (!image) {
		free(*report);
		*report = NULL;
		free(data);
	}
	return image;
}

static bool any_probe_in_files(const struct ut_program *prog)
{
	for (unsigned p = 0; p < prog->nprobes; p++)
		for (unsigned a = 0; a < prog->probes[p].nalts; a++)
			if (probe_kind_def(prog->probes[p].alts[a].kind)->target_in_files)
				return true;
	return false;
}

static void put_bytes(FILE *f, const void *data, uint64_t len)
{
	fwrite(&len, sizeof(len), 1, f);
	fwrite(data, 1, len, f);
}

bool ut_program_cache_put(const struct ut_program_cache *c, const struct ut_program *prog,
			  const struct ut_compile_inputs *inputs, const char *report, const void *image, size_t len,
			  char *why, size_t whylen)
{
	const char *refused = !c->path[0]	 ? "there is no cache directory"
			      : inputs->unnamed	 ? "a script has no file to compare (read from a pipe)"
			      : any_probe_in_files(prog) ? "a probe's target is resolved in a program's files (uprobe, USDT)"
						 : NULL;
	if (refused) {
		snprintf(why, whylen, "%s", refused);
		return false;
	}
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f) {
		snprintf(why, whylen, "out of memory");
		return false;
	}
	fwrite(ENTRY_MAGIC, 1, 8, f);
	uint64_t n = inputs->n;
	fwrite(&n, sizeof(n), 1, f);
	bool settled = true;
	for (unsigned i = 0; i < inputs->n && settled; i++) {
		struct file_id id;
		/* a change within the same clock tick as the compile's read
		 * could leave the times as they are: an input changed in the
		 * second before the compile is not trusted */
		settled = file_id(inputs->paths[i], &id) && (double)id.mtime_s + 1 < c->started &&
			  (double)id.ctime_s + 1 < c->started;
		if (!settled)
			snprintf(why, whylen, "%s changed in the second before the compile (the next run keeps it)",
				 inputs->paths[i]);
		fwrite(&id, sizeof(id), 1, f);
		put_bytes(f, inputs->paths[i], strlen(inputs->paths[i]));
	}
	put_bytes(f, report ? report : "", report ? strlen(report) : 0);
	put_bytes(f, image, len);
	bool kept = false;
	if (fclose(f) != 0) {
		snprintf(why, whylen, "out of memory");
	} else if (settled) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", c->path);
		*strrchr(dir, '/') = 0;
		mkdir(dir, 0755);
		kept = ut_write_file_atomic(c->path, buf, size) == 0;   /* whole or not at all */
		if (kept)
			ut_cache_trim();
		else
			snprintf(why, whylen, "cannot write %s: %s", c->path, strerror(errno));
	}
	free(buf);
	return kept;
}
