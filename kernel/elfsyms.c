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

#include "base/alloc.h"

static int by_addr(const void *pa, const void *pb)
{
	const struct ut_elf_sym *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Room for one more in a growing array of n elements of size bytes. */
static void grow(void **v, unsigned *cap, unsigned n, size_t size)
{
	if (n < *cap)
		return;
	*cap = *cap ? *cap * 2 : 64;
	*v = xrealloc_array(*v, *cap, size);
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
		grow((void **)&out->segs, &cap, out->nsegs, sizeof(*out->segs));
		out->segs[out->nsegs++] = (struct ut_elf_seg){.offset = ph.p_offset, .addr = ph.p_vaddr, .size = ph.p_filesz};
	}
}

/* Functions (defined, with an address) of .symtab and .dynsym.  Names are
 * kept as offsets into out->names until the storage stops moving. */
static void read_functions(Elf *elf, struct ut_elf_syms *out)
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
			grow((void **)&out->v, &cap, out->n, sizeof(*out->v));
			while (names_len + len > names_cap) {
				names_cap = names_cap ? names_cap * 2 : 4096;
				out->names = xrealloc(out->names, names_cap);
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
}

/* Maps path and runs read on it as ELF: 0, or -1 with a reason in err (no
 * such file, not a regular file, not ELF).  The file is mapped, not read
 * whole. */
static int with_elf(const char *path, void (*read)(Elf *elf, void *out), void *out, char *err, size_t errlen)
{
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
		read(elf, out);
		rc = 0;
	}
	if (elf)
		elf_end(elf);
	munmap(map, (size_t)st.st_size);
	return rc;
}

static void read_syms(Elf *elf, void *out)
{
	read_segments(elf, out);
	read_functions(elf, out);
}

int ut_elf_syms_read(const char *path, struct ut_elf_syms *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int rc = with_elf(path, read_syms, out, err, errlen);
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

/* ---- USDT probes: the notes of <sys/sdt.h> ---- */

#define NT_STAPSDT 3

/* A note's argument sizes: "-4@%edi 8@%rax" is a signed 4-byte and an
 * 8-byte argument. */
static void usdt_args(const char *args, struct ut_usdt_probe *p)
{
	for (const char *a = args; *a && p->nargs < UT_USDT_MAX_ARGS;) {
		while (*a == ' ')
			a++;
		if (!*a)
			break;
		char *end;
		long size = strtol(a, &end, 10);
		p->arg_size[p->nargs++] = (int8_t)(*end == '@' && size >= -8 && size <= 8 ? size : 8);
		a += strcspn(a, " ");
	}
}

/* A probe as the notes name it: a probe at several places has a note
 * each, one entry here. */
static void add_usdt(struct ut_usdt_probes *out, unsigned *cap, const char *provider, const char *name, const char *args)
{
	for (unsigned i = 0; i < out->n; i++)
		if (strcmp(out->v[i].provider, provider) == 0 && strcmp(out->v[i].name, name) == 0)
			return;
	grow((void **)&out->v, cap, out->n, sizeof(*out->v));
	struct ut_usdt_probe *p = &out->v[out->n];
	*p = (struct ut_usdt_probe){.provider = xstrdup(provider), .name = xstrdup(name)};
	usdt_args(args, p);
	out->n++;
}

/* The notes: their descriptor is three addresses (the probe's, the base
 * it was linked at, its semaphore's), then provider, name and arguments,
 * each NUL-terminated. */
static void read_usdt(Elf *elf, void *arg)
{
	struct ut_usdt_probes *out = arg;
	unsigned cap = 0;
	size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			const char *owner = (const char *)data->d_buf + name_off;
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 || memcmp(owner, "stapsdt", 8) != 0 ||
			    nh.n_descsz < 3 * addr_size + 3)
				continue;
			const char *desc = (const char *)data->d_buf + desc_off, *end = desc + nh.n_descsz;
			const char *provider = desc + 3 * addr_size;
			const char *name = provider + strnlen(provider, (size_t)(end - provider)) + 1;
			const char *args = name < end ? name + strnlen(name, (size_t)(end - name)) + 1 : end;
			if (args >= end || memchr(args, 0, (size_t)(end - args)) == NULL)
				continue;   /* not three strings */
			add_usdt(out, &cap, provider, name, args);
		}
	}
}

int ut_elf_usdt_read(const char *path, struct ut_usdt_probes *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int rc = with_elf(path, read_usdt, out, err, errlen);
	if (rc < 0)
		ut_elf_usdt_free(out);
	return rc;
}

void ut_elf_usdt_free(struct ut_usdt_probes *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		free((char *)p->v[i].provider);
		free((char *)p->v[i].name);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}
