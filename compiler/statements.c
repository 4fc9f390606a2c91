/* The statement builtins: printf(), print(), delete(), ...  Each is a row of
 * calls[] (builtins.c) that names its struct statement_def here: its check,
 * its record (op, name and fields), its kernel C where that is not its
 * record's, and what placement and the reader make of it. */
#include <stdlib.h>
#include <string.h>

#include "compiler/check.h"
#include "compiler/gen.h"
#include "compiler/resources.h"

/* ---- printf(format, ...), cat(path format, ...) ---- */

static void check_printf(struct check *ck, struct node *n)
{
	struct node *args[CALL_MAX_ARGS];
	int na = format_args(ck, n, args);
	if (na > 0 && args[0]->kind != N_STR)
		ERR(ck, n, "%s() takes a format string and up to %d values", n->str, FORMAT_MAX_VALUES);
	else if (na > 0)
		check_format_values(ck, args, na);
}

static void record_printf(struct record *r, struct node *call)
{
	r->ev->name = record_format(r, call);
}

const struct statement_def statement_printf = {
	.check = check_printf, .op = UT_EV_PRINT, .record = record_printf, .fields = format_fields,
};
const struct statement_def statement_cat = {
	.check = check_printf, .op = UT_EV_CAT, .record = record_printf, .fields = format_fields,
};

/* ---- exit(), snapshot(): in the kernel they set a map, a record could
 * be lost (bpf/ut.h) ---- */

static void check_no_arguments(struct check *ck, struct node *n)
{
	if (n->a)
		ERR(ck, n, "%s() takes no arguments", n->str);
}

/* exit() ends the hit too, as in bpftrace */
static void gen_exit(struct gen *g, struct node *call)
{
	(void)call;
	emit(g, "ut_request(UT_REQUEST_EXIT);");
	emit(g, "goto ut_done;");
	g->returns = true;
}

static void gen_snapshot(struct gen *g, struct node *call)
{
	(void)call;
	emit(g, "ut_request(UT_REQUEST_SNAPSHOT);");
}

const struct statement_def statement_exit = {.check = check_no_arguments, .op = UT_EV_EXIT, .gen = gen_exit};
const struct statement_def statement_snapshot = {
	.check = check_no_arguments, .op = UT_EV_SNAPSHOT, .gen = gen_snapshot,
};

/* ---- delete(@m[k]), clear(@m), zero(@m) ---- */

/* The one map a call takes (form: how it is written after its name). */
static bool one_map(struct check *ck, struct node *call, const char *form)
{
	struct node *m = call->a;
	if (m && m->kind == N_MAP_REF && !m->next)
		return true;
	ERR(ck, call, "%s() takes one map: %s(@name%s)", call->str, call->str, form);
	return false;
}

/* A whole map that a statement takes (clear(@m), zero(@m), print(@m)):
 * one that a probe before it assigns. */
static void check_whole_map(struct check *ck, struct node *call, struct node *m)
{
	if (m->a)
		ERR(ck, m, "%s() takes the whole map, without keys", call->str);
	bool known = false;
	for (unsigned i = 0; i < ck->c->nmaps; i++)
		known |= strcmp(ck->c->maps[i].name, m->str) == 0;
	if (!known)
		ERR(ck, m, "%s() of %s, which no probe before it assigns", call->str, m->str);
}

/* delete(@m[k]), and bpftrace's delete(@m, k) */
static void check_delete(struct check *ck, struct node *e)
{
	struct node *m = e->a;
	if (m && m->kind == N_MAP_REF && !m->a && m->next) {
		m->a = m->next;   /* delete(@m, k1, k2): the keys are @m's */
		m->next = NULL;
	}
	if (!one_map(ck, e, "[key]"))
		return;
	struct map_info *mi = map_get(ck, m);
	if (!mi)
		return;
	mi->deleted_in_bpf = true;
	check_map_key(ck, m->sym, m);
}

