/* The compiler's driver: reads the script and its imports, collects the
 * declarations, expands probes (aliases, wildcards, alternatives) and has
 * each alternative checked and written. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "compiler/compiler.h"
#include "compiler/parse.h"

const char *intern(struct compiler *c, const char *s)
{
	struct ut_program *p = c->prog;
	for (unsigned i = 0; i < p->nstrings; i++)
		if (strcmp(p->strings[i], s) == 0)
			return p->strings[i];
	p->strings = xrealloc_array(p->strings, p->nstrings + 1, sizeof(char *));
	p->strings[p->nstrings] = xstrdup(s);
	return p->strings[p->nstrings++];
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct strbuf b = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {   /* room for the NUL */
		buf[n] = 0;
		if (memchr(buf, 0, n)) {   /* binary: not a script */
			sb_free(&b);
			fclose(f);
			errno = EINVAL;
			return NULL;
		}
		sb_puts(&b, buf);
	}
	fclose(f);
	return b.s ? b.s : xstrdup("");
}

static struct node *load_text(struct compiler *c, const char *file, char *text);

static bool already_loaded(struct compiler *c, const char *path)
{
	for (unsigned i = 0; i < c->nloaded; i++)
		if (strcmp(c->loaded_files[i], path) == 0)
			return true;
	c->loaded_files = xrealloc_array(c->loaded_files, c->nloaded + 1, sizeof(char *));
	c->loaded_files[c->nloaded++] = xstrdup(path);
	return false;
}

/* import "name": -I directories, then the importing script's directory,
 * then the standard library. */
static struct node *load_import(struct compiler *c, struct node *imp)
{
	char rel[PATH_MAX];
	const char *name = imp->str;
	size_t len = strlen(name);
	snprintf(rel, sizeof(rel), "%s%s", name, len > 3 && strcmp(name + len - 3, ".ut") == 0 ? "" : ".ut");
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", imp->loc.file);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	const char *dirs[40];
	unsigned nd = 0;
	for (unsigned i = 0; i < c->opts->ninclude_dirs && nd < 37; i++)
		dirs[nd++] = c->opts->include_dirs[i];
	dirs[nd++] = dir;
	if (c->opts->stdlib_dir)
		dirs[nd++] = c->opts->stdlib_dir;
	for (unsigned i = 0; i < nd; i++) {
		char path[2 * PATH_MAX + 2], real[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dirs[i], rel);
		if (!realpath(path, real))
			continue;
		char importer[PATH_MAX];
		if (realpath(imp->loc.file, importer) && strcmp(importer, real) == 0)
			continue;   /* scripts/io_uring.ut imports the module io_uring, not itself */
		if (already_loaded(c, real))
			return NULL;
		char *text = read_file(real);
		if (!text)
			continue;
		return load_text(c, intern(c, path), text);
	}
	diag_error(c->d, imp->loc, "cannot find module '%s' (looked for %s in -I directories, %s%s%s)", name, rel, dir,
		   c->opts->stdlib_dir ? " and " : "", c->opts->stdlib_dir ? c->opts->stdlib_dir : "");
	return NULL;
}

/* Parses a file; its imports' items come before its own. */
static struct node *load_text(struct compiler *c, const char *file, char *text)
{
	c->texts = xrealloc_array(c->texts, c->ntexts + 1, sizeof(char *));
	c->texts[c->ntexts++] = text;
	diag_add_source(c->d, file, text);
	struct node *items = ut_parse(file, text, c->d);
	struct node_list out = {0};
	struct node *next;
	for (struct node *n = items; n; n = next) {
		next = n->next;
		n->next = NULL;
		if (n->kind == N_IMPORT) {
			node_list_push(&out, load_import(c, n));
			node_free(n);
		} else {
			node_list_push(&out, n);
		}
	}
	return out.head;
}

static void add_decl(struct compiler *c, struct node ***v, unsigned *n, struct node *item, const char *what)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp((*v)[i]->str, item->str) == 0) {
			diag_error(c->d, item->loc, "%s '%s' is already defined at %s:%d:%d", what, item->str,
				   (*v)[i]->loc.file, (*v)[i]->loc.line, (*v)[i]->loc.col);
			return;
		}
	*v = xrealloc_array(*v, *n + 1, sizeof(struct node *));
	(*v)[(*n)++] = item;
}

