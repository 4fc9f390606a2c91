#include "runtime/live.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "base/hashmap.h"
#include "runtime/findings.h"
#include "runtime/summary.h"

/* Rows a map shows at most (the busiest): on a terminal, fewer when the
 * screen is short. */
#define ROWS_A_MAP 20
#define NO_BUCKET UINT64_MAX

/* One entry's value in an interval; a histogram's bucket is a piece. */
struct piece {
	char *key;
	uint64_t index;           /* NO_BUCKET: not a histogram */
	struct ut_bucket_bounds bounds;
	int64_t value, delta;
};

/* A row of the view: a key's rate or value, a histogram's percentiles. */
struct row {
	const char *key;
	double rate;              /* counts and histograms: a second; else the value */
	int64_t p[3];             /* p50, p99, p99.9 */
};

struct ut_live {
	const struct ut_program *prog;
	uint64_t last_events, last_lost;
	FILE *out;
	bool tty;
	bool tracing;
	struct hmap before;       /* (the entry's hash, bucket) -> its value at the last tick */
	struct piece *pieces;     /* this tick's, of the map being drawn */
	size_t npieces, pieces_cap;
	unsigned map;
};

struct ut_live *ut_live_new(const struct ut_program *prog, FILE *out, bool tracing)
{
	struct ut_live *l = xcalloc(1, sizeof(*l));
	l->prog = prog;
	l->tracing = tracing;
	l->out = out;
	l->tty = isatty(fileno(out));
	return l;
}

void ut_live_free(struct ut_live *l)
{
	if (!l)
		return;
	hmap_free(&l->before);
	free(l->pieces);
	free(l);
}

static uint64_t entry_hash(unsigned map, const char *key)
{
	return ut_hash_bytes(ut_hash_bytes(UT_HASH_INIT, &map, sizeof(map)), key, strlen(key));
}

/* ut_map_visit's row: its value now and its change since the last tick. */
static void take_piece(void *ctx, const struct ut_map_row *r)
{
	struct ut_live *l = ctx;
	uint64_t index = r->bucket ? r->index : NO_BUCKET;
	bool created;
	uint64_t *before = hmap_insert(&l->before, entry_hash(l->map, r->key), index, &created);
	int64_t delta = r->value - (created ? 0 : (int64_t)*before);
	if (delta < 0)   /* cleared (clear(), zero()) in the interval */
		delta = r->value;
	*before = (uint64_t)r->value;
	grow_array((void **)&l->pieces, &l->pieces_cap, l->npieces + 1, sizeof(*l->pieces));
	l->pieces[l->npieces++] = (struct piece){.key = xstrdup(r->key), .index = index, .bounds = r->bounds,
						 .value = r->value, .delta = delta};
}

static int by_key_then_bucket(const void *pa, const void *pb)
{
	const struct piece *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);
	return c ? c : (a->index > b->index) - (a->index < b->index);
}

static int busiest_first(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	return (a->rate < b->rate) - (a->rate > b->rate);
}

/* The interval's percentiles of a histogram's pieces v[0..n) (one key, by
 * bucket): each the upper bound of the bucket where it falls. */
static void percentiles(const struct piece *v, size_t n, int64_t total, int64_t p[3])
{
	static const double at[3] = {0.50, 0.99, 0.999};
	for (unsigned q = 0; q < 3; q++) {
		int64_t want = (int64_t)ceil(at[q] * (double)total), seen = 0;
		p[q] = 0;
		for (size_t i = 0; i < n; i++) {
			seen += v[i].delta;
			if (seen >= want && v[i].delta > 0) {
				p[q] = v[i].bounds.has_max ? v[i].bounds.max : v[i].bounds.min;
				break;
			}
		}
	}
}

/* A number in at most 7 characters: 1234567 -> 1.23M. */
static void human(double v, char *buf, size_t len)
{
	const char *units = " kMGT";
	unsigned u = 0;
	while (fabs(v) >= 10000 && u < 4) {
		v /= 1000;
		u++;
	}
	if (u)
		snprintf(buf, len, "%.*f%c", fabs(v) < 10 ? 2 : fabs(v) < 100 ? 1 : 0, v, units[u]);
	else
		snprintf(buf, len, "%.*f", v != floor(v) && fabs(v) < 100 ? 1 : 0, v);
}

