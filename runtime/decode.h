/* Decodes ring-buffer records with the compiler's layout tables and feeds
 * the trace constructs they stand for to the engine. */
#ifndef UT_DECODE_H
#define UT_DECODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/program.h"
#include "fxt/fxt.h"

struct ut_engine;
struct ut_recorder;
struct ut_spool;
struct ut_user_side;

struct ut_findings;

struct ut_decoder {
	const struct ut_program *prog;
	struct ut_engine *engine;     /* NULL: no trace file (--summary-only) */
	struct ut_recorder *recorder; /* --ring: trace records go here, not to engine */
	struct ut_spool *spool;       /* trace records go here, to a thread that owns engine */
	FILE *print_out;              /* printf() output */
	uint64_t first_ts, last_ts;
	uint64_t records, malformed;
	uint64_t lost_late;           /* records dropped for reaching the reader late */
	bool exit_requested;          /* the script called exit() */
	uint64_t exit_ts;             /* ... at this time: later records are not read (0: not called) */
	volatile uint64_t *shared_exit_ts; /* exit()'s time shared with the kernel (bpf/ut.h, ut_requests), or NULL */
	uint64_t snapshot_ts;         /* the reader ran snapshot() then (0: not since the last look) */
	/* the findings made (UT_EV_FINDING; NULL: each is marked as if it
	 * were the first); with snapshot_findings, the first of a tag and key
	 * at snapshot_on or above takes a snapshot (--snapshot-on) as
	 * snapshot() does */
	struct ut_findings *findings;
	bool snapshot_findings;
	enum ut_severity snapshot_on;
	/* clear(@map), zero(@map), print(@map, top, div): done by the caller,
	 * which owns the maps */
	void (*clear_map)(void *ctx, const char *name);
	void (*zero_map)(void *ctx, const char *name);
	void (*print_map)(void *ctx, const char *name, uint64_t top, uint64_t div);
	void *maps_ctx;
	/* runs UT_EV_HIT records (runtime/user_side.h), whose statements
	 * emit the trace's records */
	struct ut_user_side *user_side;
};

/* Declares the program's names (categories, literal and table names,
 * argument names, kinds) stable to the engine, which then finds them by
 * address: they are what almost every record carries.  Once per engine,
 * before its first record. */
void ut_decode_declare_names(const struct ut_program *p, struct ut_engine *e);

/* Length of the record at rec, avail bytes being left in its sample; 0
 * (counted as malformed) for an unknown event or a short record. */
size_t ut_decode_record_len(struct ut_decoder *d, const void *rec, size_t avail);

/* Handles one record; malformed records (unknown event, short) are counted
 * and skipped, never trusted, and records later than an exit() are not
 * read.  What it means for the maps, printf() and exit() happens now; a
 * record of the trace goes to the engine, or to the flight recorder. */
void ut_decode_record(struct ut_decoder *d, const void *rec, size_t size);

/* Whether the script called exit(), in the reader or in the kernel
 * (shared_exit_ts). */
bool ut_decode_exited(struct ut_decoder *d);

/* The records from here on are read whatever exit() said: END probes run
 * after it. */
void ut_decode_read_end(struct ut_decoder *d);

/* A record's args as trace arguments: numbers where they are numbers
 * (queries in Perfetto want them), text where the script gave names,
 * made in text[]. */
#define UT_DECODED_ARGS_MAX 32
struct ut_decoded_args {
	struct ut_arg args[UT_DECODED_ARGS_MAX];
	char text[UT_DECODED_ARGS_MAX][256];
	unsigned n;
};
/* The severity of a finding record (UT_EV_FINDING), in range. */
enum ut_severity ut_finding_severity(const struct ut_event *ev, const void *rec, size_t size);
/* Appends arg i of ev (the record rec's event, holding all its fields: see
 * ut_decode_trace) to out. */
void ut_decode_arg(const struct ut_program *p, const struct ut_event *ev, const void *rec, size_t size, unsigned i,
		   struct ut_decoded_args *out);

/* Writes a record of the trace (a trace construct, a thread's name, a
 * loss) to e: one ut_decode_record took (one shorter than its event's
 * layout is left out). */
void ut_decode_trace(const struct ut_program *p, struct ut_engine *e, const void *rec, size_t size);

/* Where a trace record is drawn, for the flight recorder to keep what is
 * open when older records leave its window. */
struct ut_record_place {
	enum ut_event_op op;
	int group;            /* index in the program's groups; -1: a thread */
	uint64_t group_key;   /* the group's key, or pid << 32 | tid */
	uint64_t key;         /* a span's or flow's key */
	/* scheduling: the thread switched out or woken, the one switched in
	 * (tids; 0: none, or the idle task) */
	uint32_t sched_out, sched_in;
};
/* False for a record that is not a trace construct of the program. */
bool ut_decode_place(const struct ut_program *p, const void *rec, size_t size, struct ut_record_place *out);

/* Text of a value in a record (names, printf): table names, errno names,
 * formats.  Used for map keys too (rec = the key, fields = key layout). */
void ut_value_text(const struct ut_program *prog, const struct ut_field *fields, unsigned nfields,
		   const void *rec, size_t size, const struct ut_value *v, char *buf, size_t len);

/* How user space shows a value of a display kind (program.h, enum
 * ut_display): a row each of decode.c's table, and the functions it
 * names. */
struct ut_display_kind {
	bool number;   /* JSON and printf's %s keep the number (else they take its text) */
	bool frames;   /* a stack: its text is a frame a line, which the summary gives lines of their own */
	/* the text of a field's raw value, shown as v says */
	void (*text)(const struct ut_value *v, const struct ut_field *f, uint64_t raw, char *buf, size_t len);
	/* a trace argument of it; false: the argument is its text */
	bool (*arg)(uint64_t raw, const struct ut_field *f, struct ut_arg *a);
};
const struct ut_display_kind *ut_display_kind(enum ut_display d);

/* The wall-clock time of mono_ns (CLOCK_MONOTONIC, as bpf_ktime_get_ns)
 * by strftime's format fmt, with %f for its microseconds. */
void ut_wall_time_text(const char *fmt, uint64_t mono_ns, char *buf, size_t len);

/* "EAGAIN" for 11; NULL when unknown. */
const char *ut_errno_name(int e);

#endif
