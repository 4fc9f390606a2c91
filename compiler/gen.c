/* Assembles the generated BPF C: preamble, record and map types, maps,
 * programs; and fills the program's map table for printing at exit. */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "compiler/compiler.h"

struct ut_event *gen_new_event(struct compiler *c, enum ut_event_op op, struct ut_loc loc)
{
	struct ut_program *p = c->prog;
	p->events = xrealloc_array(p->events, p->nevents + 1, sizeof(*p->events));
	struct ut_event *ev = &p->events[p->nevents++];
	memset(ev, 0, sizeof(*ev));
	ev->op = op;
	ev->loc = loc;
	ev->group = -1;
	ev->flow = -1;
	return ev;
}

static uint32_t key_field_size(const struct type *t)
{
	return t->kind == T_STR ? ((uint32_t)t->size + 7) & ~7u : 8;
}

/* One BPF map per script map.  Aggregations are per-CPU (no contention;
 * user space sums the CPUs); maps the script reads back are shared.  Maps
 * are not preallocated: creating 65536 entries per CPU up front made
 * start-up slow, and most scripts use a few keys. */
#define HASH_MAP(type) "\t__uint(type, " type ");\n\t__uint(max_entries, 65536);\n\t__uint(map_flags, BPF_F_NO_PREALLOC);\n"
#define ARRAY_MAP(type) "\t__uint(type, " type ");\n\t__uint(max_entries, 1);\n"

static void gen_map(struct compiler *c, unsigned i)
{
	struct map_info *m = c->maps[i];
	struct ut_map *out = &c->prog->maps[i];
	bool hist = m->agg == UT_AGG_HIST || m->agg == UT_AGG_LHIST;
	memset(out, 0, sizeof(*out));
	out->name = xstrdup(m->name);
	out->bpf_name = xasprintf("m_%u", i);
	out->agg = m->kind == MAP_VALUE ? UT_AGG_LAST : m->agg;
	out->lhist_min = m->lhist_min;
	out->lhist_max = m->lhist_max;
	out->lhist_step = m->lhist_step;
	out->nkeys = m->nkeys;
	out->keys = xcalloc(m->nkeys + 1, sizeof(*out->keys));
	out->key_show = xcalloc(m->nkeys + 1, sizeof(*out->key_show));
	/* Strings are copied into keys and out of string values in 8-byte
	 * words only when both sides are 8-byte aligned: byte-wise copies from
	 * map memory spill past the 512-byte stack.  Keys with an integer are
	 * aligned already. */
	bool strings_only = !hist;
	for (unsigned k = 0; k < m->nkeys; k++)
		strings_only &= m->key_types[k].kind == T_STR;
	sb_printf(&c->c_types, "struct %sut_mk_%u {\n", strings_only && m->nkeys ? "__attribute__((aligned(8))) " : "", i);
	uint32_t off = 0;
	for (unsigned k = 0; k < m->nkeys; k++) {
		const struct type *t = &m->key_types[k];
		uint32_t size = key_field_size(t);
		out->keys[k] = (struct ut_field){.type = t->kind == T_STR ? UT_F_STR : t->kind == T_PTR ? UT_F_PTR
							: t->is_signed ? UT_F_S64 : UT_F_U64,
						 .offset = off, .size = size};
		out->key_show[k] = m->key_show[k];
		if (t->kind == T_STR)
			sb_printf(&c->c_types, "\tchar k%u[%u];\n", k, size);
		else
			sb_printf(&c->c_types, "\t__u64 k%u;\n", k);
		off += size;
	}
	if (hist) {
		sb_puts(&c->c_types, "\t__u64 bucket;\n");
		off += 8;
	}
	/* A keyless count, avg, min or max is a one-slot array (its look-up is
	 * inlined by the verifier, where a hash hashes and locks): all zeros
	 * there means never hit, so the summary leaves such a slot out and
	 * clear() writes zeros.  Values and sums stay hashes (0 is a value
	 * they print), as do maps a probe deletes (arrays cannot). */
	bool single = off == 0 && !m->deleted_in_bpf && m->kind == MAP_AGG && m->agg != UT_AGG_SUM;
	if (off == 0) {
		sb_puts(&c->c_types, single ? "\t__u32 index;\n" : "\t__u64 unused;\n");
		off = single ? 4 : 8;
	}
	sb_puts(&c->c_types, "};\n");
	out->key_size = off;
	const char *value = "__s64";
	out->value_size = 8;
	if ((m->agg == UT_AGG_AVG || m->agg == UT_AGG_MIN || m->agg == UT_AGG_MAX) && m->kind == MAP_AGG) {
		value = "struct ut_avg";
		out->value_size = 16;
	} else if (m->kind == MAP_VALUE && m->value_type.kind == T_STR) {
		uint32_t size = ((uint32_t)m->value_type.size + 7) & ~7u;
		sb_printf(&c->c_types, "struct __attribute__((aligned(8))) ut_mv_%u { char s[%u]; };\n", i, size);
		out->value_size = size;
		out->value_show = (struct ut_value){.kind = UT_VAL_FIELD, .display = UT_SHOW_STRING};
		char *v = xasprintf("struct ut_mv_%u", i);
		sb_printf(&c->c_maps, "struct {\n%s\t__type(key, struct ut_mk_%u);\n\t__type(value, %s);\n} m_%u SEC(\".maps\");\n\n",
			  HASH_MAP("BPF_MAP_TYPE_HASH"), i, v, i);
		free(v);
		sb_puts(&c->c_types, "\n");
		return;
	}
	if (m->kind == MAP_VALUE)
		out->value_show = m->value_show;
	sb_puts(&c->c_types, "\n");
	const char *type = single ? ARRAY_MAP("BPF_MAP_TYPE_PERCPU_ARRAY")
			 : m->kind == MAP_AGG ? HASH_MAP("BPF_MAP_TYPE_PERCPU_HASH") : HASH_MAP("BPF_MAP_TYPE_HASH");
	sb_printf(&c->c_maps, "struct {\n%s\t__type(key, struct ut_mk_%u);\n\t__type(value, %s);\n} m_%u SEC(\".maps\");\n\n",
		  type, i, value, i);
}

