/* Function symbols of an ELF file (a program or a shared library): the
 * compiler checks uprobe targets with them, the runtime names user-space
 * stack frames.  And its USDT probes (<sys/sdt.h>), which usdt probes
 * attach to. */
#ifndef UT_ELFSYMS_H
#define UT_ELFSYMS_H
#include <stddef.h>
#include <stdint.h>

struct ut_elf_sym {
	uint64_t addr, size;   /* as linked (st_value, st_size) */
	const char *name;
};

/* A loadable segment: file offsets [offset, offset + size) are mapped at
 * addresses [addr, addr + size). */
struct ut_elf_seg {
	uint64_t offset, addr, size;
};

struct ut_elf_syms {
	unsigned n;
	struct ut_elf_sym *v;      /* functions from .symtab and .dynsym, by address */
	unsigned nsegs;
	struct ut_elf_seg *segs;
	char *names;               /* the names' storage */
};

/* Reads path's functions.  -1 with a reason in err (no such file, not a
 * regular file, not ELF); the file is mapped, not read whole. */
int ut_elf_syms_read(const char *path, struct ut_elf_syms *out, char *err, size_t errlen);
void ut_elf_syms_free(struct ut_elf_syms *s);

/* The function called name (also "name@VERSION", as libbpf's uprobes
 * match it); NULL when there is none. */
const struct ut_elf_sym *ut_elf_sym_named(const struct ut_elf_syms *s, const char *name);

/* The function whose code holds addr (an address as linked); NULL when
 * none does. */
const struct ut_elf_sym *ut_elf_sym_at(const struct ut_elf_syms *s, uint64_t addr);

/* The address as linked of a file offset; -1 when no loadable segment
 * holds it. */
int ut_elf_offset_addr(const struct ut_elf_syms *s, uint64_t offset, uint64_t *addr);

/* A USDT probe of a file: its provider, name and arguments' sizes. */
#define UT_USDT_MAX_ARGS 12   /* libbpf's BPF_USDT_MAX_ARG_CNT */
struct ut_usdt_probe {
	const char *provider, *name;
	unsigned nargs;
	int8_t arg_size[UT_USDT_MAX_ARGS];   /* bytes; negative: signed */
};

struct ut_usdt_probes {
	unsigned n;
	struct ut_usdt_probe *v;   /* in the order of their first note */
};

/* Reads path's USDT probes (none for a file without); -1 with a reason
 * in err as ut_elf_syms_read. */
int ut_elf_usdt_read(const char *path, struct ut_usdt_probes *out, char *err, size_t errlen);
void ut_elf_usdt_free(struct ut_usdt_probes *p);

#endif
