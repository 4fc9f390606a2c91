/* The check pass over expressions: each gets its type, each name what it
 * stands for (ast.h, node_ref), and each misuse an error. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/check.h"

const char *type_name(const struct type *t)
{
	switch (t->kind) {
	case T_INT: return "integer";
	case T_PTR: return "pointer";
	case T_STR: return "string";
	case T_SHOW: return "formatted text";
	case T_TUPLE: return "tuple";
	case T_VOID: return "nothing";
	default: return "unknown";
	}
}

const char *a_type(const struct type *t)
{
	switch (t->kind) {
	case T_INT: return "an integer";
	case T_PTR: return "a pointer";
	case T_STR: return "a string";
	case T_TUPLE: return "a tuple";
	default: return type_name(t);
	}
}

/* ---- symbols ---- */

int table_index(struct compiler *c, const char *name)
{
	for (unsigned i = 0; i < c->prog->ntables; i++)
		if (strcmp(c->prog->tables[i].name, name) == 0)
			return (int)i;
	return -1;
}

int naming_table(struct check *ck, const char *name, int64_t key, const char *text)
{
	struct ut_program *p = ck->c->prog;
	int t = table_index(ck->c, name);
	if (t < 0) {
		p->tables = xrealloc_array(p->tables, p->ntables + 1, sizeof(*p->tables));
		t = (int)p->ntables++;
		p->tables[t] = (struct ut_table){.name = xstrdup(name)};
	}
	struct ut_table *tab = &p->tables[t];
	for (unsigned i = 0; i < tab->nentries; i++)
		if (tab->entries[i].key == key)
			return t;
	tab->entries = xrealloc_array(tab->entries, tab->nentries + 1, sizeof(*tab->entries));
	tab->entries[tab->nentries++] = (struct ut_table_entry){.key = key, .name = xstrdup(text)};
	return t;
}

int find_local(struct check *ck, const char *name)
{
	for (unsigned i = 0; i < ck->alt->nlocals; i++)
		if (strcmp(ck->alt->locals[i].name, name) == 0)
			return (int)i;
	return -1;
}

bool in_loop_of(struct check *ck, const char *name)
{
	for (unsigned i = 0; i < ck->loop_depth; i++)
		if (strcmp(ck->loop_vars[i], name) == 0)
			return true;
	return false;
}

struct node *map_loop_of(struct check *ck, const char *name)
{
	for (unsigned i = ck->loop_depth; i-- > 0;)
		if (ck->loop_maps[i] && strcmp(ck->loop_vars[i], name) == 0)
			return ck->loop_maps[i];
	return NULL;
}

/* ---- the entries of a for loop over a map ---- */

/* The loop over a map whose entry field n names ($kv.0, $kv.0.1, $kv.1:
 * N_FIELD down to the loop's variable), its fields' numbers outermost
 * last in path[], their count in *depth; NULL when n is none. */
static struct node *entry_path(struct check *ck, struct node *n, unsigned long path[2], unsigned *depth)
{
	const struct node *chain[3];
	unsigned k = 0;
	for (; n->kind == N_FIELD && k < 3; n = n->a)
		chain[k++] = n;
	struct node *loop = n->kind == N_LOCAL && k <= 2 ? map_loop_of(ck, n->str) : NULL;
	for (unsigned i = 0; loop && i < k; i++) {
		char *end;
		path[k - 1 - i] = strtoul(chain[i]->str, &end, 10);
		if (*end || chain[i]->str[0] < '0' || chain[i]->str[0] > '9')
			path[k - 1 - i] = ~0ul;
	}
	*depth = k;
	return loop;
}

/* A field of a loop's entry: n becomes the entry local it names (a key's
 * value, $kv.0 or $kv.0.I, or the value, $kv.1).  False when n is no such
 * field; true when it was one (an error reported, or n a local). */
static bool entry_field(struct check *ck, struct node *n)
{
	unsigned long path[2];
	unsigned depth;
	struct node *loop = entry_path(ck, n, path, &depth);
	if (!loop)
		return false;
	const struct map_info *m = &ck->c->maps[loop->a->sym];
	int l = -1;
	if (depth == 1 && path[0] == 1)
		l = loop->sym + (int)m->nkeys;
	else if (depth == 1 && path[0] == 0 && m->nkeys == 1)
		l = loop->sym;
	else if (depth == 2 && path[0] == 0 && m->nkeys > 1 && path[1] < m->nkeys)
		l = loop->sym + (int)path[1];
	if (l < 0 && depth == 1 && path[0] == 0)
		ERR(ck, n, "%s.0 is the %u keys of %s, each its own value: %s.0.0 to %s.0.%u (or all of them as a map's "
		    "keys, @m[%s.0])", loop->str, m->nkeys, m->name, loop->str, loop->str, m->nkeys - 1, loop->str);
	else if (l < 0 && m->nkeys > 1)
		ERR(ck, n, "an entry of %s has its keys %s.0.0 to %s.0.%u and its value %s.1", m->name, loop->str,
		    loop->str, m->nkeys - 1, loop->str);
	else if (l < 0)
		ERR(ck, n, "an entry of %s has its key %s.0 and its value %s.1", m->name, loop->str, loop->str);
	if (l < 0)
		return true;
	const struct local *local = &ck->alt->locals[l];
	node_free_children(n);
	n->kind = N_LOCAL;
	n->a = n->b = n->c = n->d = n->resolved = NULL;
	n->str = xstrdup(local->name);
	n->ref = REF_LOCAL;
	n->sym = l;
	n->type = local->type;
	return true;
}

/* @m2[$kv.0] of a loop over a map of several keys: its keys, each an
 * entry field ($kv.0.0, $kv.0.1, ...), in place of the one. */
static void entry_keys(struct check *ck, struct node *ref)
{
	unsigned long path[2];
	unsigned depth;
	struct node *loop = ref->a && !ref->a->next ? entry_path(ck, ref->a, path, &depth) : NULL;
	if (!loop || depth != 1 || path[0] != 0 || ck->c->maps[loop->a->sym].nkeys < 2)
		return;
	struct node *whole = ref->a;
	struct node_list keys = {0};
	for (unsigned k = 0; k < ck->c->maps[loop->a->sym].nkeys; k++) {
		struct node *f = node_new(N_FIELD, whole->loc);
		f->a = node_clone(whole);
		f->str = xasprintf("%u", k);
		node_list_push(&keys, f);
	}
	ref->a = keys.head;
	node_free(whole);
}

/* ---- tuples ---- */

