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

#include "records.h"

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


struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ut_cpu_state);
} ut_cpu SEC(".maps");

/* The context pointer p, as the compiler cannot tell it is the one it had:
 * a read of a field through it is a load at a constant offset from the
 * context.  Two reads of one field with a helper call between them (which
 * may have changed memory, as far as the compiler knows) were compiled as
 * the context plus the offset, kept in a register, then a load through it:
 * "dereference of modified ctx ptr", which the verifier refuses. */
#define ut_ctx(p) ({ typeof(p) ut_p = (p); asm volatile("" : "+r"(ut_p)); ut_p; })

static __always_inline struct ut_cpu_state *ut_cpu_state(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&ut_cpu, &zero);
}

/* Orders a CPU's bookkeeping with the programs that can interrupt a hit on
 * that CPU between any two instructions (ut_flush, an interrupt's probe). */
#define ut_barrier() asm volatile("" ::: "memory")

/* Set by the runtime before load (read-only data, so the verifier prunes
 * what is switched off). */
const volatile __u32 ut_filter_tgid = 0;      /* -p / -c: 0 = any */
const volatile char ut_filter_comm[16] = {};  /* --comm: "" = any */
const volatile __u32 ut_sample_permyriad = 10000; /* --sample, per 10000 */
const volatile __u64 ut_wakeup_bytes = 256 << 10; /* wake the reader every this many bytes per CPU */
const volatile __u64 ut_start_ns = 0;         /* bpf_ktime_get_ns() when loaded: `elapsed` counts from it */
/* Records of hits at the outermost level are held in the CPU's stage until
 * it holds this many bytes (0: each hit's records go out at its end); the
 * runtime sets 0 where it cannot flush a CPU's stage itself (ut_flush). */
#define UT_HOLD_MAX 2048
const volatile __u32 ut_hold_bytes = UT_HOLD_MAX;
/* Shedding (ut_shed_end): a CPU that finds more than ut_shed_above bytes
 * unread in the ring when it sends a sample sheds the requests it sees
 * begin, until it finds less than ut_shed_below; 0: it never sheds.  The
 * runtime sets them to half and a quarter of the ring. */
const volatile __u64 ut_shed_above = 0;
const volatile __u64 ut_shed_below = 0;

/* Whether the CPU sheds the requests it sees begin: past ut_shed_above
 * bytes unread in the ring, until back under ut_shed_below.  Looked at
 * once a sample the CPU sends, and while it sheds at most every 50 us of
 * the requests it sheds (a CPU shedding all it sees sends nothing): the
 * ring's positions are lines the reader writes. */
#define UT_SHED_LOOK_NS 50000
static __always_inline void ut_look_at_ring(struct ut_cpu_state *st)
{
	if (!ut_shed_above)
		return;
	__u64 unread = bpf_ringbuf_query(&ut_events, BPF_RB_AVAIL_DATA);
	st->shedding = unread > (st->shedding ? ut_shed_below : ut_shed_above);
}

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

/* -c: the processes the command started, at any depth, by tgid (the
 * command itself is ut_filter_tgid).  A process a traced one forks goes in
 * before it first runs (ut_follow_fork) and leaves when it is freed
 * (ut_follow_free), before its pid can be reused.  The runtime sets
 * ut_follow_forks and sizes the map (1 entry without -c).  Preallocated:
 * an interval probe (a perf_event program) may read `traced`, and such
 * programs may use no other hash map. */
const volatile __u32 ut_follow_forks = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u8);
} ut_traced_tgids SEC(".maps");

/* Changes made to ut_traced_tgids: a CPU's verdict on a process stands
 * while there are none.  (Not even the same pid is the same process
 * after one.) */
__u64 ut_traced_changes = 0;

/* bpf_get_current_pid_tgid(), read at the hit's first need of it into
 * *id, the program's ut_id (a helper call costs 8-10 ns a hit).  The idle
 * task's ids are 0: read again at each need. */
static __always_inline __u64 ut_pid_tgid(__u64 *id)
{
	if (!*id)
		*id = bpf_get_current_pid_tgid();
	return *id;
}

/* The command's own process costs one compare; the processes it started
 * a look-up in ut_traced_tgids, unless the CPU's last verdict was on the
 * same process, with no change since (a hash look-up costs about 25 ns a
 * hit: docs/runtime.md).  The verdict is one word, written whole, so a
 * program interrupting another on this CPU does not tear it. */
static __always_inline int ut_tgid_traced(__u32 tgid)
{
	if (tgid == ut_filter_tgid)
		return 1;
	if (!ut_follow_forks)
		return 0;
	__u64 asked = (__u64)tgid << 32 | (__u32)(ut_traced_changes << 1);
	struct ut_cpu_state *st = ut_cpu_state();
	if (st && (st->traced_verdict & ~1ull) == asked)
		return st->traced_verdict & 1;
	int traced = bpf_map_lookup_elem(&ut_traced_tgids, &tgid) != 0;
	if (st)
		st->traced_verdict = asked | traced;
	return traced;
}

/* Whole-script filter: the process (all its threads, including io-wq
 * workers, which share its tgid) and with -c the processes it started,
 * and/or the command name. */
static __always_inline int ut_pass_filter(__u64 *id)
{
	if (ut_filter_tgid && !ut_tgid_traced(ut_pid_tgid(id) >> 32))
		return 0;
	return ut_comm_matches();
}

/* Counts hits of the probe as emitted, or as lost (the ring was full). */
static __always_inline void ut_count_hits(__u32 probe, int lost, __u32 hits)
{
	struct ut_probe_counters *c = bpf_map_lookup_elem(&ut_counters, &probe);
	if (!c)
		return;
	if (lost)
		c->lost += hits;
	else
		c->emitted += hits;
}

static __always_inline void ut_count(__u32 probe, int lost)
{
	ut_count_hits(probe, lost, 1);
}

/* id: bpf_get_current_pid_tgid() (a hit reads it once: ut_pid_tgid) */
static __always_inline void ut_header(struct ut_rec_hdr *h, __u32 event, __u64 ts, __u64 id)
{
	h->ts = ts;
	h->event = event;
	h->pid = id >> 32;
	h->tid = (__u32)id;
	h->cpu = bpf_get_smp_processor_id();
}

static __always_inline void *ut_reserve(__u32 size, __u32 event, __u32 probe)
{
	struct ut_rec_hdr *h = bpf_ringbuf_reserve(&ut_events, size, 0);
	if (!h) {
		ut_count(probe, 1);
		return 0;
	}
	ut_header(h, event, bpf_ktime_get_ns(), bpf_get_current_pid_tgid());
	return h;
}

/* Wake the reader each time this CPU's output crosses a multiple of
 * ut_wakeup_bytes: a wake-up per record costs an interrupt each (a VM exit
 * under a hypervisor), and asking the ring how much is pending reads the
 * reader's position, a cache line the other CPU keeps writing.  The reader
 * also polls with a timeout, so a quiet trace is drained without them. */
static __always_inline __u64 ut_wakeup_flags(__u32 size)
{
	struct ut_cpu_state *st = ut_cpu_state();
	if (!st)
		return 0;
	__u64 before = st->written;
	st->written = before + size;
	return before / ut_wakeup_bytes != (before + size) / ut_wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;
}

