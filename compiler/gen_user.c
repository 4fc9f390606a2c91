/* Generation of the reader's side of split alternatives (placement.c):
 * the statements the reader runs over each hit record, as the program's
 * plain-data tables (compiler/program.h, "The user side of a probe").
 * Every choice C would make from types (signed or unsigned division,
 * comparison and shift, narrowing casts) is made here as gen_expr.c makes
 * it, and written into the op. */
#include <stdlib.h>
#include <string.h>

#include "compiler/aggregations.h"
#include "compiler/builtins.h"
#include "compiler/passes.h"

/* The translation of one alternative's body. */
struct ugen {
	struct compiler *c;
	struct alt_ctx *a;
};

static unsigned add_expr(struct ugen *u, struct ut_uexpr e)
{
	return ut_program_add_uexpr(u->c->prog, &e);
}

static unsigned uexpr(struct ugen *u, struct node *n);

/* A list of expressions in ukeys (map keys, a record's fields): its first. */
static unsigned ukeys(struct ugen *u, struct node **values, unsigned n)
{
	unsigned *x = xcalloc(n + 1, sizeof(*x));
	for (unsigned i = 0; i < n; i++)
		x[i] = uexpr(u, values[i]);
	unsigned first = ut_program_add_ukeys(u->c->prog, x, n);
	free(x);
	return first;
}

/* A map access's keys. */
static unsigned map_keys(struct ugen *u, struct node *ref, unsigned *nkeys)
{
	struct node *keys[8];
	unsigned n = 0;
	for (struct node *k = ref->a; k; k = k->next)
		keys[n++] = k;
	*nkeys = n;
	return ukeys(u, keys, n);
}

static unsigned binop(struct ugen *u, struct node *n)
{
	const struct type *ta = &n->a->type, *tb = &n->b->type;
	bool sgn = binop_signed(n);
	if ((n->op == OP_EQ || n->op == OP_NE) && ta->kind == T_STR && tb->kind == T_STR)
		return add_expr(u, (struct ut_uexpr){.op = n->op == OP_EQ ? UT_UX_STREQ : UT_UX_STRNE, .a = uexpr(u, n->a),
						     .b = uexpr(u, n->b), .n = ta->size < tb->size ? ta->size : tb->size});
	/* a > b is b < a; pointers compare as numbers */
	bool swap = n->op == '>' || n->op == OP_GE;
	enum ut_uexpr_op op;
	switch (n->op) {
	case '+': op = UT_UX_ADD; break;
	case '-': op = UT_UX_SUB; break;
	case '*': op = UT_UX_MUL; break;
	case '/': op = sgn ? UT_UX_SDIV : UT_UX_UDIV; break;
	case '%': op = sgn ? UT_UX_SMOD : UT_UX_UMOD; break;
	case '&': op = UT_UX_AND; break;
	case '|': op = UT_UX_OR; break;
	case '^': op = UT_UX_XOR; break;
	case OP_SHL: op = UT_UX_SHL; break;
	case OP_SHR: op = sgn ? UT_UX_SSHR : UT_UX_USHR; break;
	case OP_EQ: op = UT_UX_EQ; break;
	case OP_NE: op = UT_UX_NE; break;
	case '<': case '>': op = sgn ? UT_UX_SLT : UT_UX_ULT; break;
	case OP_LE: case OP_GE: op = sgn ? UT_UX_SLE : UT_UX_ULE; break;
	case OP_AND: op = UT_UX_LAND; break;
	default: op = UT_UX_LOR; break;   /* OP_OR */
	}
	unsigned a = uexpr(u, n->a), b = uexpr(u, n->b);
	return add_expr(u, (struct ut_uexpr){.op = op, .a = swap ? b : a, .b = swap ? a : b});
}

/* Casts to integers narrow as C does (gen_expr.c, gen_cast); a string's
 * first bytes make a number, little-endian. */
static unsigned cast(struct ugen *u, struct node *n)
{
	unsigned a = uexpr(u, n->a);
	if (n->type.kind != T_INT)   /* to a pointer: the same number */
		return a;
	if (strcmp(n->str, "bool") == 0)
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_BOOL, .a = a});
	unsigned bytes = (unsigned)atoi(n->str + 1) / 8;
	if (n->a->type.kind == T_STR)
		a = add_expr(u, (struct ut_uexpr){.op = UT_UX_STR_INT, .a = a,
						  .n = (uint16_t)(n->a->type.size < bytes ? n->a->type.size : bytes)});
	if (bytes == 8)
		return a;
	return add_expr(u, (struct ut_uexpr){.op = UT_UX_TRUNC, .a = a, .n = (uint16_t)bytes, .sgn = n->str[0] == 's'});
}

