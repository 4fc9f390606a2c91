/* The user side of a probe (split execution): the reader's maps
 * (runtime/user_maps.c) and the evaluator (runtime/user_side.c) over
 * statements built by hand, checked against what BPF prints for the same
 * script (user_side/semantics.*, which tests/e2e/test_user_side.sh checks
 * in BPF), against the records the kernel would have made (the trace is
 * the same to the byte), and with damaged .uto files.  Last, with root,
 * uring-trace runs a .uto whose BEGIN probe's record was made a hit. */
#include <libgen.h>
#include <limits.h>
#include <linux/types.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/records.h"
#include "compiler/gen_native.h"
#include "compiler/program_io.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "tools/tools.h"
#include "base/hashmap.h"
#include "runtime/cache.h"
#include "runtime/decode.h"
#include "runtime/summary.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"
#include "tests/unit/check.h"

/* ---- building programs by hand ---- */

static struct ut_program *new_program(void)
{
	return calloc(1, sizeof(struct ut_program));
}

static unsigned x_add(struct ut_program *p, struct ut_uexpr e)
{
	return ut_program_add_uexpr(p, &e);
}

static unsigned x_int(struct ut_program *p, int64_t v)
{
	return x_add(p, (struct ut_uexpr){.op = UT_UX_INT, .i = v});
}

static unsigned x_str(struct ut_program *p, const char *s)
{
	return x_add(p, (struct ut_uexpr){.op = UT_UX_STR, .is_str = true, .n = (uint16_t)(strlen(s) + 1),
					  .text = (char *)s});
}

/* An integer operation on a (and b). */
static unsigned x_op(struct ut_program *p, enum ut_uexpr_op op, unsigned a, unsigned b)
{
	return x_add(p, (struct ut_uexpr){.op = op, .a = a, .b = b});
}

static unsigned x_local(struct ut_program *p, unsigned slot, bool is_str)
{
	return x_add(p, (struct ut_uexpr){.op = UT_UX_LOCAL, .slot = slot, .is_str = is_str});
}

static unsigned x_captured(struct ut_program *p, unsigned field, bool is_str)
{
	return x_add(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = field, .is_str = is_str});
}

/* A list of n expressions in ukeys: map keys or an EMIT's fields. */
static unsigned list(struct ut_program *p, unsigned n, ...)
{
	unsigned x[16];
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		x[i] = va_arg(ap, unsigned);
	va_end(ap);
	return ut_program_add_ukeys(p, x, n);
}

static unsigned x_map(struct ut_program *p, unsigned map, unsigned keys, unsigned nkeys)
{
	return x_add(p, (struct ut_uexpr){.op = UT_UX_MAP, .map = map, .keys = keys, .nkeys = nkeys,
					  .is_str = ut_map_holds_string(&p->maps[map])});
}

static struct ut_ustmt s_map(enum ut_ustmt_op op, unsigned map, unsigned keys, unsigned nkeys, unsigned a)
{
	return (struct ut_ustmt){.op = op, .map = map, .keys = keys, .nkeys = nkeys, .a = a};
}

/* Statements are added in runs, a body after the statement that has it:
 * a run first, then the bodies of its ifs and loops, set in them. */
static unsigned run(struct ut_program *p, const struct ut_ustmt *s, unsigned n)
{
	return ut_program_add_ustmts(p, s, n);
}

static void set_body(struct ut_program *p, unsigned stmt, unsigned body, unsigned nbody)
{
	p->ustmts[stmt].body = body;
	p->ustmts[stmt].nbody = nbody;
}

struct map_spec {
	const char *name;
	enum ut_agg agg;
	unsigned nkeys;
	struct ut_field keys[4];   /* types and (padded) sizes; offsets follow */
	uint32_t string_value;     /* a string value's size; 0: a number */
	int64_t lhist_min, lhist_max, lhist_step;
};

#define KEY_U64 {.type = UT_F_U64, .size = 8}
#define KEY_S64 {.type = UT_F_S64, .size = 8}
#define KEY_STR(n) {.type = UT_F_STR, .size = (n)}

/* A user-side map laid out as compiler/gen.c lays out its BPF map. */
static unsigned add_map(struct ut_program *p, const struct map_spec *s)
{
	p->maps = realloc(p->maps, (p->nmaps + 1) * sizeof(*p->maps));
	struct ut_map *m = &p->maps[p->nmaps];
	memset(m, 0, sizeof(*m));
	m->name = strdup(s->name);
	m->agg = s->agg;
	m->user_side = true;
	m->lhist_min = s->lhist_min;
	m->lhist_max = s->lhist_max;
	m->lhist_step = s->lhist_step;
	m->nkeys = s->nkeys;
	m->keys = calloc(s->nkeys + 1, sizeof(*m->keys));
	m->key_show = calloc(s->nkeys + 1, sizeof(*m->key_show));
	uint32_t off = 0;
	for (unsigned k = 0; k < s->nkeys; k++) {
		m->keys[k] = s->keys[k];
		m->keys[k].offset = off;
		m->key_show[k] = (struct ut_value){.kind = UT_VAL_FIELD, .field = k};
		off += s->keys[k].size;
	}
	const struct ut_agg_kind *kind = &ut_aggs[s->agg];
	if (kind->bucket)
		off += 8;
	if (!off)   /* a keyless count, avg, min or max is an array slot there */
		off = s->agg != UT_AGG_LAST && kind->zero_is_unset ? 4 : 8;
	m->key_size = off;
	m->value_size = s->string_value ? (s->string_value + 7) & ~7u : kind->value_size;
	m->value_show = (struct ut_value){.kind = UT_VAL_FIELD,
					  .display = s->string_value ? UT_SHOW_STRING : UT_SHOW_PLAIN};
	return p->nmaps++;
}

/* An event with fields of the given types and sizes, laid out after the
 * header as the compiler lays out records. */
static unsigned add_event(struct ut_program *p, enum ut_event_op op, unsigned nfields, const struct ut_field *fields)
{
	p->events = realloc(p->events, (p->nevents + 1) * sizeof(*p->events));
	struct ut_event *e = &p->events[p->nevents];
	memset(e, 0, sizeof(*e));
	e->op = op;
	e->category = strdup("probe");
	e->group = -1;
	e->flow = -1;
	e->nfields = nfields;
	e->fields = calloc(nfields + 1, sizeof(*e->fields));
	uint32_t off = sizeof(struct ut_rec_hdr);
	for (unsigned f = 0; f < nfields; f++) {
		e->fields[f] = fields[f];
		e->fields[f].offset = off;
		off += (fields[f].size + 7) & ~7u;
	}
	e->size = off;
	return p->nevents++;
}

static void set_locals(struct ut_program *p, unsigned event, unsigned n, const struct ut_ulocal *locals)
{
	p->events[event].nlocals = n;
	p->events[event].locals = calloc(n + 1, sizeof(*locals));
	memcpy(p->events[event].locals, locals, n * sizeof(*locals));
}

static struct ut_value field_value(unsigned field, enum ut_display display)
{
	return (struct ut_value){.kind = UT_VAL_FIELD, .field = field, .display = display};
}

static struct ut_value text_value(const char *text)
{
	return (struct ut_value){.kind = UT_VAL_TEXT, .text = strdup(text)};
}

static struct ut_value format_value(const char *format, unsigned n, const struct ut_value *values)
{
	struct ut_value v = {.kind = UT_VAL_FORMAT, .text = strdup(format), .nfmt = n};
	v.fmt = calloc(n + 1, sizeof(*v.fmt));
	memcpy(v.fmt, values, n * sizeof(*values));
	return v;
}

static void add_arg(struct ut_event *e, const char *name, struct ut_value v)
{
	e->args = realloc(e->args, (e->nargs + 1) * sizeof(*e->args));
	e->args[e->nargs++] = (struct ut_named_value){.name = strdup(name), .value = v};
}

static char **names(unsigned n, ...)
{
	char **v = calloc(n + 1, sizeof(*v));
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		v[i] = strdup(va_arg(ap, const char *));
	va_end(ap);
	return v;
}

/* The program as a compiled script's reader gets it: through a .uto. */
static struct ut_program *reloaded(const struct ut_program *p)
{
	void *image;
	size_t len;
	struct ut_program_objects objs;
	char err[256];
	ut_program_save(p, &(struct ut_program_objects){.bpf = ""}, &image, &len);
	struct ut_program *q = ut_program_load(image, len, &objs, err, sizeof(err));
	free(image);
	return q;
}

/* built, through a .uto (and freed): NULL, a failed check, when it does
 * not load. */
static struct ut_program *through_uto(const char *check, struct ut_program *built)
{
	struct ut_program *p = reloaded(built);
	ut_program_free(built);
	CHECK(check, p != NULL);
	return p;
}

/* ---- running hits ---- */

struct session {
	const struct ut_program *prog;
	struct ut_user_maps maps;
	struct ut_user_side *user;
	struct ut_decoder d;
	char *printed;
	size_t printed_len;
};

static void on_clear(void *ctx, const char *name)
{
	struct session *s = ctx;
	ut_clear_map(s->prog, NULL, &s->maps, name);
}

/* The second round of tests runs each hit as compiled code
 * (compiler/gen_native.h, built by the clang wrapper), which must give
 * what the interpreter gave in the first. */
static bool compiled_round;

static void compile_user_side(struct session *s)
{
	char err[8192];
	int built = ut_user_side_build(s->user, err, sizeof(err));
	if (built < 0)
		printf("%s\n", err);
	if (built)
		CHECK("compiled/builds_and_loads", built > 0 && ut_user_side_compiled_events(s->user) > 0);
}

