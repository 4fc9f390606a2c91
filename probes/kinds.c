/* The table of probe kinds: one row per kind, in the order of enum
 * ut_probe_kind, which is also the order messages list them in. */
#include "probes/kind.h"

#include <string.h>

extern const struct probe_kind_def probe_kind_tracepoint, probe_kind_tp_btf, probe_kind_raw_tp, probe_kind_kprobe,
	probe_kind_kretprobe, probe_kind_fentry, probe_kind_fexit, probe_kind_uprobe, probe_kind_uretprobe,
	probe_kind_interval, probe_kind_begin, probe_kind_end, probe_kind_profile, probe_kind_software,
	probe_kind_hardware, probe_kind_usdt;

static const struct probe_kind_def *const kinds[UT_PROBE_KIND_COUNT] = {
	[UT_PROBE_TRACEPOINT] = &probe_kind_tracepoint,   /* probes/tracepoint.c */
	[UT_PROBE_TP_BTF] = &probe_kind_tp_btf,           /* probes/tp_btf.c */
	[UT_PROBE_RAW_TP] = &probe_kind_raw_tp,           /* probes/tp_btf.c */
	[UT_PROBE_KPROBE] = &probe_kind_kprobe,           /* probes/kprobe.c */
	[UT_PROBE_KRETPROBE] = &probe_kind_kretprobe,     /* probes/kprobe.c */
	[UT_PROBE_FENTRY] = &probe_kind_fentry,           /* probes/fentry.c */
	[UT_PROBE_FEXIT] = &probe_kind_fexit,             /* probes/fentry.c */
	[UT_PROBE_UPROBE] = &probe_kind_uprobe,           /* probes/uprobe.c */
	[UT_PROBE_URETPROBE] = &probe_kind_uretprobe,     /* probes/uprobe.c */
	[UT_PROBE_INTERVAL] = &probe_kind_interval,       /* probes/perf_event.c */
	[UT_PROBE_BEGIN] = &probe_kind_begin,             /* probes/once.c */
	[UT_PROBE_END] = &probe_kind_end,                 /* probes/once.c */
	[UT_PROBE_PROFILE] = &probe_kind_profile,         /* probes/perf_event.c */
	[UT_PROBE_SOFTWARE] = &probe_kind_software,       /* probes/perf_event.c */
	[UT_PROBE_HARDWARE] = &probe_kind_hardware,       /* probes/perf_event.c */
	[UT_PROBE_USDT] = &probe_kind_usdt,               /* probes/usdt.c */
};

const struct probe_kind_def *probe_kind_find(const char *name)
{
	for (unsigned i = 0; i < UT_PROBE_KIND_COUNT; i++)
		if (strcmp(kinds[i]->name, name) == 0 || (kinds[i]->short_name && strcmp(kinds[i]->short_name, name) == 0))
			return kinds[i];
	return NULL;
}

const struct probe_kind_def *probe_kind_def(enum ut_probe_kind kind)
{
	return kinds[kind];
}

const char *probe_kind_name(enum ut_probe_kind kind)
{
	return kinds[kind]->name;
}

void probe_kind_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < UT_PROBE_KIND_COUNT && used < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 < UT_PROBE_KIND_COUNT ? ", " : " or ";
		int n = snprintf(buf + used, len - used, "%s%s", sep, kinds[i]->name);
		used += n > 0 ? (size_t)n : 0;
	}
}
