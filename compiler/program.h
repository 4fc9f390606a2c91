/* A compiled script: what the compiler hands to the runtime.
 *
 * It holds the generated BPF C, the probes with their alternatives (the
 * runtime picks the first that loads and attaches), and the tables that tell
 * the runtime how to decode each ring-buffer record into trace constructs
 * and how to print maps at exit.  It can be serialized into a .uto file
 * together with the compiled BPF object (compile once, run elsewhere). */
#ifndef UT_PROGRAM_H
#define UT_PROGRAM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ut_loc {
	const char *file;   /* interned; lives as long as the program */
	int line, col;
};

/* Probe kinds: each is a file in probes/ and a row of the table in
 * probes/kinds.c (probes/kind.h).  The numbers are those of compiled
 * scripts (.uto): a new kind goes last. */
enum ut_probe_kind {
	UT_PROBE_TRACEPOINT,  /* classic tracepoint, record fields from the format file */
	UT_PROBE_TP_BTF,      /* BTF-typed raw tracepoint, typed arguments */
	UT_PROBE_RAW_TP,      /* raw tracepoint, untyped u64 arguments */
	UT_PROBE_KPROBE,
	UT_PROBE_KRETPROBE,
	UT_PROBE_FENTRY,
	UT_PROBE_FEXIT,
	UT_PROBE_UPROBE,
	UT_PROBE_URETPROBE,
	UT_PROBE_INTERVAL,    /* periodic, on one CPU */
	UT_PROBE_BEGIN,       /* runs once in user space before tracing starts */
	UT_PROBE_END,         /* runs once at exit */
	UT_PROBE_PROFILE,     /* a timer on every CPU */
	UT_PROBE_SOFTWARE,    /* a kernel software perf event, on every CPU */
	UT_PROBE_HARDWARE,    /* a CPU's hardware perf event, on every CPU */
	UT_PROBE_USDT,        /* a USDT probe of a program or library */
	UT_PROBE_KIND_COUNT
};

/* One alternative of a probe: one BPF program in the object. */
struct ut_alt {
	enum ut_probe_kind kind;
	char *target;      /* tracepoint "cat/name"; function "vfs_read";
			      uprobe "/path/bin:symbol"; interval: period in ns as text;
			      profile "hz:99" or "ns:PERIOD"; software and
			      hardware "EVENT:PERIOD"; usdt
			      "/path/bin:provider:name" */
	char *prog_name;   /* name of the BPF program (function) in the object */
	char *signature;   /* BTF kinds: argument types on the compiling kernel
			      (ut_kernel_signature); the alternative is used only
			      where they are the same.  NULL: no check */
};

/* A probe as written, e.g. `tracepoint:io_uring:io_uring_submit_req |
 * tracepoint:io_uring:io_uring_submit_sqe`.  Alternatives are in order of
 * preference.  An optional probe (`?`) may attach nowhere without failing
 * the script. */
struct ut_probe {
	char *spec;
	struct ut_loc loc;
	bool optional;
	unsigned nalts;
	struct ut_alt *alts;
};

/* Record payload layout.  Every record starts with struct ut_rec_hdr
 * (bpf/ut.h); fields follow at the given offsets. */
enum ut_field_type {
	UT_F_S64, UT_F_U64, UT_F_BOOL, UT_F_PTR,
	UT_F_STR,   /* NUL-padded char array of `size` bytes */
};

struct ut_field {
	enum ut_field_type type;
	uint32_t offset, size;  /* offset from the start of the record */
};

/* How a value is shown.  Values are computed in BPF and stored raw; names
 * (lookup tables, errno names, formats) are made in user space so records
 * stay small: a row each of runtime/decode.c's display kinds. */
enum ut_display {
	UT_SHOW_PLAIN,
	UT_SHOW_HEX,
	UT_SHOW_KOID,      /* a pid or tid */
	UT_SHOW_ERRNO,     /* negative values as "-EAGAIN" */
	UT_SHOW_TABLE,     /* integer looked up in a script table */
	UT_SHOW_DISK,      /* a block device number (major << 20 | minor) as its name */
	UT_SHOW_KSTACK,    /* a kernel stack's id in the ut_stacks map, as its frames */
	UT_SHOW_USTACK,    /* a user stack's id in the ut_stacks map, as its frames */
	UT_SHOW_STRING,    /* a map value that is a string (NUL-terminated) */
	UT_SHOW_TIME,      /* nanoseconds of CLOCK_MONOTONIC (nsecs) as the wall-clock
			      time then, by the strftime format in the value's text */
	UT_SHOW_KSYM,      /* a kernel address as the function holding it */
	UT_SHOW_USYM,      /* a user address's one-frame stack id (ut_usym) as the
			      function holding it */
	UT_SHOW_BUF,       /* a string field holding buf()'s bytes, its first byte their
			      count: printable ones as they are, others as \xNN */
	UT_SHOW_COUNT
};

