/* libFuzzer target: the reader's side of a trace.  The input chooses a
 * program and a stream of ring-buffer samples for it; the samples go
 * through the reorder queues and the decoder (the user side runs the
 * hits) into the engine and the FXT writer, as runtime/main.c's session
 * sends them.  Whatever the records, the trace written must read back with
 * no error and balanced: every slice begun is ended (or was evicted), the
 * flows the engine ended are complete, and every flow point is bound to a
 * slice.  The maps are printed too, as text and JSON.
 *
 * Programs: the scripts of tests/compiler/golden, scripts/ and examples/,
 * compiled once against the kernel of UT_BTF and UT_TRACEFS (make
 * fuzz-decode unpacks tests/kernel/6.18; UT_ROOT finds the scripts) and
 * kept as .uto images.  An input loads one, and may add a user side made
 * from its bytes (maps in the reader, hit events with locals and
 * statements, events of any layout), saved, sometimes damaged a few bytes,
 * and loaded: the result must pass the .uto loader as a file would, else
 * the program stays as compiled.  Records are built field by field for the
 * program's events, with values that matter (small keys that repeat, errno
 * values, table keys, strings cut or unterminated), time that sometimes
 * runs backwards, CPUs past the last, pids of any size; now and then a
 * damaged record or a cut sample.
 *
 * With UT_FUZZ_COMPILED=1, an input whose program has a user side runs
 * twice, interpreted and then compiled (compiler/gen_native.c, built by
 * the clang wrapper; slow: a clang run an input), and the two must print
 * the same, give the same maps and write the same trace byte for byte.
 *
 * Build and run: make fuzz-decode (tests/fuzz/fuzz.mk). */
#include <dirent.h>
#include <inttypes.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/files.h"
#include "base/strbuf.h"
#include "bpf/records.h"
#include "compiler/compiler.h"
#include "compiler/diag.h"
#include "compiler/program_io.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "kernel/kernel.h"
#include "tools/tools.h"
#include "runtime/decode.h"
#include "runtime/reorder.h"
#include "runtime/summary.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"
#include "tests/fuzz/choices.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The compiled programs, as .uto images. */
struct image {
	void *data;
	size_t len;
};
static struct image *images;
static unsigned nimages;
static FILE *devnull;
static bool compare_compiled;   /* UT_FUZZ_COMPILED=1 */
static char trace_path[2][256];   /* plain and gzip-compressed */

/* Operations on the stream of one input, and bytes in one sample. */
#define MAX_OPS 1024
#define MAX_SAMPLE 16384
/* A stream ends at its 16th malformed record: a damaged program's hit may
 * run the 2^20 steps the evaluator allows before it counts as one (an
 * endless loop), and a stream of such hits took minutes. */
#define MAX_MALFORMED 16

/* ---- the programs ---- */

static void compile_script(struct ut_kernel *k, const char *path, const char *stdlib_dir)
{
	struct diag d;
	diag_init(&d, devnull);
	struct ut_compile_opts o = {.file = path, .stdlib_dir = stdlib_dir};
	struct ut_program *p = ut_compile(&o, k, &d);
	diag_free(&d);
	if (!p) {
		fprintf(stderr, "fuzz_decode: %s does not compile against UT_BTF/UT_TRACEFS\n", path);
		exit(1);
	}
	images = xrealloc_array(images, nimages + 1, sizeof(*images));
	ut_program_save(p, &(struct ut_program_objects){.bpf = ""}, &images[nimages].data, &images[nimages].len);
	nimages++;
	ut_program_free(p);
}

static int name_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void compile_dir(struct ut_kernel *k, const char *root, const char *dir, const char *stdlib_dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", root, dir);
	struct dirent **names;
	int n = scandir(path, &names, NULL, name_order);
	if (n < 0) {
		perror(path);
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		if (len > 3 && strcmp(names[i]->d_name + len - 3, ".ut") == 0) {
			snprintf(path, sizeof(path), "%s/%s/%s", root, dir, names[i]->d_name);
			compile_script(k, path, stdlib_dir);
		}
		free(names[i]);
	}
	free(names);
}

