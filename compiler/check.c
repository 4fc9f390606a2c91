/* Checks one probe alternative's body and writes its BPF C.
 *
 * Every expression gets a type (annotated on the AST for --dump ast) and a
 * C expression.  Statements that produce trace constructs become records:
 * a struct in the generated C and a layout in the program's event table,
 * so the runtime decodes them without knowing the script. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

#define ERR(n, ...) diag_error(c->d, (n)->loc, __VA_ARGS__)

static struct type t_int(int size, bool sgn) { return (struct type){.kind = T_INT, .size = (uint8_t)size, .is_signed = sgn}; }
static struct type t_ptr(int32_t btf) { return (struct type){.kind = T_PTR, .size = 8, .btf = btf}; }
static struct type t_str(int size) { return (struct type){.kind = T_STR, .size = (uint8_t)(size > 255 ? 255 : size)}; }
static struct type t_show(void) { return (struct type){.kind = T_SHOW}; }
static struct type t_void(void) { return (struct type){.kind = T_VOID}; }

static const char *type_name(const struct type *t)
{
	switch (t->kind) {
	case T_INT: return "integer";
	case T_PTR: return "pointer";
	case T_STR: return "string";
	case T_SHOW: return "formatted text";
	case T_VOID: return "nothing";
	default: return "unknown";
	}
}

/* The type with its article, for messages: "an integer". */
static const char *a_type(const struct type *t)
{
	switch (t->kind) {
	case T_INT: return "an integer";
	case T_PTR: return "a pointer";
	case T_STR: return "a string";
	default: return type_name(t);
	}
}

static void emit(struct compiler *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct compiler *c, const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	sb_printf(c->out, "%.*s%s\n", c->indent, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t", s);
	free(s);
}

static char *new_tmp(struct compiler *c) { return xasprintf("t%d", c->tmp++); }

/* ---- symbols ---- */

static struct node *find_decl(struct node **v, unsigned n, const char *name)
{
	for (unsigned i = n; i-- > 0;)
		if (strcmp(v[i]->str, name) == 0)
			return v[i];
	return NULL;
}

static int table_index(struct compiler *c, const char *name)
{
	for (unsigned i = 0; i < c->prog->ntables; i++)
		if (strcmp(c->prog->tables[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The table that names probes by index (the `probe` builtin). */
static int probe_table(struct compiler *c)
{
	struct ut_program *p = c->prog;
	int t = table_index(c, "probe");
	if (t < 0) {
		p->tables = xrealloc_array(p->tables, p->ntables + 1, sizeof(*p->tables));
		t = (int)p->ntables++;
		p->tables[t] = (struct ut_table){.name = xstrdup("probe")};
	}
	struct ut_table *tab = &p->tables[t];
	for (unsigned i = 0; i < tab->nentries; i++)
		if (tab->entries[i].key == c->alt->probe_index)
			return t;
	tab->entries = xrealloc_array(tab->entries, tab->nentries + 1, sizeof(*tab->entries));
	tab->entries[tab->nentries++] = (struct ut_table_entry){.key = c->alt->probe_index,
								.name = xstrdup(c->alt->probe->spec)};
	return t;
}

static struct local *find_local(struct compiler *c, const char *name)
{
	for (unsigned i = 0; i < c->nlocals; i++)
		if (strcmp(c->locals[i].name, name) == 0)
			return &c->locals[i];
	return NULL;
}

/* True inside the body of a for loop whose variable is name. */
static bool in_loop_of(struct compiler *c, const char *name)
{
	for (unsigned i = 0; i < c->loop_depth; i++)
		if (strcmp(c->loop_vars[i], name) == 0)
			return true;
	return false;
}

static int name_index(char ***v, unsigned *n, const char *name)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp((*v)[i], name) == 0)
			return (int)i;
	*v = xrealloc_array(*v, *n + 1, sizeof(char *));
	(*v)[*n] = xstrdup(name);
	return (int)(*n)++;
}

/* ---- expressions ---- */

static char *expr(struct compiler *c, struct node *n);

/* The C type of a value held in a temporary or a local. */
static char *c_decl(struct compiler *c, const struct type *t, const char *name)
{
	char buf[160];
	switch (t->kind) {
	case T_INT: return xasprintf("%s %s", t->is_signed ? "__s64" : "__u64", name);
	case T_STR: return xasprintf("char %s[%d]", name, t->size);
	case T_PTR:
		if (t->btf > 0 && !t->user && ut_kernel_type_c(c->k, t->btf, buf, sizeof(buf))[0])
			return xasprintf("%s *%s", buf, name);
		return xasprintf("void *%s", name);
	default: return xasprintf("__u64 %s", name);
	}
}

/* A typed pointer expression for field access on pointee `btf`. */
static char *typed_ptr(struct compiler *c, int32_t btf, const char *e)
{
	char buf[160];
	if (btf > 0 && ut_kernel_type_c(c->k, btf, buf, sizeof(buf))[0])
		return xasprintf("((%s *)(%s))", buf, e);
	return xasprintf("((void *)(%s))", e);
}

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

static char *field_of_ptr(struct compiler *c, struct node *n, const struct type *base, const char *bexpr)
{
	struct ut_ktype kt;
	if (base->user) {
		ERR(n, "cannot read field '%s' of a user-space pointer", n->str);
		return xstrdup("0");
	}
	if (base->btf <= 0 || ut_kernel_type(c->k, base->btf, &kt) < 0 ||
	    (kt.kind != UT_KT_STRUCT && kt.kind != UT_KT_UNION)) {
		ERR(n, "cannot take field '%s' of a pointer to an unknown type; cast it first, e.g. ((struct io_kiocb *)args.req).%s",
		    n->str, n->str);
		return xstrdup("0");
	}
	struct ut_member m;
	if (ut_kernel_member(c->k, base->btf, n->str, &m) < 0) {
		char **names = NULL;
		int nn = ut_kernel_member_names(c->k, base->btf, &names);
		const char *s = nn > 0 ? ut_suggest(n->str, names, (unsigned)nn) : NULL;
		if (s)
			ERR(n, "no field '%s' in struct %s (did you mean '%s'?)", n->str, kt.name, s);
		else
			ERR(n, "no field '%s' in struct %s", n->str, kt.name);
		ut_strv_free(names, nn);
		return xstrdup("0");
	}
	/* clang refuses a CO-RE read nested inside another: a base that reads a
	 * field itself (fd_file(fd), a ?: whose condition reads the table's
	 * size) goes through a temporary */
	char *base_tmp = NULL;
	if (strstr(bexpr, "BPF_CORE_READ")) {
		base_tmp = new_tmp(c);
		emit(c, "void *%s = (void *)(%s);", base_tmp, bexpr);
		bexpr = base_tmp;
	}
	char *p = typed_ptr(c, base->btf, bexpr);
	free(base_tmp);
	struct type ft;
	if (btf_value_type(c, m.type, &ft) < 0) {
		char buf[160];
		ERR(n, "field '%s' has type '%s', which scripts cannot read (integers, pointers, char arrays and structs can)",
		    n->str, ut_kernel_type_c(c->k, m.type, buf, sizeof(buf)));
		free(p);
		return xstrdup("0");
	}
	n->type = ft;
	char *r;
	/* Pointers go through temporaries: clang refuses a CO-RE access
	 * nested inside another. */
	n->type.direct = ft.kind == T_PTR && base->direct;
	if (ft.kind == T_PTR && ft.size == 0) {
		n->type.size = 8;
		r = new_tmp(c);
		emit(c, "void *%s = (void *)&%s->%s;", r, p, n->str);
	} else if (ft.kind == T_PTR) {
		r = new_tmp(c);
		if (base->direct)   /* a load the verifier guards, not a helper call */
			emit(c, "void *%s = (void *)%s->%s;", r, p, n->str);
		else
			emit(c, "void *%s = (void *)BPF_CORE_READ(%s, %s);", r, p, n->str);
	} else if (ft.kind == T_STR) {
		char *t = new_tmp(c);
		emit(c, "char %s[%d] = {};", t, ft.size);
		emit(c, "BPF_CORE_READ_STR_INTO(&%s, %s, %s);", t, p, n->str);
		r = t;
	} else if (m.bitfield_size) {
		r = xasprintf("((__u64)BPF_CORE_READ_BITFIELD_PROBED(%s, %s))", p, n->str);
	} else if (base->direct) {
		r = xasprintf("((%s)%s->%s)", ft.is_signed ? "__s64" : "__u64", p, n->str);
	} else {
		r = xasprintf("((%s)BPF_CORE_READ(%s, %s))", ft.is_signed ? "__s64" : "__u64", p, n->str);
	}
	free(p);
	return r;
}

static const struct probe_arg *find_arg(struct compiler *c, const char *name)
{
	for (unsigned i = 0; i < c->alt->nargs; i++)
		if (strcmp(c->alt->args[i].name, name) == 0) {
			c->body_reads_args = true;
			return &c->alt->args[i];
		}
	return NULL;
}

static bool is_return_probe(struct compiler *c)
{
	return c->alt->alt->kind == UT_PROBE_KRETPROBE || c->alt->alt->kind == UT_PROBE_URETPROBE;
}

/* A function's argument read at its return, where the registers that held
 * it hold other values. */
static void argument_at_return(struct compiler *c, struct node *n, const char *what)
{
	bool kernel = c->alt->alt->kind == UT_PROBE_KRETPROBE;
	const char *dot = strchr(what, '.');
	ERR(n, "'%s' is not available in %s probes: at the return the argument registers hold other values; "
	    "keep it in a map in a %s of the function (@%s[tid] = %s) and read that here%s",
	    what, probe_kind_name(c->alt->alt->kind), kernel ? "kprobe" : "uprobe", dot ? dot + 1 : what, what,
	    kernel ? ", or use fexit, which has the arguments" : "");
}

static void no_such_arg(struct compiler *c, struct node *n)
{
	if (c->alt->alt->kind == UT_PROBE_KRETPROBE) {
		struct ut_param *params;
		unsigned np;
		int32_t ret_type;
		bool param = false;
		if (ut_kernel_func_params(c->k, c->alt->target, &params, &np, &ret_type) == 0) {
			for (unsigned i = 0; i < np; i++)
				param |= strcmp(params[i].name, n->str) == 0;
			free(params);
		}
		if (param) {
			char *what = xasprintf("args.%s", n->str);
			argument_at_return(c, n, what);
			free(what);
			return;
		}
	}
	char **names = xcalloc(c->alt->nargs + 1, sizeof(char *));
	for (unsigned i = 0; i < c->alt->nargs; i++)
		names[i] = c->alt->args[i].name;
	const char *s = ut_suggest(n->str, names, c->alt->nargs);
	if (s)
		ERR(n, "no argument '%s' in %s (did you mean '%s'?)", n->str, c->alt->spec, s);
	else if (c->alt->nargs)
		ERR(n, "no argument '%s' in %s (it has: %s%s%s%s%s)", n->str, c->alt->spec, names[0],
		    c->alt->nargs > 1 ? ", " : "", c->alt->nargs > 1 ? names[1] : "",
		    c->alt->nargs > 2 ? ", " : "", c->alt->nargs > 2 ? "..." : "");
	else
		ERR(n, "%s has no arguments", c->alt->spec);
	free(names);
}

/* An argument the alternative computes from its own (`name = expr` in its
 * spec); inside that expression args.NAME are the alternative's own. */
static struct node *computed_arg(struct compiler *c, const char *name)
{
	if (c->in_computed_arg)
		return NULL;
	for (struct node *f = c->alt->computed; f; f = f->next)
		if (strcmp(f->str, name) == 0)
			return f;
	return NULL;
}

/* n's C expression, with the statements it needs written to out at indent
 * (not where the caller is writing). */
static char *expr_to(struct compiler *c, struct node *n, struct strbuf *out, int indent)
{
	struct strbuf *saved_out = c->out;
	int saved_indent = c->indent;
	c->out = out;
	c->indent = indent;
	char *r = expr(c, n);
	c->out = saved_out;
	c->indent = saved_indent;
	return r;
}

/* A computed argument's value: evaluated at its first use into a variable
 * at the top of the predicate or of the body (so on every path that may
 * use it), and that variable at every use.  Expanded at each use, a
 * computed `key = (u64)args.rq` cost a helper call per use. */
static char *computed_arg_value(struct compiler *c, struct node *n, struct node *computed)
{
	n->type = computed->a->type;
	for (unsigned i = 0; i < c->ncomputed_values; i++)
		if (c->computed_values[i].field == computed)
			return xstrdup(c->computed_values[i].cvar);
	struct strbuf *out = &c->computed_out[c->in_body];
	int errors = c->d->errors;
	c->in_computed_arg = true;
	char *r = expr_to(c, computed->a, out, 1);
	c->in_computed_arg = false;
	if (c->d->errors > errors)
		diag_note(c->d, "in args.%s of %s, used at %s:%d:%d", n->str, c->alt->spec, n->loc.file, n->loc.line,
			  n->loc.col);
	n->type = computed->a->type;
	char *cvar = r;   /* a string is already a variable of that scope */
	if (n->type.kind != T_STR) {
		cvar = xasprintf("a_%s", n->str);
		char *d = c_decl(c, &n->type, cvar), *cast = c_decl(c, &n->type, "");
		if (cast[strlen(cast) - 1] == ' ')
			cast[strlen(cast) - 1] = 0;   /* the space before the name */
		sb_printf(out, "\t%s = (%s)(%s);\n", d, cast, r);
		free(d);
		free(cast);
		free(r);
	}
	c->computed_values = xrealloc_array(c->computed_values, c->ncomputed_values + 1, sizeof(*c->computed_values));
	c->computed_values[c->ncomputed_values++] = (struct computed_value){computed, cvar};
	return xstrdup(cvar);
}

/* args.NAME: a probe argument.  Strings are read into a temporary. */
static char *arg_expr(struct compiler *c, struct node *n)
{
	struct node *computed = computed_arg(c, n->str);
	if (computed)
		return computed_arg_value(c, n, computed);
	const struct probe_arg *a = find_arg(c, n->str);
	if (!a) {
		no_such_arg(c, n);
		return xstrdup("0");
	}
	n->type = a->type;
	if (a->type.kind == T_STR) {
		char *t = new_tmp(c);
		emit(c, "char %s[%d] = {};", t, a->type.size);
		char *rd = xasprintf(a->cexpr, t, t);
		emit(c, "%s;", rd);
		free(rd);
		return t;
	}
	return xstrdup(a->cexpr);
}

static char *field_expr(struct compiler *c, struct node *n)
{
	if (n->a->kind == N_IDENT && strcmp(n->a->str, "args") == 0)
		return arg_expr(c, n);
	char *b = expr(c, n->a);
	if (n->a->type.kind != T_PTR) {
		if (n->a->type.kind != T_NONE)
			ERR(n, "'.%s' needs a pointer or struct, but this is %s", n->str, a_type(&n->a->type));
		free(b);
		return xstrdup("0");
	}
	char *r = field_of_ptr(c, n, &n->a->type, b);
	free(b);
	return r;
}

/* Builtin identifiers: one entry each. */
struct builtin {
	const char *name;
	struct type type;
	const char *cexpr;
	uint8_t show;
};

static const struct builtin builtins[] = {
	{"pid", {.kind = T_INT, .size = 4}, "(bpf_get_current_pid_tgid() >> 32)", UT_SHOW_KOID},
	{"tid", {.kind = T_INT, .size = 4}, "((__u32)bpf_get_current_pid_tgid())", UT_SHOW_KOID},
	{"uid", {.kind = T_INT, .size = 4}, "((__u32)bpf_get_current_uid_gid())", 0},
	{"gid", {.kind = T_INT, .size = 4}, "(bpf_get_current_uid_gid() >> 32)", 0},
	{"cpu", {.kind = T_INT, .size = 4}, "bpf_get_smp_processor_id()", 0},
	{"nsecs", {.kind = T_INT, .size = 8}, "bpf_ktime_get_ns()", 0},
	{"cgroup", {.kind = T_INT, .size = 8}, "bpf_get_current_cgroup_id()", 0},
	{"curtask", {.kind = T_PTR, .size = 8}, "((void *)bpf_get_current_task())", 0},
	{"comm", {.kind = T_STR, .size = 16}, NULL, 0},
	/* 1 when the current task passes -p/-c/--comm (always without them) */
	{"traced", {.kind = T_INT, .size = 1}, "ut_pass_filter()", 0},
	/* the stack's id in ut_stacks (gen.c's ut_stack); user space shows its frames */
	{"kstack", {.kind = T_INT, .size = 8}, "ut_stack(ctx, 0)", UT_SHOW_KSTACK},
	{"ustack", {.kind = T_INT, .size = 8}, "ut_stack(ctx, BPF_F_USER_STACK)", UT_SHOW_USTACK},
};

static char *const_value(struct compiler *c, struct node *n, struct node *decl)
{
	if (decl->sym == -2) {
		ERR(n, "constant '%s' is defined in terms of itself", n->str);
		return xstrdup("0");
	}
	int saved = decl->sym;
	decl->sym = -2;
	char *r = expr(c, decl->a);
	decl->sym = saved;
	n->type = decl->a->type;
	if (decl->a->type.kind != T_INT && decl->a->type.kind != T_STR && decl->a->type.kind != T_NONE)
		ERR(n, "constant '%s' must be an integer or a string", n->str);
	return r;
}

static char *ident_expr(struct compiler *c, struct node *n)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];
		if (strcmp(n->str, b->name) != 0)
			continue;
		n->type = b->type;
		n->type.show = b->show;
		if (strcmp(b->name, "curtask") == 0)
			n->type.btf = ut_kernel_struct(c->k, "task_struct");
		if (strcmp(b->name, "nsecs") == 0 && c->in_body) {
			/* one clock read per hit (a costly one under a hypervisor) */
			c->body_uses_now = true;
			return xstrdup("ut_now");
		}
		if (b->type.kind == T_STR) {
			char *t = new_tmp(c);
			emit(c, "char %s[16];", t);
			emit(c, "bpf_get_current_comm(%s, sizeof(%s));", t, t);
			return t;
		}
		c->uses_stacks |= b->show == UT_SHOW_KSTACK || b->show == UT_SHOW_USTACK;
		return xstrdup(b->cexpr);
	}
	if (strcmp(n->str, "retval") == 0 || (strncmp(n->str, "arg", 3) == 0 && n->str[3] >= '0' && n->str[3] <= '9')) {
		const struct probe_arg *a = find_arg(c, n->str);
		if (!a) {
			unsigned regs = 0;   /* arg0 .. arg(regs-1) */
			char name[8] = "arg0";
			while (regs < 6 && find_arg(c, name))
				name[3] = (char)('0' + ++regs);
			if (n->str[0] == 'a' && is_return_probe(c))
				argument_at_return(c, n, n->str);
			else if (n->str[0] == 'a' && regs)
				ERR(n, "'%s' is not available in %s, which has %s%u", n->str, c->alt->spec,
				    regs > 1 ? "arg0 to arg" : "only arg", regs - 1);
			else if (n->str[0] == 'a' && c->alt->alt->kind == UT_PROBE_KPROBE)
				ERR(n, "'%s' is not available in %s: the function takes no arguments", n->str, c->alt->spec);
			else
				ERR(n, "'%s' is not available in %s probes", n->str, probe_kind_name(c->alt->alt->kind));
			return xstrdup("0");
		}
		n->type = a->type;
		return xstrdup(a->cexpr);
	}
	if (strcmp(n->str, "args") == 0) {
		ERR(n, "'args' is used with a field: args.NAME");
		return xstrdup("0");
	}
	if (strcmp(n->str, "probe") == 0) {
		/* the probe's index, shown through a table of the probes as written */
		n->type = t_int(4, false);
		n->type.show = UT_SHOW_TABLE;
		n->type.table = (int16_t)probe_table(c);
		return xasprintf("%uU", c->alt->probe_index);
	}
	struct node *k = find_decl(c->consts, c->nconsts, n->str);
	if (k)
		return const_value(c, n, k);
	int64_t v;
	if (ut_kernel_enum_value(c->k, n->str, &v) == 0) {
		n->type = t_int(8, v < 0);
		return xasprintf("%lldLL", (long long)v);
	}
	ERR(n, "unknown name '%s' (not a builtin, constant or kernel enum value)", n->str);
	return xstrdup("0");
}

