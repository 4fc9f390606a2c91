#include "runtime/native.h"

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"

/* A call out of the object: `jmp *0(%rip)` then the address, placed next
 * to the code so a 32-bit displacement reaches it wherever the C library
 * is mapped. */
#define TRAMPOLINE_BYTES 16

struct native_function {
	char *name;
	void *address;
};

struct ut_native {
	unsigned char *base;
	size_t size;
	unsigned nfunctions;
	struct native_function *functions;
};

/* What loading one object needs. */
struct load {
	Elf *elf;
	size_t nsections;
	size_t *place;          /* per section: its offset in the image; SIZE_MAX when not loaded */
	unsigned char *base;
	size_t size;
	Elf_Data *symbols;      /* the symbol table */
	size_t symbol_names;    /* its string table's section */
	size_t nsymbols;
	size_t *trampoline;     /* per symbol: its trampoline's offset, 0 when none */
	char *err;
	size_t errlen;
};

static bool fail(struct load *l, const char *what, const char *name)
{
	snprintf(l->err, l->errlen, "the compiled user side cannot be loaded: %s%s%s", what, name ? " " : "",
		 name ? name : "");
	return false;
}

/* Sections placed in the image: code and constants.  Unwind tables are
 * left out (nothing unwinds through the object). */
static bool placed(const GElf_Shdr *sh, const char *name)
{
	return (sh->sh_flags & SHF_ALLOC) && sh->sh_size && strcmp(name, ".eh_frame") != 0;
}

static bool lay_out(struct load *l)
{
	size_t shstrndx;
	if (elf_getshdrnum(l->elf, &l->nsections) != 0 || elf_getshdrstrndx(l->elf, &shstrndx) != 0)
		return fail(l, "no section table", NULL);
	l->place = xcalloc(l->nsections + 1, sizeof(*l->place));
	for (size_t i = 0; i < l->nsections; i++) {
		l->place[i] = SIZE_MAX;
		Elf_Scn *scn = elf_getscn(l->elf, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh))
			return fail(l, "a damaged section header", NULL);
		const char *name = elf_strptr(l->elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			l->symbols = elf_getdata(scn, NULL);
			l->symbol_names = sh.sh_link;
			l->nsymbols = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		} else if (placed(&sh, name ? name : "")) {
			if (sh.sh_flags & SHF_WRITE)   /* the image is made read-only */
				return fail(l, "it has a writable section", name);
			size_t align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
			if (align > 4096 || (align & (align - 1)) || sh.sh_size > (1u << 30))
				return fail(l, "an unexpected section", name);
			l->size = (l->size + align - 1) & ~(align - 1);
			l->place[i] = l->size;
			l->size += sh.sh_size;
		}
	}
	if (!l->symbols)
		return fail(l, "no symbol table", NULL);
	l->trampoline = xcalloc(l->nsymbols + 1, sizeof(*l->trampoline));
	l->size = (l->size + 15) & ~(size_t)15;
	for (size_t i = 1; i < l->nsymbols; i++) {
		GElf_Sym sym;
		if (gelf_getsym(l->symbols, (int)i, &sym) && sym.st_shndx == SHN_UNDEF && sym.st_name) {
			l->trampoline[i] = l->size;
			l->size += TRAMPOLINE_BYTES;
		}
	}
	return true;
}

/* Copies the sections and writes the trampolines of undefined symbols. */
static bool fill(struct load *l, const struct ut_native_symbol *calls, unsigned ncalls)
{
	for (size_t i = 0; i < l->nsections; i++) {
		if (l->place[i] == SIZE_MAX)
			continue;
		Elf_Scn *scn = elf_getscn(l->elf, i);
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_NOBITS)
			continue;   /* the image is zeroed */
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || data->d_size != sh.sh_size || !data->d_buf)
			return fail(l, "a damaged section", NULL);
		memcpy(l->base + l->place[i], data->d_buf, data->d_size);
	}
	for (size_t i = 1; i < l->nsymbols; i++) {
		if (!l->trampoline[i])
			continue;
		GElf_Sym sym;
		gelf_getsym(l->symbols, (int)i, &sym);
		const char *name = elf_strptr(l->elf, l->symbol_names, sym.st_name);
		void *to = NULL;
		for (unsigned c = 0; name && c < ncalls && !to; c++)
			if (strcmp(calls[c].name, name) == 0)
				to = calls[c].address;
		if (!to)
			return fail(l, "it calls a function the reader does not provide:", name ? name : "?");
		static const unsigned char jump[6] = {0xff, 0x25, 0, 0, 0, 0};
		memcpy(l->base + l->trampoline[i], jump, sizeof(jump));
		memcpy(l->base + l->trampoline[i] + sizeof(jump), &to, sizeof(to));
	}
	return true;
}

/* The address symbol i stands for. */
static bool symbol_address(struct load *l, size_t i, uint64_t *address)
{
	GElf_Sym sym;
	if (i >= l->nsymbols || !gelf_getsym(l->symbols, (int)i, &sym))
		return fail(l, "a relocation names no symbol", NULL);
	if (sym.st_shndx == SHN_UNDEF && l->trampoline[i]) {
		*address = (uint64_t)(uintptr_t)(l->base + l->trampoline[i]);
		return true;
	}
	if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= l->nsections || l->place[sym.st_shndx] == SIZE_MAX)
		return fail(l, "a relocation refers to a section not loaded", NULL);
	*address = (uint64_t)(uintptr_t)(l->base + l->place[sym.st_shndx]) + sym.st_value;
	return true;
}