static void gen_delete(struct gen *g, struct node *call)
{
	struct node *m = call->a;
	char *k = gen_map_key(g, m->sym, m);
	if (g->c->maps[m->sym].front)
		emit(g, "ut_front_delete_%d(%s.k0);", m->sym, k);
	else
		emit(g, "bpf_map_delete_elem(&m_%d, &%s);", m->sym, k);
	gen_memo_written(g, m->sym);
	free(k);
}

static void check_map_whole(struct check *ck, struct node *e)
{
	if (one_map(ck, e, ""))
		check_whole_map(ck, e, e->a);
}

/* A map's name, as a record's name: the reader acts on the map. */
static void record_map_name(struct record *r, struct node *call)
{
	r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(call->a->str)};
}

const struct statement_def statement_delete = {
	.check = check_delete, .gen = gen_delete, .updates_map = true, .reader_op = UT_US_DELETE,
};
const struct statement_def statement_clear = {.check = check_map_whole, .op = UT_EV_CLEAR, .record = record_map_name};
const struct statement_def statement_zero = {.check = check_map_whole, .op = UT_EV_ZERO, .record = record_map_name};

/* ---- print(@m[, top[, div]]): the map, as the summary prints it, its top
 * entries, divided; print(value): the value and a newline ---- */

static bool prints_map(const struct node *call)
{
	return call->a && call->a->kind == N_MAP_REF && !call->a->a;
}

/* A constant expression becomes its value, where it is in its list. */
static void fold_in_place(struct node *n, int64_t value)
{
	node_free_children(n);
	*n = (struct node){.kind = N_INT, .loc = n->loc, .next = n->next, .num = value, .type = t_int(8, value < 0),
			   .sym = -1, .event = -1, .capture = -1};
}

static void check_print(struct check *ck, struct node *e)
{
	struct node *args[4];
	int na = collect_args(e->a, args, 4);
	if (na < 1 || na > 3) {
		ERR(ck, e, "print() takes a map, and how many of its top entries and a divisor: print(@m), "
		    "print(@m, 10), print(@m, 10, 1000); or a value: print(comm)");
		return;
	}
	if (!prints_map(e)) {
		if (na > 1)
			ERR(ck, args[1], "print() of a value takes it alone; the top entries and a divisor are a map's: "
			    "print(@m, 10)");
		check_value(ck, args[0]);
		return;
	}
	check_whole_map(ck, e, args[0]);
	for (int i = 1; i < na; i++) {
		int64_t v;
		if (!const_int(ck->c, args[i], &v, 0) || v < 0)
			ERR(ck, args[i], "print()'s %s is a constant integer of at least 0 (numbers, consts and "
			    "arithmetic on them)", i == 1 ? "count of top entries" : "divisor");
		else
			fold_in_place(args[i], v);
	}
	/* top 0 (all) and div 1 when not given: the record has both */
	for (struct node *last = args[na - 1]; na < 3; na++) {
		last->next = node_new(N_INT, e->loc);
		last = last->next;
		fold_in_place(last, na == 1 ? 0 : 1);
	}
}

static void record_print(struct record *r, struct node *call)
{
	if (prints_map(call)) {
		r->ev->op = UT_EV_PRINT_MAP;
		record_map_name(r, call);
		record_add_field(r, UT_F_U64, 8);   /* top */
		record_add_field(r, UT_F_U64, 8);   /* div */
		return;
	}
	/* the value and a newline: its text, as printf's %s gives it */
	r->ev->name = (struct ut_value){.kind = UT_VAL_FORMAT, .text = xstrdup("%s\n"), .nfmt = 1,
					.fmt = xcalloc(1, sizeof(struct ut_value))};
	r->ev->name.fmt[0] = record_value(r, call->a);
}