static __always_inline void ut_submit(void *rec, __u32 size, __u32 probe)
{
	bpf_ringbuf_submit(rec, ut_wakeup_flags(size));
	ut_count(probe, 0);
}

/* A record of the current thread's name and its process's name; 0 when
 * the ring was full. */
static __always_inline int ut_name_thread(void)
{
	struct ut_thread_rec *r = ut_reserve(sizeof(*r), UT_EVENT_THREAD, UT_NPROBES);
	if (!r)
		return 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&r->pcomm, t, group_leader, comm);
	ut_submit(r, sizeof(*r), UT_NPROBES);
	return 1;
}

/* A thread none of this CPU's recent hits ran on: named unless seen
 * before.  A global function, out of line: the hits of a request
 * pass through half a dozen programs, and a program's instructions that
 * run rarely (this, sending the stage) were interleaved with the ones
 * that run at every hit, more instruction cache lines each. */
__noinline int ut_thread_seen(__u32 tid)
{
	__u8 one = 1;
	if (bpf_map_lookup_elem(&ut_seen_threads, &tid))
		return 0;
	bpf_map_update_elem(&ut_seen_threads, &tid, &one, BPF_ANY);
	if (!ut_name_thread()) {   /* named at its next record instead */
		bpf_map_delete_elem(&ut_seen_threads, &tid);
		struct ut_cpu_state *st = ut_cpu_state();
		for (int i = 0; st && i < UT_RECENT_TIDS; i++)
			if (st->recent_tids[i] == tid + 1)
				st->recent_tids[i] = 0;
	}
	return 0;
}

/* First sight of a thread: emit its name and its process's name.  (A
 * program interrupting this one may take the same entry of recent_tids:
 * a thread it drops is looked up again, no more.) */
static __always_inline void ut_note_thread(__u32 tid)
{
	struct ut_cpu_state *st = ut_cpu_state();
	if (st) {
		for (int i = 0; i < UT_RECENT_TIDS; i++)
			if (st->recent_tids[i] == tid + 1)
				return;
		__u32 next = st->recent_next;
		st->recent_tids[next & (UT_RECENT_TIDS - 1)] = tid + 1;
		st->recent_next = next + 1;
	}
	ut_thread_seen(tid);
}

/* snapshot() and exit() in the kernel: the time of the first call since
 * the reader last looked (0: none), at their index (bpf/records.h).  A
 * map the reader reads, not a record: a request must not be lost with the
 * records when the ring buffer is full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UT_REQUESTS);
	__uint(map_flags, BPF_F_MMAPABLE);   /* the reader loads exit's time at every record */
	__type(key, __u32);
	__type(value, __u64);
} ut_requests SEC(".maps");

static __always_inline void ut_request(__u32 what)
{
	__u64 *at = bpf_map_lookup_elem(&ut_requests, &what);
	if (at && !*at)
		*at = bpf_ktime_get_ns();
}

/* exit() was called, in the kernel or in the reader (which writes its
 * time here too). */
static __always_inline int ut_exited(void)
{
	__u32 exit = UT_REQUEST_EXIT;
	__u64 *at = bpf_map_lookup_elem(&ut_requests, &exit);
	return at && *at;
}

/* ntop(): an address as text, as inet_ntop(3) writes it (bpftrace's),
 * into out, UT_NTOP_BYTES long, by stores: the kernel's printf cannot
 * compress an IPv6 address and came with Linux 5.13. */
#define UT_NTOP_BYTES 48

static __always_inline void ut_ntop_put(char *out, __u32 *at, char c)
{
	__u32 i = *at;
	if (i < UT_NTOP_BYTES - 1) {
		/* clang would write out + i as out | i (the buffer is aligned
		 * and i small), which the verifier refuses on a pointer */
		asm volatile("" : "+r"(i));
		out[i] = c;
		*at = i + 1;
	}
}

static __always_inline void ut_ntop_decimal(char *out, __u32 *at, __u8 b)
{
	if (b >= 100)
		ut_ntop_put(out, at, '0' + b / 100);
	if (b >= 10)
		ut_ntop_put(out, at, '0' + b / 10 % 10);
	ut_ntop_put(out, at, '0' + b % 10);
}

/* bytes in network order: a.b.c.d */
static __always_inline void ut_ntop_dotted(char *out, __u32 *at, const __u8 *bytes)
{
#pragma unroll
	for (int i = 0; i < 4; i++) {
		if (i)
			ut_ntop_put(out, at, '.');
		ut_ntop_decimal(out, at, bytes[i]);
	}
}

/* addr: an IPv4 address as sockets keep it (network order in memory) */
static __always_inline void ut_ntop4(char *out, __u32 addr)
{
	__u32 at = 0;
	ut_ntop_dotted(out, &at, (const __u8 *)&addr);
}

/* addr: 16 bytes in the kernel.  The longest run of two or more zero
 * groups (the first of equal ones) is "::"; an IPv4-mapped or -compatible
 * address ends in dotted decimal, as glibc writes them. */
static __always_inline void ut_ntop6(char *out, const void *addr)
{
	__u8 b[16] = {};
	bpf_probe_read_kernel(b, sizeof(b), addr);
	__u16 w[8];
	int best = -1, best_len = 0, run = 0;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		w[i] = (__u16)(b[2 * i] << 8 | b[2 * i + 1]);
		run = w[i] ? 0 : run + 1;
		if (run > best_len) {
			best_len = run;
			best = i - run + 1;
		}
	}
	if (best_len < 2)
		best = -1;
	bool v4 = best == 0 && (best_len == 6 || (best_len == 7 && w[7] != 1) || (best_len == 5 && w[5] == 0xffff));
	__u32 at = 0;
#pragma unroll
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best)
				ut_ntop_put(out, &at, ':');
			if (i == best + best_len - 1 && i == 7)
				ut_ntop_put(out, &at, ':');
			continue;
		}
		if (v4 && i >= 6) {
			ut_ntop_put(out, &at, ':');
			ut_ntop_dotted(out, &at, b + 12);
			break;
		}
		if (i)
			ut_ntop_put(out, &at, ':');
		bool digits = false;
#pragma unroll
		for (int shift = 12; shift >= 0; shift -= 4) {
			__u8 d = (w[i] >> shift) & 0xf;
			if (d || digits || !shift) {
				ut_ntop_put(out, &at, d < 10 ? '0' + d : 'a' + d - 10);
				digits = true;
			}
		}
	}
}

/* macaddr(p): the 6 bytes at p (kernel or user memory) as bpftrace writes
 * a MAC address, AA:BB:CC:DD:EE:FF, into out (18 bytes). */
static __always_inline void ut_macaddr(char *out, const void *p, int user)
{
	__u8 b[6] = {};
	if (user)
		bpf_probe_read_user(b, sizeof(b), p);
	else
		bpf_probe_read_kernel(b, sizeof(b), p);
#pragma unroll
	for (int i = 0; i < 6; i++) {
		__u8 hi = b[i] >> 4, lo = b[i] & 0xf;
		out[3 * i] = hi < 10 ? '0' + hi : 'A' + hi - 10;
		out[3 * i + 1] = lo < 10 ? '0' + lo : 'A' + lo - 10;
		out[3 * i + 2] = i < 5 ? ':' : 0;
	}
}