static void session_open(struct session *s, const struct ut_program *prog, uint32_t sample_permyriad,
			 struct ut_engine *engine)
{
	memset(s, 0, sizeof(*s));
	s->prog = prog;
	ut_user_maps_init(&s->maps, prog);
	s->user = ut_user_side_new(prog, &s->maps, sample_permyriad);
	s->d = (struct ut_decoder){.prog = prog, .engine = engine, .clear_map = on_clear, .maps_ctx = s,
				   .user_side = s->user, .print_out = open_memstream(&s->printed, &s->printed_len)};
	if (compiled_round)
		compile_user_side(s);
}

static void session_close(struct session *s)
{
	fclose(s->d.print_out);
	free(s->printed);
	ut_user_side_free(s->user);
	ut_user_maps_free(&s->maps);
}

/* A record of event with the given header, its fields to be filled. */
static void *record(const struct ut_program *p, unsigned event, uint64_t ts)
{
	struct ut_rec_hdr *h = calloc(1, p->events[event].size);
	*h = (struct ut_rec_hdr){.ts = ts, .event = event, .pid = 4242, .tid = 4243, .cpu = 1};
	return h;
}

static void put_u64(void *rec, const struct ut_field *f, uint64_t v)
{
	memcpy((char *)rec + f->offset, &v, 8);
}

static void put_str(void *rec, const struct ut_field *f, const char *s)
{
	strncpy((char *)rec + f->offset, s, f->size);
}