static bool is_int(const struct type *t) { return t->kind == T_INT || t->kind == T_NONE; }
/* Conditions take integers and pointers (a pointer is true when not NULL). */
static bool is_cond(const struct type *t) { return is_int(t) || t->kind == T_PTR; }

/* An operand evaluated only on some paths (the right of && and ||, the
 * branches of ?:): its statements (map look-ups, reads into temporaries) go
 * to *stmts, one level deeper, for the caller to put under its condition.
 * Emitted in front of the whole expression, a look-up would run whatever
 * the condition (clang cannot drop a helper call). */
static char *lazy_expr(struct compiler *c, struct node *n, struct strbuf *stmts)
{
	*stmts = (struct strbuf){0};
	return expr_to(c, n, stmts, c->indent + 1);
}

/* One side of a lazy operand, inside the caller's if or else: its
 * statements, then var = value. */
static void emit_lazy_side(struct compiler *c, struct strbuf *stmts, const char *var, const char *value)
{
	sb_puts(c->out, stmts->s ? stmts->s : "");
	emit(c, "\t%s = %s;", var, value);
}

/* a && b, a || b (operands as ct): C's when b needs no statements of its
 * own; otherwise b's statements and value only where a does not decide. */
static char *logic_expr(struct compiler *c, const char *ct, const char *a, const char *b, struct strbuf *b_stmts,
			bool is_and)
{
	if (!b_stmts->len)
		return xasprintf("((%s)(%s) %s (%s)(%s))", ct, a, is_and ? "&&" : "||", ct, b);
	char *t = new_tmp(c), *value = xasprintf("!!(%s)", b);
	emit(c, "__u64 %s = %d;", t, is_and ? 0 : 1);
	emit(c, "if (%s(%s)) {", is_and ? "" : "!", a);
	emit_lazy_side(c, b_stmts, t, value);
	emit(c, "}");
	free(value);
	return t;
}

/* a ? b : e as type ct: C's when neither branch needs statements;
 * otherwise each branch's statements only on its side. */
static char *ternary_expr(struct compiler *c, const char *ct, const char *a, const char *b, struct strbuf *b_stmts,
			  const char *e, struct strbuf *e_stmts)
{
	if (!b_stmts->len && !e_stmts->len)
		return xasprintf("((%s) ? (%s)(%s) : (%s)(%s))", a, ct, b, ct, e);
	char *t = new_tmp(c), *bv = xasprintf("(%s)(%s)", ct, b), *ev = xasprintf("(%s)(%s)", ct, e);
	emit(c, "%s%s%s = 0;", ct, ct[strlen(ct) - 1] == '*' ? "" : " ", t);
	emit(c, "if (%s) {", a);
	emit_lazy_side(c, b_stmts, t, bv);
	emit(c, "} else {");
	emit_lazy_side(c, e_stmts, t, ev);
	emit(c, "}");
	free(bv);
	free(ev);
	return t;
}

static bool const_int(struct compiler *c, const struct node *n, int64_t *v, int depth);

