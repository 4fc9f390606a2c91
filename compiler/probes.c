/* Probe kinds: one table entry and one resolve function each.  resolve
 * checks the target exists on this kernel and describes the arguments the
 * body can read; header writes the BPF program's section and signature. */
#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/elfsyms.h"

static struct probe_arg *add_arg(struct alt_ctx *a, const char *name, struct type t, char *cexpr)
{
	a->args = xrealloc_array(a->args, a->nargs + 1, sizeof(*a->args));
	struct probe_arg *p = &a->args[a->nargs++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = t;
	p->cexpr = cexpr;
	return p;
}

static struct type int_type(int size, bool sgn)
{
	return (struct type){.kind = T_INT, .size = (uint8_t)size, .is_signed = sgn};
}

/* Script type of a BTF type id; -1 when scripts cannot hold it. */
static int btf_arg_type(struct compiler *c, int32_t id, struct type *out)
{
	struct ut_ktype kt;
	if (ut_kernel_type(c->k, id, &kt) < 0)
		return -1;
	switch (kt.kind) {
	case UT_KT_INT: case UT_KT_ENUM: case UT_KT_BOOL:
		*out = int_type(kt.size ? (int)kt.size : 8, kt.is_signed);
		return 0;
	case UT_KT_PTR:
		*out = (struct type){.kind = T_PTR, .size = 8, .btf = kt.target};
		return 0;
	default:
		return -1;
	}
}

/* ---- classic tracepoints ---- */

/* The kernel's BTF names a tracepoint's record struct after its event
 * class, which the format file does not tell: find the trace_event_raw_*
 * struct whose members sit where the format says. */
static const char *record_struct_name(struct compiler *c, const struct ut_tracepoint *tp, char *buf, size_t len)
{
	snprintf(buf, len, "trace_event_raw_%s", tp->name);
	if (ut_kernel_struct(c->k, buf) >= 0)
		return buf;
	const struct btf *btf = ut_kernel_btf(c->k);
	if (!btf)
		return NULL;
	unsigned n = btf__type_cnt(btf);
	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!btf_is_struct(t))
			continue;
		const char *name = btf__name_by_offset(btf, t->name_off);
		if (!name || strncmp(name, "trace_event_raw_", 16) != 0)
			continue;
		unsigned matched = 0;
		const struct btf_member *m = btf_members(t);
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			const char *mn = btf__name_by_offset(btf, m[i].name_off);
			for (unsigned f = 0; f < tp->nfields; f++) {
				const struct ut_tp_field *fd = &tp->fields[f];
				char want[96];
				snprintf(want, sizeof(want), "%s%s", fd->is_data_loc ? "__data_loc_" : "", fd->name);
				if (mn && strcmp(mn, want) == 0 && btf_member_bit_offset(t, i) == fd->offset * 8)
					matched++;
			}
		}
		if (matched == tp->nfields && btf_vlen(t) == tp->nfields + 2) {   /* + ent, __data */
			snprintf(buf, len, "%s", name);
			return buf;
		}
	}
	return NULL;
}

static const char *int_c_type(uint32_t size, bool sgn)
{
	switch (size) {
	case 1: return sgn ? "__s8" : "__u8";
	case 2: return sgn ? "__s16" : "__u16";
	case 4: return sgn ? "__s32" : "__u32";
	default: return sgn ? "__s64" : "__u64";
	}
}

/* Declared fields, laid out as the kernel would: after the 8-byte common
 * header, each aligned to its size.  Types: u8..u64, s8..s64, bool, ptr,
 * str (a __data_loc string). */
