/* The language's builtin names and functions: one row each (builtins.c),
 * which the check pass types and the generator writes. */
#ifndef UT_BUILTINS_H
#define UT_BUILTINS_H
#include "compiler/ast.h"

struct check;
struct gen;

/* A builtin name (pid, comm, nsecs, ...): its type, how user space shows
 * it, its C, and whether each use is a new value: a stack, which a helper
 * looks up and may store at every use (not the same all through a hit). */
struct builtin {
	const char *name;
	struct type type;
	const char *cexpr;
	uint8_t show;
	bool each_use;
};
extern const struct builtin builtins[];
const struct builtin *builtin_named(const char *name);

/* printf() and fmt(): a format and at most this many values, a record
 * field each; no builtin function takes more arguments than printf(). */
#define FORMAT_MAX_VALUES 16
#define CALL_MAX_ARGS (FORMAT_MAX_VALUES + 1)

/* A builtin function. */
struct call_def {
	const char *name;
	int min_args, max_args;
	/* types n (its arguments in args) and reports its errors */
	void (*check)(struct check *ck, struct node *n, struct node **args, int nargs);
	/* its C; NULL for calls that never reach the C (fmt() is a record's
	 * value, statements are no expressions) */
	char *(*gen)(struct gen *g, struct node *n, struct node **args, int nargs);
	uint8_t show;   /* a display function: the enum ut_display it gives its integer */
	/* only BPF can compute it (a stack, a kernel symbol table of the hit):
	 * placement (split execution) keeps it in the kernel */
	bool kernel_only;
};
extern const struct call_def calls[];
const struct call_def *call_named(const char *name);
/* The builtin function a checked call stands for, through script
 * functions; NULL for other nodes. */
const struct call_def *call_of(struct node *n);

/* The text of a string literal or of a string constant's; NULL for
 * other nodes. */
struct compiler;
const char *const_string(struct compiler *c, const struct node *n);

/* join(argv): the strings it reads, bytes of each (bpftrace's). */
#define JOIN_MAX_STRINGS 16
#define JOIN_STRING_BYTES 64

/* print(@m, ...) of a whole map, not print(value). */
bool prints_map(const struct node *call);

/* A call of a script function stands for its expansion: n through them. */
struct node *through_functions(struct node *n);

/* How a record holds a checked value (check.c, check_value): literal text
 * and fmt() stay in the program, user space makes their text; any other
 * value is a field the probe fills. */
enum value_form { VALUE_FIELD, VALUE_TEXT, VALUE_FORMAT };
enum value_form value_form(struct node *n);

#endif
