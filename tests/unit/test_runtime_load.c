/* Runtime load path on the real kernel: compile a hand-written BPF program
 * (through the object cache), choose among alternatives, attach, read
 * records and counters, detach.  Needs root. */
#include <elf.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "runtime/cache.h"
#include "runtime/consumer.h"
#include "runtime/elf_strip.h"
#include "runtime/loader.h"

static const char bpf_src[] =
	"#include \"vmlinux.h\"\n"
	"#define UT_NPROBES 5\n"
	"#include \"bpf/ut.h\"\n"
	"struct rec { struct ut_rec_hdr h; __u64 value; };\n"
	"static __always_inline int emit(__u32 probe, __u64 value)\n"
	"{\n"
	"	struct rec *r = ut_reserve(sizeof(*r), probe, probe);\n"
	"	if (!r)\n"
	"		return 0;\n"
	"	r->value = value;\n"
	"	ut_submit(r, sizeof(*r), probe);\n"
	"	return 0;\n"
	"}\n"
	"SEC(\"tracepoint/nosuch/event\") int p0_a(void *ctx) { return emit(0, 1); }\n"
	"SEC(\"tracepoint/syscalls/sys_enter_getpid\") int p0_b(void *ctx)\n"
	"{ __u64 id = 0; if (!ut_pass_filter(&id)) return 0; ut_note_thread((__u32)ut_pid_tgid(&id)); return emit(0, 42); }\n"
	"SEC(\"fentry/vfs_read\") int BPF_PROG(p1_a) { return emit(1, 1); }\n"
	"SEC(\"tp_btf/sched_switch\") int BPF_PROG(p1_b, bool preempt, struct task_struct *prev)\n"
	"{ __u64 id = 0; if (!ut_pass_filter(&id)) return 0; return emit(1, prev->pid); }\n"
	"SEC(\"tracepoint/nosuch/other\") int p2_a(void *ctx) { return emit(2, 1); }\n"
	"SEC(\"tracepoint/syscalls/sys_enter_getppid\") int p3_a(void *ctx)\n"
	"{ return emit(3, *(volatile __u64 *)((char *)ctx + 100000)); }\n"
	"SEC(\"raw_tp/sys_enter\") int p3_b(void *ctx)\n"
	"{ __u64 id = 0; if (!ut_pass_filter(&id)) return 0; return emit(3, 3); }\n"
	"SEC(\"perf_event\") int p4(void *ctx) { return emit(4, 4); }\n";

#define ALT(k, t, p) {.kind = (k), .target = (t), .prog_name = (p)}

static struct ut_alt alts0[] = {ALT(UT_PROBE_TRACEPOINT, "nosuch/event", "p0_a"),
				ALT(UT_PROBE_TRACEPOINT, "syscalls/sys_enter_getpid", "p0_b")};
static struct ut_alt alts1[] = {ALT(UT_PROBE_FENTRY, "vfs_read", "p1_a"),
				ALT(UT_PROBE_TP_BTF, "sched_switch", "p1_b")};
static struct ut_alt alts2[] = {ALT(UT_PROBE_TRACEPOINT, "nosuch/other", "p2_a")};
static struct ut_alt alts3[] = {ALT(UT_PROBE_TRACEPOINT, "syscalls/sys_enter_getppid", "p3_a"),
				ALT(UT_PROBE_RAW_TP, "sys_enter", "p3_b")};
static struct ut_alt alts4[] = {ALT(UT_PROBE_INTERVAL, "10000000", "p4")};

#define PROBE(s, line, opt, a)                                                         \
	{.spec = (s), .loc = {"test.ut", (line), 1}, .optional = (opt),                \
	 .nalts = sizeof(a) / sizeof((a)[0]), .alts = (a)}

static struct ut_probe probes[] = {
	PROBE("tracepoint:nosuch:event | tracepoint:syscalls:sys_enter_getpid", 1, false, alts0),
	PROBE("fentry:vfs_read | tp_btf:sched_switch", 2, false, alts1),
	PROBE("tracepoint:nosuch:other?", 3, true, alts2),
	PROBE("tracepoint:syscalls:sys_enter_getppid | raw_tp:sys_enter", 4, false, alts3),
	PROBE("interval:10ms", 5, false, alts4),
};

struct seen {
	unsigned records[6];
	unsigned thread_records;
	unsigned long long getpid_value;
};

