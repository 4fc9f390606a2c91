#include "runtime/attach.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/kernel.h"

/* The kernel's internal "not supported" errno, seen from BPF_PROG_LOAD. */
#define ENOTSUPP_KERNEL 524

struct kind_info {
	bool bpf;                      /* has a BPF program */
	enum bpf_prog_type prog_type;  /* for the trial load */
	enum bpf_attach_type attach_type;
	bool slow_detach;
};

static const struct kind_info kinds[UT_PROBE_KIND_COUNT] = {
	[UT_PROBE_TRACEPOINT] = {true, BPF_PROG_TYPE_TRACEPOINT, 0, true},
	[UT_PROBE_TP_BTF] = {true, BPF_PROG_TYPE_TRACING, BPF_TRACE_RAW_TP, false},
	[UT_PROBE_RAW_TP] = {true, BPF_PROG_TYPE_RAW_TRACEPOINT, 0, false},
	[UT_PROBE_KPROBE] = {true, BPF_PROG_TYPE_KPROBE, 0, true},
	[UT_PROBE_KRETPROBE] = {true, BPF_PROG_TYPE_KPROBE, 0, true},
	[UT_PROBE_FENTRY] = {true, BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, false},
	[UT_PROBE_FEXIT] = {true, BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, false},
	[UT_PROBE_UPROBE] = {true, BPF_PROG_TYPE_KPROBE, 0, true},
	[UT_PROBE_URETPROBE] = {true, BPF_PROG_TYPE_KPROBE, 0, true},
	[UT_PROBE_INTERVAL] = {true, BPF_PROG_TYPE_PERF_EVENT, 0, false},
	[UT_PROBE_BEGIN] = {false, 0, 0, false},
	[UT_PROBE_END] = {false, 0, 0, false},
};

const char *ut_kind_name(enum ut_probe_kind kind)
{
	return probe_kind_name(kind);
}

bool ut_kind_is_bpf(enum ut_probe_kind kind)
{
	return kinds[kind].bpf;
}

bool ut_kind_slow_detach(enum ut_probe_kind kind)
{
	return kinds[kind].slow_detach;
}

/* Splits "a<sep>b" at the last sep into the two buffers; false if absent. */
static bool split_last(const char *s, char sep, char *a, size_t alen, char *b, size_t blen)
{
	const char *at = strrchr(s, sep);
	if (!at || at == s || !at[1] || (size_t)(at - s) >= alen)
		return false;
	memcpy(a, s, (size_t)(at - s));
	a[at - s] = 0;
	snprintf(b, blen, "%s", at + 1);
	return true;
}

/* "cat/name" (or "cat:name") */
static bool split_tracepoint(const char *target, char *cat, size_t clen, char *name, size_t nlen)
{
	return split_last(target, '/', cat, clen, name, nlen) ||
	       split_last(target, ':', cat, clen, name, nlen);
}

/* BTF id the kernel needs at load time for tracing kinds: the FUNC, or the
 * typedef btf_trace_<tracepoint>.  0 when absent or without BTF. */
static int btf_target_id(struct ut_kernel *k, enum ut_probe_kind kind, const char *target)
{
	int id = kind == UT_PROBE_TP_BTF || kind == UT_PROBE_RAW_TP ? ut_kernel_tp_btf_typedef(k, target)
								 : ut_kernel_find(k, target, BTF_KIND_FUNC);
	return id > 0 ? id : 0;
}

/* The body reads arguments by position with the compiling kernel's types. */
static bool same_signature(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	char here[1024];
	bool tracepoint = alt->kind == UT_PROBE_TP_BTF || alt->kind == UT_PROBE_RAW_TP;
	if (!alt->signature || ut_kernel_signature(k, alt->target, tracepoint, here, sizeof(here)) < 0 ||
	    strcmp(here, alt->signature) == 0)
		return true;
	snprintf(why, len, "arguments differ: compiled for (%s), this kernel has (%s)", alt->signature, here);
	return false;
}

bool ut_target_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	char a[256], b[256];
	switch (alt->kind) {
	case UT_PROBE_TRACEPOINT:
		if (!split_tracepoint(alt->target, a, sizeof(a), b, sizeof(b))) {
			snprintf(why, len, "bad tracepoint name");
			return false;
		}
		if (ut_kernel_tracepoint(k, a, b))
			return true;
		if (strstr(ut_kernel_error(k), "tracefs"))  /* no tracefs at all */
			snprintf(why, len, "%s", ut_kernel_error(k));
		else
			snprintf(why, len, "no such tracepoint");
		return false;
	case UT_PROBE_TP_BTF:
	case UT_PROBE_RAW_TP:
	case UT_PROBE_KPROBE:
	case UT_PROBE_KRETPROBE:
	case UT_PROBE_FENTRY:
	case UT_PROBE_FEXIT:
		if (!ut_kernel_btf(k)) {
			/* Without BTF only tp_btf/fentry are impossible; others may
			 * still attach, so let the attempt decide. */
			bool needs_btf = kinds[alt->kind].prog_type == BPF_PROG_TYPE_TRACING;
			if (needs_btf)
				snprintf(why, len, "no kernel BTF");
			return !needs_btf;
		}
		if (!btf_target_id(k, alt->kind, alt->target)) {
			snprintf(why, len, alt->kind == UT_PROBE_TP_BTF || alt->kind == UT_PROBE_RAW_TP
						   ? "no such tracepoint in kernel BTF"
						   : "no such function in kernel BTF");
			return false;
		}
		return same_signature(k, alt, why, len);
	case UT_PROBE_UPROBE:
	case UT_PROBE_URETPROBE:
		if (!split_last(alt->target, ':', a, sizeof(a), b, sizeof(b))) {
			snprintf(why, len, "bad uprobe target (want /path:symbol)");
			return false;
		}
		if (access(a, R_OK) == 0)
			return true;
		snprintf(why, len, "%s: %s", a, strerror(errno));
		return false;
	case UT_PROBE_INTERVAL:
		if (strtoull(alt->target, NULL, 10) > 0)
			return true;
		snprintf(why, len, "bad interval period");
		return false;
	default:
		snprintf(why, len, "not a BPF probe");
		return false;
	}
}

