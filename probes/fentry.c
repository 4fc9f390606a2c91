/* fentry:FUNCTION (f:) and fexit:FUNCTION (fr:): a kernel function's entry
 * and return as tracing programs (BPF trampolines).  The arguments are
 * typed from BTF, at the return too, with retval after them.  They load
 * only on a kernel with BTF and attach by BPF link. */
#include "compiler/kernel.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_fentry(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return probe_resolve_function(c, a, t, l, false, false);
}

static int resolve_fexit(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return probe_resolve_function(c, a, t, l, true, false);
}

const struct probe_kind_def probe_kind_fentry = {
	.name = "fentry",
	.short_name = "f",
	.kind = UT_PROBE_FENTRY,
	.wildcards = true,
	.resolve = resolve_fentry,
	.header = probe_header_ctx_array,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args,
};

const struct probe_kind_def probe_kind_fexit = {
	.name = "fexit",
	.short_name = "fr",
	.kind = UT_PROBE_FEXIT,
	.wildcards = true,
	.resolve = resolve_fexit,
	.header = probe_header_ctx_array,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args_retval,
};
