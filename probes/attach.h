/* Helpers of the kinds' runtime hooks (probes/attach.c): trial loads,
 * BTF targets, link sets.  Internal to probes/. */
#ifndef UT_PROBES_ATTACH_H
#define UT_PROBES_ATTACH_H
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "probes/kind.h"

/* The exists hook of kinds on a file's code (uprobes, USDT): true when
 * path can be read, else false with why. */
bool probe_file_readable(const char *path, char *why, size_t len);

/* Splits "a<sep>b" at the last sep into the two buffers; false if absent. */
bool probe_split_last(const char *s, char sep, char *a, size_t alen, char *b, size_t blen);

/* BTF id the kernel needs at load time for tracing programs: the typedef
 * btf_trace_<tracepoint> (tracepoint), else the FUNC.  0 when absent or
 * without BTF. */
int probe_btf_target_id(struct ut_kernel *k, bool tracepoint, const char *target);
/* The exists hook of BTF kinds: the target is in the kernel's BTF, with
 * the argument types the body was compiled for.  needs_btf: without
 * kernel BTF the kind cannot load at all (tracing programs); else the
 * attempt decides. */
bool probe_btf_target_exists(struct ut_kernel *k, const struct ut_alt *alt, bool needs_btf, bool tracepoint, char *why,
			     size_t len);

/* Loads `r0 = 0; exit` as a program of type for alt's kind (attach_type
 * and attach_btf_id as tracing programs need them).  1: loaded, its fd in
 * *fd, or closed at once when fd is NULL; 0: the kernel refuses the kind;
 * -1: only this target failed.  why says which. */
int probe_trial_load(const struct ut_alt *alt, enum bpf_prog_type type, enum bpf_attach_type attach_type,
		     int attach_btf_id, int *fd, char *why, size_t len);
/* Attaches trial program fd as a BPF link (to the raw tracepoint raw_tp,
 * or NULL: the target given at load), closes both: BPF links detach in
 * well under a millisecond.  1, 0 or -1 as probe_trial_load. */
int probe_trial_link(const struct ut_alt *alt, int fd, const char *raw_tp, char *why, size_t len);
/* The trial of tracing programs (tp_btf, fentry, fexit): loaded on alt's
 * BTF target and attached. */
int probe_trial_tracing(struct ut_kernel *k, const struct ut_alt *alt, enum bpf_attach_type attach_type, bool tracepoint,
			char *why, size_t len);
/* The trial of kprobe-type programs: loaded, and the kernel has the PMU
 * ("kprobe", "uprobe") or its tracefs events file. */
int probe_trial_pmu(const struct ut_alt *alt, const char *pmu, char *why, size_t len);

/* The prepare hook of tracing programs: the BTF target, set before load. */
int probe_prepare_tracing(struct ut_kernel *k, struct bpf_object *obj, struct bpf_program *prog,
			  const struct ut_alt *alt);
/* The attach hook of tracing programs. */
int probe_attach_tracing(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links);

/* Adds link, as an attach function of libbpf returned it, to links: 0, or
 * a negative errno when link is NULL (libbpf's errno) or there is no
 * memory (link is then destroyed). */
int probe_links_add(struct ut_links *links, struct bpf_link *link);

#endif
