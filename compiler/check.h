/* The check pass: what its files (check.c, check_expr.c, builtins.c)
 * share.  It types one alternative's copy of the probe body in place,
 * notes what each name stands for (ast.h, node_ref), and reports every
 * error the user can get. */
#ifndef UT_CHECK_H
#define UT_CHECK_H
#include "compiler/aggregations.h"
#include "compiler/builtins.h"
#include "compiler/passes.h"

/* The walk over one alternative's body: set up in one assignment for
 * each (check.c, check_alternative). */
struct check {
	struct compiler *c;
	struct alt_ctx *alt;
	bool in_computed_arg;       /* a computed argument's expression */
	bool reads_args;            /* the predicate or statements read a probe argument */
	int macro_depth;            /* script functions expanded around the node */
	const char *loop_vars[UT_MAX_LOOP_DEPTH];   /* of the for loops around the statement */
	struct node *loop_maps[UT_MAX_LOOP_DEPTH];  /* each loop's N_FOR_MAP; NULL: a loop over a range */
	unsigned loop_depth;
	uint64_t loop_iterations;   /* of the loops around the statement, multiplied (1: none) */
};

#define ERR(ck, n, ...) diag_error((ck)->c->d, (n)->loc, __VA_ARGS__)

static inline struct type t_int(int size, bool sgn)
{
	return (struct type){.kind = T_INT, .size = (uint8_t)size, .is_signed = sgn};
}
static inline struct type t_ptr(int32_t btf) { return (struct type){.kind = T_PTR, .size = 8, .btf = btf}; }
static inline struct type t_str(int size)
{
	return (struct type){.kind = T_STR, .size = (uint8_t)(size > 255 ? 255 : size)};
}

/* For messages: "string", and with its article "a string". */
const char *type_name(const struct type *t);
const char *a_type(const struct type *t);

/* check_expr.c */
void check_expr(struct check *ck, struct node *n);
/* exists(args.NAME): which argument it names, if any (f->ref). */
void check_exists_arg(struct check *ck, struct node *f);
bool check_enum_exists(struct check *ck, struct node *call, struct node *arg);
/* A call of script function fn: its body, the call's arguments in place
 * (n->resolved), or NULL when it cannot be expanded (reported). */
struct node *expand_macro(struct check *ck, struct node *n, struct node *fn);
/* Checks n's expansion with check_body, naming the call in a note when
 * that reports an error. */
void check_expansion(struct check *ck, struct node *n, void (*check_body)(struct check *, struct node *));
/* The value of a constant integer expression (numbers, constants, -D
 * values, arithmetic on them); false when it is not one. */
bool const_int(struct compiler *c, const struct node *n, int64_t *v, int depth);
/* Bytes of an integer type as casts spell it: "u32" 4, "s8" 1, "bool" 1. */
int scalar_type_bytes(const char *spelling);
struct map_info *map_get(struct check *ck, struct node *ref);
void check_map_key(struct check *ck, int map, struct node *ref);
/* The tuple type that holds tuples of types a and b: the same number of
 * elements of the same kinds, strings as long as the longer's and at
 * least min_string; -1 when a and b are not so alike. */
int tuple_merge(struct compiler *c, int a, int b, int min_string);
/* The program's table named name, or -1. */
int table_index(struct compiler *c, const char *name);
/* The table name (made when first asked for) with an entry for key, named
 * text: how the `probe` and `func` builtins are shown. */
int naming_table(struct check *ck, const char *name, int64_t key, const char *text);
/* n stands for the constant value (a node of n's now): n's expansion,
 * checked where n is (a positional parameter, a builtin constant). */
void stands_for(struct check *ck, struct node *n, struct node *value);
/* $1 .. and $#: a positional parameter, not a local. */
bool is_positional(const char *name);
/* The alternative's local name, or -1. */
int find_local(struct check *ck, const char *name);
/* True inside the body of a for loop whose variable is name. */
bool in_loop_of(struct check *ck, const char *name);
/* The loop over a map around the statement whose variable is name, or NULL. */
struct node *map_loop_of(struct check *ck, const char *name);
/* check.c: the entry locals of the loops over maps take their maps' final
 * types (a later probe may give a map longer strings), and so do the
 * nodes that read them. */
void check_map_entries(struct compiler *c, struct alt_ctx *a);

/* check.c: a value a record stores (a name, an argument, a key): literal
 * text and fmt() are kept as written, user space makes their text. */
void check_value(struct check *ck, struct node *n);
void check_format(struct check *ck, struct node *fmtn, struct node **args, int nargs);
/* The format and values of a call of printf() or fmt() in args (room for
 * CALL_MAX_ARGS); their number, or -1 when there are none or too many
 * (reported). */
int format_args(struct check *ck, struct node *call, struct node **args);
/* fmt() and printf(): the format (args[0]) is applied in user space to the
 * values args[1..na-1], each a value of the record. */
void check_format_values(struct check *ck, struct node **args, int na);
/* A record's with list: names given once, values a record keeps; a
 * counter's (counter) are numbers.  n: the statement, for messages. */
void check_with(struct check *ck, struct node *with, bool counter, struct node *n);

#endif
