/* usdt:/PATH:[PROVIDER:]NAME (U:): a USDT probe of a program or shared
 * library (<sys/sdt.h>'s DTRACE_PROBE), found in the file's ELF notes.
 * arg0 .. argN are the probe's arguments, sized as its note says and read
 * by libbpf's bpf_usdt_arg (bpf/usdt.bpf.h); libbpf attaches one uprobe
 * per place the probe is in the file, for every process that maps it. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/elfsyms.h"
#include "probes/attach.h"
#include "probes/resolve.h"

/* "PATH:PROVIDER:NAME" or "PATH:NAME" split at its first colons; false
 * when there is no colon or a part is empty. */
static bool split_target(const char *target, char *path, size_t plen, char *provider, size_t prlen, char *name,
			 size_t nlen)
{
	const char *c1 = strchr(target, ':');
	if (!c1 || c1 == target || !c1[1] || (size_t)(c1 - target) >= plen)
		return false;
	snprintf(path, plen, "%.*s", (int)(c1 - target), target);
	const char *c2 = strchr(c1 + 1, ':');
	if (!c2) {
		provider[0] = 0;
		snprintf(name, nlen, "%s", c1 + 1);
		return true;
	}
	snprintf(provider, prlen, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	snprintf(name, nlen, "%s", c2 + 1);
	return provider[0] && name[0] && !strchr(name, ':');
}

/* ---- compiler ---- */

/* The probe provider:name (any provider when provider is ""); NULL when
 * there is none, or with *ambiguous set when several providers have it. */
static const struct ut_usdt_probe *usdt_named(const struct ut_usdt_probes *ps, const char *provider, const char *name,
					      bool *ambiguous)
{
	const struct ut_usdt_probe *found = NULL;
	*ambiguous = false;
	for (unsigned i = 0; i < ps->n; i++) {
		const struct ut_usdt_probe *p = &ps->v[i];
		if (strcmp(p->name, name) != 0 || (provider[0] && strcmp(p->provider, provider) != 0))
			continue;
		if (found)
			*ambiguous = true;
		found = p;
	}
	return found;
}

/* The arguments: bpf_usdt_arg gives each sign-extended or zero-extended
 * from its size, as a long. */
static void usdt_arguments(struct alt_ctx *a, const struct ut_usdt_probe *p)
{
	for (unsigned i = 0; i < p->nargs; i++) {
		char name[16];
		int size = p->arg_size[i] < 0 ? -p->arg_size[i] : p->arg_size[i];
		bool sgn = p->arg_size[i] < 0;
		snprintf(name, sizeof(name), "arg%u", i);
		probe_add_arg(a, name, probe_int_type(size ? size : 8, sgn),
			      xasprintf("({ long ut_arg = 0; bpf_usdt_arg(ctx, %u, &ut_arg); (%s)ut_arg; })", i,
					sgn ? "__s64" : "__u64"));
	}
}

static int resolve_usdt(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	char path[4096], provider[256], name[256], why[128];
	if (!split_target(target, path, sizeof(path), provider, sizeof(provider), name, sizeof(name))) {
		diag_error(c->d, loc, "usdt probes are written usdt:/path/to/binary:provider:name or usdt:/path/to/binary:name");
		return -1;
	}
	struct ut_usdt_probes ps;
	if (ut_elf_usdt_read(path, &ps, why, sizeof(why)) < 0)
		return 1;
	bool ambiguous;
	const struct ut_usdt_probe *p = usdt_named(&ps, provider, name, &ambiguous);
	int rc = 1;
	if (ambiguous) {
		struct strbuf list = {0};
		for (unsigned i = 0; i < ps.n; i++)
			if (strcmp(ps.v[i].name, name) == 0)
				sb_printf(&list, "%s usdt:%s:%s:%s", list.len ? "," : "", path, ps.v[i].provider, name);
		diag_error(c->d, loc, "%s has USDT probes '%s' of several providers; name one:%s", path, name, list.s);
		sb_free(&list);
		rc = -1;
	} else if (p) {
		a->target = xasprintf("%s:%s:%s", path, p->provider, p->name);
		sb_puts(&a->prelude, "#include <bpf/usdt.bpf.h>\n\n");   /* guarded: once however many probes */
		usdt_arguments(a, p);
		rc = 0;
	}
	ut_elf_usdt_free(&ps);
	return rc;
}

static void header_usdt(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"usdt\")\nint %s(struct pt_regs *ctx)\n{\n", a->alt->prog_name);
}

/* Why usdt:PATH:... is absent: the file, or the probe (with the closest
 * name the file has). */
