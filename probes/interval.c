/* interval:1s, interval:100ms, interval:us:500 (i:): a timer, on one
 * CPU: a software cpu-clock perf event on CPU 0 with the period as its
 * sample period.  Its hits belong to no traced process. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probes/attach.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_interval(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	/* interval:1s, interval:100ms, interval:s:1, interval:ms:100 */
	char unit[8] = "";
	long long v = 0;
	int used = 0;
	if (sscanf(target, "%lld%7[a-z]%n", &v, unit, &used) != 2 || target[used]) {
		used = 0;
		if (sscanf(target, "%7[a-z]:%lld%n", unit, &v, &used) != 2 || target[used])
			unit[0] = 0;
	}
	long long scale = strcmp(unit, "s") == 0 ? 1000000000LL : strcmp(unit, "ms") == 0 ? 1000000LL
			: strcmp(unit, "us") == 0 ? 1000LL : 0;
	if (!scale || v <= 0 || v > 3600LL * 1000000) {
		diag_error(c->d, loc, "interval probes are written interval:1s, interval:100ms or interval:us:500");
		return -1;
	}
	if (v * scale < 1000000)
		diag_warning(c->d, loc, "intervals shorter than 1ms cost much CPU");
	a->target = xasprintf("%lld", v * scale);
	return 0;
}

static void header_interval(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"perf_event\")\nint %s(void *ctx)\n{\n", a->alt->prog_name);
}

/* ---- runtime ---- */

static bool interval_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	if (strtoull(alt->target, NULL, 10) > 0)
		return true;
	snprintf(why, len, "bad interval period");
	return false;
}

static int trial_interval(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_load(alt, BPF_PROG_TYPE_PERF_EVENT, 0, 0, NULL, why, len);
}

/* A software cpu-clock event on CPU 0 firing every period (ns, the
 * target). */
static int attach_interval(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = strtoull(alt->target, NULL, 10),
	};
	int pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	struct bpf_link *link = bpf_program__attach_perf_event(prog, pfd);
	if (!link) {
		int e = errno;
		close(pfd);
		errno = e;
	}
	return probe_links_add(links, link);  /* the link owns pfd now */
}

const struct probe_kind_def probe_kind_interval = {
	.name = "interval",
	.short_name = "i",
	.kind = UT_PROBE_INTERVAL,
	.unfiltered = true,
	.resolve = resolve_interval,
	.header = header_interval,
	.exists = interval_exists,
	.trial = trial_interval,
	.attach = attach_interval,
};
