/* The findings a script makes (`finding "TAG"[key] SEVERITY "message"
 * ...`: UT_EV_FINDING records), kept by the reader: one per identity, its
 * tag and its key's values, with how often it was made, when and where
 * first, the highest severity it was made with, and its latest message,
 * fix and evidence (made when shown: the functions that show them are
 * not const).  The summary prints them after the maps, and --json
 * holds them (docs/json.md). */
#ifndef UT_FINDINGS_H
#define UT_FINDINGS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/program.h"

struct ut_findings;

struct ut_findings *ut_findings_new(void);
void ut_findings_free(struct ut_findings *f);

/* Takes a finding record of event ev (known well-formed): the highest
 * severity its identity was made with before, -1 when this is its first
 * (which the trace marks). */
int ut_findings_take(struct ut_findings *f, const struct ut_program *p, const struct ut_event *ev, const void *rec,
		     size_t size);
/* Findings made new once the reader kept its most (4096, or
 * UT_MAX_FINDINGS): counted, not kept, not marked in the trace. */
uint64_t ut_findings_not_kept(const struct ut_findings *f);
/* The highest severity of the findings made (kept or not); -1 when none was. */
int ut_findings_worst(const struct ut_findings *f);
/* The "findings" section of the text summary (nothing when none was
 * made): the most severe first, then in the order first made. */
void ut_findings_print(struct ut_findings *f, FILE *out);
/* The findings as a JSON array, in the same order. */
void ut_findings_json(struct ut_findings *f, FILE *out);
/* A finding as the live view and the metrics show it. */
struct ut_finding_seen {
	const char *tag, *key;     /* key: its values' text, ", " between them ("" without) */
	enum ut_severity severity;
	uint64_t count;
	const char *message;
};
/* Calls one for each finding, in the summary's order. */
void ut_findings_visit(struct ut_findings *f, void (*one)(void *ctx, const struct ut_finding_seen *seen),
		       void *ctx);
/* The severity called name ("warn"); -1 when none is. */
int ut_severity_named(const char *name);

#endif
