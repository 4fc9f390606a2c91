#include "compiler/ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

struct node *node_new(enum node_kind kind, struct ut_loc loc)
{
	struct node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->loc = loc;
	n->sym = -1;
	n->event = -1;
	n->capture = -1;
	return n;
}

void node_list_push(struct node_list *l, struct node *item)
{
	if (!item)
		return;
	if (l->tail)
		l->tail->next = item;
	else
		l->head = item;
	l->tail = item;
	while (l->tail->next)   /* each node is passed once: linear overall */
		l->tail = l->tail->next;
}

unsigned node_list_len(const struct node *list)
{
	unsigned n = 0;
	for (; list; list = list->next)
		n++;
	return n;
}

int collect_args(struct node *list, struct node **out, int max)
{
	int n = 0;
	for (; list; list = list->next)
		if (n < max)
			out[n++] = list;
		else
			n++;
	return n;
}

bool binop_signed(const struct node *n)
{
	return (n->a->type.is_signed || n->b->type.is_signed) && !(n->a->kind == N_INT && n->a->op == 'u') &&
	       !(n->b->kind == N_INT && n->b->op == 'u');
}

struct ut_value type_shown(const struct type *t, unsigned field)
{
	struct ut_value v = {.kind = UT_VAL_FIELD, .field = field, .display = t->show, .table = t->table};
	if (t->kind == T_PTR)
		v.display = UT_SHOW_HEX;
	if (v.display == UT_SHOW_TIME)
		v.text = xstrdup(t->time_format);
	return v;
}

bool walk_list(struct node *list, const struct walker *w)
{
	for (struct node *n = list, *next; n; n = next) {
		next = n->next;   /* a post visit may free n */
		if (!walk_tree(n, w))
			return false;
	}
	return true;
}

