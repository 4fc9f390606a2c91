#include "kernel/binaries.h"

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/alloc.h"

/* The cache's layout since glibc 2.32 (elf/cache.c there): a header, then
 * entries whose key (the soname) and value (the path) are offsets of
 * strings from the header's start.  Older files put it after the old
 * format's table, so the header is looked for by its magic. */
#define CACHE_MAGIC "glibc-ld.so.cache1.1"
struct cache_header {
	char magic[sizeof(CACHE_MAGIC) - 1];
	uint32_t nlibs, len_strings;
	uint8_t flags, padding[3];
	uint32_t extension_offset, unused[3];
};
struct cache_entry {
	int32_t flags;
	uint32_t key, value, osversion;
	uint64_t hwcap;
};

/* The ELF machine and class of a file; 0 when it is not ELF. */
static unsigned elf_kind(const char *path)
{
	unsigned char ident[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, ident, sizeof(ident));
	close(fd);
	if (n < (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return 0;
	uint16_t machine;
	memcpy(&machine, ident + 18, sizeof(machine));
	return (unsigned)machine << 8 | ident[EI_CLASS];
}

/* "libc" is libc.so.N, "libc.so.6" itself; the first entry for this
 * machine (the cache may list other architectures' libraries too). */
static bool soname_matches(const char *soname, const char *name)
{
	size_t n = strlen(name);
	return strncmp(soname, name, n) == 0 && (!soname[n] || strncmp(soname + n, ".so", 3) == 0);
}

static char *cached_library(const char *name)
{
	int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct cache_header)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t size = (size_t)st.st_size;
	const char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	char *found = NULL;
	const char *at = memmem(map, size, CACHE_MAGIC, sizeof(CACHE_MAGIC) - 1);
	unsigned self = elf_kind("/proc/self/exe");
	if (at) {
		size_t base = (size_t)(at - map), left = size - base;
		struct cache_header h;
		memcpy(&h, at, sizeof(h));
		for (uint32_t i = 0; !found && i < h.nlibs && sizeof(h) + (i + 1) * sizeof(struct cache_entry) <= left;
		     i++) {
			struct cache_entry e;
			memcpy(&e, at + sizeof(h) + i * sizeof(e), sizeof(e));
			if (e.key >= left || e.value >= left || !memchr(at + e.key, 0, left - e.key) ||
			    !memchr(at + e.value, 0, left - e.value))
				continue;
			if (soname_matches(at + e.key, name) && elf_kind(at + e.value) == self)
				found = xstrdup(at + e.value);
		}
	}
	munmap((void *)map, size);
	return found;
}

static char *program_on_path(const char *name)
{
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		char *full = xasprintf("%.*s/%s", (int)n, n ? p : ".", name);
		if (access(full, X_OK) == 0)
			return full;
		free(full);
		p += n + (p[n] == ':');
	}
	return NULL;
}

char *ut_binary_path(const char *name)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	char *lib = cached_library(name);
	return lib ? lib : program_on_path(name);
}