/* buf(p, n): out[0] is how many bytes follow, at most size - 1, read
 * from kernel or user memory at p. */
static __always_inline void ut_buf(char *out, __u32 size, const void *p, __u64 n, int user)
{
	if (n > size - 1)
		n = size - 1;
	asm volatile("" : "+r"(n));   /* the verifier sees the bound on the register passed */
	if (n > size - 1)
		return;
	out[0] = (char)n;
	if (user)
		bpf_probe_read_user(out + 1, n, p);
	else
		bpf_probe_read_kernel(out + 1, n, p);
}

/* ---- built-in programs: the runtime attaches them besides the script's
 * probes, each as a raw tracepoint or else a classic one (runtime/loader.c) */

/* After exec, a thread the trace has named has a new name (the command
 * it runs now): it is named again.  One not named yet gets the new name
 * with its first record. */
static __always_inline int ut_rename_after_exec(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	if (bpf_map_lookup_elem(&ut_seen_threads, &tid))
		ut_name_thread();
	return 0;
}

SEC("raw_tp/sched_process_exec")
int ut_rename_exec(void *ctx)
{
	return ut_rename_after_exec();
}

SEC("tracepoint/sched/sched_process_exec")
int ut_rename_exec_tp(void *ctx)
{
	return ut_rename_after_exec();
}

/* -c: a process forked by a traced one is traced from its start (the fork
 * tracepoint runs in the parent, before the child first runs). */
static __always_inline int ut_follow(__u32 child)
{
	__u8 one = 1;
	if (ut_tgid_traced(bpf_get_current_pid_tgid() >> 32) &&
	    bpf_map_update_elem(&ut_traced_tgids, &child, &one, BPF_ANY) == 0)
		__sync_fetch_and_add(&ut_traced_changes, 1);
	return 0;
}

/* sched_process_fork(parent, child): a new thread shares its process's
 * tgid, so only a new process goes in. */
SEC("raw_tp/sched_process_fork")
int ut_follow_fork(__u64 *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx[1];
	__u32 tgid = BPF_CORE_READ(child, tgid);
	if (BPF_CORE_READ(child, pid) != tgid)
		return 0;
	return ut_follow(tgid);
}

/* The classic record has the child's pid, not its tgid: a new thread's
 * pid goes in too, and leaves when the thread is freed (ut_forget). */
SEC("tracepoint/sched/sched_process_fork")
int ut_follow_fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	return ut_follow(BPF_CORE_READ(ctx, child_pid));
}

/* A process is forgotten when its task is freed, after it was reaped: the
 * events of its exit (a ring torn down in the exiting task, after
 * sched_process_exit) stay in.  Its pid was freed a grace period before,
 * too soon to be given again unless the pids wrapped around meanwhile.
 * The leader is freed after its other threads.  Keyed by the freed task's
 * pid: the leader's is the tgid; another thread's is in only from
 * ut_follow_fork_tp. */
static __always_inline int ut_forget(__u32 pid)
{
	if (bpf_map_delete_elem(&ut_traced_tgids, &pid) == 0)
		__sync_fetch_and_add(&ut_traced_changes, 1);
	return 0;
}

SEC("raw_tp/sched_process_free")
int ut_follow_free(__u64 *ctx)
{
	return ut_forget(BPF_CORE_READ((struct task_struct *)ctx[0], pid));
}

SEC("tracepoint/sched/sched_process_free")
int ut_follow_free_tp(struct trace_event_raw_sched_process_template *ctx)
{
	return ut_forget(BPF_CORE_READ(ctx, pid));
}

/* The records of one probe hit are staged in a per-CPU buffer and written
 * to the ring buffer as one sample (bpf_ringbuf_output); the reader walks
 * it record by record (runtime/decode.c).  Staging, not a reservation held
 * across the body: the 6.1 verifier loses track of a reserved pointer the
 * compiler tests for NULL twice.  A program interrupted by another on the
 * same CPU (a tracepoint in an interrupt, or a preempted program) nests:
 * each level has its own slot.
 *
 * The outermost slot holds the records of consecutive hits until it has
 * ut_hold_bytes: a ring buffer write per hit (its lock, and the cold
 * cache lines of the ring it touches under the lock) was a third of a
 * nop request's tracing cost.  Held records reach the reader late and out
 * of order with other CPUs'; the runtime puts them back in time order and
 * flushes an idle CPU's stage by running ut_flush on it (runtime/consumer.c).
 * Nested slots go out at the end of their hit. */
#ifdef UT_BATCH_BYTES
#define UT_BATCH_DEPTH 4
struct ut_batch_buf {
	char data[UT_HOLD_MAX + UT_BATCH_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UT_BATCH_DEPTH);
	__type(key, __u32);
	__type(value, struct ut_batch_buf);
} ut_batches SEC(".maps");

/* Bytes the outermost stage holds: always below UT_HOLD_MAX, masked so
 * the verifier knows it. */
static __always_inline __u32 ut_held_bytes(const struct ut_cpu_state *st)
{
	return st->held & (UT_HOLD_MAX - 1);
}

/* Hits lost on this CPU: remembered until the reader can be told. */
static __always_inline void ut_note_loss(struct ut_cpu_state *st, __u32 hits, __u64 since)
{
	if (!st->lost_hits)
		st->lost_since = since;
	st->lost_until = bpf_ktime_get_ns();
	st->lost_hits += hits;
}

/* Tells the reader of the requests this CPU shed since it last did (a
 * notice the trace shows; nothing ends there).  A ring too full for it
 * leaves it for the next sample. */
static __always_inline void ut_tell_shed(struct ut_cpu_state *st)
{
	__u64 requests = st->shed_untold;
	if (!requests)
		return;
	struct ut_lost_rec r;
	ut_header(&r.h, UT_EVENT_LOST, st->shed_until, bpf_get_current_pid_tgid());
	r.since = st->shed_since;
	r.count = requests;
	r.reason = UT_LOST_SHED;
	if (bpf_ringbuf_output(&ut_events, &r, sizeof(r), 0) == 0)
		st->shed_untold -= requests;
}

/* Tells the reader of the hits lost on this CPU before its next records
 * go out: without it, an end among them would leave its span open for the
 * next end with the same key.  0 when the notice could not be written
 * either (those records must then be lost too). */
static __always_inline int ut_tell_loss(struct ut_cpu_state *st)
{
	__u64 hits = st->lost_hits;
	if (!hits)
		return 1;
	struct ut_lost_rec r;
	ut_header(&r.h, UT_EVENT_LOST, st->lost_until, bpf_get_current_pid_tgid());
	r.since = st->lost_since;
	r.count = hits;
	r.reason = UT_LOST_IN_KERNEL;
	if (bpf_ringbuf_output(&ut_events, &r, sizeof(r), 0) != 0)
		return 0;
	st->lost_hits -= hits;   /* not = 0: a nested hit may have lost more meanwhile */
	return 1;
}

/* Writes bytes of a stage to the ring buffer as one sample, its hits
 * counted for the probe as emitted or lost. */