bool walk_tree(struct node *n, const struct walker *w)
{
	enum walk_next next = w->pre ? w->pre(n, w->ctx) : WALK_INTO;
	if (next == WALK_STOP)
		return false;
	if (next == WALK_INTO) {
		struct node *kids[] = {n->a, n->b, n->c, n->d, w->expansions ? n->resolved : NULL};
		for (unsigned i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
			if (!walk_list(kids[i], w))
				return false;
	}
	return !w->post || w->post(n, w->ctx) != WALK_STOP;
}

static struct node *clone_list(const struct node *n)
{
	struct node_list l = {0};
	for (; n; n = n->next)
		node_list_push(&l, node_clone(n));
	return l.head;
}

/* Deep copy of one node (its `next` is not followed; children lists are). */
struct node *node_clone(const struct node *n)
{
	if (!n)
		return NULL;
	struct node *c = node_new(n->kind, n->loc);
	*c = *n;
	c->next = NULL;
	c->str = n->str ? xstrdup(n->str) : NULL;
	c->a = clone_list(n->a);
	c->b = clone_list(n->b);
	c->c = clone_list(n->c);
	c->d = clone_list(n->d);
	c->resolved = NULL;
	return c;
}

static bool same_trees(const struct node *x, const struct node *y, bool by_value)
{
	for (; x && y; x = x->next, y = y->next)
		if (!same_tree(x, y, by_value))
			return false;
	return !x && !y;
}

bool same_tree(const struct node *x, const struct node *y, bool by_value)
{
	while (by_value && ((x->ref == REF_CONST && x->resolved) || (x->kind == N_CALL && x->ref == REF_MACRO)))
		x = x->resolved;
	while (by_value && ((y->ref == REF_CONST && y->resolved) || (y->kind == N_CALL && y->ref == REF_MACRO)))
		y = y->resolved;
	return x->kind == y->kind && x->op == y->op && x->ref == y->ref && x->sym == y->sym && x->num == y->num &&
	       (x->str && y->str ? strcmp(x->str, y->str) == 0 : x->str == y->str) && x->type.kind == y->type.kind &&
	       x->type.size == y->type.size && x->type.is_signed == y->type.is_signed &&
	       same_trees(x->a, y->a, by_value) && same_trees(x->b, y->b, by_value) && same_trees(x->c, y->c, by_value) &&
	       same_trees(x->d, y->d, by_value) && same_trees(x->resolved, y->resolved, by_value);
}

void node_free_children(struct node *n)
{
	struct node *kids[] = {n->a, n->b, n->c, n->d, n->resolved};
	for (unsigned i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		node_free(kids[i]);
	free(n->str);
}

static enum walk_next free_node(struct node *n, void *ctx)
{
	(void)ctx;
	free(n->str);
	free(n);
	return WALK_INTO;
}

void node_free(struct node *n)
{
	walk_list(n, &(struct walker){.expansions = true, .post = free_node});
}

static const char *const kind_names[N_KIND_COUNT] = {
	[N_IMPORT] = "import", [N_CONST] = "const", [N_TABLE] = "table",
	[N_TABLE_ENTRY] = "entry", [N_FN] = "fn", [N_ALIAS] = "probe-alias",
	[N_PROBE_BLOCK] = "probe", [N_PROBE_ALTS] = "alternatives",
	[N_PROBE_SPEC] = "spec", [N_PRIVATE] = "private", [N_LRU] = "lru", [N_CACHED] = "cached", [N_BLOCK] = "block",
	[N_EXPR_STMT] = "expr-stmt",
	[N_LOCAL_ASSIGN] = "local=", [N_MAP_ASSIGN] = "map=", [N_IF] = "if",
	[N_RETURN] = "return", [N_FOR] = "for", [N_FOR_MAP] = "for-map", [N_BREAK] = "break", [N_CONTINUE] = "continue",
	[N_SLICE] = "slice",
	[N_INSTANT] = "instant", [N_COUNTER] = "counter", [N_FLOW] = "flow",
	[N_SPAN] = "span", [N_TRACK_NAME] = "track-name", [N_SCHED] = "sched", [N_WITH] = "with",
	[N_KEYREF] = "keyref", [N_INT] = "int", [N_STR] = "str", [N_IDENT] = "ident",
	[N_LOCAL] = "local", [N_ARGS] = "args", [N_FIELD] = "field",
	[N_INDEX] = "index", [N_MAP_REF] = "map", [N_CALL] = "call",
	[N_BINOP] = "binop", [N_UNOP] = "unop", [N_TERNARY] = "?:",
	[N_DEFAULT] = "??", [N_CAST] = "cast", [N_TUPLE] = "tuple", [N_TYPE] = "type",
};

const char *node_kind_name(enum node_kind k)
{
	return k < N_KIND_COUNT && kind_names[k] ? kind_names[k] : "?";
}

const char *type_text(const struct type *t, char *buf, size_t len)
{
	switch (t->kind) {
	case T_INT: snprintf(buf, len, "%s%d", t->is_signed ? "s" : "u", t->size * 8); break;
	case T_PTR: snprintf(buf, len, "ptr(btf %d)", t->btf); break;
	case T_STR: snprintf(buf, len, "str[%d]", t->size); break;
	case T_SHOW: snprintf(buf, len, "shown"); break;
	case T_VOID: snprintf(buf, len, "void"); break;
	case T_TUPLE: snprintf(buf, len, "tuple %d", t->tuple); break;
	default: snprintf(buf, len, "?"); break;
	}
	return buf;
}

static const char *const ref_names[REF_KIND_COUNT] = {
	[REF_BUILTIN] = "builtin", [REF_ARG] = "arg", [REF_COMPUTED] = "computed arg", [REF_ABSENT] = "absent arg",
	[REF_PROBE] = "probe", [REF_CONST] = "const", [REF_FUNC_NAME] = "func", [REF_TUPLE_ITEM] = "tuple item", [REF_ENUM] = "enum", [REF_LOCAL] = "local",
	[REF_MAP] = "map", [REF_TABLE] = "table", [REF_ELEMENT] = "element", [REF_MEMBER] = "member",
	[REF_MEMBER_ADDR] = "member address", [REF_BITFIELD] = "bitfield", [REF_FUNCTION] = "function",
	[REF_MACRO] = "fn",
};

/* What the checker found: " : u32 = local 0". */
static void annotation_dump(const struct node *n, FILE *f)
{
	char buf[64];
	if (n->type.kind != T_NONE)
		fprintf(f, " : %s", type_text(&n->type, buf, sizeof(buf)));
	if (n->ref == REF_NONE || n->ref == REF_STATEMENT)   /* a statement stands for no value */
		return;
	fprintf(f, " = %s", ref_names[n->ref]);
	switch (n->ref) {
	case REF_BUILTIN: case REF_ARG: case REF_COMPUTED: case REF_LOCAL: case REF_MAP: case REF_TABLE:
	case REF_FUNCTION:
		fprintf(f, " %d", n->sym);
		break;
	case REF_ENUM:
		fprintf(f, " %lld", (long long)n->num);
		break;
	default:
		break;
	}
}

static const char *op_name(int op)
{
	static char buf[2];
	switch (op) {
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LE: return "<=";
	case OP_GE: return ">=";
	case OP_AND: return "&&";
	case OP_OR: return "||";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	case OP_BEGIN: return "begin";
	case OP_STEP: return "step";
	case OP_END: return "end";
	case OP_PHASE: return "phase";
	case 0: return NULL;
	default: buf[0] = (char)op; return buf;
	}
}

void ast_dump(const struct node *n, int depth, bool typed, void *file)
{
	FILE *f = file;
	for (; n; n = n->next) {
		fprintf(f, "%*s%s", depth * 2, "", node_kind_name(n->kind));
		if (n->str)
			fprintf(f, " \"%s\"", n->str);
		if (n->kind == N_INT && n->op == 'u')
			fprintf(f, " %llu", (unsigned long long)n->num);
		else if (n->kind == N_INT || n->kind == N_TABLE_ENTRY)
			fprintf(f, " %lld", (long long)n->num);
		if (op_name(n->op) && n->kind != N_INT)
			fprintf(f, " %s", op_name(n->op));
		if (typed)
			annotation_dump(n, f);
		fprintf(f, "  @%d:%d\n", n->loc.line, n->loc.col);
		ast_dump(n->a, depth + 1, typed, f);
		ast_dump(n->b, depth + 1, typed, f);
		ast_dump(n->c, depth + 1, typed, f);
		ast_dump(n->d, depth + 1, typed, f);
		if (typed && n->resolved) {   /* a constant's value, a function's body */
			fprintf(f, "%*s=>\n", (depth + 1) * 2, "");
			ast_dump(n->resolved, depth + 2, typed, f);
		}
	}
}