static char *binop_expr(struct compiler *c, struct node *n)
{
	bool logic = n->op == OP_AND || n->op == OP_OR;
	struct strbuf b_stmts = {0};
	char *a = expr(c, n->a), *r;
	char *b = logic ? lazy_expr(c, n->b, &b_stmts) : expr(c, n->b);
	struct type *ta = &n->a->type, *tb = &n->b->type;
	bool cmp = n->op == OP_EQ || n->op == OP_NE;
	if (cmp && ta->kind == T_STR && tb->kind == T_STR) {
		n->type = t_int(1, false);
		int len = ta->size < tb->size ? ta->size : tb->size;
		r = xasprintf("(%sut_streq(%s, %s, %d))", n->op == OP_NE ? "!" : "", a, b, len);
		goto out;
	}
	if (cmp && ta->kind == T_PTR && (tb->kind == T_PTR || tb->kind == T_INT)) {
		n->type = t_int(1, false);
		r = xasprintf("((__u64)(%s) %s (__u64)(%s))", a, n->op == OP_EQ ? "==" : "!=", b);
		goto out;
	}
	if (logic ? !is_cond(ta) || !is_cond(tb) : !is_int(ta) || !is_int(tb)) {
		const struct type *bad = (logic ? is_cond(ta) : is_int(ta)) ? tb : ta;
		bool compare = n->op == OP_EQ || n->op == OP_NE || n->op == '<' || n->op == '>' ||
			       n->op == OP_LE || n->op == OP_GE;
		if (compare && bad->kind == T_STR && tb->kind != ta->kind)
			ERR(n, "cannot compare a string with %s", a_type(is_int(ta) ? ta : tb));
		else
			ERR(n, "this operator needs %s, but an operand is %s", logic ? "integers or pointers" : "integers",
			    a_type(bad));
		r = xstrdup("0");
		goto out;
	}
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
	/* a literal above INT64_MAX makes the operation unsigned, as in C (small
	 * literals, typed u64 too, leave it to the other operand) */
	bool sgn = (ta->is_signed || tb->is_signed) && !(n->a->kind == N_INT && n->a->op == 'u') &&
		   !(n->b->kind == N_INT && n->b->op == 'u');
	/* not strchr("<>", op): ops from 256 on would match its NUL */
	bool logical = n->op == '<' || n->op == '>' || n->op == OP_EQ || n->op == OP_NE || n->op == OP_LE ||
		       n->op == OP_GE || n->op == OP_AND || n->op == OP_OR;
	n->type = logical ? t_int(1, false) : t_int(8, sgn);
	/* a divisor known to be 0 (0, a constant, 4 - 4), or a shift count
	 * known to be past 63, would be C's undefined behaviour in the
	 * generated code, which clang folds as it likes */
	int64_t right;
	bool shift = n->op == OP_SHL || n->op == OP_SHR;
	if ((n->op == '/' || n->op == '%' || shift) && const_int(c, n->b, &right, 0)) {
		if (!shift && right == 0)
			ERR(n, "division by zero");
		else if (shift && (right < 0 || right > 63))
			ERR(n, "shift count %lld is outside 0..63", (long long)right);
	}
	if (sgn && (n->op == '/' || n->op == '%')) {
		/* BPF has no signed division (clang-14 rejects sdiv): divide the
		 * magnitudes, then give the result C's sign (the quotient's from
		 * both operands, the remainder's from the dividend). */
		char *x = new_tmp(c), *y = new_tmp(c), *q = new_tmp(c);
		emit(c, "__s64 %s = (__s64)(%s), %s = (__s64)(%s);", x, a, y, b);
		emit(c, "__u64 %s = (%s < 0 ? 0 - (__u64)%s : (__u64)%s) %c (%s < 0 ? 0 - (__u64)%s : (__u64)%s);",
		     q, x, x, x, n->op, y, y, y);
		if (n->op == '/')
			r = xasprintf("((__s64)((%s < 0) != (%s < 0) ? 0 - %s : %s))", x, y, q, q);
		else
			r = xasprintf("((__s64)(%s < 0 ? 0 - %s : %s))", x, q, q);
		free(x);
		free(y);
		free(q);
		goto out;
	}
	const char *ct = sgn ? "__s64" : "__u64";
	if (logic) {
		r = logic_expr(c, ct, a, b, &b_stmts, n->op == OP_AND);
		goto out;
	}
	r = xasprintf("((%s)(%s) %s (%s)(%s))", ct, a, op, ct, b);
out:
	sb_free(&b_stmts);
	free(a);
	free(b);
	return r;
}

/* ---- calls ---- */

struct call_def {
	const char *name;
	int min_args, max_args;
	char *(*fn)(struct compiler *c, struct node *n, struct node **args, int nargs);
};

static char *call_show(struct compiler *c, struct node *n, struct node **args, int nargs, uint8_t show)
{
	(void)nargs;
	char *a = expr(c, args[0]);
	if (!is_int(&args[0]->type))
		ERR(args[0], "%s() needs an integer, not %s", n->str, a_type(&args[0]->type));
	n->type = args[0]->type;
	n->type.show = show;
	return a;
}
static char *call_hex(struct compiler *c, struct node *n, struct node **a, int na) { return call_show(c, n, a, na, UT_SHOW_HEX); }
static char *call_errname(struct compiler *c, struct node *n, struct node **a, int na)
{
	char *r = call_show(c, n, a, na, UT_SHOW_ERRNO);
	n->type.is_signed = true;
	return r;
}

static char *call_diskname(struct compiler *c, struct node *n, struct node **a, int na)
{
	return call_show(c, n, a, na, UT_SHOW_DISK);
}

/* diskdev("vda"): the disk's device number, which the runtime looks up when
 * the script is loaded (on the machine that runs it) and sets in the
 * read-only variable ut_disk_<index>.  "" is 0: no disk. */
static char *call_diskdev(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	struct node *arg = args[0];
	struct node *k = arg->kind == N_IDENT ? find_decl(c->consts, c->nconsts, arg->str) : NULL;
	const char *name = arg->kind == N_STR ? arg->str : k && k->a->kind == N_STR ? k->a->str : NULL;
	n->type = t_int(4, false);
	n->type.show = UT_SHOW_DISK;
	if (!name) {
		ERR(arg, "diskdev() takes a disk name as a string or a string constant: diskdev(\"vda\")");
		return xstrdup("0");
	}
	if (!name[0])
		return xstrdup("0U");
	struct ut_program *p = c->prog;
	unsigned i = 0;
	while (i < p->ndisks && strcmp(p->disks[i].name, name) != 0)
		i++;
	if (i == p->ndisks) {
		p->disks = xrealloc_array(p->disks, p->ndisks + 1, sizeof(*p->disks));
		p->disks[p->ndisks++] = (struct ut_disk_ref){.name = xstrdup(name), .loc = arg->loc};
	}
	return xasprintf("((__u32)ut_disk_%u)", i);
}

static void check_format(struct compiler *c, struct node *fmtn, struct node **args, int nargs)
{
	if (fmtn->kind != N_STR) {
		ERR(fmtn, "the format must be a string literal");
		return;
	}
	int need = 0;
	for (const char *p = fmtn->str; *p; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		while (*p && strchr("-0123456789.l", *p))
			p++;
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
			ERR(fmtn, "a '%%' in the format starts no directive (write %%%% for a percent sign)");
			return;
		}
		if (!strchr("dixXuspc", *p)) {
			ERR(fmtn, "unsupported format directive '%%%c' (use %%d %%u %%x %%s %%p %%c)", *p);
			return;
		}
		if (need < nargs && *p == 's' && args[need]->type.kind != T_STR && args[need]->type.kind != T_SHOW &&
		    args[need]->type.show == UT_SHOW_PLAIN)
			ERR(args[need], "%%s needs a string, but this is %s", a_type(&args[need]->type));
		if (need < nargs && *p != 's' && (args[need]->type.kind == T_STR || args[need]->type.kind == T_SHOW))
			ERR(args[need], "%%%c needs a number, but this is %s", *p, a_type(&args[need]->type));
		need++;
	}
	if (need != nargs)
		ERR(fmtn, "the format has %d directive%s but %d value%s follow%s", need, need == 1 ? "" : "s",
		    nargs, nargs == 1 ? "" : "s", nargs == 1 ? "s" : "");
}

static char *call_fmt(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	for (int i = 1; i < nargs; i++)
		free(expr(c, args[i]));
	check_format(c, args[0], args + 1, nargs - 1);
	n->type = t_show();
	return xstrdup("0");
}

static char *call_str(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	char *p = expr(c, args[0]);
	int size = 64;
	if (nargs > 1) {
		if (args[1]->kind != N_INT || args[1]->num < 1 || args[1]->num > 255)
			ERR(args[1], "str()'s length must be a number from 1 to 255");
		else
			size = (int)args[1]->num;
	}
	if (args[0]->type.kind != T_PTR && !is_int(&args[0]->type))
		ERR(args[0], "str() needs a pointer, not %s", a_type(&args[0]->type));
	bool user = strcmp(n->str, "ustr") == 0 || args[0]->type.user;
	n->type = t_str(size);
	char *t = new_tmp(c);
	emit(c, "char %s[%d] = {};", t, size);
	emit(c, "bpf_probe_read_%s_str(%s, sizeof(%s), (const void *)(%s));", user ? "user" : "kernel", t, t, p);
	free(p);
	return t;
}

/* A call of the builtin path(), directly or through script functions. */
static bool is_path_call(struct compiler *c, struct node *n)
{
	while (n->kind == N_CALL && n->resolved)
		n = n->resolved;
	return n->kind == N_CALL && strcmp(n->str, "path") == 0 && !find_decl(c->fns, c->nfns, "path");
}

/* path(file or path): the full path, built in BPF (ut.h's ut_path) into a
 * per-CPU buffer of its own, so it takes no stack. */
#define PATH_SLOTS_MAX 8
static char *call_path(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *p = expr(c, args[0]);
	const struct type *t = &args[0]->type;
	n->type = t_str(255);
	const char *pointee = NULL;
	struct ut_ktype kt;
	if (t->kind == T_PTR && !t->user && t->btf > 0 && ut_kernel_type(c->k, t->btf, &kt) == 0 &&
	    kt.kind == UT_KT_STRUCT && (strcmp(kt.name, "file") == 0 || strcmp(kt.name, "path") == 0))
		pointee = kt.name;
	if (!pointee) {
		char buf[160] = "";
		if (t->kind == T_PTR && t->btf > 0 && ut_kernel_type_c(c->k, t->btf, buf, sizeof(buf))[0])
			strncat(buf, " *", sizeof(buf) - strlen(buf) - 1);
		if (t->kind != T_NONE)
			ERR(args[0], "path() takes a struct file * or a struct path *, not %s; cast a pointer first, e.g. path((struct file *)p)",
			    t->kind == T_PTR && t->user ? "a user-space pointer" : buf[0] ? buf : a_type(t));
		free(p);
		return xstrdup("\"\"");
	}
	if (c->path_calls == PATH_SLOTS_MAX) {
		ERR(n, "at most %d path() calls in one probe; keep a path in a map (@path[tid] = path(f)) and read it back",
		    PATH_SLOTS_MAX);
		free(p);
		return xstrdup("\"\"");
	}
	unsigned slot = c->path_calls++;
	c->uses_scratch = true;
	if (c->path_calls > c->path_slots)
		c->path_slots = c->path_calls;
	char *tmp = new_tmp(c);
	if (strcmp(pointee, "file") == 0)
		emit(c, "struct ut_path_buf *%s = ut_path(%u, (void *)&((struct file *)(%s))->f_path);", tmp, slot, p);
	else
		emit(c, "struct ut_path_buf *%s = ut_path(%u, (void *)(%s));", tmp, slot, p);
	free(p);
	char *r = xasprintf("(%s->s)", tmp);
	free(tmp);
	return r;
}

static char *call_exists(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	struct node *f = args[0];
	n->type = t_int(1, false);
	if (f->kind != N_FIELD || f->a->kind != N_IDENT || strcmp(f->a->str, "args") != 0) {
		ERR(f, "exists() takes a probe argument: exists(args.NAME)");
		return xstrdup("0");
	}
	if (computed_arg(c, f->str))
		return xstrdup("1");
	const struct probe_arg *a = find_arg(c, f->str);
	if (!a)
		return xstrdup("0");
	return xstrdup(a->exists_cexpr ? a->exists_cexpr : "1");
}

static char *call_aggregation(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	(void)args;
	(void)nargs;
	ERR(n, "%s() is an aggregation: assign it to a map, e.g. @x[comm] = %s(...)", n->str, n->str);
	return xstrdup("0");
}

