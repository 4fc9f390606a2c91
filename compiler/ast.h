/* The script's syntax tree.  One node shape for everything keeps the
 * parser, the checker and the code generator small: a kind, a location,
 * up to three children, a sibling link for lists, and the checked type. */
#ifndef UT_AST_H
#define UT_AST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "compiler/program.h"

enum node_kind {
	/* top level */
	N_IMPORT,       /* str: module name, or a C header's path (num IMPORT_OF_HEADER) */
	N_CONST,        /* str: name, a: value, b: the values it may take (N_INT/N_STR list) or NULL;
	                 * num CONST_FROM_HEADER: loaded for an #include, the script's own replaces it */
	N_TABLE,        /* str: name, a: list of N_TABLE_ENTRY */
	N_TABLE_ENTRY,  /* num: key, str: name */
	N_FN,           /* str: name, a: params (N_IDENT list), b: body (expr or N_BLOCK) */
	N_ALIAS,        /* str: name, a: list of N_PROBE_ALTS (a list alias when more than one) */
	N_PROBE_BLOCK,  /* a: list of N_PROBE_ALTS, b: predicate or NULL, c: N_BLOCK; num: 1 = unfiltered */
	N_PROBE_ALTS,   /* a: list of N_PROBE_SPEC, num: 1 if optional ("?") */
	N_PROBE_SPEC,   /* str: "tracepoint:io_uring:io_uring_submit_req" or alias/BEGIN/END */
	N_PRIVATE,      /* a: list of N_MAP_REF: maps neither printed nor in the JSON */
	N_LRU,          /* a: list of N_MAP_REF: maps that push out their least recently used entry */
	N_CACHED,       /* a: list of N_MAP_REF: maps with a table of slots in front of their BPF hash */

	/* statements */
	N_BLOCK,        /* a: list of statements */
	N_EXPR_STMT,    /* a: expression (a call: a statement builtin, a script function) */
	N_LOCAL_ASSIGN, /* str: "$x", a: value */
	N_MAP_ASSIGN,   /* a: N_MAP_REF, op: '=' or '+' or '-' (for +=, -=), b: value */
	N_IF,           /* a: cond, b: then, c: else or NULL */
	N_RETURN,
	N_FOR,          /* str: "$i", a: first value, b: end (excluded), c: body */
	N_FOR_MAP,      /* str: "$kv", a: N_MAP_REF (no keys), c: body; sym: its first entry local
	                 * (the key's, then the value's: check.c, check_for_map) */
	N_BREAK,
	N_CONTINUE,
	/* trace constructs, N_SLICE to N_SCHED (is_trace_construct) */
	N_SLICE,        /* op: begin/end, a: name expr (begin), b: track, c: with list */
	N_INSTANT,      /* a: name expr, b: track, c: with list */
	N_COUNTER,      /* a: name expr, b: track, c: with list */
	N_FLOW,         /* op: phase, a: N_KEYREF, b: name expr, c: with list */
	N_SPAN,         /* op: phase, a: N_KEYREF group, b: N_KEYREF item, c: with list; d: name */
	N_TRACK_NAME,   /* a: N_KEYREF group, b: name expr */
	N_SCHED,        /* op: SCHED_SWITCH or SCHED_WAKEUP, c: with list (the thread values) */
	N_WITH,         /* str: arg name, a: value */
	N_KEYREF,       /* str: kind name, a: key expr ("ring[args.ctx]") */

	/* expressions */
	N_INT,          /* num; op 'u': unsigned, a literal above INT64_MAX (num holds its bits) */
	N_STR,          /* str */
	N_IDENT,        /* str: builtin or constant */
	N_LOCAL,        /* str: "$x" */
	N_ARGS,         /* the probe's arguments */
	N_FIELD,        /* a: base, str: member */
	N_INDEX,        /* a: table name (N_IDENT): lookup of key b; else a typed pointer, b: index */
	N_MAP_REF,      /* str: "@name", a: key list (may be NULL) */
	N_CALL,         /* str: function, a: args */
	N_BINOP,        /* op, a, b */
	N_UNOP,         /* op, a */
	N_TERNARY,      /* a ? b : c */
	N_DEFAULT,      /* a ?? b: a if its field exists on the running kernel, else b */
	N_CAST,         /* str: type spelling ("u32", "struct io_kiocb *"), a */
	N_TUPLE,        /* a: the elements: (1, "two") */
	N_TYPE,         /* str: a type as sizeof() and offsetof() take it ("struct task_struct",
	                 * "u32"), or offsetof()'s member name */
	N_KIND_COUNT
};