static __always_inline void ut_send(void *data, __u32 bytes, __u32 hits, __u32 probe)
{
	struct ut_cpu_state *st = ut_cpu_state();
	if (!st)
		return;
	ut_tell_shed(st);
	int lost = !ut_tell_loss(st) ||
		   bpf_ringbuf_output(&ut_events, data, bytes, ut_wakeup_flags(bytes)) != 0;
	if (lost)
		ut_note_loss(st, hits, st->held ? st->held_since : st->hit_ts);
	ut_count_hits(probe, lost, hits);
	ut_look_at_ring(st);
}

/* NULL when nested too deep: the hit's records are then lost (counted).
 * Their headers take the hit's ids from *id (ut_pid_tgid). */
static __always_inline char *ut_batch_begin(__u32 probe, __u64 now, __u64 *id)
{
	ut_note_thread((__u32)ut_pid_tgid(id));
	struct ut_cpu_state *st = ut_cpu_state();
	if (!st)
		return 0;
	__u32 slot = st->batch_depth;
	struct ut_batch_buf *b = slot < UT_BATCH_DEPTH ? bpf_map_lookup_elem(&ut_batches, &slot) : 0;
	if (!b) {
		ut_note_loss(st, 1, now);
		ut_count(probe, 1);
		return 0;
	}
	if (!slot)
		st->hit_ts = now;
	ut_barrier();   /* the reader sees the hit's time before its depth */
	st->batch_depth = slot + 1;
	ut_barrier();   /* ut_flush leaves the stage alone from here */
	if (slot)
		return b->data;
	return b->data + ut_held_bytes(st);
}

/* Writes the first `bytes` of the stage at depth `slot` and counts its
 * hits as emitted or lost (against `probe`, the one that sends them: the
 * ring was full); the outermost one's are its held records and this
 * hit's, and it holds none after.  A global function, out of line (see
 * ut_thread_seen): it runs once in 2 KB of records. */
__noinline int ut_stage_send(__u32 slot, __u64 bytes, __u32 hits, __u32 probe)
{
	struct ut_cpu_state *st = ut_cpu_state();
	struct ut_batch_buf *b = slot < UT_BATCH_DEPTH ? bpf_map_lookup_elem(&ut_batches, &slot) : 0;
	if (!st || !b)
		return 0;
	/* (a 64-bit argument: the verifier's bound is on the register the
	 * compare reads, which a 32-bit one copies to widen it) */
	if (bytes > sizeof(b->data))
		bytes = sizeof(b->data);
	ut_send(b->data, bytes, hits, probe);
	if (!slot) {
		st->held = 0;
		st->held_hits = 0;
	}
	return 0;
}

static __always_inline void ut_batch_end(char *b, __u32 used, __u32 probe)
{
	if (!b)
		return;
	struct ut_cpu_state *st = ut_cpu_state();
	if (!st || !st->batch_depth)
		return;
	if (used > UT_BATCH_BYTES)
		used = UT_BATCH_BYTES;
	if (st->batch_depth > 1) {
		if (used)   /* a nested hit's stage: its slot's start */
			ut_stage_send(st->batch_depth - 1, used, 1, probe);
	} else if (used) {
		__u32 held = ut_held_bytes(st) + used;
		if (held < ut_hold_bytes) {
			if (!st->held)
				st->held_since = st->hit_ts;
			ut_barrier();
			st->held = held;
			st->held_hits += 1;
		} else {
			ut_stage_send(0, held, st->held_hits + 1, probe);
		}
	}
	ut_barrier();   /* the stage is consistent before ut_flush may touch it */
	st->batch_depth -= 1;
}

/* Run by the runtime on one CPU (BPF_PROG_TEST_RUN with
 * BPF_F_TEST_RUN_ON_CPU, an interrupt there): sends what the CPU's stage
 * holds.  Returns 1 when the CPU holds nothing any more, 0 when a hit was
 * running there (its records and the held ones go out later). */
SEC("raw_tp")
int ut_flush(void *ctx)
{
	struct ut_cpu_state *st = ut_cpu_state();
	if (!st)
		return 1;
	if (st->batch_depth)
		return 0;
	/* The runtime's own CPU runs this with interrupts on: a hit in one
	 * would append to the stage being sent, and its records would go with
	 * the emptied stage.  Counted as a hit running, it stages its own. */
	st->batch_depth = 1;
	ut_barrier();
	if (st->held)
		ut_stage_send(0, ut_held_bytes(st), st->held_hits, UT_NPROBES);
	ut_barrier();
	st->batch_depth = 0;
	return 1;
}
#endif

/* What a string map reads as where its key is absent (string values are
 * at most 255 bytes, 256 with padding). */
const volatile char ut_empty_str[256] __attribute__((aligned(8))) = {};

/* A BTF pointer (a tp_btf, fentry or fexit argument, or a field read
 * through one) as an integer.  The verifier tracks every register copy of
 * it as a pointer and refuses it any arithmetic but + and -; the copy a
 * helper makes is a plain number. */
