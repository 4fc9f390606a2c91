/* Saving and loading compiled scripts (.uto): tables, the BPF object and
 * the reader's compiled user side. */
#ifndef UT_PROGRAM_IO_H
#define UT_PROGRAM_IO_H
#include <stddef.h>
#include <stdint.h>

#include "compiler/program.h"

/* Every .uto starts with "UTO" and a format version character (0-9, then A-Z). */
#define UT_PROGRAM_MAGIC "UTOA"

/* What a compiled script runs besides its tables: the BPF object, and the
 * object of the reader's user side for the machine that compiled it
 * (compiler/gen_native.h; none: user_len 0) with the hash of the C it was
 * built from (ut_hash_bytes of ut_gen_native's text and its NUL): a
 * loader runs it only for a program whose C has that hash. */
struct ut_program_objects {
	const void *bpf;
	size_t bpf_len;
	const void *user;
	size_t user_len;
	uint64_t user_c_hash;
};

/* Serializes p and its objects into a malloc'ed buffer. */
void ut_program_save(const struct ut_program *p, const struct ut_program_objects *objs, void **out, size_t *out_len);
/* Parses a .uto image; objs point into data.  NULL with err on a damaged
 * or foreign file: every count and index is checked.  objs->user is set
 * only for code that is whole and was built from this program's C. */
struct ut_program *ut_program_load(const void *data, size_t len, struct ut_program_objects *objs, char *err,
				   size_t errlen);

#endif