static void add_table(struct compiler *c, struct node *t)
{
	struct ut_program *p = c->prog;
	for (unsigned i = 0; i < p->ntables; i++)
		if (strcmp(p->tables[i].name, t->str) == 0) {
			diag_error(c->d, t->loc, "table '%s' is already defined", t->str);
			return;
		}
	p->tables = xrealloc_array(p->tables, p->ntables + 1, sizeof(*p->tables));
	struct ut_table *tab = &p->tables[p->ntables++];
	tab->name = xstrdup(t->str);
	tab->nentries = node_list_len(t->a);
	tab->entries = xcalloc(tab->nentries, sizeof(*tab->entries));
	unsigned i = 0;
	for (struct node *e = t->a; e; e = e->next, i++) {
		for (struct node *o = t->a; o != e; o = o->next)
			if (o->num == e->num)
				diag_error(c->d, e->loc, "key %lld appears twice in table '%s'", (long long)e->num, t->str);
		tab->entries[i].key = e->num;
		tab->entries[i].name = xstrdup(e->str);
	}
}

/* ---- probes ---- */

struct spec_ref {
	const char *text;
	struct ut_loc loc;
	struct node *declared;
	struct node *computed;
};

/* Expands aliases into the specs they stand for. */
static unsigned expand_specs(struct compiler *c, struct node *alts, struct spec_ref *out, unsigned max, bool *optional, int depth)
{
	unsigned n = 0;
	if (alts->num)
		*optional = true;
	for (struct node *s = alts->a; s; s = s->next) {
		if (!strchr(s->str, ':') && strcmp(s->str, "BEGIN") && strcmp(s->str, "END")) {
			struct node *al = NULL;
			for (unsigned i = 0; i < c->naliases; i++)
				if (strcmp(c->aliases[i]->str, s->str) == 0)
					al = c->aliases[i];
			if (!al) {
				diag_error(c->d, s->loc, "unknown probe '%s' (probes are written kind:target, e.g. tracepoint:io_uring:io_uring_complete, or are aliases declared with 'probe NAME = ...')", s->str);
				continue;
			}
			if (depth > 8) {
				diag_error(c->d, s->loc, "probe alias '%s' refers to itself", s->str);
				continue;
			}
			if (al->a->next) {
				diag_error(c->d, s->loc, "probe alias '%s' is a list of %u probes; it cannot be one of a probe's alternatives",
					   s->str, node_list_len(al->a));
				continue;
			}
			n += expand_specs(c, al->a, out + n, max - n, optional, depth + 1);
			continue;
		}
		if (n < max)
			out[n++] = (struct spec_ref){s->str, s->loc, s->a, s->b};
		else
			diag_error(c->d, s->loc, "too many alternatives (at most %u)", max);
	}
	return n;
}

static void split_spec(const char *spec, char *kind, size_t klen, const char **target)
{
	const char *colon = strchr(spec, ':');
	if (!colon) {
		snprintf(kind, klen, "%s", spec);
		*target = spec + strlen(spec);
		return;
	}
	snprintf(kind, klen, "%.*s", (int)(colon - spec), spec);
	*target = colon + 1;
}

static void not_found_note(struct compiler *c, const struct probe_kind_def *def, const char *target)
{
	char **names = NULL;
	int n = -1;
	char glob[256];
	bool by_name = false;   /* candidates are "category:name", the target a name */
	if (strlen(target) > 128 || !target[0]) {
		/* no suggestion: edit distances over thousands of names cost too much */
	} else if (def->kind == UT_PROBE_TRACEPOINT) {
		const char *colon = strchr(target, ':');
		snprintf(glob, sizeof(glob), "%.*s:*", colon ? (int)(colon - target) : 0, target);
		n = ut_kernel_tracepoints_matching(c->k, glob, &names);
	} else if (def->kind == UT_PROBE_TP_BTF || def->kind == UT_PROBE_RAW_TP) {
		/* names starting with the same letter (a typo there is not caught) */
		snprintf(glob, sizeof(glob), "*:%c*", target[0]);
		n = ut_kernel_tracepoints_matching(c->k, glob, &names);
		by_name = true;
	} else if (def->kind == UT_PROBE_KPROBE || def->kind == UT_PROBE_KRETPROBE ||
		   def->kind == UT_PROBE_FENTRY || def->kind == UT_PROBE_FEXIT) {
		snprintf(glob, sizeof(glob), "%c*", target[0]);
		n = ut_kernel_functions_matching(c->k, glob, &names);
	}
	if (n > 0) {
		char **cands = xcalloc((size_t)n, sizeof(char *));
		for (int i = 0; i < n; i++) {
			const char *colon = by_name ? strchr(names[i], ':') : NULL;
			cands[i] = colon ? (char *)colon + 1 : names[i];
		}
		const char *s = ut_suggest(target, cands, (unsigned)n);
		if (s)
			diag_note(c->d, "did you mean %s:%s?", def->name, s);
		free(cands);
	} else if (def->kind == UT_PROBE_TRACEPOINT && n == 0) {
		diag_note(c->d, "this kernel has no tracepoint category '%.*s'; list them with: uring-trace -l 'tracepoint:*'",
			  (int)strcspn(target, ":"), target);
	}
	if (n > 0)
		ut_strv_free(names, n);
}