static __always_inline __u64 ut_ptr_int(const void *p)
{
	__u64 v = 0;
	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* A field read through a kernel pointer held as a number (a map's value,
 * a void * argument, a tracepoint record's field): where the kernel has
 * bpf_rdonly_cast (6.2+; the runtime tries it and sets the flag), the
 * number becomes an untrusted BTF pointer (the call compiles to a move)
 * and the read a load the kernel guards against faults, where
 * bpf_probe_read_kernel is a helper call of 20-30 ns.  Either way a bad
 * address reads as 0.  The path not taken is dead code the verifier
 * drops, the unresolved kfunc with it. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
const volatile __u32 ut_untrusted_loads = 0;
#define ut_untrusted(type, p) ((type *)bpf_rdonly_cast((const void *)(p), bpf_core_type_id_kernel(type)))
#define ut_kread(type, p, field) \
	(ut_untrusted_loads ? ut_untrusted(type, p)->field : BPF_CORE_READ((type *)(p), field))
/* The same for a 16-byte name (a task's comm), into dst: two loads (ut_copy_name16) */
#define ut_kread_name16(dst, type, p, field)                             \
	do {                                                             \
		if (ut_untrusted_loads)                                  \
			ut_copy_name16(dst, ut_untrusted(type, p)->field); \
		else                                                     \
			BPF_CORE_READ_STR_INTO(&(dst), (type *)(p), field); \
	} while (0)

/* The zero bytes of w, each as its top bit (exact for the lowest one:
 * the borrow only marks bytes above it). */
static __always_inline __u64 ut_zero_bytes(__u64 w)
{
	return (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
}

/* w's bytes below its lowest zero byte, zeros from there. */
static __always_inline __u64 ut_bytes_before_nul(__u64 w, __u64 zeros)
{
	return zeros ? w & (((zeros & -zeros) >> 7) - 1) : w;
}

/* A task's name (16 bytes) read through a pointer the verifier guards (a
 * BTF tracepoint's or function's arguments, and what they point to): two
 * loads, not a helper call (sched_switch reads two names at every switch
 * it keeps).  As bpf_probe_read_kernel_str leaves it: the bytes up to the
 * first NUL, zeros after, a NUL last. */
static __always_inline void ut_copy_name16(char *dst, const char *src)
{
	__u64 lo = *(const __u64 *)src, hi = *(const __u64 *)(src + 8) & 0x00ffffffffffffffull;
	__u64 lo_zeros = ut_zero_bytes(lo);
	__u64 kept_lo = ut_bytes_before_nul(lo, lo_zeros);
	__u64 kept_hi = lo_zeros ? 0 : ut_bytes_before_nul(hi, ut_zero_bytes(hi));
	__builtin_memcpy(dst, &kept_lo, 8);
	__builtin_memcpy(dst + 8, &kept_hi, 8);
}

static __always_inline int ut_streq(const char *a, const char *b, int n)
{
	for (int i = 0; i < n; i++) {
		if (a[i] != b[i])
			return 0;
		if (!a[i])
			return 1;
	}
	return 1;
}

/* strcontains(): whether needle (n bytes at most, NUL-terminated within
 * them or not) is in haystack (h bytes at most).  hn and nn are constants
 * at every call: the verifier walks hn * nn steps at most. */
static __always_inline int ut_strcontains(const char *h, int hn, const char *needle, int nn)
{
	for (int i = 0; i < hn; i++) {
		int found = 1;
		for (int j = 0; j < nn && needle[j]; j++) {
			if (i + j >= hn || h[i + j] != needle[j]) {
				found = 0;
				break;
			}
		}
		if (found)
			return 1;
		if (!h[i])
			break;
	}
	return !needle[0];
}

/* ---- aggregations (per-CPU maps; user space combines the CPUs): the
 * kernel's side of compiler/aggregations.c's rows, f(map, key, v) ---- */

static __always_inline void ut_agg_add(void *map, void *key, __s64 v)
{
	__s64 *p = bpf_map_lookup_elem(map, key);
	if (p) {
		*p += v;
		return;
	}
	if (bpf_map_update_elem(map, key, &v, BPF_NOEXIST) == 0)
		return;
	p = bpf_map_lookup_elem(map, key);   /* inserted meanwhile */
	if (p)
		*p += v;
}

/* The {value, count} slot of key, or NULL when this call created it with
 * {v, 1} (nothing left to do). */
static __always_inline struct ut_avg *ut_pair_slot(void *map, void *key, __s64 v)
{
	struct ut_avg *p = bpf_map_lookup_elem(map, key);
	if (p)
		return p;
	struct ut_avg first = {v, 1};
	if (bpf_map_update_elem(map, key, &first, BPF_NOEXIST) == 0)
		return 0;
	return bpf_map_lookup_elem(map, key);   /* inserted meanwhile */
}

static __always_inline void ut_agg_avg(void *map, void *key, __s64 v)
{
	struct ut_avg *p = ut_pair_slot(map, key, v);
	if (p)
		ut_avg_take(p, v);
}

/* min/max keep {value, set}: per-CPU slots of CPUs that never saw the
 * key stay unset, so user space can tell them from a real 0. */
static __always_inline void ut_agg_minmax(void *map, void *key, __s64 v, int is_min)
{
	struct ut_avg *p = ut_pair_slot(map, key, v);
	if (p)
		ut_minmax_take(p, v, is_min);
}

static __always_inline void ut_agg_min(void *map, void *key, __s64 v) { ut_agg_minmax(map, key, v, 1); }
static __always_inline void ut_agg_max(void *map, void *key, __s64 v) { ut_agg_minmax(map, key, v, 0); }

/* Shared maps the script also reads: atomic adds.  Returns the value
 * after the add, as a look-up would read it (the compiler uses it for a
 * read of the same key right after); 0 if the map had no room. */
static __always_inline __s64 ut_shared_add(void *map, void *key, __s64 v)
{
	__s64 *p = bpf_map_lookup_elem(map, key);
	if (!p) {
		if (bpf_map_update_elem(map, key, &v, BPF_NOEXIST) == 0)
			return v;
		p = bpf_map_lookup_elem(map, key);
		if (!p)
			return 0;
	}
	__sync_fetch_and_add(p, v);
	return *p;
}

/* map[key] of a map of integers, 0 when absent. */
static __always_inline __u64 ut_map_read(void *map, const void *key)
{
	__u64 *v = bpf_map_lookup_elem(map, key);
	return v ? *v : 0;
}

/* ---- cached maps: slots in front of the hash ----
 * A map declared cached (docs/language.md) has its keys come and go at
 * every hit (a request's state from its submission to its completion): a
 * hash map's insert allocates an element and takes its bucket's lock, and
 * its delete frees it, 150-250 ns the pair on the nop firehose.  Its keys
 * go first into a table of UT_FRONT_SLOTS slots, each the key's own by a
 * hash of it (an array: a look-up is a load), and into the hash only when
 * their slot is taken.  A key is in one of the two: a slot is taken only
 * for a key the hash does not hold.  Each slot counts the keys of its own
 * in the hash (spilled there while it was taken), so that a key not in its
 * slot is looked for in the hash only when some are: a key left in the
 * hash for good (its delete never seen) costs a look-up to the keys of its
 * slot alone.
 *
 * A free slot is taken by whoever adds 1 to its claims and then finds 1
 * there (two CPUs after one slot: at most one finds 1, and the other takes
 * its 1 back), and let go with its key and value cleared and the 1 taken
 * back.  Adds, not a compare-and-exchange: BPF_CMPXCHG is 5.12+, and
 * 5.10 refuses a program with one even where it never runs (a .uto runs
 * on either).  A slot's stores are seen in the order made on x86-64,
 * where its claims' 1 is seen after the last owner's cleared key.  Two
 * CPUs writing one new key at once may leave it in both the slot and the
 * hash (the slot's is read and deleted, the hash's stays until its slot's
 * key is deleted there): not the requests' and CQEs' maps, whose keys are
 * written new once. */
#define UT_FRONT_BITS 14
#define UT_FRONT_SLOTS (1u << UT_FRONT_BITS)

struct ut_front_slot {
	__u64 key;       /* 0: free (key 0 itself lives in the hash) */
	__u64 value;     /* 0 while free */
	__u64 spilled;   /* keys of this slot in the hash */
	__u64 claims;    /* 1 while taken (more for a moment: others trying) */
};

/* key's slot: a multiplicative hash (pointers to slab objects differ in
 * their middle bits) */
static __always_inline struct ut_front_slot *ut_front_slot(void *front, __u64 key)
{
	__u32 i = (key * 0x9E3779B97F4A7C15ull) >> (64 - UT_FRONT_BITS);
	return bpf_map_lookup_elem(front, &i);
}

static __always_inline __u64 ut_front_read(void *map, void *front, void *key, __u64 k0)
{
	struct ut_front_slot *s = k0 ? ut_front_slot(front, k0) : 0;
	if (!s)
		return ut_map_read(map, key);
	if (s->key == k0)
		return s->value;
	return s->spilled ? ut_map_read(map, key) : 0;
}

/* The slot that holds key k0, taken for it if the hash does not hold it
 * and the slot is free; else 0, and *in_hash the hash's value if there. */
static __always_inline struct ut_front_slot *ut_front_take(void *map, struct ut_front_slot *s, void *key, __u64 k0,
							     __u64 **in_hash)
{
	*in_hash = 0;
	if (s->key == k0)
		return s;
	if (s->spilled) {
		*in_hash = bpf_map_lookup_elem(map, key);
		if (*in_hash)
			return 0;
	}
	if (s->key)
		return 0;
	__sync_fetch_and_add(&s->claims, 1);
	if (*(volatile __u64 *)&s->claims == 1 && !*(volatile __u64 *)&s->key) {
		s->key = k0;
		return s;
	}
	__sync_fetch_and_add(&s->claims, -1);
	return 0;
}

/* A key new to the hash: counted in its slot, so that reads look there. */
static __always_inline void ut_front_insert(void *map, struct ut_front_slot *s, void *key, __u64 v)
{
	if (bpf_map_update_elem(map, key, &v, BPF_NOEXIST) == 0)
		__sync_fetch_and_add(&s->spilled, 1);
	else
		bpf_map_update_elem(map, key, &v, BPF_ANY);   /* inserted meanwhile */
}

static __always_inline void ut_front_write(void *map, void *front, void *key, __u64 k0, __u64 v)
{
	struct ut_front_slot *s = k0 ? ut_front_slot(front, k0) : 0;
	if (!s) {
		bpf_map_update_elem(map, key, &v, BPF_ANY);
		return;
	}
	__u64 *in_hash;
	struct ut_front_slot *own = ut_front_take(map, s, key, k0, &in_hash);
	if (own)
		own->value = v;
	else if (in_hash)
		*in_hash = v;
	else
		ut_front_insert(map, s, key, v);
}

/* map[key] += v; returns the value after the add (as ut_shared_add). */
static __always_inline __s64 ut_front_add(void *map, void *front, void *key, __u64 k0, __s64 v)
{
	struct ut_front_slot *s = k0 ? ut_front_slot(front, k0) : 0;
	if (!s)
		return ut_shared_add(map, key, v);
	__u64 *in_hash;
	struct ut_front_slot *own = ut_front_take(map, s, key, k0, &in_hash);
	__u64 *p = own ? &own->value : in_hash;
	if (!p) {
		ut_front_insert(map, s, key, v);
		return v;
	}
	__sync_fetch_and_add(p, v);
	return *p;
}

static __always_inline void ut_front_delete(void *map, void *front, void *key, __u64 k0)
{
	struct ut_front_slot *s = k0 ? ut_front_slot(front, k0) : 0;
	if (!s) {
		bpf_map_delete_elem(map, key);
		return;
	}
	if (s->key == k0) {
		s->value = 0;
		s->key = 0;
		__sync_fetch_and_add(&s->claims, -1);
		return;
	}
	if (s->spilled && bpf_map_delete_elem(map, key) == 0)
		__sync_fetch_and_add(&s->spilled, -1);
}

/* ---- remembered reads of the kernel's value maps ----
 * A hash look-up costs 30-40 ns a hit under load (its bucket and element
 * lines are cold); the maps kernel code reads are mostly filters written
 * rarely (a ring's creation, a process's first sight).  Each CPU keeps the
 * last values it read of such a map, UT_MEMO_WAYS of them, each under the
 * map's generation when it was read; every write of the map, in the
 * kernel or from user space (clear()), then sets a generation never used
 * before, so a value read under the current generation is still the
 * map's.  (A new one, not one more: a plain store, where an atomic add
 * would lock the line that CPUs writing the map at every hit pass round.)
 * A program interrupting another on the CPU may find the set half
 * written: its sequence is odd while it is written and changes with each
 * write, and whoever finds it odd or changed looks the map up instead. */
#ifdef UT_MEMO_MAPS
#define UT_MEMO_WAYS 4

/* A map's remembered reads on one CPU.  Keys are compared, never hashed:
 * a key may be a BTF pointer, which the verifier allows no arithmetic on. */
struct ut_memo_set {
	__u64 seq;     /* odd while written */
	__u64 next;    /* the way the next new key takes */
	__u64 writes;  /* of the map on this CPU: its generations are (cpu + 1) << 40 | writes */
	struct {
		__u64 gen, k0, k1, value;
	} way[UT_MEMO_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UT_MEMO_MAPS);
	__type(key, __u32);
	__type(value, struct ut_memo_set);
} ut_memo SEC(".maps");

/* One generation per remembered map; user space sets them through a
 * mapping (runtime/summary.c) after it deletes entries.  UT_MEMO_OFF in
 * one: the map is written too often for its reads to be remembered (a
 * start time written at every syscall, read at its exit): reads look it
 * up and writes store no generation.  A CPU's UT_MEMO_WRITES_OFF-th write
 * of the map sets it (a filter is written when what is traced changes:
 * a ring's creation, a process's first sight); a writer that did not see
 * it yet may clear it with its generation, a new one, which is as
 * correct. */
#define UT_MEMO_OFF (1ull << 63)
#define UT_MEMO_WRITES_OFF 4096
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, UT_MEMO_MAPS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} ut_memo_gens SEC(".maps");

/* map[key] (0 when absent), key's integers k0 and k1 (0 for one key). */
static __always_inline __u64 ut_memo_read(void *map, __u32 slot, const void *key, __u64 k0, __u64 k1)
{
	__u64 *genp = bpf_map_lookup_elem(&ut_memo_gens, &slot);
	struct ut_memo_set *set = bpf_map_lookup_elem(&ut_memo, &slot);
	if (!genp || !set)
		return ut_map_read(map, key);
	/* the generation before the look-up: a write after it is seen next time */
	__u64 gen = *(volatile __u64 *)genp;
	if (gen & UT_MEMO_OFF)
		return ut_map_read(map, key);
	__u64 seq = *(volatile __u64 *)&set->seq;
	ut_barrier();
	if (!(seq & 1)) {
		for (int w = 0; w < UT_MEMO_WAYS; w++) {
			if (set->way[w].gen == gen && set->way[w].k0 == k0 && set->way[w].k1 == k1) {
				__u64 value = set->way[w].value;
				ut_barrier();
				if (*(volatile __u64 *)&set->seq == seq)
					return value;
				break;
			}
		}
	}
	__u64 value = ut_map_read(map, key);
	seq = *(volatile __u64 *)&set->seq;
	if (!(seq & 1)) {   /* odd: the program this one interrupted is writing it */
		set->seq = seq + 1;
		ut_barrier();
		__u32 w = set->next & (UT_MEMO_WAYS - 1);
		set->next = w + 1;
		set->way[w].gen = gen;
		set->way[w].k0 = k0;
		set->way[w].k1 = k1;
		set->way[w].value = value;
		ut_barrier();
		set->seq = seq + 2;
	}
	return value;
}

/* After each write of a remembered map.  (A program interrupting another
 * on this CPU may take the same count: both writes are done before either
 * generation is stored, so no value read under it misses one.) */
static __always_inline void ut_memo_written(__u32 slot)
{
	__u64 *gen = bpf_map_lookup_elem(&ut_memo_gens, &slot);
	struct ut_memo_set *set = bpf_map_lookup_elem(&ut_memo, &slot);
	if (!gen || !set)
		return;
	__u64 now = *(volatile __u64 *)gen;
	if (now & UT_MEMO_OFF)
		return;
	__u64 writes = set->writes + 1;
	set->writes = writes;
	ut_barrier();
	*(volatile __u64 *)gen = writes >= UT_MEMO_WRITES_OFF ? now | UT_MEMO_OFF
				 : (__u64)(bpf_get_smp_processor_id() + 1) << 40 | writes;
}
#endif

/* ---- per-CPU string buffers: path() results, string map values ---- */

/* Defined (to the path() calls of the busiest probe) when the script
 * builds paths or assigns string map values; strings this long do not fit
 * the 512-byte stack twice. */
#ifdef UT_PATH_SLOTS
#define UT_PATH_MAX 256     /* bytes of a path value, with its NUL */
#define UT_PATH_DEPTH 32    /* names walked (dentries and mount points) */

struct ut_path_buf {
	char s[UT_PATH_MAX];
} __attribute__((aligned(8)));

/* Per CPU: for path(), the names are written backwards from the end of the
 * first half of work (the second half only lets the verifier see every
 * write fit), then the result is copied to the calling path()'s own slot.
 * value stages a string on its way into a map. */
struct ut_path_scratch {
	char work[2 * UT_PATH_MAX];
	struct ut_path_buf value;
	struct ut_path_buf out[UT_PATH_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ut_path_scratch);
} ut_path_scratch SEC(".maps");

/* Writes into slot the path of path_ptr (a struct path *) as the current
 * task sees it: names up to the task's root, crossing mount points
 * (bpf_d_path is only for fentry/LSM programs).  A path that would not
 * fit, or is deeper than UT_PATH_DEPTH names, keeps its last names after
 * "...".  A file outside the task's root (a pipe, a socket, an anonymous
 * inode, another mount namespace) is named by its filesystem type and its
 * path there: "pipefs:", "anon_inodefs:[eventfd]".  NULL or unreadable
 * gives "".  A global function: the verifier checks it once per program,
 * not once per call and caller's state, and its stack frame (the walk's
 * spilled pointers) is not added to the calling probe's. */
#if UT_PATH_SLOTS > 0
__noinline int ut_path_build(__u32 slot, __u64 path_ptr)
{
	__u32 zero = 0;
	struct ut_path_scratch *s = bpf_map_lookup_elem(&ut_path_scratch, &zero);
	if (!s || slot >= UT_PATH_SLOTS)
		return 0;
	struct ut_path_buf *out = &s->out[slot];
	__builtin_memset(out->s, 0, sizeof(out->s));
	const struct path *p = (const struct path *)path_ptr;
	struct dentry *d = ut_kread(struct path, p, dentry);
	struct vfsmount *vmnt = ut_kread(struct path, p, mnt);
	if (!d || !vmnt)
		return 0;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fs_struct *fs = ut_kread(struct task_struct, task, fs);
	struct dentry *root_dentry = ut_kread(struct fs_struct, fs, root.dentry);
	struct vfsmount *root_mnt = ut_kread(struct fs_struct, fs, root.mnt);
	struct mount *m = (struct mount *)((char *)vmnt - bpf_core_field_offset(struct mount, mnt));
	int pos = UT_PATH_MAX - 1;   /* work[pos..] is the path so far */
	int ended = 0, outside = 0;
	s->work[pos] = 0;
	/* unrolled: each copy's start is a point where the verifier prunes
	 * (a loop counter would keep its states apart) */
#pragma unroll
	for (int i = 0; i < UT_PATH_DEPTH; i++) {
		if (d == root_dentry && vmnt == root_mnt) {
			ended = 1;
			break;
		}
		struct dentry *parent = ut_kread(struct dentry, d, d_parent);
		if (d == ut_kread(struct vfsmount, vmnt, mnt_root) || d == parent) {
			struct mount *up = ut_kread(struct mount, m, mnt_parent);
			if (up == m || !up) {
				/* the top of a mount tree the task's root is not in */
				ended = outside = 1;
				break;
			}
			d = ut_kread(struct mount, m, mnt_mountpoint);
			m = up;
			vmnt = (struct vfsmount *)((char *)up + bpf_core_field_offset(struct mount, mnt));
			continue;
		}
		__u32 len = ut_kread(struct dentry, d, d_name.len);
		/* room for '/', the name, and "..." in front if a later one does not fit */
		if (len + 4 > (__u32)pos)
			break;
		pos -= len;
		bpf_probe_read_kernel(&s->work[pos & (UT_PATH_MAX - 1)], len & (UT_PATH_MAX - 1),
				      ut_kread(struct dentry, d, d_name.name));
		pos -= 1;
		s->work[pos & (UT_PATH_MAX - 1)] = '/';
		d = parent;
	}
	if (!ended) {
		pos -= 3;
		__builtin_memcpy(&s->work[pos & (UT_PATH_MAX - 1)], "...", 3);
	} else if (pos == UT_PATH_MAX - 1) {
		pos -= 1;   /* the root itself */
		s->work[pos & (UT_PATH_MAX - 1)] = '/';
	}
	if (outside) {
		const char *fstype = BPF_CORE_READ(d, d_sb, s_type, name);
		long n = bpf_probe_read_kernel_str(out->s, 31, fstype);
		if (n < 1)
			n = 1;
		out->s[(n - 1) & 31] = ':';
		/* relative to that filesystem: "pipefs:", not "pipefs:/" */
		bpf_probe_read_kernel_str(&out->s[n & 31], UT_PATH_MAX - 32, &s->work[(pos + 1) & (UT_PATH_MAX - 1)]);
	} else {
		bpf_probe_read_kernel_str(out->s, UT_PATH_MAX, &s->work[pos & (UT_PATH_MAX - 1)]);
	}
	return 0;
}

/* path(): the slot, filled with p's path ("" if the buffer is missing). */
static __always_inline struct ut_path_buf *ut_path(__u32 slot, const struct path *p)
{
	__u32 zero = 0;
	ut_path_build(slot, (__u64)p);
	struct ut_path_scratch *s = bpf_map_lookup_elem(&ut_path_scratch, &zero);
	if (!s || slot >= UT_PATH_SLOTS)
		return (void *)ut_empty_str;
	return &s->out[slot];
}
#endif

/* A zeroed buffer for a string map value (map values are at most
 * UT_PATH_MAX bytes), or NULL. */
static __always_inline struct ut_path_buf *ut_value_buf(void)
{
	__u32 zero = 0;
	struct ut_path_scratch *s = bpf_map_lookup_elem(&ut_path_scratch, &zero);
	if (!s)
		return 0;
	__builtin_memset(s->value.s, 0, sizeof(s->value.s));
	return &s->value;
}
#endif

/* ---- flow sampling (--sample): whole flows are kept or dropped ---- */

struct ut_flow_id {
	__u64 key;
	__u32 kind;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ut_flow_id);
	__type(value, __u8);
} ut_flow_sample SEC(".maps");

/* At a flow's begin the decision is drawn and remembered by key; later
 * points follow it.  A flow first seen mid-way (begun before the trace)
 * is kept. */
static __always_inline int ut_flow_sampled(__u32 kind, __u64 key, int begin)
{
	if (ut_sample_permyriad >= 10000)
		return 1;
	struct ut_flow_id id = {.key = key, .kind = kind};
	if (begin) {
		__u8 keep = bpf_get_prandom_u32() % 10000 < ut_sample_permyriad;
		bpf_map_update_elem(&ut_flow_sample, &id, &keep, BPF_ANY);
		return keep;
	}
	__u8 *keep = bpf_map_lookup_elem(&ut_flow_sample, &id);
	return keep ? *keep : 1;
}

/* ---- shedding (issue 38): whole requests left out before the ring
 * buffer overflows ---- */

/* A CPU past the ring's mark (ut_look_at_ring) sheds the requests it sees
 * begin: a hit whose flow and span points all begin a flow (a request's
 * submission) drops its records and its hit record, and its keys go into
 * ut_shed_keys; a later hit with a point of a key there (a step, an end:
 * the request's completion) drops its records too, whatever else it
 * holds, and a hit that begins flows while it does marks them shed as
 * well.  A hit with a point of a flow not shed keeps its records.  So a
 * request is in the trace whole or not at all, with everything keyed to
 * it (its spans): never a flow cut short.  The reader's maps miss what
 * the shed hits did (the summary says so); the kernel's statements ran. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);   /* a plain one: an LRU hash's look-ups cost more */
	__uint(max_entries, 16384);   /* requests shed at once: one more is kept */
	__type(key, struct ut_flow_id);
	__type(value, __u8);
} ut_shed_keys SEC(".maps");