static char *call_statement_only(struct compiler *c, struct node *n, struct node **args, int nargs)
{
	(void)args;
	(void)nargs;
	ERR(n, "%s() does not return a value; use it as a statement", n->str);
	n->type = t_void();
	return xstrdup("0");
}

static const struct call_def calls[] = {
	{"hex", 1, 1, call_hex},
	{"errname", 1, 1, call_errname},
	{"fmt", 1, 16, call_fmt},
	{"str", 1, 2, call_str},
	{"ustr", 1, 2, call_str},
	{"path", 1, 1, call_path},
	{"exists", 1, 1, call_exists},
	{"diskname", 1, 1, call_diskname},
	{"diskdev", 1, 1, call_diskdev},
	{"count", 0, 0, call_aggregation},
	{"sum", 1, 1, call_aggregation},
	{"avg", 1, 1, call_aggregation},
	{"min", 1, 1, call_aggregation},
	{"max", 1, 1, call_aggregation},
	{"hist", 1, 1, call_aggregation},
	{"lhist", 4, 4, call_aggregation},
	{"printf", 1, 16, call_statement_only},
	{"exit", 0, 0, call_statement_only},
	{"delete", 1, 1, call_statement_only},
	{"clear", 1, 1, call_statement_only},
};

static const struct call_def *find_call(const char *name)
{
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strcmp(calls[i].name, name) == 0)
			return &calls[i];
	return NULL;
}

static int collect_args(struct node *list, struct node **out, int max)
{
	int n = 0;
	for (; list; list = list->next)
		if (n < max)
			out[n++] = list;
		else
			n++;
	return n;
}

/* Replaces macro parameters by copies of the call's arguments.  Lists are
 * walked, not recursed along: a body may hold many statements. */
static struct node *substitute(struct node *body, struct node *params, struct node **actual)
{
	struct node_list out = {0};
	for (; body; body = body->next) {
		struct node *r = NULL;
		if (body->kind == N_IDENT) {
			int i = 0;
			for (struct node *p = params; p && !r; p = p->next, i++)
				if (strcmp(p->str, body->str) == 0)
					r = node_clone(actual[i]);
		}
		if (!r) {
			r = node_new(body->kind, body->loc);
			*r = *body;
			r->str = body->str ? xstrdup(body->str) : NULL;
			r->a = substitute(body->a, params, actual);
			r->b = substitute(body->b, params, actual);
			r->c = substitute(body->c, params, actual);
			r->d = substitute(body->d, params, actual);
			r->resolved = NULL;
		}
		r->next = NULL;
		node_list_push(&out, r);
	}
	return out.head;
}

#define MACRO_NODE_BUDGET 200000

static unsigned long count_nodes(const struct node *n)
{
	unsigned long k = 0;
	for (; n; n = n->next)
		k += 1 + count_nodes(n->a) + count_nodes(n->b) + count_nodes(n->c) + count_nodes(n->d);
	return k;
}

/* A call of a script function: expands its body in place. */
static struct node *expand_macro(struct compiler *c, struct node *n, struct node *fn)
{
	struct node *args[16];
	int nargs = collect_args(n->a, args, 16);
	int nparams = (int)node_list_len(fn->a);
	if (nargs != nparams) {
		ERR(n, "%s() takes %d argument%s, not %d", fn->str, nparams, nparams == 1 ? "" : "s", nargs);
		return NULL;
	}
	if (c->macro_depth >= 16) {
		ERR(n, "%s() expands too deeply (is it recursive?)", fn->str);
		return NULL;
	}
	struct node *body = fn->b;
	struct node *saved = body->next;
	body->next = NULL;
	node_free(n->resolved);
	n->resolved = substitute(body, fn->a, args);
	body->next = saved;
	/* Nested calls that use an argument several times grow exponentially
	 * (fn b(x) = a(a(x)) with a using x 50 times): bound the whole
	 * script's expansions rather than hang writing gigabytes of C. */
	unsigned long before = c->macro_nodes;
	c->macro_nodes += count_nodes(n->resolved);
	if (c->macro_nodes > MACRO_NODE_BUDGET) {
		if (before <= MACRO_NODE_BUDGET)
			ERR(n, "expanding %s() here makes the script too large (over %d nodes); "
			    "do nested function calls use their arguments many times?", fn->str, MACRO_NODE_BUDGET);
		node_free(n->resolved);
		n->resolved = NULL;
	}
	return n->resolved;
}

static char *call_expr(struct compiler *c, struct node *n)
{
	struct node *fn = find_decl(c->fns, c->nfns, n->str);
	if (fn) {
		if (fn->b->kind == N_BLOCK) {
			ERR(n, "%s() is a statement function; call it as a statement", n->str);
			return xstrdup("0");
		}
		struct node *e = expand_macro(c, n, fn);
		if (!e)
			return xstrdup("0");
		int errors = c->d->errors;
		c->macro_depth++;
		char *r = expr(c, e);
		c->macro_depth--;
		/* the error above is in the body: say which calls (the outer three) */
		if (c->d->errors > errors && c->macro_depth < 3)
			diag_note(c->d, "in %s() called at %s:%d:%d", n->str, n->loc.file, n->loc.line, n->loc.col);
		n->type = e->type;
		return r;
	}
	const struct call_def *def = find_call(n->str);
	if (!def) {
		ERR(n, "unknown function '%s'", n->str);
		return xstrdup("0");
	}
	struct node *args[16];
	int nargs = collect_args(n->a, args, 16);
	if (nargs < def->min_args || nargs > def->max_args) {
		if (def->min_args == def->max_args)
			ERR(n, "%s() takes %d argument%s, not %d", n->str, def->min_args, def->min_args == 1 ? "" : "s", nargs);
		else
			ERR(n, "%s() takes %d to %d arguments, not %d", n->str, def->min_args, def->max_args, nargs);
		return xstrdup("0");
	}
	return def->fn(c, n, args, nargs);
}

/* p[i] on a typed pointer: element i, as C reads it.  No bound is known,
 * so the script checks its index (fd < fdt.max_fds); a bad address reads
 * as 0.  Elements are pointers or integers (struct sizes are not
 * relocated). */
static char *pointer_index(struct compiler *c, struct node *n)
{
	char *base = expr(c, n->a), *i = expr(c, n->b);
	const struct type *bt = &n->a->type;
	struct ut_ktype el;
	char *r = xstrdup("0");
	if (!is_int(&n->b->type)) {
		ERR(n->b, "an index is an integer, not %s", a_type(&n->b->type));
	} else if (bt->kind != T_PTR) {
		if (bt->kind != T_NONE)
			ERR(n, "'[...]' indexes a typed pointer (or names a table), but this is %s", a_type(bt));
	} else if (bt->btf <= 0 || ut_kernel_type(c->k, bt->btf, &el) < 0 ||
		   !(el.kind == UT_KT_PTR || el.kind == UT_KT_INT || el.kind == UT_KT_ENUM || el.kind == UT_KT_BOOL)) {
		char buf[160];
		ERR(n, "'[...]' reads pointers or integers, but this points to %s",
		    bt->btf > 0 && ut_kernel_type_c(c->k, bt->btf, buf, sizeof(buf))[0] ? buf : "an unknown type");
	} else if (btf_value_type(c, bt->btf, &n->type) == 0) {
		free(r);
		r = new_tmp(c);
		if (n->type.kind == T_PTR)
			emit(c, "void *%s = 0;", r);
		else
			emit(c, "__%c%u %s = 0;", n->type.is_signed ? 's' : 'u', n->type.size * 8u, r);
		emit(c, "bpf_probe_read_%s(&%s, sizeof(%s), (const char *)(%s) + (__u64)(%s) * sizeof(%s));",
		     bt->user ? "user" : "kernel", r, r, base, i, r);
	}
	free(base);
	free(i);
	return r;
}

static char *index_expr(struct compiler *c, struct node *n)
{
	if (n->a->kind != N_IDENT)
		return pointer_index(c, n);
	int t = table_index(c, n->a->str);
	char *k = expr(c, n->b);
	if (t < 0) {
		ERR(n, "'%s' is not a table (declare it: table %s = { 0: \"name\", ... })", n->a->str, n->a->str);
		return k;
	}
	if (!is_int(&n->b->type))
		ERR(n->b, "table keys are integers, not %s", a_type(&n->b->type));
	n->type = n->b->type;
	n->type.kind = T_INT;
	n->type.show = UT_SHOW_TABLE;
	n->type.table = (int16_t)t;
	return k;
}

static struct map_info *map_get(struct compiler *c, struct node *ref);
static char *map_key(struct compiler *c, struct map_info *m, struct node *ref, char **sig);

static char *map_read_expr(struct compiler *c, struct node *n)
{
	struct map_info *m = map_get(c, n);
	if (!m)
		return xstrdup("0");
	if (m->kind == MAP_AGG) {
		ERR(n, "%s holds an aggregation; it can be printed, not read", m->name);
		return xstrdup("0");
	}
	if (!m->read_in_bpf)
		m->read_loc = n->loc;
	m->read_in_bpf = true;
	if (m->kind == MAP_UNSET) {
		/* read before the probe that assigns it: maps read in probes hold
		 * integers; compile.c reports maps never assigned at all */
		m->kind = MAP_VALUE;
		m->value_type = t_int(8, true);
		m->value_show = (struct ut_value){.kind = UT_VAL_FIELD};
	}
	n->type = m->value_type;
	int idx = (int)m->index;
	char *sig = NULL;
	char *k = map_key(c, m, n, &sig);
	if (sig && c->last_add.stmt && c->last_add.stmt == c->prev_stmt && c->last_add.map == idx &&
	    strcmp(sig, c->last_add.key) == 0) {
		free(sig);
		free(k);
		return xasprintf("((__u64)ut_added_%u)", c->last_add.var);
	}
	free(sig);
	char *t = new_tmp(c);
	if (n->type.kind == T_STR) {
		/* the string where the map holds it (a path would not fit twice on
		 * the 512-byte stack), or "" when the key is absent */
		emit(c, "struct ut_mv_%d *%s = (void *)ut_empty_str;", idx, t);
		emit(c, "{ struct ut_mv_%d *v = bpf_map_lookup_elem(&m_%d, &%s); if (v) %s = v; }", idx, idx, k, t);
		free(k);
		char *r = xasprintf("(%s->s)", t);
		free(t);
		return r;
	}
	emit(c, "__u64 %s = 0;", t);
	emit(c, "{ __u64 *v = bpf_map_lookup_elem(&m_%d, &%s); if (v) %s = *v; }", idx, k, t);
	free(k);
	return t;
}

