/* vmlinux.h for BPF programs, generated from the running kernel's BTF
 * (/sys/kernel/btf/vmlinux, or the file UT_BTF names, as the compiler reads
 * it: tests build against a stored kernel's) with libbpf's btf_dump, and the
 * identity of that BTF that keys everything compiled against it. */
#ifndef UT_RUNTIME_VMLINUX_H
#define UT_RUNTIME_VMLINUX_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define UT_VMLINUX_BTF "/sys/kernel/btf/vmlinux"

/* Identity of the running kernel's BTF: its release, build version (which
 * has the build's number and date) and the BTF's size; of a UT_BTF file,
 * its path, size and modification time.  Reading and hashing
 * the whole BTF (~6 MB) cost every start ~15 ms.  0, or -1 with err. */
int ut_vmlinux_btf_hash(uint64_t *hash, char *err, size_t errlen);

/* Writes the C declarations of every BTF type to out.  0 or -1 with err. */
int ut_vmlinux_dump(FILE *out, char *err, size_t errlen);

#endif