/* Keys put into ut_shed_keys and not taken out yet (evictions aside):
 * while none is, a flow point looks nothing up. */
__u64 ut_shed_live = 0;

/* A hit's flow and span points (the points whose keys the kernel has),
 * a local of each program with any. */
#define UT_SHED_BEGINS 2
enum { UT_SHED_NONE, UT_SHED_KEEP, UT_SHED_DROP };
struct ut_shed {
	__u64 keys[UT_SHED_BEGINS];
	__u32 kinds[UT_SHED_BEGINS];
	__u32 begins;
	__u32 state;
};

/* A point (a step, an end) of (kind, key): the hit is dropped when the
 * flow was shed, kept otherwise. */
static __always_inline void ut_shed_point(struct ut_shed *sh, __u32 kind, __u64 key, int end)
{
	if (ut_shed_live) {
		struct ut_flow_id id = {.key = key, .kind = kind};
		if (bpf_map_lookup_elem(&ut_shed_keys, &id)) {
			sh->state = UT_SHED_DROP;
			if (end && bpf_map_delete_elem(&ut_shed_keys, &id) == 0)
				__sync_fetch_and_sub(&ut_shed_live, 1);
			return;
		}
	}
	if (sh->state == UT_SHED_NONE)
		sh->state = UT_SHED_KEEP;
}