enum ut_value_kind { UT_VAL_NONE, UT_VAL_FIELD, UT_VAL_FORMAT, UT_VAL_TEXT };

struct ut_value {
	enum ut_value_kind kind;
	unsigned field;           /* UT_VAL_FIELD: index into ut_event.fields */
	enum ut_display display;
	int table;                /* UT_SHOW_TABLE: index into ut_program.tables */
	char *text;               /* UT_VAL_TEXT: the text; UT_VAL_FORMAT: the format;
				     UT_SHOW_TIME: the strftime format */
	unsigned nfmt;            /* UT_VAL_FORMAT: values for each % directive */
	struct ut_value *fmt;
};

/* printf() and fmt() formats: the compiler checks a script's, the loader a
 * .uto's, and the decoder hands them to snprintf.  A directive is "%%", or
 * '%' and flags, width, precision and length characters
 * (UT_FORMAT_FLAGS), then a conversion of UT_FORMAT_CONVERSIONS.  Widths
 * and precisions are at most UT_FORMAT_MAX_WIDTH: a printf line is cut at
 * 511 bytes, and snprintf spends seconds padding a width of 10^9. */
#define UT_FORMAT_FLAGS "-0123456789.l"
#define UT_FORMAT_CONVERSIONS "dixXusrpc"
#define UT_FORMAT_MAX_WIDTH 255

struct ut_directive {
	size_t len;             /* characters from the '%' to the conversion, both included */
	char conv;              /* the character after the flags (0 at the text's end) */
	unsigned long widest;   /* its largest width or precision */
};

/* The directive that the '%' at p starts (other than "%%"). */
struct ut_directive ut_format_directive(const char *p);
/* The next directive of a format from p on ("%%" is text), in *d: its
 * '%', or NULL when there is none. */
const char *ut_format_next(const char *p, struct ut_directive *d);

struct ut_named_value {
	char *name;
	struct ut_value value;
};

/* What an emitting statement does with its record. */
enum ut_event_op {
	UT_EV_SLICE_BEGIN, UT_EV_SLICE_END, UT_EV_INSTANT, UT_EV_COUNTER,
	UT_EV_FLOW_BEGIN, UT_EV_FLOW_STEP, UT_EV_FLOW_END,
	UT_EV_SPAN_BEGIN, UT_EV_SPAN_PHASE, UT_EV_SPAN_END,
	UT_EV_GROUP_NAME,   /* names a group track */
	UT_EV_PRINT,        /* printf: text to stdout */
	UT_EV_EXIT,         /* exit(): stop tracing */
	UT_EV_CLEAR,        /* clear(@map): name is the map's name */
	UT_EV_HIT,          /* a probe hit's captured values: the reader runs the
			       hit's user statements over them (ut_event.body) */
	UT_EV_SNAPSHOT,     /* snapshot() the reader runs: write the flight recorder's window */
	UT_EV_PRINT_MAP,    /* print(@map, top, div): name is the map's name; fields
			       0 and 1 are top (0: all) and div (0, 1: none) */
	UT_EV_ZERO,         /* zero(@map): name is the map's name */
	UT_EV_TIME,         /* time(fmt): the record's wall-clock time; name is
			       the strftime format */
	UT_EV_JOIN,         /* join(argv, sep): name is sep; field 0 is how many
			       strings follow it, fields 1.. the strings */
	UT_EV_SCHED_SWITCH, /* a context switch (engine/engine.h, ut_sched_switch) */
	UT_EV_SCHED_WAKEUP, /* a thread woken (ut_sched_wakeup) */
	UT_EV_CAT,          /* cat(path, ...): the file's contents to stdout; name is
			       the path, a format as printf's */
	UT_EV_FINDING,      /* a finding (below): name is its tag */
	UT_EV_OP_COUNT
};

/* A finding's record (UT_EV_FINDING) has its parts as its args, in this
 * order: "severity" (a number: 0 info, 1 warn, 2 crit), "message" and
 * "fix" (texts, formats), then its key's values each named
 * UT_FINDING_KEY, then the evidence (the with values, by name).  Its
 * identity is its tag and its key's values as text. */
