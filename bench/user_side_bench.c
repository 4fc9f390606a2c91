/* The reader's cost of a probe's user side (split execution), per hit, on
 * one core: the completion of the default script (scripts/io_uring.ut,
 * io_uring_complete) as user statements over a UT_EV_HIT record that
 * carries ctx, req, res, cflags and the opcode.  Per completion: eight map
 * operations (+= on the thread's count, the request's state read and
 * deleted, a latency histogram, two counts, += on the ring's counts and
 * their read), an if, and the flow end and span end records, which the
 * decoder then handles as it handles the kernel's.  32 requests are in
 * flight; a submit hit sets the request's state before its completion.
 *
 * Runs of the same requests, each timed in CPU time: the submit hits
 * alone, then with the completion hits (their difference is a completion
 * hit: the evaluator and the decoding of the two records it emits), the
 * kernel's two records of each completion decoded without an engine (what
 * the reader does for them today), and the hits with the engine writing a
 * trace. */
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/records.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "runtime/decode.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"

#define IN_FLIGHT 32
#define RING 0xffff888012345000ull
#define REQ_BASE 0xffff888077770000ull
#define CQE_POSTED 0x100000000ll

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum { EV_FLOW_END, EV_SPAN_END, EV_SUBMIT, EV_COMPLETE };
enum { F_CTX, F_REQ, F_RES, F_CFLAGS, F_OPCODE };   /* the completion's captured fields */
enum { M_ENTER_COMPLETED, M_REQ, M_LATENCY, M_REQUESTS, M_RING_COMPLETIONS, M_RING_COUNTS };

static struct ut_field number(enum ut_field_type type, uint32_t offset)
{
	return (struct ut_field){.type = type, .offset = offset, .size = 8};
}

static void event(struct ut_program *p, unsigned i, enum ut_event_op op, unsigned nfields, const enum ut_field_type *types)
{
	struct ut_event *e = &p->events[i];
	e->op = op;
	e->category = strdup("io_uring_complete");
	e->group = e->flow = -1;
	e->nfields = nfields;
	e->fields = calloc(nfields, sizeof(*e->fields));
	for (unsigned f = 0; f < nfields; f++)
		e->fields[f] = number(types[f], (uint32_t)(sizeof(struct ut_rec_hdr) + 8 * f));
	e->size = (uint32_t)(sizeof(struct ut_rec_hdr) + 8 * nfields);
}

static struct ut_value field_shown(unsigned field, enum ut_display display, int table)
{
	return (struct ut_value){.kind = UT_VAL_FIELD, .field = field, .display = display, .table = table};
}

static void arg(struct ut_event *e, const char *name, struct ut_value v)
{
	e->args = realloc(e->args, (e->nargs + 1) * sizeof(*e->args));
	e->args[e->nargs++] = (struct ut_named_value){.name = strdup(name), .value = v};
}

static void map(struct ut_program *p, unsigned i, const char *name, enum ut_agg agg, unsigned nkeys)
{
	struct ut_map *m = &p->maps[i];
	bool hist = agg == UT_AGG_HIST;
	m->name = strdup(name);
	m->agg = agg;
	m->user_side = true;
	m->nkeys = nkeys;
	m->keys = calloc(nkeys, sizeof(*m->keys));
	m->key_show = calloc(nkeys, sizeof(*m->key_show));
	for (unsigned k = 0; k < nkeys; k++)
		m->keys[k] = number(UT_F_U64, 8 * k);
	m->key_size = 8 * nkeys + (hist ? 8 : 0);
	m->value_size = 8;
}

static unsigned expr(struct ut_program *p, struct ut_uexpr e)
{
	return ut_program_add_uexpr(p, &e);
}

static unsigned keys(struct ut_program *p, unsigned n, const unsigned *x)
{
	return ut_program_add_ukeys(p, x, n);
}

static struct ut_table table(const char *name, unsigned n, const char *const *names)
{
	struct ut_table t = {.name = strdup(name), .nentries = n, .entries = calloc(n, sizeof(*t.entries))};
	for (unsigned i = 0; i < n; i++)
		t.entries[i] = (struct ut_table_entry){.key = i, .name = strdup(names[i])};
	return t;
}