static int declared_tracepoint(struct compiler *c, struct node *fields, struct ut_tracepoint *out)
{
	uint32_t at = 8;
	out->nfields = node_list_len(fields);
	out->fields = xcalloc(out->nfields, sizeof(*out->fields));
	unsigned i = 0;
	for (struct node *f = fields; f; f = f->next, i++) {
		const char *t = f->a->str;
		struct ut_tp_field *d = &out->fields[i];
		d->name = xstrdup(f->str);
		d->c_type = xstrdup(t);
		if (strcmp(t, "ptr") == 0) {
			d->size = 8;
			d->is_pointer = true;
		} else if (strcmp(t, "bool") == 0) {
			d->size = 1;
		} else if (strcmp(t, "str") == 0) {
			d->size = 4;
			d->is_string = d->is_data_loc = true;
		} else if ((t[0] == 'u' || t[0] == 's') && (atoi(t + 1) == 8 || atoi(t + 1) == 16 || atoi(t + 1) == 32 || atoi(t + 1) == 64)) {
			d->size = (uint32_t)atoi(t + 1) / 8;
			d->is_signed = t[0] == 's';
		} else {
			diag_error(c->d, f->a->loc, "unknown field type '%s' (use u8..u64, s8..s64, bool, ptr or str)", t);
			return -1;
		}
		at = (at + d->size - 1) / d->size * d->size;
		d->offset = at;
		at += d->size;
	}
	return 0;
}

static int tracepoint_args(struct alt_ctx *a, const struct ut_tracepoint *tp, bool co_re);

static void free_declared(struct ut_tracepoint *t)
{
	for (unsigned i = 0; i < t->nfields; i++) {
		free(t->fields[i].name);
		free(t->fields[i].c_type);
	}
	free(t->fields);
}

static int resolve_tracepoint(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	char cat[128], name[128];
	const char *colon = strchr(target, ':');
	if (!colon || colon == target || !colon[1] || (size_t)(colon - target) >= sizeof(cat) || strlen(colon + 1) >= sizeof(name)) {
		diag_error(c->d, loc, "tracepoint probes are written tracepoint:CATEGORY:NAME, e.g. tracepoint:io_uring:io_uring_complete");
		return -1;
	}
	snprintf(cat, sizeof(cat), "%.*s", (int)(colon - target), target);
	snprintf(name, sizeof(name), "%s", colon + 1);
	const struct ut_tracepoint *tp = ut_kernel_tracepoint(c->k, cat, name);
	struct ut_tracepoint declared = {0};
	char sname[160];
	const char *raw;
	if (tp) {
		raw = record_struct_name(c, tp, sname, sizeof(sname));
	} else if (a->declared) {
		/* absent here: the script's declaration stands in for the format,
		 * and CO-RE finds the fields on the kernel that has it */
		tp = &declared;
		if (declared_tracepoint(c, a->declared, &declared) < 0) {
			free_declared(&declared);
			return -1;
		}
		snprintf(sname, sizeof(sname), "trace_event_raw_%s", name);
		raw = sname;
	} else {
		return 1;
	}
	a->target = xasprintf("%s/%s", cat, name);
	/* Our own copy of the record struct: with preserve_access_index, libbpf
	 * relocates every field to where the running kernel has it.  Named per
	 * probe, and per alternative after the first (alternatives may share
	 * a record struct name). */
	unsigned alt_index = (unsigned)(a->alt - a->probe->alts);
	char suffix[32] = "";
	if (alt_index)
		snprintf(suffix, sizeof(suffix), "_a%u", alt_index);
	snprintf(a->record_struct, sizeof(a->record_struct), "%s___ut%u%s", raw ? raw : "ut_tp_record", a->probe_index,
		 suffix);
	sb_printf(&a->prelude, "struct %s {\n", a->record_struct);
	uint32_t at = 0;
	for (unsigned i = 0; i < tp->nfields; i++) {
		const struct ut_tp_field *f = &tp->fields[i];
		if (f->offset > at)
			sb_printf(&a->prelude, "\tchar __pad%u[%u];\n", i, f->offset - at);
		char member[96];
		snprintf(member, sizeof(member), "%s%s", f->is_data_loc ? "__data_loc_" : "", f->name);
		if (f->is_data_loc)
			sb_printf(&a->prelude, "\t__u32 %s;\n", member);
		else if (f->is_string)
			sb_printf(&a->prelude, "\tchar %s[%u];\n", member, f->size);
		else if (f->array_len)
			sb_printf(&a->prelude, "\t__u8 %s[%u];\n", member, f->size);
		else if (f->is_pointer)
			sb_printf(&a->prelude, "\tvoid *%s;\n", member);
		else
			sb_printf(&a->prelude, "\t%s %s;\n", int_c_type(f->size, f->is_signed), member);
		at = f->offset + f->size;
	}
	sb_printf(&a->prelude, "}%s;\n\n", raw ? " __attribute__((preserve_access_index))" : "");
	int rc = tracepoint_args(a, tp, raw != NULL);
	free_declared(&declared);
	return rc;
}

