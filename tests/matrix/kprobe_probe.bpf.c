/* BPF side of the kernel-matrix probe (tests/matrix/kprobe_probe.c): one
 * trivial program per attach kind. Each counts its hits in `hits`, so user
 * space can tell "loaded and attached" from "actually fires". The user side
 * loads one program at a time, so a kind the kernel refuses does not stop
 * the others. No vmlinux.h: the programs read nothing from their context. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Slot numbers: kept in sync with enum probe_slot in kprobe_probe.c. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 8);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

static __always_inline void count_hit(__u32 slot)
{
	__u64 *n = bpf_map_lookup_elem(&hits, &slot);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Attach targets are chosen by user space (bpf_program__attach_* or
 * bpf_program__set_attach_target), hence the bare section names. */
SEC("tracepoint")
int on_tracepoint(void *ctx) { (void)ctx; count_hit(0); return 0; }

SEC("raw_tp")
int on_raw_tp(void *ctx) { (void)ctx; count_hit(1); return 0; }

SEC("tp_btf")
int on_tp_btf(void *ctx) { (void)ctx; count_hit(2); return 0; }

SEC("kprobe")
int on_kprobe(void *ctx) { (void)ctx; count_hit(3); return 0; }

SEC("kretprobe")
int on_kretprobe(void *ctx) { (void)ctx; count_hit(4); return 0; }

SEC("fentry")
int on_fentry(void *ctx) { (void)ctx; count_hit(5); return 0; }

SEC("fexit")
int on_fexit(void *ctx) { (void)ctx; count_hit(6); return 0; }
