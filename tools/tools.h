/* The tools over trace files: dump, stats (here) and render
 * (tools/render.h). */
#ifndef UT_TOOLS_H
#define UT_TOOLS_H
#include <stdbool.h>
#include <stdio.h>

/* `uring-trace dump FILE`: one line per record.  Returns 0, or 1 on a
 * malformed trace (after printing what it could and the error). */
int fxt_dump(const char *path, FILE *out);
/* `uring-trace stats FILE`: counts by event name, flows complete and
 * incomplete, processes and threads with names, errors.  json selects a
 * JSON object instead of text. */
int fxt_stats(const char *path, FILE *out, bool json);

/* s in quotes, what is not printable ASCII escaped (dump and stats). */
void tool_print_quoted(FILE *out, const char *s);

#endif