/* Expression n (placement left only what the reader can evaluate, its
 * kernel parts captured). */
static unsigned uexpr(struct ugen *u, struct node *n)
{
	bool is_str = n->type.kind == T_STR;
	if (n->capture >= 0)
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_CAPTURED, .field = (unsigned)n->capture, .is_str = is_str,
						     .n = is_str ? n->type.size : 0});
	switch (n->kind) {
	case N_INT:
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_INT, .i = n->num});
	case N_STR:
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_STR, .is_str = true, .n = n->type.size, .text = n->str});
	case N_IDENT:
		switch (n->ref) {
		case REF_CONST: return uexpr(u, n->resolved);
		case REF_BUILTIN:   /* one of the header's (placement.c) */
			return add_expr(u, (struct ut_uexpr){.op = UT_UX_HEADER, .which = builtins[n->sym].header});
		case REF_PROBE: return add_expr(u, (struct ut_uexpr){.op = UT_UX_INT, .i = u->a->probe_index});
		default: return add_expr(u, (struct ut_uexpr){.op = UT_UX_ENUM, .i = n->sym});   /* REF_ENUM */
		}
	case N_LOCAL: {
		if (n->ref == REF_CONST)   /* a positional parameter */
			return uexpr(u, n->resolved);
		const struct local *l = &u->a->locals[n->sym];
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_LOCAL, .slot = l->slot, .is_str = is_str,
						     .n = is_str ? l->type.size : 0});
	}
	case N_INDEX:   /* a table's: its key */
		return uexpr(u, n->b);
	case N_MAP_REF: {
		unsigned nkeys, keys = map_keys(u, n, &nkeys);
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_MAP, .map = (unsigned)n->sym, .keys = keys, .nkeys = nkeys,
						     .is_str = ut_map_holds_string(&u->c->prog->maps[n->sym])});
	}
	case N_CALL:
		if (n->ref == REF_FUNCTION && calls[n->sym].reader_op) {   /* over its map: percentile() */
			unsigned nkeys, keys = map_keys(u, n->a, &nkeys);
			return add_expr(u, (struct ut_uexpr){.op = calls[n->sym].reader_op, .map = (unsigned)n->a->sym,
							     .keys = keys, .nkeys = nkeys, .i = n->num});
		}
		/* a function's body, or a value shown another way */
		return uexpr(u, n->ref == REF_MACRO ? n->resolved : n->a);
	case N_BINOP:
		return binop(u, n);
	case N_UNOP: {
		unsigned a = uexpr(u, n->a);
		return add_expr(u, (struct ut_uexpr){.op = n->op == '-' ? UT_UX_NEG : n->op == '!' ? UT_UX_NOT : UT_UX_BITNOT,
						     .a = a});
	}
	case N_TERNARY: {
		unsigned a = uexpr(u, n->a), b = uexpr(u, n->b), c = uexpr(u, n->c);
		return add_expr(u, (struct ut_uexpr){.op = UT_UX_COND, .a = a, .b = b, .c = c, .is_str = is_str});
	}
	default:   /* N_CAST; kernel reads (fields, strings) are captured */
		return cast(u, n);
	}
}

/* ---- statements ---- */

/* The statements of a list the reader runs, blocks and statement
 * functions flattened. */
struct run {
	struct node **stmts;
	unsigned n;
};

static void collect(struct run *r, struct node *list)
{
	for (struct node *n = list; n; n = n->next) {
		if (!(n->side & PLACE_READER))
			continue;
		if (n->kind == N_BLOCK) {
			collect(r, n->a);
		} else if (n->kind == N_EXPR_STMT && calls_function(stmt_call(n))) {
			collect(r, stmt_call(n)->resolved);
		} else {
			r->stmts = xrealloc_array(r->stmts, r->n + 1, sizeof(*r->stmts));
			r->stmts[r->n++] = n;
		}
	}
}

static unsigned ubody(struct ugen *u, struct node *list, unsigned *n);

struct emit_fields {
	struct node **values;
	unsigned n;
};

static void emit_field(void *ctx, struct node *value, bool key)
{
	(void)key;
	struct emit_fields *f = ctx;
	f->values = xrealloc_array(f->values, f->n + 1, sizeof(*f->values));
	f->values[f->n++] = value;
}

/* A record the reader writes: its fields' values in field order. */
static struct ut_ustmt emit_record(struct ugen *u, struct node *n)
{
	struct emit_fields f = {0};
	record_fields(n, emit_field, &f);
	struct ut_ustmt s = {.op = UT_US_EMIT, .event = (unsigned)n->event, .nkeys = f.n};
	s.keys = ukeys(u, f.values, f.n);
	free(f.values);
	return s;
}