/* Every record here is a struct rec (bpf_src) or a thread record. */
static size_t record_len(void *ctx, const void *rec, size_t avail)
{
	(void)ctx;
	size_t len = *(const unsigned *)((const char *)rec + 8) == 0xffffffffu ? 40 : 32;
	return len <= avail ? len : 0;
}

static int on_record(void *ctx, const void *rec, size_t size)
{
	struct seen *s = ctx;
	const struct {
		unsigned long long ts;
		unsigned event, pid, tid, cpu;
		unsigned long long value;
	} *r = rec;
	if (r->event == 0xffffffffu)
		s->thread_records++;
	else if (r->event < 5 && size >= sizeof(*r)) {
		s->records[r->event]++;
		if (r->event == 0)
			s->getpid_value = r->value;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sections named .debug_* in an ELF64 object. */
static int debug_sections(const unsigned char *obj, size_t len)
{
	Elf64_Ehdr eh;
	memcpy(&eh, obj, sizeof(eh));
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(obj + eh.e_shoff);
	int n = 0;
	for (unsigned i = 0; i < eh.e_shnum && eh.e_shoff + (i + 1) * sizeof(*sh) <= len; i++)
		n += strncmp((const char *)obj + sh[eh.e_shstrndx].sh_offset + sh[i].sh_name, ".debug_", 7) == 0;
	return n;
}

/* The cache stores BPF objects without DWARF (runtime/elf_strip.h); a
 * damaged object is left alone or stripped, never read or written out of
 * its bounds (ASan). */
static void check_stripped(const unsigned char *obj, size_t len)
{
	CHECK("object without DWARF", debug_sections(obj, len) == 0);
	unsigned char *copy = malloc(len);
	size_t again = len;
	memcpy(copy, obj, len);
	ut_strip_debug_sections(copy, &again);
	CHECK("stripping again changes nothing", again == len && memcmp(copy, obj, len) == 0);
	bool cut_ok = true, damaged_ok = true;
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		size_t n = cut;
		memcpy(copy, obj, cut);
		ut_strip_debug_sections(copy, &n);
		cut_ok &= n <= cut;
	}
	CHECK("cut objects stay in their bounds", cut_ok);
	srand(7);
	for (int i = 0; i < 2000; i++) {
		size_t n = len;
		memcpy(copy, obj, len);
		size_t at = (size_t)rand() % (i % 2 ? len : sizeof(Elf64_Ehdr) + 64);
		copy[at] ^= (unsigned char)(1 + rand() % 255);
		ut_strip_debug_sections(copy, &n);
		damaged_ok &= n <= len;
	}
	CHECK("damaged objects stay in their bounds", damaged_ok);
	free(copy);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP test_runtime_load: needs root for BPF\n");
		return 0;
	}
	char cache_dir[] = "/tmp/ut-runtime-load-XXXXXX";
	if (!mkdtemp(cache_dir))
		return 1;
	setenv("UT_CACHE_DIR", cache_dir, 1);

	char err[4096] = "";
	struct ut_object_build build = {.c_src = bpf_src};
	ut_build_objects(&build, 1);
	CHECK("build object", build.rc == 0);
	if (build.rc != 0) {
		printf("%s\n", build.err);
		CHECK_DONE();
	}
	void *obj = build.obj;
	size_t obj_len = build.len;
	check_stripped(obj, obj_len);

	struct ut_load_opts o = {
		.obj = obj, .obj_len = obj_len, .probes = probes, .nprobes = 5,
		.ringbuf_bytes = 1 << 20, .filter_tgid = (uint32_t)getpid(),
		.wakeup_bytes = 1,  /* wake the reader at once */
	};
	struct ut_loaded *l = ut_load(&o, err, sizeof(err));
	CHECK("load with alternatives", l != NULL);
	if (!l) {
		printf("%s\n", err);
		CHECK_DONE();
	}
	CHECK("missing tracepoint skipped", ut_loaded_alt(l, 0) == 1);
	CHECK("skip reason named", strstr(ut_loaded_skipped(l, 0), "nosuch/event (no such tracepoint)") != NULL);
	CHECK("fentry falls back to tp_btf", ut_loaded_alt(l, 1) == 1);
	CHECK("fentry reason named", strstr(ut_loaded_skipped(l, 1), "fentry:vfs_read") != NULL);
	CHECK("optional probe skipped", ut_loaded_alt(l, 2) == -1);
	CHECK("verifier rejection falls back", ut_loaded_alt(l, 3) == 1);
	CHECK("verifier reason named", strstr(ut_loaded_skipped(l, 3), "verifier") != NULL);
	CHECK("interval attached", ut_loaded_alt(l, 4) == 0);
	/* after the script's probes, the built-in that names a thread again after exec */
	CHECK("built-in exec program only", ut_loaded_count(l) == 6);
	CHECK("built-in on a raw tracepoint", ut_loaded_alt(l, 5) == 0 &&
						 ut_loaded_probe(l, 5)->alts[0].kind == UT_PROBE_RAW_TP);

	struct seen seen = {0};
	struct ut_consumer *c = ut_consumer_new(ut_loaded_object(l), record_len, on_record, &seen, err, sizeof(err));
	CHECK("consumer", c != NULL);
	for (int i = 0; i < 3; i++)
		syscall(SYS_getpid);
	usleep(30 * 1000);  /* a context switch for sched_switch, ticks for interval */
	double deadline = now_ms() + 2000;
	while (c && (seen.records[0] < 3 || seen.records[1] == 0 || seen.records[4] == 0) &&
	       now_ms() < deadline)
		ut_consumer_poll(c, 50);
	CHECK("getpid records arrived", seen.records[0] >= 3);
	CHECK("getpid record value", seen.getpid_value == 42);
	CHECK("thread record arrived", seen.thread_records >= 1);
	CHECK("tp_btf records arrived", seen.records[1] >= 1);
	CHECK("raw_tp records arrived", seen.records[3] >= 1);
	CHECK("interval records arrived", seen.records[4] >= 1);

	struct ut_detach_stats ds;
	ut_detach(l, &ds);
	CHECK("detach counts links", ds.links == 5 && ds.slow_links == 1);
	printf("detach: %u links (%u perf-event) in %.1f ms\n", ds.links, ds.slow_links, ds.ms);
	if (c)
		ut_consumer_drain(c);
	struct ut_probe_totals totals;
	CHECK("counters readable", c && ut_consumer_counters(c, 0, &totals) == 0);
	CHECK("counters count getpid records", totals.emitted == seen.records[0] && totals.lost == 0);
	CHECK("thread counter", c && ut_consumer_counters(c, 5, &totals) == 0 &&
					totals.emitted == seen.thread_records);
	ut_consumer_free(c);
	ut_unload(l);

	/* A required probe that exists under no alternative. */
	struct ut_alt none_alts[] = {ALT(UT_PROBE_TRACEPOINT, "nosuch/event", "p0_a"),
				     ALT(UT_PROBE_TRACEPOINT, "nosuch/other", "p2_a")};
	struct ut_probe none = PROBE("tracepoint:nosuch:*", 7, false, none_alts);
	o.probes = &none;
	o.nprobes = 1;
	l = ut_load(&o, err, sizeof(err));
	CHECK("nothing matches: fails", l == NULL);
	CHECK("nothing matches: message",
	      strncmp(err, "probe 'tracepoint:nosuch:*' (test.ut:7) matches nothing on kernel ", 66) == 0 &&
		      strstr(err, ": tried tracepoint:nosuch/event (no such tracepoint), "
				  "tracepoint:nosuch/other (no such tracepoint)") != NULL);
	printf("message: %s\n", err);
	ut_unload(l);

	/* The verifier rejects the only alternative. */
	struct ut_alt bad_alts[] = {ALT(UT_PROBE_TRACEPOINT, "syscalls/sys_enter_getppid", "p3_a")};
	struct ut_probe bad = PROBE("tracepoint:syscalls:sys_enter_getppid", 9, false, bad_alts);
	o.probes = &bad;
	l = ut_load(&o, err, sizeof(err));
	CHECK("verifier rejection: fails", l == NULL);
	CHECK("verifier rejection: message",
	      strstr(err, "probe 'tracepoint:syscalls:sys_enter_getppid' (test.ut:9): the BPF verifier rejected") != NULL);
	printf("message: %s\n", err);
	ut_unload(l);

	free(obj);
	char cmd[PATH_MAX];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	CHECK("cache cleaned", system(cmd) == 0);
	CHECK_DONE();
}