/* One map's section: its busiest rows, at most max. */
static void draw_map(struct ut_live *l, const struct ut_map *m, double dt, unsigned max, unsigned cols)
{
	if (!l->npieces)
		return;
	qsort(l->pieces, l->npieces, sizeof(*l->pieces), by_key_then_bucket);
	bool hist = l->pieces[0].index != NO_BUCKET, rate = hist || m->agg == UT_AGG_COUNT;
	struct row *rows = xcalloc(l->npieces, sizeof(*rows));
	size_t nrows = 0;
	for (size_t i = 0, next; i < l->npieces; i = next) {
		int64_t total = 0;
		for (next = i; next < l->npieces && strcmp(l->pieces[next].key, l->pieces[i].key) == 0; next++)
			total += l->pieces[next].delta;
		struct row *r = &rows[nrows++];
		r->key = l->pieces[i].key;
		r->rate = rate ? (double)total / dt : (double)l->pieces[i].value;
		if (hist)
			percentiles(l->pieces + i, next - i, total, r->p);
	}
	qsort(rows, nrows, sizeof(*rows), busiest_first);
	int keyw = cols < 70 ? 30 : cols - 40 > 60 ? 60 : (int)cols - 40;
	fprintf(l->out, "%-*s %9s%s%s\n", keyw, m->name, rate ? "/s" : "value", hist ? "      p50      p99    p99.9" : "",
		l->tty ? "\033[K" : "");
	for (size_t i = 0; i < nrows && i < max; i++) {
		char v[16], p[3][16];
		human(rows[i].rate, v, sizeof(v));
		fprintf(l->out, "  %-*.*s %9s", keyw - 2, keyw - 2, rows[i].key[0] ? rows[i].key : "(no key)", v);
		if (hist) {
			for (unsigned q = 0; q < 3; q++) {
				human((double)rows[i].p[q], p[q], sizeof(p[q]));
				fprintf(l->out, " %8s", p[q]);
			}
		}
		fputs(l->tty ? "\033[K\n" : "\n", l->out);
	}
	if (nrows > max)
		fprintf(l->out, "  ... %zu more%s\n", nrows - max, l->tty ? "\033[K" : "");
	free(rows);
}

/* A finding, a line: the view's last section. */
static void draw_finding(void *ctx, const struct ut_finding_seen *seen)
{
	struct ut_live *l = ctx;
	fprintf(l->out, "  %-4s %s%s%s%s x%llu: %s%s\n", ut_severity_names[seen->severity], seen->tag, seen->key[0] ? "[" : "",
		seen->key, seen->key[0] ? "]" : "", (unsigned long long)seen->count, seen->message, l->tty ? "\033[K" : "");
}

void ut_live_draw(struct ut_live *l, struct bpf_object *obj, const struct ut_user_maps *user,
		  struct ut_findings *findings, double dt, uint64_t events, uint64_t lost)
{
	unsigned rows = 0, cols = 100;
	struct winsize ws;
	if (l->tty && ioctl(fileno(l->out), TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	unsigned shown = 0;
	for (unsigned i = 0; i < l->prog->nmaps; i++)
		shown += !l->prog->maps[i].is_private;
	/* on a terminal, each map gets an even share of the screen's rows */
	unsigned max = rows && shown ? (rows > 3 + 2 * shown ? (rows - 3) / shown - 1 : 1) : ROWS_A_MAP;
	if (max > ROWS_A_MAP)
		max = ROWS_A_MAP;
	time_t t = time(NULL);
	struct tm tm;
	char when[16], ev[16];
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	human((double)(events - l->last_events) / dt, ev, sizeof(ev));
	fprintf(l->out, "%suring-trace %s, the last %.1f s: %s %s, %llu lost%s\n", l->tty ? "\033[H" : "\n", when, dt, ev,
		l->tracing ? "events/s" : "records/s to the reader (the kernel counts the rest)",
		(unsigned long long)(lost - l->last_lost), l->tty ? "\033[K" : "");
	l->last_events = events;
	l->last_lost = lost;
	for (unsigned i = 0; i < l->prog->nmaps; i++) {
		const struct ut_map *m = &l->prog->maps[i];
		if (m->is_private)
			continue;
		l->map = i;
		l->npieces = 0;
		ut_map_visit(l->prog, i, obj, user, take_piece, l);
		draw_map(l, m, dt, max, cols);
		for (size_t j = 0; j < l->npieces; j++)
			free(l->pieces[j].key);
	}
	if (ut_findings_worst(findings) >= 0) {
		fprintf(l->out, "findings%s\n", l->tty ? "\033[K" : "");
		ut_findings_visit(findings, draw_finding, l);
	}
	fputs(l->tty ? "\033[J" : "", l->out);
	fflush(l->out);
}