enum ut_finding_arg { UT_FINDING_SEVERITY, UT_FINDING_MESSAGE, UT_FINDING_FIX, UT_FINDING_PARTS };
#define UT_FINDING_KEY "[]"   /* no with name can be it */
enum ut_severity { UT_INFO, UT_WARN, UT_CRIT, UT_SEVERITIES };
/* "info", "warn", "crit": the script's constants, the summary's words */
extern const char *const ut_severity_names[UT_SEVERITIES];

/* Scheduling events (runtime/decode.c) find their values by the names of
 * their args (ut_event.args, each a UT_VAL_FIELD of the record; the
 * display is not used):
 *   UT_EV_SCHED_SWITCH: "prev_pid", "prev_tid", "prev_state" (Linux
 *     task_struct.__state bits, as tp_btf:sched_switch's prev_state;
 *     not the classic tracepoint's encoding), "next_pid", "next_tid";
 *     optional "preempt" (not 0: prev was preempted and stays runnable,
 *     whatever its state), "prev_comm" and "next_comm" (string fields:
 *     names for threads the trace has not seen), "cpu" (else the
 *     header's: sched_switch runs on the CPU that switches).
 *   UT_EV_SCHED_WAKEUP: "pid", "tid" of the woken thread; optional
 *     "comm", and "cpu": the CPU it is woken onto (the woken task's
 *     CPU, the classic sched_waking's target_cpu; else the header's,
 *     the waker's CPU).
 * A value that is missing reads 0; tid 0 is a CPU's idle task.  The
 * header's pid and tid are not used (sched_switch runs as prev; the
 * woken thread is not the one running).  A switch recorded because one
 * of its threads is traced may give the other as it is: the CPU's track
 * then shows what ran instead (the engine names it from its comm).
 * Any event on a thread's own track ends its D sleep (it runs): records
 * a sched_switch hit writes on the current thread (prev) go before the
 * switch's own record, or prev's D slice ends where it begins. */

/* ---- The user side of a probe (split execution) ----
 *
 * The compiler places each statement of a probe body in the kernel (BPF C)
 * or in the reader (the user side).  The kernel part ends each hit with a
 * UT_EV_HIT record: the header (ts, pid, tid, cpu) and the values only the
 * kernel could compute (argument and field reads, strings, stacks, the
 * maps kernel code reads), one record field each.  The reader, in time
 * order with every other record, runs the hit's user statements over them:
 * map updates and reads, aggregations, locals, control flow, and the trace
 * constructs and printf, which fill a record laid out like the kernel's
 * (a struct ut_event of their own) and go through the same decoding.
 *
 * Expressions and statements are plain data in two arrays of the program;
 * children are indexes.  Every choice C would make from types (signed or
 * unsigned division, comparison and shift; narrowing casts) is made by the
 * compiler and written into the op, so evaluation needs no types beyond an
 * expression's kind (integer or string) and a string's capacity.
 *
 * Order, so that a damaged program cannot loop (compiler/program_io.c
 * checks it, and the depths, when loading): an expression's operands and
 * keys come before it in uexprs; a statement's bodies come after it in
 * ustmts, each body a run of statements reserved before they are filled,
 * and a statement in one body at most (hit events may share theirs).
 * User statements touch only user-side maps.  Integers are 64-bit and
 * wrap; x / 0 is 0 and x % 0 is x, and shift counts are taken modulo 64,
 * as in BPF.  Strings are NUL-padded char arrays: copied into a smaller
 * one they are cut, into a larger one padded with NULs.  --sample decides
 * a whole flow on one side: the reader samples every point of a flow kind
 * it emits points of (and the spans keyed by it), the kernel's too, and
 * the kernel samples the other kinds. */

#define UT_UEXPR_MAX_DEPTH 128   /* operands nested in an expression */
#define UT_USTMT_MAX_DEPTH 32    /* bodies nested in a hit's statements */
/* Statements and loop turns one hit may run: a damaged program's loop
 * ends there (the hit counts as malformed); the compiler keeps a probe
 * that could run more in the kernel. */
#define UT_HIT_MAX_STEPS (1u << 20)