/* A begin of (kind, key): it follows the hit's decision (ut_shed_end). */
static __always_inline void ut_shed_begin(struct ut_shed *sh, __u32 kind, __u64 key)
{
	__u32 n = sh->begins;
	if (n >= 1 && sh->kinds[0] == kind && sh->keys[0] == key)
		return;
	if (n >= UT_SHED_BEGINS)
		return;   /* a hit beginning more: its others are kept if it is */
	sh->kinds[n & (UT_SHED_BEGINS - 1)] = kind;
	sh->keys[n & (UT_SHED_BEGINS - 1)] = key;
	sh->begins = n + 1;
}

static __always_inline int ut_shed_put(const struct ut_shed *sh, __u32 i)
{
	struct ut_flow_id id = {.key = sh->keys[i & (UT_SHED_BEGINS - 1)], .kind = sh->kinds[i & (UT_SHED_BEGINS - 1)]};
	__u8 shed = 1;
	int rc = bpf_map_update_elem(&ut_shed_keys, &id, &shed, BPF_NOEXIST);
	if (rc == 0)
		__sync_fetch_and_add(&ut_shed_live, 1);
	return rc == 0 || rc == -17;   /* -EEXIST: shed already (a key begun twice in a hit) */
}

static __always_inline void ut_shed_take_out(const struct ut_shed *sh, __u32 i)
{
	struct ut_flow_id id = {.key = sh->keys[i & (UT_SHED_BEGINS - 1)], .kind = sh->kinds[i & (UT_SHED_BEGINS - 1)]};
	if (bpf_map_delete_elem(&ut_shed_keys, &id) == 0)
		__sync_fetch_and_sub(&ut_shed_live, 1);
}