static char *expr_inner(struct compiler *c, struct node *n)
{
	n->type = (struct type){0};
	switch (n->kind) {
	case N_INT:
		if (n->op == 'u') {
			n->type = t_int(8, false);
			return xasprintf("%lluULL", (unsigned long long)n->num);
		}
		n->type = t_int(8, n->num < 0);
		return xasprintf("%lldLL", (long long)n->num);
	case N_STR: {
		size_t len = strlen(n->str);
		if (len > 254)   /* a string value is a char array of at most 255 */
			ERR(n, "this string has %zu bytes; strings used as values hold at most 254", len);
		n->type = t_str((int)len + 1);
		char *t = new_tmp(c);
		struct strbuf b = {0};
		sb_c_string(&b, n->str);
		emit(c, "char %s[%d] = \"%s\";", t, n->type.size, b.s ? b.s : "");
		sb_free(&b);
		return t;
	}
	case N_IDENT: return ident_expr(c, n);
	case N_LOCAL: {
		struct local *l = find_local(c, n->str);
		if (!l) {
			ERR(n, "local %s is used before it is assigned", n->str);
			return xstrdup("0");
		}
		if (l->loop_var && !in_loop_of(c, n->str)) {
			ERR(n, "%s is the variable of the for loop at %d:%d, and exists only in its body; "
			    "copy it to another local there to keep it", n->str, l->loc.line, l->loc.col);
			return xstrdup("0");
		}
		n->type = l->type;
		return xasprintf("l_%s", n->str + 1);
	}
	case N_FIELD: return field_expr(c, n);
	case N_INDEX: return index_expr(c, n);
	case N_MAP_REF: return map_read_expr(c, n);
	case N_CALL: return call_expr(c, n);
	case N_BINOP: return binop_expr(c, n);
	case N_UNOP: {
		char *a = expr(c, n->a);
		if (n->op == '!' ? !is_cond(&n->a->type) : !is_int(&n->a->type))
			ERR(n, "'%c' needs an integer, not %s", n->op, a_type(&n->a->type));
		n->type = n->op == '!' ? t_int(1, false) : t_int(8, n->op == '-' || n->a->type.is_signed);
		char *r = xasprintf("(%c(%s)(%s))", n->op, n->op == '-' ? "__s64" : "__u64", a);
		free(a);
		return r;
	}
	case N_TERNARY: {
		struct strbuf b_stmts, e_stmts;
		char *a = expr(c, n->a), *b = lazy_expr(c, n->b, &b_stmts), *e = lazy_expr(c, n->c, &e_stmts);
		if (!is_cond(&n->a->type))
			ERR(n->a, "the condition must be an integer or a pointer, not %s", a_type(&n->a->type));
		const struct type *tb = &n->b->type, *tc = &n->c->type;
		char *r;
		if (is_int(tb) && is_int(tc)) {
			n->type = t_int(8, tb->is_signed || tc->is_signed);
			r = ternary_expr(c, "__s64", a, b, &b_stmts, e, &e_stmts);
		} else if (is_cond(tb) && is_cond(tc)) {
			/* a pointer either way (an integer branch is an address, 0 is NULL),
			 * typed when the pointer branches agree */
			const struct type *p = tb->kind == T_PTR ? tb : tc, *q = tc->kind == T_PTR ? tc : tb;
			n->type = *p;
			n->type.direct = false;   /* either branch may be NULL or a plain integer */
			if (q->kind == T_PTR && (p->btf != q->btf || p->user != q->user))
				n->type = t_ptr(0);
			r = ternary_expr(c, "void *", a, b, &b_stmts, e, &e_stmts);
		} else {
			ERR(n, "both branches of ?: must be integers or pointers");
			r = xstrdup("0");
		}
		sb_free(&b_stmts);
		sb_free(&e_stmts);
		free(a); free(b); free(e);
		return r;
	}
	case N_DEFAULT: {
		struct node *f = n->a;
		if (f->kind != N_FIELD || f->a->kind != N_IDENT || strcmp(f->a->str, "args") != 0) {
			ERR(n, "'?\?' gives a default for a probe argument that may not exist: args.NAME ?\? value");
			return xstrdup("0");
		}
		char *dflt = expr(c, n->b);
		const struct probe_arg *a = find_arg(c, f->str);
		if (!a && !computed_arg(c, f->str)) {
			/* absent on this kernel: the default */
			n->type = n->b->type;
			return dflt;
		}
		char *v = expr(c, f);
		n->type = f->type;
		if (!is_int(&f->type) || !is_int(&n->b->type))
			ERR(n, "'?\?' works on integer arguments");
		const char *exists = a && !computed_arg(c, f->str) && a->exists_cexpr ? a->exists_cexpr : "1";
		char *r = xasprintf("((%s) ? (__s64)(%s) : (__s64)(%s))", exists, v, dflt);
		free(v);
		free(dflt);
		return r;
	}
	case N_CAST: {
		char *a = expr(c, n->a);
		char *r;
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
			int32_t id = ut_kernel_struct(c->k, name);
			if (id < 0) {
				ERR(n, "no struct %s in the kernel's BTF", name);
				id = 0;
			}
			if (stars != 1)
				ERR(n, "casts to struct pointers take one '*'");
			if (n->a->type.kind != T_PTR && !is_int(&n->a->type))
				ERR(n, "cannot cast %s to a pointer", a_type(&n->a->type));
			/* an unknown struct is reported once: its uses stay untyped */
			n->type = id > 0 ? t_ptr(id) : (struct type){.kind = T_NONE};
			/* to its own type: still the pointer the verifier knows */
			n->type.direct = id > 0 && n->a->type.kind == T_PTR && n->a->type.direct && n->a->type.btf == id;
			r = xasprintf("((void *)(%s))", a);
		} else if (strcmp(n->str, "ptr") == 0) {
			n->type = t_ptr(0);
			r = xasprintf("((void *)(%s))", a);
		} else {
			int bits = strcmp(n->str, "bool") == 0 ? 1 : atoi(n->str + 1);
			bool sgn = n->str[0] == 's';
			if (n->a->type.kind == T_STR && bits > 1) {
				/* its first bytes, little-endian: decodes short codes
				 * such as the block layer's rwbs ("WS") */
				char *t = new_tmp(c);
				int nbytes = n->a->type.size < bits / 8 ? n->a->type.size : bits / 8;
				emit(c, "__u64 %s = 0;", t);
				emit(c, "__builtin_memcpy(&%s, %s, %d);", t, a, nbytes);
				free(a);
				a = t;
			} else if (n->a->type.kind != T_PTR && !is_int(&n->a->type))
				ERR(n, "cannot cast %s to %s", a_type(&n->a->type), n->str);
			n->type = t_int(bits == 1 ? 1 : bits / 8, sgn);
			if (bits == 1)
				r = xasprintf("(!!(%s))", a);
			else if (n->a->type.kind == T_PTR && n->a->type.direct)   /* shifts, masks, xors work */
				r = xasprintf("((__%c%d)ut_ptr_int(%s))", sgn ? 's' : 'u', bits, a);
			else
				r = xasprintf("((__%c%d)(__u64)(%s))", sgn ? 's' : 'u', bits, a);
		}
		free(a);
		return r;
	}
	default:
		ERR(n, "this is not an expression");
		return xstrdup("0");
	}
}

static char *expr(struct compiler *c, struct node *n)
{
	return expr_inner(c, n);
}

/* ---- maps ---- */

static bool same_type_class(const struct type *a, const struct type *b)
{
	return a->kind == b->kind;
}

static struct map_info *map_get(struct compiler *c, struct node *ref)
{
	const char *name = ref->str;
	struct map_info *m = NULL;
	for (unsigned i = 0; i < c->nmaps; i++)
		if (strcmp(c->maps[i]->name, name) == 0)
			m = c->maps[i];
	unsigned nkeys = node_list_len(ref->a);
	if (nkeys > 8) {
		ERR(ref, "maps take at most 8 keys");
		return NULL;
	}
	if (!m) {
		c->maps = xrealloc_array(c->maps, c->nmaps + 1, sizeof(*c->maps));
		m = xcalloc(1, sizeof(*m));
		m->index = c->nmaps;
		c->maps[c->nmaps++] = m;
		m->name = xstrdup(name);
		m->loc = ref->loc;
		m->nkeys = nkeys;
		m->agg = UT_AGG_LAST;
	} else if (m->nkeys != nkeys) {
		ERR(ref, "%s is used with %u key%s here but %u at %d:%d", m->name, nkeys, nkeys == 1 ? "" : "s",
		    m->nkeys, m->loc.line, m->loc.col);
		return NULL;
	}
	ref->sym = (int)m->index;
	return m;
}

/* Builds the key struct in a temporary; returns its name. */
/* The key struct of a map access, filled.  With sig, also the key's C
 * joined, when every key is an integer expression written without
 * statements of its own (a variable, an argument, a constant): the same
 * text then means the same key in the next statement. */
static char *map_key(struct compiler *c, struct map_info *m, struct node *ref, char **sig)
{
	int idx = (int)m->index;
	char *k = new_tmp(c);
	char **vals = xcalloc(m->nkeys + 1, sizeof(char *));
	struct strbuf joined = {0};
	bool plain = sig != NULL;
	unsigned i = 0;
	for (struct node *e = ref->a; e; e = e->next, i++) {
		size_t before = c->out->len;
		vals[i] = expr(c, e);
		plain = plain && c->out->len == before && e->type.kind != T_STR;
		sb_printf(&joined, "%s\x1f", vals[i]);
		struct type *t = &e->type;
		if (t->kind == T_SHOW || t->kind == T_VOID) {
			ERR(e, "a map key must be an integer, pointer or string, not %s", type_name(t));
			continue;
		}
		if (m->key_types[i].kind == T_NONE) {
			m->key_types[i] = *t;
			m->key_show[i] = (struct ut_value){.kind = UT_VAL_FIELD, .field = i, .display = t->show,
							   .table = t->table};
			if (t->kind == T_PTR)
				m->key_show[i].display = UT_SHOW_HEX;
		} else if (!same_type_class(&m->key_types[i], t)) {
			ERR(e, "key %u of %s is %s here but %s elsewhere", i + 1, m->name, a_type(t),
			    a_type(&m->key_types[i]));
		} else if (t->kind == T_STR && t->size > m->key_types[i].size) {
			m->key_types[i].size = t->size;
		}
	}
	emit(c, "struct ut_mk_%d %s;", idx, k);
	emit(c, "__builtin_memset(&%s, 0, sizeof(%s));", k, k);
	i = 0;
	for (struct node *e = ref->a; e; e = e->next, i++) {
		if (e->type.kind == T_STR)
			emit(c, "__builtin_memcpy(%s.k%u, %s, sizeof(%s.k%u) < sizeof(%s) ? sizeof(%s.k%u) : sizeof(%s));",
			     k, i, vals[i], k, i, vals[i], k, i, vals[i]);
		else
			emit(c, "%s.k%u = (__u64)(%s);", k, i, vals[i]);
		free(vals[i]);
	}
	free(vals);
	if (sig)
		*sig = plain ? xstrdup(joined.s ? joined.s : "") : NULL;
	sb_free(&joined);
	return k;
}

static const struct {
	const char *name;
	enum ut_agg agg;
} aggs[] = {
	{"count", UT_AGG_COUNT}, {"sum", UT_AGG_SUM}, {"avg", UT_AGG_AVG}, {"min", UT_AGG_MIN},
	{"max", UT_AGG_MAX}, {"hist", UT_AGG_HIST}, {"lhist", UT_AGG_LHIST},
};

static int agg_of(const struct node *v)
{
	if (!v || v->kind != N_CALL)
		return -1;
	for (size_t i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++)
		if (strcmp(v->str, aggs[i].name) == 0)
			return (int)aggs[i].agg;
	return -1;
}