enum ut_uexpr_op {
	UT_UX_INT,          /* i */
	UT_UX_STR,          /* text (a literal) */
	UT_UX_CAPTURED,     /* field: a field of the hit record */
	UT_UX_HEADER,       /* which: enum ut_uheader of the hit record */
	UT_UX_LOCAL,        /* slot */
	UT_UX_MAP,          /* map[keys]: the value, or 0 / "" where absent */
	UT_UX_NEG, UT_UX_NOT, UT_UX_BITNOT,      /* a */
	UT_UX_ADD, UT_UX_SUB, UT_UX_MUL,         /* a, b: 64-bit, wrapping */
	UT_UX_UDIV, UT_UX_UMOD, UT_UX_SDIV, UT_UX_SMOD,   /* x / 0 is 0, x % 0 is x */
	UT_UX_AND, UT_UX_OR, UT_UX_XOR, UT_UX_SHL, UT_UX_USHR, UT_UX_SSHR,
	UT_UX_EQ, UT_UX_NE, UT_UX_ULT, UT_UX_ULE, UT_UX_SLT, UT_UX_SLE,
	UT_UX_STREQ, UT_UX_STRNE,                /* a, b strings, compared up to n bytes */
	UT_UX_LAND, UT_UX_LOR,                   /* lazy: b only when needed */
	UT_UX_COND,                              /* a ? b : c, lazy */
	UT_UX_TRUNC,        /* a cut to n bytes (1, 2, 4), sign-extended when sgn */
	UT_UX_BOOL,         /* !!a */
	UT_UX_STR_INT,      /* the first n bytes of string a, little-endian */
	UT_UX_PERCENTILE,   /* map[keys] (a histogram's, without its bucket): the value of
			       percentile i (in parts per million) of its values */
	UT_UX_ENUM,         /* i: the value of enums[i] on the running kernel */
	UT_UX_OP_COUNT
};

enum ut_uheader { UT_UH_TS, UT_UH_PID, UT_UH_TID, UT_UH_CPU };

struct ut_uexpr {
	enum ut_uexpr_op op;
	bool is_str;         /* the value is a string (else a 64-bit integer) */
	bool sgn;            /* UT_UX_TRUNC: sign-extend */
	uint16_t n;          /* string capacity; TRUNC/STR_INT/STREQ bytes */
	unsigned a, b, c;    /* operand expressions */
	int64_t i;           /* UT_UX_INT; UT_UX_ENUM: its enums[] index */
	char *text;          /* UT_UX_STR */
	unsigned field;      /* UT_UX_CAPTURED */
	unsigned which;      /* UT_UX_HEADER */
	unsigned slot;       /* UT_UX_LOCAL */
	unsigned map;        /* UT_UX_MAP, UT_UX_PERCENTILE: index into ut_program.maps */
	unsigned keys, nkeys;   /* UT_UX_MAP, UT_UX_PERCENTILE: expressions ut_program.ukeys[keys..+nkeys] */
};

enum ut_ustmt_op {
	UT_US_LOCAL,        /* slot = a */
	UT_US_MAP_SET,      /* map[keys] = a */
	UT_US_MAP_ADD,      /* map[keys] += a */
	UT_US_AGG,          /* map[keys] takes a (count: no a) as the map's ut_agg */
	UT_US_DELETE,       /* delete(map[keys]) */
	UT_US_IF,           /* if (a) body else body2 */
	UT_US_FOR,          /* for (slot : a..b) body: slot takes a, a + 1, ..., b - 1
			       (signed, as C's for over the local); break and
			       continue inside */
	UT_US_BREAK, UT_US_CONTINUE,
	UT_US_RETURN,       /* the rest of the hit's user statements are skipped */
	UT_US_EMIT,         /* the record of event (not a UT_EV_HIT): its fields from
			       ut_program.ukeys[keys..+nkeys] in field order, its
			       header the hit's */
	UT_US_FOR_MAP,      /* for each entry of map (a copy taken first, whichever side
			       keeps the map): the locals from slot on take its key's
			       values, then its value (an aggregation's number); body */
	UT_US_OP_COUNT
};

struct ut_ustmt {
	enum ut_ustmt_op op;
	struct ut_loc loc;
	unsigned a, b;              /* expressions */
	unsigned slot;
	unsigned map;
	unsigned keys, nkeys;       /* map keys, or an EMIT's field values */
	unsigned event;             /* UT_US_EMIT */
	unsigned body, nbody;       /* statements ut_program.ustmts[body..+nbody] */
	unsigned body2, nbody2;     /* UT_US_IF: the else branch */
};

/* A user-side local: an integer, or a string of capacity size. */
struct ut_ulocal {
	bool is_str;
	uint16_t size;
};

#define UT_ULOCALS_MAX 1024        /* locals of a hit */
#define UT_ULOCAL_MAX_BYTES 4096   /* a string local's capacity, as a record field's */