/* co_re: the record struct has a BTF counterpart, so field existence is
 * asked of the running kernel; otherwise the fields are those of the local
 * format and exist. */
static int tracepoint_args(struct alt_ctx *a, const struct ut_tracepoint *tp, bool co_re)
{
	for (unsigned i = 0; i < tp->nfields; i++) {
		const struct ut_tp_field *f = &tp->fields[i];
		struct probe_arg *p;
		if (f->is_data_loc) {
			if (!f->is_string)
				continue;   /* dynamic arrays other than strings: not readable yet */
			p = add_arg(a, f->name, (struct type){.kind = T_STR, .size = 128},
				    xasprintf("bpf_probe_read_kernel_str(%%s, sizeof(%%s), (char *)ctx + (tp->__data_loc_%s & 0xffff))", f->name));
			if (co_re)
				p->exists_cexpr = xasprintf("bpf_core_field_exists(tp->__data_loc_%s)", f->name);
			continue;
		}
		if (f->is_string) {
			p = add_arg(a, f->name, (struct type){.kind = T_STR, .size = (uint8_t)(f->size > 255 ? 255 : f->size)},
				    xasprintf("bpf_probe_read_kernel_str(%%s, sizeof(%%s), tp->%s)", f->name));
		} else if (f->array_len) {
			continue;
		} else if (f->is_pointer) {
			p = add_arg(a, f->name, (struct type){.kind = T_PTR, .size = 8}, xasprintf("((void *)tp->%s)", f->name));
		} else {
			p = add_arg(a, f->name, int_type((int)f->size, f->is_signed),
				    xasprintf("((%s)tp->%s)", f->is_signed ? "__s64" : "__u64", f->name));
		}
		if (co_re)
			p->exists_cexpr = xasprintf("bpf_core_field_exists(tp->%s)", f->name);
	}
	return 0;
}

static void header_tracepoint(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"tracepoint/%s\")\nint %s(void *ctx)\n{\n", a->target, a->alt->prog_name);
	sb_printf(out, "\tstruct %s *tp = ctx;\n\t(void)tp;\n", a->record_struct);
}

/* ---- typed arguments from BTF: tp_btf, raw_tp, fentry, fexit ---- */

static int typed_params(struct compiler *c, struct alt_ctx *a, struct ut_param *params, unsigned n,
			struct ut_loc loc)
{
	for (unsigned i = 0; i < n; i++) {
		struct type t;
		char name[64];
		if (params[i].name[0])
			snprintf(name, sizeof(name), "%s", params[i].name);
		else
			snprintf(name, sizeof(name), "arg%u", i);
		if (btf_arg_type(c, params[i].type, &t) < 0) {
			diag_warning(c->d, loc, "argument '%s' of %s has a type scripts cannot read; it is left out", name, a->spec);
			continue;
		}
		/* raw_tp arguments are plain integers to the verifier */
		t.direct = t.kind == T_PTR && t.btf > 0 && a->alt->kind != UT_PROBE_RAW_TP;
		if (t.kind == T_PTR)
			add_arg(a, name, t, xasprintf("((void *)ctx[%u])", i));
		else
			add_arg(a, name, t, xasprintf("((%s)(%s)ctx[%u])", t.is_signed ? "__s64" : "__u64",
						     int_c_type(t.size, t.is_signed), i));
	}
	return 0;
}

/* Argument types, so another kernel with other ones does not run this body. */
static char *signature(struct compiler *c, const char *name, bool tracepoint)
{
	char buf[1024];
	return ut_kernel_signature(c->k, name, tracepoint, buf, sizeof(buf)) == 0 ? xstrdup(buf) : NULL;
}