static void decode(struct session *s, void *rec)
{
	ut_decode_record(&s->d, rec, s->prog->events[((struct ut_rec_hdr *)rec)->event].size);
	free(rec);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	if (!f)
		return NULL;
	if (getdelim(&text, &len, 0, f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* ---- the reader's maps ---- */

static uint64_t first_round(uint64_t w)
{
	/* hmap_hash_bytes on one 8-byte word from its initial state */
	uint64_t h = (0xcbf29ce484222325ull ^ w) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 32);
}

/* Keys longer than 16 bytes (found by their hash) that hash the same,
 * made as a script's input could make them (a comm, a path): the second
 * word undoes the first's difference. */
static void colliding_key(uint64_t first, uint64_t *key)
{
	key[0] = first;
	key[1] = first_round(first) ^ 0x1234;
	key[2] = 42;
}

static void test_map_basics(void)
{
	struct ut_user_map m;
	ut_user_map_init(&m, 16, 8, false);
	bool ok = true;
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t key[2] = {i, i * 7};
		ok &= ut_user_map_add(&m, key, (int64_t)i) == (int64_t)i;
	}
	for (uint64_t i = 0; i < 1000; i += 2) {
		uint64_t key[2] = {i, i * 7};
		ut_user_map_delete(&m, key);
	}
	for (uint64_t i = 0; i < 1000; i++) {
		uint64_t key[2] = {i, i * 7};
		const int64_t *v = ut_user_map_lookup(&m, key);
		ok &= i % 2 ? v && *v == (int64_t)i : !v;
	}
	CHECK("maps/insert_delete_lookup", ok && m.count == 500);
	/* entries stay packed: each odd key once */
	uint64_t seen = 0;
	for (uint32_t i = 0; i < m.count; i++) {
		const uint64_t *key = ut_user_map_entry_key(&m, i);
		const int64_t *v = ut_user_map_entry_value(&m, i);
		seen += key[0] % 2 && key[1] == key[0] * 7 && *v == (int64_t)key[0];
	}
	CHECK("maps/entries_packed", seen == 500);
	uint64_t key[2] = {1, 7};
	CHECK("maps/add_returns_sum", ut_user_map_add(&m, key, -3) == -2);
	ut_user_map_clear(&m);
	CHECK("maps/clear", m.count == 0 && !ut_user_map_lookup(&m, key));
	CHECK("maps/after_clear", ut_user_map_add(&m, key, 5) == 5 && m.count == 1);
	/* the entry written last is found without a look-up: a delete that
	 * moves it into another's place must not leave it found there */
	uint64_t other[2] = {2, 14}, third[2] = {3, 21};
	ut_user_map_add(&m, other, 20);
	ut_user_map_add(&m, third, 30);   /* the last entry, remembered */
	ut_user_map_delete(&m, key);      /* third moves into key's place */
	const int64_t *v3 = ut_user_map_lookup(&m, third), *v1 = ut_user_map_lookup(&m, key);
	CHECK("maps/last_after_delete", v3 && *v3 == 30 && !v1 && ut_user_map_add(&m, third, 1) == 31 &&
	      ut_user_map_add(&m, other, 1) == 21 && m.count == 2);
	ut_user_map_free(&m);
}

/* A local read before it is set reads 0 at every hit, though a hit
 * before set it; one always set first is not zeroed but reads as set
 * (user_side.c zeroes only where a read may come first). */
static void test_locals_zeroed(void)
{
	struct ut_program *p = new_program();
	unsigned early = add_event(p, UT_EV_HIT, 0, NULL), late = add_event(p, UT_EV_HIT, 0, NULL);
	set_locals(p, early, 1, (struct ut_ulocal[]){{false, 8}});
	set_locals(p, late, 1, (struct ut_ulocal[]){{false, 8}});
	unsigned m = add_map(p, &(struct map_spec){.name = "@m", .agg = UT_AGG_LAST, .nkeys = 1, .keys = {KEY_U64}});
	unsigned k0 = list(p, 1, x_int(p, 0)), k1 = list(p, 1, x_int(p, 1)), l = x_local(p, 0, false);
	/* early: @m[0] = $l; $l = 5.  late: $l = 7; @m[1] = $l + $l */
	p->events[early].body = run(p, (struct ut_ustmt[]){
		s_map(UT_US_MAP_SET, m, k0, 1, l), {.op = UT_US_LOCAL, .slot = 0, .a = x_int(p, 5)}}, 2);
	p->events[early].nbody = 2;
	unsigned twice = x_op(p, UT_UX_ADD, l, l);
	p->events[late].body = run(p, (struct ut_ustmt[]){
		{.op = UT_US_LOCAL, .slot = 0, .a = x_int(p, 7)}, s_map(UT_US_MAP_SET, m, k1, 1, twice)}, 2);
	p->events[late].nbody = 2;
	struct session s;
	session_open(&s, p, 0, NULL);
	for (int i = 0; i < 2; i++) {
		decode(&s, record(p, early, 1000));
		decode(&s, record(p, late, 1001));
	}
	uint64_t key0 = 0, key1 = 1;
	const int64_t *v0 = ut_user_map_lookup(&s.maps.maps[m], &key0), *v1 = ut_user_map_lookup(&s.maps.maps[m], &key1);
	CHECK("locals/read_before_set_is_zero", v0 && *v0 == 0 && s.d.malformed == 0);
	CHECK("locals/set_first", v1 && *v1 == 14);
	session_close(&s);
	ut_program_free(p);
}

static void test_map_collisions(void)
{
	uint64_t keys[5][3];
	for (unsigned i = 0; i < 5; i++)
		colliding_key(100 + i, keys[i]);
	CHECK("maps/keys_collide", hmap_hash_bytes(keys[0], 24) == hmap_hash_bytes(keys[4], 24));
	struct ut_user_map m;
	ut_user_map_init(&m, 24, 8, false);
	uint64_t other[3] = {1, 2, 3};
	ut_user_map_add(&m, other, 99);
	for (unsigned i = 0; i < 5; i++)
		ut_user_map_add(&m, keys[i], i + 1);
	bool ok = true;
	for (unsigned i = 0; i < 5; i++) {
		const int64_t *v = ut_user_map_lookup(&m, keys[i]);
		ok &= v && *v == i + 1;
	}
	CHECK("maps/chain_lookup", ok);
	/* the head, the middle, the end of the chain; and the entry that
	 * fills each hole is a member of it */
	ut_user_map_delete(&m, keys[4]);
	ut_user_map_delete(&m, keys[2]);
	ut_user_map_delete(&m, keys[0]);
	ut_user_map_delete(&m, other);
	ok = m.count == 2;
	for (unsigned i = 0; i < 5; i++) {
		const int64_t *v = ut_user_map_lookup(&m, keys[i]);
		ok &= i % 2 ? v && *v == i + 1 : !v;
	}
	CHECK("maps/chain_delete", ok);
	ut_user_map_delete(&m, keys[1]);
	ut_user_map_delete(&m, keys[3]);
	CHECK("maps/chain_empty", m.count == 0 && !ut_user_map_lookup(&m, keys[3]));
	ut_user_map_add(&m, keys[3], 7);
	CHECK("maps/chain_again", ut_user_map_lookup(&m, keys[3]) && m.count == 1);
	ut_user_map_free(&m);
}

static void test_map_full(void)
{
	struct ut_user_map m;
	ut_user_map_init(&m, 8, 16, false);
	const struct ut_agg_kind *avg = &ut_aggs[UT_AGG_AVG], *min = &ut_aggs[UT_AGG_MIN];
	for (uint64_t i = 0; i < UT_USER_MAP_MAX_ENTRIES; i++)
		ut_user_map_take(&m, &i, avg, 1);
	uint64_t more = UT_USER_MAP_MAX_ENTRIES, first = 0;
	ut_user_map_take(&m, &more, avg, 1);
	CHECK("maps/full_refuses", m.count == UT_USER_MAP_MAX_ENTRIES && m.refused == 1 &&
					   !ut_user_map_lookup(&m, &more));
	CHECK("maps/full_add_gives_0", ut_user_map_add(&m, &more, 5) == 0 && m.refused == 2);
	ut_user_map_take(&m, &first, min, -4);
	const struct ut_avg *v = ut_user_map_lookup(&m, &first);
	CHECK("maps/full_updates_existing", v && v->sum == -4 && v->count == 1);
	ut_user_map_delete(&m, &first);
	ut_user_map_take(&m, &more, avg, 3);
	v = ut_user_map_lookup(&m, &more);
	CHECK("maps/room_again", v && v->sum == 3 && v->count == 1 && m.refused == 2);
	ut_user_map_free(&m);
}

/* An lru map of key_size-byte keys (the key's first 8 bytes a number,
 * the rest zeros): filled, its first keys used again, then more new keys
 * than it holds.  None is refused; as many old entries are pushed out,
 * none of those used since; every entry left is found under its key. */
static void map_lru(const char *name, uint32_t key_size)
{
	enum { USED = 1000, MORE = 4096 };
	struct ut_user_map m;
	ut_user_map_init(&m, key_size, 8, true);
	uint64_t key[3] = {0, 0, 0};
	for (uint64_t i = 0; i < UT_USER_MAP_MAX_ENTRIES; i++) {
		key[0] = i;
		ut_user_map_add(&m, key, (int64_t)i);
	}
	for (uint64_t i = 0; i < USED; i++) {
		key[0] = i;
		ut_user_map_lookup(&m, key);
	}
	for (uint64_t i = UT_USER_MAP_MAX_ENTRIES; i < UT_USER_MAP_MAX_ENTRIES + MORE; i++) {
		key[0] = i;
		ut_user_map_add(&m, key, (int64_t)i);
	}
	char what[64];
	snprintf(what, sizeof(what), "maps/lru_%s_pushes_out", name);
	CHECK(what, m.refused == 0 && m.evicted == MORE && m.count == UT_USER_MAP_MAX_ENTRIES);
	unsigned used_kept = 0, new_kept = 0, old_kept = 0;
	for (uint64_t i = 0; i < UT_USER_MAP_MAX_ENTRIES + MORE; i++) {
		key[0] = i;
		const int64_t *v = ut_user_map_lookup(&m, key);
		if (!v || *v != (int64_t)i)
			continue;
		if (i < USED)
			used_kept++;
		else if (i < UT_USER_MAP_MAX_ENTRIES)
			old_kept++;
		else
			new_kept++;
	}
	snprintf(what, sizeof(what), "maps/lru_%s_keeps_recent", name);
	CHECK(what, used_kept == USED && new_kept == MORE && old_kept == UT_USER_MAP_MAX_ENTRIES - USED - MORE);
	bool ok = true;
	for (uint32_t i = 0; i < m.count; i++)
		ok &= ut_user_map_lookup(&m, ut_user_map_entry_key(&m, i)) == ut_user_map_entry_value(&m, i);
	snprintf(what, sizeof(what), "maps/lru_%s_index_whole", name);
	CHECK(what, ok);
	/* room again after a delete: nothing pushed out */
	key[0] = 0;
	ut_user_map_delete(&m, key);
	key[0] = 1u << 30;
	snprintf(what, sizeof(what), "maps/lru_%s_delete_makes_room", name);
	CHECK(what, ut_user_map_add(&m, key, 7) == 7 && m.evicted == MORE && m.count == UT_USER_MAP_MAX_ENTRIES);
	ut_user_map_free(&m);
}

static void test_map_lru(void)
{
	map_lru("int_keys", 8);
	map_lru("long_keys", 24);   /* found by their hash */
}

/* ---- semantics: user_side/semantics.ut as user-side statements ---- */

static unsigned build_semantics(struct ut_program *p)
{
	const struct ut_field comm = KEY_STR(16);
	unsigned hit = add_event(p, UT_EV_HIT, 1, &comm);
	set_locals(p, hit, 4, (struct ut_ulocal[]){{false, 8}, {false, 8}, {false, 8}, {true, 6}});
	enum { I, X, Z, WHO };   /* locals */
	unsigned c = add_map(p, &(struct map_spec){.name = "@c", .agg = UT_AGG_COUNT});
	unsigned s = add_map(p, &(struct map_spec){.name = "@s", .agg = UT_AGG_SUM, .nkeys = 1, .keys = {KEY_U64}});
	unsigned a = add_map(p, &(struct map_spec){.name = "@a", .agg = UT_AGG_AVG, .nkeys = 1, .keys = {KEY_STR(8)}});
	unsigned mn = add_map(p, &(struct map_spec){.name = "@mn", .agg = UT_AGG_MIN});
	unsigned mx = add_map(p, &(struct map_spec){.name = "@mx", .agg = UT_AGG_MAX});
	unsigned h = add_map(p, &(struct map_spec){.name = "@h", .agg = UT_AGG_HIST});
	unsigned l = add_map(p, &(struct map_spec){.name = "@l", .agg = UT_AGG_LHIST, .nkeys = 1, .keys = {KEY_S64},
						   .lhist_min = 0, .lhist_max = 6, .lhist_step = 2});
	unsigned v = add_map(p, &(struct map_spec){.name = "@v", .agg = UT_AGG_LAST, .nkeys = 1, .keys = {KEY_STR(8)}});
	unsigned str = add_map(p, &(struct map_spec){.name = "@str", .agg = UT_AGG_LAST, .nkeys = 1,
						     .keys = {KEY_STR(16)}, .string_value = 6});
	unsigned zero = add_map(p, &(struct map_spec){.name = "@zero", .agg = UT_AGG_LAST});
	const char *plain[] = {"@div", "@mod", "@div0", "@mod0", "@shr", "@ushr", "@shl", "@narrow", "@chars", "@absent"};
	unsigned first_plain = p->nmaps;
	for (unsigned i = 0; i < 10; i++)
		add_map(p, &(struct map_spec){.name = plain[i], .agg = UT_AGG_LAST});
	unsigned keyed = add_map(p, &(struct map_spec){.name = "@keyed", .agg = UT_AGG_LAST, .nkeys = 2,
						       .keys = {KEY_STR(8), KEY_U64}});
	unsigned deleted = add_map(p, &(struct map_spec){.name = "@deleted", .agg = UT_AGG_LAST, .nkeys = 1,
							 .keys = {KEY_U64}});
	const struct ut_field print_fields[] = {KEY_S64, KEY_S64, KEY_STR(6), KEY_U64, KEY_STR(16)};
	unsigned print = add_event(p, UT_EV_PRINT, 5, print_fields);
	p->events[print].name = format_value("x=%d z=%d who=[%s] %d %s\n", 5,
					     (struct ut_value[]){field_value(0, 0), field_value(1, 0), field_value(2, 0),
								 field_value(3, 0), field_value(4, 0)});
	unsigned exit = add_event(p, UT_EV_EXIT, 0, NULL);

	/* expressions first: statements refer to them */
	unsigned none = list(p, 0);
	unsigned k1 = list(p, 1, x_int(p, 1)), k2 = list(p, 1, x_int(p, 2)), kx = list(p, 1, x_str(p, "x"));
	unsigned li = x_local(p, I, false), lx = x_local(p, X, false), lz = x_local(p, Z, false);
	unsigned lwho = x_local(p, WHO, true), cap_comm = x_captured(p, 0, true);
	unsigned at7 = x_op(p, UT_UX_EQ, li, x_int(p, 7)), at2 = x_op(p, UT_UX_EQ, li, x_int(p, 2));
	unsigned hist_value = x_op(p, UT_UX_SUB, x_op(p, UT_UX_MUL, li, x_int(p, 100)), x_int(p, 100));
	unsigned half = list(p, 1, x_op(p, UT_UX_SMOD, li, x_int(p, 2)));
	unsigned kk = list(p, 1, x_str(p, "k")), kj = list(p, 1, x_str(p, "j")), kcomm = list(p, 1, cap_comm);
	unsigned knope = list(p, 1, x_str(p, "nope")), knobody = list(p, 1, x_str(p, "nobody"));
	unsigned is_ut = x_add(p, (struct ut_uexpr){.op = UT_UX_STREQ, .a = cap_comm, .b = x_str(p, "uring-trace"),
						    .n = 12});
	unsigned kkeyed = list(p, 2, lwho, x_add(p, (struct ut_uexpr){.op = UT_UX_COND, .a = is_ut, .b = x_int(p, 1),
								      .c = x_int(p, 2)}));
	unsigned empty = x_add(p, (struct ut_uexpr){.op = UT_UX_STREQ, .a = lwho, .b = x_str(p, ""), .n = 1});
	unsigned printed = list(p, 5, lx, lz, lwho,
				x_add(p, (struct ut_uexpr){.op = UT_UX_COND, .a = empty, .b = x_int(p, 10), .c = x_int(p, 20)}),
				cap_comm);
	unsigned plus200 = x_op(p, UT_UX_ADD, lz, x_int(p, 200));
	struct ut_ustmt top[] = {
		s_map(UT_US_AGG, c, none, 0, 0), s_map(UT_US_AGG, c, none, 0, 0),
		s_map(UT_US_AGG, s, k1, 1, x_int(p, 5)), s_map(UT_US_AGG, s, k1, 1, x_int(p, -7)),
		s_map(UT_US_AGG, s, k2, 1, x_int(p, 3)),
		s_map(UT_US_AGG, a, kx, 1, x_int(p, 10)), s_map(UT_US_AGG, a, kx, 1, x_int(p, -3)),
		s_map(UT_US_AGG, mn, none, 0, x_int(p, 4)), s_map(UT_US_AGG, mn, none, 0, x_int(p, -9)),
		s_map(UT_US_AGG, mx, none, 0, x_int(p, 4)), s_map(UT_US_AGG, mx, none, 0, x_int(p, -9)),
		{.op = UT_US_FOR, .slot = I, .a = x_int(p, 0), .b = x_int(p, 10)},
		s_map(UT_US_MAP_SET, v, kk, 1, x_int(p, 42)),
		s_map(UT_US_MAP_ADD, v, kk, 1, x_int(p, 8)),
		s_map(UT_US_MAP_ADD, v, kj, 1, x_op(p, UT_UX_NEG, x_int(p, 3), 0)),
		s_map(UT_US_MAP_SET, str, kcomm, 1, x_str(p, "hello")),
		{.op = UT_US_LOCAL, .slot = X, .a = x_int(p, -7)},
		s_map(UT_US_MAP_SET, zero, none, 0, x_int(p, 0)),
		{.op = UT_US_LOCAL, .slot = Z, .a = x_map(p, zero, none, 0)},
		s_map(UT_US_MAP_SET, first_plain, none, 0, x_op(p, UT_UX_SDIV, lx, x_int(p, 2))),
		s_map(UT_US_MAP_SET, first_plain + 1, none, 0, x_op(p, UT_UX_SMOD, lx, x_int(p, 2))),
		s_map(UT_US_MAP_SET, first_plain + 2, none, 0, x_op(p, UT_UX_SDIV, lx, lz)),
		s_map(UT_US_MAP_SET, first_plain + 3, none, 0, x_op(p, UT_UX_SMOD, lx, lz)),
		s_map(UT_US_MAP_SET, first_plain + 4, none, 0, x_op(p, UT_UX_SSHR, lx, x_int(p, 1))),
		s_map(UT_US_MAP_SET, first_plain + 5, none, 0, x_op(p, UT_UX_USHR, lx, x_int(p, 60))),
		s_map(UT_US_MAP_SET, first_plain + 6, none, 0,
		      x_op(p, UT_UX_SHL, x_int(p, 1), x_op(p, UT_UX_ADD, lz, x_int(p, 66)))),
		s_map(UT_US_MAP_SET, first_plain + 7, none, 0,
		      x_add(p, (struct ut_uexpr){.op = UT_UX_TRUNC, .a = plus200, .n = 1, .sgn = true})),
		s_map(UT_US_MAP_SET, first_plain + 8, none, 0,
		      x_add(p, (struct ut_uexpr){.op = UT_UX_STR_INT, .a = x_str(p, "ab"), .n = 2})),
		s_map(UT_US_MAP_SET, first_plain + 9, none, 0, x_op(p, UT_UX_ADD, x_map(p, v, knope, 1), x_int(p, 1))),
		{.op = UT_US_LOCAL, .slot = WHO, .a = x_map(p, str, knobody, 1)},
		s_map(UT_US_MAP_SET, keyed, kkeyed, 2, x_int(p, 1)),
		s_map(UT_US_MAP_SET, deleted, k1, 1, x_int(p, 1)),
		s_map(UT_US_MAP_SET, deleted, k2, 1, x_int(p, 2)),
		s_map(UT_US_DELETE, deleted, k1, 1, 0),
		{.op = UT_US_EMIT, .event = print, .keys = printed, .nkeys = 5},
		{.op = UT_US_EMIT, .event = exit},
	};
	unsigned ntop = sizeof(top) / sizeof(top[0]);
	p->events[hit].body = run(p, top, ntop);
	p->events[hit].nbody = ntop;
	/* for ($i : 0..10) { if ($i == 7) break; if ($i == 2) continue; ... } */
	unsigned loop = p->events[hit].body + 11;
	unsigned body = run(p, (struct ut_ustmt[]){
		{.op = UT_US_IF, .a = at7}, {.op = UT_US_IF, .a = at2},
		s_map(UT_US_AGG, h, none, 0, hist_value), s_map(UT_US_AGG, l, half, 1, li),
	}, 4);
	set_body(p, loop, body, 4);
	set_body(p, body, run(p, &(struct ut_ustmt){.op = UT_US_BREAK}, 1), 1);
	set_body(p, body + 1, run(p, &(struct ut_ustmt){.op = UT_US_CONTINUE}, 1), 1);
	return hit;
}

/* What the probe's hit prints and leaves in maps, as text and JSON,
 * against what BPF gives for the same script. */
static void test_semantics(void)
{
	struct ut_program *p = new_program();
	unsigned hit = build_semantics(p);
	p = through_uto("semantics/loads", p);
	if (!p)
		return;
	struct session s;
	session_open(&s, p, 0, NULL);
	void *rec = record(p, hit, 1000);
	put_str(rec, &p->events[hit].fields[0], "uring-trace");
	decode(&s, rec);
	CHECK("semantics/exit", s.d.exit_requested && s.d.malformed == 0 && s.d.records == 2);
	ut_print_maps(p, NULL, &s.maps, s.d.print_out);
	fflush(s.d.print_out);
	char *want = read_text("tests/unit/user_side/semantics.txt");
	CHECK_STR("semantics/text", s.printed, want);
	free(want);
	char *json = NULL;
	size_t json_len = 0;
	FILE *out = open_memstream(&json, &json_len);
	ut_maps_json(p, NULL, &s.maps, out);
	fputc('\n', out);
	fclose(out);
	want = read_text("tests/unit/user_side/semantics.json");
	CHECK_STR("semantics/json", json, want);
	free(want);
	free(json);
	session_close(&s);
	ut_program_free(p);
}

/* ---- expressions one by one: each case's value lands in @r[case] ---- */

struct int_case {
	const char *name;
	enum ut_uexpr_op op;
	int64_t a, b, want;
};

static const struct int_case int_cases[] = {
	{"add_wraps", UT_UX_ADD, INT64_MAX, 1, INT64_MIN},
	{"sub_wraps", UT_UX_SUB, INT64_MIN, 1, INT64_MAX},
	{"mul_wraps", UT_UX_MUL, INT64_MAX, 2, -2},
	{"udiv", UT_UX_UDIV, -1, 2, INT64_MAX},
	{"udiv_by_0", UT_UX_UDIV, 5, 0, 0},
	{"umod_by_0", UT_UX_UMOD, 5, 0, 5},
	{"sdiv", UT_UX_SDIV, 7, -2, -3},
	{"sdiv_min_by_minus_1", UT_UX_SDIV, INT64_MIN, -1, INT64_MIN},
	{"sdiv_by_0", UT_UX_SDIV, -7, 0, 0},
	{"smod", UT_UX_SMOD, 7, -2, 1},
	{"smod_negative", UT_UX_SMOD, -7, 2, -1},
	{"smod_min_by_minus_1", UT_UX_SMOD, INT64_MIN, -1, 0},
	{"smod_by_0", UT_UX_SMOD, -7, 0, -7},
	{"and", UT_UX_AND, 12, 10, 8},
	{"or", UT_UX_OR, 12, 10, 14},
	{"xor", UT_UX_XOR, 12, 10, 6},
	{"shl_64", UT_UX_SHL, 1, 64, 1},
	{"shl_65", UT_UX_SHL, 1, 65, 2},
	{"shl_minus_1", UT_UX_SHL, 1, -1, INT64_MIN},
	{"ushr", UT_UX_USHR, -1, 63, 1},
	{"ushr_65", UT_UX_USHR, -8, 65, INT64_MAX - 3},
	{"sshr", UT_UX_SSHR, -8, 1, -4},
	{"sshr_67", UT_UX_SSHR, -8, 67, -1},
	{"eq", UT_UX_EQ, 3, 3, 1},
	{"ne", UT_UX_NE, 3, 3, 0},
	{"ult_negative", UT_UX_ULT, -1, 1, 0},
	{"ule", UT_UX_ULE, 3, 3, 1},
	{"slt_negative", UT_UX_SLT, -1, 1, 1},
	{"sle", UT_UX_SLE, -2, -3, 0},
	{"land", UT_UX_LAND, 2, 3, 1},
	{"land_0", UT_UX_LAND, 2, 0, 0},
	{"lor", UT_UX_LOR, 0, 5, 1},
	{"lor_0", UT_UX_LOR, 0, 0, 0},
	{"neg_min", UT_UX_NEG, INT64_MIN, 0, INT64_MIN},
	{"not", UT_UX_NOT, 5, 0, 0},
	{"not_0", UT_UX_NOT, 0, 0, 1},
	{"bitnot", UT_UX_BITNOT, 0, 0, -1},
	{"bool", UT_UX_BOOL, 7, 0, 1},
};

struct other_case {
	const char *name;
	struct ut_uexpr e;   /* a, b: strings sa, sb, or integers */
	const char *sa, *sb;
	int64_t ia;
	int64_t want;
};

static const struct other_case other_cases[] = {
	{"trunc_s8", {.op = UT_UX_TRUNC, .n = 1, .sgn = true}, NULL, NULL, 200, -56},
	{"trunc_u8", {.op = UT_UX_TRUNC, .n = 1}, NULL, NULL, -1, 255},
	{"trunc_s16", {.op = UT_UX_TRUNC, .n = 2, .sgn = true}, NULL, NULL, 0x18000, -32768},
	{"trunc_u32", {.op = UT_UX_TRUNC, .n = 4}, NULL, NULL, -1, 0xffffffff},
	{"trunc_s32", {.op = UT_UX_TRUNC, .n = 4, .sgn = true}, NULL, NULL, 0x80000000, INT32_MIN},
	{"trunc_8", {.op = UT_UX_TRUNC, .n = 8, .sgn = true}, NULL, NULL, -5, -5},
	{"str_int", {.op = UT_UX_STR_INT, .n = 8}, "abcdefghij", NULL, 0, 0x6867666564636261},
	{"str_int_short", {.op = UT_UX_STR_INT, .n = 4}, "a", NULL, 0, 97},
	{"str_int_empty", {.op = UT_UX_STR_INT, .n = 4}, "", NULL, 0, 0},
	{"streq_prefix", {.op = UT_UX_STREQ, .n = 2}, "abc", "abd", 0, 1},
	{"streq_differs", {.op = UT_UX_STREQ, .n = 3}, "abc", "abd", 0, 0},
	{"streq_first_differs", {.op = UT_UX_STREQ, .n = 3}, "abc", "xbc", 0, 0},
	{"streq_shorter", {.op = UT_UX_STREQ, .n = 3}, "ab", "abc", 0, 0},
	{"streq_cut", {.op = UT_UX_STREQ, .n = 2}, "ab", "abc", 0, 1},
	{"streq_empty", {.op = UT_UX_STREQ, .n = 5}, "", "", 0, 1},
	{"strne", {.op = UT_UX_STRNE, .n = 4}, "abc", "abd", 0, 1},
	{"cond", {.op = UT_UX_COND}, NULL, NULL, 0, 6},
};

/* @r[case] = each case's expression; @s[case] = string cases' results;
 * the header's values, a string local cut to its capacity. */
static void test_expressions(void)
{
	struct ut_program *p = new_program();
	unsigned hit = add_event(p, UT_EV_HIT, 0, NULL);
	set_locals(p, hit, 2, (struct ut_ulocal[]){{true, 5}, {false, 8}});
	unsigned r = add_map(p, &(struct map_spec){.name = "@r", .agg = UT_AGG_LAST, .nkeys = 1, .keys = {KEY_U64}});
	unsigned sm = add_map(p, &(struct map_spec){.name = "@s", .agg = UT_AGG_LAST, .nkeys = 1, .keys = {KEY_U64},
						    .string_value = 8});
	unsigned nint = sizeof(int_cases) / sizeof(int_cases[0]), nother = sizeof(other_cases) / sizeof(other_cases[0]);
	struct ut_ustmt stmts[128];
	unsigned n = 0;
	for (unsigned i = 0; i < nint; i++) {
		unsigned x = x_op(p, int_cases[i].op, x_int(p, int_cases[i].a), x_int(p, int_cases[i].b));
		stmts[n++] = s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, i)), 1, x);
	}
	for (unsigned i = 0; i < nother; i++) {
		const struct other_case *c = &other_cases[i];
		struct ut_uexpr e = c->e;
		e.a = c->sa ? x_str(p, c->sa) : x_int(p, c->ia);
		e.b = c->sb ? x_str(p, c->sb) : x_int(p, 5);
		e.c = x_int(p, 6);
		stmts[n++] = s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, nint + i)), 1, x_add(p, e));
	}
	const enum ut_uheader which[] = {UT_UH_TS, UT_UH_PID, UT_UH_TID, UT_UH_CPU};
	for (unsigned i = 0; i < 4; i++)
		stmts[n++] = s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, 100 + i)), 1,
				   x_add(p, (struct ut_uexpr){.op = UT_UX_HEADER, .which = which[i]}));
	/* $s = "abcdefg" (capacity 5); $s = $s; @s[0] = $s; @s[1] = a longer string than the value holds */
	unsigned ls = x_local(p, 0, true);
	stmts[n++] = (struct ut_ustmt){.op = UT_US_LOCAL, .slot = 0, .a = x_str(p, "abcdefg")};
	stmts[n++] = (struct ut_ustmt){.op = UT_US_LOCAL, .slot = 0, .a = ls};
	stmts[n++] = s_map(UT_US_MAP_SET, sm, list(p, 1, x_int(p, 0)), 1, ls);
	stmts[n++] = s_map(UT_US_MAP_SET, sm, list(p, 1, x_int(p, 1)), 1, x_str(p, "0123456789"));
	/* an integer local read as a string, a string local as an integer: what a damaged program could do */
	stmts[n++] = (struct ut_ustmt){.op = UT_US_LOCAL, .slot = 1, .a = x_int(p, 0x6968)};
	stmts[n++] = s_map(UT_US_MAP_SET, sm, list(p, 1, x_int(p, 2)), 1, x_local(p, 1, true));
	stmts[n++] = s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, 200)), 1, x_local(p, 0, false));
	p->events[hit].body = run(p, stmts, n);
	p->events[hit].nbody = n;

	struct session s;
	session_open(&s, p, 0, NULL);
	void *rec = record(p, hit, 123456789);
	decode(&s, rec);
	struct ut_user_map *results = &s.maps.maps[r];
	for (unsigned i = 0; i < nint + nother; i++) {
		uint64_t key = i;
		const int64_t *v = ut_user_map_lookup(results, &key);
		int64_t want = i < nint ? int_cases[i].want : other_cases[i - nint].want;
		char name[64];
		snprintf(name, sizeof(name), "expr/%s", i < nint ? int_cases[i].name : other_cases[i - nint].name);
		CHECK(name, v && *v == want);
		if (v && *v != want)
			printf("  got %lld, want %lld\n", (long long)*v, (long long)want);
	}
	const int64_t wants[] = {123456789, 4242, 4243, 1};
	bool ok = true;
	for (uint64_t i = 0; i < 4; i++) {
		uint64_t key = 100 + i;
		const int64_t *v = ut_user_map_lookup(results, &key);
		ok &= v && *v == wants[i];
	}
	CHECK("expr/header", ok);
	uint64_t key = 0;
	const char *text = ut_user_map_lookup(&s.maps.maps[sm], &key);
	CHECK("expr/string_local_cut", text && memcmp(text, "abcde\0\0\0", 8) == 0);
	key = 1;
	text = ut_user_map_lookup(&s.maps.maps[sm], &key);
	CHECK("expr/string_value_cut", text && memcmp(text, "01234567", 8) == 0);
	key = 2;
	text = ut_user_map_lookup(&s.maps.maps[sm], &key);
	CHECK("expr/int_local_as_string", text && strcmp(text, "hi") == 0);
	key = 200;
	const int64_t *v = ut_user_map_lookup(results, &key);
	CHECK("expr/string_local_as_int", v && *v == 0x6564636261);
	CHECK("expr/no_malformed", s.d.malformed == 0);
	session_close(&s);
	ut_program_free(p);
}

