/* What the command line asks for: runtime/main.c parses it into struct
 * options; the listing and the tracing session read their share. */
#ifndef UT_OPTIONS_H
#define UT_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "compiler/compiler.h"
#include "runtime/identity.h"

/* --ring-size's default: the flight recorder's memory bound. */
#define UT_RING_BYTES (128u << 20)
/* --spool-size's default: the memory the trace's records may wait in for
 * the converter (runtime/spool.h). */
#define UT_SPOOL_BYTES (64u << 20)

struct ut_summary_json;

struct options {
	const char *script;
	const char *program;        /* -e */
	const char *output;         /* -o */
	pid_t pid;                  /* -p */
	const char *command;        /* -c */
	const char *run_as;         /* --run-as */
	struct ut_identity command_as;   /* who -c's command runs as (runtime/identity.h) */
	const char *comm;           /* --comm */
	double duration;            /* -d, seconds; 0 = until stopped */
	double sample_pct;          /* --sample */
	size_t buffer_bytes;        /* --buffer */
	double ring_s;              /* --ring: seconds kept in memory; 0 = write as it comes */
	size_t ring_bytes;          /* --ring-size: the bound of the memory that keeps them */
	size_t spool_bytes;         /* --spool-size: the trace's records waiting for the converter; 0: none */
	double after_s;             /* --after: a snapshot's seconds after its trigger */
	unsigned max_snapshots;     /* --max-snapshots */
	uint64_t max_size;          /* --max-size: bytes of a trace file; 0 = no limit */
	const char *list;           /* -l */
	bool list_given;
	bool emit_c, compile_only, verbose, quiet, summary_only;
	bool all_in_kernel;          /* --all-in-kernel */
	enum ut_dump dump;           /* --dump PASS */
	const char *json;
	const char *metrics;         /* --metrics [ADDR:]PORT */
	double live_s;               /* --live: the interval; 0 = no live view */
	const char *baseline;        /* --baseline FILE */
	const char *diff;            /* --diff FILE */
	struct ut_summary_json *diff_against;   /* its summary, read before tracing (runtime/diff.h) */
	int fail_on;                 /* --fail-on: exit 3 on a finding at this severity or above; -1: none */
	int snapshot_on;             /* --snapshot-on: a first finding at this severity or above takes a
					snapshot (--ring); -1: none */
	const char *includes[32];
	unsigned nincludes;
	const char *defines[64];     /* -D NAME=VALUE */
	unsigned ndefines;
	const char *flags[64];       /* script flags: NAME[=VALUE] of --NAME[=VALUE] */
	unsigned nflags;
	const char *positional[64];  /* the script's $1 ...: the arguments after it (or after -e) */
	unsigned npositional;
};

#endif
