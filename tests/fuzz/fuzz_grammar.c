/* libFuzzer target: scripts built from the grammar.  The input is not
 * script text but the choices of a generator that writes scripts as
 * compiler/parser.y reads them: imports, constants, tables, functions,
 * aliases and probes of the stored kernel (tracepoints with their fields,
 * BTF tracepoints and functions with their typed arguments, followed
 * through BTF members), statements and expressions of every kind, the
 * trace constructs, builtins, calls and aggregations; now and then a long
 * list or a deep nesting.  Most scripts are well formed and many check,
 * so mutations explore the checker and the code generator rather than
 * the parser's errors (fuzz_compiler.c feeds raw text).
 *
 * Each byte of the input is one choice; an exhausted input chooses 0,
 * which is always the shortest way to finish, so every input makes a
 * script.  Scripts are compiled against the kernel that UT_BTF and
 * UT_TRACEFS name (make fuzz-grammar unpacks tests/kernel/6.18 there), so
 * a find reproduces on any machine.  Besides crashes, sanitizer reports,
 * leaks and hangs, a compiled program must have C, a failure must report
 * an error, and the program saved as a .uto must load again (what the
 * compiler makes, the loader's checks accept).
 *
 * UT_FUZZ_PRINT=1 prints each script to stderr: how a find becomes a
 * tests/compiler/crashers/ file.  Build and run: make fuzz-grammar
 * (tests/fuzz/fuzz.mk). */
#include <bpf/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/passes.h"
#include "compiler/gen_native.h"
#include "compiler/program_io.h"
#include "tests/fuzz/choices.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Scripts stop growing past this many bytes. */
#define MAX_SCRIPT 32768
/* Ordinary nesting of expressions and statements; deep chains are
 * written in one go (chain_expr, chain_stmt). */
#define MAX_DEPTH 5
#define MAX_NAMES 12

static struct ut_kernel *kernel;
static FILE *devnull;
static char stdlib_dir[4096], self_exe[4096];
/* the stored kernel's tracepoints ("category:name"), those of io_uring and
 * the block layer, and its functions */
static char **tracepoints, **uring_tracepoints, **block_tracepoints, **functions;
static int ntracepoints, nuring_tracepoints, nblock_tracepoints, nfunctions;
static bool print_scripts;

struct arg {
	char name[64];
	bool is_str;
	int32_t btf;     /* a BTF type to follow with '.', or 0 */
};

struct map {
	char name[16];
	int kind;        /* enum map_use */
	unsigned nkeys;
	bool key_str[8];
};

enum map_use { MAP_COUNT, MAP_SUM, MAP_AVG, MAP_MIN, MAP_MAX, MAP_HIST, MAP_LHIST, MAP_INT, MAP_STR, MAP_USES };

struct gen {
	struct choices in;
	struct strbuf out;
	/* the script so far */
	struct map maps[MAX_NAMES];
	unsigned nmaps;
	char consts[MAX_NAMES][16];
	bool const_str[MAX_NAMES];
	unsigned nconsts, ntables, nexpr_fns, nstmt_fns, naliases;
	unsigned expr_fn_arity[MAX_NAMES], stmt_fn_arity[MAX_NAMES];
	bool imported;
	/* the probe (or function) being written */
	struct arg args[48];
	unsigned nargs;
	bool has_retval;
	char locals[MAX_NAMES][16];
	bool local_str[MAX_NAMES];
	unsigned nlocals;
	const char *params[16];   /* a function's parameters, used as names */
	unsigned nparams;
	unsigned loops;
	char define[64];          /* -D NAME=VALUE, or "" */
};

/* ---- writing ---- */

static bool full(const struct gen *g)
{
	return g->out.len > MAX_SCRIPT;
}

static void put(struct gen *g, const char *s)
{
	sb_puts(&g->out, s);
}