/* ---- the trace: records emitted by the user side are decoded as the
 * kernel's records of the same statements ---- */

enum { EV_GROUP, EV_FLOW_BEGIN, EV_SPAN_BEGIN, EV_COUNTER, EV_INSTANT, EV_SLICE_BEGIN, EV_SLICE_END, EV_FLOW_END,
       EV_SPAN_END, EV_PRINT, EV_CLEAR, EV_HIT };

/* Kernel-made records of a completion: a ring named, a request's flow
 * and span, a counter, an instant, a slice, printf, clear(@m).  The HIT
 * event captures ctx, req, res and a path; its statements emit the same
 * records. */
static struct ut_program *build_trace_program(void)
{
	struct ut_program *p = new_program();
	p->ngroups = 1;
	p->groups = names(1, "ring");
	p->nflows = 1;
	p->flows = names(1, "request");
	const struct ut_field u = KEY_U64, sgn = KEY_S64, ptr = {.type = UT_F_PTR, .size = 8}, path = KEY_STR(16);
	add_event(p, UT_EV_GROUP_NAME, 2, (struct ut_field[]){ptr, sgn});
	p->events[EV_GROUP].group = 0;
	p->events[EV_GROUP].group_key = field_value(0, UT_SHOW_HEX);
	p->events[EV_GROUP].name = format_value("ring %p fd %d", 2, (struct ut_value[]){field_value(0, UT_SHOW_HEX),
										field_value(1, 0)});
	add_event(p, UT_EV_FLOW_BEGIN, 3, (struct ut_field[]){ptr, u, u});
	p->events[EV_FLOW_BEGIN].flow = 0;
	p->events[EV_FLOW_BEGIN].key = field_value(0, UT_SHOW_HEX);
	p->events[EV_FLOW_BEGIN].name = text_value("submit");
	add_arg(&p->events[EV_FLOW_BEGIN], "op", field_value(1, 0));
	add_arg(&p->events[EV_FLOW_BEGIN], "user_data", field_value(2, UT_SHOW_HEX));
	add_event(p, UT_EV_SPAN_BEGIN, 2, (struct ut_field[]){ptr, ptr});
	p->events[EV_SPAN_BEGIN].group = 0;
	p->events[EV_SPAN_BEGIN].group_key = field_value(0, UT_SHOW_HEX);
	p->events[EV_SPAN_BEGIN].flow = 0;
	p->events[EV_SPAN_BEGIN].key = field_value(1, UT_SHOW_HEX);
	p->events[EV_SPAN_BEGIN].name = text_value("READ");
	add_event(p, UT_EV_COUNTER, 2, (struct ut_field[]){ptr, sgn});
	p->events[EV_COUNTER].group = 0;
	p->events[EV_COUNTER].group_key = field_value(0, UT_SHOW_HEX);
	p->events[EV_COUNTER].name = text_value("ring");
	add_arg(&p->events[EV_COUNTER], "in_flight", field_value(1, 0));
	add_event(p, UT_EV_INSTANT, 2, (struct ut_field[]){sgn, path});
	p->events[EV_INSTANT].name = format_value("res %d", 1, (struct ut_value[]){field_value(0, 0)});
	add_arg(&p->events[EV_INSTANT], "path", field_value(1, 0));
	add_arg(&p->events[EV_INSTANT], "error", field_value(0, UT_SHOW_ERRNO));
	add_event(p, UT_EV_SLICE_BEGIN, 0, NULL);
	p->events[EV_SLICE_BEGIN].name = text_value("complete");
	add_event(p, UT_EV_SLICE_END, 1, &sgn);
	add_arg(&p->events[EV_SLICE_END], "res", field_value(0, 0));
	add_event(p, UT_EV_FLOW_END, 2, (struct ut_field[]){ptr, sgn});
	p->events[EV_FLOW_END].flow = 0;
	p->events[EV_FLOW_END].key = field_value(0, UT_SHOW_HEX);
	p->events[EV_FLOW_END].name = text_value("READ");
	add_arg(&p->events[EV_FLOW_END], "res", field_value(1, UT_SHOW_ERRNO));
	add_event(p, UT_EV_SPAN_END, 3, (struct ut_field[]){ptr, ptr, path});
	p->events[EV_SPAN_END].group = 0;
	p->events[EV_SPAN_END].group_key = field_value(0, UT_SHOW_HEX);
	p->events[EV_SPAN_END].flow = 0;
	p->events[EV_SPAN_END].key = field_value(1, UT_SHOW_HEX);
	add_arg(&p->events[EV_SPAN_END], "path", field_value(2, 0));
	add_event(p, UT_EV_PRINT, 2, (struct ut_field[]){sgn, path});
	p->events[EV_PRINT].name = format_value("res=%d path=%s\n", 2, (struct ut_value[]){field_value(0, 0),
											field_value(1, 0)});
	add_event(p, UT_EV_CLEAR, 0, NULL);
	p->events[EV_CLEAR].name = text_value("@m");
	add_event(p, UT_EV_HIT, 4, (struct ut_field[]){ptr, ptr, sgn, path});
	set_locals(p, EV_HIT, 1, (struct ut_ulocal[]){{false, 8}});
	unsigned m = add_map(p, &(struct map_spec){.name = "@m", .agg = UT_AGG_COUNT});