static bool same_type(const struct type *a, const struct type *b)
{
	return a->kind == b->kind && a->size == b->size && a->is_signed == b->is_signed && a->btf == b->btf &&
	       a->user == b->user && a->show == b->show && a->table == b->table && a->time_format == b->time_format;
}

/* The tuple type of n elements of types els (made when new). */
static int tuple_type(struct compiler *c, const struct type *els, unsigned n)
{
	for (unsigned i = 0; i < c->ntuples; i++) {
		unsigned same = c->tuples[i].n == n ? 0 : n + 1;
		while (same < n && same_type(&c->tuples[i].el[same], &els[same]))
			same++;
		if (same == n)
			return (int)i;
	}
	c->tuples = xrealloc_array(c->tuples, c->ntuples + 1, sizeof(*c->tuples));
	struct tuple_info *t = &c->tuples[c->ntuples];
	*t = (struct tuple_info){.n = n};
	for (unsigned i = 0; i < n; i++) {
		t->el[i] = els[i];
		t->offset[i] = t->size;
		t->size += els[i].kind == T_STR ? ((uint32_t)els[i].size + 7) & ~7u : 8;
	}
	return (int)c->ntuples++;
}

int tuple_merge(struct compiler *c, int a, int b, int min_string)
{
	const struct tuple_info *ta = &c->tuples[a], *tb = &c->tuples[b];
	if (ta->n != tb->n)
		return -1;
	struct type els[TUPLE_MAX];
	for (unsigned i = 0; i < ta->n; i++) {
		els[i] = ta->el[i];
		if (els[i].kind != tb->el[i].kind)
			return -1;
		if (els[i].kind == T_STR) {
			int size = els[i].size > tb->el[i].size ? els[i].size : tb->el[i].size;
			els[i] = t_str(size > min_string ? size : min_string);
		}
	}
	return tuple_type(c, els, ta->n);
}

/* (a, b, ...): integers, pointers and strings (a map key's kinds). */
static void tuple_expr(struct check *ck, struct node *n)
{
	struct type els[TUPLE_MAX];
	unsigned count = 0;
	for (struct node *e = n->a; e; e = e->next, count++) {
		check_expr(ck, e);
		if (count == TUPLE_MAX) {
			ERR(ck, e, "a tuple holds at most %d values", TUPLE_MAX);
			return;
		}
		els[count] = e->type;
		els[count].direct = false;   /* copied into the tuple */
		if (e->type.kind == T_NONE)
			return;   /* reported */
		if (e->type.kind != T_INT && e->type.kind != T_PTR && e->type.kind != T_STR) {
			ERR(ck, e, "a tuple holds integers, pointers and strings, not %s", a_type(&e->type));
			return;
		}
	}
	n->type = (struct type){.kind = T_TUPLE, .tuple = (int16_t)tuple_type(ck->c, els, count)};
}

/* $t.0: an element of a tuple. */
static void tuple_item(struct check *ck, struct node *n)
{
	const struct tuple_info *t = &ck->c->tuples[n->a->type.tuple];
	char *end;
	unsigned long i = strtoul(n->str, &end, 10);
	if (*end || n->str[0] < '0' || n->str[0] > '9' || i >= t->n) {
		ERR(ck, n, "a tuple of %u values has elements .0 to .%u, not .%s", t->n, t->n - 1, n->str);
		return;
	}
	n->type = t->el[i];
	n->ref = REF_TUPLE_ITEM;
	n->sym = (int)i;
}

/* ---- fields of kernel structs ---- */

/* Type of a BTF type id as a script value. */
static int btf_value_type(struct compiler *c, int32_t id, struct type *out)
{
	struct ut_ktype kt;
	if (ut_kernel_type(c->k, id, &kt) < 0)
		return -1;
	switch (kt.kind) {
	case UT_KT_INT: case UT_KT_ENUM:
		*out = t_int(kt.size ? (int)kt.size : 8, kt.is_signed);
		return 0;
	case UT_KT_BOOL:
		*out = t_int(1, false);
		return 0;
	case UT_KT_PTR:
		*out = t_ptr(kt.target);
		return 0;
	case UT_KT_ARRAY: {
		struct ut_ktype el;
		if (ut_kernel_type(c->k, kt.target, &el) == 0 && el.is_char) {
			*out = t_str((int)kt.nelems);
			return 0;
		}
		return -1;
	}
	case UT_KT_STRUCT: case UT_KT_UNION:
		/* embedded: used as the address of the member */
		*out = t_ptr(kt.id);
		out->size = 0;
		return 0;
	default:
		return -1;
	}
}

static void field_of_ptr(struct check *ck, struct node *n, const struct type *base)
{
	struct compiler *c = ck->c;
	struct ut_ktype kt;
	char pointee[160] = "";
	if (base->btf > 0 && ut_kernel_type(c->k, base->btf, &kt) == 0 && kt.kind != UT_KT_STRUCT &&
	    kt.kind != UT_KT_UNION && ut_kernel_type_c(c->k, base->btf, pointee, sizeof(pointee))[0]) {
		ERR(ck, n, "cannot take field '%s' of a pointer to %s, which is not a struct", n->str, pointee);
		return;
	}
	if (base->btf <= 0 || ut_kernel_type(c->k, base->btf, &kt) < 0 ||
	    (kt.kind != UT_KT_STRUCT && kt.kind != UT_KT_UNION)) {
		ERR(ck, n, "cannot take field '%s' of a pointer to an unknown type; cast it first, e.g. ((struct io_kiocb *)args.req).%s",
		    n->str, n->str);
		return;
	}
	struct ut_member m;
	if (ut_kernel_member(c->k, base->btf, n->str, &m) < 0) {
		char **names = NULL;
		int nn = ut_kernel_member_names(c->k, base->btf, &names);
		const char *s = nn > 0 ? ut_suggest(n->str, names, (unsigned)nn) : NULL;
		if (s)
			ERR(ck, n, "no field '%s' in struct %s (did you mean '%s'?)", n->str, kt.name, s);
		else
			ERR(ck, n, "no field '%s' in struct %s", n->str, kt.name);
		ut_strv_free(names, nn);
		return;
	}
	struct type ft;
	if (btf_value_type(c, m.type, &ft) < 0) {
		char buf[160];
		ERR(ck, n, "field '%s' has type '%s', which scripts cannot read (integers, pointers, char arrays and structs can)",
		    n->str, ut_kernel_type_c(c->k, m.type, buf, sizeof(buf)));
		return;
	}
	if (base->user && m.bitfield_size) {
		ERR(ck, n, "field '%s' is a bitfield, which scripts read in kernel memory only, not in a user-space struct",
		    n->str);
		return;
	}
	n->type = ft;
	n->type.direct = ft.kind == T_PTR && base->direct;
	/* a field of user memory is read there; a pointer in it points there */
	n->type.user = base->user && ft.kind == T_PTR;
	n->ref = m.bitfield_size ? REF_BITFIELD : REF_MEMBER;
	if (ft.kind == T_PTR && ft.size == 0) {
		n->type.size = 8;
		n->ref = REF_MEMBER_ADDR;
	}
}