static bool relocate_section(struct load *l, Elf_Scn *scn, const GElf_Shdr *sh)
{
	if (sh->sh_info >= l->nsections || l->place[sh->sh_info] == SIZE_MAX)
		return true;   /* relocations of a section not loaded (unwind tables) */
	GElf_Shdr target;
	gelf_getshdr(elf_getscn(l->elf, sh->sh_info), &target);
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t r = 0; data && r < n; r++) {
		GElf_Rela rela;
		uint64_t s;
		if (!gelf_getrela(data, (int)r, &rela) || !symbol_address(l, GELF_R_SYM(rela.r_info), &s))
			return fail(l, "a damaged relocation", NULL);
		unsigned type = GELF_R_TYPE(rela.r_info);
		unsigned width = type == R_X86_64_64 ? 8 : 4;
		if (rela.r_offset > target.sh_size || target.sh_size - rela.r_offset < width)
			return fail(l, "a relocation outside its section", NULL);
		unsigned char *at = l->base + l->place[sh->sh_info] + rela.r_offset;
		uint64_t value = s + (uint64_t)rela.r_addend;
		if (type == R_X86_64_64) {
			memcpy(at, &value, 8);
			continue;
		}
		if (type != R_X86_64_PC32 && type != R_X86_64_PLT32) {
			char what[32];
			snprintf(what, sizeof(what), "%u", type);
			return fail(l, "a relocation of a type it does not handle:", what);
		}
		int64_t relative = (int64_t)(value - (uint64_t)(uintptr_t)at);
		if (relative != (int32_t)relative)
			return fail(l, "a relocation out of reach", NULL);
		int32_t v = (int32_t)relative;
		memcpy(at, &v, 4);
	}
	return true;
}

static bool relocate(struct load *l)
{
	for (size_t i = 0; i < l->nsections; i++) {
		Elf_Scn *scn = elf_getscn(l->elf, i);
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return fail(l, "a damaged section header", NULL);
		if (sh.sh_type == SHT_REL)
			return fail(l, "REL relocations", NULL);
		if (sh.sh_type == SHT_RELA && !relocate_section(l, scn, &sh))
			return false;
	}
	return true;
}

/* The object's defined global functions, by name. */
static void list_functions(struct load *l, struct ut_native *n)
{
	n->functions = xcalloc(l->nsymbols + 1, sizeof(*n->functions));
	for (size_t i = 1; i < l->nsymbols; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(l->symbols, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    GELF_ST_BIND(sym.st_info) != STB_GLOBAL || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= l->nsections || l->place[sym.st_shndx] == SIZE_MAX)
			continue;
		const char *name = elf_strptr(l->elf, l->symbol_names, sym.st_name);
		if (!name)
			continue;
		n->functions[n->nfunctions].name = xstrdup(name);
		n->functions[n->nfunctions++].address = l->base + l->place[sym.st_shndx] + sym.st_value;
	}
}

bool ut_native_supported(void)
{
#if defined(__x86_64__)
	return true;
#else
	return false;
#endif
}

struct ut_native *ut_native_load(const void *obj, size_t len, const struct ut_native_symbol *calls,
				 unsigned ncalls, char *err, size_t errlen)
{
	struct load l = {.err = err, .errlen = errlen};
	struct ut_native *n = NULL;
	err[0] = 0;
#if defined(__x86_64__)
	elf_version(EV_CURRENT);
	char *copy = xcalloc(1, len ? len : 1);   /* libelf may write into what it reads */
	memcpy(copy, obj, len);
	l.elf = elf_memory(copy, len);
	GElf_Ehdr eh;
	if (!l.elf || elf_kind(l.elf) != ELF_K_ELF || !gelf_getehdr(l.elf, &eh))
		fail(&l, "not an ELF object", NULL);
	else if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 || eh.e_type != ET_REL)
		fail(&l, "not an x86-64 relocatable object", NULL);
	else if (lay_out(&l)) {
		void *m = mmap(NULL, l.size ? l.size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			fail(&l, "no memory", NULL);
		} else {
			l.base = m;
			if (fill(&l, calls, ncalls) && relocate(&l) &&
			    mprotect(l.base, l.size ? l.size : 1, PROT_READ | PROT_EXEC) == 0) {
				n = xcalloc(1, sizeof(*n));
				n->base = l.base;
				n->size = l.size ? l.size : 1;
				list_functions(&l, n);
			} else {
				if (!err[0])
					fail(&l, "memory cannot be made executable", NULL);
				munmap(l.base, l.size ? l.size : 1);
			}
		}
	}
	if (l.elf)
		elf_end(l.elf);
	free(copy);
	free(l.place);
	free(l.trampoline);
#else
	(void)obj, (void)len, (void)calls, (void)ncalls;
	fail(&l, "the reader runs compiled code on x86-64 only", NULL);
#endif
	return n;
}

void *ut_native_find(const struct ut_native *n, const char *name)
{
	for (unsigned i = 0; n && i < n->nfunctions; i++)
		if (strcmp(n->functions[i].name, name) == 0)
			return n->functions[i].address;
	return NULL;
}

void ut_native_free(struct ut_native *n)
{
	if (!n)
		return;
	munmap(n->base, n->size);
	for (unsigned i = 0; i < n->nfunctions; i++)
		free(n->functions[i].name);
	free(n->functions);
	free(n);
}