	unsigned ctx = x_captured(p, 0, false), req = x_captured(p, 1, false), res = x_captured(p, 2, false);
	unsigned cpath = x_captured(p, 3, true), in_flight = x_local(p, 0, false);
	struct {
		unsigned event, n, x[3];
	} emits[] = {
		{EV_GROUP, 2, {ctx, x_int(p, 5)}},
		{EV_FLOW_BEGIN, 3, {req, x_int(p, 22), x_int(p, 0xfeed)}},
		{EV_SPAN_BEGIN, 2, {ctx, req}},
		{EV_COUNTER, 2, {ctx, in_flight}},
		{EV_INSTANT, 2, {res, cpath}},
		{EV_SLICE_BEGIN, 0, {0}},
		{EV_SLICE_END, 1, {res}},
		{EV_FLOW_END, 2, {req, res}},
		{EV_SPAN_END, 3, {ctx, req, cpath}},
		{EV_PRINT, 2, {res, cpath}},
		{EV_CLEAR, 0, {0}},
	};
	struct ut_ustmt body[16];
	unsigned n = 0;
	body[n++] = (struct ut_ustmt){.op = UT_US_LOCAL, .slot = 0, .a = x_int(p, 3)};
	body[n++] = s_map(UT_US_AGG, m, list(p, 0), 0, 0);
	for (unsigned i = 0; i < sizeof(emits) / sizeof(emits[0]); i++)
		body[n++] = (struct ut_ustmt){.op = UT_US_EMIT, .event = emits[i].event, .nkeys = emits[i].n,
					      .keys = list(p, emits[i].n, emits[i].x[0], emits[i].x[1], emits[i].x[2])};
	/* after clear(@m): each hit leaves @m at 1 */
	body[n++] = s_map(UT_US_AGG, m, list(p, 0), 0, 0);
	p->events[EV_HIT].body = run(p, body, n);
	p->events[EV_HIT].nbody = n;
	return p;
}