/* " (did you mean 'X'?)" for the candidate nearest name, in hint; "" when
 * none is near. */
static void near_name(char *hint, size_t len, const char *name, char *const *cands, unsigned n)
{
	const char *s = ut_suggest(name, cands, n);
	hint[0] = 0;
	if (s)
		snprintf(hint, len, " (did you mean '%s'?)", s);
}

/* ---- probe arguments ---- */

/* The argument of the alternative named name, or NULL; notes the read. */
static const struct probe_arg *find_arg(struct check *ck, const char *name)
{
	for (unsigned i = 0; i < ck->alt->nargs; i++)
		if (strcmp(ck->alt->args[i].name, name) == 0) {
			ck->reads_args = true;
			return &ck->alt->args[i];
		}
	return NULL;
}

static bool is_return_probe(struct check *ck)
{
	return ck->alt->def->entry_kind != NULL;
}

/* A function's argument read at its return, where the registers that held
 * it hold other values. */
static void argument_at_return(struct check *ck, struct node *n, const char *what)
{
	const char *dot = strchr(what, '.');
	ERR(ck, n, "'%s' is not available in %s probes: at the return the argument registers hold other values; "
	    "keep it in a map in a %s of the function (@%s[tid] = %s) and read that here%s",
	    what, probe_kind_name(ck->alt->alt->kind), ck->alt->def->entry_kind, dot ? dot + 1 : what, what,
	    ck->alt->def->args_elsewhere);
}

static void no_such_arg(struct check *ck, struct node *n)
{
	struct alt_ctx *a = ck->alt;
	if (a->def->names_parameter && a->def->names_parameter(ck->c->k, a->target, n->str)) {
		char *what = xasprintf("args.%s", n->str);
		argument_at_return(ck, n, what);
		free(what);
		return;
	}
	char **names = xcalloc(a->nargs + 1, sizeof(char *));
	for (unsigned i = 0; i < a->nargs; i++)
		names[i] = a->args[i].name;
	const char *s = ut_suggest(n->str, names, a->nargs);
	if (s)
		ERR(ck, n, "no argument '%s' in %s (did you mean '%s'?)", n->str, a->spec, s);
	else if (a->nargs)
		ERR(ck, n, "no argument '%s' in %s (it has: %s%s%s%s%s)", n->str, a->spec, names[0],
		    a->nargs > 1 ? ", " : "", a->nargs > 1 ? names[1] : "",
		    a->nargs > 2 ? ", " : "", a->nargs > 2 ? "..." : "");
	else
		ERR(ck, n, "%s has no arguments", a->spec);
	free(names);
}

/* arg0.., retval: registers; their absence says which the probe has. */
static void register_arg(struct check *ck, struct node *n)
{
	const struct probe_arg *a = find_arg(ck, n->str);
	if (a) {
		n->type = a->type;
		n->ref = REF_ARG;
		n->sym = (int)(a - ck->alt->args);
		return;
	}
	unsigned regs = 0;   /* arg0 .. arg(regs-1) */
	char name[8] = "arg0";
	while (regs < 6 && find_arg(ck, name))
		name[3] = (char)('0' + ++regs);
	if (n->str[0] == 'a' && is_return_probe(ck))
		argument_at_return(ck, n, n->str);
	else if (n->str[0] == 'a' && regs)
		ERR(ck, n, "'%s' is not available in %s, which has %s%u", n->str, ck->alt->spec,
		    regs > 1 ? "arg0 to arg" : "only arg", regs - 1);
	else if (n->str[0] == 'a' && ck->alt->def->numbered_params)
		ERR(ck, n, "'%s' is not available in %s: the function takes no arguments", n->str, ck->alt->spec);
	else
		ERR(ck, n, "'%s' is not available in %s probes", n->str, probe_kind_name(ck->alt->alt->kind));
}

/* The computed argument name of the alternative (not inside one). */
static struct node *computed_arg(struct check *ck, const char *name)
{
	if (ck->in_computed_arg)
		return NULL;
	for (struct node *f = ck->alt->computed; f; f = f->next)
		if (strcmp(f->str, name) == 0)
			return f;
	return NULL;
}

/* A computed argument's value: its expression is checked at the first
 * use (inside it, args.NAME are the alternative's own), and the use
 * takes its type. */
static void computed_arg_use(struct check *ck, struct node *n, struct node *computed)
{
	struct alt_ctx *a = ck->alt;
	n->ref = REF_COMPUTED;
	for (unsigned i = 0; i < a->ncomputed_args; i++)
		if (a->computed_args[i].field == computed) {
			n->sym = (int)i;
			n->type = a->computed_args[i].value->type;
			return;
		}
	struct node *value = node_clone(computed->a);
	int errors = ck->c->d->errors;
	ck->in_computed_arg = true;
	check_expr(ck, value);
	ck->in_computed_arg = false;
	if (ck->c->d->errors > errors)
		diag_note(ck->c->d, "in args.%s of %s, used at %s:%d:%d", n->str, a->spec, n->loc.file, n->loc.line,
			  n->loc.col);
	a->computed_args = xrealloc_array(a->computed_args, a->ncomputed_args + 1, sizeof(*a->computed_args));
	a->computed_args[a->ncomputed_args] = (struct computed_arg){computed, value};
	n->sym = (int)a->ncomputed_args++;
	n->type = value->type;
}

/* args.NAME: a probe argument, computed or the kernel's. */
static void arg_field(struct check *ck, struct node *n)
{
	struct node *computed = computed_arg(ck, n->str);
	if (computed) {
		computed_arg_use(ck, n, computed);
		return;
	}
	const struct probe_arg *a = find_arg(ck, n->str);
	if (!a) {
		no_such_arg(ck, n);
		return;
	}
	n->type = a->type;
	n->ref = REF_ARG;
	n->sym = (int)(a - ck->alt->args);
}

static bool is_args_field(const struct node *f)
{
	return f->kind == N_FIELD && f->a->kind == N_IDENT && strcmp(f->a->str, "args") == 0;
}

