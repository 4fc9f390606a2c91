/* Generation of expressions: each checked expression's C, after the
 * statements it needs (temporaries, map look-ups, reads into buffers). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/gen.h"

/* How deep the brackets of a line of C nest (not those in literals). */
static int c_nesting(const char *line)
{
	int depth = 0, deepest = 0;
	for (const char *p = line; *p; p++) {
		if (*p == '"' || *p == '\'') {
			char quote = *p;
			while (p[1] && p[1] != quote)
				p += p[1] == '\\' && p[2] ? 2 : 1;
			if (p[1])
				p++;
		} else if (*p == '(' || *p == '[' || *p == '{') {
			deepest = ++depth > deepest ? depth : deepest;
		} else if (*p == ')' || *p == ']' || *p == '}') {
			depth--;
		}
	}
	return deepest;
}

void emit(struct gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	if (!g->too_deep_at && g->indent + c_nesting(s) > C_MAX_NESTING)
		g->too_deep_at = g->at;
	sb_printf(g->out, "%.*s%s\n", g->indent, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t", s);
	free(s);
}

char *new_tmp(struct gen *g) { return xasprintf("t%d", g->parts->tmp++); }

/* 9223372036854775808 does not fit before its minus applies (clang warns,
 * and reads it unsigned). */
char *c_int64(int64_t v)
{
	if (v == INT64_MIN)
		return xstrdup("(-9223372036854775807LL - 1)");
	return xasprintf("%lldLL", (long long)v);
}

char *c_decl(struct gen *g, const struct type *t, const char *name)
{
	char buf[160];
	switch (t->kind) {
	case T_INT: return xasprintf("%s %s", t->is_signed ? "__s64" : "__u64", name);
	case T_STR: return xasprintf("char %s[%d]", name, t->size);
	case T_TUPLE: return xasprintf("struct ut_tuple_%d %s", t->tuple, name);
	case T_PTR:
		if (t->btf > 0 && !t->user && ut_kernel_type_c(g->c->k, t->btf, buf, sizeof(buf))[0])
			return xasprintf("%s *%s", buf, name);
		return xasprintf("void *%s", name);
	default: return xasprintf("__u64 %s", name);
	}
}

char *gen_expr_to(struct gen *g, struct node *n, struct strbuf *out, int indent)
{
	struct strbuf *saved_out = g->out;
	int saved_indent = g->indent;
	g->out = out;
	g->indent = indent;
	char *r = gen_expr(g, n);
	g->out = saved_out;
	g->indent = saved_indent;
	return r;
}

/* ---- fields and arguments ---- */

/* A typed pointer expression for field access on pointee `btf`. */
static char *typed_ptr(struct gen *g, int32_t btf, const char *e)
{
	char buf[160];
	if (btf > 0 && ut_kernel_type_c(g->c->k, btf, buf, sizeof(buf))[0])
		return xasprintf("((%s *)(%s))", buf, e);
	return xasprintf("((void *)(%s))", e);
}

static bool has_c_name(struct gen *g, int32_t btf)
{
	char buf[160];
	return btf > 0 && ut_kernel_type_c(g->c->k, btf, buf, sizeof(buf))[0];
}

/* The struct or union that a kernel pointer held as a number points to,
 * spelled in buf, when its fields can be loaded through bpf_rdonly_cast
 * (bpf/ut.h, ut_kread): a named one, in kernel memory. */
static bool untrusted_loads(struct gen *g, const struct type *base, char *buf, size_t len)
{
	struct ut_ktype kt;
	return !base->direct && !base->user && base->btf > 0 && ut_kernel_type(g->c->k, base->btf, &kt) == 0 &&
	       (kt.kind == UT_KT_STRUCT || kt.kind == UT_KT_UNION) && ut_kernel_type_c(g->c->k, kt.id, buf, len)[0];
}

static char *gen_member(struct gen *g, struct node *n)
{
	/* this field is the base of the field read around it: a pointer read
	 * through bpf_rdonly_cast may stay a BTF pointer, never a value */
	bool as_base = g->member_base;
	g->member_base = false;
	/* a member of an anonymous struct or union (in6_addr's in6_u) has no
	 * type to cast to: it is reached from the named one around it, by the
	 * path of members (in6_u.u6_addr8) */
	struct node *base_node = n->a;
	char *field = xstrdup(n->str);
	while (base_node->kind == N_FIELD && base_node->ref == REF_MEMBER_ADDR && !has_c_name(g, base_node->type.btf)) {
		char *longer = xasprintf("%s.%s", base_node->str, field);
		free(field);
		field = longer;
		base_node = base_node->a;
	}
	const struct type *base = &base_node->type, *ft = &n->type;
	char untrusted[160];
	bool loads = untrusted_loads(g, base, untrusted, sizeof(untrusted));
	/* (an embedded struct's address, a number plus an offset, stays a
	 * number where it is a value: it may take arithmetic a pointer may not) */
	g->member_base = base_node->kind == N_FIELD &&
			 (base_node->ref == REF_MEMBER || base_node->ref == REF_MEMBER_ADDR) &&
			 (n->ref != REF_MEMBER_ADDR || as_base);
	char *bexpr = gen_expr(g, base_node);
	g->member_base = false;
	/* clang refuses a CO-RE read nested inside another: a base that reads a
	 * field itself (fd_file(fd), a ?: whose condition reads the table's
	 * size) goes through a temporary; so does a user pointer, read from a
	 * syscall's record, which has no struct in the kernel's BTF to relocate
	 * the record's field against; and a base that ut_kread spells twice */
	if (strstr(bexpr, "BPF_CORE_READ") || loads || base->user) {
		char *base_tmp = new_tmp(g);
		emit(g, "void *%s = (void *)(%s);", base_tmp, bexpr);
		free(bexpr);
		bexpr = base_tmp;
	}
	char *p = typed_ptr(g, base->btf, bexpr);
	/* fields of a user-space struct are read from user memory */
	const char *read = base->user ? "BPF_CORE_READ_USER" : "BPF_CORE_READ";
	char *r;
	/* Pointers go through temporaries: clang refuses a CO-RE access
	 * nested inside another. */
	if (n->ref == REF_MEMBER_ADDR) {
		r = new_tmp(g);
		emit(g, "void *%s = (void *)&%s->%s;", r, p, field);
	} else if (ft->kind == T_PTR) {
		r = new_tmp(g);
		if (base->direct)   /* a load the verifier guards, not a helper call */
			emit(g, "void *%s = (void *)%s->%s;", r, p, field);
		else if (loads && as_base)
			emit(g, "void *%s = (void *)ut_kread(%s, %s, %s);", r, untrusted, bexpr, field);
		else
			emit(g, "void *%s = (void *)%s(%s, %s);", r, read, p, field);
	} else if (ft->kind == T_STR) {
		r = new_tmp(g);
		emit(g, "char %s[%d] = {};", r, ft->size);
		if (base->direct && ft->size == 16)   /* two loads the verifier guards (bpf/ut.h) */
			emit(g, "ut_copy_name16(%s, %s->%s);", r, p, field);
		else if (loads && ft->size == 16)
			emit(g, "ut_kread_name16(%s, %s, %s, %s);", r, untrusted, bexpr, field);
		else
			emit(g, "%s_STR_INTO(&%s, %s, %s);", read, r, p, field);
	} else if (n->ref == REF_BITFIELD) {
		r = xasprintf("((__u64)BPF_CORE_READ_BITFIELD_PROBED(%s, %s))", p, field);
	} else if (base->direct) {
		r = xasprintf("((%s)%s->%s)", ft->is_signed ? "__s64" : "__u64", p, field);
	} else if (loads) {
		r = xasprintf("((%s)ut_kread(%s, %s, %s))", ft->is_signed ? "__s64" : "__u64", untrusted, bexpr, field);
	} else {
		r = xasprintf("((%s)%s(%s, %s))", ft->is_signed ? "__s64" : "__u64", read, p, field);
	}
	free(bexpr);
	free(p);
	free(field);
	return r;
}

/* A computed argument's value: evaluated at its first use into a variable
 * at the top of the predicate or of the body (so on every path that may
 * use it), and that variable at every use.  Expanded at each use, a
 * computed `key = (u64)args.rq` cost a helper call per use. */
static char *gen_computed(struct gen *g, struct node *n)
{
	if (g->computed_vars[n->sym])
		return xstrdup(g->computed_vars[n->sym]);
	struct strbuf *out = &g->computed_out[g->in_body];
	bool computing = g->computing;
	g->computing = true;
	char *r = gen_expr_to(g, g->alt->computed_args[n->sym].value, out, 1);
	g->computing = computing;
	char *cvar = r;   /* a string is already a variable of that scope */
	if (n->type.kind != T_STR) {
		cvar = xasprintf("a_%s", n->str);
		char *d = c_decl(g, &n->type, cvar), *cast = c_decl(g, &n->type, "");
		if (cast[strlen(cast) - 1] == ' ')
			cast[strlen(cast) - 1] = 0;   /* the space before the name */
		sb_printf(out, "\t%s = (%s)(%s);\n", d, cast, r);
		free(d);
		free(cast);
		free(r);
	}
	g->computed_vars[n->sym] = cvar;
	return xstrdup(cvar);
}

/* args.NAME.  Strings are read into a temporary. */
static char *gen_arg(struct gen *g, struct node *n)
{
	if (n->ref == REF_COMPUTED)
		return gen_computed(g, n);
	const struct probe_arg *a = &g->alt->args[n->sym];
	if (a->type.kind != T_STR)
		return xstrdup(a->cexpr);
	char *t = new_tmp(g);
	emit(g, "char %s[%d] = {};", t, a->type.size);
	char *rd = xasprintf(a->cexpr, t, t);
	emit(g, "%s;", rd);
	free(rd);
	return t;
}

/* $t.0: the element of the tuple's struct */
static char *gen_tuple_item(struct gen *g, struct node *n)
{
	char *t = gen_expr(g, n->a);
	char *r = xasprintf("(%s).e%d", t, n->sym);
	free(t);
	return r;
}

static char *gen_field(struct gen *g, struct node *n)
{
	if (n->ref == REF_TUPLE_ITEM)
		return gen_tuple_item(g, n);
	return n->ref == REF_ARG || n->ref == REF_COMPUTED ? gen_arg(g, n) : gen_member(g, n);
}

void gen_tuple_copy(struct gen *g, const char *dst, int dst_tuple, const char *src, int src_tuple)
{
	if (dst_tuple == src_tuple) {
		emit(g, "%s = %s;", dst, src);
		return;
	}
	const struct tuple_info *t = &g->c->tuples[dst_tuple];
	for (unsigned e = 0; e < t->n; e++) {
		if (t->el[e].kind != T_STR) {
			emit(g, "%s.e%u = %s.e%u;", dst, e, src, e);
			continue;
		}
		/* the rest of a longer string it held goes */
		emit(g, "__builtin_memset(%s.e%u, 0, sizeof(%s.e%u));", dst, e, dst, e);
		emit(g, "__builtin_memcpy(%s.e%u, %s.e%u, sizeof(%s.e%u) < sizeof(%s.e%u) ? sizeof(%s.e%u) : sizeof(%s.e%u));",
		     dst, e, src, e, dst, e, src, e, dst, e, src, e);
	}
}

/* (a, b, ...): a struct of the tuple's type, filled */
static char *gen_tuple(struct gen *g, struct node *n)
{
	char *t = new_tmp(g);
	emit(g, "struct ut_tuple_%d %s = {};", n->type.tuple, t);
	unsigned e = 0;
	for (struct node *el = n->a; el; el = el->next, e++) {
		char *v = gen_expr(g, el);
		if (el->type.kind == T_STR)
			emit(g, "__builtin_memcpy(%s.e%u, %s, sizeof(%s.e%u) < sizeof(%s) ? sizeof(%s.e%u) : sizeof(%s));", t, e,
			     v, t, e, v, t, e, v);
		else
			emit(g, "%s.e%u = (%s)(%s);", t, e, el->type.is_signed ? "__s64" : "__u64", v);
		free(v);
	}
	return t;
}

static char *gen_ident(struct gen *g, struct node *n)
{
	switch (n->ref) {
	case REF_BUILTIN: {
		const struct builtin *b = &builtins[n->sym];
		if (b->clock_cexpr && g->in_body) {
			/* one clock read per hit (a costly one under a hypervisor) */
			g->uses_now = true;
			if (g->hit_pending || g->computing)   /* before the record's reservation reads the clock */
				g->now_at_top = true;
			return xstrdup(b->clock_cexpr);
		}
		return b->gen ? b->gen(g) : xstrdup(b->cexpr);
	}
	case REF_ARG: return xstrdup(g->alt->args[n->sym].cexpr);
	case REF_PROBE: return xasprintf("%uU", g->alt->probe_index);
	case REF_CONST: return gen_expr(g, n->resolved);
	case REF_FUNC_NAME: return c_int64(n->num);
	default: return xasprintf("((__s64)ut_enum_%d)", n->sym);   /* REF_ENUM: set at load */
	}
}

/* ---- operators ---- */

/* An operand evaluated only on some paths (the right of && and ||, the
 * branches of ?:): its statements (map look-ups, reads into temporaries) go
 * to *stmts, one level deeper, for the caller to put under its condition.
 * Emitted in front of the whole expression, a look-up would run whatever
 * the condition (clang cannot drop a helper call). */
static char *lazy_expr(struct gen *g, struct node *n, struct strbuf *stmts)
{
	*stmts = (struct strbuf){0};
	return gen_expr_to(g, n, stmts, g->indent + 1);
}

/* One side of a lazy operand, inside the caller's if or else: its
 * statements, then var = value. */
static void emit_lazy_side(struct gen *g, struct strbuf *stmts, const char *var, const char *value)
{
	sb_puts(g->out, stmts->s ? stmts->s : "");
	emit(g, "\t%s = %s;", var, value);
}

/* a && b, a || b (operands as ct): C's when b needs no statements of its
 * own; otherwise b's statements and value only where a does not decide. */
static char *logic_expr(struct gen *g, const char *ct, const char *a, const char *b, struct strbuf *b_stmts,
			bool is_and)
{
	if (!b_stmts->len)
		return xasprintf("((%s)(%s) %s (%s)(%s))", ct, a, is_and ? "&&" : "||", ct, b);
	char *t = new_tmp(g), *value = xasprintf("!!(%s)", b);
	emit(g, "__u64 %s = %d;", t, is_and ? 0 : 1);
	emit(g, "if (%s(%s)) {", is_and ? "" : "!", a);
	emit_lazy_side(g, b_stmts, t, value);
	emit(g, "}");
	free(value);
	return t;
}

/* a ? b : e as type ct: C's when neither branch needs statements;
 * otherwise each branch's statements only on its side. */
static char *ternary_expr(struct gen *g, const char *ct, const char *a, const char *b, struct strbuf *b_stmts,
			  const char *e, struct strbuf *e_stmts)
{
	if (!b_stmts->len && !e_stmts->len)
		return xasprintf("((%s) ? (%s)(%s) : (%s)(%s))", a, ct, b, ct, e);
	char *t = new_tmp(g), *bv = xasprintf("(%s)(%s)", ct, b), *ev = xasprintf("(%s)(%s)", ct, e);
	emit(g, "%s%s%s = 0;", ct, ct[strlen(ct) - 1] == '*' ? "" : " ", t);
	emit(g, "if (%s) {", a);
	emit_lazy_side(g, b_stmts, t, bv);
	emit(g, "} else {");
	emit_lazy_side(g, e_stmts, t, ev);
	emit(g, "}");
	free(bv);
	free(ev);
	return t;
}

/* BPF has no signed division (clang-14 rejects sdiv): divide the
 * magnitudes, then give the result C's sign (the quotient's from both
 * operands, the remainder's from the dividend). */
static char *signed_division(struct gen *g, int op, const char *a, const char *b)
{
	char *x = new_tmp(g), *y = new_tmp(g), *q = new_tmp(g), *r;
	emit(g, "__s64 %s = (__s64)(%s), %s = (__s64)(%s);", x, a, y, b);
	emit(g, "__u64 %s = (%s < 0 ? 0 - (__u64)%s : (__u64)%s) %c (%s < 0 ? 0 - (__u64)%s : (__u64)%s);",
	     q, x, x, x, op, y, y, y);
	if (op == '/')
		r = xasprintf("((__s64)((%s < 0) != (%s < 0) ? 0 - %s : %s))", x, y, q, q);
	else
		r = xasprintf("((__s64)(%s < 0 ? 0 - %s : %s))", x, q, q);
	free(x);
	free(y);
	free(q);
	return r;
}

static char *gen_binop(struct gen *g, struct node *n)
{
	bool logic = n->op == OP_AND || n->op == OP_OR;
	struct strbuf b_stmts = {0};
	char *a = gen_expr(g, n->a), *r;
	char *b = logic ? lazy_expr(g, n->b, &b_stmts) : gen_expr(g, n->b);
	struct type *ta = &n->a->type, *tb = &n->b->type;
	bool cmp = n->op == OP_EQ || n->op == OP_NE;
	const char *op;
	char one[2] = {(char)n->op, 0};
	switch (n->op) {
	case OP_EQ: op = "=="; break;
	case OP_NE: op = "!="; break;
	case OP_LE: op = "<="; break;
	case OP_GE: op = ">="; break;
	case OP_AND: op = "&&"; break;
	case OP_OR: op = "||"; break;
	case OP_SHL: op = "<<"; break;
	case OP_SHR: op = ">>"; break;
	default: op = one;
	}
	bool sgn = binop_signed(n);
	const char *ct = sgn ? "__s64" : "__u64";
	if (cmp && ta->kind == T_STR && tb->kind == T_STR)
		r = xasprintf("(%sut_streq(%s, %s, %d))", n->op == OP_NE ? "!" : "", a, b,
			      ta->size < tb->size ? ta->size : tb->size);
	else if (cmp && ta->kind == T_PTR)
		r = xasprintf("((__u64)(%s) %s (__u64)(%s))", a, op, b);
	else if (sgn && (n->op == '/' || n->op == '%'))
		r = signed_division(g, n->op, a, b);
	else if (logic)
		r = logic_expr(g, ct, a, b, &b_stmts, n->op == OP_AND);
	else
		r = xasprintf("((%s)(%s) %s (%s)(%s))", ct, a, op, ct, b);
	sb_free(&b_stmts);
	free(a);
	free(b);
	return r;
}

/* a ? b : e of strings: the branch taken copied into a string of the
 * larger capacity, each branch's statements on its side. */
static char *string_ternary(struct gen *g, const struct node *n, const char *a, const char *b, struct strbuf *b_stmts,
			    const char *e, struct strbuf *e_stmts)
{
	char *t = new_tmp(g);
	emit(g, "char %s[%d] = {};", t, n->type.size);
	emit(g, "if (%s) {", a);
	sb_puts(g->out, b_stmts->s ? b_stmts->s : "");
	emit(g, "\t__builtin_memcpy(%s, %s, sizeof(%s) < sizeof(%s) ? sizeof(%s) : sizeof(%s));", t, b, b, t, b, t);
	emit(g, "} else {");
	sb_puts(g->out, e_stmts->s ? e_stmts->s : "");
	emit(g, "\t__builtin_memcpy(%s, %s, sizeof(%s) < sizeof(%s) ? sizeof(%s) : sizeof(%s));", t, e, e, t, e, t);
	emit(g, "}");
	return t;
}

static char *gen_ternary(struct gen *g, struct node *n)
{
	struct strbuf b_stmts, e_stmts;
	char *a = gen_expr(g, n->a), *b = lazy_expr(g, n->b, &b_stmts), *e = lazy_expr(g, n->c, &e_stmts);
	/* integers, strings, or a pointer either way */
	bool ints = is_int(&n->b->type) && is_int(&n->c->type);
	char *r = n->type.kind == T_STR ? string_ternary(g, n, a, b, &b_stmts, e, &e_stmts)
		: ternary_expr(g, ints ? "__s64" : "void *", a, b, &b_stmts, e, &e_stmts);
	sb_free(&b_stmts);
	sb_free(&e_stmts);
	free(a);
	free(b);
	free(e);
	return r;
}

/* args.NAME ?? default: the default is computed only where the field is
 * missing (it may be a map look-up, which kernels with the field skip). */
static char *gen_default(struct gen *g, struct node *n)
{
	struct node *f = n->a;
	if (f->ref == REF_ABSENT)
		return gen_expr(g, n->b);
	struct strbuf v_stmts, d_stmts;
	char *v = lazy_expr(g, f, &v_stmts), *dflt = lazy_expr(g, n->b, &d_stmts);
	const char *exists = f->ref == REF_ARG && g->alt->args[f->sym].exists_cexpr ? g->alt->args[f->sym].exists_cexpr : "1";
	char *r = ternary_expr(g, n->type.kind == T_PTR ? "void *" : "__s64", exists, v, &v_stmts, dflt, &d_stmts);
	sb_free(&v_stmts);
	sb_free(&d_stmts);
	free(v);
	free(dflt);
	return r;
}

static char *gen_cast(struct gen *g, struct node *n)
{
	char *a = gen_expr(g, n->a), *r;
	if (n->type.kind != T_INT) {   /* to a pointer */
		r = xasprintf("((void *)(%s))", a);
		free(a);
		return r;
	}
	/* the type's bytes as the check made them (scalar_type_bytes) */
	bool to_bool = strcmp(n->str, "bool") == 0;
	int bits = 8 * (int)n->type.size;
	char sgn = n->str[0] == 's' ? 's' : 'u';
	if (n->a->type.kind == T_STR && !to_bool) {
		/* its first bytes, little-endian: decodes short codes such as
		 * the block layer's rwbs ("WS") */
		char *t = new_tmp(g);
		int nbytes = n->a->type.size < n->type.size ? n->a->type.size : n->type.size;
		emit(g, "__u64 %s = 0;", t);
		emit(g, "__builtin_memcpy(&%s, %s, %d);", t, a, nbytes);
		free(a);
		a = t;
	}
	if (to_bool)
		r = xasprintf("(!!(%s))", a);
	else if (n->a->type.kind == T_PTR && n->a->type.direct)   /* shifts, masks, xors work */
		r = xasprintf("((__%c%d)ut_ptr_int(%s))", sgn, bits, a);
	else
		r = xasprintf("((__%c%d)(__u64)(%s))", sgn, bits, a);
	free(a);
	return r;
}

/* ---- indexes, maps, calls ---- */

bool gen_user_address(const struct gen *g, const struct type *t)
{
	return t->user || (is_int(t) && g->alt->def->user_addresses);
}

/* p[i] on a typed pointer: element i, as C reads it.  No bound is known,
 * so the script checks its index (fd < fdt.max_fds); a bad address reads
 * as 0.  *x of an integer reads a u64 there: in a uprobe or usdt probe
 * the integer is an address of the process. */
static char *gen_element(struct gen *g, struct node *n)
{
	bool user = gen_user_address(g, &n->a->type);
	char *base = gen_expr(g, n->a), *i = gen_expr(g, n->b);
	char *r = new_tmp(g);
	if (n->type.kind == T_PTR)
		emit(g, "void *%s = 0;", r);
	else
		emit(g, "__%c%u %s = 0;", n->type.is_signed ? 's' : 'u', n->type.size * 8u, r);
	emit(g, "bpf_probe_read_%s(&%s, sizeof(%s), (const char *)(%s) + (__u64)(%s) * sizeof(%s));",
	     user ? "user" : "kernel", r, r, base, i, r);
	free(base);
	free(i);
	return r;
}

char *gen_map_key(struct gen *g, int map, struct node *ref)
{
	char *k = new_tmp(g);
	unsigned nkeys = node_list_len(ref->a);
	char **vals = xcalloc(nkeys + 1, sizeof(char *));
	unsigned i = 0;
	for (struct node *e = ref->a; e; e = e->next, i++)
		vals[i] = gen_expr(g, e);
	emit(g, "struct ut_mk_%d %s;", map, k);
	emit(g, "__builtin_memset(&%s, 0, sizeof(%s));", k, k);
	i = 0;
	for (struct node *e = ref->a; e; e = e->next, i++) {
		if (e->type.kind == T_STR)
			emit(g, "__builtin_memcpy(%s.k%u, %s, sizeof(%s.k%u) < sizeof(%s) ? sizeof(%s.k%u) : sizeof(%s));",
			     k, i, vals[i], k, i, vals[i], k, i, vals[i]);
		else if (g->c->maps[map].front && e->type.kind == T_PTR && e->type.direct)
			/* a number to hash (bpf/ut.h, ut_front_slot): the verifier
			 * allows a BTF pointer no multiplication */
			emit(g, "%s.k%u = ut_ptr_int(%s);", k, i, vals[i]);
		else
			emit(g, "%s.k%u = (__u64)(%s);", k, i, vals[i]);
		free(vals[i]);
	}
	free(vals);
	return k;
}

/* A map read, as the reuse pass found it (reuse.c): a value the C holds
 * already, or a look-up. */
static char *gen_map_read(struct gen *g, struct node *n)
{
	int idx = n->sym;
	char *k = gen_map_key(g, idx, n);
	if (n->reuse == REUSE_ADDED) {
		free(k);
		return xasprintf("((__u64)ut_added_%u)", n->reuse_var);
	}
	char *t = new_tmp(g);
	if (n->type.kind == T_TUPLE) {
		/* a copy: the map's tuples may have longer strings than this read's type */
		int tuple = g->c->maps[idx].value_type.tuple;
		emit(g, "struct ut_tuple_%d %s = {};", tuple, t);
		emit(g, "{ struct ut_tuple_%d *v = bpf_map_lookup_elem(&m_%d, &%s); if (v) __builtin_memcpy(&%s, v, sizeof(%s)); }",
		     tuple, idx, k, t, t);
		free(k);
		return t;
	}
	if (n->type.kind == T_STR) {
		/* the string where the map holds it (a path would not fit twice on
		 * the 512-byte stack), or "" when the key is absent */
		emit(g, "struct ut_mv_%d *%s = (void *)ut_empty_str;", idx, t);
		emit(g, "{ struct ut_mv_%d *v = bpf_map_lookup_elem(&m_%d, &%s); if (v) %s = v; }", idx, idx, k, t);
		free(k);
		char *r = xasprintf("(%s->s)", t);
		free(t);
		return r;
	}
	int memo = g->c->maps[idx].memo;
	char *lookup = g->c->maps[idx].front ? xasprintf("ut_front_read_%d(%s.k0)", idx, k)
		       : memo < 0 ? xasprintf("ut_map_read(&m_%d, &%s)", idx, k)
		       : g->c->maps[idx].nkeys > 1 ? xasprintf("ut_memo_read(&m_%d, %d, &%s, %s.k0, %s.k1)", idx, memo, k, k, k)
						   : xasprintf("ut_memo_read(&m_%d, %d, &%s, %s.k0, 0)", idx, memo, k, k);
	if (n->reuse == REUSE_PREDICATE)   /* where the predicate's && or || looked it up */
		emit(g, "__u64 %s = ut_pread_%u_set ? ut_pread_%u : %s;", t, n->reuse_var, n->reuse_var, lookup);
	else
		emit(g, "__u64 %s = %s;", t, lookup);
	if (n->reuse == REUSE_KEPT)   /* for the body */
		emit(g, "ut_pread_%u = %s; ut_pread_%u_set = 1;", n->reuse_var, t, n->reuse_var);
	free(lookup);
	free(k);
	return t;
}

static char *gen_call(struct gen *g, struct node *n)
{
	if (n->ref == REF_MACRO)
		return gen_expr(g, n->resolved);
	struct node *args[CALL_MAX_ARGS];
	int nargs = collect_args(n->a, args, CALL_MAX_ARGS);
	return calls[n->sym].gen(g, n, args, nargs);
}

char *gen_expr(struct gen *g, struct node *n)
{
	switch (n->kind) {
	case N_INT:
		if (n->op == 'u')
			return xasprintf("%lluULL", (unsigned long long)n->num);
		return c_int64(n->num);
	case N_STR: {
		char *t = new_tmp(g);
		struct strbuf b = {0};
		sb_c_string(&b, n->str);
		emit(g, "char %s[%d] = \"%s\";", t, n->type.size, b.s ? b.s : "");
		sb_free(&b);
		return t;
	}
	case N_IDENT: return gen_ident(g, n);
	case N_LOCAL: return n->ref == REF_CONST ? gen_expr(g, n->resolved) : xasprintf("l_%s", n->str + 1);
	case N_FIELD: return gen_field(g, n);
	case N_INDEX: return n->ref == REF_TABLE ? gen_expr(g, n->b) : gen_element(g, n);
	case N_MAP_REF: return gen_map_read(g, n);
	case N_CALL: return gen_call(g, n);
	case N_BINOP: return gen_binop(g, n);
	case N_UNOP: {
		char *a = gen_expr(g, n->a);
		char *r = xasprintf("(%c(%s)(%s))", n->op, n->op == '-' ? "__s64" : "__u64", a);
		free(a);
		return r;
	}
	case N_TERNARY: return gen_ternary(g, n);
	case N_TUPLE: return gen_tuple(g, n);
	case N_DEFAULT: return gen_default(g, n);
	default: return gen_cast(g, n);   /* N_CAST */
	}
}
