/* -l: the probes this kernel offers, and with -v their arguments. */
#include "runtime/list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/kernel.h"
#include "probes/kind.h"

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
	ut_kernel_close(k);
	return n > 0 ? 0 : 1;
}