static void field_expr(struct check *ck, struct node *n)
{
	if (entry_field(ck, n))
		return;
	if (is_args_field(n)) {
		arg_field(ck, n);
		return;
	}
	check_expr(ck, n->a);
	if (n->a->type.kind == T_TUPLE) {
		tuple_item(ck, n);
		return;
	}
	if (n->a->type.kind != T_PTR) {
		if (n->a->type.kind != T_NONE)
			ERR(ck, n, "'.%s' needs a pointer or struct, but this is %s", n->str, a_type(&n->a->type));
		return;
	}
	field_of_ptr(ck, n, &n->a->type);
}

/* ---- kernel enumerators ---- */

/* A name that can only be a kernel enumerator (not a constant or builtin). */
static bool names_enumerator(struct check *ck, const struct node *n)
{
	return n->kind == N_IDENT && strcmp(n->str, "args") != 0 && !find_decl(ck->c->consts, ck->c->nconsts, n->str) &&
	       !builtin_named(n->str);
}

/* n becomes a use of the kernel enumerator named by name_node (n itself or
 * one of its children): an entry of the program's enums (one per name and
 * use), whose value the runtime looks up on the kernel that runs the
 * script. */
static void enum_use(struct check *ck, struct node *n, const struct node *name_node, enum ut_enum_use use,
		     int64_t fallback)
{
	struct ut_program *p = ck->c->prog;
	char *name = xstrdup(name_node->str);
	unsigned i = 0;
	while (i < p->nenums && !(strcmp(p->enums[i].name, name) == 0 && p->enums[i].use == (unsigned)use &&
				  p->enums[i].fallback == fallback))
		i++;
	if (i == p->nenums) {
		p->enums = xrealloc_array(p->enums, p->nenums + 1, sizeof(*p->enums));
		p->enums[p->nenums++] = (struct ut_enum_ref){.name = xstrdup(name), .loc = n->loc, .use = use,
							      .fallback = fallback};
	}
	int64_t v = 0;
	if (use == UT_ENUM_EXISTS)
		v = ut_kernel_enum_value(ck->c->k, name, &v) == 0;
	else if (ut_kernel_enum_value(ck->c->k, name, &v) != 0)
		v = fallback;
	node_free_children(n);
	n->a = n->b = n->c = n->d = n->resolved = NULL;
	n->kind = N_IDENT;
	n->str = name;
	n->ref = REF_ENUM;
	n->sym = (int)i;
	n->num = v;   /* on the compiling kernel, for dumps */
	n->type = use == UT_ENUM_EXISTS ? t_int(1, false) : t_int(8, v < 0);
}

/* exists(NAME) of an enumerator: whether the running kernel has it. */
bool check_enum_exists(struct check *ck, struct node *call, struct node *arg)
{
	if (!names_enumerator(ck, arg))
		return false;
	enum_use(ck, call, arg, UT_ENUM_EXISTS, 0);
	return true;
}

/* NAME ?? fallback of an enumerator: the fallback (a constant) where the
 * running kernel lacks it. */
static void enum_default(struct check *ck, struct node *n)
{
	int64_t fallback;
	check_expr(ck, n->b);
	if (!const_int(ck->c, n->b, &fallback, 0)) {
		ERR(ck, n->b, "the default of enumerator %s is a constant integer: %s ?\? 0", n->a->str, n->a->str);
		return;
	}
	enum_use(ck, n, n->a, UT_ENUM_OR_DEFAULT, fallback);
}

/* args.NAME ?? default: the default where this kernel has no such
 * argument (the field is REF_ABSENT, left unchecked). */
static void default_expr(struct check *ck, struct node *n)
{
	struct node *f = n->a;
	if (names_enumerator(ck, f)) {
		enum_default(ck, n);
		return;
	}
	if (!is_args_field(f)) {
		ERR(ck, n, "'?\?' gives a default for a probe argument that may not exist: args.NAME ?\? value");
		return;
	}
	check_expr(ck, n->b);
	const struct probe_arg *a = find_arg(ck, f->str);
	if (!a && !computed_arg(ck, f->str)) {
		f->ref = REF_ABSENT;
		n->type = n->b->type;
		return;
	}
	check_expr(ck, f);
	n->type = f->type;
	/* a pointer argument may default to another way of finding it (a
	 * request's ring when the record lacks ctx) */
	if (!is_cond(&f->type) || !is_cond(&n->b->type) || (is_int(&f->type) && !is_int(&n->b->type)))
		ERR(ck, n, "'?\?' works on integer and pointer arguments, with a default of the same kind");
}

/* exists(args.NAME) names its argument without reading it. */
void check_exists_arg(struct check *ck, struct node *f)
{
	if (!is_args_field(f)) {
		ERR(ck, f, "exists() takes a probe argument or a kernel enumerator: exists(args.NAME), exists(NAME)");
		return;
	}
	if (computed_arg(ck, f->str)) {
		f->ref = REF_COMPUTED;
		return;
	}
	const struct probe_arg *a = find_arg(ck, f->str);
	f->ref = a ? REF_ARG : REF_ABSENT;
	f->sym = a ? (int)(a - ck->alt->args) : -1;
}

/* ---- names ---- */

static void const_value(struct check *ck, struct node *n, struct node *decl)
{
	if (decl->sym == -2) {
		ERR(ck, n, "constant '%s' is defined in terms of itself", n->str);
		return;
	}
	int saved = decl->sym;
	decl->sym = -2;
	n->ref = REF_CONST;
	n->resolved = node_clone(decl->a);
	check_expr(ck, n->resolved);
	decl->sym = saved;
	n->type = n->resolved->type;
	if (n->type.kind != T_INT && n->type.kind != T_STR && n->type.kind != T_NONE)
		ERR(ck, n, "constant '%s' must be an integer or a string", n->str);
}

