/* Record layouts shared by the BPF side (bpf/ut.h) and user space
 * (runtime/decode.c), and the arithmetic of aggregations, which BPF maps
 * and the reader's maps (runtime/user_maps.c) share.  Needs __u32/__u64:
 * vmlinux.h in BPF programs, <linux/types.h> in user space. */
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

/* Records were lost: a CPU's hits between `since` and the header's time
 * could not be written (the ring was full, or hits nested too deep), or
 * the reader dropped records that came after it had written past their
 * time.  The CPU sends it before its next records; the reader puts it in
 * the stream in time order, and the trace ends there what was open
 * (engine/engine.h, ut_events_lost).  UT_LOST_SHED says instead that a
 * CPU shed whole requests (bpf/ut.h, ut_shed_end): nothing of theirs is
 * in the stream, and nothing open ends. */
#define UT_EVENT_LOST 0xfffffffeu
enum ut_lost_reason { UT_LOST_IN_KERNEL, UT_LOST_LATE, UT_LOST_SHED };
struct ut_lost_rec {
	struct ut_rec_hdr h;
	__u64 since;
	__u64 count;      /* probe hits (in the kernel) or records (late) lost; requests shed */
	__u64 reason;     /* enum ut_lost_reason */
};

/* The requests kernel-side code makes of the reader: indexes of bpf/ut.h's
 * ut_requests, each holding the time of the first call. */
enum ut_request_kind { UT_REQUEST_SNAPSHOT, UT_REQUEST_EXIT, UT_REQUESTS };

/* What each CPU keeps between hits: the threads its last hits ran on (a
 * thread among them skips the look-up in ut_seen_threads, an LRU hash and
 * the costliest part of a record at nop rates; a request's hits on one CPU
 * alternate between the application, idle and a kernel worker), whether the
 * process it filtered last is one that -c traces (the same for
 * ut_traced_tgids), the nesting depth of staged batches, the bytes it
 * wrote to the ring buffer (for the wake-up rule, without reading the
 * ring's shared positions), and what its outermost stage holds (bpf/ut.h,
 * ut_batch_end).  The runtime reads it to know how old a record the CPU
 * may still send (runtime/consumer.c): the times come first, so that a
 * copy taken while the CPU writes it sees them no newer than the depth
 * and sizes after them. */
#define UT_RECENT_TIDS 4
struct ut_cpu_state {
	__u64 hit_ts;      /* start of the outermost hit running, or of the last */
	__u64 held_since;  /* time of the oldest record held; meaningful while held */
	__u32 batch_depth;
	__u32 held;        /* bytes held */
	__u32 held_hits;
	__u32 recent_next;                   /* the entry of recent_tids the next thread takes */
	__u32 recent_tids[UT_RECENT_TIDS];   /* each tid + 1 (0: none), all named */
	__u64 written;
	__u64 traced_verdict;  /* tgid << 32 | low 31 bits of ut_traced_changes << 1 | traced */
	/* hits lost since the CPU last told the reader (ut_lost_rec) */
	__u64 lost_since, lost_until, lost_hits;
	/* requests shed (bpf/ut.h, ut_shed_end): in all, and since the CPU
	 * last told the reader; whether the CPU sheds the requests it sees
	 * begin (the ring's unread bytes when it last sent a sample) */
	__u64 shed_requests;
	__u64 shed_since, shed_until, shed_untold;
	__u64 shed_looked;   /* when ut_shed_end last looked at the ring */
	__u32 shedding;
	__u32 shed_pad;
};

struct ut_probe_counters {
	__u64 emitted;
	__u64 lost;
};

/* ---- aggregations: one arithmetic for BPF maps and the reader's, so
 * both hold the same values and bucket numbers.  Sums wrap, as BPF's
 * arithmetic does; they are written unsigned because signed overflow is
 * undefined in user space C. ---- */

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* avg keeps {sum, count}; min and max keep {value, set}. */
struct ut_avg {
	__s64 sum;
	__u64 count;
};

static __always_inline void ut_avg_take(struct ut_avg *p, __s64 v)
{
	p->sum = (__s64)((__u64)p->sum + (__u64)v);
	p->count++;
}

static __always_inline void ut_minmax_take(struct ut_avg *p, __s64 v, int is_min)
{
	if (!p->count || (is_min ? v < p->sum : v > p->sum)) {
		p->sum = v;
		p->count = 1;
	}
}

/* log2 buckets: 0 holds negatives, 1 holds 0, k >= 2 holds [2^(k-2), 2^(k-1)).
 * The halvings without a branch: each shifts x by k when x is above
 * 2^k - 1 (that bound minus x, x below 2^63, wraps to its top bit).  In
 * a loop the kernel checks with a numbers iterator (bpf/ut.h,
 * UT_ITER_LOOPS) the verifier tells paths apart by the constants they
 * leave: six ifs here made 64 paths, each iteration's paths multiplied
 * by them. */
static __always_inline __u64 ut_log2_bucket(__s64 v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	__u64 x = (__u64)v, r = 0;
	for (unsigned k = 32; k > 1; k >>= 1) {
		__u64 s = (((1ull << k) - 1 - x) >> 63) * k;
		x >>= s;
		r |= s;
	}
	return (r | (x >> 1)) + 2;   /* x is 1, 2 or 3 */
}

/* linear buckets: 0 below min, 1 + (v - min) / step inside, last at or
 * above max (step > 0). */
static __always_inline __u64 ut_lin_bucket(__s64 v, __s64 min, __s64 max, __s64 step)
{
	if (v < min)
		return 0;
	if (v >= max)
		return 1 + ((__u64)max - (__u64)min + (__u64)step - 1) / (__u64)step;
	return 1 + ((__u64)v - (__u64)min) / (__u64)step;
}

#endif