enum verdict { UNKNOWN, AVAILABLE, UNAVAILABLE };
static enum verdict kind_verdict[UT_PROBE_KIND_COUNT];
static char kind_why[UT_PROBE_KIND_COUNT][160];

/* Errors that condemn the kind, not one target. */
static bool kind_level_errno(int e)
{
	return e == EPERM || e == EACCES || e == EOPNOTSUPP || e == ENOTSUPP_KERNEL;
}

static bool probe_facility_exists(const char *pmu, const char *events_file)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (access(path, R_OK) == 0)
		return true;
	const char *tracefs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tracefs[i], events_file);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* Loads `r0 = 0; exit` as the kind's program type and, for kinds attached
 * by BPF link, attaches it.  1: kind works; 0: kind unavailable; -1: only
 * this target failed. */
static int trial(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	const struct kind_info *info = &kinds[alt->kind];
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = info->attach_type);
	bool tracing = info->prog_type == BPF_PROG_TYPE_TRACING;
	if (tracing) {
		opts.attach_btf_id = btf_target_id(k, alt->kind, alt->target);
		if (!opts.attach_btf_id) {
			snprintf(why, len, "no kernel BTF");
			return 0;
		}
	}
	int fd = bpf_prog_load(info->prog_type, "ut_trial", "GPL", insns, 2, &opts);
	if (fd < 0) {
		int e = errno;
		snprintf(why, len, "%s programs refused: %s", probe_kind_name(alt->kind), strerror(e));
		return kind_level_errno(e) ? 0 : -1;
	}
	int rc = 1;
	if (tracing || alt->kind == UT_PROBE_RAW_TP) {
		/* BPF links detach in well under a millisecond: cheap to try. */
		int link = bpf_raw_tracepoint_open(tracing ? NULL : alt->target, fd);
		if (link < 0) {
			int e = errno;
			snprintf(why, len, "%s attach refused: %s", probe_kind_name(alt->kind), strerror(e));
			rc = kind_level_errno(e) ? 0 : -1;
		} else {
			close(link);
		}
	} else if ((alt->kind == UT_PROBE_KPROBE || alt->kind == UT_PROBE_KRETPROBE) &&
		   !probe_facility_exists("kprobe", "kprobe_events")) {
		snprintf(why, len, "kernel has no kprobes");
		rc = 0;
	} else if ((alt->kind == UT_PROBE_UPROBE || alt->kind == UT_PROBE_URETPROBE) &&
		   !probe_facility_exists("uprobe", "uprobe_events")) {
		snprintf(why, len, "kernel has no uprobes");
		rc = 0;
	}
	close(fd);
	return rc;
}

bool ut_kind_available(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	enum ut_probe_kind kind = alt->kind;
	if (kind_verdict[kind] == UNKNOWN) {
		char trial_why[160] = "";
		int rc = trial(k, alt, trial_why, sizeof(trial_why));
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

bool ut_kind_refused(enum ut_probe_kind kind)
{
	return kind_verdict[kind] == UNAVAILABLE;
}

int ut_prepare_program(struct bpf_program *prog, const struct ut_alt *alt)
{
	if (kinds[alt->kind].prog_type != BPF_PROG_TYPE_TRACING)
		return 0;
	return bpf_program__set_attach_target(prog, 0, alt->target);
}

/* A software cpu-clock event on CPU 0 firing every period_ns. */
static struct bpf_link *attach_interval(struct bpf_program *prog, const char *period)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = strtoull(period, NULL, 10),
	};
	int pfd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return NULL;
	struct bpf_link *link = bpf_program__attach_perf_event(prog, pfd);
	if (!link) {
		int e = errno;
		close(pfd);
		errno = e;
	}
	return link;  /* the link owns pfd now */
}

struct bpf_link *ut_attach_program(struct bpf_program *prog, const struct ut_alt *alt)
{
	char a[256], b[256];
	switch (alt->kind) {
	case UT_PROBE_TRACEPOINT:
		if (!split_tracepoint(alt->target, a, sizeof(a), b, sizeof(b)))
			break;
		return bpf_program__attach_tracepoint(prog, a, b);
	case UT_PROBE_RAW_TP:
		return bpf_program__attach_raw_tracepoint(prog, alt->target);
	case UT_PROBE_TP_BTF:
	case UT_PROBE_FENTRY:
	case UT_PROBE_FEXIT:
		return bpf_program__attach_trace(prog);
	case UT_PROBE_KPROBE:
	case UT_PROBE_KRETPROBE:
		return bpf_program__attach_kprobe(prog, alt->kind == UT_PROBE_KRETPROBE, alt->target);
	case UT_PROBE_UPROBE:
	case UT_PROBE_URETPROBE: {
		if (!split_last(alt->target, ':', a, sizeof(a), b, sizeof(b)))
			break;
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = b,
			    .retprobe = alt->kind == UT_PROBE_URETPROBE);
		return bpf_program__attach_uprobe_opts(prog, -1, a, 0, &opts);
	}
	case UT_PROBE_INTERVAL:
		return attach_interval(prog, alt->target);
	default:
		break;
	}
	errno = EINVAL;
	return NULL;
}