static void ident_expr(struct check *ck, struct node *n)
{
	struct compiler *c = ck->c;
	const struct builtin *b = builtin_named(n->str);
	if (b && b->check) {
		b->check(ck, n);
		return;
	}
	if (b) {
		n->ref = REF_BUILTIN;
		n->sym = (int)(b - builtins);
		n->type = b->type;
		n->type.show = b->show;
		if (b->btf_struct)
			n->type.btf = ut_kernel_struct(c->k, b->btf_struct);
		c->uses_stacks |= b->show == UT_SHOW_KSTACK || b->show == UT_SHOW_USTACK;
		return;
	}
	if (strcmp(n->str, "retval") == 0 || (strncmp(n->str, "arg", 3) == 0 && n->str[3] >= '0' && n->str[3] <= '9')) {
		register_arg(ck, n);
		return;
	}
	if (strcmp(n->str, "args") == 0) {
		ERR(ck, n, "'args' is used with a field: args.NAME");
		return;
	}
	struct node *k = find_decl(c->consts, c->nconsts, n->str);
	if (k) {
		const_value(ck, n, k);
		return;
	}
	int64_t v;
	if (ut_kernel_enum_value(c->k, n->str, &v) == 0) {
		enum_use(ck, n, n, UT_ENUM_VALUE, 0);
		return;
	}
	/* the builtins, the constants, and the probe's arguments as args.NAME */
	unsigned nb = 0;
	while (builtins[nb].name)
		nb++;
	char **names = xcalloc(nb + c->nconsts + 1, sizeof(char *));
	unsigned nn = 0;
	for (unsigned i = 0; i < nb; i++)
		names[nn++] = (char *)builtins[i].name;
	for (unsigned i = 0; i < c->nconsts; i++)
		names[nn++] = c->consts[i]->str;
	char hint[160];
	bool is_arg = false;
	for (unsigned i = 0; i < ck->alt->nargs && !is_arg; i++)
		is_arg = strcmp(ck->alt->args[i].name, n->str) == 0;
	if (is_arg)
		snprintf(hint, sizeof(hint), " (did you mean 'args.%s'?)", n->str);
	else
		near_name(hint, sizeof(hint), n->str, names, nn);
	if (hint[0])
		ERR(ck, n, "unknown name '%s'%s", n->str, hint);
	else
		ERR(ck, n, "unknown name '%s' (not a builtin, constant or kernel enum value)", n->str);
	free(names);
}

bool is_positional(const char *name)
{
	return name[0] == '$' && (strcmp(name, "$#") == 0 || (name[1] >= '0' && name[1] <= '9'));
}

/* $1 ..: the script's positional parameters, as given after it; one that
 * reads as an integer is one, any other a string; one not given is 0
 * (and "" to str()), as in bpftrace.  $# is how many there are. */
static void positional(struct check *ck, struct node *n)
{
	const struct ut_compile_opts *o = ck->c->opts;
	struct node *v;
	if (strcmp(n->str, "$#") == 0) {
		v = node_new(N_INT, n->loc);
		v->num = o->npositional;
	} else {
		unsigned long i = strtoul(n->str + 1, NULL, 10);
		const char *text = i >= 1 && i <= o->npositional ? o->positional[i - 1] : NULL;
		char *end = NULL;
		long long num = text ? strtoll(text, &end, 0) : 0;
		v = node_new(text && (!*text || *end) ? N_STR : N_INT, n->loc);
		if (v->kind == N_STR)
			v->str = xstrdup(text);
		v->num = num;
	}
	stands_for(ck, n, v);
}

void stands_for(struct check *ck, struct node *n, struct node *value)
{
	node_free(n->resolved);
	n->resolved = value;
	n->ref = REF_CONST;
	check_expr(ck, value);
	n->type = value->type;
}

static void local_expr(struct check *ck, struct node *n)
{
	if (is_positional(n->str)) {
		positional(ck, n);
		return;
	}
	struct node *loop = map_loop_of(ck, n->str);
	if (loop) {
		ERR(ck, n, "%s is an entry of %s: %s.0 is its key, %s.1 its value", n->str, loop->a->str, n->str, n->str);
		return;
	}
	int l = find_local(ck, n->str);
	for (unsigned i = 0; l < 0 && i < ck->alt->nlocals; i++) {
		const struct node *over = ck->alt->locals[i].entry_of;
		if (over && strcmp(over->str, n->str) == 0) {
			ERR(ck, n, "%s is the entry of the for loop over %s at %d:%d, and exists only in its body; copy %s.0 "
			    "or %s.1 to another local there to keep it", n->str, over->a->str, over->loc.line, over->loc.col,
			    n->str, n->str);
			return;
		}
	}
	if (l < 0) {
		char **names = xcalloc(ck->alt->nlocals + 1, sizeof(char *)), hint[160];
		for (unsigned i = 0; i < ck->alt->nlocals; i++)
			names[i] = ck->alt->locals[i].name;
		near_name(hint, sizeof(hint), n->str, names, ck->alt->nlocals);
		free(names);
		ERR(ck, n, "local %s is used before it is assigned%s", n->str, hint);
		return;
	}
	const struct local *local = &ck->alt->locals[l];
	if (local->loop_var && !in_loop_of(ck, n->str)) {
		ERR(ck, n, "%s is the variable of the for loop at %d:%d, and exists only in its body; "
		    "copy it to another local there to keep it", n->str, local->loc.line, local->loc.col);
		return;
	}
	n->ref = REF_LOCAL;
	n->sym = l;
	n->type = local->type;
}

/* ---- operators ---- */

static void binop_expr(struct check *ck, struct node *n)
{
	bool logic = n->op == OP_AND || n->op == OP_OR;
	check_expr(ck, n->a);
	check_expr(ck, n->b);
	struct type *ta = &n->a->type, *tb = &n->b->type;
	bool cmp = n->op == OP_EQ || n->op == OP_NE;
	if (cmp && ta->kind == T_STR && tb->kind == T_STR) {
		n->type = t_int(1, false);
		return;
	}
	if (cmp && ta->kind == T_PTR && (tb->kind == T_PTR || tb->kind == T_INT)) {
		n->type = t_int(1, false);
		return;
	}
	if (logic ? !is_cond(ta) || !is_cond(tb) : !is_int(ta) || !is_int(tb)) {
		const struct type *bad = (logic ? is_cond(ta) : is_int(ta)) ? tb : ta;
		bool compare = n->op == OP_EQ || n->op == OP_NE || n->op == '<' || n->op == '>' ||
			       n->op == OP_LE || n->op == OP_GE;
		if (compare && bad->kind == T_STR && tb->kind != ta->kind)
			ERR(ck, n, "cannot compare a string with %s", a_type(is_int(ta) ? ta : tb));
		else
			ERR(ck, n, "this operator needs %s, but an operand is %s", logic ? "integers or pointers" : "integers",
			    a_type(bad));
		return;
	}
	/* not strchr("<>", op): ops from 256 on would match its NUL */
	bool logical = n->op == '<' || n->op == '>' || n->op == OP_EQ || n->op == OP_NE || n->op == OP_LE ||
		       n->op == OP_GE || n->op == OP_AND || n->op == OP_OR;
	n->type = logical ? t_int(1, false) : t_int(8, binop_signed(n));
	/* what C leaves undefined, with a constant: clang folds it to anything
	 * (5 / (1 - 1) stored stack garbage, 1 << 200 a warning and 0) */
	bool divides = n->op == '/' || n->op == '%', shifts = n->op == OP_SHL || n->op == OP_SHR;
	int64_t k;
	if (divides && const_int(ck->c, n->b, &k, 0) && k == 0)
		ERR(ck, n, "division by zero");
	if (shifts && const_int(ck->c, n->b, &k, 0) && (uint64_t)k > 63)
		ERR(ck, n, "shift count %lld is out of range: shifts take 0 to 63", (long long)k);
}

