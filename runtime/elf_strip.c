#include "runtime/elf_strip.h"

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* The name of section s, or NULL when it is not in the names section. */
static const char *section_name(const unsigned char *in, size_t size, const Elf64_Shdr *names, const Elf64_Shdr *s)
{
	if (names->sh_type != SHT_STRTAB || names->sh_offset > size || names->sh_size > size - names->sh_offset ||
	    s->sh_name >= names->sh_size)
		return NULL;
	const char *name = (const char *)in + names->sh_offset + s->sh_name;
	return memchr(name, 0, names->sh_size - s->sh_name) ? name : NULL;
}

static bool is_relocation(const Elf64_Shdr *s)
{
	return s->sh_type == SHT_REL || s->sh_type == SHT_RELA;
}

/* Writes the kept sections' data after the header, then their headers;
 * false when the result would not fit in the input's size. */
static bool rewrite(unsigned char *in, size_t *len, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, const unsigned *to,
		    const bool *drop)
{
	size_t size = *len, pos = sizeof(*eh);
	unsigned n = eh->e_shnum, kept = 0;
	unsigned char *out = xmalloc(size);
	Elf64_Shdr *ns = xcalloc(n, sizeof(*ns));
	bool ok = true;
	for (unsigned i = 0; i < n && ok; i++) {
		if (drop[i])
			continue;
		Elf64_Shdr s = sh[i];
		if (i == 0) {   /* the null section */
			ns[kept++] = s;
			continue;
		}
		if (s.sh_type != SHT_NOBITS) {
			uint64_t align = s.sh_addralign > 1 ? s.sh_addralign : 1;
			pos = (pos + align - 1) / align * align;
			if (pos > size || s.sh_size > size - pos) {
				ok = false;
				break;
			}
			memcpy(out + pos, in + s.sh_offset, s.sh_size);
			s.sh_offset = pos;
			pos += s.sh_size;
		}
		if (s.sh_link)
			s.sh_link = to[s.sh_link];
		if (is_relocation(&s) || (s.sh_flags & SHF_INFO_LINK))
			s.sh_info = to[s.sh_info];
		if (s.sh_type == SHT_SYMTAB && s.sh_entsize == sizeof(Elf64_Sym)) {
			/* a symbol of a dropped section (its section symbol) is
			 * left without one; the others follow their sections */
			Elf64_Sym *syms = (Elf64_Sym *)(out + s.sh_offset);
			for (size_t k = 0; k < s.sh_size / sizeof(*syms); k++) {
				Elf64_Sym sym;
				memcpy(&sym, &syms[k], sizeof(sym));
				if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < n)
					sym.st_shndx = drop[sym.st_shndx] ? SHN_UNDEF : (Elf64_Section)to[sym.st_shndx];
				memcpy(&syms[k], &sym, sizeof(sym));
			}
		}
		ns[kept++] = s;
	}
	pos = (pos + 7) / 8 * 8;
	ok = ok && pos <= size && (size - pos) / sizeof(*ns) >= kept;
	if (ok) {
		Elf64_Ehdr h = *eh;
		h.e_shoff = pos;
		h.e_shnum = (Elf64_Half)kept;
		h.e_shstrndx = (Elf64_Half)to[eh->e_shstrndx];
		memcpy(out, &h, sizeof(h));
		memcpy(out + pos, ns, kept * sizeof(*ns));
		*len = pos + kept * sizeof(*ns);
		memcpy(in, out, *len);
	}
	free(out);
	free(ns);
	return ok;
}

void ut_strip_debug_sections(void *obj, size_t *len)
{
	unsigned char *in = obj;
	size_t size = *len;
	Elf64_Ehdr eh;
	if (size < sizeof(eh))
		return;
	memcpy(&eh, in, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_REL || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shnum == 0 || eh.e_shnum >= SHN_LORESERVE || eh.e_shstrndx >= eh.e_shnum || eh.e_shoff > size ||
	    (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
		return;
	unsigned n = eh.e_shnum;
	Elf64_Shdr *sh = xcalloc(n, sizeof(*sh));
	bool *drop = xcalloc(n, sizeof(*drop));
	unsigned *to = xcalloc(n, sizeof(*to));
	bool ok = true, any = false;
	memcpy(sh, in + eh.e_shoff, n * sizeof(*sh));
	for (unsigned i = 1; i < n && ok; i++) {
		const char *name = section_name(in, size, &sh[eh.e_shstrndx], &sh[i]);
		ok = name && (sh[i].sh_type == SHT_NOBITS || (sh[i].sh_offset <= size && sh[i].sh_size <= size - sh[i].sh_offset));
		drop[i] = ok && strncmp(name, ".debug_", 7) == 0;
	}
	for (unsigned i = 1; i < n && ok; i++)
		if (is_relocation(&sh[i]) && sh[i].sh_info < n && drop[sh[i].sh_info])
			drop[i] = true;
	for (unsigned i = 1, next = 1; i < n && ok; i++) {
		if (drop[i]) {
			any = true;
			continue;
		}
		/* what a kept section links to is kept */
		bool info_links = is_relocation(&sh[i]) || (sh[i].sh_flags & SHF_INFO_LINK);
		ok = sh[i].sh_link < n && !drop[sh[i].sh_link] && (!info_links || (sh[i].sh_info < n && !drop[sh[i].sh_info]));
		to[i] = next++;
	}
	if (ok && any)
		rewrite(in, len, &eh, sh, to, drop);
	free(sh);
	free(drop);
	free(to);
}
