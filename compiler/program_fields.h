/* The fields of struct ut_program, described once (program_fields.c): a
 * .uto's tables are saved, loaded (every count bounded by what the file
 * holds), freed and printed by following the description, so a field
 * added to the program is added in one place. */
#ifndef UT_PROGRAM_FIELDS_H
#define UT_PROGRAM_FIELDS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/program.h"

struct byte_reader;

/* A field of a struct the program holds, as a .uto stores it. */
enum pf_kind {
	PF_UNSIGNED,   /* unsigned, uint32_t or an enum: 4 bytes */
	PF_INT,        /* int: 4 bytes */
	PF_U16,        /* uint16_t: 4 bytes */
	PF_BOOL,       /* bool: 4 bytes, 0 or 1 */
	PF_I64,        /* int64_t: 8 bytes */
	PF_STR,        /* char *: a u32 length and the bytes; 0xffffffff for NULL */
	PF_LOC,        /* struct ut_loc: its file (one of the program's strings), line, column */
	PF_STRUCT,     /* a struct in place */
	PF_ARRAY,      /* a pointer to `count` structs: the count, then each */
	PF_ALONG,      /* a pointer to as many structs as the array before it holds: each */
};

struct pf_struct;

struct pf_field {
	const char *name;
	enum pf_kind kind;
	size_t offset;
	size_t count;                 /* PF_ARRAY, PF_ALONG: the offset of the unsigned count */
	const struct pf_struct *of;   /* PF_STRUCT, PF_ARRAY, PF_ALONG */
	uint32_t below;               /* PF_UNSIGNED: a load takes values below it only; 0: any */
	bool text;                    /* PF_STR: loaded, never NULL ("" for none) */
	bool unsaved;                 /* not in a .uto, only freed (the BPF C) */
};

struct pf_struct {
	const char *name;
	size_t size;
	const struct pf_field *fields;
	unsigned nfields;
	unsigned max_depth;           /* nested in itself at most this deep (a value's format values) */
	/* what a load checks of one beyond its fields' bounds; NULL: nothing */
	bool (*ok)(const void *s);
};

extern const struct pf_struct pf_program;

/* A .uto being written. */
struct pf_writer {
	unsigned char *buf;
	size_t len, cap;
};
void pf_write(struct pf_writer *w, const void *p, size_t n);
void pf_write_u32(struct pf_writer *w, uint32_t v);
void pf_write_u64(struct pf_writer *w, uint64_t v);

/* p's tables, as the description orders them. */
void pf_save(struct pf_writer *w, const struct ut_program *p);
/* p's tables, read into p (zeroed); false when the file is damaged (what
 * was read is still p's, to free). */
bool pf_load(struct byte_reader *in, struct ut_program *p);
/* p's tables, one line a probe, event, map, expression or statement. */
void pf_dump(const struct ut_program *p, FILE *out);

#endif
