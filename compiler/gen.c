/* Generation of the whole BPF C: preamble, record and map types, maps,
 * and the programs of the alternatives (gen_stmt.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "compiler/gen.h"

/* One BPF map per script map (its layout from resources.c).  Maps are not
 * preallocated: creating 65536 entries per CPU up front made start-up
 * slow, and most scripts use a few keys. */
#define HASH_MAP(type) "\t__uint(type, " type ");\n\t__uint(max_entries, 65536);\n\t__uint(map_flags, BPF_F_NO_PREALLOC);\n"
/* lru @m: the kernel's LRU hash (4.10+) pushes out the least recently
 * used entry when a new key finds it full, so it never refuses one.  Its
 * order is approximate (each CPU keeps free entries of its own, taken
 * from a common list in batches of 128; an entry used since the last scan
 * of its list is passed over), fine at this size.  It is always
 * preallocated (the kernel refuses BPF_F_NO_PREALLOC there): 65536
 * entries of key, value and 48 bytes, allocated when it is created. */
#define LRU_HASH_MAP "\t__uint(type, BPF_MAP_TYPE_LRU_HASH);\n\t__uint(max_entries, 65536);\n"
#define ARRAY_MAP(type) "\t__uint(type, " type ");\n\t__uint(max_entries, 1);\n"

/* A cached map's slots (bpf/ut.h, ut_front_read); its reads, writes, adds and deletes as global
 * functions, out of line: the verifier checks each once, where their
 * branches inlined at every use (a reap loop's read and delete a turn)
 * multiplied the paths it follows (--summary-only took 15 s to load, not
 * 1.6). */
static void gen_front(struct strbuf *maps, unsigned i)
{
	sb_printf(maps, "struct {\n\t__uint(type, BPF_MAP_TYPE_ARRAY);\n\t__uint(max_entries, UT_FRONT_SLOTS);\n"
		  "\t__type(key, __u32);\n\t__type(value, struct ut_front_slot);\n} m_%u_front SEC(\".maps\");\n\n", i);
	sb_printf(maps, "__noinline __u64 ut_front_read_%u(__u64 k0)\n{\n\tstruct ut_mk_%u k = {k0};\n"
		  "\treturn ut_front_read(&m_%u, &m_%u_front, &k, k0);\n}\n\n", i, i, i, i);
	sb_printf(maps, "__noinline int ut_front_write_%u(__u64 k0, __u64 v)\n{\n\tstruct ut_mk_%u k = {k0};\n"
		  "\tut_front_write(&m_%u, &m_%u_front, &k, k0, v);\n\treturn 0;\n}\n\n", i, i, i, i);
	sb_printf(maps, "__noinline __s64 ut_front_add_%u(__u64 k0, __s64 v)\n{\n\tstruct ut_mk_%u k = {k0};\n"
		  "\treturn ut_front_add(&m_%u, &m_%u_front, &k, k0, v);\n}\n\n", i, i, i, i);
	sb_printf(maps, "__noinline int ut_front_delete_%u(__u64 k0)\n{\n\tstruct ut_mk_%u k = {k0};\n"
		  "\tut_front_delete(&m_%u, &m_%u_front, &k, k0);\n\treturn 0;\n}\n\n", i, i, i, i);
}

