/* Helpers of the kinds' runtime hooks, and the verdicts of their trials. */
#include "probes/attach.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "kernel/kernel.h"

/* The kernel's internal "not supported" errno, seen from BPF_PROG_LOAD. */
#define ENOTSUPP_KERNEL 524

bool probe_file_readable(const char *path, char *why, size_t len)
{
	if (access(path, R_OK) == 0)
		return true;
	snprintf(why, len, "%s: %s", path, strerror(errno));
	return false;
}

bool probe_split_last(const char *s, char sep, char *a, size_t alen, char *b, size_t blen)
{
	const char *at = strrchr(s, sep);
	if (!at || at == s || !at[1] || (size_t)(at - s) >= alen)
		return false;
	memcpy(a, s, (size_t)(at - s));
	a[at - s] = 0;
	snprintf(b, blen, "%s", at + 1);
	return true;
}

int probe_btf_target_id(struct ut_kernel *k, bool tracepoint, const char *target)
{
	int id = tracepoint ? ut_kernel_tp_btf_typedef(k, target) : ut_kernel_find(k, target, BTF_KIND_FUNC);
	return id > 0 ? id : 0;
}

/* The body reads arguments by position with the compiling kernel's types. */
static bool same_signature(struct ut_kernel *k, const struct ut_alt *alt, bool tracepoint, char *why, size_t len)
{
	char here[1024];
	if (!alt->signature || ut_kernel_signature(k, alt->target, tracepoint, here, sizeof(here)) < 0 ||
	    strcmp(here, alt->signature) == 0)
		return true;
	snprintf(why, len, "arguments differ: compiled for (%s), this kernel has (%s)", alt->signature, here);
	return false;
}

bool probe_btf_target_exists(struct ut_kernel *k, const struct ut_alt *alt, bool needs_btf, bool tracepoint, char *why,
			     size_t len)
{
	if (!ut_kernel_btf(k)) {
		/* Without BTF only tp_btf/fentry are impossible; others may
		 * still attach, so let the attempt decide. */
		if (needs_btf)
			snprintf(why, len, "no kernel BTF");
		return !needs_btf;
	}
	if (!probe_btf_target_id(k, tracepoint, alt->target)) {
		snprintf(why, len, tracepoint ? "no such tracepoint in kernel BTF" : "no such function in kernel BTF");
		return false;
	}
	return same_signature(k, alt, tracepoint, why, len);
}

/* Errors that condemn the kind, not one target. */
static bool kind_level_errno(int e)
{
	return e == EPERM || e == EACCES || e == EOPNOTSUPP || e == ENOTSUPP_KERNEL;
}

int probe_trial_load(const struct ut_alt *alt, enum bpf_prog_type type, enum bpf_attach_type attach_type,
		     int attach_btf_id, int *fd, char *why, size_t len)
{
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type, .attach_btf_id = (__u32)attach_btf_id);
	int prog = bpf_prog_load(type, "ut_trial", "GPL", insns, 2, &opts);
	if (prog < 0) {
		int e = errno;
		snprintf(why, len, "%s programs refused: %s", probe_kind_name(alt->kind), strerror(e));
		return kind_level_errno(e) ? 0 : -1;
	}
	if (fd)
		*fd = prog;
	else
		close(prog);
	return 1;
}

int probe_trial_link(const struct ut_alt *alt, int fd, const char *raw_tp, char *why, size_t len)
{
	int rc = 1;
	int link = bpf_raw_tracepoint_open(raw_tp, fd);
	if (link < 0) {
		int e = errno;
		snprintf(why, len, "%s attach refused: %s", probe_kind_name(alt->kind), strerror(e));
		rc = kind_level_errno(e) ? 0 : -1;
	} else {
		close(link);
	}
	close(fd);
	return rc;
}

int probe_trial_tracing(struct ut_kernel *k, const struct ut_alt *alt, enum bpf_attach_type attach_type, bool tracepoint,
			char *why, size_t len)
{
	int id = probe_btf_target_id(k, tracepoint, alt->target);
	if (!id) {
		snprintf(why, len, "no kernel BTF");
		return 0;
	}
	int fd;
	int rc = probe_trial_load(alt, BPF_PROG_TYPE_TRACING, attach_type, id, &fd, why, len);
	return rc == 1 ? probe_trial_link(alt, fd, NULL, why, len) : rc;
}

static bool pmu_exists(const char *pmu)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (access(path, R_OK) == 0)
		return true;
	const char *tracefs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s_events", tracefs[i], pmu);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

int probe_trial_pmu(const struct ut_alt *alt, const char *pmu, char *why, size_t len)
{
	int rc = probe_trial_load(alt, BPF_PROG_TYPE_KPROBE, 0, 0, NULL, why, len);
	if (rc == 1 && !pmu_exists(pmu)) {
		snprintf(why, len, "kernel has no %ss", pmu);
		rc = 0;
	}
	return rc;
}

int probe_prepare_tracing(struct ut_kernel *k, struct bpf_object *obj, struct bpf_program *prog,
			  const struct ut_alt *alt)
{
	(void)k;
	(void)obj;
	return bpf_program__set_attach_target(prog, 0, alt->target);
}

int probe_attach_tracing(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	(void)alt;
	return probe_links_add(links, bpf_program__attach_trace(prog));
}

int probe_links_add(struct ut_links *links, struct bpf_link *link)
{
	if (!link)
		return errno ? -errno : -EINVAL;
	if (links->n == links->cap) {
		links->cap = links->cap ? links->cap * 2 : 1;
		links->v = xrealloc_array(links->v, links->cap, sizeof(*links->v));
	}
	links->v[links->n++] = link;
	return 0;
}

/* ---- verdicts: a kind's trial once per process ---- */

enum verdict { UNKNOWN, AVAILABLE, UNAVAILABLE };
static enum verdict kind_verdict[UT_PROBE_KIND_COUNT];
static char kind_why[UT_PROBE_KIND_COUNT][160];

bool probe_kind_available(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	enum ut_probe_kind kind = alt->kind;
	if (kind_verdict[kind] == UNKNOWN) {
		char trial_why[160] = "";
		int rc = probe_kind_def(kind)->trial(k, alt, trial_why, sizeof(trial_why));
		if (rc < 0) {
			snprintf(why, len, "%s", trial_why);
			return false;
		}
		kind_verdict[kind] = rc ? AVAILABLE : UNAVAILABLE;
		snprintf(kind_why[kind], sizeof(kind_why[kind]), "%s", trial_why);
	}
	if (kind_verdict[kind] == AVAILABLE)
		return true;
	snprintf(why, len, "%s", kind_why[kind]);
	return false;
}

bool probe_kind_refused(enum ut_probe_kind kind)
{
	return kind_verdict[kind] == UNAVAILABLE;
}