static void print_fields(struct node *call, field_each each, void *ctx)
{
	if (!prints_map(call)) {
		value_fields(call->a, each, ctx);
		return;
	}
	for (struct node *arg = call->a->next; arg; arg = arg->next)
		each(ctx, arg, false);
}

const struct statement_def statement_print = {
	.check = check_print, .op = UT_EV_PRINT, .record = record_print, .fields = print_fields,
};

/* ---- time(), time("%H:%M:%S\n"): the wall-clock time of the hit ---- */

static void check_time(struct check *ck, struct node *e)
{
	if (e->a && (e->a->kind != N_STR || e->a->next))
		ERR(ck, e->a, "time() takes a strftime format string: time(\"%%H:%%M:%%S\\n\")");
	else if (e->a && strlen(e->a->str) > 200)
		ERR(ck, e->a, "time()'s format is at most 200 characters");
}

static void record_time(struct record *r, struct node *call)
{
	r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(call->a ? call->a->str : "%H:%M:%S\n")};
}

const struct statement_def statement_time = {.check = check_time, .op = UT_EV_TIME, .record = record_time};

/* ---- join(argv[, sep]): the strings of a NULL-ended array of string
 * pointers (a process's argv), printed with sep between them ---- */

static void check_join(struct check *ck, struct node *e)
{
	struct node *args[3];
	int na = collect_args(e->a, args, 3);
	if (na < 1 || na > 2) {
		ERR(ck, e, "join() takes an array of string pointers and a separator: join(args.argv), join(args.argv, \",\")");
		return;
	}
	check_expr(ck, args[0]);
	if (args[0]->type.kind != T_PTR && !is_int(&args[0]->type))
		ERR(ck, args[0], "join() takes an array of string pointers (args.argv), not %s", a_type(&args[0]->type));
	if (na == 2 && (args[1]->kind != N_STR || strlen(args[1]->str) > 16))
		ERR(ck, args[1], "join()'s separator is a string of at most 16 characters");
}

/* the separator; field 0 counts the strings in the fields after it */
static void record_join(struct record *r, struct node *call)
{
	r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(call->a->next ? call->a->next->str : " ")};
	record_add_field(r, UT_F_U64, 8);
	for (int i = 0; i < JOIN_MAX_STRINGS; i++)
		record_add_field(r, UT_F_STR, JOIN_STRING_BYTES);
}

/* Each pointer of the NULL-ended array is read first, then its string;
 * nested, so that the reads stop at the first NULL (the verifier walks
 * each path once). */
static void fill_join(struct gen *g, struct strbuf *into, struct node *call)
{
	struct node *argv = call->a;
	char *base = gen_expr(g, argv);
	bool user = argv->type.user || (is_int(&argv->type) && g->alt->def->user_addresses);
	const char *from = user ? "user" : "kernel";
	char *var = new_tmp(g);
	emit(g, "const char *const *%s = (const char *const *)(%s);", var, base);
	free(base);
	struct gen inner = *g;   /* the fill's statements, inside the record's block */
	inner.out = into;
	inner.indent = g->indent + 1;
	emit(&inner, "r->f0 = 0;");
	for (int i = 0; i < JOIN_MAX_STRINGS; i++) {
		emit(&inner, "{ const char *a = 0; bpf_probe_read_%s(&a, sizeof(a), &%s[%d]);", from, var, i);
		emit(&inner, "if (a) { bpf_probe_read_%s_str(r->f%d, sizeof(r->f%d), a); r->f0 = %d;", from, i + 1, i + 1,
		     i + 1);
	}
	struct strbuf closing = {0};
	for (int i = 0; i < JOIN_MAX_STRINGS; i++)
		sb_puts(&closing, "}}");
	emit(&inner, "%s", closing.s);
	sb_free(&closing);
	free(var);
}

const struct statement_def statement_join = {
	.check = check_join, .op = UT_EV_JOIN, .record = record_join, .fill = fill_join,
	/* and the kernel part of a split hit writes no record but the hit's */
	.kernel_only = "join() reads its strings into its record",
};

