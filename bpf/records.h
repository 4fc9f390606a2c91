/* Record layouts shared by the BPF side (bpf/ut.h) and user space
 * (runtime/decode.c).  Needs __u32/__u64: vmlinux.h in BPF programs,
 * <linux/types.h> in user space. */
#ifndef UT_BPF_RECORDS_H
#define UT_BPF_RECORDS_H

/* Every record starts with this header; the runtime decodes the rest with
 * the compiler's layout table (compiler/program.h). */
struct ut_rec_hdr {
	__u64 ts;      /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 event;   /* index into ut_program.events, or UT_EVENT_THREAD */
	__u32 pid;     /* tgid */
	__u32 tid;
	__u32 cpu;
};

/* Emitted the first time a thread is seen, so the trace can name it even
 * when it exits before user space looks. */
#define UT_EVENT_THREAD 0xffffffffu
struct ut_thread_rec {
	struct ut_rec_hdr h;
	char comm[16];
	char pcomm[16];   /* the process (thread group leader) */
};

struct ut_probe_counters {
	__u64 emitted;
	__u64 lost;
};

#endif