static void remove_traces(void)
{
	unlink(trace_path[0]);
	unlink(trace_path[1]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *root = getenv("UT_ROOT");
	if (!root || !getenv("UT_BTF") || !getenv("UT_TRACEFS")) {
		fprintf(stderr, "fuzz_decode: set UT_ROOT, UT_BTF and UT_TRACEFS (make fuzz-decode does)\n");
		exit(1);
	}
	devnull = fopen("/dev/null", "w");
	compare_compiled = getenv("UT_FUZZ_COMPILED") && strcmp(getenv("UT_FUZZ_COMPILED"), "1") == 0;
	struct ut_kernel *k = ut_kernel_open();
	if (!devnull || !k)
		abort();
	char stdlib_dir[4096];
	snprintf(stdlib_dir, sizeof(stdlib_dir), "%s/stdlib", root);
	compile_dir(k, root, "tests/compiler/golden", stdlib_dir);
	compile_dir(k, root, "scripts", stdlib_dir);
	compile_dir(k, root, "examples", stdlib_dir);
	ut_kernel_close(k);
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(trace_path[0], sizeof(trace_path[0]), "%s/ut-fuzz-decode-%d.fxt", tmp, (int)getpid());
	snprintf(trace_path[1], sizeof(trace_path[1]), "%s/ut-fuzz-decode-%d.fxt.gz", tmp, (int)getpid());
	atexit(remove_traces);
	return 0;
}

/* ---- values ---- */

static const char *const words[] = {
	"fio", "", "read", "a name with spaces", "\xc3\xa9t\xc3\xa9", "\xff\xfe\x80", "%s%n%d", "tab\there\n", "ring",
	"x", "request", "\"quoted\\\"", "0123456789abcdef0123456789",
};
#define NWORDS (sizeof(words) / sizeof(words[0]))

static uint64_t number(struct choices *in, const struct ut_program *p)
{
	uint64_t v;
	switch (pick(in, 9)) {
	case 0: case 1: return pick(in, 4);   /* keys that repeat: flows, spans, groups */
	case 2: return (uint64_t)-(int64_t)(1 + pick(in, 140));   /* errno values */
	case 3:
		if (p->ntables) {
			const struct ut_table *t = &p->tables[pick(in, p->ntables)];
			if (t->nentries)
				return (uint64_t)t->entries[pick(in, t->nentries)].key;
		}
		return 0;
	case 4: return 0xffff888000000000ull + pick(in, 16) * 64;   /* kernel pointers */
	case 5:   /* block devices */
		v = (uint64_t)(8 + pick(in, 2)) << 20;
		return v | pick(in, 4);
	case 6: return pick_u64(in);
	case 7: return (uint64_t)1 << pick(in, 64);
	default: return pick(in, 256);
	}
}

/* A string field's bytes: a word, cut or not; raw input bytes; a full
 * field with no NUL; or nothing. */
static void string_bytes(struct choices *in, char *dst, size_t size)
{
	switch (pick(in, 4)) {
	case 0: {
		const char *w = words[pick(in, NWORDS)];
		size_t n = strlen(w);
		memcpy(dst, w, n < size ? n : size);
		return;
	}
	case 1:
		for (size_t i = 0; i < size && pick(in, 16); i++)
			dst[i] = (char)pick(in, 256);
		return;
	case 2:
		memset(dst, 'x', size);
		return;
	default:
		return;
	}
}

/* ---- a user side, made from the input ---- */

/* Expressions made so far, by kind: the operands of later ones. */
#define POOL 64
struct user_gen {
	struct choices *in;
	struct ut_program *p;
	unsigned first_map;           /* the user-side maps are maps[first_map..] */
	unsigned ints[POOL], strs[POOL];
	unsigned nints, nstrs;
	unsigned hit;                 /* the hit event whose statements are made */
	unsigned nusual;              /* the locals of hits before their loop variables */
};

/* A hit's last locals are the variables of its loops, one a nesting depth
 * (user_block makes statements at depths 0 to 3), which no statement
 * assigns: every loop ends after a few turns.  An endless one runs the 2^20
 * steps a hit may take (test_user_side cuts one there), and a stream of
 * such hits takes minutes. */
#define LOOP_SLOTS 4

static unsigned add_expr(struct user_gen *g, struct ut_uexpr e)
{
	unsigned i = ut_program_add_uexpr(g->p, &e);
	unsigned *pool = e.is_str ? g->strs : g->ints, *n = e.is_str ? &g->nstrs : &g->nints;
	if (*n < POOL)
		pool[(*n)++] = i;
	else
		pool[pick(g->in, POOL)] = i;
	return i;
}

/* An expression of the kind, made before the one being made. */
static unsigned operand(struct user_gen *g, bool is_str)
{
	unsigned *pool = is_str ? g->strs : g->ints, n = is_str ? g->nstrs : g->nints;
	if (n && pick(g->in, 4))
		return pool[pick(g->in, n)];
	if (is_str)
		return add_expr(g, (struct ut_uexpr){.op = UT_UX_STR, .is_str = true, .text = (char *)words[pick(g->in, NWORDS)]});
	return add_expr(g, (struct ut_uexpr){.op = UT_UX_INT, .i = (int64_t)number(g->in, g->p)});
}

static unsigned pick_user_map(struct user_gen *g)
{
	return g->first_map + pick(g->in, g->p->nmaps - g->first_map);
}

/* An expression for each key field of map m, listed in ukeys. */
static unsigned key_list(struct user_gen *g, const struct ut_field *fields, unsigned n)
{
	unsigned exprs[UT_MAP_KEY_MAX / 8];
	if (n > sizeof(exprs) / sizeof(exprs[0]))
		n = sizeof(exprs) / sizeof(exprs[0]);
	for (unsigned k = 0; k < n; k++)
		exprs[k] = operand(g, fields[k].type == UT_F_STR);
	return n ? ut_program_add_ukeys(g->p, exprs, n) : 0;
}

static void user_expr(struct user_gen *g)
{
	struct ut_uexpr e = {.op = (enum ut_uexpr_op)pick(g->in, UT_UX_OP_COUNT)};
	const struct ut_program *p = g->p;
	switch (e.op) {
	case UT_UX_INT: e.i = (int64_t)number(g->in, p); break;
	case UT_UX_STR: e.is_str = true; e.text = (char *)words[pick(g->in, NWORDS)]; break;
	case UT_UX_CAPTURED: e.field = pick(g->in, 8); e.is_str = pick(g->in, 3) == 0; break;
	case UT_UX_HEADER:
		e.which = pick(g->in, 4);
		e.which += rarely(g->in, 32);
		break;
	case UT_UX_LOCAL: e.slot = pick(g->in, 8); e.is_str = pick(g->in, 3) == 0; break;
	case UT_UX_MAP: {
		if (p->nmaps == g->first_map)
			return;
		e.map = pick_user_map(g);
		e.is_str = ut_map_holds_string(&p->maps[e.map]);
		e.nkeys = p->maps[e.map].nkeys;
		e.keys = key_list(g, p->maps[e.map].keys, e.nkeys);
		break;
	}
	case UT_UX_STR_INT: e.a = operand(g, true); e.n = (uint16_t)pick(g->in, 9); break;
	case UT_UX_STREQ: case UT_UX_STRNE:
		e.a = operand(g, true);
		e.b = operand(g, true);
		e.n = (uint16_t)(1 + pick(g->in, 64));
		break;
	case UT_UX_COND:
		e.is_str = pick(g->in, 3) == 0;
		e.a = operand(g, false);
		e.b = operand(g, e.is_str);
		e.c = operand(g, e.is_str);
		break;
	case UT_UX_TRUNC:
		e.a = operand(g, false);
		e.n = (uint16_t)(1u << pick(g->in, 4));
		e.sgn = pick(g->in, 2);
		break;
	case UT_UX_NEG: case UT_UX_NOT: case UT_UX_BITNOT: case UT_UX_BOOL: e.a = operand(g, false); break;
	default:
		e.a = operand(g, false);
		e.b = operand(g, false);
		break;
	}
	add_expr(g, e);
}

static unsigned user_block(struct user_gen *g, unsigned depth, unsigned *n);

/* A user-side map of the kind wanted (agg, or a string value), or -1. */
static int map_for(struct user_gen *g, int agg, int holds_string)
{
	const struct ut_program *p = g->p;
	for (unsigned tries = 0; tries < 4 && p->nmaps > g->first_map; tries++) {
		unsigned m = pick_user_map(g);
		bool last = p->maps[m].agg == UT_AGG_LAST;
		if ((agg < 0 ? last : !last) && (holds_string < 0 || ut_map_holds_string(&p->maps[m]) == holds_string))
			return (int)m;
	}
	return -1;
}

static struct ut_ustmt user_stmt(struct user_gen *g, unsigned depth)
{
	struct ut_program *p = g->p;
	struct ut_ustmt s = {.op = (enum ut_ustmt_op)pick(g->in, UT_US_OP_COUNT)};
	const struct ut_event *hit = &p->events[g->hit];
	int m;
	switch (s.op) {
	case UT_US_LOCAL:   /* a local other than the loops', or one the hit lacks */
		s.slot = pick(g->in, g->nusual + 1);
		if (s.slot == g->nusual)
			s.slot = hit->nlocals;
		s.a = operand(g, s.slot < hit->nlocals ? hit->locals[s.slot].is_str : false);
		return s;
	case UT_US_MAP_SET: case UT_US_MAP_ADD: case UT_US_AGG: case UT_US_DELETE:
		m = s.op == UT_US_MAP_SET ? map_for(g, -1, -1)
		    : s.op == UT_US_MAP_ADD ? map_for(g, -1, 0)
		    : s.op == UT_US_AGG ? map_for(g, 1, -1)
		    : p->nmaps > g->first_map ? (int)pick_user_map(g) : -1;
		if (m < 0)
			return (struct ut_ustmt){.op = UT_US_RETURN};
		s.map = (unsigned)m;
		s.nkeys = p->maps[m].nkeys;
		s.keys = key_list(g, p->maps[m].keys, s.nkeys);
		s.a = operand(g, s.op == UT_US_MAP_SET && ut_map_holds_string(&p->maps[m]));
		return s;
	case UT_US_IF:
		s.a = operand(g, false);
		s.body = user_block(g, depth + 1, &s.nbody);
		s.body2 = user_block(g, depth + 1, &s.nbody2);
		return s;
	case UT_US_FOR:
		s.slot = g->nusual + depth;
		s.a = add_expr(g, (struct ut_uexpr){.op = UT_UX_INT, .i = (int64_t)pick(g->in, 3) - 1});
		s.b = add_expr(g, (struct ut_uexpr){.op = UT_UX_INT, .i = pick(g->in, 6)});
		s.body = user_block(g, depth + 1, &s.nbody);
		return s;
	case UT_US_EMIT: {
		unsigned e = pick(g->in, p->nevents);
		if (p->events[e].op == UT_EV_HIT)
			return (struct ut_ustmt){.op = UT_US_BREAK};
		s.event = e;
		s.nkeys = p->events[e].nfields;
		s.keys = key_list(g, p->events[e].fields, s.nkeys);
		return s;
	}
	default:   /* break, continue, return */
		return s;
	}
}

/* A run of statements, reserved before it is filled: bodies of its
 * statements come after it (compiler/program.h's order). */
static unsigned user_block(struct user_gen *g, unsigned depth, unsigned *n)
{
	struct ut_ustmt reserved[4] = {{0}};
	*n = depth > 3 ? 0 : pick(g->in, 5);
	if (!*n)
		return 0;
	unsigned first = ut_program_add_ustmts(g->p, reserved, *n);
	for (unsigned i = 0; i < *n; i++) {
		struct ut_ustmt s = user_stmt(g, depth);
		g->p->ustmts[first + i] = s;
	}
	return first;
}

static const enum ut_display displays[] = {
	UT_SHOW_PLAIN, UT_SHOW_HEX, UT_SHOW_KOID, UT_SHOW_ERRNO, UT_SHOW_TABLE, UT_SHOW_DISK, UT_SHOW_KSTACK,
	UT_SHOW_USTACK, UT_SHOW_STRING,
};

static struct ut_value show(struct choices *in, const struct ut_program *p, unsigned field)
{
	struct ut_value v = {.kind = UT_VAL_FIELD, .field = field, .table = -1,
			     .display = displays[pick(in, sizeof(displays) / sizeof(displays[0]))]};
	if (v.display == UT_SHOW_TABLE && p->ntables)
		v.table = (int)pick(in, p->ntables);
	else if (v.display == UT_SHOW_TABLE)
		v.display = UT_SHOW_PLAIN;
	return v;
}

static void user_map(struct choices *in, struct ut_program *p)
{
	p->maps = xrealloc_array(p->maps, p->nmaps + 1, sizeof(*p->maps));
	struct ut_map *m = &p->maps[p->nmaps];
	*m = (struct ut_map){.name = xasprintf("@u%u", p->nmaps), .agg = (enum ut_agg)pick(in, UT_AGG_LAST + 1),
			     .user_side = true};
	p->nmaps++;
	bool hist = m->agg == UT_AGG_HIST || m->agg == UT_AGG_LHIST;
	m->nkeys = pick(in, 4);
	m->keys = xcalloc(m->nkeys + 1, sizeof(*m->keys));
	m->key_show = xcalloc(m->nkeys + 1, sizeof(*m->key_show));
	uint32_t at = 0;
	for (unsigned k = 0; k < m->nkeys; k++) {
		bool str = pick(in, 3) == 0;
		uint32_t size = str ? 1 + pick(in, 40) : 8;
		m->keys[k] = (struct ut_field){.type = str ? UT_F_STR : UT_F_U64, .offset = at, .size = size};
		m->key_show[k] = show(in, p, k);
		at += (size + 7) & ~7u;
	}
	m->key_size = at + (hist ? 8 : 0);
	m->value_size = m->agg == UT_AGG_AVG || m->agg == UT_AGG_MIN || m->agg == UT_AGG_MAX ? 16 : 8;
	m->value_show = (struct ut_value){.display = displays[pick(in, 4)], .table = -1};
	if (m->agg == UT_AGG_LAST && pick(in, 3) == 0) {
		m->value_size = 1 + pick(in, 64);
		m->value_show.display = UT_SHOW_STRING;
	}
	m->lhist_min = (int64_t)pick(in, 100) - 50;
	m->lhist_max = m->lhist_min + (int64_t)pick(in, 1000);
	m->lhist_step = 1 + (int64_t)pick(in, 100);
}

static const char *const formats[] = {"%d", "%s", "%x", "%-8s", "%08x", "%p", "%c", "%u", "%%", "%5.3s", "%lld", "%X",
				      "%i", "%-6d"};

/* How an event shows a name or an argument: a literal, a field, or a
 * format of fields (sometimes with fewer values than directives). */
static struct ut_value user_value(struct choices *in, const struct ut_program *p, const struct ut_event *ev, int depth)
{
	unsigned kind = pick(in, 4);
	if (kind == UT_VAL_FIELD && ev->nfields)
		return show(in, p, pick(in, ev->nfields));
	if (kind == UT_VAL_FORMAT && depth < 2) {
		struct strbuf f = {0};
		struct ut_value v = {.kind = UT_VAL_FORMAT, .table = -1};
		unsigned n = pick(in, 5);
		for (unsigned i = 0; i < n; i++) {
			sb_printf(&f, "%s ", words[pick(in, 3)]);
			sb_puts(&f, formats[pick(in, sizeof(formats) / sizeof(formats[0]))]);
		}
		v.text = f.s ? f.s : xstrdup("");
		v.nfmt = pick(in, n + 1);
		v.fmt = xcalloc(v.nfmt + 1, sizeof(*v.fmt));
		for (unsigned i = 0; i < v.nfmt; i++)
			v.fmt[i] = user_value(in, p, ev, depth + 1);
		return v;
	}
	if (kind == UT_VAL_NONE && depth == 0)
		return (struct ut_value){.table = -1};
	return (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(words[pick(in, NWORDS)]), .table = -1};
}

static void append_name(char ***v, unsigned *n, const char *name)
{
	*v = xrealloc_array(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = xstrdup(name);
}

/* An event of any layout: fields of every type packed after the header
 * (rarely one out of line), on a group or a flow or not. */
static unsigned user_event(struct choices *in, struct ut_program *p, bool hit, unsigned nusual)
{
	p->events = xrealloc_array(p->events, p->nevents + 1, sizeof(*p->events));
	struct ut_event *ev = &p->events[p->nevents];
	*ev = (struct ut_event){.op = hit ? UT_EV_HIT : (enum ut_event_op)pick(in, UT_EV_HIT), .group = -1, .flow = -1};
	ev->category = xstrdup(hit ? "hit" : words[pick(in, NWORDS)]);
	ev->nfields = pick(in, 6);
	ev->fields = xcalloc(ev->nfields + 1, sizeof(*ev->fields));
	uint32_t at = sizeof(struct ut_rec_hdr);
	for (unsigned f = 0; f < ev->nfields; f++) {
		bool str = pick(in, 3) == 0;
		uint32_t size = str ? 1 + pick(in, 64) : 8;
		ev->fields[f] = (struct ut_field){.type = str ? UT_F_STR : (enum ut_field_type)pick(in, UT_F_STR),
						  .offset = at, .size = size};
		at += rarely(in, 16) ? size : (size + 7) & ~7u;
	}
	ev->size = at + (rarely(in, 16) ? 8 : 0);
	if (!hit) {
		ev->name = user_value(in, p, ev, 0);
		if (pick(in, 2) && ev->nfields) {
			ev->group = (int)pick(in, p->ngroups);
			ev->group_key = show(in, p, pick(in, ev->nfields));
		}
		if (pick(in, 2) && ev->nfields) {
			ev->flow = (int)pick(in, p->nflows);
			ev->key = show(in, p, pick(in, ev->nfields));
		}
		ev->nargs = pick(in, 5);
		ev->args = xcalloc(ev->nargs + 1, sizeof(*ev->args));
		for (unsigned a = 0; a < ev->nargs; a++) {
			ev->args[a].name = xasprintf("a%u", pick(in, 4));
			ev->args[a].value = user_value(in, p, ev, 0);
		}
	} else {
		ev->nlocals = nusual + LOOP_SLOTS;
		ev->locals = xcalloc(ev->nlocals, sizeof(*ev->locals));
		for (unsigned l = 0; l < ev->nlocals; l++) {
			bool str = l < nusual && pick(in, 3) == 0;
			ev->locals[l] = (struct ut_ulocal){.is_str = str, .size = (uint16_t)(str ? 1 + pick(in, 64) : 8)};
		}
	}
	return p->nevents++;
}

/* Adds a user side to p from the input. */
static void user_side(struct choices *in, struct ut_program *p)
{
	if (!p->ngroups)
		append_name(&p->groups, &p->ngroups, "ring");
	if (!p->nflows)
		append_name(&p->flows, &p->nflows, "request");
	struct user_gen g = {.in = in, .p = p, .first_map = p->nmaps, .nusual = pick(in, 6)};
	unsigned nmaps = pick(in, 5), nevents = pick(in, 3), nhits = 1 + pick(in, 3), nexprs = pick(in, 24);
	for (unsigned i = 0; i < nmaps; i++)
		user_map(in, p);
	for (unsigned i = 0; i < nevents; i++)
		user_event(in, p, false, 0);
	for (unsigned i = 0; i < nexprs; i++)
		user_expr(&g);
	for (unsigned i = 0; i < nhits; i++) {
		g.hit = user_event(in, p, true, g.nusual);
		if (i && pick(in, 4) == 0) {   /* hit events may share their statements */
			p->events[g.hit].body = p->events[g.hit - 1].body;
			p->events[g.hit].nbody = p->events[g.hit - 1].nbody;
			continue;
		}
		unsigned n;
		unsigned body = user_block(&g, 0, &n);
		p->events[g.hit].body = body;
		p->events[g.hit].nbody = n;
	}
}

/* Every loop's bounds are numbers at most 8 apart, as user_stmt makes
 * them.  A damaged one may run a loop of any length short of the 2^20
 * steps a hit may take (past them it is cut, and counted malformed): a
 * stream of its hits took a minute. */
static bool loops_short(const struct ut_program *p)
{
	for (unsigned i = 0; i < p->nustmts; i++) {
		const struct ut_ustmt *s = &p->ustmts[i];
		if (s->op != UT_US_FOR)
			continue;
		const struct ut_uexpr *a = &p->uexprs[s->a], *b = &p->uexprs[s->b];
		if (a->op != UT_UX_INT || b->op != UT_UX_INT || (b->i > a->i && (uint64_t)b->i - (uint64_t)a->i > 8))
			return false;
	}
	return true;
}

/* The program of the input: a compiled one, loaded as a .uto, maybe with
 * a user side that then has to load as well. */
static struct ut_program *program(struct choices *in, bool with_user_side)
{
	const struct image *img = &images[pick(in, nimages)];
	struct ut_program_objects objs;
	char err[256];
	struct ut_program *p = ut_program_load(img->data, img->len, &objs, err, sizeof(err));
	if (!p)
		abort();   /* a compiled program that does not load */
	if (!with_user_side)
		return p;
	user_side(in, p);
	void *data;
	size_t len;
	ut_program_save(p, &(struct ut_program_objects){.bpf = ""}, &data, &len);
	ut_program_free(p);
	/* now and then a damaged file: bytes changed where the input says */
	for (unsigned n = rarely(in, 4) ? 1 + pick(in, 4) : 0; n > 0; n--) {
		unsigned at = pick(in, (unsigned)len);
		((unsigned char *)data)[at] ^= (unsigned char)(1 + pick(in, 255));
	}
	p = ut_program_load(data, len, &objs, err, sizeof(err));
	free(data);
	if (p && !loops_short(p)) {
		ut_program_free(p);
		p = NULL;
	}
	return p ? p : ut_program_load(img->data, img->len, &objs, err, sizeof(err));
}

/* ---- the stream ---- */

struct session {
	struct choices in;
	const struct ut_program *prog;
	unsigned *hits;               /* the program's hit events */
	unsigned nhits;
	unsigned ncpus;
	uint64_t clock;               /* time of the last record made */
	struct ut_decoder dec;
	struct ut_user_maps maps;
	struct ut_reorder *reorder;
	unsigned char sample[MAX_SAMPLE];
	size_t sample_len;
};

/* The reorder queues' callbacks, on the decoder (ctx). */
static size_t record_len(void *decoder, const void *rec, size_t avail)
{
	return ut_decode_record_len(decoder, rec, avail);
}

static int decode(void *decoder, const void *rec, size_t size)
{
	struct ut_decoder *d = decoder;
	ut_decode_record(d, rec, size);
	return d->malformed >= MAX_MALFORMED;
}

/* The BPF maps have no object here (nothing is loaded): only the reader's
 * are cleared and printed. */
static void on_clear(void *ctx, const char *name)
{
	struct session *s = ctx;
	for (unsigned i = 0; i < s->prog->nmaps; i++)
		if (strcmp(s->prog->maps[i].name, name) == 0 && s->prog->maps[i].user_side)
			ut_clear_map(s->prog, NULL, &s->maps, name);
}

/* The program's user-side maps (the last ones, as user_side() adds them)
 * as text and JSON. */
static void print_maps(const struct session *s, FILE *out)
{
	const struct ut_program *p = s->prog;
	unsigned first = p->nmaps;
	while (first > 0 && p->maps[first - 1].user_side)
		first--;
	struct ut_program view = *p;
	view.maps += first;
	view.nmaps -= first;
	struct ut_user_maps maps = {.n = s->maps.n - first, .maps = s->maps.maps + first};
	ut_print_maps(&view, NULL, &maps, out);
	ut_maps_json(&view, NULL, &maps, out);
}

/* A sample goes to the queues whole, or cut anywhere. */
static void send_sample(struct session *s)
{
	size_t len = s->sample_len;
	if (len && rarely(&s->in, 16))
		len -= 1 + pick(&s->in, (unsigned)len);
	if (len)
		ut_reorder_add(s->reorder, s->sample, len);
	s->sample_len = 0;
}

static uint32_t pid_of(struct choices *in)
{
	switch (pick(in, 8)) {
	case 0: return 0;
	case 1: return (uint32_t)pick_u64(in);
	case 2: return UT_SYNTHETIC_KOID_BASE + pick(in, 4);
	default: return 1000 + pick(in, 4);
	}
}

static void add_record(struct session *s)
{
	struct choices *in = &s->in;
	const struct ut_program *p = s->prog;
	unsigned e = s->nhits && pick(in, 2) ? s->hits[pick(in, s->nhits)] : pick(in, p->nevents + 3);
	/* time mostly goes on, as each CPU's does; sometimes back */
	if (rarely(in, 8))
		s->clock -= pick(in, 5000);
	else
		s->clock += pick(in, 3000);
	struct ut_rec_hdr h = {.ts = s->clock, .pid = pid_of(in)};
	h.cpu = pick(in, s->ncpus + 1);
	h.tid = pick(in, 2) ? h.pid : h.pid + 1 + pick(in, 3);
	size_t size;
	if (e < p->nevents) {
		h.event = e;
		size = p->events[e].size;
	} else if (e == p->nevents) {
		h.event = UT_EVENT_THREAD;
		size = sizeof(struct ut_thread_rec);
	} else if (e == p->nevents + 1) {   /* the kernel's notice of hits it lost */
		h.event = UT_EVENT_LOST;
		size = sizeof(struct ut_lost_rec);
	} else {   /* damaged: an unknown event, or a known one of another size (a multiple of 8, as in a sample) */
		h.event = pick(in, 2) ? (uint32_t)pick_u64(in) : pick(in, p->nevents + 1);
		size = sizeof(h) + 8 * pick(in, 8);
	}
	if (s->sample_len + size > MAX_SAMPLE)
		send_sample(s);
	if (size > MAX_SAMPLE)
		return;
	unsigned char *r = s->sample + s->sample_len;
	memset(r, 0, size);
	memcpy(r, &h, sizeof(h) < size ? sizeof(h) : size);
	if (h.event == UT_EVENT_THREAD) {
		string_bytes(in, (char *)r + offsetof(struct ut_thread_rec, comm), 16);
		string_bytes(in, (char *)r + offsetof(struct ut_thread_rec, pcomm), 16);
	} else if (h.event == UT_EVENT_LOST) {
		struct ut_lost_rec *l = (void *)r;
		l->since = h.ts - pick(in, 100000);
		l->count = 1 + pick(in, 1000);
		l->reason = pick(in, 3) ? UT_LOST_IN_KERNEL : pick_u64(in);
	} else if (e < p->nevents) {
		const struct ut_event *ev = &p->events[e];
		for (unsigned f = 0; f < ev->nfields; f++) {
			const struct ut_field *fl = &ev->fields[f];
			if (fl->type == UT_F_STR) {
				string_bytes(in, (char *)r + fl->offset, fl->size);
			} else {
				uint64_t v = number(in, p);
				memcpy(r + fl->offset, &v, 8);
			}
		}
	} else {
		for (size_t i = sizeof(h); i < size; i++)
			r[i] = (unsigned char)pick(in, 256);
	}
	s->sample_len += size;
}

static void run_stream(struct session *s)
{
	struct choices *in = &s->in;
	for (unsigned op = 0; op < MAX_OPS && choices_left(in) && s->dec.malformed < MAX_MALFORMED; op++) {
		switch (pick(in, 12)) {
		case 0:
			send_sample(s);
			break;
		case 1: {   /* what a poll hands on: up to a watermark behind the newest */
			uint64_t behind = pick(in, 8000);
			ut_reorder_release(s->reorder, s->clock > behind ? s->clock - behind : 0, pick(in, 2) ? 64 : SIZE_MAX,
					   decode, &s->dec);
			break;
		}
		default:
			add_record(s);
			break;
		}
	}
	send_sample(s);
	if (s->dec.malformed < MAX_MALFORMED)
		ut_reorder_release(s->reorder, UINT64_MAX, 0, decode, &s->dec);
}

/* ---- the trace ---- */

/* The number after key in text; 0 when key is not there (stats leaves
 * out the counts that are 0). */
static uint64_t stat_value(const char *text, const char *key)
{
	const char *at = strstr(text, key);
	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

static void check_trace(const char *path, const struct ut_engine_stats *st)
{
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		abort();
	int rc = fxt_stats(path, out, false);
	fclose(out);
	const char *why = NULL;
	if (rc != 0 || !strstr(text, "\nerrors: 0\n"))
		why = "the reader finds errors in the trace";
	else if (stat_value(text, "  duration_begin: ") != stat_value(text, "  duration_end: ") + st->slices_evicted)
		why = "slices begun are not ended";
	else if (stat_value(text, "flows: ") != st->flows_ended)
		why = "the trace's complete flows are not those the engine ended";
	else if (stat_value(text, " incomplete, ") != 0)
		why = "flow points are outside any slice";
	if (why) {
		fprintf(stderr, "fuzz_decode: %s (engine: %" PRIu64 " slices evicted, %" PRIu64 " flows ended)\n%s", why,
			st->slices_evicted, st->flows_ended, text);
		abort();
	}
	free(text);
}

/* Options, the input's second byte. */
enum {
	OPT_SAMPLE = 3,           /* --sample: every flow, 50%, 1%, every flow */
	OPT_SMALL_LIMITS = 1 << 2,   /* the engine's limits tiny: evictions */
	OPT_USER_SIDE = 1 << 3,
	OPT_GZIP = 1 << 4,
	OPT_CPUS = 3 << 5,        /* 1 to 4 CPUs */
	OPT_NO_TRACE = 1 << 7,    /* --summary-only */
};

/* What a run gave: printf's text and the maps, and the trace's bytes. */
struct outcome {
	char *text;
	size_t text_len;
	void *trace;
	size_t trace_len;
	uint64_t malformed;
	bool compiled;   /* the run had compiled code to run */
};

/* u's program's user side compiled and handed to u; false where it has none. */
static bool compile_user_side(struct ut_user_side *u)
{
	char err[8192];
	int built = ut_user_side_build(u, err, sizeof(err));
	if (built < 0) {
		fprintf(stderr, "fuzz_decode: the reader's C does not build or load: %s\n", err);
		abort();
	}
	return built > 0;
}

/* One run of the input; with compiled, the user side runs compiled. */
static void run_input(const uint8_t *data, size_t size, bool compiled, struct outcome *out)
{
	struct session s = {.in = {.data = data, .size = size}};
	FILE *text = open_memstream(&out->text, &out->text_len);
	unsigned opts = pick(&s.in, 256);
	struct ut_program *p = program(&s.in, opts & OPT_USER_SIDE);
	if (!p || !text)
		abort();
	s.prog = p;
	s.hits = xcalloc(p->nevents + 1, sizeof(*s.hits));
	for (unsigned e = 0; e < p->nevents; e++)
		if (p->events[e].op == UT_EV_HIT)
			s.hits[s.nhits++] = e;
	s.ncpus = 1 + ((opts & OPT_CPUS) >> 5);
	static const uint32_t samples[] = {0, 5000, 100, 10000};
	const char *path = trace_path[opts & OPT_GZIP ? 1 : 0];
	char err[256];
	struct fxt_writer *w = NULL;
	struct ut_engine *e = NULL;
	if (!(opts & OPT_NO_TRACE)) {
		w = fxt_writer_open(path, err, sizeof(err));
		if (!w) {
			fprintf(stderr, "fuzz_decode: %s\n", err);
			abort();
		}
		struct ut_engine_limits small = {.max_open_flows = 4, .max_open_slices = 2, .max_open_spans = 4,
						 .max_threads = 3};
		e = ut_engine_new(w, opts & OPT_SMALL_LIMITS ? &small : NULL);
	}
	ut_user_maps_init(&s.maps, p);
	s.dec = (struct ut_decoder){.prog = p, .engine = e, .print_out = text, .clear_map = on_clear, .maps_ctx = &s,
				    .user_side = ut_user_side_new(p, &s.maps, samples[opts & OPT_SAMPLE])};
	out->compiled = compiled && compile_user_side(s.dec.user_side);
	if (e)
		ut_decode_declare_names(p, e);
	s.reorder = ut_reorder_new(s.ncpus, record_len, &s.dec);
	s.clock = 1000000;
	run_stream(&s);
	ut_reorder_free(s.reorder);
	print_maps(&s, text);
	fclose(text);
	out->malformed = s.dec.malformed;
	if (e) {
		ut_engine_finish(e, s.dec.last_ts ? s.dec.last_ts : s.clock);
		if (fxt_writer_close(w, err, sizeof(err)) != 0) {
			fprintf(stderr, "fuzz_decode: %s\n", err);
			abort();
		}
		check_trace(path, ut_engine_stats(e));
		ut_engine_free(e);
		if (ut_read_file(path, &out->trace, &out->trace_len) != 0)
			abort();
	}
	ut_user_side_free(s.dec.user_side);
	ut_user_maps_free(&s.maps);
	free(s.hits);
	ut_program_free(p);
}

static void outcome_free(struct outcome *o)
{
	free(o->text);
	free(o->trace);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome interpreted = {0}, compiled = {0};
	run_input(data, size, false, &interpreted);
	if (compare_compiled)
		run_input(data, size, true, &compiled);
	if (compiled.compiled &&
	    (compiled.text_len != interpreted.text_len || memcmp(compiled.text, interpreted.text, compiled.text_len) ||
	     compiled.trace_len != interpreted.trace_len ||
	     (compiled.trace_len && memcmp(compiled.trace, interpreted.trace, compiled.trace_len)) ||
	     compiled.malformed != interpreted.malformed)) {
		fprintf(stderr, "fuzz_decode: the compiled user side differs from the interpreter: text %zu / %zu bytes, "
			"trace %zu / %zu bytes, malformed %" PRIu64 " / %" PRIu64 "\n--- interpreted\n%s\n--- compiled\n%s\n",
			interpreted.text_len, compiled.text_len, interpreted.trace_len, compiled.trace_len,
			interpreted.malformed, compiled.malformed, interpreted.text, compiled.text);
		abort();
	}
	outcome_free(&interpreted);
	outcome_free(&compiled);
	return 0;
}