/* ---- finding "TAG"[key] SEVERITY "message", values... fix "...", values...
 * with name = value, ...: a named problem with its evidence and a fix
 * (parser.y builds the call: ast.h, FINDING_STATEMENT).  The reader keeps
 * one per tag and key (runtime/findings.c) ---- */

#define FINDING_TAG_MAX 32
#define FINDING_KEYS_MAX 8

static bool tag_ok(const char *tag)
{
	size_t n = strlen(tag);
	if (n == 0 || n > FINDING_TAG_MAX || tag[0] < 'A' || tag[0] > 'Z')
		return false;
	return strspn(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

static void check_finding(struct check *ck, struct node *call)
{
	if (call->num != FINDING_STATEMENT) {
		ERR(ck, call, "finding is a statement of its own: finding \"TAG\"[key] SEVERITY \"message\", values... "
		    "fix \"...\", values... with name = value, ...");
		return;
	}
	struct node *tag = call->a, *severity = tag->next, *message = severity->next;
	if (!tag_ok(tag->str))
		ERR(ck, tag, "a finding's tag is capital letters, digits and '-', starting with a letter, at most %d "
		    "characters (\"PUNT\", \"SHORT-WRITE\"), not \"%s\"", FINDING_TAG_MAX, tag->str);
	unsigned nkeys = 0;
	for (struct node *k = call->b; k; k = k->next, nkeys++) {
		check_expr(ck, k);
		if (nkeys == FINDING_KEYS_MAX)
			ERR(ck, k, "a finding's key has at most %d values, as a map's", FINDING_KEYS_MAX);
		else if (k->type.kind != T_INT && k->type.kind != T_PTR && k->type.kind != T_STR && k->type.kind != T_NONE)
			ERR(ck, k, "a finding's key is integers, pointers or strings, as a map's, not %s", a_type(&k->type));
	}
	check_expr(ck, severity);
	int64_t level;
	if (!is_int(&severity->type))
		ERR(ck, severity, "a finding's severity is info, warn or crit (0, 1, 2), not %s", a_type(&severity->type));
	else if (const_int(ck->c, severity, &level, 0) && (level < UT_INFO || level > UT_CRIT))
		ERR(ck, severity, "a finding's severity is info, warn or crit (0, 1, 2), not %lld", (long long)level);
	check_value(ck, message);
	if (call->d)
		check_value(ck, call->d);
	check_with(ck, call->c, false, call);
}

/* name: the tag; args: severity, message, fix, the key's values, the
 * evidence (compiler/program.h, enum ut_finding_arg) */
static void record_finding(struct record *r, struct node *call)
{
	struct node *tag = call->a, *severity = tag->next, *message = severity->next;
	r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(tag->str)};
	record_arg(r, "severity", record_value(r, severity));
	record_arg(r, "message", record_value(r, message));
	record_arg(r, "fix", call->d ? record_value(r, call->d) : (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup("")});
	for (struct node *k = call->b; k; k = k->next)
		record_arg(r, UT_FINDING_KEY, record_value(r, k));
	for (struct node *w = call->c; w; w = w->next)
		record_arg(r, w->str, record_value(r, w->a));
}

static void finding_fields(struct node *call, field_each each, void *ctx)
{
	struct node *tag = call->a, *severity = tag->next, *message = severity->next;
	value_fields(severity, each, ctx);
	value_fields(message, each, ctx);
	if (call->d)
		value_fields(call->d, each, ctx);
	for (struct node *k = call->b; k; k = k->next)
		value_fields(k, each, ctx);
	for (struct node *w = call->c; w; w = w->next)
		value_fields(w->a, each, ctx);
}

const struct statement_def statement_finding = {
	.check = check_finding, .op = UT_EV_FINDING, .record = record_finding, .fields = finding_fields,
};
