/* The compiler's passes (docs/architecture.md): the state they share and
 * their entry points, for compiler/ and the probe kinds' hooks (probes/);
 * the runtime calls compiler/compiler.h. */
#ifndef UT_PASSES_H
#define UT_PASSES_H
#include "base/alloc.h"
#include "base/strbuf.h"
#include "compiler/ast.h"
#include "compiler/compiler.h"
#include "compiler/diag.h"
#include "kernel/kernel.h"
#include "probes/kind.h"

/* An argument of the probe being compiled: its name, type and the C
 * expression that reads it inside the generated program. */
struct probe_arg {
	char name[64];
	struct type type;
	char *cexpr;
	char *exists_cexpr;   /* C expression true when the field exists on the running kernel */
};

/* Why something is in the kernel (placement.c): what needs it there, and
 * where.  why NULL: it is in the reader. */
struct placed {
	const char *why;
	struct ut_loc at;
};

/* Where the kernel writes a captured value (placement.c). */
enum captured {
	CAPTURED_HERE,      /* where the statement that reads it is */
	CAPTURED_FIRST,     /* as the record is reserved: cheap and the same all through a hit */
	CAPTURED_AT_SET,    /* a kernel local: after each assignment (local.mirror) */
};

/* What the kernel's C makes of a map read (node.reuse, reuse.c): a value
 * it holds already, or a look-up. */
enum reuse {
	REUSE_NONE,         /* a look-up */
	REUSE_OFFERED,      /* the predicate's look-up, which the body may take (ut_pread_<n>) */
	REUSE_KEPT,         /* the same, which the body takes: kept in ut_pread_<n> */
	REUSE_PREDICATE,    /* the body's: the predicate's value ut_pread_<n>, where it looked up */
	REUSE_ADDED,        /* right after an add of the same map and key: its value ut_added_<n> */
	REUSE_ADD,          /* N_MAP_ASSIGN: an add in the kernel, its value left in ut_added_<n> */
};

/* The sides a statement runs on (node.side, placement.c). */
enum {
	PLACE_KERNEL = 1,     /* kernel work, or a loop or if the kernel keeps */
	PLACE_READER = 2,     /* the reader's work (runtime/user_side.c) */
	PLACE_CAPTURES = 4,   /* the kernel captures values for the reader there */
};

/* One alternative of a probe: one BPF program.  The probe kind fills the
 * first part (resolve), the passes the rest. */
struct alt_ctx {
	const struct probe_kind_def *def;
	struct ut_probe *probe;
	unsigned probe_index;
	struct ut_alt *alt;
	char *target;               /* normalised target */
	struct probe_arg *args;
	unsigned nargs;
	struct strbuf prelude;      /* struct definitions this probe needs */
	char record_struct[192];    /* tracepoints: our copy of the record struct */
	const char *spec;           /* the alternative as written */
	struct ut_loc loc;          /* where */
	bool idle;                  /* nothing left to do once the trace is compiled out */
	bool records_in_trace;      /* with a trace, it would send records (placement.c) */
	struct node *declared;      /* declared fields for absent tracepoints */
	struct node *computed;      /* arguments computed from the alternative's own */
	bool uses_parm6;            /* an argument reads PT_REGS_PARM6 (gen_stmt.c defines it for old libbpf) */
	const struct node *too_deep_at;   /* generation: where its C nests past clang's limit (gen.h) */
	bool unfiltered;            /* -p, -c and --comm do not filter its hits */
	/* check.c: the alternative's own copies of the probe's predicate (or
	 * NULL) and block, typed; its locals; the computed arguments it uses */
	struct node *pred, *block;
	struct local *locals;
	unsigned nlocals;
	struct computed_arg *computed_args;
	unsigned ncomputed_args;
	unsigned path_calls;        /* path() buffers it takes */
	/* resources.c: its records, staged per hit and sent as one sample */
	struct stage {
		uint32_t bytes;         /* what one hit may stage (ut_batch_cap) */
		uint32_t record_max;    /* its largest record */
		bool reloads;           /* a loop passes ut_off through the stage (gen_stmt.c, gen_for) */
		uint32_t off_mask;      /* with reloads: ut_off's bound */
	} stage;
	/* placement.c: where its statements run */
	struct placed all_kernel;   /* why every statement runs in the kernel (why NULL: not so) */
	unsigned kernel_until;      /* preorder position of its last kernel work: a return
				       before it returns in the kernel too */
	int hit_event;              /* its UT_EV_HIT event: the reader runs its other
				       statements over the values it captures; -1: none */
	/* what of the reader's alone (a loop over a map, percentile()) the
	 * kernel would have to run: where, what it is ("for", a loop's entry
	 * "$kv.1", "percentile"), and why (why NULL: nothing); the pass
	 * reports it (placement.c, reader_only_errors) */
	struct placed reader_only;
	struct ut_loc reader_only_at;
	const char *reader_only_what;
	struct node **captures;     /* the expressions the kernel captures, in field order */
	enum captured *captured;    /* per capture: where the kernel writes it */
	unsigned ncaptures;
	/* reuse.c: the predicate's reads the body may take (ut_pread_<n>),
	 * which it takes, and the adds' values (ut_added_<n>) */
	unsigned npred_reads, nadded;
	bool *pred_kept;
};

