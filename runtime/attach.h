/* Per probe kind: does a target exist on this kernel, can this kernel run
 * the kind at all (found by trial, once per kind), and how to prepare and
 * attach a program.  A new kind is one entry in the table in attach.c
 * (and one in the compiler's table). */
#ifndef UT_ATTACH_H
#define UT_ATTACH_H
#include <stdbool.h>
#include <stddef.h>
#include "compiler/program.h"

struct bpf_link;
struct bpf_program;
struct ut_kernel;

/* Kind name as used in messages: "tracepoint", "tp_btf", "fentry"... */
const char *ut_kind_name(enum ut_probe_kind kind);

/* Whether the kind attaches to the kernel (BEGIN and END are loaded but
 * run once from user space). */
bool ut_kind_is_bpf(enum ut_probe_kind kind);

/* true when alt's target exists here (tracepoint in tracefs, BTF typedef
 * btf_trace_<name>, BTF FUNC, uprobe binary); else false with why. */
bool ut_target_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len);

/* true when this kernel runs programs of alt's kind.  Decided by loading
 * (and for link-based kinds attaching) a two-instruction program the first
 * time; the verdict is kept for the process unless it concerned only this
 * target.  false with why. */
bool ut_kind_available(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len);

/* true when a trial in this process found that the kernel does not run
 * the kind (no trial is made here): for notes once the probes are loaded. */
bool ut_kind_refused(enum ut_probe_kind kind);

/* Before load: point the program at alt's target where the kernel needs
 * it at load time (tp_btf, fentry, fexit).  0 or negative errno. */
int ut_prepare_program(struct bpf_program *prog, const struct ut_alt *alt);

/* Attaches a loaded program; NULL with errno set on failure. */
struct bpf_link *ut_attach_program(struct bpf_program *prog, const struct ut_alt *alt);

/* Links whose close waits for an RCU grace period (perf-event based:
 * classic tracepoints, kprobes, uprobes). */
bool ut_kind_slow_detach(enum ut_probe_kind kind);

#endif
