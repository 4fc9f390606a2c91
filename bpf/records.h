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

/* What each CPU keeps between hits: the thread it named last (while that
 * thread keeps running its records skip the look-up in ut_seen_threads, an
 * LRU hash and the costliest part of a record at nop rates), whether the
 * process it filtered last is one that -c traces (the same for
 * ut_traced_tgids), the nesting depth of staged batches, the bytes it
 * wrote to the ring buffer (for the wake-up rule, without reading the
 * ring's shared positions), and what its outermost stage holds (bpf/ut.h,
 * ut_batch_end).  The runtime reads it to know how old a record the CPU
 * may still send (runtime/consumer.c): the times come first, so that a
 * copy taken while the CPU writes it sees them no newer than the depth
 * and sizes after them. */
struct ut_cpu_state {
	__u64 hit_ts;      /* start of the outermost hit running, or of the last */
	__u64 held_since;  /* time of the oldest record held; meaningful while held */
	__u32 batch_depth;
	__u32 held;        /* bytes held */
	__u32 held_hits;
	__u32 last_tid;
	__u64 written;
	__u64 traced_verdict;  /* tgid << 32 | low 31 bits of ut_traced_changes << 1 | traced */
};

struct ut_probe_counters {
	__u64 emitted;
	__u64 lost;
};

#endif