/* Operators that are not single characters. */
enum {
	OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_AND, OP_OR, OP_SHL, OP_SHR,
	OP_BEGIN, OP_STEP, OP_END, OP_PHASE,
	SCHED_SWITCH, SCHED_WAKEUP,
};

/* Checked types. */
enum type_kind {
	T_NONE,
	T_INT,      /* integer; size and signedness below */
	T_PTR,      /* kernel pointer, btf: pointee type id (0 = void/unknown) */
	T_STR,      /* NUL-terminated text of at most size bytes */
	T_SHOW,     /* display-only text (fmt(), literals in names): made in user space */
	T_VOID,     /* statements, calls without value */
	T_TUPLE,    /* a tuple of values: the compiler's tuples[tuple] */
};

struct type {
	enum type_kind kind;
	uint8_t size;        /* T_INT: 1..8 bytes; T_STR: capacity */
	bool is_signed;
	int32_t btf;         /* T_PTR: pointee BTF id; T_INT from BTF: the member type id */
	bool user;           /* T_PTR: user-space pointer */
	bool bytes;          /* T_STR: raw bytes, not text (a tracepoint's __u8 array: ntop() reads it) */
	bool direct;         /* T_PTR: a BTF pointer the verifier tracks (tp_btf/fentry/fexit
	                      * arguments, fields read through them): fields are plain loads */
	uint8_t show;        /* T_INT: enum ut_display, how user space shows it */
	int16_t table;       /* T_INT with UT_SHOW_TABLE: the table */
	const char *time_format;   /* T_INT with UT_SHOW_TIME: the strftime format (interned) */
	int16_t tuple;       /* T_TUPLE: its elements' types and layout */
};

/* What a name, field or call stands for, as the checker found it: later
 * passes follow this instead of looking names up again. */
enum node_ref {
	REF_NONE,
	REF_BUILTIN,      /* N_IDENT: builtins[sym] (builtins.c) */
	REF_ARG,          /* N_IDENT arg0 or retval, N_FIELD args.NAME: the alternative's args[sym] */
	REF_COMPUTED,     /* N_FIELD args.NAME: the alternative's computed[sym] */
	REF_ABSENT,       /* N_FIELD args.NAME under ?? or exists(): not on this kernel */
	REF_PROBE,        /* N_IDENT probe: the probe's index */
	REF_CONST,        /* N_IDENT: a constant, N_LOCAL: a positional parameter ($1);
	                   * resolved: its value, checked here */
	REF_ENUM,         /* N_IDENT: a kernel enumerator; num: its value */
	REF_LOCAL,        /* N_LOCAL, N_LOCAL_ASSIGN, N_FOR: the alternative's locals[sym] */
	REF_MAP,          /* N_MAP_REF: the program's maps[sym] */
	REF_TABLE,        /* N_INDEX: a look-up in the program's tables[sym] */
	REF_ELEMENT,      /* N_INDEX: element b of the typed pointer a */
	REF_MEMBER,       /* N_FIELD: member str of the struct a points to */
	REF_MEMBER_ADDR,  /* N_FIELD: an embedded struct: the member's address */
	REF_BITFIELD,     /* N_FIELD: a bitfield member */
	REF_FUNCTION,     /* N_CALL: the builtin function calls[sym] (builtins.c) */
	REF_MACRO,        /* N_CALL: a script function; resolved: its body, the arguments in place */
	REF_FUNC_NAME,    /* N_IDENT func: num, its number in the table "func" */
	REF_TUPLE_ITEM,   /* N_FIELD $t.0: element sym of the tuple a */
	REF_STATEMENT,    /* N_CALL as a statement (printf(), delete()): calls[sym] (builtins.c) */
	REF_KIND_COUNT
};

static inline bool is_int(const struct type *t) { return t->kind == T_INT || t->kind == T_NONE; }
/* Conditions take integers and pointers (a pointer is true when not NULL). */
static inline bool is_cond(const struct type *t) { return is_int(t) || t->kind == T_PTR; }

/* node.num of the N_CALL the statement `finding "TAG" ...` is (parser.y,
 * finding_stmt): a: the tag (N_STR), the severity, the message (a fmt()
 * call); b: the key; c: the with list; d: the fix (a fmt() call) or NULL. */
#define FINDING_STATEMENT 1

/* node.num of an N_IMPORT from `#include <path>`, and of the constants it
 * brings (compile.c, load_header). */
#define IMPORT_OF_HEADER 1
#define CONST_FROM_HEADER 1