/* A local variable of the alternative.  All are declared at the top of its
 * C function; a for loop's variable is in scope only in the loop's body. */
struct local {
	char *name;
	struct type type;
	struct ut_loc loc;          /* first assigned, or its first loop */
	bool loop_var;              /* a for loop's variable: the loop alone sets it */
	/* an entry of a for loop over a map (its N_FOR_MAP; NULL: none): its
	 * key's entry_key-th value, or its value (-1) */
	const struct node *entry_of;
	int entry_key;
	struct placed kernel;       /* placement.c: kept in the kernel, or in the reader */
	unsigned slot;              /* in the reader: its slot in the hit's locals */
	/* a kernel local the reader reads: its copy in the hit's record, set
	 * with it (-1: none), possible when every assignment comes before
	 * every read of the reader's (preorder positions of statements) */
	int mirror;
	unsigned last_set, first_read;
};

/* A computed argument (`NAME = expr` in the spec) the body uses: its
 * expression, checked for the alternative, is evaluated once per hit. */
struct computed_arg {
	const struct node *field;   /* the spec's N_WITH */
	struct node *value;         /* a typed copy of its expression */
};

/* A tuple type: its elements' types and where each is in its C struct
 * (struct ut_tuple_INDEX, gen.c): 8 bytes a number, strings padded to 8. */
#define TUPLE_MAX 8
#define MEMO_MAPS_MAX 8     /* maps whose reads the kernel remembers (placement.c) */
struct tuple_info {
	unsigned n;
	struct type el[TUPLE_MAX];
	uint32_t offset[TUPLE_MAX], size;
};

enum map_kind { MAP_UNSET, MAP_AGG, MAP_VALUE };

/* for loops: the verifier walks every iteration of a loop, so a loop's
 * iterations (times those of the loops around it) are bounded when
 * compiled.  Measured on 6.18: a body with a look-up, a delete, a flow
 * end, an instant and a count verifies up to about 1600 iterations (then
 * "the sequence of 8193 jumps is too complex"); 400k instructions at 1024.  A loop that writes records refills the stage when it is full
 * (resources.c); its share of the stage is at most UT_LOOP_STAGE_BYTES, or
 * one iteration's records if more. */
#define UT_MAX_LOOP_DEPTH 8
#define UT_MAX_LOOP_ITERATIONS 1024
#define UT_LOOP_STAGE_BYTES 2048

/* How a map is kept in BPF (resources.c). */
enum map_storage {
	MAP_SHARED_HASH,   /* values the script reads back: one hash for all CPUs */
	MAP_PERCPU_HASH,   /* aggregations: per CPU, user space combines them */
	MAP_PERCPU_SLOT,   /* a keyless aggregation that zeros mean unset in: one array slot */
};

struct map_info {
	char *name;
	struct ut_loc loc;          /* first use */
	enum ut_agg agg;
	enum map_kind kind;
	unsigned nkeys;
	struct type key_types[8];
	char *key_names[8];         /* from the expression that first gave each key (check_map_key) */
	struct type value_type;
	int64_t lhist_min, lhist_max, lhist_step;
	bool read_in_bpf;
	struct ut_loc read_loc;     /* first read */
	bool assigned;
	bool deleted_in_bpf;        /* delete() in a probe: a keyless map stays a hash */
	bool is_private;            /* declared private: neither printed nor in the JSON */
	bool is_lru;                /* declared lru: a new key past the bound pushes out the least recently used */
	bool cached;                /* declared cached: in the kernel, a table of slots in front of its hash
				       (bpf/ut.h, ut_front_read) */
	enum map_storage storage;   /* resources.c */
	struct placed kernel;       /* placement.c: a BPF map, or kept by the reader */
	int memo;                   /* placement.c: its slot in bpf/ut.h's remembered reads, or -1 */
	bool front;                 /* placement.c: cached and in the kernel: its slots are m_<n>_front */
};