static struct ut_ustmt map_stmt(struct ugen *u, enum ut_ustmt_op op, struct node *ref)
{
	struct ut_ustmt s = {.op = op, .map = (unsigned)ref->sym};
	s.keys = map_keys(u, ref, &s.nkeys);
	return s;
}

static struct ut_ustmt map_assign(struct ugen *u, struct node *n)
{
	const struct map_info *m = &u->c->maps[n->a->sym];
	if (m->kind == MAP_AGG) {
		struct ut_ustmt s = map_stmt(u, UT_US_AGG, n->a);
		if (ut_aggs[m->agg].nargs)
			s.a = uexpr(u, agg_args(n));
		return s;
	}
	struct ut_ustmt s = map_stmt(u, n->op == '=' ? UT_US_MAP_SET : UT_US_MAP_ADD, n->a);
	s.a = uexpr(u, n->b);
	if (n->op == '-')
		s.a = add_expr(u, (struct ut_uexpr){.op = UT_UX_NEG, .a = s.a});
	return s;
}

static struct ut_ustmt ustmt(struct ugen *u, struct node *n)
{
	struct ut_ustmt s = {0};
	switch (n->kind) {
	case N_LOCAL_ASSIGN:
		s = (struct ut_ustmt){.op = UT_US_LOCAL, .slot = u->a->locals[n->sym].slot, .a = uexpr(u, n->a)};
		break;
	case N_MAP_ASSIGN:
		s = map_assign(u, n);
		break;
	case N_EXPR_STMT:
		if (statement_of(stmt_call(n))->updates_map)
			s = map_stmt(u, statement_of(stmt_call(n))->reader_op, stmt_call(n)->a);
		else
			s = emit_record(u, stmt_call(n));
		break;
	case N_IF: {
		/* a constant, or the kernel's answer where it decided */
		int64_t v;
		s = (struct ut_ustmt){.op = UT_US_IF};
		s.a = cond_folds(u->c, n->a, &v) ? add_expr(u, (struct ut_uexpr){.op = UT_UX_INT, .i = v})
						  : uexpr(u, n->a);
		break;
	}
	case N_FOR:
		s = (struct ut_ustmt){.op = UT_US_FOR, .slot = u->a->locals[n->sym].slot,
				      .a = add_expr(u, (struct ut_uexpr){.op = UT_UX_INT, .i = n->a->num}),
				      .b = add_expr(u, (struct ut_uexpr){.op = UT_UX_INT, .i = n->b->num})};
		break;
	case N_FOR_MAP:   /* its entry locals follow one another from the key's */
		s = (struct ut_ustmt){.op = UT_US_FOR_MAP, .map = (unsigned)n->a->sym, .slot = u->a->locals[n->sym].slot};
		break;
	case N_RETURN: s.op = UT_US_RETURN; break;
	case N_BREAK: s.op = UT_US_BREAK; break;
	case N_CONTINUE: s.op = UT_US_CONTINUE; break;
	default:   /* trace statements */
		s = emit_record(u, n);
		break;
	}
	s.loc = n->loc;
	return s;
}

/* The run of a list's statements, reserved before it is filled (bodies
 * come after the statements that hold them): its first, and *n. */
static unsigned ubody(struct ugen *u, struct node *list, unsigned *n)
{
	struct run r = {0};
	collect(&r, list);
	*n = r.n;
	struct ut_program *p = u->c->prog;
	unsigned first = p->nustmts;
	for (unsigned i = 0; i < r.n; i++)
		ut_program_add_ustmts(p, &(struct ut_ustmt){.op = UT_US_RETURN}, 1);
	for (unsigned i = 0; i < r.n; i++) {
		struct node *stmt = r.stmts[i];
		struct ut_ustmt s = ustmt(u, stmt);
		if (stmt->kind == N_IF) {
			s.body = ubody(u, stmt->b, &s.nbody);
			if (stmt->c)
				s.body2 = ubody(u, stmt->c, &s.nbody2);
		} else if (stmt->kind == N_FOR || stmt->kind == N_FOR_MAP) {
			s.body = ubody(u, for_body(stmt), &s.nbody);
		}
		p->ustmts[first + i] = s;
	}
	free(r.stmts);
	return first;
}

void gen_user_side(struct compiler *c)
{
	for (unsigned i = 0; i < c->nalts; i++) {
		struct alt_ctx *a = c->alts[i];
		if (a->hit_event < 0)
			continue;
		struct ugen u = {.c = c, .a = a};
		unsigned n, body = ubody(&u, a->block->a, &n);
		struct ut_event *hit = &c->prog->events[a->hit_event];
		hit->body = body;
		hit->nbody = n;
	}
}