struct node {
	enum node_kind kind;
	struct ut_loc loc;
	struct node *a, *b, *c, *d;
	struct node *next;
	char *str;
	int64_t num;         /* N_CALL path(): its buffer's slot, diskdev(): the disk, ntop(): the address's
	                      * bytes (checker) */
	int op;
	int depth;           /* expressions: nesting below this node (parser) */
	/* filled by the checker (check.c) */
	struct type type;
	enum node_ref ref;
	int sym;             /* the index ref names */
	struct node *resolved; /* a constant's value or a function call's expansion */
	/* filled by the resources pass (resources.c) */
	int event;           /* a statement that writes a record: its event; else -1 */
	bool stage_full;     /* a record: the stage may be full here, send it first;
	                      * N_FOR: an iteration's records may not fit, each sends first */
	uint32_t stage_bytes; /* N_FOR: the records one iteration stages */
	/* filled by the placement pass (placement.c) */
	uint8_t side;        /* statements: PLACE_* bits, the sides it runs on */
	int capture;         /* an expression the kernel computes for the reader: its
	                      * field in the hit's record; else -1 */
	/* filled by the reuse pass (reuse.c) */
	uint8_t reuse;       /* a map read or an add: enum reuse */
	unsigned reuse_var;  /* the variable it names: ut_pread_<n>, ut_added_<n>;
	                      * an add (N_MAP_ASSIGN +=, -=): its ut_added_<n> */
};

/* A list being built: its first and last nodes, so appending does not walk
 * it (a probe body of 100000 statements parses in linear time). */
struct node_list {
	struct node *head, *tail;
};

/* A trace construct: a statement that writes a record of the trace. */
static inline bool is_trace_construct(const struct node *n) { return n->kind >= N_SLICE && n->kind <= N_SCHED; }

/* Children with names, where the letters say nothing. */
static inline struct node *stmt_call(const struct node *n) { return n->a; }      /* N_EXPR_STMT */
static inline struct node *for_body(const struct node *n) { return n->c->a; }    /* N_FOR, N_FOR_MAP: its statements */
static inline struct node *keyref_key(const struct node *n) { return n->a; }     /* N_KEYREF: the key */
/* N_MAP_ASSIGN of an aggregation (@m = hist(v)): the aggregation's arguments */
static inline struct node *agg_args(const struct node *n) { return n->b->a; }
/* A checked call of a script function: its body, the arguments in place. */
static inline bool calls_function(const struct node *n) { return n->kind == N_CALL && n->ref == REF_MACRO; }

/* The walk over a tree that every pass makes: a visit before a node's
 * children (pre) and after them (post), either NULL.  The children are a,
 * b, c, d in order, each a list; with expansions, then `resolved` (a
 * constant's value, a script function's body).  A visit's answer: */
enum walk_next {
	WALK_INTO,   /* go on, into the node's children (from pre) */
	WALK_PAST,   /* go on past the node's children (from pre) */
	WALK_STOP,   /* end the walk */
};
struct walker {
	bool expansions;
	enum walk_next (*pre)(struct node *n, void *ctx);
	enum walk_next (*post)(struct node *n, void *ctx);
	void *ctx;
};
/* Walks n and what is under it (not the nodes after it); false when a
 * visit stopped the walk. */
bool walk_tree(struct node *n, const struct walker *w);
/* Walks each node of list. */
bool walk_list(struct node *list, const struct walker *w);

struct node *node_new(enum node_kind kind, struct ut_loc loc);
/* Appends item, and the nodes linked after it, to l; NULL adds nothing. */
void node_list_push(struct node_list *l, struct node *item);
unsigned node_list_len(const struct node *list);
/* The first max nodes of list in out (a call's arguments); returns how
 * many the list has. */
int collect_args(struct node *list, struct node **out, int max);
struct node *node_clone(const struct node *n);
/* Whether x and y are written alike: the same kind, operator, number,
 * text, type and what they stand for, their children (and expansions)
 * alike.  by_value: a constant or a script function's call is its value
 * (resolved), whether written so or not. */
bool same_tree(const struct node *x, const struct node *y, bool by_value);
void node_free(struct node *n);
/* Frees what n holds (its children, its expansion, its text), not n. */
void node_free_children(struct node *n);
const char *node_kind_name(enum node_kind k);
/* Whether a checked arithmetic or comparison is signed, as C makes it: a
 * literal above INT64_MAX makes it unsigned (small literals, typed u64
 * too, leave it to the other operand). */
bool binop_signed(const struct node *n);
/* How user space shows a value of type t that a record or map keeps in
 * field: its display kind (pointers in hex), as a ut_value. */
struct ut_value type_shown(const struct type *t, unsigned field);
/* A type as the dumps show it: "u32", "str[16]", "ptr(btf 123)". */
const char *type_text(const struct type *t, char *buf, size_t len);
/* An indented tree, one node per line (--dump ast); typed: with what the
 * checker found (--dump typed). */
void ast_dump(const struct node *n, int depth, bool typed, void *file);

#endif