static void compile_alternative(struct compiler *c, struct ut_probe *p, unsigned pi, const struct probe_kind_def *def,
				const struct spec_ref *s, const char *target, struct node *block)
{
	struct ut_alt *alt = &p->alts[p->nalts];
	struct alt_ctx a = {.def = def, .probe = p, .probe_index = pi, .alt = alt, .spec = s->text, .declared = s->declared,
			 .computed = s->computed};
	alt->kind = def->kind;
	alt->prog_name = xasprintf("ut_p%u_a%u", pi, p->nalts);
	int rc = def->resolve(c, &a, target, s->loc);
	if (rc != 0) {
		free(alt->prog_name);
		alt->prog_name = NULL;
		goto out;
	}
	alt->target = xstrdup(a.target);
	p->nalts++;
	c->alt = &a;
	struct strbuf fn = {0};
	sb_printf(&fn, "/* %s:%d:%d %s */\n", s->loc.file, s->loc.line, s->loc.col, s->text);
	def->header(c, &a, &fn);
	if (def->kind != UT_PROBE_BEGIN && def->kind != UT_PROBE_END && def->kind != UT_PROBE_INTERVAL && !block->num)
		sb_puts(&fn, "\tif (!ut_pass_filter())\n\t\treturn 0;\n");
	c->out = &fn;
	check_probe_body(c, block->c, block->b);
	if (!c->body_reads_args) {
		/* nothing depends on the argument types: any kernel's will do
		 * (sched_process_exit gained a bool argument after 6.12) */
		free(alt->signature);
		alt->signature = NULL;
	}
	sb_puts(&fn, "\treturn 0;\n}\n\n");
	sb_puts(&c->c_types, a.prelude.s ? a.prelude.s : "");
	sb_puts(&c->c_funcs, fn.s);
	sb_free(&fn);
	if (c->opts->dump_ast) {
		fprintf(c->opts->dump_ast, "# %s\n", s->text);
		ast_dump(block, 0, c->opts->dump_ast);
	}
	c->alt = NULL;
out:
	for (unsigned i = 0; i < a.nargs; i++) {
		free(a.args[i].cexpr);
		free(a.args[i].exists_cexpr);
	}
	free(a.args);
	free(a.target);
	sb_free(&a.prelude);
}

static struct ut_probe *new_probe(struct compiler *c, const char *spec, struct ut_loc loc, bool optional, unsigned max_alts)
{
	struct ut_program *pr = c->prog;
	pr->probes = xrealloc_array(pr->probes, pr->nprobes + 1, sizeof(*pr->probes));
	struct ut_probe *p = &pr->probes[pr->nprobes++];
	memset(p, 0, sizeof(*p));
	p->spec = xstrdup(spec);
	p->loc = loc;
	p->optional = optional;
	p->alts = xcalloc(max_alts, sizeof(*p->alts));
	return p;
}

static bool has_wildcard(const char *s) { return strpbrk(s, "*?[") != NULL; }