static struct ut_program *completion_program(void)
{
	struct ut_program *p = calloc(1, sizeof(*p));
	static const char *const ops[] = {"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED"};
	static const char *const paths[] = {"inline", "async (io-wq)", "poll"};
	p->ntables = 2;
	p->tables = calloc(2, sizeof(*p->tables));
	p->tables[0] = table("io_uring_op", 6, ops);
	p->tables[1] = table("io_uring_path", 3, paths);
	p->ngroups = p->nflows = 1;
	p->groups = calloc(1, sizeof(char *));
	p->groups[0] = strdup("ring");
	p->flows = calloc(1, sizeof(char *));
	p->flows[0] = strdup("request");
	p->nevents = 4;
	p->events = calloc(4, sizeof(*p->events));
	/* flow request[req] end $op with res = errname(res), cflags = hex(cflags) */
	event(p, EV_FLOW_END, UT_EV_FLOW_END, 4, (enum ut_field_type[]){UT_F_PTR, UT_F_U64, UT_F_S64, UT_F_U64});
	struct ut_event *e = &p->events[EV_FLOW_END];
	e->flow = 0;
	e->key = field_shown(0, UT_SHOW_HEX, 0);
	e->name = field_shown(1, UT_SHOW_TABLE, 0);
	arg(e, "res", field_shown(2, UT_SHOW_ERRNO, 0));
	arg(e, "cflags", field_shown(3, UT_SHOW_HEX, 0));
	/* span ring[ctx] end request[req] with res = errname(res), path = io_uring_path[$path] */
	event(p, EV_SPAN_END, UT_EV_SPAN_END, 4, (enum ut_field_type[]){UT_F_PTR, UT_F_PTR, UT_F_S64, UT_F_U64});
	e = &p->events[EV_SPAN_END];
	e->group = 0;
	e->group_key = field_shown(0, UT_SHOW_HEX, 0);
	e->flow = 0;
	e->key = field_shown(1, UT_SHOW_HEX, 0);
	arg(e, "res", field_shown(2, UT_SHOW_ERRNO, 0));
	arg(e, "path", field_shown(3, UT_SHOW_TABLE, 1));
	event(p, EV_SUBMIT, UT_EV_HIT, 2, (enum ut_field_type[]){UT_F_PTR, UT_F_PTR});
	event(p, EV_COMPLETE, UT_EV_HIT, 5, (enum ut_field_type[]){UT_F_PTR, UT_F_PTR, UT_F_S64, UT_F_U64, UT_F_U64});
	enum { STATE, PATH, SUBMITTED, COUNTS };   /* the completion's locals */
	e = &p->events[EV_COMPLETE];
	e->nlocals = 4;
	e->locals = calloc(4, sizeof(*e->locals));
	for (unsigned l = 0; l < 4; l++)
		e->locals[l] = (struct ut_ulocal){.size = 8};
	p->nmaps = 6;
	p->maps = calloc(6, sizeof(*p->maps));
	map(p, M_ENTER_COMPLETED, "@enter_completed", UT_AGG_LAST, 1);
	map(p, M_REQ, "@req", UT_AGG_LAST, 1);
	map(p, M_LATENCY, "@latency_us", UT_AGG_HIST, 1);
	map(p, M_REQUESTS, "@requests", UT_AGG_COUNT, 2);
	map(p, M_RING_COMPLETIONS, "@ring_completions", UT_AGG_COUNT, 1);
	map(p, M_RING_COUNTS, "@ring_counts", UT_AGG_LAST, 1);

