/* kprobe:FUNCTION (k:) and kretprobe:FUNCTION (kr:): a kernel function's
 * entry and return, by kprobe.  Its arguments are read from the entry's
 * registers, named and typed from the function's BTF; at the return only
 * retval.  Attached as perf events. */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "probes/attach.h"
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

/* ---- runtime ---- */

static bool kprobe_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_btf_target_exists(k, alt, false, false, why, len);
}

static int trial_kprobe(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_pmu(alt, "kprobe", why, len);
}

static int attach_kprobe(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	bool retprobe = alt->kind == UT_PROBE_KRETPROBE;
	return probe_links_add(links, bpf_program__attach_kprobe(prog, retprobe, alt->target));
}

const struct probe_kind_def probe_kind_kprobe = {
	.name = "kprobe",
	.regs_context = true,
	.short_name = "k",
	.kind = UT_PROBE_KPROBE,
	.wildcards = true,
	.numbered_params = true,
	.slow_detach = true,
	.info_target = "vfs_read",
	.resolve = resolve_kprobe,
	.header = header_kprobe,
	.absent = probe_absent_function,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args,
	.exists = kprobe_exists,
	.trial = trial_kprobe,
	.attach = attach_kprobe,
};

const struct probe_kind_def probe_kind_kretprobe = {
	.name = "kretprobe",
	.regs_context = true,
	.short_name = "kr",
	.kind = UT_PROBE_KRETPROBE,
	.wildcards = true,
	.entry_kind = "kprobe",
	.args_elsewhere = ", or use fexit, which has the arguments",
	.slow_detach = true,
	.info_target = "vfs_read",
	.resolve = resolve_kretprobe,
	.header = header_kprobe,
	.absent = probe_absent_function,
	.names_parameter = names_parameter,
	.list = ut_kernel_functions_matching,
	.list_args = probe_list_function_args_retval,
	.exists = kprobe_exists,
	.trial = trial_kprobe,
	.attach = attach_kprobe,
};