/* kstack and ustack.  bpf_get_stack() reads the stack into a per-CPU
 * buffer, and the stack is kept in ut_stacks under a 64-bit hash of its
 * frames (and of its process, for a user stack): map keys and records hold
 * that id, and user space reads the frames back by it.  Not a
 * BPF_MAP_TYPE_STACK_TRACE with bpf_get_stackid(): its ids are the buckets
 * of a fixed table, where a stack hashing to a taken bucket is lost, or
 * with BPF_F_REUSE_STACKID replaces the first one, so that ids already in
 * keys and records name the wrong frames; and it allocates every bucket
 * at full size when loaded.  A hash here holds only the stacks seen.
 * ut_stacks_added counts new stacks, so user space looks for new user
 * stacks (to name their frames while their processes exist) only when
 * there are some. */
static const char stack_code[] =
	"#define UT_STACK_FRAMES 127\n"
	"struct ut_stack {\n"
	"\t__u32 pid;       /* a user stack's process (its symbols); 0: a kernel stack */\n"
	"\t__u32 nframes;\n"
	"\t__u64 ip[UT_STACK_FRAMES];\n"
	"};\n\n"
	"struct {\n\t__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);\n\t__uint(max_entries, 1);\n"
	"\t__type(key, __u32);\n\t__type(value, struct ut_stack);\n} ut_stack_buf SEC(\".maps\");\n\n"
	"struct {\n\t__uint(type, BPF_MAP_TYPE_HASH);\n\t__uint(max_entries, 65536);\n"
	"\t__uint(map_flags, BPF_F_NO_PREALLOC);\n\t__type(key, __u64);\n\t__type(value, struct ut_stack);\n"
	"} ut_stacks SEC(\".maps\");\n\n"
	"struct {\n\t__uint(type, BPF_MAP_TYPE_ARRAY);\n\t__uint(max_entries, 1);\n"
	"\t__type(key, __u32);\n\t__type(value, __u64);\n} ut_stacks_added SEC(\".maps\");\n\n"
	"/* The stack's id; 0 for none (the user stack of a kernel thread). */\n"
	"static __always_inline __u64 ut_stack(void *ctx, __u64 flags)\n"
	"{\n"
	"\t__u32 zero = 0;\n"
	"\tstruct ut_stack *s = bpf_map_lookup_elem(&ut_stack_buf, &zero);\n"
	"\tif (!s)\n\t\treturn 0;\n"
	"\tlong n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), flags);\n"
	"\tif (n <= 0)\n\t\treturn 0;\n"
	"\ts->nframes = n / 8;\n"
	"\ts->pid = flags ? bpf_get_current_pid_tgid() >> 32 : 0;\n"
	"\t__u64 h = 0xcbf29ce484222325ULL ^ ((__u64)s->pid << 1) ^ (flags != 0);\n"
	"\tfor (__u32 i = 0; i < UT_STACK_FRAMES && i < s->nframes; i++) {\n"
	"\t\th = (h ^ s->ip[i]) * 0x100000001b3ULL;\n"
	"\t\th ^= h >> 29;\n"
	"\t}\n"
	"\tif (!h)\n\t\th = 1;\n"
	"\tif (bpf_map_update_elem(&ut_stacks, &h, s, BPF_NOEXIST) == 0) {\n"
	"\t\t__u64 *added = bpf_map_lookup_elem(&ut_stacks_added, &zero);\n"
	"\t\tif (added)\n\t\t\t__sync_fetch_and_add(added, 1);\n"
	"\t}\n"
	"\treturn h;\n"
	"}\n\n";

