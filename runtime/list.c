/* -l: the probes this kernel offers, and with -v their arguments. */
#include "runtime/list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "kernel/kernel.h"
#include "probes/kind.h"

/* The kinds -l lists, for messages: "tracepoint, tp_btf, ... and fexit". */
static void listed_kinds(char *buf, size_t len)
{
	const char *names[UT_PROBE_KIND_COUNT];
	unsigned n = 0;
	for (int kind = 0; kind < UT_PROBE_KIND_COUNT; kind++)
		if (probe_kind_def((enum ut_probe_kind)kind)->list)
			names[n++] = probe_kind_name((enum ut_probe_kind)kind);
	size_t at = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", names[i]);
}

/* -l PATTERN matched nothing: say so, and why when its first word is
 * neither a kind -l lists nor a tracepoint category here. */
static void no_probe_matches(struct ut_kernel *k, const char *pattern)
{
	fprintf(stderr, "uring-trace: no probe matches '%s' on kernel %s\n", pattern, ut_kernel_release(k));
	size_t len = strcspn(pattern, ":");
	char word[64];
	snprintf(word, sizeof(word), "%.*s", (int)(len < sizeof(word) ? len : 0), pattern);
	const struct probe_kind_def *def = probe_kind_find(word);
	if ((def && def->kind == UT_PROBE_TRACEPOINT && !strchr(pattern + len + 1, ':')) || !pattern[len]) {
		bool no_category = def && !pattern[len + 1];
		fprintf(stderr, "uring-trace: tracepoints are CATEGORY:NAME; all of %s: -l '%s%s*'\n",
			no_category ? "them" : "a category", pattern, no_category ? "" : ":");
		return;
	}
	if (len >= sizeof(word) || strcspn(pattern, "*?[") < len)
		return;
	if (def && !def->list) {
		char kinds[256];
		listed_kinds(kinds, sizeof(kinds));
		fprintf(stderr, "uring-trace: -l lists %s probes, not %s\n", kinds, def->name);
		return;
	}
	/* the category of tracepoint:CATEGORY:... or of CATEGORY:... */
	const char *category = def ? pattern + len + 1 : pattern;
	len = strcspn(category, ":");
	if (!category[len] || len >= sizeof(word) || strcspn(category, "*?[") < len ||
	    (def && def->kind != UT_PROBE_TRACEPOINT))
		return;
	snprintf(word, sizeof(word), "%.*s", (int)len, category);
	char **names = NULL, glob[80];
	snprintf(glob, sizeof(glob), "%s:*", word);
	int n = ut_kernel_tracepoints_matching(k, glob, &names);
	if (n != 0) {
		if (n > 0)
			ut_strv_free(names, n);
		return;
	}
	/* candidates: the kinds -l lists (when no kind was written) and the
	 * categories */
	n = ut_kernel_tracepoints_matching(k, "*", &names);
	char **cands = xcalloc((size_t)(n > 0 ? n : 0) + UT_PROBE_KIND_COUNT, sizeof(char *));
	unsigned ncands = 0;
	for (int kind = 0; !def && kind < UT_PROBE_KIND_COUNT; kind++)
		if (probe_kind_def((enum ut_probe_kind)kind)->list)
			cands[ncands++] = xstrdup(probe_kind_name((enum ut_probe_kind)kind));
	for (int i = 0; i < n; i++) {
		names[i][strcspn(names[i], ":")] = 0;
		if (!ncands || strcmp(cands[ncands - 1], names[i]) != 0)   /* sorted: categories in runs */
			cands[ncands++] = xstrdup(names[i]);
	}
	const char *near = ut_suggest(word, cands, ncands);
	fprintf(stderr, "uring-trace: '%s' is %s tracepoint category on this kernel%s%s%s (list them with: "
		"uring-trace -l 'tracepoint:*')\n", word, def ? "no" : "neither a probe kind -l lists nor a",
		near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
	for (unsigned i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	if (n > 0)
		ut_strv_free(names, n);
}

int ut_list_probes(const char *pattern, bool with_arguments)
{
	struct ut_kernel *k = ut_kernel_open();
	const char *p = pattern && *pattern ? pattern : "tracepoint:*";
	const struct probe_kind_def *def = probe_kind_def(UT_PROBE_TRACEPOINT);
	const char *glob = p;
	const char *colon = strchr(p, ':');
	if (colon && colon - p < 32) {
		char kind[32];
		snprintf(kind, sizeof(kind), "%.*s", (int)(colon - p), p);
		const struct probe_kind_def *named = probe_kind_find(kind);
		if (named && named->list) {
			def = named;
			glob = colon + 1;
		}
	}
	char **names = NULL;
	int n = def->list(k, glob, &names);
	if (n < 0) {
		fprintf(stderr, "uring-trace: cannot list probes: %s\n", ut_kernel_error(k));
		ut_kernel_close(k);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		printf("%s:%s\n", def->name, names[i]);
		if (with_arguments)
			def->list_args(k, names[i], stdout);
	}
	ut_strv_free(names, n);
	if (n == 0)
		no_probe_matches(k, p);
	ut_kernel_close(k);
	return n > 0 ? 0 : 1;
}