static void gen_map(struct compiler *c, unsigned i, struct strbuf *types, struct strbuf *maps)
{
	const struct map_info *m = &c->maps[i];
	const struct ut_map *layout = &c->prog->maps[i];
	bool bucketed = ut_aggs[layout->agg].bpf_bucket != NULL;
	/* Strings are copied into keys and out of string values in 8-byte
	 * words only when both sides are 8-byte aligned: byte-wise copies from
	 * map memory spill past the 512-byte stack.  Keys with an integer are
	 * aligned already. */
	bool strings_only = !bucketed;
	for (unsigned k = 0; k < m->nkeys; k++)
		strings_only &= layout->keys[k].type == UT_F_STR;
	sb_printf(types, "struct %sut_mk_%u {\n", strings_only && m->nkeys ? "__attribute__((aligned(8))) " : "", i);
	for (unsigned k = 0; k < m->nkeys; k++) {
		if (layout->keys[k].type == UT_F_STR)
			sb_printf(types, "\tchar k%u[%u];\n", k, layout->keys[k].size);
		else
			sb_printf(types, "\t__u64 k%u;\n", k);
	}
	if (bucketed)
		sb_puts(types, "\t__u64 bucket;\n");
	if (!m->nkeys && !bucketed)
		sb_puts(types, m->storage == MAP_PERCPU_SLOT ? "\t__u32 index;\n" : "\t__u64 unused;\n");
	sb_puts(types, "};\n");
	char *value = xstrdup(layout->value_size == 16 ? "struct ut_avg" : "__s64");
	if (m->kind == MAP_VALUE && m->value_type.kind == T_TUPLE) {
		free(value);
		value = xasprintf("struct ut_tuple_%d", m->value_type.tuple);
	} else if (ut_map_holds_string(layout)) {
		sb_printf(types, "struct __attribute__((aligned(8))) ut_mv_%u { char s[%u]; };\n", i, layout->value_size);
		free(value);
		value = xasprintf("struct ut_mv_%u", i);
	}
	sb_puts(types, "\n");
	const char *type = m->storage == MAP_PERCPU_SLOT ? ARRAY_MAP("BPF_MAP_TYPE_PERCPU_ARRAY")
			 : m->storage == MAP_PERCPU_HASH ? HASH_MAP("BPF_MAP_TYPE_PERCPU_HASH")
			 : m->is_lru ? LRU_HASH_MAP : HASH_MAP("BPF_MAP_TYPE_HASH");
	sb_printf(maps, "struct {\n%s\t__type(key, struct ut_mk_%u);\n\t__type(value, %s);\n} m_%u SEC(\".maps\");\n\n",
		  type, i, value, i);
	if (m->front)
		gen_front(maps, i);
	free(value);
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
	"/* Keeps the stack in s (its frames, its process for a user stack) under\n"
	" * its hash: its id. */\n"
	"static __always_inline __u64 ut_stack_keep(struct ut_stack *s, __u64 user)\n"
	"{\n"
	"\t__u32 zero = 0;\n"
	"\ts->pid = user ? bpf_get_current_pid_tgid() >> 32 : 0;\n"
	"\t__u64 h = 0xcbf29ce484222325ULL ^ ((__u64)s->pid << 1) ^ (user != 0);\n"
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
	"}\n\n"
	"/* The id of the stack's first max_frames frames; 0 for none (the user\n"
	" * stack of a kernel thread). */\n"
	"static __always_inline __attribute__((unused)) __u64 ut_stack(void *ctx, __u64 flags, __u32 max_frames)\n"
	"{\n"
	"\t__u32 zero = 0;\n"
	"\tstruct ut_stack *s = bpf_map_lookup_elem(&ut_stack_buf, &zero);\n"
	"\tif (!s)\n\t\treturn 0;\n"
	"\tlong n = bpf_get_stack(ctx, s->ip, sizeof(s->ip), flags);\n"
	"\tif (n <= 0)\n\t\treturn 0;\n"
	"\ts->nframes = n / 8 < max_frames ? n / 8 : max_frames;\n"
	"\treturn ut_stack_keep(s, flags);\n"
	"}\n\n"
	"/* usym(addr): a user address kept as a stack of one frame, with its\n"
	" * process, so user space names it from the process's mappings. */\n"
	"static __always_inline __attribute__((unused)) __u64 ut_usym(__u64 addr)\n"
	"{\n"
	"\t__u32 zero = 0;\n"
	"\tstruct ut_stack *s = bpf_map_lookup_elem(&ut_stack_buf, &zero);\n"
	"\tif (!s)\n\t\treturn 0;\n"
	"\ts->ip[0] = addr;\n"
	"\ts->nframes = 1;\n"
	"\treturn ut_stack_keep(s, 1);\n"
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

char *gen_program(struct compiler *c)
{
	struct ut_program *p = c->prog;
	struct gen_parts parts = {0};
	for (unsigned i = 0; i < c->nalts; i++)
		gen_alternative(&parts, c, c->alts[i]);
	struct strbuf map_types = {0}, maps = {0};
	/* tuples: a struct each, its elements 8-byte aligned */
	for (unsigned i = 0; i < c->ntuples; i++) {
		const struct tuple_info *t = &c->tuples[i];
		sb_printf(&map_types, "struct ut_tuple_%u {\n", i);
		for (unsigned e = 0; e < t->n; e++) {
			if (t->el[e].kind == T_STR)
				sb_printf(&map_types, "\tchar e%u[%u];\n", e, ((unsigned)t->el[e].size + 7) & ~7u);
			else
				sb_printf(&map_types, "\t%s e%u;\n", t->el[e].is_signed ? "__s64" : "__u64", e);
		}
		sb_printf(&map_types, "} __attribute__((aligned(8)));\n\n");
	}
	/* a map the reader keeps has no BPF map: creating each 65536-entry
	 * hash allocated its buckets (1 MiB) at load, for nothing */
	for (unsigned i = 0; i < c->nmaps; i++)
		if (!c->prog->maps[i].user_side)
			gen_map(c, i, &map_types, &maps);
	struct strbuf out = {0};
	sb_printf(&out, "/* Generated by uring-trace: BPF programs for %u probe%s. */\n", p->nprobes,
		  p->nprobes == 1 ? "" : "s");
	sb_printf(&out, "#define __TARGET_ARCH_%s 1\n#include \"vmlinux.h\"\n#define UT_NPROBES %u\n",
		  target_arch(), p->nprobes ? p->nprobes : 1);
	if (c->uses_scratch)
		sb_printf(&out, "#define UT_PATH_SLOTS %u\n", c->path_slots);
	if (c->max_stage_bytes)
		sb_printf(&out, "#define UT_BATCH_BYTES %u\n", c->max_stage_bytes);
	if (c->memo_maps)
		sb_printf(&out, "#define UT_MEMO_MAPS %u\n", c->memo_maps);
	if (c->uses_iter_loops)
		sb_puts(&out, "#define UT_ITER_LOOPS 1\n");
	sb_puts(&out, "#include \"ut.h\"\n\n");
	if (c->uses_stacks) {
		sb_printf(&out, "#define UT_STACK_FRAMES %d\n", STACK_FRAMES_MAX);
		sb_puts(&out, stack_code);
	}
	sb_puts(&out, map_types.s ? map_types.s : "");
	sb_puts(&out, parts.types.s ? parts.types.s : "");
	for (unsigned i = 0; i < p->ndisks; i++)
		sb_printf(&out, "const volatile __u64 ut_disk_%u = 0;   /* a diskdev(), set at load */\n", i);
	for (unsigned i = 0; i < p->nenums; i++)
		sb_printf(&out, "const volatile __s64 ut_enum_%u = 0;   /* %s on the running kernel, set at load */\n", i,
			  p->enums[i].name);
	sb_puts(&out, maps.s ? maps.s : "");
	sb_puts(&out, parts.funcs.s ? parts.funcs.s : "");
	sb_free(&map_types);
	sb_free(&maps);
	sb_free(&parts.types);
	sb_free(&parts.funcs);
	return out.s;
}