static void compile_probe(struct compiler *c, struct node *alts, struct node *block, bool optional)
{
	struct spec_ref specs[16];
	unsigned n = expand_specs(c, alts, specs, 16, &optional, 0);
	if (n == 0)
		return;
	/* One spec with a wildcard: one probe per match. */
	char kind[64];
	const char *target;
	split_spec(specs[0].text, kind, sizeof(kind), &target);
	const struct probe_kind_def *def0 = probe_kind_find(kind);
	if (n == 1 && def0 && has_wildcard(target)) {
		char **names = NULL;
		int m = -1;
		if (def0->kind == UT_PROBE_TRACEPOINT)
			m = ut_kernel_tracepoints_matching(c->k, target, &names);
		else if (def0->kind == UT_PROBE_KPROBE || def0->kind == UT_PROBE_KRETPROBE ||
			 def0->kind == UT_PROBE_FENTRY || def0->kind == UT_PROBE_FEXIT)
			m = ut_kernel_functions_matching(c->k, target, &names);
		else
			diag_error(c->d, specs[0].loc, "wildcards work in tracepoint, kprobe and fentry probes only");
		if (m == 0 && !optional)
			diag_error(c->d, specs[0].loc, "'%s' matches nothing on kernel %s", specs[0].text, ut_kernel_release(c->k));
		int nmatched = m;   /* the names to free */
		if (m > 500) {
			diag_error(c->d, specs[0].loc, "'%s' matches %d probes; narrow it down (at most 500)", specs[0].text, m);
			m = 0;
		}
		for (int i = 0; i < m; i++) {
			char *full = xasprintf("%s:%s", def0->name, names[i]);
			struct spec_ref one = {intern(c, full), specs[0].loc, NULL, specs[0].computed};
			struct ut_probe *p = new_probe(c, full, specs[0].loc, optional, 1);
			compile_alternative(c, p, c->prog->nprobes - 1, def0, &one, names[i], block);
			free(full);
		}
		if (nmatched > 0)
			ut_strv_free(names, nmatched);
		return;
	}
	struct strbuf joined = {0};
	for (unsigned i = 0; i < n; i++)
		sb_printf(&joined, "%s%s", i ? " | " : "", specs[i].text);
	struct ut_probe *p = new_probe(c, joined.s, alts->loc, optional, n);
	unsigned pi = c->prog->nprobes - 1;
	sb_free(&joined);
	int errors = c->d->errors;
	for (unsigned i = 0; i < n; i++) {
		split_spec(specs[i].text, kind, sizeof(kind), &target);
		const struct probe_kind_def *def = probe_kind_find(kind);
		if (!def) {
			diag_error(c->d, specs[i].loc, "unknown probe kind '%s' (use tracepoint, tp_btf, raw_tp, kprobe, kretprobe, fentry, fexit, uprobe, uretprobe, interval, BEGIN or END)", kind);
			continue;
		}
		if (has_wildcard(target)) {
			diag_error(c->d, specs[i].loc, "wildcards cannot be combined with alternatives");
			continue;
		}
		compile_alternative(c, &c->prog->probes[pi], pi, def, &specs[i], target, block);
	}
	p = &c->prog->probes[pi];
	if (p->nalts == 0 && c->d->errors == errors && !optional) {
		split_spec(specs[0].text, kind, sizeof(kind), &target);
		const struct probe_kind_def *def = probe_kind_find(kind);
		if (n == 1 && def && (def->kind == UT_PROBE_UPROBE || def->kind == UT_PROBE_URETPROBE)) {
			uprobe_absent(c, specs[0].loc, target);
		} else if (n == 1) {
			diag_error(c->d, specs[0].loc, "%s does not exist on kernel %s", specs[0].text, ut_kernel_release(c->k));
			not_found_note(c, def, target);
		} else {
			diag_error(c->d, alts->loc, "none of the %u alternatives of this probe exists on kernel %s", n,
				   ut_kernel_release(c->k));
		}
		diag_note(c->d, "mark a probe that may be missing with '?' to let the script run without it");
	}
}

static bool same_literal(const struct node *a, const struct node *b)
{
	if (a->kind != b->kind)
		return false;
	return a->kind == N_INT ? a->num == b->num : a->kind == N_STR && strcmp(a->str, b->str) == 0;
}

/* A constant declared with the values it may take (const unit: "ns" | "us"
 * = "us";) must hold one of them, from its declaration or from -D. */
