#include "compiler/diag.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void diag_init(struct diag *d, FILE *out)
{
	memset(d, 0, sizeof(*d));
	d->out = out ? out : stderr;
	d->max_errors = 20;
}

void diag_free(struct diag *d)
{
	free(d->sources);
	d->sources = NULL;
	d->nsources = 0;
	diag_repeats_end(d);
}

void diag_repeats_begin(struct diag *d)
{
	d->collapsing = true;
	d->repeated = 0;
}

void diag_repeats_end(struct diag *d)
{
	d->collapsing = d->note_dropped = false;
	free(d->seen);
	d->seen = NULL;
	d->nseen = 0;
}

/* While collapsing: true when an error at loc was reported already;
 * otherwise loc is remembered. */
static bool repeated_place(struct diag *d, struct ut_loc loc)
{
	if (!d->collapsing || !loc.file)
		return false;
	for (unsigned i = 0; i < d->nseen; i++)
		if (d->seen[i].line == loc.line && d->seen[i].col == loc.col && strcmp(d->seen[i].file, loc.file) == 0)
			return true;
	d->seen = xrealloc_array(d->seen, d->nseen + 1, sizeof(*d->seen));
	d->seen[d->nseen++] = loc;
	return false;
}

void diag_add_source(struct diag *d, const char *file, const char *text)
{
	d->sources = xrealloc_array(d->sources, d->nsources + 1, sizeof(*d->sources));
	d->sources[d->nsources].file = file;
	d->sources[d->nsources].text = text;
	d->nsources++;
}

static const char *source_text(const struct diag *d, const char *file)
{
	for (unsigned i = d->nsources; i-- > 0;)
		if (file && strcmp(d->sources[i].file, file) == 0)
			return d->sources[i].text;
	return NULL;
}

/* Prints line `line` of the file and a caret under column `col`. */
static void quote_line(const struct diag *d, struct ut_loc loc)
{
	const char *p = source_text(d, loc.file);
	if (!p || loc.line <= 0)
		return;
	for (int l = 1; l < loc.line && *p; p++)
		if (*p == '\n')
			l++;
	if (!*p && loc.line > 1)
		return;
	const char *end = strchr(p, '\n');
	int len = end ? (int)(end - p) : (int)strlen(p);
	fprintf(d->out, "%5d | %.*s\n      | ", loc.line, len, p);
	for (int i = 1; i < loc.col && i <= len; i++)
		fputc(p[i - 1] == '\t' ? '\t' : ' ', d->out);
	fputs("^\n", d->out);
}

static void report(struct diag *d, const char *level, struct ut_loc loc, const char *fmt, va_list ap)
{
	if (loc.file)
		fprintf(d->out, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, level);
	else
		fprintf(d->out, "uring-trace: %s: ", level);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	quote_line(d, loc);
}

void diag_error(struct diag *d, struct ut_loc loc, const char *fmt, ...)
{
	d->note_dropped = repeated_place(d, loc);
	if (d->note_dropped) {
		d->repeated++;
		return;
	}
	d->errors++;
	if (d->errors > d->max_errors)
		return;
	va_list ap;
	va_start(ap, fmt);
	report(d, "error", loc, fmt, ap);
	va_end(ap);
	if (d->errors == d->max_errors)
		fprintf(d->out, "uring-trace: too many errors, stopping here\n");
}

void diag_warning(struct diag *d, struct ut_loc loc, const char *fmt, ...)
{
	d->warnings++;
	va_list ap;
	va_start(ap, fmt);
	report(d, "warning", loc, fmt, ap);
	va_end(ap);
}

void diag_note(struct diag *d, const char *fmt, ...)
{
	if (d->errors > d->max_errors || d->note_dropped)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("      note: ", d->out);
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	va_end(ap);
}