static const char *one_of(struct gen *g, const char *const *v, unsigned n)
{
	return v[pick(&g->in, n)];
}
#define ONE_OF(g, ...) \
	one_of(g, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Lengths of long lists and deep chains: past the compiler's bounds
 * (16 values, 8 keys, 256 levels, 8 loops) as often as under them. */
static unsigned long_count(struct gen *g, unsigned max)
{
	return 1 + pick(&g->in, max);
}

/* ---- the kernel's names ---- */

static void probe_args_clear(struct gen *g)
{
	g->nargs = 0;
	g->has_retval = false;
}

static void add_arg(struct gen *g, const char *name, bool is_str, int32_t btf)
{
	if (g->nargs >= sizeof(g->args) / sizeof(g->args[0]) || !name[0])
		return;
	struct arg *a = &g->args[g->nargs++];
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->is_str = is_str;
	a->btf = btf;
}

static void tracepoint_args(struct gen *g, const char *cat_name)
{
	char cat[128];
	snprintf(cat, sizeof(cat), "%s", cat_name);
	char *colon = strchr(cat, ':');
	if (!colon)
		return;
	*colon = 0;
	const struct ut_tracepoint *tp = ut_kernel_tracepoint(kernel, cat, colon + 1);
	for (unsigned i = 0; tp && i < tp->nfields; i++)
		add_arg(g, tp->fields[i].name, tp->fields[i].is_string, 0);
}

static void btf_args(struct gen *g, struct ut_param *params, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		add_arg(g, params[i].name, false, params[i].type);
	free(params);
}

/* ---- expressions ---- */

enum want { W_INT, W_STR };

static void expr(struct gen *g, enum want w, unsigned depth);

static void int_literal(struct gen *g)
{
	static const char *const odd[] = {
		"0", "1", "-1", "0xffffffffffffffff", "9223372036854775807", "9223372036854775808",
		"0x8000000000000000", "18446744073709551616", "0x0", "4096", "65536", "1024", "64",
	};
	if (pick(&g->in, 3) == 0)
		sb_printf(&g->out, "%u", pick(&g->in, 100));
	else
		put(g, odd[pick(&g->in, sizeof(odd) / sizeof(odd[0]))]);
}

static void string_literal(struct gen *g)
{
	static const char *const texts[] = {
		"\"x\"", "\"\"", "\"fio\"", "\"read\"", "\"with \\\"quotes\\\" and \\\\\"", "\"tab\\tnl\\n\"",
		"\"\\x41\\x7f\"", "\"%d %s %%\"", "\"vda\"", "\"a very long name that goes on for a while\"",
		"\"\\x00\"", "\"\\q\"", "\"\xc3\xa9\"",
	};
	put(g, texts[pick(&g->in, sizeof(texts) / sizeof(texts[0]))]);
}

/* '.' steps through BTF from type id: members of structs, pointed to
 * when they are pointers. */
static void member_chain(struct gen *g, int32_t id, unsigned steps)
{
	for (unsigned s = 0; s < steps && id > 0; s++) {
		struct ut_ktype t;
		if (ut_kernel_type(kernel, id, &t) < 0)
			return;
		if (t.kind == UT_KT_PTR) {
			if (ut_kernel_type(kernel, t.target, &t) < 0)
				return;
		}
		if (t.kind != UT_KT_STRUCT && t.kind != UT_KT_UNION)
			return;
		char **names;
		int n = ut_kernel_member_names(kernel, t.id, &names);
		if (n <= 0) {
			free(names);
			return;
		}
		const char *m = names[pick(&g->in, (unsigned)n)];
		sb_printf(&g->out, "%s%s", pick(&g->in, 8) ? "." : "->", m);
		struct ut_member mem;
		id = ut_kernel_member(kernel, t.id, m, &mem) == 0 ? mem.type : 0;
		ut_strv_free(names, n);
		if (!pick(&g->in, 3))
			return;
	}
}

/* A struct of the stored kernel: a common one, or any in its BTF. */
static void struct_name(struct gen *g)
{
	const struct btf *btf = ut_kernel_btf(kernel);
	if (btf && pick(&g->in, 2)) {
		unsigned n = btf__type_cnt(btf);
		for (unsigned tries = 0; tries < 4; tries++) {
			unsigned id = 1 + pick(&g->in, n > 1 ? n - 1 : 1);
			const struct btf_type *t = btf__type_by_id(btf, id);
			const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;
			if (t && btf_is_composite(t) && name && name[0]) {
				put(g, name);
				return;
			}
		}
	}
	put(g, ONE_OF(g, "io_kiocb", "io_ring_ctx", "file", "inode", "request", "bio", "task_struct", "dentry",
		      "super_block", "block_device", "gendisk", "kiocb", "io_uring_sqe", "no_such_struct"));
}

static void arg_ref(struct gen *g, enum want w, unsigned depth)
{
	if (!g->nargs || rarely(&g->in, 16)) {
		sb_printf(&g->out, "args.%s", ONE_OF(g, "no_such_field", "ctx", "req", "res", "fd", "count"));
		return;
	}
	/* a field of the wanted kind, if any of a few tries finds one */
	unsigned i = pick(&g->in, g->nargs);
	for (unsigned tries = 0; tries < 4 && g->args[i].is_str != (w == W_STR); tries++)
		i = pick(&g->in, g->nargs);
	sb_printf(&g->out, "args.%s", g->args[i].name);
	if (g->args[i].btf && w == W_INT && depth < MAX_DEPTH && pick(&g->in, 3) == 0)
		member_chain(g, g->args[i].btf, 1 + pick(&g->in, 4));
}

static unsigned local_index(struct gen *g, bool is_str, bool create)
{
	for (unsigned tries = 0; tries < 3 && g->nlocals; tries++) {
		unsigned i = pick(&g->in, g->nlocals);
		if (g->local_str[i] == is_str || rarely(&g->in, 8))
			return i;
	}
	if (!create && g->nlocals)
		return 0;
	if (g->nlocals < MAX_NAMES) {
		snprintf(g->locals[g->nlocals], sizeof(g->locals[0]), "$%c%u", is_str ? 's' : 'v', g->nlocals);
		g->local_str[g->nlocals] = is_str;
		return g->nlocals++;
	}
	return pick(&g->in, g->nlocals);
}

/* Keys of map m as written: its own kinds, now and then others or more. */
static void map_keys(struct gen *g, struct map *m, unsigned depth)
{
	unsigned n = m->nkeys;
	if (rarely(&g->in, 32))
		n = long_count(g, 12);
	if (!n)
		return;
	put(g, "[");
	for (unsigned k = 0; k < n; k++) {
		if (k)
			put(g, ", ");
		bool s = k < 8 ? m->key_str[k] : false;
		if (rarely(&g->in, 16))
			s = !s;
		if (pick(&g->in, 4) == 0)
			put(g, s ? "comm" : ONE_OF(g, "pid", "tid", "cpu", "kstack", "ustack", "probe"));
		else
			expr(g, s ? W_STR : W_INT, depth + 1);
	}
	put(g, "]");
}

/* A map used as kind (or a new one); NULL when the script has no room. */
static struct map *map_of(struct gen *g, int kind)
{
	for (unsigned tries = 0; tries < 3 && g->nmaps; tries++) {
		struct map *m = &g->maps[pick(&g->in, g->nmaps)];
		if (m->kind == kind || rarely(&g->in, 8))
			return m;
	}
	if (g->nmaps >= MAX_NAMES)
		return &g->maps[pick(&g->in, g->nmaps)];
	struct map *m = &g->maps[g->nmaps];
	if (g->nmaps == 0 && rarely(&g->in, 4))
		snprintf(m->name, sizeof(m->name), "@");   /* the anonymous map */
	else
		snprintf(m->name, sizeof(m->name), "@m%u", g->nmaps);
	m->kind = kind;
	m->nkeys = pick(&g->in, 4);
	for (unsigned k = 0; k < m->nkeys; k++)
		m->key_str[k] = pick(&g->in, 4) == 0;
	g->nmaps++;
	return m;
}

static void map_read(struct gen *g, enum want w, unsigned depth)
{
	struct map *m = map_of(g, w == W_STR ? MAP_STR : pick(&g->in, 2) ? MAP_INT : (int)pick(&g->in, MAP_USES));
	put(g, m->name);
	map_keys(g, m, depth);
}

/* Arguments of a call: n expressions of the kinds kinds[i] ('i', 's'). */
static void call_args(struct gen *g, const char *kinds, unsigned depth)
{
	for (unsigned i = 0; kinds[i]; i++) {
		if (i)
			put(g, ", ");
		expr(g, kinds[i] == 's' ? W_STR : W_INT, depth + 1);
	}
}

/* A printf or fmt() format and its values: as many as its directives,
 * give or take one now and then, or a long list. */
static void format_and_values(struct gen *g, unsigned depth)
{
	static const char *const directives[] = {
		"%d", "%s", "%x", "%u", "%i", "%X", "%p", "%c", "%-8s", "%08x", "%5d", "%lld", "%%", "%n", "%q", "%.3s",
		"%-99999d", "%",
	};
	unsigned n = pick(&g->in, 5);
	if (rarely(&g->in, 8))
		n = long_count(g, 40);
	char kinds[64];
	unsigned nvalues = 0;
	put(g, "\"");
	for (unsigned i = 0; i < n; i++) {
		/* the usual ones first: mostly well-formed */
		unsigned d = rarely(&g->in, 8) ? pick(&g->in, sizeof(directives) / sizeof(directives[0])) : pick(&g->in, 4);
		sb_printf(&g->out, "%s ", directives[d]);
		if (strcmp(directives[d], "%%") != 0 && nvalues < sizeof(kinds) - 1)
			kinds[nvalues++] = strchr(directives[d], 's') ? 's' : 'i';
	}
	put(g, pick(&g->in, 2) ? "\\n\"" : "\"");
	if (rarely(&g->in, 8) && nvalues)
		nvalues--;
	else if (rarely(&g->in, 8) && nvalues < sizeof(kinds) - 1)
		kinds[nvalues++] = 'i';
	kinds[nvalues] = 0;
	if (nvalues)
		put(g, ", ");
	call_args(g, kinds, depth);
}

/* Half of the time, sep and another integer: str()'s length, a counter's
 * second series. */
static void maybe_another(struct gen *g, const char *sep, unsigned depth)
{
	if (pick(&g->in, 2)) {
		put(g, sep);
		expr(g, W_INT, depth + 1);
	}
}

/* A call of the script's function f0, f1, ... (expressions) or s0, s1,
 * ... (statements) with n values. */
static void fn_call(struct gen *g, char kind, unsigned index, unsigned n, unsigned depth)
{
	sb_printf(&g->out, "%c%u(", kind, index);
	for (unsigned i = 0; i < n; i++) {
		put(g, i ? ", " : "");
		expr(g, W_INT, depth + 1);
	}
	put(g, ")");
}

static void call(struct gen *g, enum want w, unsigned depth)
{
	if (w == W_STR) {
		switch (pick(&g->in, 5)) {
		case 0:
			put(g, "fmt(");
			format_and_values(g, depth);
			put(g, ")");
			return;
		case 1: case 2:
			sb_printf(&g->out, "%s(", pick(&g->in, 2) ? "str" : "ustr");
			expr(g, W_INT, depth + 1);
			maybe_another(g, ", ", depth);
			put(g, ")");
			return;
		case 3:
			put(g, "path(");
			if (pick(&g->in, 2))
				put(g, ONE_OF(g, "curtask.fs.pwd", "curtask.mm.exe_file", "curtask.files.fdt.fd[0]"));
			else
				expr(g, W_INT, depth + 1);
			put(g, ")");
			return;
		default:
			put(g, "comm");
			return;
		}
	}
	switch (pick(&g->in, 9)) {
	case 0: case 1:
		sb_printf(&g->out, "%s(", ONE_OF(g, "hex", "errname", "diskname"));
		call_args(g, "i", depth);
		put(g, ")");
		return;
	case 2:
		put(g, "exists(");
		arg_ref(g, W_INT, MAX_DEPTH);
		put(g, ")");
		return;
	case 3:
		sb_printf(&g->out, "diskdev(%s)", ONE_OF(g, "\"vda\"", "\"\"", "\"sda\"", "\"loop0\"", "disk", "1"));
		return;
	case 4:   /* aggregations and statement calls where a value is wanted */
		sb_printf(&g->out, "%s(", ONE_OF(g, "count", "sum", "hist", "printf", "exit", "delete", "clear", "lhist"));
		if (pick(&g->in, 2))
			expr(g, W_INT, depth + 1);
		put(g, ")");
		return;
	case 5:
		if (g->nexpr_fns) {
			unsigned f = pick(&g->in, g->nexpr_fns);
			fn_call(g, 'f', f, g->expr_fn_arity[f] + (rarely(&g->in, 8) ? 1 : 0), depth);
			return;
		}
		put(g, "no_such_fn(1)");
		return;
	case 6:
		if (g->imported) {
			put(g, ONE_OF(g, "io_uring_req_opcode(", "io_uring_sq_pending(", "io_uring_cq_ready(",
				      "file_ino(", "fd_path(", "block_disk_dev(", "syscall_reads("));
			expr(g, W_INT, depth + 1);
			put(g, ")");
			return;
		}
		put(g, "hex(0)");
		return;
	default:
		sb_printf(&g->out, "%s(", ONE_OF(g, "hex", "errname"));
		call_args(g, "i", depth);
		put(g, ")");
		return;
	}
}

static void cast(struct gen *g, unsigned depth)
{
	if (pick(&g->in, 2)) {
		sb_printf(&g->out, "(%s)", ONE_OF(g, "u64", "u8", "u16", "u32", "s8", "s16", "s32", "s64", "bool", "ptr"));
		expr(g, pick(&g->in, 8) ? W_INT : W_STR, depth + 1);
		return;
	}
	put(g, "((struct ");
	struct_name(g);
	put(g, pick(&g->in, 8) ? " *)" : " **)");
	expr(g, W_INT, depth + 1);
	put(g, ")");
	put(g, ONE_OF(g, ".f_inode", ".ctx", ".flags", ".opcode", "", ".real_parent.pid", "[0]"));
}

/* A chain of n levels of one construct, where the compiler bounds how
 * deep expressions go. */
static void chain_expr(struct gen *g)
{
	unsigned n = long_count(g, 400), kind = pick(&g->in, 8);
	static const char *const open[] = {"-", "(", "hex(", "!", "(u64)", "1 ? ", "~", "f0("};
	static const char *const close[] = {"", ")", ")", "", "", " : 0", "", ")"};
	if (kind == 0 && pick(&g->in, 2)) {   /* a long flat sum: deep on the left */
		put(g, "1");
		for (unsigned i = 0; i < n && !full(g); i++)
			put(g, " + 1");
		return;
	}
	if (kind == 7 && !g->nexpr_fns)
		kind = 2;
	if (kind == 6 && pick(&g->in, 2)) {   /* a long chain of members */
		put(g, "curtask");
		for (unsigned i = 0; i < n && !full(g); i++)
			put(g, pick(&g->in, 2) ? ".real_parent" : ".group_leader");
		put(g, ".pid");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		put(g, open[kind]);
	put(g, "1");
	for (unsigned i = 0; i < n; i++)
		put(g, close[kind]);
}

static void binary(struct gen *g, enum want w, unsigned depth)
{
	static const char *const ops[] = {" + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", " << ", " >> ",
					  " < ", " > ", " <= ", " >= ", " == ", " != ", " && ", " || "};
	if (w == W_STR || rarely(&g->in, 8)) {   /* strings compare */
		put(g, "(");
		expr(g, W_STR, depth + 1);
		put(g, pick(&g->in, 2) ? " == " : " != ");
		expr(g, W_STR, depth + 1);
		put(g, ")");
		return;
	}
	put(g, "(");
	expr(g, W_INT, depth + 1);
	put(g, ops[pick(&g->in, sizeof(ops) / sizeof(ops[0]))]);
	expr(g, W_INT, depth + 1);
	put(g, ")");
}

static void leaf(struct gen *g, enum want w)
{
	if (w == W_STR) {
		switch (pick(&g->in, 4)) {
		case 0: string_literal(g); return;
		case 1: put(g, "comm"); return;
		case 2: put(g, "probe"); return;
		default:
			if (g->nconsts) {
				unsigned c = pick(&g->in, g->nconsts);
				put(g, g->consts[c]);
				return;
			}
			string_literal(g);
			return;
		}
	}
	switch (pick(&g->in, 6)) {
	case 0: int_literal(g); return;
	case 1:
		put(g, ONE_OF(g, "pid", "tid", "uid", "gid", "cpu", "nsecs", "cgroup", "traced", "retval", "arg0", "arg1",
			      "arg5", "curtask", "kstack", "ustack"));
		return;
	case 2:
		if (g->nparams) {
			put(g, g->params[pick(&g->in, g->nparams)]);
			return;
		}
		int_literal(g);
		return;
	case 3:
		if (g->nconsts) {
			put(g, g->consts[pick(&g->in, g->nconsts)]);
			return;
		}
		put(g, ONE_OF(g, "IORING_OP_READ", "REQ_OP_WRITE", "NO_SUCH_ENUMERATOR"));
		return;
	default:
		int_literal(g);
		return;
	}
}

static void expr(struct gen *g, enum want w, unsigned depth)
{
	if (depth >= MAX_DEPTH || full(g)) {
		leaf(g, w);
		return;
	}
	switch (pick(&g->in, 20)) {
	case 0: case 1: leaf(g, w); return;
	case 2: case 3: arg_ref(g, w, depth); return;
	case 4: {
		unsigned i = local_index(g, w == W_STR, false);
		put(g, g->nlocals ? g->locals[i] : "$never_set");
		return;
	}
	case 5: map_read(g, w, depth); return;
	case 6:
		put(g, ONE_OF(g, "-", "!", "~"));
		expr(g, W_INT, depth + 1);
		return;
	case 7: case 8: binary(g, w, depth); return;
	case 9:
		put(g, "(");
		expr(g, W_INT, depth + 1);
		put(g, " ? ");
		expr(g, w, depth + 1);
		put(g, " : ");
		expr(g, w, depth + 1);
		put(g, ")");
		return;
	case 10:
		put(g, "(");
		arg_ref(g, w, depth);
		put(g, " ?? ");
		expr(g, w, depth + 1);
		put(g, ")");
		return;
	case 11: cast(g, depth); return;
	case 12: case 13: call(g, w, depth); return;
	case 14:
		if (g->ntables && w == W_INT) {
			sb_printf(&g->out, "t%u[", pick(&g->in, g->ntables));
			expr(g, W_INT, depth + 1);
			put(g, "]");
			return;
		}
		leaf(g, w);
		return;
	case 15:
		put(g, "curtask");
		member_chain(g, ut_kernel_struct(kernel, "task_struct"), 1 + pick(&g->in, 4));
		return;
	case 16:   /* p[i] */
		put(g, ONE_OF(g, "curtask.files.fdt.fd[", "args.ctx[", "curtask.comm[", "1["));
		expr(g, W_INT, depth + 1);
		put(g, "]");
		return;
	case 17:
		if (rarely(&g->in, 4)) {
			chain_expr(g);
			return;
		}
		put(g, "(");
		expr(g, w, depth + 1);
		put(g, ")");
		return;
	default:
		leaf(g, w);
		return;
	}
}

/* ---- statements ---- */

static void stmts(struct gen *g, unsigned depth);

static void block(struct gen *g, unsigned depth)
{
	put(g, "{\n");
	stmts(g, depth + 1);
	put(g, "}\n");
}

static void with(struct gen *g, unsigned depth)
{
	if (!pick(&g->in, 2))
		return;
	unsigned n = rarely(&g->in, 8) ? long_count(g, 40) : 1 + pick(&g->in, 3);
	put(g, " with ");
	for (unsigned i = 0; i < n; i++) {
		sb_printf(&g->out, "%sa%u = ", i ? ", " : "", rarely(&g->in, 16) ? 0 : i);
		bool shown = pick(&g->in, 4) == 0;
		if (shown)
			sb_printf(&g->out, "%s(", ONE_OF(g, "hex", "errname", "diskname"));
		expr(g, pick(&g->in, 4) ? W_INT : W_STR, depth + 1);
		if (shown)
			put(g, ")");
	}
}

/* A group track (on ring[key]) or a flow's KIND[key]. */
static void keyref(struct gen *g, const char *kind, unsigned depth)
{
	sb_printf(&g->out, "%s[", kind);
	expr(g, W_INT, depth + 1);
	put(g, "]");
}

static void track(struct gen *g, unsigned depth)
{
	switch (pick(&g->in, 4)) {
	case 1:
		put(g, " on ");
		keyref(g, ONE_OF(g, "ring", "disk", "request"), depth);
		return;
	case 2: put(g, " on thread"); return;
	case 3: if (rarely(&g->in, 4)) put(g, " on lane"); return;
	default: return;
	}
}

static void name_value(struct gen *g, unsigned depth)
{
	switch (pick(&g->in, 5)) {
	case 0: string_literal(g); return;
	case 1:
		put(g, "fmt(");
		format_and_values(g, depth);
		put(g, ")");
		return;
	case 2:
		if (g->ntables) {
			sb_printf(&g->out, "t%u[", pick(&g->in, g->ntables));
			expr(g, W_INT, depth + 1);
			put(g, "]");
			return;
		}
		put(g, "\"n\"");
		return;
	case 3: expr(g, W_STR, depth + 1); return;
	default: put(g, "\"name\""); return;
	}
}

/* The rest of a flow or span point: a name or not, arguments, ';'. */
static void point_end(struct gen *g, unsigned depth)
{
	if (pick(&g->in, 2)) {
		put(g, " ");
		name_value(g, depth);
	}
	with(g, depth);
	put(g, ";\n");
}

static void trace_stmt(struct gen *g, unsigned depth)
{
	switch (pick(&g->in, 8)) {
	case 0: case 1:   /* slices and instants */
		if (pick(&g->in, 3) == 0) {
			put(g, rarely(&g->in, 8) ? "slice middle" : "slice end");
		} else {
			put(g, pick(&g->in, 2) ? "slice begin " : "instant ");
			name_value(g, depth);
		}
		track(g, depth);
		with(g, depth);
		put(g, ";\n");
		return;
	case 2:
		put(g, "counter ");
		name_value(g, depth);
		track(g, depth);
		if (pick(&g->in, 2)) {
			put(g, " = ");
			expr(g, pick(&g->in, 8) ? W_INT : W_STR, depth + 1);
		} else {
			put(g, " with v = ");
			expr(g, W_INT, depth + 1);
			maybe_another(g, ", w = ", depth);
		}
		put(g, ";\n");
		return;
	case 3:
		put(g, "flow ");
		keyref(g, ONE_OF(g, "request", "bio", "item"), depth);
		sb_printf(&g->out, " %s", ONE_OF(g, "begin", "step", "end", "phase"));
		point_end(g, depth);
		return;
	case 4:
		put(g, "span ");
		keyref(g, ONE_OF(g, "ring", "disk"), depth);
		sb_printf(&g->out, " %s ", ONE_OF(g, "begin", "phase", "end", "step"));
		keyref(g, ONE_OF(g, "request", "bio"), depth);
		point_end(g, depth);
		return;
	case 5:
		put(g, "track ");
		keyref(g, ONE_OF(g, "ring", "disk"), depth);
		put(g, " = ");
		name_value(g, depth);
		put(g, ";\n");
		return;
	case 6:   /* finding "TAG"[key] SEVERITY "message", ... fix "...", ... with ...; */
		sb_printf(&g->out, "finding \"%s\"", ONE_OF(g, "PUNT", "SHORT-WRITE", "bad tag", "X1"));
		if (pick(&g->in, 2)) {
			put(g, "[");
			expr(g, pick(&g->in, 2) ? W_INT : W_STR, depth + 1);
			put(g, "]");
		}
		put(g, " ");
		if (pick(&g->in, 3))
			put(g, ONE_OF(g, "info", "warn", "crit", "3"));
		else
			expr(g, W_INT, depth + 1);
		put(g, " ");
		format_and_values(g, depth);
		if (pick(&g->in, 2)) {
			put(g, " fix ");
			format_and_values(g, depth);
		}
		with(g, depth);
		put(g, ";\n");
		return;
	default:
		put(g, "printf(");
		format_and_values(g, depth);
		put(g, ");\n");
		return;
	}
}

/* The rest of `x += e;`, `x -= e;` or `x++;`. */
static void update(struct gen *g, unsigned depth)
{
	if (pick(&g->in, 3) == 0) {
		put(g, "++;\n");
		return;
	}
	put(g, pick(&g->in, 2) ? " += " : " -= ");
	expr(g, W_INT, depth + 1);
	put(g, ";\n");
}

static void map_stmt(struct gen *g, unsigned depth)
{
	static const char *const aggs[] = {"count()", "sum(", "avg(", "min(", "max(", "hist(", "lhist("};
	int kind = (int)pick(&g->in, MAP_USES);
	struct map *m = map_of(g, kind);
	kind = rarely(&g->in, 16) ? (int)pick(&g->in, MAP_USES) : m->kind;
	put(g, m->name);
	map_keys(g, m, depth);
	if (kind == MAP_INT && pick(&g->in, 2)) {
		update(g, depth);
		return;
	}
	put(g, " = ");
	if (kind == MAP_INT || kind == MAP_STR) {
		expr(g, kind == MAP_STR ? W_STR : W_INT, depth + 1);
	} else {
		put(g, aggs[kind]);
		if (kind != MAP_COUNT) {
			expr(g, W_INT, depth + 1);
			if (kind == MAP_LHIST) {
				unsigned n = rarely(&g->in, 8) ? pick(&g->in, 5) : 3;
				for (unsigned i = 0; i < n; i++) {
					put(g, ", ");
					if (pick(&g->in, 4))
						sb_printf(&g->out, "%s", ONE_OF(g, "0", "100", "10", "65536", "4096", "-5", "1000000"));
					else
						expr(g, W_INT, MAX_DEPTH);
				}
			}
			put(g, ")");
		}
	}
	put(g, ";\n");
}

/* A chain of nested statements: blocks, ifs or loops past the bounds. */
static void chain_stmt(struct gen *g, unsigned depth)
{
	unsigned n = long_count(g, 300), kind = pick(&g->in, 3);
	for (unsigned i = 0; i < n && !full(g); i++) {
		if (kind == 0)
			put(g, "{ ");
		else if (kind == 1)
			put(g, "if (1) { ");
		else
			sb_printf(&g->out, "for ($l%u : 0..2) { ", i);
	}
	map_stmt(g, depth);
	for (unsigned i = 0; i < n && !full(g); i++)
		put(g, "}\n");
}

static void stmt(struct gen *g, unsigned depth)
{
	if (full(g))
		return;
	switch (pick(&g->in, 18)) {
	case 0: case 1: {
		bool s = pick(&g->in, 4) == 0;
		unsigned i = local_index(g, s, true);
		sb_printf(&g->out, "%s = ", g->locals[i]);
		expr(g, s ? W_STR : W_INT, depth + 1);
		put(g, ";\n");
		return;
	}
	case 2: {
		put(g, g->locals[local_index(g, false, true)]);
		update(g, depth);
		return;
	}
	case 3: case 4: case 5: map_stmt(g, depth); return;
	case 6:
		if (depth >= MAX_DEPTH) {
			map_stmt(g, depth);
			return;
		}
		put(g, "if (");
		expr(g, W_INT, depth + 1);
		put(g, ") ");
		block(g, depth);
		if (pick(&g->in, 2)) {
			put(g, "else ");
			if (pick(&g->in, 2))
				block(g, depth);
			else
				stmt(g, depth);   /* not an if: a syntax error */
		}
		return;
	case 7: {
		if (depth >= MAX_DEPTH) {
			map_stmt(g, depth);
			return;
		}
		if (g->nmaps && pick(&g->in, 3) == 0) {   /* over a map: its entries */
			sb_printf(&g->out, "for ($e%u : %s) { printf(\"%%d\\n\", $e%u.%s); ", g->loops,
				  g->maps[pick(&g->in, g->nmaps)].name, g->loops, ONE_OF(g, "0", "1", "0.1", "2"));
			g->loops++;
			block(g, depth);
			g->loops--;
			put(g, "}\n");
			return;
		}
		sb_printf(&g->out, "for ($i%u : ", g->loops);
		g->loops++;
		if (pick(&g->in, 4) == 0)
			expr(g, W_INT, MAX_DEPTH);
		else
			put(g, ONE_OF(g, "0", "1", "-3"));
		put(g, "..");
		if (pick(&g->in, 4) == 0)
			expr(g, W_INT, MAX_DEPTH);
		else
			put(g, ONE_OF(g, "4", "0", "1024", "1025", "100000", "BATCH"));
		put(g, ") ");
		block(g, depth);
		g->loops--;
		return;
	}
	case 8:
		put(g, ONE_OF(g, "break;\n", "continue;\n", "return;\n"));
		return;
	case 9: case 10: case 11: trace_stmt(g, depth); return;
	case 12:
		if (pick(&g->in, 3) == 0) {
			put(g, "exit();\n");
			return;
		}
		if (g->nmaps) {
			struct map *m = &g->maps[pick(&g->in, g->nmaps)];
			if (pick(&g->in, 2)) {
				sb_printf(&g->out, "clear(%s);\n", m->name);
			} else {
				sb_printf(&g->out, "delete(%s", m->name);
				map_keys(g, m, depth);
				put(g, ");\n");
			}
			return;
		}
		put(g, "delete(@nothing[1]);\n");
		return;
	case 13:
		if (g->nstmt_fns) {
			unsigned f = pick(&g->in, g->nstmt_fns);
			fn_call(g, 's', f, g->stmt_fn_arity[f], depth);
			put(g, ";\n");
			return;
		}
		put(g, "exit();\n");
		return;
	case 14:
		if (depth < MAX_DEPTH) {
			block(g, depth);
			return;
		}
		put(g, ";\n");
		return;
	case 15:
		if (rarely(&g->in, 4)) {
			chain_stmt(g, depth);
			return;
		}
		expr(g, W_INT, depth + 1);   /* does nothing: an error unless a call */
		put(g, ";\n");
		return;
	default:
		trace_stmt(g, depth);
		return;
	}
}

static void stmts(struct gen *g, unsigned depth)
{
	unsigned n = 1 + pick(&g->in, 4);
	if (rarely(&g->in, 16))
		n = long_count(g, 60);
	for (unsigned i = 0; i < n && !full(g); i++)
		stmt(g, depth);
}

/* ---- probes and items ---- */

/* One probe spec; its arguments become the body's when first is set. */
static void spec(struct gen *g, bool first)
{
	unsigned kind = pick(&g->in, 12);
	if (first)
		probe_args_clear(g);
	switch (kind) {
	case 0: case 1: case 2: {
		const char *tp = pick(&g->in, 2) ? uring_tracepoints[pick(&g->in, (unsigned)nuring_tracepoints)]
					    : tracepoints[pick(&g->in, (unsigned)ntracepoints)];
		sb_printf(&g->out, "%s:%s", pick(&g->in, 8) ? "tracepoint" : "t", tp);
		if (first)
			tracepoint_args(g, tp);
		if (rarely(&g->in, 8))
			put(g, "*");
		if (rarely(&g->in, 8)) {   /* declared and computed fields */
			put(g, "(");
			unsigned n = 1 + pick(&g->in, 3);
			for (unsigned i = 0; i < n; i++) {
				sb_printf(&g->out, "%sx%u", i ? ", " : "", i);
				if (pick(&g->in, 2)) {
					sb_printf(&g->out, ": %s", ONE_OF(g, "u64", "ptr", "str", "s32", "bool", "blob"));
				} else {
					put(g, " = ");
					expr(g, W_INT, MAX_DEPTH - 1);
				}
				if (first)
					add_arg(g, i == 0 ? "x0" : i == 1 ? "x1" : "x2", false, 0);
			}
			put(g, ")");
		}
		return;
	}
	case 3: case 4: {
		const char *tp = tracepoints[pick(&g->in, (unsigned)ntracepoints)];
		if (pick(&g->in, 2))
			tp = pick(&g->in, 2) ? uring_tracepoints[pick(&g->in, (unsigned)nuring_tracepoints)]
					: block_tracepoints[pick(&g->in, (unsigned)nblock_tracepoints)];
		const char *name = strchr(tp, ':') + 1;
		sb_printf(&g->out, "%s:%s", pick(&g->in, 4) ? "tp_btf" : "raw_tp", name);
		struct ut_param *params;
		unsigned nparams;
		if (first && ut_kernel_tp_btf_params(kernel, name, &params, &nparams) == 0)
			btf_args(g, params, nparams);
		if (rarely(&g->in, 4)) {
			sb_printf(&g->out, "(key = (u64)args.%s)", g->nargs ? g->args[0].name : "req");
			if (first)
				add_arg(g, "key", false, 0);
		}
		return;
	}
	case 5: case 6: {
		const char *fn = functions[pick(&g->in, (unsigned)nfunctions)];
		if (pick(&g->in, 2))
			fn = ONE_OF(g, "vfs_read", "vfs_write", "io_submit_sqes", "vfs_fsync_range", "blk_mq_submit_bio",
				    "io_issue_sqe", "do_sys_openat2");
		const char *k = ONE_OF(g, "kprobe", "kretprobe", "fentry", "fexit", "k", "kr", "f", "fr");
		sb_printf(&g->out, "%s:%s", k, fn);
		struct ut_param *params;
		unsigned n;
		int32_t ret;
		if (first && k[strlen(k) - 1] != 'r' && strcmp(k, "kretprobe") != 0 &&
		    ut_kernel_func_params(kernel, fn, &params, &n, &ret) == 0)
			btf_args(g, params, n);
		if (first)
			g->has_retval = true;
		return;
	}
	case 7:
		if (rarely(&g->in, 2)) {
			sb_printf(&g->out, "uprobe:%s:%s", self_exe, ONE_OF(g, "LLVMFuzzerTestOneInput", "main", "no_such"));
		} else {
			sb_printf(&g->out, "%s:/bin/sh:", ONE_OF(g, "uprobe", "uretprobe", "u", "ur"));
			put(g, ONE_OF(g, "main", "no_such_symbol"));
		}
		return;
	case 8:
		sb_printf(&g->out, "%s", ONE_OF(g, "interval:1s", "interval:100ms", "interval:us:500", "i:1s",
						"interval:0s", "interval:", "interval:99999999999h"));
		return;
	case 9:
		put(g, ONE_OF(g, "BEGIN", "END", "BEGIN", "nosuch:kind"));
		return;
	case 10:
		if (g->naliases) {
			sb_printf(&g->out, "a%u", pick(&g->in, g->naliases));
			return;
		}
		if (g->imported) {
			put(g, ONE_OF(g, "io_uring_submit", "io_uring_complete", "block_rq_issue", "fs_begin"));
			return;
		}
		break;
	case 11:
		/* every tracepoint is a few thousand probes: slow, so seldom */
		if (rarely(&g->in, 16))
			put(g, "tracepoint:*:*");
		else
			put(g, ONE_OF(g, "tracepoint:io_uring:*", "tracepoint:syscalls:sys_enter_read*", "kprobe:vfs_*",
				      "tracepoint:io_uring:io_uring_req_fail*", "tracepoint:no_such:thing?"));
		return;
	}
	put(g, "BEGIN");
}

/* spec | spec | ... , spec ... */
static void probe_list(struct gen *g)
{
	unsigned n = rarely(&g->in, 16) ? long_count(g, 40) : 1 + (pick(&g->in, 4) == 0);
	for (unsigned i = 0; i < n && !full(g); i++) {
		if (i)
			put(g, pick(&g->in, 2) ? ",\n" : " | ");
		spec(g, i == 0);
		if (rarely(&g->in, 4))
			put(g, "?");
	}
}

static void probe(struct gen *g)
{
	if (rarely(&g->in, 8))
		put(g, "unfiltered ");
	probe_list(g);
	g->nlocals = 0;
	g->nparams = 0;
	if (pick(&g->in, 3) == 0) {
		put(g, " /");
		expr(g, W_INT, 1);
		put(g, "/");
	}
	put(g, " ");
	block(g, 0);
}

static void function(struct gen *g)
{
	static const char *const params[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
					     "o", "p"};
	unsigned n = rarely(&g->in, 16) ? long_count(g, 16) : pick(&g->in, 3);
	bool statement = pick(&g->in, 2);
	if ((statement ? g->nstmt_fns : g->nexpr_fns) >= MAX_NAMES)
		return;
	sb_printf(&g->out, "fn %c%u(", statement ? 's' : 'f', statement ? g->nstmt_fns : g->nexpr_fns);
	for (unsigned i = 0; i < n; i++)
		sb_printf(&g->out, "%s%s", i ? ", " : "", params[i]);
	put(g, ")");
	g->nparams = n;
	memcpy(g->params, params, sizeof(params));
	g->nlocals = 0;
	probe_args_clear(g);
	if (statement) {
		put(g, " ");
		block(g, 1);
		g->stmt_fn_arity[g->nstmt_fns++] = n;
	} else {
		put(g, " = (");
		/* a function may call the ones before it (and, rarely, itself) */
		expr(g, W_INT, 1);
		put(g, ");\n");
		g->expr_fn_arity[g->nexpr_fns++] = n;
	}
	g->nparams = 0;
}

static void item(struct gen *g)
{
	switch (pick(&g->in, 10)) {
	case 0: case 1: case 2: case 3:
		probe(g);
		return;
	case 4:
		sb_printf(&g->out, "import \"%s\";\n", ONE_OF(g, "io_uring", "files", "block", "syscalls", "fs", "nope"));
		g->imported = true;
		return;
	case 5: {
		if (g->nconsts >= MAX_NAMES)
			return;
		unsigned c = g->nconsts++;
		snprintf(g->consts[c], sizeof(g->consts[c]), c == 0 && pick(&g->in, 2) ? "BATCH" : "c%u", c);
		g->const_str[c] = pick(&g->in, 3) == 0;
		sb_printf(&g->out, "const %s", g->consts[c]);
		if (g->const_str[c] && pick(&g->in, 2))
			put(g, ": \"ns\" | \"us\" | \"ms\"");
		else if (!g->const_str[c] && rarely(&g->in, 4))
			put(g, ": 1 | 2 | -3");
		put(g, " = ");
		if (g->const_str[c])
			put(g, ONE_OF(g, "\"us\"", "\"fio\"", "\"s\"", "\"\""));
		else
			expr(g, W_INT, MAX_DEPTH - 1);
		put(g, ";\n");
		if (!g->define[0] && rarely(&g->in, 4))
			snprintf(g->define, sizeof(g->define), "%s=%s", g->consts[c], ONE_OF(g, "7", "ms", "", "0x", "-1"));
		return;
	}
	case 6: {
		if (g->ntables >= MAX_NAMES)
			return;
		unsigned n = rarely(&g->in, 8) ? long_count(g, 200) : 1 + pick(&g->in, 4);
		sb_printf(&g->out, "table t%u = {", g->ntables++);
		for (unsigned i = 0; i < n; i++)
			sb_printf(&g->out, "%s %d: \"e%u\"", i ? "," : "", (int)pick(&g->in, 64) - 8, i);
		put(g, pick(&g->in, 2) ? ", }\n" : " }\n");
		return;
	}
	case 7:
		function(g);
		return;
	case 8:
		if (g->naliases >= MAX_NAMES)
			return;
		sb_printf(&g->out, "probe a%u = ", g->naliases);
		probe_list(g);
		put(g, ";\n");
		g->naliases++;
		return;
	default:
		probe(g);
		return;
	}
}

static void script(struct gen *g)
{
	unsigned n = 1 + pick(&g->in, 6);
	for (unsigned i = 0; i < n && !full(g); i++)
		item(g);
}

/* ---- the target ---- */

static const char *env_or_die(const char *name)
{
	const char *v = getenv(name);
	if (!v || !v[0]) {
		fprintf(stderr, "fuzz_grammar: set %s (make fuzz-grammar unpacks tests/kernel/6.18)\n", name);
		exit(1);
	}
	return v;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	env_or_die("UT_BTF");
	env_or_die("UT_TRACEFS");
	snprintf(stdlib_dir, sizeof(stdlib_dir), "%s/stdlib", env_or_die("UT_ROOT"));
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	self_exe[n > 0 ? n : 0] = 0;
	print_scripts = getenv("UT_FUZZ_PRINT") != NULL;
	kernel = ut_kernel_open();
	devnull = fopen("/dev/null", "w");
	if (!kernel || !devnull)
		abort();
	ntracepoints = ut_kernel_tracepoints_matching(kernel, "*", &tracepoints);
	nuring_tracepoints = ut_kernel_tracepoints_matching(kernel, "io_uring:*", &uring_tracepoints);
	nblock_tracepoints = ut_kernel_tracepoints_matching(kernel, "block:*", &block_tracepoints);
	nfunctions = ut_kernel_functions_matching(kernel, "*", &functions);
	if (ntracepoints <= 0 || nuring_tracepoints <= 0 || nblock_tracepoints <= 0 || nfunctions <= 0) {
		fprintf(stderr, "fuzz_grammar: the kernel at UT_BTF/UT_TRACEFS has no tracepoints or functions: %s\n",
			ut_kernel_error(kernel));
		exit(1);
	}
	return 0;
}

/* A program the compiler made must load from its .uto, and give the
 * reader's C (tests/fuzz/check_c.sh compiles it). */
static void check_reloads(const struct ut_program *p)
{
	free(ut_gen_native(p));
	void *image;
	size_t len;
	struct ut_program_objects objs;
	char err[256];
	ut_program_save(p, &(struct ut_program_objects){.bpf = ""}, &image, &len);
	struct ut_program *q = ut_program_load(image, len, &objs, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "fuzz_grammar: the compiled program does not load from its .uto: %s\n", err);
		abort();
	}
	ut_program_free(q);
	free(image);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gen g = {.in = {.data = data, .size = size}};
	script(&g);
	if (!g.out.s)
		return 0;
	if (print_scripts)
		fprintf(stderr, "---- script%s%s\n%s----\n", g.define[0] ? ", -D " : "", g.define, g.out.s);
	struct diag d;
	diag_init(&d, devnull);
	const char *defines[] = {g.define};
	struct ut_compile_opts o = {.text = g.out.s, .stdlib_dir = stdlib_dir, .defines = defines,
				    .ndefines = g.define[0] ? 1 : 0};
	struct ut_program *p = ut_compile(&o, kernel, &d);
	if (p && !p->bpf_c)
		abort();   /* a program without C and without errors */
	if (!p && d.errors == 0)
		abort();   /* a failure that reported nothing */
	if (p)
		check_reloads(p);
	ut_program_free(p);
	diag_free(&d);
	sb_free(&g.out);
	return 0;
}
