/* A BPF object without its DWARF.  clang emits BTF from debug info, and
 * with it the DWARF sections, two thirds of an object (the default
 * script's 1.9 MB): libbpf reads only .BTF and .BTF.ext (types, CO-RE
 * relocations, line info for the verifier's messages), so cached objects
 * and .uto files keep those and drop .debug_* and their relocations. */
#ifndef UT_RUNTIME_ELF_STRIP_H
#define UT_RUNTIME_ELF_STRIP_H
#include <stddef.h>

/* Rewrites the ELF64 little-endian relocatable object obj[0..*len) in
 * place without its .debug_* sections (and the relocation sections for
 * them), updating *len; leaves an object it does not understand as it
 * is. */
void ut_strip_debug_sections(void *obj, size_t *len);

#endif
