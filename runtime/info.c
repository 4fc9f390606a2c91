#include "runtime/info.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel/kernel.h"
#include "compiler/program.h"
#include "probes/kind.h"
#include "runtime/bpfcc_loader.h"
#include "runtime/cache.h"

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (!f) {
		snprintf(buf, len, "(%s)", strerror(errno));
		return;
	}
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static uint64_t effective_caps(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t caps = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "CapEff:", 7) == 0)
			caps = strtoull(line + 7, NULL, 16);
	if (f)
		fclose(f);
	return caps;
}

/* Which io_uring events this kernel has, and whether its completions name
 * their request: before 5.19 they do not, and a trace matches them to
 * their requests by user_data (stdlib/io_uring.ut). */
static void print_io_uring_events(struct ut_kernel *k, char **names, int n, FILE *out)
{
	fprintf(out, "io_uring:      ");
	for (int i = 0; i < n; i++) {
		const char *name = strchr(names[i], ':') ? strchr(names[i], ':') + 1 : names[i];
		fprintf(out, "%s%s", i ? " " : "", strncmp(name, "io_uring_", 9) == 0 ? name + 9 : name);
	}
	fprintf(out, "\n");
	const struct ut_tracepoint *complete = ut_kernel_tracepoint(k, "io_uring", "io_uring_complete");
	if (!complete)
		return;
	bool has_req = false;
	for (unsigned f = 0; f < complete->nfields; f++)
		has_req |= strcmp(complete->fields[f].name, "req") == 0;
	fprintf(out, "               completions %s\n", has_req ? "name their request"
			: "do not name their request: matched to it by user_data");
}

int ut_print_info(FILE *out)
{
	struct ut_kernel *k = ut_kernel_open();
	bool ok = true;
	fprintf(out, "kernel:        %s\n", ut_kernel_release(k));
	struct stat st;
	if (stat("/sys/kernel/btf/vmlinux", &st) == 0) {
		fprintf(out, "BTF:           /sys/kernel/btf/vmlinux (%lld KiB)\n", (long long)st.st_size / 1024);
	} else {
		fprintf(out, "BTF:           missing (the kernel needs CONFIG_DEBUG_INFO_BTF=y)\n");
		ok = false;
	}
	char **names = NULL;
	int n = ut_kernel_tracepoints_matching(k, "io_uring:*", &names);
	if (n >= 0)
		fprintf(out, "tracefs:       ok, %d io_uring tracepoints\n", n);
	else
		fprintf(out, "tracefs:       unavailable: %s\n", ut_kernel_error(k));
	if (n > 0) {
		print_io_uring_events(k, names, n, out);
		ut_strv_free(names, n);
	}
	ok &= n >= 0;

	uint64_t caps = effective_caps();
	bool bpf = caps >> 39 & 1, perfmon = caps >> 38 & 1, admin = caps >> 21 & 1;
	fprintf(out, "capabilities:  CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s\n", bpf ? "yes" : "no",
		perfmon ? "yes" : "no", admin ? "yes" : "no");
	if (!(bpf && perfmon) && !admin) {
		fprintf(out, "               tracing needs CAP_BPF and CAP_PERFMON (or root)\n");
		ok = false;
	}
	char buf[256];
	read_line("/sys/kernel/security/lockdown", buf, sizeof(buf));
	fprintf(out, "lockdown:      %s\n", buf);
	read_line("/proc/sys/kernel/unprivileged_bpf_disabled", buf, sizeof(buf));
	fprintf(out, "unprivileged_bpf_disabled: %s\n", buf);

	fprintf(out, "probe kinds (by trial load and attach):\n");
	bool any = false;
	for (unsigned kind = 0; kind < UT_PROBE_KIND_COUNT; kind++) {
		const struct probe_kind_def *def = probe_kind_def(kind);
		if (!def->info_target)
			continue;
		/* a probe of the kind on a target every kernel has */
		const struct ut_alt a = {.kind = kind, .target = (char *)def->info_target};
		char why[200] = "";
		bool yes = def->exists(k, &a, why, sizeof(why)) && probe_kind_available(k, &a, why, sizeof(why));
		any |= yes;
		fprintf(out, "  %-11s %s%s%s\n", def->name, yes ? "works" : "no", why[0] && !yes ? ": " : "",
			yes ? "" : why);
	}
	ok &= any;

	char dir[4096], err[256];
	if (ut_cache_dir(dir, sizeof(dir), err, sizeof(err)) == 0)
		fprintf(out, "cache:         %s\n", dir);
	else
		fprintf(out, "cache:         unavailable: %s\n", err);
	const struct ut_bpfcc *cc = ut_bpfcc_get(err, sizeof(err));
	fprintf(out, "compiler:      %s\n", cc ? cc->version() : err);
	ut_kernel_close(k);
	fprintf(out, "verdict:       %s\n", ok ? "tracing works here" : "tracing cannot work here (see above)");
	return ok ? 0 : 1;
}