#define CTX 0xffff888012345000ull
#define REQ 0xffff888055550000ull

/* A field's value in a record made by hand: a number, or a string. */
struct value {
	uint64_t u;
	const char *s;
};

/* Decodes a record of event with the given field values. */
static void decode_made(struct session *s, unsigned event, uint64_t ts, const struct value *values)
{
	const struct ut_event *ev = &s->prog->events[event];
	void *r = record(s->prog, event, ts);
	for (unsigned f = 0; f < ev->nfields; f++)
		if (ev->fields[f].type == UT_F_STR)
			put_str(r, &ev->fields[f], values[f].s);
		else
			put_u64(r, &ev->fields[f], values[f].u);
	decode(s, r);
}

#define RES ((uint64_t)-11)
#define NUM(v) {.u = (v)}
#define STR(v) {.s = (v)}

/* The records BPF makes for the HIT's statements. */
static void decode_kernel_records(struct session *s, uint64_t ts)
{
	static const struct {
		unsigned event;
		struct value v[3];
	} records[] = {
		{EV_GROUP, {NUM(CTX), NUM(5)}},
		{EV_FLOW_BEGIN, {NUM(REQ), NUM(22), NUM(0xfeed)}},
		{EV_SPAN_BEGIN, {NUM(CTX), NUM(REQ)}},
		{EV_COUNTER, {NUM(CTX), NUM(3)}},
		{EV_INSTANT, {NUM(RES), STR("/tmp/data")}},
		{EV_SLICE_BEGIN, {NUM(0)}},
		{EV_SLICE_END, {NUM(RES)}},
		{EV_FLOW_END, {NUM(REQ), NUM(RES)}},
		{EV_SPAN_END, {NUM(CTX), NUM(REQ), STR("/tmp/data")}},
		{EV_PRINT, {NUM(RES), STR("/tmp/data")}},
		{EV_CLEAR, {NUM(0)}},
	};
	for (unsigned i = 0; i < sizeof(records) / sizeof(records[0]); i++)
		decode_made(s, records[i].event, ts, records[i].v);
}

static void decode_hit(struct session *s, uint64_t ts)
{
	decode_made(s, EV_HIT, ts, (struct value[]){NUM(CTX), NUM(REQ), NUM(RES), STR("/tmp/data")});
}

/* The trace file and printf text of a run. */
static void trace_of(const struct ut_program *p, bool hit, const char *path, struct session *s)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	struct ut_engine *e = ut_engine_new(w, NULL);
	session_open(s, p, 0, e);
	ut_decode_declare_names(s->d.prog, s->d.engine);
	for (uint64_t ts = 1000; ts < 4000; ts += 1000)
		if (hit)
			decode_hit(s, ts);
		else
			decode_kernel_records(s, ts);
	ut_engine_finish(e, 5000);
	ut_engine_free(e);
	fxt_writer_close(w, err, sizeof(err));
	fflush(s->d.print_out);
}

static void test_trace(void)
{
	struct ut_program *loaded = through_uto("trace/loads", build_trace_program());
	if (!loaded)
		return;
	char kernel_path[64], user_path[64];
	snprintf(kernel_path, sizeof(kernel_path), "/tmp/ut-user-side-%d-kernel.fxt", (int)getpid());
	snprintf(user_path, sizeof(user_path), "/tmp/ut-user-side-%d-user.fxt", (int)getpid());
	struct session kernel, user;
	trace_of(loaded, false, kernel_path, &kernel);
	trace_of(loaded, true, user_path, &user);
	FILE *fa = fopen(kernel_path, "rb"), *fb = fopen(user_path, "rb");
	bool same = fa && fb;
	for (int ca = 0, cb = 0; same && ca != EOF;) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		same = ca == cb;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	CHECK("trace/same_bytes", same);
	if (!same) {
		printf("kernel-made:\n");
		fxt_dump(kernel_path, stdout);
		printf("user side:\n");
		fxt_dump(user_path, stdout);
	}
	CHECK("trace/same_printf", kernel.printed && user.printed && strcmp(kernel.printed, user.printed) == 0 &&
					   strstr(user.printed, "res=-11 path=/tmp/data\n"));
	CHECK("trace/same_counts", kernel.d.records == user.d.records && kernel.d.records == 33 &&
					   user.d.malformed == 0 && user.d.first_ts == 1000 && user.d.last_ts == 3000);
	struct ut_user_map *m = &user.maps.maps[user.maps.n - 1];
	CHECK("trace/clear_user_map", m->count == 1 && *(const int64_t *)ut_user_map_entry_value(m, 0) == 1);
	session_close(&kernel);
	session_close(&user);
	unlink(kernel_path);
	unlink(user_path);
	ut_program_free(loaded);
}

/* ---- --sample: whole flows kept or dropped, spans following ---- */