	unsigned ctx = expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = F_CTX});
	unsigned req = expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = F_REQ});
	unsigned res = expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = F_RES});
	unsigned cflags = expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = F_CFLAGS});
	unsigned opcode = expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = F_OPCODE});
	unsigned tid = expr(p, (struct ut_uexpr){.op = UT_UX_HEADER, .which = UT_UH_TID});
	unsigned nsecs = expr(p, (struct ut_uexpr){.op = UT_UX_HEADER, .which = UT_UH_TS});
	unsigned one = expr(p, (struct ut_uexpr){.op = UT_UX_INT, .i = 1});
	unsigned eight = expr(p, (struct ut_uexpr){.op = UT_UX_INT, .i = 8});
	unsigned state = expr(p, (struct ut_uexpr){.op = UT_UX_LOCAL, .slot = STATE});
	unsigned path = expr(p, (struct ut_uexpr){.op = UT_UX_LOCAL, .slot = PATH});
	unsigned submitted = expr(p, (struct ut_uexpr){.op = UT_UX_LOCAL, .slot = SUBMITTED});
	unsigned by_tid = keys(p, 1, &tid), by_req = keys(p, 1, &req), by_ctx = keys(p, 1, &ctx);
	unsigned by_op = keys(p, 1, &opcode), by_op_path = keys(p, 2, (unsigned[]){opcode, path});
	unsigned waited = expr(p, (struct ut_uexpr){.op = UT_UX_UDIV, .a = expr(p, (struct ut_uexpr){.op = UT_UX_SUB,
							.a = nsecs, .b = submitted}), .b = expr(p, (struct ut_uexpr){
							.op = UT_UX_INT, .i = 1000})});
	struct ut_ustmt complete[] = {
		{.op = UT_US_MAP_ADD, .map = M_ENTER_COMPLETED, .keys = by_tid, .nkeys = 1, .a = one},
		{.op = UT_US_LOCAL, .slot = STATE, .a = expr(p, (struct ut_uexpr){.op = UT_UX_MAP, .map = M_REQ,
										     .keys = by_req, .nkeys = 1})},
		{.op = UT_US_LOCAL, .slot = PATH, .a = expr(p, (struct ut_uexpr){.op = UT_UX_UMOD, .a = state, .b = eight})},
		{.op = UT_US_EMIT, .event = EV_FLOW_END, .nkeys = 4,
		 .keys = keys(p, 4, (unsigned[]){req, opcode, res, cflags})},
		{.op = UT_US_EMIT, .event = EV_SPAN_END, .nkeys = 4, .keys = keys(p, 4, (unsigned[]){ctx, req, res, path})},
		{.op = UT_US_LOCAL, .slot = SUBMITTED, .a = expr(p, (struct ut_uexpr){.op = UT_UX_UDIV, .a = state,
											.b = eight})},
		{.op = UT_US_IF, .a = submitted},
		{.op = UT_US_DELETE, .map = M_REQ, .keys = by_req, .nkeys = 1},
		{.op = UT_US_AGG, .map = M_REQUESTS, .keys = by_op_path, .nkeys = 2},
		{.op = UT_US_AGG, .map = M_RING_COMPLETIONS, .keys = by_ctx, .nkeys = 1},
		{.op = UT_US_MAP_ADD, .map = M_RING_COUNTS, .keys = by_ctx, .nkeys = 1,
		 .a = expr(p, (struct ut_uexpr){.op = UT_UX_INT, .i = CQE_POSTED - 1})},
		{.op = UT_US_LOCAL, .slot = COUNTS, .a = expr(p, (struct ut_uexpr){.op = UT_UX_MAP, .map = M_RING_COUNTS,
										      .keys = by_ctx, .nkeys = 1})},
	};
	unsigned n = sizeof(complete) / sizeof(complete[0]);
	e->body = ut_program_add_ustmts(p, complete, n);
	e->nbody = n;
	unsigned hist = ut_program_add_ustmts(p, &(struct ut_ustmt){.op = UT_US_AGG, .map = M_LATENCY, .keys = by_op,
								    .nkeys = 1, .a = waited}, 1);
	p->ustmts[e->body + 6].body = hist;
	p->ustmts[e->body + 6].nbody = 1;
	/* submit: @req[req] = nsecs * 8 (inline); @ring_counts[ctx] += 1 */
	struct ut_ustmt submit[] = {
		{.op = UT_US_MAP_SET, .map = M_REQ, .keys = keys(p, 1, (unsigned[]){expr(p, (struct ut_uexpr){
			.op = UT_UX_CAPTURED, .field = 1})}), .nkeys = 1, .a = expr(p, (struct ut_uexpr){.op = UT_UX_MUL,
											.a = nsecs, .b = eight})},
		{.op = UT_US_MAP_ADD, .map = M_RING_COUNTS, .nkeys = 1, .a = one,
		 .keys = keys(p, 1, (unsigned[]){expr(p, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = 0})})},
	};
	p->events[EV_SUBMIT].body = ut_program_add_ustmts(p, submit, 2);
	p->events[EV_SUBMIT].nbody = 2;
	return p;
}

/* A record of event: the header, then 8-byte values. */
static void fill(unsigned char *rec, unsigned event, uint64_t ts, uint32_t tid, unsigned n, const uint64_t *values)
{
	struct ut_rec_hdr h = {.ts = ts, .event = event, .pid = 4242, .tid = tid, .cpu = 0};
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), values, 8 * n);
}