static const char *target_arch(void)
{
	struct utsname u;
	if (uname(&u) == 0) {
		if (strcmp(u.machine, "aarch64") == 0)
			return "arm64";
		if (strncmp(u.machine, "riscv", 5) == 0)
			return "riscv";
		if (strcmp(u.machine, "s390x") == 0)
			return "s390";
	}
	return "x86";
}

char *gen_finish(struct compiler *c)
{
	struct ut_program *p = c->prog;
	p->nmaps = c->nmaps;
	p->maps = xcalloc(c->nmaps, sizeof(*p->maps));
	struct strbuf types = c->c_types;   /* probe records first, then maps */
	memset(&c->c_types, 0, sizeof(c->c_types));
	for (unsigned i = 0; i < c->nmaps; i++)
		gen_map(c, i);
	struct strbuf out = {0};
	sb_printf(&out, "/* Generated by uring-trace: BPF programs for %u probe%s. */\n", p->nprobes,
		  p->nprobes == 1 ? "" : "s");
	sb_printf(&out, "#define __TARGET_ARCH_%s 1\n#include \"vmlinux.h\"\n#define UT_NPROBES %u\n",
		  target_arch(), p->nprobes ? p->nprobes : 1);
	if (c->uses_scratch)
		sb_printf(&out, "#define UT_PATH_SLOTS %u\n", c->path_slots);
	if (c->max_batch_bytes)
		sb_printf(&out, "#define UT_BATCH_BYTES %u\n", c->max_batch_bytes);
	sb_puts(&out, "#include \"ut.h\"\n\n");
	if (c->uses_stacks)
		sb_puts(&out, stack_code);
	sb_puts(&out, c->c_types.s ? c->c_types.s : "");
	sb_puts(&out, types.s ? types.s : "");
	for (unsigned i = 0; i < p->ndisks; i++)
		sb_printf(&out, "const volatile __u64 ut_disk_%u = 0;   /* a diskdev(), set at load */\n", i);
	sb_puts(&out, c->c_maps.s ? c->c_maps.s : "");
	sb_puts(&out, c->c_funcs.s ? c->c_funcs.s : "");
	sb_free(&types);
	return out.s;
}