static void ternary_expr(struct check *ck, struct node *n)
{
	check_expr(ck, n->a);
	check_expr(ck, n->b);
	check_expr(ck, n->c);
	if (!is_cond(&n->a->type))
		ERR(ck, n->a, "the condition must be an integer or a pointer, not %s", a_type(&n->a->type));
	const struct type *tb = &n->b->type, *tc = &n->c->type;
	if (is_int(tb) && is_int(tc)) {
		n->type = t_int(8, tb->is_signed || tc->is_signed);
	} else if (tb->kind == T_STR && tc->kind == T_STR) {
		n->type = t_str(tb->size > tc->size ? tb->size : tc->size);
	} else if (is_cond(tb) && is_cond(tc)) {
		/* a pointer either way (an integer branch is an address, 0 is NULL),
		 * typed when the pointer branches agree */
		const struct type *p = tb->kind == T_PTR ? tb : tc, *q = tc->kind == T_PTR ? tc : tb;
		n->type = *p;
		n->type.direct = false;   /* either branch may be NULL or a plain integer */
		if (q->kind == T_PTR && (p->btf != q->btf || p->user != q->user))
			n->type = t_ptr(0);
	} else {
		ERR(ck, n, "both branches of ?: must be integers, pointers or strings, not %s and %s", a_type(tb), a_type(tc));
	}
}

int scalar_type_bytes(const char *spelling)
{
	return strcmp(spelling, "bool") == 0 ? 1 : atoi(spelling + 1) / 8;
}

static void cast_expr(struct check *ck, struct node *n)
{
	check_expr(ck, n->a);
	if (strncmp(n->str, "struct ", 7) == 0) {
		char name[128];
		int stars = 0;
		snprintf(name, sizeof(name), "%s", n->str + 7);
		char *sp = strchr(name, ' ');
		if (sp) {
			for (char *q = sp; *q; q++)
				stars += *q == '*';
			*sp = 0;
		}
		int32_t id = ut_kernel_struct(ck->c->k, name);
		if (id < 0) {
			ERR(ck, n, "no struct %s in the kernel's BTF", name);
			id = 0;
		}
		if (stars != 1)
			ERR(ck, n, "casts to struct pointers take one '*'");
		if (n->a->type.kind != T_PTR && !is_int(&n->a->type))
			ERR(ck, n, "cannot cast %s to a pointer", a_type(&n->a->type));
		/* an unknown struct is reported once: its uses stay untyped */
		n->type = id > 0 ? t_ptr(id) : (struct type){.kind = T_NONE};
		/* to its own type: still the pointer the verifier knows */
		n->type.direct = id > 0 && n->a->type.kind == T_PTR && n->a->type.direct && n->a->type.btf == id;
	} else if (strcmp(n->str, "ptr") == 0) {
		n->type = t_ptr(0);
	} else {
		bool is_bool = strcmp(n->str, "bool") == 0;
		if (!(n->a->type.kind == T_STR && !is_bool) && n->a->type.kind != T_PTR && !is_int(&n->a->type))
			ERR(ck, n, "cannot cast %s to %s", a_type(&n->a->type), n->str);
		n->type = t_int(scalar_type_bytes(n->str), n->str[0] == 's');
	}
}

/* ---- indexes and maps ---- */

/* p[i] on a typed pointer: element i, as C reads it (gen_expr.c); *p is
 * p[0].  Elements are pointers or integers (struct sizes are not
 * relocated); those of a user pointer are in user memory, and a pointer
 * among them points there too.  *x of an integer is the 64-bit value at
 * that address, as bpftrace reads it (*kaddr("avenrun"), *($a + 8)). */
static void pointer_index(struct check *ck, struct node *n)
{
	check_expr(ck, n->a);
	check_expr(ck, n->b);
	const struct type *bt = &n->a->type;
	const char *op = n->op == '*' ? "'*' reads through" : "'[...]' indexes";
	struct ut_ktype el;
	if (!is_int(&n->b->type)) {
		ERR(ck, n->b, "an index is an integer, not %s", a_type(&n->b->type));
	} else if (bt->kind == T_INT && n->op == '*') {
		n->ref = REF_ELEMENT;
		n->type = t_int(8, false);
	} else if (bt->kind != T_PTR) {
		if (bt->kind != T_NONE)
			ERR(ck, n, "%s a typed pointer%s, but this is %s", op, n->op == '*' ? " or an address" : " (or names a table)",
			    a_type(bt));
	} else if (bt->btf <= 0 || ut_kernel_type(ck->c->k, bt->btf, &el) < 0 ||
		   !(el.kind == UT_KT_PTR || el.kind == UT_KT_INT || el.kind == UT_KT_ENUM || el.kind == UT_KT_BOOL)) {
		char buf[160];
		ERR(ck, n, "%s pointers to pointers or integers, but this points to %s", op,
		    bt->btf > 0 && ut_kernel_type_c(ck->c->k, bt->btf, buf, sizeof(buf))[0] ? buf : "an unknown type");
	} else if (btf_value_type(ck->c, bt->btf, &n->type) == 0) {
		n->ref = REF_ELEMENT;
		n->type.user = bt->user && n->type.kind == T_PTR;
	}
}

static void index_expr(struct check *ck, struct node *n)
{
	if (n->op == '*' || n->a->kind != N_IDENT) {
		pointer_index(ck, n);
		return;
	}
	int t = table_index(ck->c, n->a->str);
	check_expr(ck, n->b);
	if (t < 0) {
		ERR(ck, n, "'%s' is not a table (declare it: table %s = { 0: \"name\", ... })", n->a->str, n->a->str);
		return;
	}
	if (!is_int(&n->b->type))
		ERR(ck, n->b, "table keys are integers, not %s", a_type(&n->b->type));
	n->ref = REF_TABLE;
	n->sym = t;
	n->type = n->b->type;
	n->type.kind = T_INT;
	n->type.show = UT_SHOW_TABLE;
	n->type.table = (int16_t)t;
}

