/* The compiler's driver: reads the script and its imports, collects the
 * declarations, expands probes (aliases, wildcards, alternatives) and has
 * each alternative checked and written. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "compiler/check.h"
#include "compiler/passes.h"
#include "compiler/gen.h"
#include "compiler/gen_native.h"
#include "compiler/parse.h"
#include "compiler/program_fields.h"

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

/* A script's text; NULL, with why it cannot be one in *why. */
static char *read_file(const char *path, const char **why)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	if (!f || fstat(fileno(f), &st) != 0) {
		*why = strerror(errno);
		if (f)
			fclose(f);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		*why = "it is a directory, not a script file";
		fclose(f);
		return NULL;
	}
	struct strbuf b = {0};
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf) - 1, f)) > 0) {   /* room for the NUL */
		buf[n] = 0;
		if (memchr(buf, 0, n)) {
			*why = "it holds binary data (a NUL byte), not script text; a compiled script is a .uto "
			       "file made by --compile";
			break;
		}
		sb_puts(&b, buf);
	}
	if (n == 0 && ferror(f))
		*why = strerror(errno);
	bool failed = n > 0 || ferror(f);
	fclose(f);
	if (failed) {
		sb_free(&b);
		return NULL;
	}
	return b.s ? b.s : xstrdup("");
}

static struct node *load_text(struct compiler *c, const char *file, char *text);

/* path (a script read, a directory searched) into the caller's inputs */
static void note_input(struct compiler *c, const char *path)
{
	struct ut_compile_inputs *in = c->opts->inputs;
	char real[PATH_MAX];
	if (!in)
		return;
	if (!realpath(path, real)) {
		in->unnamed = true;
		return;
	}
	for (unsigned i = 0; i < in->n; i++)
		if (strcmp(in->paths[i], real) == 0)
			return;
	in->paths = xrealloc_array(in->paths, in->n + 1, sizeof(char *));
	in->paths[in->n++] = xstrdup(real);
}

void ut_compile_inputs_free(struct ut_compile_inputs *in)
{
	for (unsigned i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	*in = (struct ut_compile_inputs){0};
}

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
	const char *itself = NULL;
	for (unsigned i = 0; i < nd; i++) {
		char path[2 * PATH_MAX + 2], real[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dirs[i], rel);
		note_input(c, dirs[i]);   /* a module put in a directory searched first would be found instead */
		if (!realpath(path, real))
			continue;
		note_input(c, real);
		char importer[PATH_MAX];
		if (realpath(imp->loc.file, importer) && strcmp(importer, real) == 0) {
			itself = imp->loc.file;   /* scripts/io_uring.ut imports the module io_uring, not itself */
			continue;
		}
		if (already_loaded(c, real))
			return NULL;
		const char *why;
		char *text = read_file(real, &why);
		if (!text) {
			diag_error(c->d, imp->loc, "cannot read module '%s' at %s: %s", name, path, why);
			return NULL;
		}
		return load_text(c, intern(c, path), text);
	}
	if (itself)
		diag_error(c->d, imp->loc, "module '%s' is this script itself (%s), which cannot import itself, and no "
			   "other module '%s' is found (in -I directories, %s%s%s); rename the script or the module",
			   name, itself, name, dir, c->opts->stdlib_dir ? " and " : "",
			   c->opts->stdlib_dir ? c->opts->stdlib_dir : "");
	else
		diag_error(c->d, imp->loc, "cannot find module '%s' (looked for %s in -I directories, %s%s%s)", name, rel,
			   dir, c->opts->stdlib_dir ? " and " : "", c->opts->stdlib_dir ? c->opts->stdlib_dir : "");
	return NULL;
}

/* #include <path> of a bpftrace script: where the standard library has a
 * module for the header (stdlib/include_sys_socket.ut for sys/socket.h),
 * its constants stand for the header's macros, which bpftrace reads
 * through clang; a script's own constant of the same name replaces them.
 * Other headers are comments, as they were. */