static void map_assign(struct compiler *c, struct node *n)
{
	struct map_info *m = map_get(c, n->a);
	if (!m)
		return;
	int agg = agg_of(n->b);
	int idx = (int)m->index;
	if (agg >= 0) {
		if (n->op != '=') {
			ERR(n, "use '=' with %s()", n->b->str);
			return;
		}
		if (m->kind == MAP_VALUE || (m->kind == MAP_AGG && m->agg != (enum ut_agg)agg)) {
			ERR(n, "%s is used as %s here but differently at %d:%d", m->name, n->b->str, m->loc.line, m->loc.col);
			return;
		}
		m->kind = MAP_AGG;
		m->assigned = true;
		m->agg = (enum ut_agg)agg;
		struct node *args[4];
		int na = collect_args(n->b->a, args, 4);
		int want = agg == UT_AGG_COUNT ? 0 : agg == UT_AGG_LHIST ? 4 : 1;
		if (na != want) {
			ERR(n->b, "%s() takes %d argument%s, not %d", n->b->str, want, want == 1 ? "" : "s", na);
			return;
		}
		if (agg == UT_AGG_LHIST) {
			int64_t bounds[3];
			for (int i = 1; i < 4; i++)
				if (!const_int(c, args[i], &bounds[i - 1], 0)) {
					ERR(args[i], "lhist()'s bounds and step must be constant integers (numbers, consts "
						     "and arithmetic on them)");
					return;
				}
			int64_t lo = bounds[0], hi = bounds[1], step = bounds[2];
			if (step <= 0 || hi <= lo || ((uint64_t)hi - (uint64_t)lo) / (uint64_t)step > 1000) {
				ERR(args[3], "lhist() needs min < max and a step giving at most 1000 buckets");
				return;
			}
			m->lhist_min = lo, m->lhist_max = hi, m->lhist_step = step;
		}
		char *v = want ? expr(c, args[0]) : xstrdup("1");
		if (want && !is_int(&args[0]->type))
			ERR(args[0], "%s() needs an integer, not %s", n->b->str, a_type(&args[0]->type));
		char *k = map_key(c, m, n->a, NULL);
		switch ((enum ut_agg)agg) {
		case UT_AGG_COUNT: case UT_AGG_SUM:
			emit(c, "ut_agg_add(&m_%d, &%s, (__s64)(%s));", idx, k, v);
			break;
		case UT_AGG_AVG:
			emit(c, "ut_agg_avg(&m_%d, &%s, (__s64)(%s));", idx, k, v);
			break;
		case UT_AGG_MIN: case UT_AGG_MAX:
			emit(c, "ut_agg_minmax(&m_%d, &%s, (__s64)(%s), %d);", idx, k, v, agg == UT_AGG_MIN);
			break;
		case UT_AGG_HIST:
			emit(c, "%s.bucket = ut_log2_bucket((__s64)(%s));", k, v);
			emit(c, "ut_agg_add(&m_%d, &%s, 1);", idx, k);
			break;
		case UT_AGG_LHIST:
			emit(c, "%s.bucket = ut_lin_bucket((__s64)(%s), %lldLL, %lldLL, %lldLL);", k, v,
			     (long long)m->lhist_min, (long long)m->lhist_max, (long long)m->lhist_step);
			emit(c, "ut_agg_add(&m_%d, &%s, 1);", idx, k);
			break;
		default:
			break;
		}
		free(k);
		free(v);
		return;
	}
	if (m->kind == MAP_AGG) {
		ERR(n, "%s holds %s(); it cannot also be assigned a value", m->name, aggs[m->agg].name);
		return;
	}
	char *v = expr(c, n->b);
	struct type *t = &n->b->type;
	if (t->kind == T_SHOW || t->kind == T_VOID) {
		ERR(n->b, "a map value must be an integer, pointer or string, not %s", type_name(t));
		free(v);
		return;
	}
	if (m->kind == MAP_VALUE && !m->assigned && t->kind != T_STR) {
		/* only read so far (typed as an integer provisionally): the
		 * first assignment decides */
		m->kind = MAP_UNSET;
	}
	if (m->kind == MAP_VALUE && !same_type_class(&m->value_type, t)) {
		ERR(n, "%s holds %s here but %s at %d:%d", m->name, a_type(t), a_type(&m->value_type),
		    m->loc.line, m->loc.col);
		free(v);
		return;
	}
	if (n->op != '=' && t->kind != T_INT) {
		ERR(n, "'+=' and '-=' need an integer");
		free(v);
		return;
	}
	m->assigned = true;
	if (m->kind == MAP_UNSET || (t->kind == T_STR && t->size > m->value_type.size)) {
		m->value_type = *t;
		m->value_type.direct = false;
	}
	if (m->kind == MAP_UNSET)
		m->value_show = (struct ut_value){.kind = UT_VAL_FIELD, .display = t->kind == T_PTR ? UT_SHOW_HEX : t->show,
						  .table = t->table};
	m->kind = MAP_VALUE;
	char *sig = NULL;
	char *k = map_key(c, m, n->a, &sig);
	if (t->kind == T_STR && is_path_call(c, n->b)) {
		/* its 256-byte buffer is map memory, as large as any string value */
		emit(c, "bpf_map_update_elem(&m_%d, &%s, %s, BPF_ANY);", idx, k, v);
	} else if (t->kind == T_STR) {
		/* staged in a per-CPU buffer: a second copy of the string on the
		 * stack is what overflows it */
		c->uses_scratch = true;
		emit(c, "{ struct ut_path_buf *val = ut_value_buf();");
		emit(c, "  if (val) { __builtin_memcpy(val->s, %s, sizeof(val->s) < sizeof(%s) ? sizeof(val->s) : sizeof(%s));", v, v, v);
		emit(c, "    bpf_map_update_elem(&m_%d, &%s, val, BPF_ANY); } }", idx, k);
	} else if (n->op == '=') {
		emit(c, "{ __u64 val = (__u64)(%s); bpf_map_update_elem(&m_%d, &%s, &val, BPF_ANY); }", v, idx, k);
	} else {
		emit(c, "ut_added_%u = ut_shared_add(&m_%d, &%s, %s(__s64)(%s));", c->nadded, idx, k,
		     n->op == '-' ? "-" : "", v);
		if (sig) {
			free(c->last_add.key);
			c->last_add.stmt = n;
			c->last_add.map = idx;
			c->last_add.key = sig;
			c->last_add.var = c->nadded;
			sig = NULL;
		}
		c->nadded++;
	}
	free(sig);
	free(k);
	free(v);
}

/* ---- records: statements that reach the trace ---- */

struct record {
	struct ut_event *ev;
	int index;
	struct strbuf fields;   /* struct members */
	struct strbuf assigns;  /* statements filling them */
	uint32_t size;
};

static unsigned add_field(struct record *r, enum ut_field_type type, uint32_t size, const char *cexpr)
{
	struct ut_event *ev = r->ev;
	unsigned i = ev->nfields++;
	ev->fields = xrealloc_array(ev->fields, ev->nfields, sizeof(*ev->fields));
	uint32_t padded = (size + 7) & ~7u;
	ev->fields[i] = (struct ut_field){.type = type, .offset = r->size, .size = type == UT_F_STR ? size : 8};
	if (type == UT_F_STR) {
		sb_printf(&r->fields, "\tchar f%u[%u];\n", i, padded);
		sb_printf(&r->assigns, "__builtin_memcpy(r->f%u, %s, sizeof(%s) < %u ? sizeof(%s) : %u);\n", i, cexpr,
			  cexpr, padded, cexpr, padded);
		r->size += padded;
	} else {
		sb_printf(&r->fields, "\t%s f%u;\n", type == UT_F_S64 ? "__s64" : "__u64", i);
		sb_printf(&r->assigns, "r->f%u = (%s)(%s);\n", i, type == UT_F_S64 ? "__s64" : "__u64", cexpr);
		r->size += 8;
	}
	return i;
}

/* Stores an evaluated value (C expression cx of n's type) in the record. */
static struct ut_value record_cvalue(struct compiler *c, struct record *r, struct node *n, const char *cx)
{
	struct type *t = &n->type;
	struct ut_value v = {.kind = UT_VAL_FIELD, .display = t->show, .table = t->table};
	switch (t->kind) {
	case T_INT:
		v.field = add_field(r, t->is_signed ? UT_F_S64 : UT_F_U64, 8, cx);
		break;
	case T_PTR:
		v.field = add_field(r, UT_F_PTR, 8, cx);
		v.display = UT_SHOW_HEX;
		break;
	case T_STR:
		v.field = add_field(r, UT_F_STR, t->size, cx);
		break;
	case T_SHOW:
		ERR(n, "formatted text can only be a name or an argument");
		v.kind = UT_VAL_NONE;
		break;
	default:
		v.kind = UT_VAL_NONE;
		break;
	}
	return v;
}

static struct ut_value record_value(struct compiler *c, struct record *r, struct node *n);

/* fmt() and printf(): the format (args[0]) is applied in user space to the
 * values args[1..na-1], each stored in the record. */
static struct ut_value format_value(struct compiler *c, struct record *r, struct node **args, int na)
{
	struct ut_value v = {.kind = UT_VAL_FORMAT, .nfmt = (unsigned)(na - 1)};
	v.fmt = xcalloc((size_t)na, sizeof(struct ut_value));
	for (int i = 1; i < na; i++)
		v.fmt[i - 1] = record_value(c, r, args[i]);
	check_format(c, args[0], args + 1, na - 1);
	v.text = xstrdup(args[0]->kind == N_STR ? args[0]->str : "");
	return v;
}

/* Evaluates n and describes how user space shows it. */
static struct ut_value record_value(struct compiler *c, struct record *r, struct node *n)
{
	struct node *e = n;
	while (e->kind == N_CALL && e->resolved)
		e = e->resolved;
	if (e->kind == N_STR) {
		e->type = t_str((int)strlen(e->str) + 1);
		return (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(e->str)};
	}
	if (e->kind == N_CALL && strcmp(e->str, "fmt") == 0 && !find_decl(c->fns, c->nfns, "fmt")) {
		struct node *args[17];
		int na = collect_args(e->a, args, 17);
		if (na < 1 || na > 17) {
			ERR(e, "fmt() takes a format and up to 16 values");
			return (struct ut_value){0};
		}
		struct ut_value v = format_value(c, r, args, na);
		e->type = t_show();
		n->type = e->type;
		return v;
	}
	char *cx = expr(c, n);
	struct ut_value v = record_cvalue(c, r, n, cx);
	free(cx);
	return v;
}

static struct record *record_begin(struct compiler *c, enum ut_event_op op, struct node *n)
{
	struct record *r = xcalloc(1, sizeof(*r));
	r->ev = gen_new_event(c, op, n->loc);
	r->index = (int)(r->ev - c->prog->events);
	r->size = 24;   /* struct ut_rec_hdr */
	r->ev->group = -1;
	r->ev->flow = -1;
	r->ev->category = xstrdup(c->alt->spec);
	return r;
}

static void record_args(struct compiler *c, struct record *r, struct node *with)
{
	for (struct node *w = with; w; w = w->next) {
		for (struct node *o = with; o != w; o = o->next)
			if (strcmp(o->str, w->str) == 0)
				ERR(w, "argument '%s' is given twice", w->str);
		r->ev->args = xrealloc_array(r->ev->args, r->ev->nargs + 1, sizeof(*r->ev->args));
		struct ut_named_value *a = &r->ev->args[r->ev->nargs++];
		a->name = xstrdup(w->str);
		a->value = record_value(c, r, w->a);
	}
}

/* When the stage has no room for `bytes` more: sends what it holds as one
 * sample, and fills it again (in and after for loops, whose records may
 * not all fit).  The same slot: no new look-up, and a state the verifier
 * can match with the path that did not send. */
static void stage_send(struct compiler *c, uint32_t bytes)
{
	emit(c, "if (ut_batch && ut_off > ut_batch_cap - %uU) {", bytes);
	emit(c, "\tut_send(ut_batch, ut_off, 1, %u);", c->alt->probe_index);
	emit(c, "\tut_off = 0;");
	emit(c, "}");
}

/* Writes the record's struct and the code that fills it.  Records of one
 * probe hit are staged and go out as one ring buffer sample (bpf/ut.h,
 * ut_batch_begin); check_probe_body sizes the stage.  Sizes are multiples
 * of 8, so the records of a sample stay aligned. */
static void record_end(struct compiler *c, struct record *r, const char *guard)
{
	r->size = (r->size + 7) & ~7u;
	r->ev->size = r->size;
	c->batch_bytes += r->size;
	if (r->size > c->max_record_bytes)
		c->max_record_bytes = r->size;
	sb_printf(&c->c_types, "struct ut_rec_%d {\n\tstruct ut_rec_hdr h;\n%s} __attribute__((aligned(8)));\n", r->index,
		  r->fields.s ? r->fields.s : "");
	sb_printf(&c->c_types, "_Static_assert(sizeof(struct ut_rec_%d) == %u, \"record layout\");\n\n", r->index, r->size);
	if (c->stage_refills)   /* after a loop that may have filled the stage */
		stage_send(c, r->size);
	emit(c, "%sif (ut_batch && ut_off <= ut_batch_cap - sizeof(struct ut_rec_%d)) {", guard ? guard : "", r->index);
	c->indent++;
	emit(c, "struct ut_rec_%d *r = (void *)(ut_batch + ut_off);", r->index);
	emit(c, "ut_header(&r->h, %d, ut_now);", r->index);
	for (char *line = r->assigns.s, *nl; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		emit(c, "%.*s", (int)(nl - line), line);
	}
	emit(c, "ut_off += sizeof(*r);");
	c->indent--;
	emit(c, "}");
	sb_free(&r->fields);
	sb_free(&r->assigns);
	free(r);
}

