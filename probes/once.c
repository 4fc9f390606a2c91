/* BEGIN and END: a body run once, BEGIN before tracing starts and END
 * after the probes are detached.  Their programs load with the others but
 * attach nowhere: the session runs them from user space (test run). */
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_once(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	if (target[0]) {
		diag_error(c->d, loc, "BEGIN and END take no target");
		return -1;
	}
	a->target = xstrdup("");
	return 0;
}

/* BEGIN/END run once, by test-run from user space. */
static void header_once(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"raw_tp\")\nint %s(void *ctx)\n{\n", a->alt->prog_name);
}

/* ---- runtime ---- */

/* An alternative of another probe (tracepoint:x | BEGIN) is passed over:
 * only a probe that is BEGIN or END alone runs once. */
static bool once_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	(void)alt;
	snprintf(why, len, "not a BPF probe");
	return false;
}

const struct probe_kind_def probe_kind_begin = {
	.name = "BEGIN",
	.kind = UT_PROBE_BEGIN,
	.runs = PROBE_RUN_AT_START,
	.no_target = true,
	.unfiltered = true,
	.resolve = resolve_once,
	.header = header_once,
	.exists = once_exists,
};

const struct probe_kind_def probe_kind_end = {
	.name = "END",
	.kind = UT_PROBE_END,
	.runs = PROBE_RUN_AT_EXIT,
	.no_target = true,
	.unfiltered = true,
	.resolve = resolve_once,
	.header = header_once,
	.exists = once_exists,
};
