/* kprobe:FUNCTION (k:) and kretprobe:FUNCTION (kr:): a kernel function's
 * entry and return, by kprobe.  Its arguments are read from the entry's
 * registers, named and typed from the function's BTF; at the return only
 * retval.  Attached as perf events. */
#include <stdlib.h>
#include <string.h>

#include "compiler/kernel.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_kprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return probe_resolve_function(c, a, t, l, false, true);
}

static int resolve_kretprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return probe_resolve_function(c, a, t, l, true, true);
}

static void header_kprobe(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"%s/%s\")\nint %s(struct pt_regs *ctx)\n{\n", a->def->name, a->target, a->alt->prog_name);
}

static bool names_parameter(struct ut_kernel *k, const char *target, const char *name)
{
	struct ut_param *params;
	unsigned np;
	int32_t ret_type;
	bool param = false;
	if (ut_kernel_func_params(k, target, &params, &np, &ret_type) == 0) {
		for (unsigned i = 0; i < np; i++)
			param |= strcmp(params[i].name, name) == 0;
		free(params);
	}
	return param;
}

const struct probe_kind_def probe_kind_kprobe = {
	.name = "kprobe",
	.short_name = "k",
	.kind = UT_PROBE_KPROBE,
	.wildcards = true,
	.numbered_params = true,
	.resolve = resolve_kprobe,
	.header = header_kprobe,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args,
};

const struct probe_kind_def probe_kind_kretprobe = {
	.name = "kretprobe",
	.short_name = "kr",
	.kind = UT_PROBE_KRETPROBE,
	.wildcards = true,
	.entry_kind = "kprobe",
	.args_elsewhere = ", or use fexit, which has the arguments",
	.resolve = resolve_kretprobe,
	.header = header_kprobe,
	.absent = probe_absent_function,
	.names_parameter = names_parameter,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args_retval,
};