/* What a run decodes per request. */
enum mix {
	SUBMITS,              /* the submit hits alone */
	HITS,                 /* the submit hits, then the completion hits */
	KERNEL_RECORDS,       /* the kernel's two records of each completion */
};

/* Requests in batches of IN_FLIGHT: their submits, then their
 * completions. */
static void run(struct ut_decoder *d, uint64_t requests, enum mix mix)
{
	unsigned char rec[128];
	uint64_t ts = 1000000;
	for (uint64_t first = 0; first < requests; first += IN_FLIGHT) {
		for (uint64_t r = first; r < first + IN_FLIGHT && mix != KERNEL_RECORDS; r++) {
			fill(rec, EV_SUBMIT, ts += 100, 4242, 2, (uint64_t[]){RING, REQ_BASE + r % 4096 * 64});
			ut_decode_record(d, rec, d->prog->events[EV_SUBMIT].size);
		}
		for (uint64_t r = first; r < first + IN_FLIGHT && mix != SUBMITS; r++) {
			uint64_t req = REQ_BASE + r % 4096 * 64;
			uint32_t tid = r % 4 ? 4242 : 4300 + (uint32_t)(r / 4 % 4);
			ts += 300;
			if (mix == HITS) {
				fill(rec, EV_COMPLETE, ts, tid, 5, (uint64_t[]){RING, req, 4096, 0, 22 % 6});
				ut_decode_record(d, rec, d->prog->events[EV_COMPLETE].size);
				continue;
			}
			fill(rec, EV_FLOW_END, ts, tid, 4, (uint64_t[]){req, 22 % 6, 4096, 0});
			ut_decode_record(d, rec, d->prog->events[EV_FLOW_END].size);
			fill(rec, EV_SPAN_END, ts, tid, 4, (uint64_t[]){RING, req, 4096, 0});
			ut_decode_record(d, rec, d->prog->events[EV_SPAN_END].size);
		}
	}
}

/* CPU time per request of a run, in ns: the machine may be shared. */
static double measure(const struct ut_program *p, uint64_t requests, enum mix mix, const char *trace)
{
	char err[256];
	struct fxt_writer *w = trace ? fxt_writer_open(trace, err, sizeof(err)) : NULL;
	struct ut_engine *e = w ? ut_engine_new(w, NULL) : NULL;
	struct ut_user_maps maps;
	ut_user_maps_init(&maps, p);
	struct ut_decoder d = {.prog = p, .engine = e, .user_side = ut_user_side_new(p, &maps, 0)};
	if (e)
		ut_decode_declare_names(d.prog, e);
	double start = cpu_seconds();
	run(&d, requests, mix);
	double seconds = cpu_seconds() - start;
	if (d.malformed)
		fprintf(stderr, "user_side_bench: %llu malformed records\n", (unsigned long long)d.malformed);
	if (e) {
		ut_engine_finish(e, d.last_ts);
		ut_engine_free(e);
		fxt_writer_close(w, err, sizeof(err));
		unlink(trace);
	}
	ut_user_side_free(d.user_side);
	ut_user_maps_free(&maps);
	return seconds * 1e9 / (double)requests;
}

/* The least of three runs: others' work on a shared machine only adds. */
static double best_of(const struct ut_program *p, uint64_t requests, enum mix mix, const char *trace)
{
	double best = measure(p, requests, mix, trace);
	for (int i = 1; i < 3; i++) {
		double t = measure(p, requests, mix, trace);
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	uint64_t requests = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
	const char *trace = argc > 2 ? argv[2] : "/tmp/user_side_bench.fxt";
	struct ut_program *p = completion_program();
	double submits = best_of(p, requests, SUBMITS, NULL);
	double hits = best_of(p, requests, HITS, NULL) - submits;
	double kernel = best_of(p, requests, KERNEL_RECORDS, NULL);
	double traced = best_of(p, requests, HITS, trace) - submits;
	printf("completion hit on the user side, no engine:  %6.1f ns\n", hits);
	printf("the kernel's two records instead, no engine: %6.1f ns\n", kernel);
	printf("the user side's own cost per completion:     %6.1f ns\n", hits - kernel);
	printf("completion hit with the engine and trace:    %6.1f ns\n", traced);
	printf("(submit hit: %.1f ns)\n", submits);
	ut_program_free(p);
	return 0;
}
