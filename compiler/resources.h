/* What the resources pass (resources.c) lends the statement builtins
 * (statements.c) to lay out their records with. */
#ifndef UT_RESOURCES_H
#define UT_RESOURCES_H
#include "compiler/builtins.h"

/* A record as its fields are laid out: after the header, each 8 bytes or
 * a string's capacity rounded up to 8. */
struct record {
	struct ut_event *ev;
	uint32_t size;
};

/* A field of the record: its index. */
unsigned record_add_field(struct record *r, enum ut_field_type type, uint32_t size);
/* A checked value the record holds: literal text, a format and its
 * values, or a field the probe fills. */
struct ut_value record_value(struct record *r, struct node *n);
/* An argument of the record (a with value): its name and value. */
void record_arg(struct record *r, const char *name, struct ut_value v);
/* fmt() and printf(): the format (the call's first argument) and the
 * values it takes, a field each. */
struct ut_value record_format(struct record *r, struct node *call);
/* The fields record_value and record_format add, in order, to each. */
void value_fields(struct node *v, field_each each, void *ctx);
void format_fields(struct node *call, field_each each, void *ctx);

#endif