static void test_sampling(void)
{
	struct ut_program *p = build_trace_program();
	/* a hit that begins request[key]; one that steps it, ends it and its span */
	const struct ut_field u = KEY_U64;
	unsigned begin = add_event(p, UT_EV_HIT, 1, &u), end = add_event(p, UT_EV_HIT, 1, &u);
	unsigned key = x_captured(p, 0, false), ctx = x_int(p, CTX);
	p->events[begin].body = run(p, &(struct ut_ustmt){.op = UT_US_EMIT, .event = EV_FLOW_BEGIN, .nkeys = 3,
							   .keys = list(p, 3, key, x_int(p, 1), x_int(p, 2))}, 1);
	p->events[begin].nbody = 1;
	p->events[end].body = run(p, (struct ut_ustmt[]){
		{.op = UT_US_EMIT, .event = EV_FLOW_END, .nkeys = 2, .keys = list(p, 2, key, x_int(p, 0))},
		{.op = UT_US_EMIT, .event = EV_SPAN_END, .nkeys = 3, .keys = list(p, 3, ctx, key, x_str(p, "x"))},
	}, 2);
	p->events[end].nbody = 2;
	struct session s;
	session_open(&s, p, 5000, NULL);
	unsigned kept = 0, whole = 0, flows = 4000;
	for (uint64_t k = 1; k <= flows; k++) {
		void *r = record(p, begin, k);
		put_u64(r, &p->events[begin].fields[0], k);
		uint64_t before = s.d.records;
		decode(&s, r);
		bool began = s.d.records > before;
		r = record(p, end, k);
		put_u64(r, &p->events[end].fields[0], k);
		before = s.d.records;
		decode(&s, r);
		kept += began;
		whole += s.d.records - before == (began ? 2u : 0u);
	}
	CHECK("sample/whole_flows", whole == flows);
	CHECK("sample/about_half", kept > flows * 45 / 100 && kept < flows * 55 / 100);
	/* a flow begun before the trace: its end is kept */
	void *r = record(p, end, 1);
	put_u64(r, &p->events[end].fields[0], 1u << 30);
	uint64_t before = s.d.records;
	decode(&s, r);
	CHECK("sample/unknown_kept", s.d.records - before == 2);
	session_close(&s);
	ut_program_free(p);
}

/* ---- bounded work, and indexes a hit's event does not have ---- */

static void test_bounds(void)
{
	struct ut_program *p = new_program();
	unsigned hit = add_event(p, UT_EV_HIT, 0, NULL);
	set_locals(p, hit, 1, (struct ut_ulocal[]){{false, 8}});
	unsigned r = add_map(p, &(struct map_spec){.name = "@r", .agg = UT_AGG_LAST, .nkeys = 1, .keys = {KEY_U64}});
	unsigned big = x_int(p, INT64_MAX);
	struct ut_ustmt top[] = {
		/* a loop that would run 2^63 times */
		{.op = UT_US_FOR, .slot = 0, .a = x_int(p, 0), .b = big},
	};
	p->events[hit].body = run(p, top, 1);
	p->events[hit].nbody = 1;
	set_body(p, p->events[hit].body, run(p, &(struct ut_ustmt){.op = UT_US_CONTINUE}, 1), 1);
	/* a second hit: break and return at the top, a slot and field beyond
	 * its event's */
	unsigned odd = add_event(p, UT_EV_HIT, 0, NULL);
	struct ut_ustmt second[] = {
		s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, 1)), 1, x_local(p, 7, false)),
		s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, 2)), 1, x_captured(p, 3, false)),
		{.op = UT_US_LOCAL, .slot = 9, .a = x_int(p, 1)},
		{.op = UT_US_FOR, .slot = 9, .a = x_int(p, 0), .b = big},
		{.op = UT_US_BREAK},
		s_map(UT_US_MAP_SET, r, list(p, 1, x_int(p, 3)), 1, x_int(p, 3)),
	};
	p->events[odd].body = run(p, second, 6);
	p->events[odd].nbody = 6;
	struct ut_program *loaded = through_uto("bounds/loads", p);
	if (!loaded)
		return;
	struct session s;
	session_open(&s, loaded, 0, NULL);
	decode(&s, record(loaded, hit, 1));
	CHECK("bounds/endless_loop_cut", s.d.malformed == 1);
	decode(&s, record(loaded, odd, 2));
	uint64_t k1 = 1, k2 = 2, k3 = 3;
	const int64_t *v1 = ut_user_map_lookup(&s.maps.maps[r], &k1), *v2 = ut_user_map_lookup(&s.maps.maps[r], &k2);
	CHECK("bounds/missing_slot_and_field_read_0", v1 && *v1 == 0 && v2 && *v2 == 0);
	CHECK("bounds/break_ends_hit", !ut_user_map_lookup(&s.maps.maps[r], &k3) && s.d.malformed == 1);
	session_close(&s);
	ut_program_free(loaded);
}

/* ---- damaged .uto files ---- */

static bool loads(const struct ut_program *p)
{
	struct ut_program *q = reloaded(p);
	ut_program_free(q);
	return q != NULL;
}

/* One damage each: the program saved with it must not load. */
static void test_damaged(void)
{
	struct ut_program *p = build_trace_program();
	CHECK("damaged/intact_loads", loads(p));
	struct ut_uexpr *x = p->uexprs;
	struct ut_ustmt *st = p->ustmts;
	struct ut_event *hit = &p->events[EV_HIT];
	unsigned emit = hit->body + 2;   /* EMIT of the group name */
	unsigned agg = hit->body + 1;    /* @m = count() */
	struct damage {
		const char *name;
		unsigned *word;
		unsigned value;
	} words[] = {
		{"expr_op", (unsigned *)&x[0].op, UT_UX_OP_COUNT},
		{"stmt_op", (unsigned *)&st[0].op, UT_US_OP_COUNT},
		{"emit_event", &st[emit].event, 1000},
		{"emit_hit", &st[emit].event, EV_HIT},
		{"emit_fields", &st[emit].nkeys, 1},
		{"emit_keys", &st[emit].keys, 100000},
		{"stmt_expr", &st[0].a, 100000},
		{"agg_map", &st[agg].map, 5},
		{"header_which", &x[0].which, 9},
		{"hit_body", &hit->body, 1000},
		{"hit_nbody", &hit->nbody, 1000},
	};
	for (unsigned i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		unsigned kept = *words[i].word;
		if (strcmp(words[i].name, "header_which") == 0)
			x[0].op = UT_UX_HEADER;
		*words[i].word = words[i].value;
		char name[64];
		snprintf(name, sizeof(name), "damaged/%s", words[i].name);
		CHECK(name, !loads(p));
		*words[i].word = kept;
		x[0].op = UT_UX_CAPTURED;
	}
	CHECK("damaged/restored_loads", loads(p));
	/* an operand after its expression; a key of the wrong kind */
	unsigned keys = st[emit].keys;
	p->ukeys[keys] = p->nuexprs - 1;
	x[p->nuexprs - 1].is_str = true;
	CHECK("damaged/field_kind", !loads(p));
	x[p->nuexprs - 1].is_str = false;
	unsigned self = p->nuexprs;
	x_op(p, UT_UX_ADD, self, 0);
	CHECK("damaged/operand_after", !loads(p));
	p->uexprs[self].a = 0;
	p->uexprs[self].op = UT_UX_STR;
	p->uexprs[self].is_str = true;
	CHECK("damaged/string_without_text", !loads(p));
	p->uexprs[self].op = UT_UX_INT;
	p->uexprs[self].is_str = false;
	/* maps: on a BPF map, a BPF map's name, sizes */
	struct ut_map *m = &p->maps[0];
	m->user_side = false;
	m->bpf_name = strdup("m_0");
	CHECK("damaged/user_statement_on_bpf_map", !loads(p));
	m->user_side = true;
	CHECK("damaged/user_map_with_bpf_name", !loads(p));
	free(m->bpf_name);
	m->bpf_name = NULL;
	m->agg = UT_AGG_AVG;
	CHECK("damaged/avg_value_size", !loads(p));
	m->agg = UT_AGG_HIST;
	m->key_size = 4;
	CHECK("damaged/hist_key_size", !loads(p));
	m->agg = UT_AGG_COUNT;
	CHECK("damaged/restored_again", loads(p));
	hit->locals[0].size = UT_ULOCAL_MAX_BYTES + 1;
	hit->locals[0].is_str = true;
	CHECK("damaged/local_size", !loads(p));
	hit->locals[0] = (struct ut_ulocal){false, 8};
	p->events[EV_PRINT].fields[0].size = 4;
	CHECK("damaged/number_field_size", !loads(p));
	p->events[EV_PRINT].fields[0].size = 8;
	p->events[EV_PRINT].size += 4;
	CHECK("damaged/record_size_not_8_aligned", !loads(p));
	p->events[EV_PRINT].size -= 4;
	/* a field whose end would wrap past 2^32, inside the record by a
	 * 32-bit sum (the loader bounds offsets and sizes first) */
	struct ut_field kept_field = p->events[EV_HIT].fields[0];
	p->events[EV_HIT].fields[0].offset = UINT32_MAX - 7;
	p->events[EV_HIT].fields[0].size = 16;
	CHECK("damaged/field_end_wraps", !loads(p));
	p->events[EV_HIT].fields[0] = kept_field;
	CHECK("damaged/restored_after_wraps", loads(p));
	struct ut_program *keyed = new_program();
	unsigned km = add_map(keyed, &(struct map_spec){.name = "@k", .agg = UT_AGG_COUNT, .nkeys = 1, .keys = {KEY_U64}});
	CHECK("damaged/keyed_loads", loads(keyed));
	keyed->maps[km].keys[0].offset = UINT32_MAX - 3;
	CHECK("damaged/key_end_wraps", !loads(keyed));
	ut_program_free(keyed);
	free(p->events[EV_PRINT].name.text);
	p->events[EV_PRINT].name.text = strdup("res=%lln");
	CHECK("damaged/format_writes", !loads(p));
	/* a width the decoder's snprintf would pad for seconds per event */
	free(p->events[EV_PRINT].name.text);
	p->events[EV_PRINT].name.text = strdup("res=%1000000000d path=%s\n");
	CHECK("damaged/format_width", !loads(p));
	free(p->events[EV_PRINT].name.text);
	p->events[EV_PRINT].name.text = strdup("res=%d path=%.256s\n");
	CHECK("damaged/format_precision", !loads(p));
	free(p->events[EV_PRINT].name.text);
	p->events[EV_PRINT].name.text = strdup("res=%-255lld path=%255.255s\n");
	CHECK("damaged/format_widest_loads", loads(p));
	ut_program_free(p);

	/* statements: a body before its statement, a body twice, too deep */
	p = new_program();
	unsigned ev = add_event(p, UT_EV_HIT, 0, NULL);
	unsigned one = x_int(p, 1);
	struct ut_ustmt ifs[40];
	for (unsigned i = 0; i < 40; i++)
		ifs[i] = (struct ut_ustmt){.op = UT_US_IF, .a = one};
	unsigned first = run(p, ifs, 40);
	p->events[ev].body = first;
	p->events[ev].nbody = 1;
	for (unsigned i = 0; i < 20; i++)
		set_body(p, first + i, first + i + 1, 1);
	CHECK("damaged/nesting_20_loads", loads(p));
	for (unsigned i = 20; i < 39; i++)
		set_body(p, first + i, first + i + 1, 1);
	CHECK("damaged/nesting_too_deep", !loads(p));
	set_body(p, first + 20, 0, 0);
	p->ustmts[first + 21].body2 = first + 20;
	p->ustmts[first + 21].nbody2 = 1;
	CHECK("damaged/body_before", !loads(p));
	p->ustmts[first + 21].body2 = first + 5;
	CHECK("damaged/body_twice", !loads(p));
	p->ustmts[first + 21].nbody2 = 0;
	CHECK("damaged/restored_statements", loads(p));
	/* expressions nested too deep */
	unsigned deep = one;
	for (unsigned i = 0; i < UT_UEXPR_MAX_DEPTH; i++)
		deep = x_op(p, UT_UX_NEG, deep, 0);
	p->ustmts[first + 30].a = deep;
	CHECK("damaged/expression_too_deep", !loads(p));
	ut_program_free(p);
}