static void absent_usdt(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
			const char *target)
{
	(void)def;
	(void)spec;
	char path[4096], provider[256], name[256], why[128];
	if (!split_target(target, path, sizeof(path), provider, sizeof(provider), name, sizeof(name)))
		return;
	struct ut_usdt_probes ps;
	if (ut_elf_usdt_read(path, &ps, why, sizeof(why)) < 0) {
		diag_error(c->d, loc, "cannot read %s for a usdt probe: %s (give the full path of a program or library)",
			   path, why);
		return;
	}
	if (!ps.n) {
		diag_error(c->d, loc, "%s has no USDT probes (they are DTRACE_PROBE or STAP_PROBE of <sys/sdt.h>)", path);
	} else {
		char **names = xcalloc(ps.n, sizeof(char *));
		for (unsigned i = 0; i < ps.n; i++)
			names[i] = (char *)ps.v[i].name;
		const char *near = strlen(name) <= 128 ? ut_suggest(name, names, ps.n) : NULL;
		diag_error(c->d, loc, "no USDT probe '%s%s%s' in %s%s%s%s", provider, provider[0] ? ":" : "", name, path,
			   near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
		diag_note(c->d, "its probes are listed by: uring-trace -l 'usdt:%s:*'", path);
		free(names);
	}
	ut_elf_usdt_free(&ps);
}

/* ---- both: -l usdt:PATH[:GLOB] ---- */

/* Names "PATH:provider:name" whose "provider:name" or name matches the
 * glob after PATH (all without one). */
static int list_usdt(struct ut_kernel *k, const char *glob, char ***names)
{
	(void)k;
	char path[4096], why[128];
	size_t len = strcspn(glob, ":");
	snprintf(path, sizeof(path), "%.*s", (int)(len < sizeof(path) ? len : 0), glob);
	const char *pattern = glob[len] ? glob + len + 1 : "*";
	struct ut_usdt_probes ps;
	*names = NULL;
	if (ut_elf_usdt_read(path, &ps, why, sizeof(why)) < 0)
		return 0;
	*names = xcalloc(ps.n + 1, sizeof(char *));
	int n = 0;
	for (unsigned i = 0; i < ps.n; i++) {
		char *full = xasprintf("%s:%s", ps.v[i].provider, ps.v[i].name);
		if (fnmatch(pattern, full, 0) == 0 || fnmatch(pattern, ps.v[i].name, 0) == 0)
			(*names)[n++] = xasprintf("%s:%s", path, full);
		free(full);
	}
	ut_elf_usdt_free(&ps);
	return n;
}

/* -l -v: the arguments, "    s32 arg0" */
static void list_usdt_args(struct ut_kernel *k, const char *target, FILE *out)
{
	(void)k;
	char path[4096], provider[256], name[256], why[128];
	struct ut_usdt_probes ps;
	bool ambiguous;
	if (!split_target(target, path, sizeof(path), provider, sizeof(provider), name, sizeof(name)) ||
	    ut_elf_usdt_read(path, &ps, why, sizeof(why)) < 0)
		return;
	const struct ut_usdt_probe *p = usdt_named(&ps, provider, name, &ambiguous);
	for (unsigned i = 0; p && i < p->nargs; i++)
		fprintf(out, "    %c%d arg%u\n", p->arg_size[i] < 0 ? 's' : 'u',
			8 * (p->arg_size[i] < 0 ? -p->arg_size[i] : p->arg_size[i] ? p->arg_size[i] : 8), i);
	ut_elf_usdt_free(&ps);
}

/* ---- runtime ---- */

static bool usdt_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	char path[4096], provider[256], name[256];
	if (!split_target(alt->target, path, sizeof(path), provider, sizeof(provider), name, sizeof(name))) {
		snprintf(why, len, "bad usdt target (want /path:provider:name)");
		return false;
	}
	return probe_file_readable(path, why, len);
}

static int trial_usdt(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_pmu(alt, "uprobe", why, len);
}

/* Every process that maps the file, now or later (pid -1). */
static int attach_usdt(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	char path[4096], provider[256], name[256];
	if (!split_target(alt->target, path, sizeof(path), provider, sizeof(provider), name, sizeof(name)))
		return -EINVAL;
	return probe_links_add(links, bpf_program__attach_usdt(prog, -1, path, provider, name, NULL));
}

const struct probe_kind_def probe_kind_usdt = {
	.name = "usdt",
	.regs_context = true,
	.short_name = "U",
	.kind = UT_PROBE_USDT,
	.wildcards = true,
	.user_addresses = true,
	.target_in_files = true,
	.slow_detach = true,
	.resolve = resolve_usdt,
	.header = header_usdt,
	.absent = absent_usdt,
	.list = list_usdt,
	.list_args = list_usdt_args,
	.exists = usdt_exists,
	.trial = trial_usdt,
	.attach = attach_usdt,
};