static void record_track(struct compiler *c, struct record *r, struct node *track)
{
	if (!track)
		return;
	r->ev->group = name_index(&c->prog->groups, &c->prog->ngroups, track->str);
	r->ev->group_key = record_value(c, r, track->a);
	if (r->ev->group_key.kind == UT_VAL_TEXT)
		ERR(track->a, "a track key must be a value computed by the probe, not a literal");
}

static void require_name(struct compiler *c, struct node *n, const char *what)
{
	if (n && n->type.kind == T_INT && n->type.show == UT_SHOW_PLAIN)
		ERR(n, "%s names are text: use a string, fmt(), or a table lookup", what);
}

static enum ut_event_op phase_op(int op, enum ut_event_op b, enum ut_event_op s, enum ut_event_op e)
{
	return op == OP_BEGIN ? b : op == OP_END ? e : s;
}

/* A flow or span key: evaluated once into a temporary, stored in the
 * record, and returned as the guard that samples on it (--sample keeps
 * whole flows: the decision is taken at the flow's begin and remembered). */
static char *record_key(struct compiler *c, struct record *r, struct node *keyref, bool begin)
{
	char *kx = expr(c, keyref->a);
	struct type *t = &keyref->a->type;
	if (t->kind != T_INT && t->kind != T_PTR) {
		ERR(keyref->a, "the key of %s[...] must be an integer or a pointer, not %s", keyref->str, a_type(t));
		free(kx);
		return NULL;
	}
	char *tmp = new_tmp(c);
	emit(c, "__u64 %s = (__u64)(%s);", tmp, kx);
	free(kx);
	r->ev->flow = name_index(&c->prog->flows, &c->prog->nflows, keyref->str);
	r->ev->key = record_cvalue(c, r, keyref->a, tmp);
	char *guard = xasprintf("if (ut_flow_sampled(%d, %s, %d)) ", r->ev->flow, tmp, begin);
	free(tmp);
	return guard;
}

static void stmt(struct compiler *c, struct node *n);

static void stmt_list(struct compiler *c, struct node *list)
{
	const struct node *outer = c->prev_stmt;
	if (!c->list_continues)
		c->prev_stmt = NULL;
	c->list_continues = false;
	for (; list; list = list->next) {
		stmt(c, list);
		c->prev_stmt = list;
	}
	c->prev_stmt = outer;
}

static void trace_stmt(struct compiler *c, struct node *n)
{
	struct record *r;
	char *guard = NULL;
	switch (n->kind) {
	case N_SLICE:
		r = record_begin(c, n->op == OP_BEGIN ? UT_EV_SLICE_BEGIN : UT_EV_SLICE_END, n);
		if (n->a) {
			r->ev->name = record_value(c, r, n->a);
			require_name(c, n->a, "slice");
		}
		record_track(c, r, n->b);
		break;
	case N_INSTANT: case N_COUNTER:
		r = record_begin(c, n->kind == N_INSTANT ? UT_EV_INSTANT : UT_EV_COUNTER, n);
		r->ev->name = record_value(c, r, n->a);
		require_name(c, n->a, n->kind == N_INSTANT ? "instant" : "counter");
		record_track(c, r, n->b);
		break;
	case N_FLOW: {
		r = record_begin(c, phase_op(n->op, UT_EV_FLOW_BEGIN, UT_EV_FLOW_STEP, UT_EV_FLOW_END), n);
		guard = record_key(c, r, n->a, n->op == OP_BEGIN);
		if (n->b) {
			r->ev->name = record_value(c, r, n->b);
			require_name(c, n->b, "flow point");
		} else {
			r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(c->alt->target)};
		}
		break;
	}
	case N_SPAN:
		r = record_begin(c, phase_op(n->op, UT_EV_SPAN_BEGIN, UT_EV_SPAN_PHASE, UT_EV_SPAN_END), n);
		r->ev->group = name_index(&c->prog->groups, &c->prog->ngroups, n->a->str);
		r->ev->group_key = record_value(c, r, n->a->a);
		guard = record_key(c, r, n->b, false);
		if (n->d) {
			r->ev->name = record_value(c, r, n->d);
			require_name(c, n->d, "span");
		} else if (n->op != OP_END) {
			ERR(n, "span %s needs a name", n->op == OP_BEGIN ? "begin" : "phase");
		}
		break;
	case N_TRACK_NAME:
		r = record_begin(c, UT_EV_GROUP_NAME, n);
		record_track(c, r, n->a);
		r->ev->name = record_value(c, r, n->b);
		require_name(c, n->b, "track");
		break;
	default:
		return;
	}
	record_args(c, r, n->c);
	if (n->kind == N_COUNTER)
		for (unsigned i = 0; i < r->ev->nargs; i++)
			if (r->ev->args[i].value.kind != UT_VAL_FIELD || r->ev->fields[r->ev->args[i].value.field].type == UT_F_STR)
				ERR(n, "counter values must be numbers");
	record_end(c, r, guard);
	free(guard);
}

static void printf_stmt(struct compiler *c, struct node *n, bool is_exit)
{
	struct record *r = record_begin(c, is_exit ? UT_EV_EXIT : UT_EV_PRINT, n);
	if (!is_exit) {
		struct node *args[17];
		int na = collect_args(n->a, args, 17);
		if (na < 1 || args[0]->kind != N_STR) {
			ERR(n, "printf() takes a format string and up to 16 values");
		} else {
			r->ev->name = format_value(c, r, args, na);
		}
	}
	record_end(c, r, NULL);
}

static void call_stmt(struct compiler *c, struct node *n)
{
	struct node *e = n->a;
	if (e->kind != N_CALL) {
		ERR(e, "this expression does nothing; did you mean to assign it?");
		free(expr(c, e));
		return;
	}
	struct node *fn = find_decl(c->fns, c->nfns, e->str);
	if (fn && fn->b->kind == N_BLOCK) {
		struct node *body = expand_macro(c, e, fn);
		if (body) {
			int errors = c->d->errors;
			c->macro_depth++;
			c->list_continues = true;   /* the body runs where the call is */
			stmt(c, body);
			c->macro_depth--;
			if (c->d->errors > errors && c->macro_depth < 3)
				diag_note(c->d, "in %s() called at %s:%d:%d", e->str, e->loc.file, e->loc.line, e->loc.col);
		}
		return;
	}
	if (strcmp(e->str, "printf") == 0)
		return printf_stmt(c, e, false);
	if (strcmp(e->str, "exit") == 0) {
		if (e->a)
			ERR(e, "exit() takes no arguments");
		return printf_stmt(c, e, true);
	}
	if (strcmp(e->str, "delete") == 0 || strcmp(e->str, "clear") == 0) {
		struct node *m = e->a;
		if (!m || m->kind != N_MAP_REF || m->next) {
			ERR(e, "%s() takes one map: %s(@name%s)", e->str, e->str, e->str[0] == 'd' ? "[key]" : "");
			return;
		}
		if (e->str[0] == 'c') {
			if (m->a)
				ERR(m, "clear() takes the whole map, without keys");
			bool known = false;
			const char *name = m->str;
			for (unsigned i = 0; i < c->nmaps; i++)
				known |= strcmp(c->maps[i]->name, name) == 0;
			if (!known) {
				ERR(m, "clear() of %s, which no probe before it assigns", m->str);
				return;
			}
			struct record *r = record_begin(c, UT_EV_CLEAR, e);
			r->ev->name = (struct ut_value){.kind = UT_VAL_TEXT, .text = xstrdup(name)};
			record_end(c, r, NULL);
			return;
		}
		struct map_info *mi = map_get(c, m);
		if (!mi)
			return;
		int idx = (int)mi->index;
		mi->deleted_in_bpf = true;
		char *k = map_key(c, mi, m, NULL);
		emit(c, "bpf_map_delete_elem(&m_%d, &%s);", idx, k);
		free(k);
		return;
	}
	char *r = expr(c, e);
	if (e->type.kind != T_VOID && !c->d->errors)
		ERR(e, "the value of %s() is not used", e->str);
	free(r);
}

/* The value of a constant integer expression: numbers, constants (-D
 * values too) and arithmetic on them.  False when it is not one, or
 * would divide by zero.  depth bounds chains of constants (a cycle is
 * reported by expr()). */
static bool const_int(struct compiler *c, const struct node *n, int64_t *v, int depth)
{
	uint64_t x, y;
	int64_t sx, sy;
	if (depth > 256)
		return false;
	switch (n->kind) {
	case N_INT:
		*v = n->num;
		return true;
	case N_IDENT: {
		struct node *k = find_decl(c->consts, c->nconsts, n->str);
		return k && k->sym != -2 && const_int(c, k->a, v, depth + 1);
	}
	case N_UNOP:
		if (!const_int(c, n->a, &sx, depth + 1))
			return false;
		x = (uint64_t)sx;
		*v = n->op == '-' ? (int64_t)(0 - x) : n->op == '~' ? (int64_t)~x : !x;
		return true;
	case N_BINOP:
		if (!const_int(c, n->a, &sx, depth + 1) || !const_int(c, n->b, &sy, depth + 1))
			return false;
		x = (uint64_t)sx, y = (uint64_t)sy;
		switch (n->op) {
		case '+': *v = (int64_t)(x + y); return true;
		case '-': *v = (int64_t)(x - y); return true;
		case '*': *v = (int64_t)(x * y); return true;
		case '&': *v = (int64_t)(x & y); return true;
		case '|': *v = (int64_t)(x | y); return true;
		case '^': *v = (int64_t)(x ^ y); return true;
		case OP_SHL: *v = y < 64 ? (int64_t)(x << y) : 0; return true;
		case OP_SHR: *v = y < 64 ? sx >> y : sx < 0 ? -1 : 0; return true;
		case '/': case '%':
			if (!sy)
				return false;
			if (sy == -1)   /* INT64_MIN / -1 does not overflow here */
				*v = n->op == '/' ? (int64_t)(0 - x) : 0;
			else
				*v = n->op == '/' ? sx / sy : sx % sy;
			return true;
		default:
			return false;
		}
	default:
		return false;
	}
}

static void stmt(struct compiler *c, struct node *n);

/* for ($i : A..B) { ... }: $i takes A, A+1, ..., B-1.  A plain C loop with
 * constant bounds: the verifier walks it iteration by iteration, hence the
 * bound on iterations (nested loops multiply).  $i is a signed 64-bit
 * local, in scope only in the body; the loop alone sets it. */