static void check_choices(struct compiler *c, const struct node *k, const char *define)
{
	if (!k->b)
		return;
	for (const struct node *ch = k->b; ch; ch = ch->next)
		if (same_literal(k->a, ch))
			return;
	struct strbuf list = {0};
	for (const struct node *ch = k->b; ch; ch = ch->next) {
		const char *sep = ch == k->b ? "" : ch->next ? ", " : " or ";
		if (ch->kind == N_INT)
			sb_printf(&list, "%s%lld", sep, (long long)ch->num);
		else
			sb_printf(&list, "%s\"%s\"", sep, ch->str);
	}
	if (define) {
		diag_error(c->d, (struct ut_loc){0}, "-D %s: '%s' is one of %s", define, k->str, list.s);
		diag_note(c->d, "'%s' is declared at %s:%d:%d", k->str, k->loc.file, k->loc.line, k->loc.col);
	} else {
		diag_error(c->d, k->a->loc, "the default of '%s' must be one of its values: %s", k->str, list.s);
	}
	sb_free(&list);
}

/* The probes of an alias that stands for a list of them (probe reads =
 * A, B;), when alts is just its name (or the name of an alias of it);
 * else NULL. */
static struct node *alias_list(struct compiler *c, const struct node *alts, int depth)
{
	const struct node *s = alts->a;
	if (!s || s->next || strchr(s->str, ':') || depth > 8)
		return NULL;
	for (unsigned i = 0; i < c->naliases; i++)
		if (strcmp(c->aliases[i]->str, s->str) == 0)
			return c->aliases[i]->a->next ? c->aliases[i]->a : alias_list(c, c->aliases[i]->a, depth + 1);
	return NULL;
}

/* One probe of a probe list, or each probe of a list alias; a '?' after
 * the alias makes every one of them optional. */
static void compile_probes(struct compiler *c, struct node *alts, struct node *block, bool optional, int depth)
{
	struct node *list = alias_list(c, alts, 0);
	if (!list) {
		compile_probe(c, alts, block, optional);
		return;
	}
	if (depth > 8) {
		diag_error(c->d, alts->loc, "probe alias '%s' refers to itself", alts->a->str);
		return;
	}
	for (struct node *p = list; p; p = p->next)
		compile_probes(c, p, block, optional || alts->num, depth + 1);
}

/* -D NAME=VALUE replaces the value of `const NAME`: scripts declare their
 * options as constants with defaults. */
static void apply_defines(struct compiler *c)
{
	for (unsigned i = 0; i < c->opts->ndefines; i++) {
		const char *def = c->opts->defines[i];
		const char *eq = strchr(def, '=');
		size_t len = eq ? (size_t)(eq - def) : strlen(def);
		const char *value = eq ? eq + 1 : "1";
		struct node *k = NULL;
		for (unsigned j = 0; j < c->nconsts; j++)
			if (strlen(c->consts[j]->str) == len && strncmp(c->consts[j]->str, def, len) == 0)
				k = c->consts[j];
		if (!k) {
			diag_error(c->d, (struct ut_loc){0}, "-D %.*s: the script declares no constant '%.*s' (options are set with const NAME = default;)",
				   (int)len, def, (int)len, def);
			continue;
		}
		char *end;
		errno = 0;
		long long v = strtoll(value, &end, 0);
		bool above = errno == ERANGE && v == LLONG_MAX;   /* typed unsigned, as in scripts */
		if (above) {
			errno = 0;
			v = (long long)strtoull(value, &end, 0);
		}
		struct node *n = node_new(*end || !*value ? N_STR : N_INT, k->a->loc);
		if (n->kind == N_INT && errno == ERANGE)
			diag_error(c->d, (struct ut_loc){0}, "-D %s: the value does not fit in 64 bits", def);
		if (n->kind == N_INT) {
			n->num = v;
			n->op = above ? 'u' : 0;
		} else {
			n->str = xstrdup(value);
		}
		node_free(k->a);
		k->a = n;
		k->num = 1;
		check_choices(c, k, def);
	}
	for (unsigned j = 0; j < c->nconsts; j++)
		if (!c->consts[j]->num)
			check_choices(c, c->consts[j], NULL);
}

/* Does a flow (or a span on a track kind) of this name begin anywhere
 * under n?  Probes absent on this kernel count: the script is checked,
 * not one kernel's share of it. */
static bool begun(const struct node *n, enum node_kind kind, const char *name)
{
	for (; n; n = n->next) {
		if (n->kind == kind && n->op == OP_BEGIN && n->a && strcmp(n->a->str, name) == 0)
			return true;
		if (begun(n->a, kind, name) || begun(n->b, kind, name) || begun(n->c, kind, name) ||
		    begun(n->d, kind, name))
			return true;
	}
	return false;
}

/* A flow step or end with no flow begin (a span phase or end with no span
 * begin on that track kind) in the whole script is an error. */