/* A local's string capacity (an integer's 8 bytes read as a string). */
static inline unsigned ut_ulocal_capacity(const struct ut_ulocal *l)
{
	return l->is_str ? l->size : 8;
}

/* The bytes a local takes: at least an integer's, a multiple of 8. */
static inline unsigned ut_ulocal_bytes(const struct ut_ulocal *l)
{
	return ut_ulocal_capacity(l) > 8 ? (ut_ulocal_capacity(l) + 7u) & ~7u : 8;
}

/* The scheduling values, in the order of ut_event.sched_field; their names
 * as the args of scheduling events give them. */
enum ut_sched_value {
	UT_SV_CPU, UT_SV_PID, UT_SV_TID, UT_SV_COMM, UT_SV_PREV_PID, UT_SV_PREV_TID, UT_SV_PREV_STATE,
	UT_SV_PREV_COMM, UT_SV_NEXT_PID, UT_SV_NEXT_TID, UT_SV_NEXT_COMM, UT_SV_PREEMPT, UT_SV_COUNT
};
extern const char *const ut_sched_value_names[UT_SV_COUNT];

struct ut_event {
	enum ut_event_op op;
	struct ut_loc loc;
	uint32_t size;               /* record size including the header: a multiple of 8 */
	unsigned nfields;
	struct ut_field *fields;
	char *category;              /* the probe as written, for the trace */
	struct ut_value name;        /* slice/instant/flow/span name; group name; print text */
	int group;                   /* -1: the event's thread; else index into groups */
	struct ut_value group_key;
	int flow;                    /* flows: index into flows */
	struct ut_value key;         /* flow key or span key */
	unsigned nargs;
	struct ut_named_value *args; /* with-arguments; counter values */
	/* UT_EV_HIT: the hit's user statements ustmts[body..+nbody] and
	 * their locals */
	unsigned body, nbody;
	unsigned nlocals;
	struct ut_ulocal *locals;
	/* scheduling events: 1 + the index in fields of the field the arg
	 * naming each enum ut_sched_value holds, 0 where no arg names it or
	 * its value is not a field (ut_event_index_sched) */
	uint16_t sched_field[UT_SV_COUNT];
};

/* Whether a hit of ev runs statements in the reader. */
static inline bool ut_event_has_user_side(const struct ut_event *ev)
{
	return ev->op == UT_EV_HIT && ev->nbody;
}

/* A lookup table declared in a script: integer -> name. */
struct ut_table_entry { int64_t key; char *name; };
struct ut_table {
	char *name;
	unsigned nentries;
	struct ut_table_entry *entries;
};

/* Aggregation maps, printed at exit: a row each of ut_aggs[]
 * (compiler/aggregations.c). */
enum ut_agg {
	UT_AGG_COUNT, UT_AGG_SUM, UT_AGG_AVG, UT_AGG_MIN, UT_AGG_MAX,
	UT_AGG_HIST, UT_AGG_LHIST, UT_AGG_LAST /* plain assignment */,
	UT_AGG_STATS,       /* count, average and total */
	UT_AGG_KINDS
};

/* Bounds of a map's key and value (string keys and values are at most
 * 256 bytes). */
#define UT_MAP_KEY_MAX 1024
#define UT_MAP_VALUE_MAX 1024

struct ut_map {
	char *name;                 /* "@lat" */
	char *bpf_name;             /* map name in the object */
	enum ut_agg agg;
	int64_t lhist_min, lhist_max, lhist_step;
	unsigned nkeys;
	struct ut_field *keys;      /* key layout (offsets inside the key struct) */
	struct ut_value *key_show;  /* how each key is shown (field = key index) */
	/* each key's name, from the expression that first gave it ($op: "op",
	 * args.ctx: "ctx"); "" when it has none (metrics' labels, the live
	 * view's columns) */
	char **key_names;
	uint32_t key_size, value_size;
	struct ut_value value_show; /* plain assignments: how the value is shown */
	/* a value that is a tuple: its elements' layout in the value, and how
	 * each is shown (field = the element) */
	unsigned ntuple;
	struct ut_field *tuple_fields;
	struct ut_value *tuple_show;
	/* in the reader (split execution): no BPF map, bpf_name is NULL; keys
	 * and values keep the same layout, bounded to as many entries */
	bool user_side;
	bool is_private;            /* the script's bookkeeping (private @m;): not in the summary */
	/* lru @m;: a new key past the bound pushes out the least recently used
	 * entry (BPF_MAP_TYPE_LRU_HASH; in the reader, runtime/user_maps.c) */
	bool is_lru;
};

