/* The language's builtins, a row each: the names (pid, comm, nsecs) in
 * builtins[], the functions (str(), hex()) and the statements (printf(),
 * delete()) in calls[].  A row holds what every pass needs of its builtin:
 * its check, its record, its traits for placement, its C and the reader's
 * statement.  Outside builtins.c and statements.c no pass asks a builtin
 * its name. */
#ifndef UT_BUILTINS_H
#define UT_BUILTINS_H
#include "compiler/passes.h"

struct check;
struct gen;
struct record;
struct strbuf;

/* A builtin name (pid, comm, nsecs, ...). */
struct builtin {
	const char *name;
	struct type type;
	uint8_t show;               /* how user space shows it: enum ut_display */
	const char *cexpr;          /* its C */
	/* the clock: its C in a body, from the hit's one clock read (gen_expr.c) */
	const char *clock_cexpr;
	/* its C, from statements that read it into a temporary (comm) */
	char *(*gen)(struct gen *g);
	/* its check, where its value is not its type alone (`probe`, `func`:
	 * their tables); it sets the node's ref */
	void (*check)(struct check *ck, struct node *n);
	const char *btf_struct;     /* a pointer to this kernel struct (curtask) */
	/* placement: */
	bool each_use;              /* a new value at each use (a stack, a random number) */
	bool costly;                /* more than a helper call: a string, a stack, the filter's look-up */
	bool in_header;             /* every record's header has it, as `header`: the reader reads it there */
	enum ut_uheader header;
};
extern const struct builtin builtins[];
const struct builtin *builtin_named(const char *name);

/* printf() and fmt(): a format and at most this many values, a record
 * field each; no builtin function takes more arguments than printf(). */
#define FORMAT_MAX_VALUES 16
#define CALL_MAX_ARGS (FORMAT_MAX_VALUES + 1)

/* A statement builtin (statements.c): a hook or trait for each pass.  It
 * writes a record (printf(), exit()), or updates a map (delete()). */
struct statement_def {
	/* check.c: checks the call and its arguments */
	void (*check)(struct check *ck, struct node *call);
	/* resources.c: its record's op; record (NULL: none) gives it its name
	 * and the fields it adds (resources.h), and fields (NULL: none) the
	 * values that fill them */
	enum ut_event_op op;
	void (*record)(struct record *r, struct node *call);
	void (*fields)(struct node *call, field_each each, void *ctx);
	/* gen_stmt.c: its own kernel C (NULL: its record's), which evaluates
	 * no value of the script but the keys of the map it updates (reuse.c
	 * follows what the C reads); and statements that fill its record after
	 * the values, from its first argument (join()'s strings) */
	void (*gen)(struct gen *g, struct node *call);
	void (*fill)(struct gen *g, struct strbuf *into, struct node *call);
	/* placement.c: why its probe runs in the kernel whole (join() reads
	 * memory into its record); NULL: it may run in the reader */
	const char *kernel_only;
	/* it updates the map its argument names (delete(@m[k])): no record;
	 * placement places it with the map, the reader runs it as reader_op */
	bool updates_map;
	enum ut_ustmt_op reader_op;
};

/* A builtin function or statement. */
struct call_def {
	const char *name;
	int min_args, max_args;     /* a statement's as a value: its own check counts */
	/* a function: types n (its arguments in args) and reports its errors */
	void (*check)(struct check *ck, struct node *n, struct node **args, int nargs);
	/* its C; NULL for a call that never reaches the C (fmt() is a record's
	 * value) */
	char *(*gen)(struct gen *g, struct node *n, struct node **args, int nargs);
	uint8_t show;   /* a display function: the enum ut_display it gives its integer */
	/* placement: its value is its first argument's, shown as `show`: the
	 * reader evaluates the argument (hex()); the kernel computes every
	 * other function (a stack, a read of kernel memory) */
	bool shows_argument;
	bool cheap;                 /* a value the kernel captures at little cost (exists(), diskdev()) */
	/* a record's value only: its format and values stay in the program,
	 * user space makes the text (fmt(); check.c, check_value) */
	bool format;
	/* a string in a buffer of map memory as large as a map's string value:
	 * a map takes it where it is (path()) */
	bool map_memory;
	bool unevaluated;           /* its arguments' types alone, no C reads them (sizeof()) */
	/* computed by the reader alone, from its first argument's map (whole,
	 * where either side keeps it): the operation the reader evaluates
	 * over the map and its keys (percentile()); 0: none */
	enum ut_uexpr_op reader_op;
	const struct statement_def *statement;   /* a statement's hooks, or NULL */
};
extern const struct call_def calls[];
const struct call_def *call_named(const char *name);
/* The builtin function a checked call stands for, through script
 * functions; NULL for other nodes. */
const struct call_def *call_of(struct node *n);
/* The statement a checked call statement stands for (REF_STATEMENT). */
static inline const struct statement_def *statement_of(const struct node *call)
{
	return call->kind == N_CALL && call->ref == REF_STATEMENT ? calls[call->sym].statement : NULL;
}

/* The text of a string literal or of a string constant's; NULL for
 * other nodes. */
const char *const_string(struct compiler *c, const struct node *n);
/* The table naming probes (the `probe` builtin) loses the entry of a probe
 * left out: the next probe gets its index. */
void forget_probe_name(struct compiler *c, unsigned probe_index);

/* join(argv): the strings it reads, bytes of each (bpftrace's). */
#define JOIN_MAX_STRINGS 16
#define JOIN_STRING_BYTES 64

/* A call of a script function stands for its expansion: n through them. */
struct node *through_functions(struct node *n);

/* How a record holds a checked value (check.c, check_value): literal text
 * and fmt() stay in the program, user space makes their text; any other
 * value is a field the probe fills. */
enum value_form { VALUE_FIELD, VALUE_TEXT, VALUE_FORMAT };
enum value_form value_form(struct node *n);

#endif