static void check_unbegun(struct compiler *c, const struct node *items, const struct node *n)
{
	for (; n; n = n->next) {
		if ((n->kind == N_FLOW || n->kind == N_SPAN) && n->op != OP_BEGIN && n->a && !begun(items, n->kind, n->a->str)) {
			bool flow = n->kind == N_FLOW;
			diag_error(c->d, n->loc, "%s '%s' %s here but begins nowhere; begin it in some probe: %s %s[key] begin%s",
				   flow ? "flow" : "span on track", n->a->str,
				   n->op == OP_END ? "ends" : flow ? "steps" : "changes phase",
				   flow ? "flow" : "span", n->a->str, flow ? "" : " ITEM[key] \"name\"");
		}
		check_unbegun(c, items, n->a);
		check_unbegun(c, items, n->b);
		check_unbegun(c, items, n->c);
		check_unbegun(c, items, n->d);
	}
}

struct ut_program *ut_compile(const struct ut_compile_opts *o, struct ut_kernel *k, struct diag *d)
{
	struct compiler cc = {.d = d, .k = k, .opts = o};
	struct compiler *c = &cc;
	c->prog = xcalloc(1, sizeof(*c->prog));
	struct node *items;
	if (o->file) {
		char *text = read_file(o->file);
		if (!text) {
			diag_error(d, (struct ut_loc){0}, "cannot read %s: %s", o->file, strerror(errno));
			ut_program_free(c->prog);
			return NULL;
		}
		char real[PATH_MAX];
		if (realpath(o->file, real))
			already_loaded(c, real);
		items = load_text(c, intern(c, o->file), text);
	} else {
		items = load_text(c, intern(c, "-e"), xstrdup(o->text ? o->text : ""));
	}
	for (struct node *n = items; n; n = n->next) {
		switch (n->kind) {
		case N_CONST: add_decl(c, &c->consts, &c->nconsts, n, "constant"); break;
		case N_TABLE: add_table(c, n); break;
		case N_FN: add_decl(c, &c->fns, &c->nfns, n, "function"); break;
		case N_ALIAS: add_decl(c, &c->aliases, &c->naliases, n, "probe alias"); break;
		default: break;
		}
	}
	apply_defines(c);
	/* probe bodies only: a library's unused statement functions are not
	 * held to it */
	for (struct node *n = items; n; n = n->next)
		if (n->kind == N_PROBE_BLOCK)
			check_unbegun(c, items, n->c);
	unsigned blocks = 0;
	for (struct node *n = items; n; n = n->next) {
		if (n->kind != N_PROBE_BLOCK)
			continue;
		blocks++;
		for (struct node *alts = n->a; alts; alts = alts->next)
			compile_probes(c, alts, n, false, 0);
	}
	if (blocks == 0 && d->errors == 0)
		diag_error(d, (struct ut_loc){intern(c, o->file ? o->file : "-e"), 1, 1},
			   "the script has no probes; add one, e.g. tracepoint:io_uring:io_uring_complete { @[comm] = count(); }");
	for (unsigned i = 0; i < c->nmaps; i++)
		if (c->maps[i]->read_in_bpf && !c->maps[i]->assigned)
			diag_error(d, c->maps[i]->read_loc, "%s is read but never assigned", c->maps[i]->name);
	struct ut_program *prog = c->prog;
	if (d->errors == 0)
		prog->bpf_c = gen_finish(c);
	node_free(items);
	free(c->consts);
	free(c->tables);
	free(c->fns);
	free(c->aliases);
	for (unsigned i = 0; i < c->nmaps; i++) {
		free(c->maps[i]->name);
		free(c->maps[i]);
	}
	free(c->maps);
	for (unsigned i = 0; i < c->nloaded; i++)
		free(c->loaded_files[i]);
	free(c->loaded_files);
	sb_free(&c->c_types);
	sb_free(&c->c_maps);
	sb_free(&c->c_funcs);
	/* diagnostics quote the texts: keep them until the caller is done */
	if (d->errors) {
		for (unsigned i = 0; i < c->ntexts; i++)
			free(c->texts[i]);
		free(c->texts);
		diag_free(d);
		ut_program_free(prog);
		return NULL;
	}
	for (unsigned i = 0; i < c->ntexts; i++)
		free(c->texts[i]);
	free(c->texts);
	diag_free(d);
	return prog;
}