static int resolve_tp_btf(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	struct ut_param *params;
	unsigned n;
	const char *name = strchr(target, ':') ? strchr(target, ':') + 1 : target;  /* tp_btf:cat:name too */
	if (ut_kernel_tp_btf_params(c->k, name, &params, &n) < 0)
		return 1;
	a->target = xstrdup(name);
	a->alt->signature = signature(c, name, true);
	typed_params(c, a, params, n, loc);
	free(params);
	return 0;
}

/* arg0 .. arg(n-1): the first n argument registers, raw (kprobes,
 * uprobes).  At a return they hold other values: return probes have none. */
static void register_args(struct alt_ctx *a, unsigned n)
{
	a->uses_parm6 |= n >= 6;
	for (unsigned i = 0; i < n && i < 6; i++) {
		char name[8];
		snprintf(name, sizeof(name), "arg%u", i);
		add_arg(a, name, int_type(8, false), xasprintf("((__u64)PT_REGS_PARM%u(ctx))", i + 1));
	}
}

static int resolve_func(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc, bool ret,
			bool in_regs)
{
	struct ut_param *params;
	unsigned n;
	int32_t ret_type;
	if (ut_kernel_func_params(c->k, target, &params, &n, &ret_type) < 0)
		return 1;
	a->target = xstrdup(target);
	a->alt->signature = signature(c, target, false);
	if (in_regs && !ret) {
		/* the first six, in registers; the rest are on the stack */
		if (n > 6)
			n = 6;
		for (unsigned i = 0; i < n; i++) {
			struct type t;
			if (btf_arg_type(c, params[i].type, &t) < 0)
				continue;
			add_arg(a, params[i].name[0] ? params[i].name : "arg", t,
				xasprintf("((%s)PT_REGS_PARM%u(ctx))", t.kind == T_PTR ? "void *" : t.is_signed ? "__s64" : "__u64", i + 1));
		}
		register_args(a, n);   /* also PT_REGS_PARM6 for a named sixth */
	} else if (!in_regs) {
		typed_params(c, a, params, n, loc);
	}
	if (ret) {
		struct type t;
		if (ret_type == 0 || btf_arg_type(c, ret_type, &t) < 0)
			t = int_type(8, true);
		char *cx = in_regs ? xasprintf("((%s)PT_REGS_RC(ctx))", t.kind == T_PTR ? "void *" : "__s64")
				   : xasprintf("((%s)ctx[%u])", t.kind == T_PTR ? "void *" : "__s64", n);
		add_arg(a, "retval", t, cx);
	}
	free(params);
	return 0;
}

static int resolve_kprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_func(c, a, t, l, false, true); }
static int resolve_kretprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_func(c, a, t, l, true, true); }
static int resolve_fentry(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_func(c, a, t, l, false, false); }
static int resolve_fexit(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_func(c, a, t, l, true, false); }

static void header_ctx_array(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"%s/%s\")\nint %s(__u64 *ctx)\n{\n", probe_kind_name(a->alt->kind), a->target, a->alt->prog_name);
}

static void header_regs(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	if (a->alt->kind == UT_PROBE_UPROBE || a->alt->kind == UT_PROBE_URETPROBE)
		sb_printf(out, "SEC(\"%s\")\nint %s(struct pt_regs *ctx)\n{\n", probe_kind_name(a->alt->kind), a->alt->prog_name);
	else
		sb_printf(out, "SEC(\"%s/%s\")\nint %s(struct pt_regs *ctx)\n{\n", probe_kind_name(a->alt->kind), a->target,
			  a->alt->prog_name);
}

/* ---- uprobes: arguments by register, no types ---- */

static int resolve_uprobe_common(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc, bool ret)
{
	const char *colon = strrchr(target, ':');
	if (!colon || colon == target || !colon[1]) {
		diag_error(c->d, loc, "uprobes are written uprobe:/path/to/binary:symbol");
		return -1;
	}
	/* the function must be in the binary here (uprobe_absent says why not) */
	char *path = xasprintf("%.*s", (int)(colon - target), target);
	struct ut_elf_syms syms;
	char why[128];
	bool exists = false;
	if (ut_elf_syms_read(path, &syms, why, sizeof(why)) == 0) {
		exists = ut_elf_sym_named(&syms, colon + 1) != NULL;
		ut_elf_syms_free(&syms);
	}
	free(path);
	if (!exists)
		return 1;
	a->target = xstrdup(target);
	if (!ret)
		register_args(a, 6);
	if (ret)
		add_arg(a, "retval", int_type(8, true), xstrdup("((__s64)PT_REGS_RC(ctx))"));
	return 0;
}
static int resolve_uprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_uprobe_common(c, a, t, l, false); }

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

