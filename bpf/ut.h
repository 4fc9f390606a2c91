/* Shared BPF code that every generated program includes (after vmlinux.h
 * and after defining UT_NPROBES): the ring buffer, record emission with
 * batched wake-ups, per-probe counters of emitted and lost records, the
 * process filters and first-sight thread records. */
#ifndef UT_BPF_UT_H
#define UT_BPF_UT_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#ifndef UT_NPROBES
#error "define UT_NPROBES before including ut.h"
#endif

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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);   /* the runtime resizes it (--buffer) */
} ut_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UT_NPROBES + 1);   /* last slot: thread records */
	__type(key, __u32);
	__type(value, struct ut_probe_counters);
} ut_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} ut_seen_threads SEC(".maps");

/* Set by the runtime before load (read-only data, so the verifier prunes
 * what is switched off). */
const volatile __u32 ut_filter_tgid = 0;      /* -p / -c: 0 = any */
const volatile char ut_filter_comm[16] = {};  /* --comm: "" = any */
const volatile __u32 ut_sample_permyriad = 10000; /* --sample, per 10000 */
const volatile __u64 ut_wakeup_bytes = 256 << 10; /* wake the reader past this */

static __always_inline int ut_comm_matches(void)
{
	char comm[16];
	if (ut_filter_comm[0] == 0)
		return 1;
	bpf_get_current_comm(comm, sizeof(comm));
	for (int i = 0; i < 16; i++) {
		if (comm[i] != ut_filter_comm[i])
			return 0;
		if (comm[i] == 0)
			break;
	}
	return 1;
}

/* Whole-script filter: the process (all its threads, including io-wq
 * workers, which share its tgid) and/or the command name. */
static __always_inline int ut_pass_filter(void)
{
	if (ut_filter_tgid && (bpf_get_current_pid_tgid() >> 32) != ut_filter_tgid)
		return 0;
	return ut_comm_matches();
}

static __always_inline void ut_count(__u32 probe, int lost)
{
	struct ut_probe_counters *c = bpf_map_lookup_elem(&ut_counters, &probe);
	if (!c)
		return;
	if (lost)
		c->lost++;
	else
		c->emitted++;
}

static __always_inline void *ut_reserve(__u32 size, __u32 event, __u32 probe)
{
	struct ut_rec_hdr *h = bpf_ringbuf_reserve(&ut_events, size, 0);
	if (!h) {
		ut_count(probe, 1);
		return 0;
	}
	__u64 id = bpf_get_current_pid_tgid();
	h->ts = bpf_ktime_get_ns();
	h->event = event;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
	return h;
}

/* Wake the reader only when enough data is pending; it also polls with a
 * timeout, so nothing waits long. */
static __always_inline void ut_submit(void *rec, __u32 probe)
{
	__u64 flags = bpf_ringbuf_query(&ut_events, BPF_RB_AVAIL_DATA) >= ut_wakeup_bytes
			      ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
	ut_count(probe, 0);
}

/* First sight of a thread: emit its name and its process's name. */
static __always_inline void ut_note_thread(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;
	if (bpf_map_lookup_elem(&ut_seen_threads, &tid))
		return;
	bpf_map_update_elem(&ut_seen_threads, &tid, &one, BPF_ANY);
	struct ut_thread_rec *r = ut_reserve(sizeof(*r), UT_EVENT_THREAD, UT_NPROBES);
	if (!r)
		return;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&r->pcomm, t, group_leader, comm);
	ut_submit(r, UT_NPROBES);
}

char LICENSE[] SEC("license") = "GPL";

#endif