static void for_stmt(struct compiler *c, struct node *n)
{
	const char *var = n->str;
	int64_t first = 0, end = 0;
	bool ok = true;
	for (struct node *b = n->a; b; b = b == n->a ? n->b : NULL) {
		int errors = c->d->errors;
		struct strbuf unused = {0};   /* folded: no C for them */
		free(expr_to(c, b, &unused, c->indent));
		sb_free(&unused);
		if (c->d->errors > errors) {
			ok = false;
		} else if (!const_int(c, b, b == n->a ? &first : &end, 0)) {
			ERR(b, "a for loop's bounds are constant integers (numbers, consts, -D values and "
			    "arithmetic on them); to stop at a value known when the probe runs, loop up to "
			    "a constant maximum and 'break' there");
			ok = false;
		}
	}
	uint64_t iterations = ok && end > first ? (uint64_t)end - (uint64_t)first : 0;
	uint64_t in_all = iterations * c->loop_iterations;
	if (ok && end < first) {
		ERR(n->b, "this loop's end (%lld) is below its start (%lld): it would never run; "
		    "$i takes START, START+1, ..., END-1", (long long)end, (long long)first);
		ok = false;
	} else if (ok && iterations > UT_MAX_LOOP_ITERATIONS) {
		ERR(n->b, "this loop would run %llu times; a for loop runs at most %d (the BPF verifier "
		    "checks every iteration): loop over fewer values", (unsigned long long)iterations,
		    UT_MAX_LOOP_ITERATIONS);
		ok = false;
	} else if (ok && in_all > UT_MAX_LOOP_ITERATIONS) {
		ERR(n->b, "this loop would run %llu times in all, inside the loops around it; nested loops "
		    "run at most %d times in all (the BPF verifier checks every iteration)",
		    (unsigned long long)in_all, UT_MAX_LOOP_ITERATIONS);
		ok = false;
	}
	struct local *l = find_local(c, var);
	if (l && !l->loop_var) {
		ERR(n, "%s is already a local of this probe (assigned at %d:%d); give the loop's variable "
		    "a name of its own", var, l->loc.line, l->loc.col);
		return;
	}
	if (in_loop_of(c, var)) {
		ERR(n, "%s is already the variable of a loop around this one; give this loop's variable "
		    "another name", var);
		return;
	}
	if (c->loop_depth == UT_MAX_LOOP_DEPTH) {
		ERR(n, "for loops nest at most %d deep", UT_MAX_LOOP_DEPTH);
		return;
	}
	if (!l) {
		c->locals = xrealloc_array(c->locals, c->nlocals + 1, sizeof(*c->locals));
		c->locals[c->nlocals++] = (struct local){.name = xstrdup(var), .type = t_int(8, true), .loc = n->loc,
							 .loop_var = true};
	}
	/* The body first: the loop's head depends on the records it stages. */
	uint32_t before = c->batch_bytes;
	bool refills = c->stage_refills;
	uint64_t around = c->loop_iterations;
	struct strbuf body = {0}, *out = c->out;
	c->loop_vars[c->loop_depth++] = var;
	c->loop_iterations = ok && iterations ? in_all : around;
	c->stage_refills = false;
	c->out = &body;
	c->indent++;
	stmt_list(c, n->c->a);
	c->indent--;
	c->out = out;
	c->loop_depth--;
	c->loop_iterations = around;
	/* The stage holds the records before the loop, and room for the
	 * loop's: all of them, up to UT_LOOP_STAGE_BYTES (at least one
	 * iteration's).  When they may not all fit, each iteration starts by
	 * sending the stage if its records would not fit, and the records
	 * after the loop check one by one. */
	uint64_t iteration = c->batch_bytes - before;
	uint64_t all = iteration * (ok && iterations ? iterations : 1);
	uint64_t share = all <= UT_LOOP_STAGE_BYTES ? all : iteration > UT_LOOP_STAGE_BYTES ? iteration : UT_LOOP_STAGE_BYTES;
	c->batch_bytes = before + (uint32_t)share;
	c->stage_refills = refills || share < all;
	emit(c, "for (l_%s = %lldLL; l_%s < %lldLL; l_%s++) {", var + 1, (long long)first, var + 1,
	     (long long)end, var + 1);
	if (iteration) {
		/* The verifier follows ut_off's exact value on every path, and
		 * paths that staged different records never merge: their number
		 * grows with every iteration (24 iterations with one record under
		 * an if passed its million instructions).  Passed through the
		 * stage's memory (just past ut_batch_cap), ut_off is only a number
		 * below ut_off_mask, and each iteration's paths merge.  The
		 * stage has room for any record at any offset up to the mask:
		 * the checks against ut_batch_cap are made on copies the
		 * verifier may not link to the offset it adds (6.1 loses them). */
		c->indent++;
		emit(c, "if (ut_batch) {");
		emit(c, "\t*(volatile __u32 *)(ut_batch + ut_batch_cap) = ut_off;");
		emit(c, "\tut_off = *(volatile __u32 *)(ut_batch + ut_batch_cap) & ut_off_mask;");
		emit(c, "}");
		if (share < all)
			stage_send(c, (uint32_t)iteration);
		c->indent--;
		c->stage_reloads = true;
	}
	sb_puts(out, body.s ? body.s : "");
	sb_free(&body);
	emit(c, "}");
}

static void stmt(struct compiler *c, struct node *n)
{
	switch (n->kind) {
	case N_BLOCK:
		emit(c, "{");
		c->indent++;
		stmt_list(c, n->a);
		c->indent--;
		emit(c, "}");
		return;
	case N_EXPR_STMT:
		emit(c, "{");
		c->indent++;
		call_stmt(c, n);
		c->indent--;
		emit(c, "}");
		return;
	case N_LOCAL_ASSIGN: {
		emit(c, "{");
		c->indent++;
		char *v = expr(c, n->a);
		struct type *t = &n->a->type;
		struct local *l = find_local(c, n->str);
		if (l && l->loop_var) {
			if (in_loop_of(c, n->str))
				ERR(n, "%s is the variable of this for loop (%d:%d): only the loop changes it; "
				    "copy it to another local to compute with it", n->str, l->loc.line, l->loc.col);
			else
				ERR(n, "%s is the variable of the for loop at %d:%d; give this local another name",
				    n->str, l->loc.line, l->loc.col);
			l = NULL;
		} else if (t->kind == T_SHOW || t->kind == T_VOID) {
			ERR(n->a, "a local holds an integer, pointer or string, not %s", type_name(t));
		} else if (!l) {
			c->locals = xrealloc_array(c->locals, c->nlocals + 1, sizeof(*c->locals));
			l = &c->locals[c->nlocals++];
			*l = (struct local){.name = xstrdup(n->str), .type = *t, .loc = n->loc};
			l->type.direct = false;   /* starts as 0 and may be assigned on some paths only */
			if (t->kind == T_STR)
				l->type.size = 64 > t->size ? 64 : t->size;
		} else if (l->type.kind != t->kind) {
			ERR(n, "%s holds %s; it cannot take %s", n->str, a_type(&l->type), a_type(t));
		}
		if (l && t->kind == T_STR)
			emit(c, "__builtin_memcpy(l_%s, %s, sizeof(%s) < sizeof(l_%s) ? sizeof(%s) : sizeof(l_%s));",
			     n->str + 1, v, v, n->str + 1, v, n->str + 1);
		else if (l && t->kind == T_PTR)
			emit(c, "l_%s = (void *)(%s);", n->str + 1, v);
		else if (l)
			emit(c, "l_%s = %s;", n->str + 1, v);
		free(v);
		c->indent--;
		emit(c, "}");
		return;
	}
	case N_MAP_ASSIGN:
		emit(c, "{");
		c->indent++;
		map_assign(c, n);
		c->indent--;
		emit(c, "}");
		return;
	case N_IF: {
		emit(c, "{");
		c->indent++;
		char *cond = expr(c, n->a);
		if (!is_cond(&n->a->type))
			ERR(n->a, "the condition must be an integer or a pointer, not %s", a_type(&n->a->type));
		emit(c, "if (%s)", cond);
		free(cond);
		stmt(c, n->b);
		if (n->c) {
			emit(c, "else");
			stmt(c, n->c);
		}
		c->indent--;
		emit(c, "}");
		return;
	}
	case N_RETURN:
		emit(c, "goto ut_done;");   /* the records so far still go out */
		c->body_returns = true;
		return;
	case N_FOR:
		for_stmt(c, n);
		return;
	case N_BREAK: case N_CONTINUE:
		if (!c->loop_depth) {
			if (n->kind == N_BREAK)
				ERR(n, "'break' leaves a for loop, and this one is in none; "
				    "to leave the probe's body, use 'return'");
			else
				ERR(n, "'continue' goes on with a for loop's next iteration, and this one is in none; "
				    "to leave the probe's body, use 'return'");
			return;
		}
		emit(c, n->kind == N_BREAK ? "break;" : "continue;");
		return;
	case N_SLICE: case N_INSTANT: case N_COUNTER: case N_FLOW: case N_SPAN: case N_TRACK_NAME:
		emit(c, "{");
		c->indent++;
		trace_stmt(c, n);
		c->indent--;
		emit(c, "}");
		return;
	default:
		ERR(n, "this is not a statement");
	}
}

void check_probe_body(struct compiler *c, struct node *block, struct node *pred)
{
	struct strbuf head = {0}, body = {0};   /* the predicate, the statements */
	struct strbuf *saved = c->out;
	c->out = &head;
	c->indent = 1;
	c->nlocals = 0;
	c->nadded = 0;
	c->path_calls = 0;
	c->batch_bytes = 0;
	c->max_record_bytes = 0;
	c->body_reads_args = false;
	c->body_returns = false;
	c->loop_depth = 0;
	c->loop_iterations = 1;
	c->stage_refills = false;
	c->stage_reloads = false;
	if (pred) {
		emit(c, "{");
		c->indent++;
		char *p = expr(c, pred);
		if (!is_cond(&pred->type))
			ERR(pred, "the predicate must be an integer or pointer condition, not %s", a_type(&pred->type));
		emit(c, "if (!(%s))", p);
		emit(c, "\treturn 0;");
		free(p);
		c->indent--;
		emit(c, "}");
	}
	c->out = &body;
	c->in_body = true;
	c->body_uses_now = false;
	stmt_list(c, block->a);
	c->in_body = false;
	c->out = saved;
	/* the hit's time first: the stage notes when its hit began */
	if (c->batch_bytes || c->body_uses_now)
		sb_puts(&head, "\tconst __u64 ut_now = bpf_ktime_get_ns();\n");
	if (c->batch_bytes) {
		/* after the predicate: a hit it rejects stages nothing.  Without
		 * a buffer (nested too deep) the body still runs: its maps and
		 * aggregations stay exact, only its records are lost */
		uint32_t stage = c->batch_bytes, mask = 0;
		if (c->stage_reloads) {
			/* for_stmt's ut_off: room past the cap, a mask over it, and
			 * a whole record past the mask */
			while (mask < stage + 7)
				mask = mask << 1 | 1;
			stage = mask + 1 + c->max_record_bytes;
		}
		if (stage > c->max_batch_bytes)
			c->max_batch_bytes = stage;
		/* 64 bits with a loop's reload: clang-14 widens a 32-bit ut_off
		 * after checking it, into a register the verifier has no bound on */
		sb_printf(&head, "\tconst __u32 ut_batch_cap = %u;\n"
			  "\tchar *ut_batch = ut_batch_begin(%u, ut_now);\n"
			  "\t__u%d ut_off = 0;\n",
			  c->batch_bytes, c->alt->probe_index, c->stage_reloads ? 64 : 32);
		if (c->stage_reloads)
			sb_printf(&head, "\tconst __u64 ut_off_mask = %#x;\n", mask);
	}
	if (c->batch_bytes || c->body_returns)
		sb_puts(&body, "ut_done: __attribute__((unused));\n");
	if (c->batch_bytes)
		sb_printf(&body, "\tut_batch_end(ut_batch, ut_off, %u);\n", c->alt->probe_index);
	for (unsigned i = 0; i < c->nlocals; i++) {
		char *name = xasprintf("l_%s", c->locals[i].name + 1);
		char *d = c_decl(c, &c->locals[i].type, name);
		sb_printf(c->out, "\t%s = %s;\n", d, c->locals[i].type.kind == T_STR ? "{}" : "0");
		free(d);
		free(name);
		free(c->locals[i].name);
	}
	for (unsigned i = 0; i < c->nadded; i++)
		sb_printf(c->out, "\t__s64 ut_added_%u __attribute__((unused)) = 0;\n", i);
	free(c->last_add.key);
	c->last_add.key = NULL;
	c->last_add.stmt = NULL;
	sb_puts(c->out, c->computed_out[0].s ? c->computed_out[0].s : "");
	sb_puts(c->out, head.s ? head.s : "");
	sb_puts(c->out, c->computed_out[1].s ? c->computed_out[1].s : "");
	sb_puts(c->out, body.s ? body.s : "");
	sb_free(&head);
	sb_free(&body);
	sb_free(&c->computed_out[0]);
	sb_free(&c->computed_out[1]);
	for (unsigned i = 0; i < c->ncomputed_values; i++)
		free(c->computed_values[i].cvar);
	free(c->computed_values);
	c->computed_values = NULL;
	c->ncomputed_values = 0;
	free(c->locals);
	c->locals = NULL;
	c->nlocals = 0;
}