void uprobe_absent(struct compiler *c, struct ut_loc loc, const char *target)
{
	const char *colon = strrchr(target, ':');
	if (!colon)
		return;
	char *path = xasprintf("%.*s", (int)(colon - target), target);
	const char *fn = colon + 1;
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
static int resolve_uretprobe(struct compiler *c, struct alt_ctx *a, const char *t, struct ut_loc l) { return resolve_uprobe_common(c, a, t, l, true); }

/* ---- interval, BEGIN, END ---- */

static int resolve_interval(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	/* interval:1s, interval:100ms, interval:s:1, interval:ms:100 */
	char unit[8] = "";
	long long v = 0;
	int used = 0;
	if (sscanf(target, "%lld%7[a-z]%n", &v, unit, &used) != 2 || target[used]) {
		used = 0;
		if (sscanf(target, "%7[a-z]:%lld%n", unit, &v, &used) != 2 || target[used])
			unit[0] = 0;
	}
	long long scale = strcmp(unit, "s") == 0 ? 1000000000LL : strcmp(unit, "ms") == 0 ? 1000000LL
			: strcmp(unit, "us") == 0 ? 1000LL : 0;
	if (!scale || v <= 0 || v > 3600LL * 1000000) {
		diag_error(c->d, loc, "interval probes are written interval:1s, interval:100ms or interval:us:500");
		return -1;
	}
	if (v * scale < 1000000)
		diag_warning(c->d, loc, "intervals shorter than 1ms cost much CPU");
	a->target = xasprintf("%lld", v * scale);
	return 0;
}

static void header_interval(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"perf_event\")\nint %s(void *ctx)\n{\n", a->alt->prog_name);
}

static int resolve_once(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc)
{
	if (target[0]) {
		diag_error(c->d, loc, "BEGIN and END take no target");
		return -1;
	}
	a->target = xstrdup("");
	return 0;
}

/* BEGIN/END run once, by test-run from user space. */
static void header_once(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"raw_tp\")\nint %s(void *ctx)\n{\n", a->alt->prog_name);
}

static const struct probe_kind_def kinds[] = {
	{"tracepoint", "t", UT_PROBE_TRACEPOINT, resolve_tracepoint, header_tracepoint},
	{"tp_btf", NULL, UT_PROBE_TP_BTF, resolve_tp_btf, header_ctx_array},
	{"raw_tp", "rawtracepoint", UT_PROBE_RAW_TP, resolve_tp_btf, header_ctx_array},
	{"kprobe", "k", UT_PROBE_KPROBE, resolve_kprobe, header_regs},
	{"kretprobe", "kr", UT_PROBE_KRETPROBE, resolve_kretprobe, header_regs},
	{"fentry", "f", UT_PROBE_FENTRY, resolve_fentry, header_ctx_array},
	{"fexit", "fr", UT_PROBE_FEXIT, resolve_fexit, header_ctx_array},
	{"uprobe", "u", UT_PROBE_UPROBE, resolve_uprobe, header_regs},
	{"uretprobe", "ur", UT_PROBE_URETPROBE, resolve_uretprobe, header_regs},
	{"interval", "i", UT_PROBE_INTERVAL, resolve_interval, header_interval},
	{"BEGIN", NULL, UT_PROBE_BEGIN, resolve_once, header_once},
	{"END", NULL, UT_PROBE_END, resolve_once, header_once},
};

const struct probe_kind_def *probe_kind_find(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, name) == 0 || (kinds[i].short_name && strcmp(kinds[i].short_name, name) == 0))
			return &kinds[i];
	return NULL;
}

const struct probe_kind_def *probe_kind_def(enum ut_probe_kind kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

const char *probe_kind_name(enum ut_probe_kind kind)
{
	const struct probe_kind_def *d = probe_kind_def(kind);
	return d ? d->name : "?";
}