struct map_info *map_get(struct check *ck, struct node *ref)
{
	struct compiler *c = ck->c;
	const char *name = ref->str;
	struct map_info *m = NULL;
	for (unsigned i = 0; i < c->nmaps; i++)
		if (strcmp(c->maps[i].name, name) == 0)
			m = &c->maps[i];
	entry_keys(ck, ref);
	if (ref->a && ref->a->kind == N_TUPLE && !ref->a->next) {
		/* @m[(a, b)] is @m[a, b], as in bpftrace */
		struct node *tuple = ref->a;
		ref->a = tuple->a;
		tuple->a = NULL;
		node_free(tuple);
	}
	unsigned nkeys = node_list_len(ref->a);
	if (nkeys > 8) {
		ERR(ck, ref, "maps take at most 8 keys");
		return NULL;
	}
	if (!m) {
		c->maps = xrealloc_array(c->maps, c->nmaps + 1, sizeof(*c->maps));
		m = &c->maps[c->nmaps++];
		memset(m, 0, sizeof(*m));
		m->name = xstrdup(name);
		m->loc = ref->loc;
		m->nkeys = nkeys;
		m->agg = UT_AGG_LAST;
	} else if (m->nkeys != nkeys) {
		ERR(ck, ref, "%s is used with %u key%s here but %u at %d:%d", m->name, nkeys, nkeys == 1 ? "" : "s",
		    m->nkeys, m->loc.line, m->loc.col);
		return NULL;
	}
	ref->ref = REF_MAP;
	ref->sym = (int)(m - c->maps);
	return m;
}

/* A name for a map's key, from the expression that gives it: a local's or
 * a builtin's name, a field's member, a table's last word (io_uring_op:
 * "op"), a function's first argument (errname(args.res): "res"); NULL when
 * none (a constant, arithmetic: the metrics then say key0, key1, ...). */
static const char *key_name_of(const struct node *e)
{
	switch (e->kind) {
	case N_LOCAL:
		return e->str[0] == '$' ? e->str + 1 : e->str;
	case N_IDENT:
		return e->ref == REF_CONST ? NULL : e->str;
	case N_FIELD:
		return e->str;
	case N_INDEX:
		if (e->ref == REF_TABLE && e->a->kind == N_IDENT) {
			const char *last = strrchr(e->a->str, '_');
			return last && last[1] ? last + 1 : e->a->str;
		}
		return NULL;
	case N_CALL:
		return e->a ? key_name_of(e->a) : e->str;
	case N_CAST:
		return key_name_of(e->a);
	default:
		return NULL;
	}
}

/* The keys of a map access: the map takes each key's type (and name)
 * where it has none yet, and a longer string's. */
void check_map_key(struct check *ck, int map, struct node *ref)
{
	unsigned i = 0;
	for (struct node *e = ref->a; e; e = e->next, i++) {
		check_expr(ck, e);
		struct map_info *m = &ck->c->maps[map];   /* the key may read maps: c->maps may have moved */
		struct type *t = &e->type;
		if (t->kind == T_TUPLE) {
			ERR(ck, e, "a tuple is a map's keys when written out: @m[(a, b)] or @m[a, b]; of a tuple $t, "
			    "@m[$t.0, $t.1]");
			continue;
		}
		if (t->kind == T_SHOW || t->kind == T_VOID) {
			ERR(ck, e, "a map key must be an integer, pointer or string, not %s", type_name(t));
			continue;
		}
		if (!m->key_names[i] && key_name_of(e))   /* the first site that gives it one */
			m->key_names[i] = xstrdup(key_name_of(e));
		if (m->key_types[i].kind == T_NONE) {
			m->key_types[i] = *t;
		} else if (m->key_types[i].kind != t->kind) {
			ERR(ck, e, "key %u of %s is %s here but %s elsewhere", i + 1, m->name, a_type(t),
			    a_type(&m->key_types[i]));
		} else if (t->kind == T_STR && t->size > m->key_types[i].size) {
			m->key_types[i].size = t->size;
		}
	}
}

static void map_read_expr(struct check *ck, struct node *n)
{
	struct map_info *m = map_get(ck, n);
	if (!m)
		return;
	if (m->kind == MAP_AGG) {
		ERR(ck, n, "%s holds an aggregation; it can be printed, not read", m->name);
		return;
	}
	if (!m->read_in_bpf)
		m->read_loc = n->loc;
	m->read_in_bpf = true;
	if (m->kind == MAP_UNSET) {
		/* read before the probe that assigns it: maps read in probes hold
		 * integers; compile.c reports maps never assigned at all */
		m->kind = MAP_VALUE;
		m->value_type = t_int(8, true);
	}
	n->type = m->value_type;
	check_map_key(ck, n->sym, n);
}

/* ---- calls ---- */

/* A script function's parameters and the call's arguments. */
struct substitution {
	struct node *params;
	struct node **actual;
};

/* A parameter becomes a copy of its argument, in its place in its list. */
static enum walk_next substitute(struct node *n, void *ctx)
{
	const struct substitution *s = ctx;
	if (n->kind != N_IDENT)
		return WALK_INTO;
	int i = 0;
	for (struct node *p = s->params; p; p = p->next, i++)
		if (strcmp(p->str, n->str) == 0) {
			struct node *copy = node_clone(s->actual[i]), *next = n->next;
			node_free_children(n);
			*n = *copy;
			n->next = next;
			free(copy);
			return WALK_PAST;
		}
	return WALK_INTO;
}

/* A function's own locals are its own: `$x` in fn f becomes `$x_in_f`,
 * so that f called from a probe or a function that has a `$x` of its own
 * leaves that one alone.  (Arguments are substituted after: a caller's
 * local passed as an argument keeps its name.)  One name per function, not
 * per call: two calls in one probe share the stack slot. */
static enum walk_next scope_local(struct node *n, void *ctx)
{
	const char *fn = ctx;
	bool local = n->kind == N_LOCAL || n->kind == N_LOCAL_ASSIGN || n->kind == N_FOR || n->kind == N_FOR_MAP;
	if (local && n->str && n->str[0] == '$' && !isdigit((unsigned char)n->str[1])) {
		char *scoped = xasprintf("%s_in_%s", n->str, fn);
		free(n->str);
		n->str = scoped;
	}
	return WALK_INTO;
}

#define MACRO_NODE_BUDGET 200000

static enum walk_next count_node(struct node *n, void *ctx)
{
	(void)n;
	++*(unsigned long *)ctx;
	return WALK_INTO;
}

