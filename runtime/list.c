/* -l: the probes this kernel offers, and with -v their arguments. */
#include "runtime/list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/kernel.h"

/* Kinds -l can list: tracepoints (tracefs) and functions (BTF). */
static bool lists_functions(enum ut_probe_kind k)
{
	return k == UT_PROBE_KPROBE || k == UT_PROBE_KRETPROBE || k == UT_PROBE_FENTRY || k == UT_PROBE_FEXIT;
}

/* -l -v: the arguments a probe's body can read, as "    type name". */
static void list_arguments(struct ut_kernel *k, const struct probe_kind_def *def, const char *name)
{
	char buf[256];
	if (def->kind == UT_PROBE_TRACEPOINT) {
		const char *colon = strchr(name, ':');
		char cat[128];
		snprintf(cat, sizeof(cat), "%.*s", colon ? (int)(colon - name) : 0, name);
		const struct ut_tracepoint *tp = colon ? ut_kernel_tracepoint(k, cat, colon + 1) : NULL;
		for (unsigned i = 0; tp && i < tp->nfields; i++)
			printf("    %s %s\n", tp->fields[i].c_type, tp->fields[i].name);
		return;
	}
	struct ut_param *params = NULL;
	unsigned n = 0;
	int32_t ret = -1;
	const char *colon = strchr(name, ':');
	int rc = lists_functions(def->kind) ? ut_kernel_func_params(k, name, &params, &n, &ret)
					    : ut_kernel_tp_btf_params(k, colon ? colon + 1 : name, &params, &n);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		const char *type = ut_kernel_type_c(k, params[i].type, buf, sizeof(buf));
		printf("    %s%s%s\n", type, type[0] && type[strlen(type) - 1] == '*' ? "" : " ",
		       params[i].name[0] ? params[i].name : "?");
	}
	if (rc == 0 && ret >= 0 && (def->kind == UT_PROBE_KRETPROBE || def->kind == UT_PROBE_FEXIT))
		printf("    %s retval\n", ut_kernel_type_c(k, ret, buf, sizeof(buf)));
	free(params);
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
		if (named && (named->kind == UT_PROBE_TRACEPOINT || named->kind == UT_PROBE_TP_BTF ||
			      named->kind == UT_PROBE_RAW_TP || lists_functions(named->kind))) {
			def = named;
			glob = colon + 1;
		}
	}
	char **names = NULL;
	int n = lists_functions(def->kind) ? ut_kernel_functions_matching(k, glob, &names)
					   : ut_kernel_tracepoints_matching(k, glob, &names);
	if (n < 0) {
		fprintf(stderr, "uring-trace: cannot list probes: %s\n", ut_kernel_error(k));
		ut_kernel_close(k);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		printf("%s:%s\n", def->name, names[i]);
		if (with_arguments)
			list_arguments(k, def, names[i]);
	}
	ut_strv_free(names, n);
	ut_kernel_close(k);
	return n > 0 ? 0 : 1;
}
