/* uprobe:/PATH:FUNCTION (u:) and uretprobe:/PATH:FUNCTION (ur:): a
 * function of a program or shared library, found by its ELF symbol; a
 * binary named without a path (libc, bash) is found as bpftrace finds it
 * (kernel/binaries.h).  No types: arg0 .. arg5 are the argument
 * registers, and at the return only retval.  Attached as perf events. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/binaries.h"
#include "kernel/elfsyms.h"
#include "probes/attach.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

static int resolve_uprobe_common(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc, bool ret)
{
	const char *colon = strrchr(target, ':');
	if (!colon || colon == target || !colon[1]) {
		diag_error(c->d, loc, "uprobes are written uprobe:/path/to/binary:symbol");
		return -1;
	}
	/* the function must be in the binary here (absent_uprobe says why not) */
	char *name = xasprintf("%.*s", (int)(colon - target), target), *path = ut_binary_path(name);
	free(name);
	if (!path)
		return 1;
	struct ut_elf_syms syms;
	char why[128];
	bool exists = false;
	if (ut_elf_syms_read(path, &syms, why, sizeof(why)) == 0) {
		exists = ut_elf_sym_named(&syms, colon + 1) != NULL;
		ut_elf_syms_free(&syms);
	}
	if (!exists) {
		free(path);
		return 1;
	}
	a->target = xasprintf("%s:%s", path, colon + 1);   /* attached there, on any host */
	free(path);
	if (!ret)
		probe_register_args(a, 6);
	if (ret)
		probe_add_arg(a, "retval", probe_int_type(8, true), xstrdup("((__s64)PT_REGS_RC(ctx))"));
	return 0;
}

static int resolve_uprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return resolve_uprobe_common(c, a, t, l, false);
}

static int resolve_uretprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l)
{
	return resolve_uprobe_common(c, a, t, l, true);
}

/* The binary's path comes from the target at attach time. */
static void header_uprobe(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"%s\")\nint %s(struct pt_regs *ctx)\n{\n", a->def->name, a->alt->prog_name);
}

/* The entry of directory dir closest to name, for a path with a typo. */
static char *close_file(const char *dir, const char *name)
{
	DIR *d = opendir(dir[0] ? dir : "/");
	if (!d)
		return NULL;
	char **names = NULL;
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 100000) {
		names = xrealloc_array(names, n + 1, sizeof(char *));
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	const char *s = strlen(name) <= 128 ? ut_suggest(name, names, n) : NULL;
	char *r = s ? xasprintf("%s/%s", dir, s) : NULL;
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

/* Why "/path:function" is absent: no such file (with the closest name in
 * its directory), not a binary with symbols, or no such function (with
 * the closest one). */
static void absent_uprobe(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
			  const char *target)
{
	(void)def;
	(void)spec;
	const char *colon = strrchr(target, ':');
	if (!colon)
		return;
	char *name = xasprintf("%.*s", (int)(colon - target), target), *path = ut_binary_path(name);
	const char *fn = colon + 1;
	if (!path) {
		diag_error(c->d, loc, "no library %s in the dynamic linker's cache (ldconfig -p) and no program %s on $PATH; "
			   "give the binary's full path, e.g. uprobe:/usr/bin/bash:readline", name, name);
		free(name);
		return;
	}
	free(name);
	struct ut_elf_syms syms;
	char why[128];
	int err = access(path, F_OK) == 0 ? 0 : errno;
	if (err == ENOENT || err == ENOTDIR) {
		const char *slash = strrchr(path, '/');
		char *dir = slash ? xasprintf("%.*s", (int)(slash - path), path) : NULL;
		char *near = dir ? close_file(dir, slash + 1) : NULL;
		if (near)
			diag_error(c->d, loc, "no file %s for this uprobe (did you mean %s?)", path, near);
		else
			diag_error(c->d, loc, "no file %s for this uprobe; give the binary's full path, e.g. uprobe:/usr/bin/bash:readline",
				   path);
		free(near);
		free(dir);
	} else if (ut_elf_syms_read(path, &syms, why, sizeof(why)) < 0) {
		diag_error(c->d, loc, "cannot use %s for a uprobe: %s (uprobes attach to functions of programs and shared libraries)",
			   path, why);
	} else {
		char **names = xcalloc(syms.n + 1, sizeof(char *));
		for (unsigned i = 0; i < syms.n; i++)
			names[i] = (char *)syms.v[i].name;
		const char *s = strlen(fn) <= 128 ? ut_suggest(fn, names, syms.n) : NULL;
		if (s) {
			diag_error(c->d, loc, "no function '%s' in %s (did you mean '%s'?)", fn, path, s);
		} else {
			diag_error(c->d, loc, "no function '%s' in %s", fn, path);
			if (syms.n)
				diag_note(c->d, "its functions are listed by: nm -D --defined-only %s", path);
			else
				diag_note(c->d, "it has no function symbols (stripped of them?)");
		}
		free(names);
		ut_elf_syms_free(&syms);
	}
	free(path);
}

/* ---- runtime ---- */

static bool uprobe_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	char path[256], function[256];
	if (!probe_split_last(alt->target, ':', path, sizeof(path), function, sizeof(function))) {
		snprintf(why, len, "bad uprobe target (want /path:symbol)");
		return false;
	}
	return probe_file_readable(path, why, len);
}

static int trial_uprobe(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_pmu(alt, "uprobe", why, len);
}

static int attach_uprobe(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	char path[256], function[256];
	if (!probe_split_last(alt->target, ':', path, sizeof(path), function, sizeof(function)))
		return -EINVAL;
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = function, .retprobe = alt->kind == UT_PROBE_URETPROBE);
	return probe_links_add(links, bpf_program__attach_uprobe_opts(prog, -1, path, 0, &opts));
}

const struct probe_kind_def probe_kind_uprobe = {
	.name = "uprobe",
	.regs_context = true,
	.short_name = "u",
	.kind = UT_PROBE_UPROBE,
	.user_addresses = true,
	.target_in_files = true,
	.slow_detach = true,
	.info_target = "/bin/sh:main",
	.resolve = resolve_uprobe,
	.header = header_uprobe,
	.absent = absent_uprobe,
	.exists = uprobe_exists,
	.trial = trial_uprobe,
	.attach = attach_uprobe,
};

const struct probe_kind_def probe_kind_uretprobe = {
	.name = "uretprobe",
	.regs_context = true,
	.short_name = "ur",
	.kind = UT_PROBE_URETPROBE,
	.user_addresses = true,
	.target_in_files = true,
	.entry_kind = "uprobe",
	.args_elsewhere = "",
	.slow_detach = true,
	.resolve = resolve_uretprobe,
	.header = header_uprobe,
	.absent = absent_uprobe,
	.exists = uprobe_exists,
	.trial = trial_uprobe,
	.attach = attach_uprobe,
};