static struct node *load_header(struct compiler *c, struct node *inc)
{
	if (!c->opts->stdlib_dir)
		return NULL;
	char name[PATH_MAX] = "include_";
	size_t at = strlen(name);
	for (const char *p = inc->str; *p && at + 1 < sizeof(name); p++)
		name[at++] = *p == '/' || *p == '.' || *p == '-' ? '_' : *p;
	name[at] = 0;
	if (at > 2 && strcmp(name + at - 2, "_h") == 0)
		name[at - 2] = 0;
	char path[2 * PATH_MAX + 8], real[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s.ut", c->opts->stdlib_dir, name);
	note_input(c, c->opts->stdlib_dir);
	if (!realpath(path, real))
		return NULL;
	free(inc->str);
	inc->str = xstrdup(name);
	c->in_header++;
	struct node *items = load_import(c, inc);
	c->in_header--;
	return items;
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
			node_list_push(&out, n->num == IMPORT_OF_HEADER ? load_header(c, n) : load_import(c, n));
			node_free(n);
		} else {
			if (n->kind == N_CONST && c->in_header)
				n->num = CONST_FROM_HEADER;
			node_list_push(&out, n);
		}
	}
	return out.head;
}

struct node *find_decl(struct node **v, unsigned n, const char *name)
{
	for (unsigned i = n; i-- > 0;)
		if (strcmp(v[i]->str, name) == 0)
			return v[i];
	return NULL;
}

