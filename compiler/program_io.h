/* Saving and loading compiled scripts (.uto): tables plus BPF object. */
#ifndef UT_PROGRAM_IO_H
#define UT_PROGRAM_IO_H
#include <stddef.h>

#include "compiler/program.h"

/* Every .uto starts with "UTO" and a format version digit. */
#define UT_PROGRAM_MAGIC "UTO4"

/* Serializes p and the object into a malloc'ed buffer; -1 on no memory. */
int ut_program_save(const struct ut_program *p, const void *obj, size_t obj_len, void **out, size_t *out_len);
/* Parses a .uto image; *obj points into data.  NULL with err on a damaged
 * or foreign file: every count and index is checked. */
struct ut_program *ut_program_load(const void *data, size_t len, const void **obj, size_t *obj_len,
				   char *err, size_t errlen);

#endif
