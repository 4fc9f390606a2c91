/* fentry:FUNCTION (f:) and fexit:FUNCTION (fr:): a kernel function's entry
 * and return as tracing programs (BPF trampolines).  The arguments are
 * typed from BTF, at the return too, with retval after them.  They load
 * only on a kernel with BTF and attach by BPF link. */
#include "kernel/kernel.h"
#include "probes/attach.h"
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

/* ---- runtime ---- */

static bool fentry_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_btf_target_exists(k, alt, true, false, why, len);
}

static int trial_fentry(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_trial_tracing(k, alt, BPF_TRACE_FENTRY, false, why, len);
}

static int trial_fexit(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_trial_tracing(k, alt, BPF_TRACE_FEXIT, false, why, len);
}

const struct probe_kind_def probe_kind_fentry = {
	.name = "fentry",
	.short_name = "f",
	.kind = UT_PROBE_FENTRY,
	.wildcards = true,
	.info_target = "vfs_read",
	.resolve = resolve_fentry,
	.header = probe_header_ctx_array,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args,
	.exists = fentry_exists,
	.trial = trial_fentry,
	.prepare = probe_prepare_tracing,
	.attach = probe_attach_tracing,
};

const struct probe_kind_def probe_kind_fexit = {
	.name = "fexit",
	.short_name = "fr",
	.kind = UT_PROBE_FEXIT,
	.wildcards = true,
	.info_target = "vfs_read",
	.resolve = resolve_fexit,
	.header = probe_header_ctx_array,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args_retval,
	.exists = fentry_exists,
	.trial = trial_fexit,
	.prepare = probe_prepare_tracing,
	.attach = probe_attach_tracing,
};
