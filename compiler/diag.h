/* Diagnostics like a good C compiler: "file:line:col: error: message",
 * the source line, and a caret.  Errors are collected, not fatal, so one
 * run reports several. */
#ifndef UT_DIAG_H
#define UT_DIAG_H
#include <stdarg.h>
#include <stdio.h>
#include "compiler/program.h"

struct diag {
	FILE *out;            /* where messages go (stderr by default) */
	int errors, warnings;
	int max_errors;       /* stop reporting after this many (0 = 20) */
	/* source texts by file name, to print the offending line */
	unsigned nsources;
	struct diag_source { const char *file; const char *text; } *sources;
	/* between diag_repeats_begin and _end: errors at a place already
	 * reported are counted in repeated, not reported (nor their notes) */
	bool collapsing, note_dropped;
	unsigned nseen;
	struct ut_loc *seen;
	unsigned repeated;
};

void diag_init(struct diag *d, FILE *out);
void diag_free(struct diag *d);
/* Registers a file's text (borrowed) so messages can quote its lines. */
void diag_add_source(struct diag *d, const char *file, const char *text);
void diag_error(struct diag *d, struct ut_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void diag_warning(struct diag *d, struct ut_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One body checked for each match of a wildcard makes the same errors at
 * the same places: each is reported once. */
void diag_repeats_begin(struct diag *d);
void diag_repeats_end(struct diag *d);
/* An indented "note:" line after an error, without location. */
void diag_note(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
