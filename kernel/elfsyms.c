#include "kernel/elfsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_addr(const void *pa, const void *pb)
{
	const struct ut_elf_sym *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Appends to a growing array of n elements of size bytes; false when out
 * of memory. */
static bool grow(void **v, unsigned *cap, unsigned n, size_t size)
{
	if (n < *cap)
		return true;
	unsigned c = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, (size_t)c * size);
	if (!p)
		return false;
	*v = p;
	*cap = c;
	return true;
}

static void read_segments(Elf *elf, struct ut_elf_syms *out)
{
	size_t nph;
	unsigned cap = 0;
	if (elf_getphdrnum(elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!grow((void **)&out->segs, &cap, out->nsegs, sizeof(*out->segs)))
			return;
		out->segs[out->nsegs++] = (struct ut_elf_seg){.offset = ph.p_offset, .addr = ph.p_vaddr, .size = ph.p_filesz};
	}
}

/* Functions (defined, with an address) of .symtab and .dynsym.  Names are
 * kept as offsets into out->names until the storage stops moving. */
static int read_functions(Elf *elf, struct ut_elf_syms *out)
{
	unsigned cap = 0, names_cap = 0, names_len = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count && i <= INT32_MAX; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym))
				break;
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !name[0])
				continue;
			unsigned len = (unsigned)strnlen(name, 4096) + 1;
			if (!grow((void **)&out->v, &cap, out->n, sizeof(*out->v)))
				return -1;
			while (names_len + len > names_cap) {
				unsigned c = names_cap ? names_cap * 2 : 4096;
				char *p = realloc(out->names, c);
				if (!p)
					return -1;
				out->names = p;
				names_cap = c;
			}
			memcpy(out->names + names_len, name, len - 1);
			out->names[names_len + len - 1] = 0;
			out->v[out->n++] = (struct ut_elf_sym){.addr = sym.st_value, .size = sym.st_size,
							       .name = (const char *)(uintptr_t)names_len};
			names_len += len;
		}
	}
	for (unsigned i = 0; i < out->n; i++)
		out->v[i].name = out->names + (uintptr_t)out->v[i].name;
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_addr);
	/* .symtab repeats most of .dynsym */
	unsigned k = 0;
	for (unsigned i = 0; i < out->n; i++)
		if (!k || out->v[i].addr != out->v[k - 1].addr || strcmp(out->v[i].name, out->v[k - 1].name) != 0)
			out->v[k++] = out->v[i];
	out->n = k;
	return 0;
}

int ut_elf_syms_read(const char *path, struct ut_elf_syms *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	/* not blocking on a FIFO; mapped, so a large file is not read whole */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "not a regular file");
		return -1;
	}
	if (st.st_size < 64) {
		close(fd);
		snprintf(err, errlen, "not an ELF file");
		return -1;
	}
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot map it: %s", strerror(errno));
		return -1;
	}
	int rc = -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory(map, (size_t)st.st_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "not an ELF file");
	} else {
		read_segments(elf, out);
		rc = read_functions(elf, out);
		if (rc < 0)
			snprintf(err, errlen, "out of memory");
	}
	if (elf)
		elf_end(elf);
	munmap(map, (size_t)st.st_size);
	if (rc < 0)
		ut_elf_syms_free(out);
	return rc;
}

void ut_elf_syms_free(struct ut_elf_syms *s)
{
	free(s->v);
	free(s->segs);
	free(s->names);
	memset(s, 0, sizeof(*s));
}

const struct ut_elf_sym *ut_elf_sym_named(const struct ut_elf_syms *s, const char *name)
{
	size_t len = strlen(name);
	for (unsigned i = 0; i < s->n; i++)
		if (strncmp(s->v[i].name, name, len) == 0 && (s->v[i].name[len] == 0 || s->v[i].name[len] == '@'))
			return &s->v[i];
	return NULL;
}

const struct ut_elf_sym *ut_elf_sym_at(const struct ut_elf_syms *s, uint64_t addr)
{
	/* the last symbol at or before addr */
	unsigned lo = 0, hi = s->n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (s->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a few back: an alias at the same address, or a function holding a
	 * smaller one (a local label with a symbol of its own) */
	for (unsigned i = lo, back = 0; i-- > 0 && back < 16; back++) {
		const struct ut_elf_sym *f = &s->v[i];
		if (addr == f->addr || (f->size && addr - f->addr < f->size))
			return f;
	}
	return NULL;
}

int ut_elf_offset_addr(const struct ut_elf_syms *s, uint64_t offset, uint64_t *addr)
{
	for (unsigned i = 0; i < s->nsegs; i++)
		if (offset >= s->segs[i].offset && offset - s->segs[i].offset < s->segs[i].size) {
			*addr = offset - s->segs[i].offset + s->segs[i].addr;
			return 0;
		}
	return -1;
}