/* A plain-assignment map whose values are strings. */
static inline bool ut_map_holds_string(const struct ut_map *m)
{
	return m->agg == UT_AGG_LAST && m->value_show.display == UT_SHOW_STRING;
}

/* The map's key is its integer keys side by side, 8 bytes each, then at
 * most 8 bytes more (a histogram's bucket): a key is then built with no
 * field layout to follow and no zeroing of what its keys overwrite (most
 * maps: a key is an address, a number or two). */
static inline bool ut_map_whole_int_keys(const struct ut_map *m)
{
	for (unsigned k = 0; k < m->nkeys; k++)
		if (m->keys[k].type == UT_F_STR || m->keys[k].offset != 8 * k)
			return false;
	return m->key_size == 8 * m->nkeys || m->key_size == 8 * m->nkeys + 8;
}

/* A disk the script names with diskdev("vda"): its device number is looked
 * up when the script is loaded, on the machine that runs it, and set in the
 * BPF object's read-only variable ut_disk_<index>. */
struct ut_disk_ref {
	char *name;
	struct ut_loc loc;
};

/* A kernel enumerator the script names (REQ_F_FORCE_ASYNC_BIT): its value
 * moves between kernels, so it is looked up again when the script is
 * loaded, on the kernel that runs it, and set in the BPF object's
 * read-only variable ut_enum_<index>; the reader reads value.  One entry
 * per name and use. */
enum ut_enum_use {
	UT_ENUM_VALUE,       /* NAME: the kernel must have it */
	UT_ENUM_OR_DEFAULT,  /* NAME ?? fallback */
	UT_ENUM_EXISTS,      /* exists(NAME): 1 or 0 */
	UT_ENUM_USES
};

struct ut_enum_ref {
	char *name;
	struct ut_loc loc;          /* its first use */
	unsigned use;               /* enum ut_enum_use */
	int64_t fallback;           /* UT_ENUM_OR_DEFAULT: where the kernel lacks it */
	int64_t value;              /* on the running kernel, set when loaded */
};

struct ut_program {
	char *bpf_c;                /* generated BPF C */
	unsigned nprobes;
	struct ut_probe *probes;
	unsigned nevents;
	struct ut_event *events;    /* record header `event` field indexes this */
	unsigned ngroups;
	char **groups;              /* group kinds: "ring", "disk" */
	unsigned nflows;
	char **flows;               /* flow kinds: "request" */
	unsigned ntables;
	struct ut_table *tables;
	unsigned nmaps;
	struct ut_map *maps;
	char **strings;             /* interned strings (file names) */
	unsigned nstrings;
	unsigned ndisks;
	struct ut_disk_ref *disks;
	unsigned nenums;
	struct ut_enum_ref *enums;
	/* the user side (see above) */
	unsigned nuexprs, nustmts, nukeys;
	struct ut_uexpr *uexprs;
	struct ut_ustmt *ustmts;
	unsigned *ukeys;            /* lists of expressions: map keys, record fields */
};

void ut_program_free(struct ut_program *p);

/* Whether p runs statements in the reader (a hit event has some). */
static inline bool ut_program_has_user_side(const struct ut_program *p)
{
	for (unsigned e = 0; e < p->nevents; e++)
		if (ut_event_has_user_side(&p->events[e]))
			return true;
	return false;
}

/* Appends to the user side's tables (the compiler's emission of it, and
 * tests): the index of the first item added. */
unsigned ut_program_add_uexpr(struct ut_program *p, const struct ut_uexpr *e);
unsigned ut_program_add_ustmts(struct ut_program *p, const struct ut_ustmt *s, unsigned n);
unsigned ut_program_add_ukeys(struct ut_program *p, const unsigned *exprs, unsigned n);
/* Finds the field of the arg naming each scheduling value of a
 * scheduling event, once (ut_compile and ut_program_load do it for every
 * event): a record is decoded without comparing names or going through
 * its args. */
void ut_event_index_sched(struct ut_event *ev);
/* The operand expressions of e into ops (a map's keys are not operands):
 * their number. */
unsigned ut_uexpr_operands(const struct ut_uexpr *e, unsigned ops[3]);
/* Whether e has a map's keys (ut_program.ukeys[keys..+nkeys]). */
static inline bool ut_uexpr_has_keys(const struct ut_uexpr *e)
{
	return e->op == UT_UX_MAP || e->op == UT_UX_PERCENTILE;
}

#endif