/* Every cut and every byte changed of a saved program: loading never
 * crashes, and what loads runs without crashing. */
static void test_corrupted_bytes(const char *name, struct ut_program *p)
{
	void *image;
	size_t len;
	ut_program_save(p, &(struct ut_program_objects){.bpf = ""}, &image, &len);
	unsigned char *copy = malloc(len);
	unsigned loaded = 0, tried = 0;
	for (size_t at = 0; at <= len; at++) {
		for (unsigned variant = 0; variant < 3; variant++) {
			static const unsigned char values[] = {0xff, 0x01, 0x80};
			memcpy(copy, image, len);
			size_t n = len;
			if (at == len && variant)
				break;
			if (at == len || variant == 0)
				n = at;   /* cut */
			else
				copy[at] ^= values[variant];
			struct ut_program_objects objs;
			char err[256];
			struct ut_program *q = ut_program_load(copy, n, &objs, err, sizeof(err));
			tried++;
			if (!q)
				continue;
			loaded++;
			free(ut_gen_native(q));   /* the generator takes any program that loads */
			struct session s;
			session_open(&s, q, 5000, NULL);
			for (unsigned e = 0; e < q->nevents; e++)
				if (q->events[e].op == UT_EV_HIT)
					decode(&s, record(q, e, 1));
			session_close(&s);
			ut_program_free(q);
		}
	}
	printf("%s: %u corrupted images, %u loaded and ran\n", name, tried, loaded);
	CHECK(name, tried > 2 * len && loaded < tried);
	free(copy);
	free(image);
	ut_program_free(p);
}

/* ---- a real run: uring-trace on a .uto whose BEGIN probe's record is
 * made a UT_EV_HIT (needs root) ---- */

static const char *uring_trace(char *buf, size_t len)
{
	const char *ut = getenv("UT");
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (ut || n <= 0)
		return ut;
	exe[n] = 0;
	snprintf(buf, len, "%s/../uring-trace", dirname(exe));
	return buf;
}

/* The record of `printf("%d %s\n", 41, comm)` becomes a hit whose user
 * statements do @answer = 41 + 1; @hits[comm] = count(); printf("reader
 * says %d\n", @answer); exit(). */
static void patch_begin(struct ut_program *p)
{
	struct ut_event *hit = &p->events[0];
	hit->op = UT_EV_HIT;
	unsigned answer = add_map(p, &(struct map_spec){.name = "@answer", .agg = UT_AGG_LAST});
	unsigned hits = add_map(p, &(struct map_spec){.name = "@hits", .agg = UT_AGG_COUNT, .nkeys = 1,
						      .keys = {KEY_STR(16)}});
	const struct ut_field number = KEY_S64;
	unsigned print = add_event(p, UT_EV_PRINT, 1, &number);
	p->events[print].name = format_value("reader says %d\n", 1, (struct ut_value[]){field_value(0, 0)});
	unsigned exit = add_event(p, UT_EV_EXIT, 0, NULL);
	unsigned none = list(p, 0);
	struct ut_ustmt body[] = {
		s_map(UT_US_MAP_SET, answer, none, 0, x_op(p, UT_UX_ADD, x_captured(p, 0, false), x_int(p, 1))),
		s_map(UT_US_AGG, hits, list(p, 1, x_captured(p, 1, true)), 1, 0),
		{.op = UT_US_EMIT, .event = print, .nkeys = 1, .keys = list(p, 1, x_map(p, answer, none, 0))},
		{.op = UT_US_EMIT, .event = exit},
	};
	p->events[0].body = run(p, body, 4);
	p->events[0].nbody = 4;
}

static void test_real_run(void)
{
	if (geteuid() != 0) {
		printf("SKIP run/patched_uto: needs root for BPF\n");
		return;
	}
	char buf[PATH_MAX + 32], dir[] = "/tmp/ut-user-side-XXXXXX", cmd[3 * PATH_MAX];
	const char *ut = uring_trace(buf, sizeof(buf));
	if (!mkdtemp(dir))
		return;
	snprintf(buf, sizeof(buf), "%s/begin.ut", dir);
	FILE *script = fopen(buf, "w");
	if (script) {
		fputs("BEGIN { printf(\"%d %s\\n\", 41, comm); }\n", script);
		fclose(script);
	}
	snprintf(cmd, sizeof(cmd), "%s -q --compile -o %s/begin.uto %s", ut, dir, buf);
	CHECK("run/compile", system(cmd) == 0);
	snprintf(buf, sizeof(buf), "%s/begin.uto", dir);
	void *image = NULL;
	size_t len = 0;
	ut_read_file(buf, &image, &len);
	struct ut_program_objects objs;
	char err[256];
	struct ut_program *p = image ? ut_program_load(image, len, &objs, err, sizeof(err)) : NULL;
	CHECK("run/load", p && p->nevents == 1 && p->events[0].op == UT_EV_PRINT && p->events[0].nfields == 2);
	if (p && p->nevents == 1 && p->events[0].nfields == 2) {
		patch_begin(p);
		void *patched;
		size_t patched_len;
		ut_program_save(p, &objs, &patched, &patched_len);
		snprintf(buf, sizeof(buf), "%s/patched.uto", dir);
		CHECK("run/save", ut_write_file_atomic(buf, patched, patched_len) == 0);
		free(patched);
		snprintf(cmd, sizeof(cmd), "%s -q --summary-only --json %s/out.json %s >%s/out.txt", ut, dir, buf, dir);
		CHECK("run/runs", system(cmd) == 0);
		snprintf(buf, sizeof(buf), "%s/out.txt", dir);
		char *out = read_text(buf);
		CHECK_STR("run/summary", out, "reader says 42\n\n@answer: 42\n\n@hits[uring-trace]: 1\n");
		free(out);
		snprintf(buf, sizeof(buf), "%s/out.json", dir);
		out = read_text(buf);
		CHECK("run/json", out && strstr(out, "\"maps\":{\"@answer\":[{\"key\":[],\"value\":42}],"
						     "\"@hits\":[{\"key\":[\"uring-trace\"],\"value\":1}]}"));
		free(out);
	}
	ut_program_free(p);
	free(image);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("could not remove %s\n", dir);
}

int main(void)
{
	test_map_basics();
	test_map_collisions();
	test_locals_zeroed();
	test_map_full();
	test_map_lru();
	test_semantics();
	test_expressions();
	test_trace();
	test_sampling();
	test_bounds();
	test_damaged();
	test_corrupted_bytes("damaged/trace_bytes", build_trace_program());
	struct ut_program *p = new_program();
	build_semantics(p);
	test_corrupted_bytes("damaged/semantics_bytes", p);
	test_real_run();
	/* again, compiled (the clang wrapper of the build, a cache of the
	 * test's own) */
	char cache_dir[] = "/tmp/ut-user-side-cache-XXXXXX";
	if (!mkdtemp(cache_dir))
		return 1;
	setenv("UT_CACHE_DIR", cache_dir, 1);
	compiled_round = true;
	printf("-- the same hits, compiled\n");
	test_locals_zeroed();
	test_semantics();
	test_expressions();
	test_trace();
	test_sampling();
	test_bounds();
	char cmd[sizeof(cache_dir) + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", cache_dir);
	if (system(cmd) != 0)
		printf("could not remove %s\n", cache_dir);
	CHECK_DONE();
}
