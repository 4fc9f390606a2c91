/* tp_btf:NAME and raw_tp:NAME (rawtracepoint:): a tracepoint's raw
 * arguments, typed by the kernel's BTF (the typedef btf_trace_<NAME>).
 * tp_btf is a tracing program: its pointers are typed for the verifier
 * and it loads only where the kernel has BTF.  raw_tp reads the same
 * arguments as plain integers.  Both attach by BPF link.  The name may be
 * written CATEGORY:NAME, as -l lists it. */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "probes/attach.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_btf_tracepoint(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc,
				  bool typed_pointers)
{
	struct ut_param *params;
	unsigned n;
	const char *name = strchr(target, ':') ? strchr(target, ':') + 1 : target;  /* tp_btf:cat:name too */
	if (ut_kernel_tp_btf_params(c->k, name, &params, &n) < 0)
		return 1;
	a->target = xstrdup(name);
	a->alt->signature = probe_signature(c, name, true);
	probe_typed_params(c, a, params, n, loc, typed_pointers);
	free(params);
	return 0;
}

static int resolve_tp_btf(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	return resolve_btf_tracepoint(c, a, target, loc, true);
}

/* raw_tp arguments are plain integers to the verifier */
static int resolve_raw_tp(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	return resolve_btf_tracepoint(c, a, target, loc, false);
}

/* names starting with the same letter (a typo there is not caught) */
static void absent_btf_tracepoint(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc,
				  const char *spec, const char *target)
{
	probe_absent(c, loc, spec);
	char glob[8];
	snprintf(glob, sizeof(glob), "*:%c*", target[0]);
	probe_note_closest(c, def, target, glob, true);
}

/* ---- -l ---- */

static void list_btf_tracepoint_args(struct ut_kernel *k, const char *name, FILE *out)
{
	struct ut_param *params = NULL;
	unsigned n = 0;
	const char *colon = strchr(name, ':');
	if (ut_kernel_tp_btf_params(k, colon ? colon + 1 : name, &params, &n) == 0)
		probe_list_params(k, params, n, -1, out);
	free(params);
}

/* ---- runtime ---- */

static bool tp_btf_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_btf_target_exists(k, alt, true, true, why, len);
}

static bool raw_tp_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_btf_target_exists(k, alt, false, true, why, len);
}

static int trial_tp_btf(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	return probe_trial_tracing(k, alt, BPF_TRACE_RAW_TP, true, why, len);
}

static int trial_raw_tp(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	int fd;
	int rc = probe_trial_load(alt, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, 0, &fd, why, len);
	return rc == 1 ? probe_trial_link(alt, fd, alt->target, why, len) : rc;
}

static int attach_raw_tp(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	return probe_links_add(links, bpf_program__attach_raw_tracepoint(prog, alt->target));
}

const struct probe_kind_def probe_kind_tp_btf = {
	.name = "tp_btf",
	.kind = UT_PROBE_TP_BTF,
	.info_target = "sched_switch",
	.resolve = resolve_tp_btf,
	.header = probe_header_ctx_array,
	.absent = absent_btf_tracepoint,
	.list = ut_kernel_tracepoints_matching,
	.list_args = list_btf_tracepoint_args,
	.exists = tp_btf_exists,
	.trial = trial_tp_btf,
	.prepare = probe_prepare_tracing,
	.attach = probe_attach_tracing,
};

const struct probe_kind_def probe_kind_raw_tp = {
	.name = "raw_tp",
	.short_name = "rawtracepoint",
	.kind = UT_PROBE_RAW_TP,
	.info_target = "sched_switch",
	.resolve = resolve_raw_tp,
	.header = probe_header_ctx_array,
	.absent = absent_btf_tracepoint,
	.list = ut_kernel_tracepoints_matching,
	.list_args = list_btf_tracepoint_args,
	.exists = raw_tp_exists,
	.trial = trial_raw_tp,
	.attach = attach_raw_tp,
};
