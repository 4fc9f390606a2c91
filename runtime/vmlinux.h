/* vmlinux.h for BPF programs, generated from the running kernel's BTF
 * (/sys/kernel/btf/vmlinux) with libbpf's btf_dump, and a hash of that BTF
 * that keys everything compiled against it. */
#ifndef UT_RUNTIME_VMLINUX_H
#define UT_RUNTIME_VMLINUX_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define UT_VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* FNV-1a 64 of the BTF file's bytes.  0 on success, -1 with err. */
int ut_vmlinux_btf_hash(uint64_t *hash, char *err, size_t errlen);

/* Writes the C declarations of every BTF type to out.  0 or -1 with err. */
int ut_vmlinux_dump(FILE *out, char *err, size_t errlen);

#endif