static void add_decl(struct compiler *c, struct node ***v, unsigned *n, struct node *item, const char *what)
{
	for (unsigned i = 0; i < *n; i++)
		if (strcmp((*v)[i]->str, item->str) == 0) {
			/* a header's macros give way to the script's constants, and
			 * two headers may both define one */
			if (item->kind == N_CONST && item->num == CONST_FROM_HEADER)
				return;
			if (item->kind == N_CONST && (*v)[i]->num == CONST_FROM_HEADER) {
				(*v)[i] = item;
				return;
			}
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

/* A spec with the script's positional parameters in place of $1 ...
 * (usdt:$1:probe, as bpftrace writes it); NULL (reported) when one is
 * not given. */
static const char *spec_parameters(struct compiler *c, const char *text, struct ut_loc loc)
{
	if (!strchr(text, '$'))
		return text;
	struct strbuf out = {0};
	const char *result = NULL;
	for (const char *p = text; *p; p++) {
		if (p[0] != '$' || p[1] < '0' || p[1] > '9') {
			sb_printf(&out, "%c", *p);
			continue;
		}
		char *end;
		unsigned long i = strtoul(p + 1, &end, 10);
		if (i < 1 || i > c->opts->npositional) {
			diag_error(c->d, loc, "this probe names $%lu, but %u positional parameter%s given after the script", i,
				   c->opts->npositional, c->opts->npositional == 1 ? " was" : "s were");
			goto done;
		}
		sb_puts(&out, c->opts->positional[i - 1]);
		p = end - 1;
	}
	result = intern(c, out.s);
done:
	sb_free(&out);
	return result;
}

/* Expands aliases into the specs they stand for. */
static unsigned expand_specs(struct compiler *c, struct node *alts, struct spec_ref *out, unsigned max, bool *optional, int depth)
{
	unsigned n = 0;
	if (alts->num)
		*optional = true;
	for (struct node *s = alts->a; s; s = s->next) {
		const struct probe_kind_def *alone = probe_kind_find(s->str);
		if (!strchr(s->str, ':') && !(alone && alone->no_target)) {
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
		const char *text = spec_parameters(c, s->str, s->loc);
		if (!text)
			continue;
		if (n < max)
			out[n++] = (struct spec_ref){text, s->loc, s->a, s->b};
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

static void alt_free(struct alt_ctx *a)
{
	for (unsigned i = 0; i < a->nargs; i++) {
		free(a->args[i].cexpr);
		free(a->args[i].exists_cexpr);
	}
	free(a->args);
	free(a->target);
	sb_free(&a->prelude);
	node_free(a->pred);
	node_free(a->block);
	for (unsigned i = 0; i < a->nlocals; i++)
		free(a->locals[i].name);
	free(a->locals);
	for (unsigned i = 0; i < a->ncomputed_args; i++)
		node_free(a->computed_args[i].value);
	free(a->computed_args);
	free(a->captures);
	free(a->captured);
	free(a->pred_kept);
	free(a);
}

/* An alternative the probe kind finds on this kernel is checked (on its
 * own copy of the probe's predicate and block) and kept for the passes. */
static void compile_alternative(struct compiler *c, struct ut_probe *p, unsigned pi, const struct probe_kind_def *def,
				const struct spec_ref *s, const char *target, struct node *block)
{
	struct ut_alt *alt = &p->alts[p->nalts];
	struct alt_ctx *a = xcalloc(1, sizeof(*a));
	*a = (struct alt_ctx){.def = def, .probe = p, .probe_index = pi, .alt = alt, .spec = s->text, .loc = s->loc,
			      .declared = s->declared, .computed = s->computed, .unfiltered = block->num,
			      .hit_event = -1};
	alt->kind = def->kind;
	alt->prog_name = xasprintf("ut_p%u_a%u", pi, p->nalts);
	if (def->resolve(c, a, target, s->loc) != 0) {
		free(alt->prog_name);
		alt->prog_name = NULL;
		alt_free(a);
		return;
	}
	alt->target = xstrdup(a->target);
	p->nalts++;
	a->pred = node_clone(block->b);
	a->block = node_clone(block->c);
	check_alternative(c, a);
	a->idle = c->opts->no_trace && compile_out_trace(c, a);
	c->alts = xrealloc_array(c->alts, c->nalts + 1, sizeof(*c->alts));
	c->alts[c->nalts++] = a;
}

/* A probe whose predicate is false in each of its alternatives whatever
 * happens (a script flag's constant: --sched=0), or that has nothing left
 * to do once the trace is compiled out (--summary-only: a probe that only
 * draws), would cost its attaching, and a run of its program at every hit,
 * for nothing: it is left out, neither generated nor attached.  (Not one
 * alternative alone: the loader would then pick the next, whose hits would
 * run.)  Its alternatives are the last checked and it is the last probe
 * made, so they go from the ends.  false: it stays. */
static bool left_out(struct compiler *c, unsigned pi, int errors)
{
	struct ut_probe *p = &c->prog->probes[pi];
	if (c->d->errors != errors || p->nalts == 0 || pi + 1 != c->prog->nprobes)
		return false;
	bool idle = true;
	for (unsigned i = c->nalts - p->nalts; i < c->nalts; i++) {
		int64_t v;
		bool never = c->alts[i]->pred && cond_folds(c, c->alts[i]->pred, &v) && !v;
		if (!never && !c->alts[i]->idle)
			return false;
		idle &= !never;
	}
	c->probes_idle += idle;
	if (c->opts->report)
		fprintf(c->opts->report, "uring-trace: %s:%d:%d: probe '%s' left out: %s\n", p->loc.file, p->loc.line,
			p->loc.col, p->spec, idle ? "it only draws, and no trace is written (--summary-only)"
						 : "its predicate is always false");
	for (unsigned i = c->nalts - p->nalts; i < c->nalts; i++)
		alt_free(c->alts[i]);
	c->nalts -= p->nalts;
	forget_probe_name(c, pi);
	for (unsigned a = 0; a < p->nalts; a++) {
		free(p->alts[a].target);
		free(p->alts[a].prog_name);
		free(p->alts[a].signature);
	}
	free(p->alts);
	free(p->spec);
	c->prog->nprobes--;
	return true;
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
		if (def0->wildcards)
			m = def0->list(c->k, target, &names);
		else
			diag_error(c->d, specs[0].loc, "wildcards work in tracepoint, kprobe and fentry probes only");
		if (m == 0 && !optional)
			diag_error(c->d, specs[0].loc, "'%s' matches nothing on kernel %s", specs[0].text, ut_kernel_release(c->k));
		int nmatched = m;   /* the names to free */
		if (m > 500) {
			diag_error(c->d, specs[0].loc, "'%s' matches %d probes; narrow it down (at most 500)", specs[0].text, m);
			m = 0;
		}
		/* the body is checked once for each match: the same error at the
		 * same place is said once, with how many matches have it */
		unsigned repeating = 0;
		diag_repeats_begin(c->d);
		for (int i = 0; i < m; i++) {
			char *full = xasprintf("%s:%s", def0->name, names[i]);
			struct spec_ref one = {intern(c, full), specs[0].loc, NULL, specs[0].computed};
			struct ut_probe *p = new_probe(c, full, specs[0].loc, optional, 1);
			unsigned before = c->d->repeated;
			int errors = c->d->errors;
			compile_alternative(c, p, c->prog->nprobes - 1, def0, &one, names[i], block);
			left_out(c, c->prog->nprobes - 1, errors);
			repeating += c->d->repeated > before;
			free(full);
		}
		diag_repeats_end(c->d);
		if (repeating)
			diag_note(c->d, "'%s' matches %d probes: errors at the places above in %u more of them are not repeated",
				  specs[0].text, m, repeating);
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
			char kinds[256];
			probe_kind_names(kinds, sizeof(kinds));
			diag_error(c->d, specs[i].loc, "unknown probe kind '%s' (use %s)", kind, kinds);
			continue;
		}
		if (has_wildcard(target)) {
			diag_error(c->d, specs[i].loc, "wildcards cannot be combined with alternatives");
			continue;
		}
		compile_alternative(c, &c->prog->probes[pi], pi, def, &specs[i], target, block);
	}
	if (left_out(c, pi, errors))
		return;
	p = &c->prog->probes[pi];
	if (p->nalts == 0 && c->d->errors == errors && !optional) {
		split_spec(specs[0].text, kind, sizeof(kind), &target);
		const struct probe_kind_def *def = probe_kind_find(kind);
		if (n == 1) {
			def->absent(c, def, specs[0].loc, specs[0].text, target);
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
 * = "us";) must hold one of them, from its declaration or from a flag or
 * -D (define: as written, "--unit=s" or "-D unit=s"). */
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
		diag_error(c->d, (struct ut_loc){0}, "%s: '%s' is one of %s", define, k->str, list.s);
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

/* A flag that sets no constant: a misspelt option of the tool, or of the
 * script.  Its near ones are among both. */
static void unknown_flag(struct compiler *c, const char *flag, const char *name)
{
	unsigned noptions = 0;
	while (c->opts->options && c->opts->options[noptions])
		noptions++;
	char **cands = xcalloc(noptions + c->nconsts + 1, sizeof(char *));
	for (unsigned i = 0; i < noptions; i++)
		cands[i] = xstrdup(c->opts->options[i]);
	for (unsigned i = 0; i < c->nconsts; i++) {   /* as flags: all_rings is --all-rings */
		cands[noptions + i] = xstrdup(c->consts[i]->str);
		for (char *p = cands[noptions + i]; *p; p++)
			*p = *p == '_' ? '-' : *p;
	}
	size_t len = strcspn(flag, "=");
	char *typed = xasprintf("%.*s", (int)len, flag);
	const char *near = ut_suggest(typed, cands, noptions + c->nconsts);
	diag_error(c->d, (struct ut_loc){0}, "unknown option '--%s'%s%s%s: uring-trace has no such option, and the "
		   "script no const %s for it to set", typed, near ? " (did you mean '--" : "", near ? near : "",
		   near ? "'?)" : "", name);
	free(typed);
	for (unsigned i = 0; i < noptions + c->nconsts; i++)
		free(cands[i]);
	free(cands);
}

/* A flag (flag: the text after "--", with '-' in its name for '_') or -D
 * NAME=VALUE replaces the value of `const NAME`: scripts declare their
 * options as constants with defaults. */
static void apply_define(struct compiler *c, const char *def, bool flag)
{
	const char *eq = strchr(def, '=');
	size_t len = eq ? (size_t)(eq - def) : strlen(def);
	const char *value = eq ? eq + 1 : "1";
	char *name = xasprintf("%.*s", (int)len, def);
	for (char *p = name; flag && *p; p++)
		*p = *p == '-' ? '_' : *p;
	char *written = xasprintf("%s%s", flag ? "--" : "-D ", def);
	struct node *k = NULL;
	for (unsigned j = 0; j < c->nconsts; j++)
		if (strcmp(c->consts[j]->str, name) == 0)
			k = c->consts[j];
	if (!k && flag)
		unknown_flag(c, def, name);
	else if (!k)
		diag_error(c->d, (struct ut_loc){0}, "%s: the script declares no constant '%s' (options are set with const NAME = default;)",
			   written, name);
	if (!k)
		goto out;
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
		diag_error(c->d, (struct ut_loc){0}, "%s: the value does not fit in 64 bits", written);
	if (n->kind == N_INT) {
		n->num = v;
		n->op = above ? 'u' : 0;
	} else {
		n->str = xstrdup(value);
	}
	node_free(k->a);
	k->a = n;
	k->num = 1;
	check_choices(c, k, written);
out:
	free(name);
	free(written);
}

static void apply_defines(struct compiler *c)
{
	for (unsigned i = 0; i < c->opts->nflags; i++)
		apply_define(c, c->opts->flags[i], true);
	for (unsigned i = 0; i < c->opts->ndefines; i++)
		apply_define(c, c->opts->defines[i], false);
	for (unsigned j = 0; j < c->nconsts; j++)
		if (!c->consts[j]->num)
			check_choices(c, c->consts[j], NULL);
}

/* A flow (or a span on a track kind) that a walk looks for the begin of:
 * probes absent on this kernel count, the script is checked, not one
 * kernel's share of it. */
struct begin_of {
	enum node_kind kind;
	const char *name;
};

static enum walk_next stop_at_begin(struct node *n, void *ctx)
{
	const struct begin_of *b = ctx;
	return n->kind == b->kind && n->op == OP_BEGIN && n->a && strcmp(n->a->str, b->name) == 0 ? WALK_STOP : WALK_INTO;
}

struct unbegun {
	struct compiler *c;
	struct node *items;
};

/* A flow step or end with no flow begin (a span phase or end with no span
 * begin on that track kind) in the whole script is an error. */
static enum walk_next check_unbegun(struct node *n, void *ctx)
{
	const struct unbegun *u = ctx;
	if ((n->kind != N_FLOW && n->kind != N_SPAN) || n->op == OP_BEGIN || !n->a ||
	    !walk_list(u->items, &(struct walker){.pre = stop_at_begin, .ctx = &(struct begin_of){n->kind, n->a->str}}))
		return WALK_INTO;
	bool flow = n->kind == N_FLOW;
	diag_error(u->c->d, n->loc, "%s '%s' %s here but begins nowhere; begin it in some probe: %s %s[key] begin%s",
		   flow ? "flow" : "span on track", n->a->str, n->op == OP_END ? "ends" : flow ? "steps" : "changes phase",
		   flow ? "flow" : "span", n->a->str, flow ? "" : " ITEM[key] \"name\"");
	return WALK_INTO;
}

static const char *const dump_names[] = {
	[UT_DUMP_AST] = "ast", [UT_DUMP_TYPED] = "typed", [UT_DUMP_RESOURCES] = "resources",
	[UT_DUMP_PLACEMENT] = "placement", [UT_DUMP_REUSE] = "reuse", [UT_DUMP_C] = "c",
	[UT_DUMP_READER_C] = "reader-c", [UT_DUMP_PROGRAM] = "program",
};

enum ut_dump ut_dump_named(const char *name)
{
	for (unsigned i = UT_DUMP_AST; i <= UT_DUMP_PROGRAM; i++)
		if (strcmp(dump_names[i], name) == 0)
			return (enum ut_dump)i;
	return UT_DUMP_NONE;
}

static void compiler_free(struct compiler *c, struct node *items)
{
	node_free(items);
	free(c->consts);
	free(c->fns);
	free(c->aliases);
	for (unsigned i = 0; i < c->nmaps; i++) {
		free(c->maps[i].name);
		for (unsigned k = 0; k < 8; k++)
			free(c->maps[i].key_names[k]);
	}
	free(c->maps);
	free(c->tuples);
	free(c->flow_in_reader);
	for (unsigned i = 0; i < c->nalts; i++)
		alt_free(c->alts[i]);
	free(c->alts);
	for (unsigned i = 0; i < c->nloaded; i++)
		free(c->loaded_files[i]);
	free(c->loaded_files);
	for (unsigned i = 0; i < c->ntexts; i++)
		free(c->texts[i]);
	free(c->texts);
}

/* lru @m: when full, a new key of @m pushes out its least recently used
 * entry (gen.c, runtime/user_maps.c).  That suits the script's
 * bookkeeping of plain values, whose orphans (a request never seen
 * completing) would fill the map; an aggregation's entries are results,
 * which evictions would silently change, and a map without keys holds a
 * single entry. */
static bool lru_allowed(struct compiler *c, const struct node *name, const struct map_info *m)
{
	if (m->kind == MAP_AGG) {
		diag_error(c->d, name->loc, "lru %s: %s is an aggregation (%s()), whose entries are the script's "
			   "results and must not be pushed out; lru is for maps of plain values (%s[key] = value): "
			   "take %s out of the lru declaration", m->name, m->name, ut_aggs[m->agg].name, m->name,
			   m->name);
		return false;
	}
	if (m->nkeys == 0) {
		diag_error(c->d, name->loc, "lru %s: %s has no key, so it holds one entry and never fills: take "
			   "%s out of the lru declaration", m->name, m->name, m->name);
		return false;
	}
	return true;
}

/* A cached map holds integers under one integer key: its slots in the
 * kernel are a key and a value (bpf/ut.h, ut_front_read). */
static void check_cached(struct compiler *c, struct map_info *mi, const struct node *m)
{
	bool scalar_key = mi->nkeys == 1 && (mi->key_types[0].kind == T_INT || mi->key_types[0].kind == T_PTR);
	bool scalar = mi->value_type.kind == T_INT || mi->value_type.kind == T_PTR;
	if (mi->kind != MAP_VALUE || !scalar_key || !scalar)
		diag_error(c->d, m->loc, "cached %s: a cached map holds numbers under one number key, as @req[req] = 1 does",
			   m->str);
	mi->cached = true;
}

/* private @a, @b;: the maps are the script's bookkeeping, neither printed
 * nor in the JSON.  lru @a, @b;: they push out their least recently used
 * entry when full.  cached @a, @b;: in the kernel, slots in front of
 * their hash.  A module's maps exist only where the script uses what
 * touches them: a name no probe uses is an error in the script alone (a
 * misspelt map would be printed, or fill, after all). */
static void mark_declared(struct compiler *c, struct node *decl)
{
	const char *what = decl->kind == N_LRU ? "lru" : decl->kind == N_CACHED ? "cached" : "private";
	char **names = xcalloc(c->nmaps + 1, sizeof(char *));
	for (unsigned i = 0; i < c->nmaps; i++)
		names[i] = c->maps[i].name;
	bool in_script = decl->loc.file == intern(c, c->opts->file ? c->opts->file : "-e");
	for (struct node *m = decl->a; m; m = m->next) {
		unsigned i = 0;
		while (i < c->nmaps && strcmp(c->maps[i].name, m->str) != 0)
			i++;
		if (i < c->nmaps) {
			if (decl->kind == N_PRIVATE)
				c->maps[i].is_private = true;
			else if (decl->kind == N_CACHED)
				check_cached(c, &c->maps[i], m);
			else if (lru_allowed(c, m, &c->maps[i]))
				c->maps[i].is_lru = true;
			continue;
		}
		if (!in_script)
			continue;
		const char *near = ut_suggest(m->str, names, c->nmaps);
		diag_error(c->d, m->loc, "%s %s names a map no probe uses%s%s%s: name the maps the script's probes use",
			   what, m->str, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	}
	free(names);
}

/* The check pass: declarations, -D, then each probe's alternatives. */
static void check_program(struct compiler *c, struct node *items)
{
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
			walk_list(n->c, &(struct walker){.pre = check_unbegun, .ctx = &(struct unbegun){c, items}});
	unsigned blocks = 0;
	for (struct node *n = items; n; n = n->next) {
		if (n->kind != N_PROBE_BLOCK)
			continue;
		blocks++;
		for (struct node *alts = n->a; alts; alts = alts->next)
			compile_probes(c, alts, n, false, 0);
	}
	if (blocks == 0 && c->d->errors == 0)
		diag_error(c->d, (struct ut_loc){intern(c, c->opts->file ? c->opts->file : "-e"), 1, 1},
			   "the script has no probes; add one, e.g. tracepoint:io_uring:io_uring_complete { @[comm] = count(); }");
	char **assigned = xcalloc(c->nmaps + 1, sizeof(char *));
	unsigned nassigned = 0;
	for (unsigned i = 0; i < c->nmaps; i++)
		if (c->maps[i].assigned)
			assigned[nassigned++] = c->maps[i].name;
	for (unsigned i = 0; i < c->nmaps; i++) {
		if (!c->maps[i].read_in_bpf || c->maps[i].assigned)
			continue;
		const char *near = ut_suggest(c->maps[i].name, assigned, nassigned);
		if (near)
			diag_error(c->d, c->maps[i].read_loc, "%s is read but never assigned (did you mean '%s'?)",
				   c->maps[i].name, near);
		else
			diag_error(c->d, c->maps[i].read_loc, "%s is read but never assigned", c->maps[i].name);
	}
	free(assigned);
	for (struct node *n = items; n; n = n->next)
		if (n->kind == N_PRIVATE || n->kind == N_LRU || n->kind == N_CACHED)
			mark_declared(c, n);
	if (c->opts->no_trace && c->d->errors == 0)
		compile_out_dead_maps(c);
	for (unsigned i = 0; i < c->nalts; i++)
		check_map_entries(c, c->alts[i]);
	/* the program's probes moved as the array grew */
	for (unsigned i = 0; i < c->nalts; i++)
		c->alts[i]->probe = &c->prog->probes[c->alts[i]->probe_index];
}

struct ut_program *ut_compile(const struct ut_compile_opts *o, struct ut_kernel *k, struct diag *d)
{
	struct compiler cc = {.d = d, .k = k, .opts = o};
	struct compiler *c = &cc;
	FILE *dump = o->dump_to;
	c->prog = xcalloc(1, sizeof(*c->prog));
	struct node *items;
	if (o->file) {
		const char *why;
		char *text = read_file(o->file, &why);
		if (!text) {
			diag_error(d, (struct ut_loc){0}, "cannot read %s: %s", o->file, why);
			ut_program_free(c->prog);
			return NULL;
		}
		char real[PATH_MAX];
		if (realpath(o->file, real))
			already_loaded(c, real);
		note_input(c, o->file);
		items = load_text(c, intern(c, o->file), text);
	} else {
		items = load_text(c, intern(c, "-e"), xstrdup(o->text ? o->text : ""));
	}
	if (o->dump == UT_DUMP_AST)
		ast_dump(items, 0, false, dump);
	check_program(c, items);
	if (o->dump == UT_DUMP_TYPED)
		dump_typed(c, dump);
	struct ut_program *prog = c->prog;
	if (d->errors == 0) {
		resources(c);
		if (o->dump == UT_DUMP_RESOURCES)
			dump_resources(c, dump);
		placement(c);
	}
	if (d->errors == 0) {
		if (o->dump == UT_DUMP_PLACEMENT)
			dump_placement(c, dump);
		if (o->report)
			placement_report(c, o->report);
		reuse(c);
		if (o->dump == UT_DUMP_REUSE)
			dump_reuse(c, dump);
		gen_user_side(c);
		prog->bpf_c = gen_program(c);
		for (unsigned i = 0; i < c->nalts; i++)
			if (c->alts[i]->too_deep_at)
				diag_error(d, c->alts[i]->too_deep_at->loc,
					   "this nests too deeply for clang: its C would nest more than %d brackets "
					   "(blocks, ifs and else-ifs, loops, operators and the bodies of functions called "
					   "count); nest less, e.g. keep part of an expression in a local ($x = ...) or "
					   "join conditions with &&", C_MAX_NESTING);
		if (o->dump == UT_DUMP_C)
			fputs(prog->bpf_c, dump);
	}
	/* the diagnostics quoted the texts: no more of them now */
	diag_free(d);
	compiler_free(c, items);
	if (d->errors) {
		ut_program_free(prog);
		return NULL;
	}
	for (unsigned i = 0; i < prog->nevents; i++)
		ut_event_index_sched(&prog->events[i]);
	if (o->dump == UT_DUMP_READER_C) {
		char *reader_c = ut_gen_native(prog);
		fputs(reader_c ? reader_c : "/* the reader runs no statement of this script */\n", dump);
		free(reader_c);
	}
	if (o->dump == UT_DUMP_PROGRAM)
		pf_dump(prog, dump);
	return prog;
}