/* The compiler's program-wide state, shared by the passes. */
struct compiler {
	struct diag *d;
	struct ut_kernel *k;
	const struct ut_compile_opts *opts;
	struct ut_program *prog;
	/* declarations by name */
	struct node **consts, **fns, **aliases;
	unsigned nconsts, nfns, naliases;
	struct map_info *maps;
	unsigned nmaps;
	/* the probes' alternatives, checked, in the script's order */
	struct alt_ctx **alts;
	unsigned nalts;
	unsigned long macro_nodes;  /* nodes made by function expansion (bounded) */
	bool uses_stacks;           /* kstack or ustack: gen.c writes ut_stack() and its maps */
	struct tuple_info *tuples;  /* the tuple types, each once */
	unsigned ntuples;
	/* what the generated C asks of bpf/ut.h (resources.c) */
	uint32_t max_stage_bytes;   /* the largest stage: UT_BATCH_BYTES */
	unsigned path_slots;        /* the most path() buffers of a body: UT_PATH_SLOTS */
	bool uses_scratch;          /* path() or string map values: ut.h's per-CPU buffers */
	unsigned memo_maps;         /* maps whose reads are remembered (placement.c) */
	bool uses_iter_loops;       /* its loops may ask the numbers iterator for turns: UT_ITER_LOOPS */
	bool *flow_in_reader;       /* per flow kind (prog->flows): the reader emits some of
				       its points, and samples them all (placement.c) */
	unsigned compiled_out;      /* opts->no_trace: trace statements compiled out (placement.c) */
	unsigned dead_writes;       /* ... then writes of private maps nothing reads (placement.c) */
	unsigned probes_idle;       /* ... probes left out with nothing else to do */
	char **loaded_files;        /* imports already loaded */
	unsigned nloaded;
	unsigned in_header;         /* loading the module of an #include (load_header) */
	char **texts;               /* source texts (kept for diagnostics) */
	unsigned ntexts;
};

const char *intern(struct compiler *c, const char *s);
struct node *find_decl(struct node **v, unsigned n, const char *name);

/* The passes over one alternative, after the probe kind resolved it.
 * check.c: types and symbols on a's copy of the body; every user error. */
void check_alternative(struct compiler *c, struct alt_ctx *a);
/* resources.c: records (the program's events), stages and map layouts of
 * every alternative, in order. */
void resources(struct compiler *c);
/* The buffer bytes a stage needs (a loop's reloads ask for more). */
uint32_t stage_buffer_bytes(const struct stage *s);
/* What a walk over a record's values calls for each: key, a flow or span
 * key. */
typedef void (*field_each)(void *ctx, struct node *value, bool key);
/* Calls each(ctx, value, key) for each value that fills a field of record
 * statement n (a trace construct, or a statement builtin that writes a
 * record), in field order; key: a flow or span key (a u64 the kernel
 * samples on). */
void record_fields(struct node *n, field_each each, void *ctx);
/* placement.c, for opts->no_trace: the trace constructs of a's body are
 * compiled out, and the assignments of locals nothing reads then; true
 * when nothing is left for it to do (its probe is left out). */
bool compile_out_trace(struct compiler *c, struct alt_ctx *a);
/* placement.c, for opts->no_trace once every probe is checked: the writes
 * of private maps that nothing reads any more (they fed only the trace's
 * values, as @enter_completed a slice's) are compiled out too, and the
 * locals they alone read. */
void compile_out_dead_maps(struct compiler *c);
/* placement.c: the side of each statement, local and map; the hit
 * records and their captured values.  Its only user errors: what the
 * reader alone computes (a loop over a map, percentile()) where the kernel
 * would have to run it. */
void placement(struct compiler *c);
/* -v: how many probes the reader runs a part of, which maps it keeps and
 * why the kernel keeps the others. */
void placement_report(const struct compiler *c, FILE *out);
/* Whether condition n has a value known when compiling (constants, and
 * && and || that one operand decides): *v. */
bool cond_folds(struct compiler *c, const struct node *n, int64_t *v);
/* reuse.c: the map reads whose value the kernel's C holds already. */
void reuse(struct compiler *c);
/* gen_user.c: the reader's statements of the alternatives placement split. */
void gen_user_side(struct compiler *c);
/* gen.c: the program's BPF C.  No user errors. */
char *gen_program(struct compiler *c);

/* --dump typed, resources and placement (dump.c). */
void dump_typed(struct compiler *c, FILE *out);
void dump_resources(struct compiler *c, FILE *out);
void dump_placement(struct compiler *c, FILE *out);
void dump_reuse(struct compiler *c, FILE *out);

#endif