struct node *expand_macro(struct check *ck, struct node *n, struct node *fn)
{
	struct compiler *c = ck->c;
	int nargs = (int)node_list_len(n->a);
	int nparams = (int)node_list_len(fn->a);
	if (nargs != nparams) {
		ERR(ck, n, "%s() takes %d argument%s, not %d", fn->str, nparams, nparams == 1 ? "" : "s", nargs);
		return NULL;
	}
	if (ck->macro_depth >= 16) {
		ERR(ck, n, "%s() expands too deeply (is it recursive?)", fn->str);
		return NULL;
	}
	struct node **args = xcalloc((size_t)nargs + 1, sizeof(*args));   /* a script function takes any number */
	collect_args(n->a, args, nargs);
	node_free(n->resolved);
	n->resolved = node_clone(fn->b);
	walk_tree(n->resolved, &(struct walker){.pre = scope_local, .ctx = fn->str});
	walk_tree(n->resolved, &(struct walker){.pre = substitute, .ctx = &(struct substitution){fn->a, args}});
	n->ref = REF_MACRO;
	free(args);
	/* Nested calls that use an argument several times grow exponentially
	 * (fn b(x) = a(a(x)) with a using x 50 times): bound the whole
	 * script's expansions rather than hang writing gigabytes of C. */
	unsigned long before = c->macro_nodes;
	unsigned long nodes = 0;
	walk_list(n->resolved, &(struct walker){.pre = count_node, .ctx = &nodes});
	c->macro_nodes += nodes;
	if (c->macro_nodes > MACRO_NODE_BUDGET) {
		if (before <= MACRO_NODE_BUDGET)
			ERR(ck, n, "expanding %s() here makes the script too large (over %d nodes); "
			    "do nested function calls use their arguments many times?", fn->str, MACRO_NODE_BUDGET);
		node_free(n->resolved);
		n->resolved = NULL;
		n->ref = REF_NONE;
	}
	return n->resolved;
}

void check_expansion(struct check *ck, struct node *n, void (*check_body)(struct check *, struct node *))
{
	int errors = ck->c->d->errors;
	ck->macro_depth++;
	check_body(ck, n->resolved);
	ck->macro_depth--;
	/* the error above is in the body: say which calls (the outer three) */
	if (ck->c->d->errors > errors && ck->macro_depth < 3)
		diag_note(ck->c->d, "in %s() called at %s:%d:%d", n->str, n->loc.file, n->loc.line, n->loc.col);
}

static void call_expr(struct check *ck, struct node *n)
{
	struct node *fn = find_decl(ck->c->fns, ck->c->nfns, n->str);
	if (fn) {
		if (fn->b->kind == N_BLOCK) {
			ERR(ck, n, "%s() is a statement function; call it as a statement", n->str);
			return;
		}
		if (!expand_macro(ck, n, fn))
			return;
		check_expansion(ck, n, check_expr);
		n->type = n->resolved->type;
		return;
	}
	const struct call_def *def = call_named(n->str);
	const struct ut_agg_kind *agg = def ? NULL : ut_agg_named(n->str);
	if (!def && !agg) {
		unsigned ncalls = 0;
		while (calls[ncalls].name)
			ncalls++;
		char **names = xcalloc(ncalls + UT_AGG_KINDS + ck->c->nfns + 1, sizeof(char *)), hint[160];
		unsigned nn = 0;
		for (unsigned i = 0; i < ncalls; i++)
			names[nn++] = (char *)calls[i].name;
		for (unsigned i = 0; i < UT_AGG_KINDS; i++)   /* the aggregations' names */
			if (ut_aggs[i].name)
				names[nn++] = (char *)ut_aggs[i].name;
		for (unsigned i = 0; i < ck->c->nfns; i++)
			names[nn++] = ck->c->fns[i]->str;
		near_name(hint, sizeof(hint), n->str, names, nn);
		ERR(ck, n, "unknown function '%s'%s", n->str, hint);
		free(names);
		return;
	}
	int min_args = def ? def->min_args : (int)agg->nargs, max_args = def ? def->max_args : (int)agg->nargs;
	struct node *args[CALL_MAX_ARGS];
	int nargs = collect_args(n->a, args, CALL_MAX_ARGS);
	if (nargs < min_args || nargs > max_args) {
		if (min_args == max_args)
			ERR(ck, n, "%s() takes %d argument%s, not %d", n->str, min_args, min_args == 1 ? "" : "s", nargs);
		else
			ERR(ck, n, "%s() takes %d to %d arguments, not %d", n->str, min_args, max_args, nargs);
		return;
	}
	if (agg) {
		ERR(ck, n, "%s() is an aggregation: assign it to a map, e.g. @x[comm] = %s(...)", n->str, n->str);
		return;
	}
	n->ref = REF_FUNCTION;
	n->sym = (int)(def - calls);
	if (def->statement) {
		ERR(ck, n, "%s() does not return a value; use it as a statement", n->str);
		n->type = (struct type){.kind = T_VOID};
		return;
	}
	def->check(ck, n, args, nargs);
}

void check_expr(struct check *ck, struct node *n)
{
	n->type = (struct type){0};
	switch (n->kind) {
	case N_INT:
		n->type = t_int(8, n->op != 'u' && n->num < 0);
		return;
	case N_STR: {
		size_t len = strlen(n->str);
		if (len > 254)   /* a string value is a char array of at most 255 */
			ERR(ck, n, "this string has %zu bytes; strings used as values hold at most 254", len);
		n->type = t_str((int)len + 1);
		return;
	}
	case N_IDENT: ident_expr(ck, n); return;
	case N_LOCAL: local_expr(ck, n); return;
	case N_FIELD: field_expr(ck, n); return;
	case N_INDEX: index_expr(ck, n); return;
	case N_MAP_REF: map_read_expr(ck, n); return;
	case N_CALL: call_expr(ck, n); return;
	case N_BINOP: binop_expr(ck, n); return;
	case N_UNOP:
		check_expr(ck, n->a);
		if (n->op == '!' ? !is_cond(&n->a->type) : !is_int(&n->a->type))
			ERR(ck, n, "'%c' needs an integer, not %s", n->op, a_type(&n->a->type));
		n->type = n->op == '!' ? t_int(1, false) : t_int(8, n->op == '-' || n->a->type.is_signed);
		return;
	case N_TERNARY: ternary_expr(ck, n); return;
	case N_DEFAULT: default_expr(ck, n); return;
	case N_CAST: cast_expr(ck, n); return;
	case N_TYPE:
		ERR(ck, n, "'%s' is a type, not a value: sizeof() and offsetof() take types", n->str);
		return;
	case N_TUPLE: tuple_expr(ck, n); return;
	default:
		ERR(ck, n, "this is not an expression");
	}
}