/* The hit's begins go into ut_shed_keys: false when one does not fit (the
 * map is full: the hit is kept, and none of its keys is in). */
static __always_inline int ut_shed_put_begins(const struct ut_shed *sh)
{
	if (sh->begins > 0 && !ut_shed_put(sh, 0))
		return 0;
	if (sh->begins > 1 && !ut_shed_put(sh, 1)) {
		ut_shed_take_out(sh, 0);
		return 0;
	}
	return 1;
}

/* At the hit's end: whether its records are dropped.  A hit with begins
 * alone draws the decision, shed while its CPU sheds (counted, and told
 * to the reader with its next sample); a kept one's keys are taken out of
 * ut_shed_keys (one reused since it was shed is no longer). */
static __always_inline int ut_shed_end(struct ut_shed *sh)
{
	if (sh->state == UT_SHED_NONE && sh->begins) {
		struct ut_cpu_state *st = ut_cpu_state();
		if (st && st->shedding) {
			__u64 now = st->hit_ts;   /* its hit's, not a clock read */
			if (now - st->shed_looked > UT_SHED_LOOK_NS) {
				st->shed_looked = now;
				ut_look_at_ring(st);
			}
			if (st->shedding && ut_shed_put_begins(sh)) {
				sh->state = UT_SHED_DROP;
				if (!st->shed_untold)
					st->shed_since = now;
				st->shed_until = now;
				st->shed_untold++;
				st->shed_requests++;
			}
		}
		return sh->state == UT_SHED_DROP;
	}
	if (sh->state == UT_SHED_DROP) {   /* it continues a shed flow: its begins are shed too */
		ut_shed_put_begins(sh);
		return 1;
	}
	if (ut_shed_live && sh->begins > 0)
		ut_shed_take_out(sh, 0);
	if (ut_shed_live && sh->begins > 1)
		ut_shed_take_out(sh, 1);
	return 0;
}

#ifdef UT_ITER_LOOPS
/* A script's for loop (compiler/gen_stmt.c, gen_for).  As a plain C loop
 * the verifier follows every turn, and every path through each: the
 * default script's 64-turn reap loop with its maps in the kernel took it
 * 700 k instructions and seconds a program.  Where the kernel has the
 * numbers iterator (bpf_iter_num, 6.4+; the runtime tries it and sets the
 * flag), the loop asks it for each turn instead, and the verifier checks
 * the body until a turn's state is one it has seen (its loop variable is
 * then any number it gave): a turn or two.  The loop variable is the
 * iterator's number, which the verifier does not know, so its test
 * against the bound decides nothing the verifier would track.  Either
 * way the same body, once in the C; the path not taken is dead code the
 * verifier drops, the unresolved kfuncs with it. */
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym __weak;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym __weak;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym __weak;
const volatile __u32 ut_iter_loops = 0;

/* Whether the loop runs turn *i, the iterator's next number. */
static __always_inline int ut_iter_next(struct bpf_iter_num *it, __s64 *i)
{
	int *n = bpf_iter_num_next(it);
	if (!n)
		return 0;
	*i = *n;
	return 1;
}
#endif

char LICENSE[] SEC("license") = "GPL";

#endif
