/* Before and after (--baseline FILE, --diff FILE): a run's JSON summary
 * (docs/json.md) saved, and another run's compared with it, map key by map
 * key (values and counts, a histogram's count, p50 and p99) and finding by
 * finding (appeared, gone, its severity changed). */
#ifndef UT_DIFF_H
#define UT_DIFF_H
#include <stdio.h>

struct ut_summary_json;

/* The summary in path, parsed; NULL with why (no such file, not a
 * uring-trace summary, a schema this version does not read). */
struct ut_summary_json *ut_summary_json_read(const char *path, char *why, size_t len);
/* The same from the text of a summary. */
struct ut_summary_json *ut_summary_json_parse(const char *text, char *why, size_t len);
void ut_summary_json_free(struct ut_summary_json *s);

/* What changed from before to after, as text. */
void ut_summary_diff(const struct ut_summary_json *before, const struct ut_summary_json *after, const char *before_name,
		     FILE *out);

#endif
