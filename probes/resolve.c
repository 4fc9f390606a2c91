/* Helpers of the kinds' compiler hooks: arguments and their types, the
 * context of BTF kinds, absent targets, -l -v's arguments. */
#include "probes/resolve.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"

struct probe_arg *probe_add_arg(struct alt_ctx *a, const char *name, struct type t, char *cexpr)
{
	a->args = xrealloc_array(a->args, a->nargs + 1, sizeof(*a->args));
	struct probe_arg *p = &a->args[a->nargs++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = t;
	p->cexpr = cexpr;
	return p;
}

struct type probe_int_type(int size, bool sgn)
{
	return (struct type){.kind = T_INT, .size = (uint8_t)size, .is_signed = sgn};
}

const char *probe_int_c_type(uint32_t size, bool sgn)
{
	switch (size) {
	case 1: return sgn ? "__s8" : "__u8";
	case 2: return sgn ? "__s16" : "__u16";
	case 4: return sgn ? "__s32" : "__u32";
	default: return sgn ? "__s64" : "__u64";
	}
}

/* Script type of a BTF type id; -1 when scripts cannot hold it. */
static int btf_arg_type(struct compiler *c, int32_t id, struct type *out)
{
	struct ut_ktype kt;
	if (ut_kernel_type(c->k, id, &kt) < 0)
		return -1;
	switch (kt.kind) {
	case UT_KT_INT: case UT_KT_ENUM: case UT_KT_BOOL:
		*out = probe_int_type(kt.size ? (int)kt.size : 8, kt.is_signed);
		return 0;
	case UT_KT_PTR:
		*out = (struct type){.kind = T_PTR, .size = 8, .btf = kt.target};
		return 0;
	default:
		return -1;
	}
}

void probe_typed_params(struct compiler *c, struct alt_ctx *a, struct ut_param *params, unsigned n, struct ut_loc loc,
			bool direct)
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
		t.direct = t.kind == T_PTR && t.btf > 0 && direct;
		/* through ut_ctx (bpf/ut.h): clang must not keep &ctx[i] */
		if (t.kind == T_PTR)
			probe_add_arg(a, name, t, xasprintf("((void *)ut_ctx(ctx)[%u])", i));
		else
			probe_add_arg(a, name, t, xasprintf("((%s)(%s)ut_ctx(ctx)[%u])", t.is_signed ? "__s64" : "__u64",
							   probe_int_c_type(t.size, t.is_signed), i));
	}
}

char *probe_signature(struct compiler *c, const char *name, bool tracepoint)
{
	char buf[1024];
	return ut_kernel_signature(c->k, name, tracepoint, buf, sizeof(buf)) == 0 ? xstrdup(buf) : NULL;
}

/* At a return the registers hold other values: return probes have none. */
void probe_register_args(struct alt_ctx *a, unsigned n)
{
	a->uses_parm6 |= n >= 6;   /* gen defines PT_REGS_PARM6 for libbpf before 1.2 */
	for (unsigned i = 0; i < n && i < 6; i++) {
		char name[8];
		snprintf(name, sizeof(name), "arg%u", i);
		probe_add_arg(a, name, probe_int_type(8, false), xasprintf("((__u64)PT_REGS_PARM%u(ctx))", i + 1));
	}
}

int probe_resolve_function(struct compiler *c, struct alt_ctx *a, const char *target, struct ut_loc loc, bool ret,
			   bool in_regs)
{
	struct ut_param *params;
	unsigned n;
	int32_t ret_type;
	if (ut_kernel_func_params(c->k, target, &params, &n, &ret_type) < 0)
		return 1;
	a->target = xstrdup(target);
	a->alt->signature = probe_signature(c, target, false);
	if (in_regs && !ret) {
		/* the first six, in registers; the rest are on the stack */
		if (n > 6)
			n = 6;
		for (unsigned i = 0; i < n; i++) {
			struct type t;
			if (btf_arg_type(c, params[i].type, &t) < 0)
				continue;
			probe_add_arg(a, params[i].name[0] ? params[i].name : "arg", t,
				      xasprintf("((%s)PT_REGS_PARM%u(ctx))", t.kind == T_PTR ? "void *" : t.is_signed ? "__s64" : "__u64", i + 1));
		}
		probe_register_args(a, n);   /* also PT_REGS_PARM6 for a named sixth */
	} else if (!in_regs) {
		probe_typed_params(c, a, params, n, loc, true);
	}
	if (ret) {
		struct type t;
		if (ret_type == 0 || btf_arg_type(c, ret_type, &t) < 0)
			t = probe_int_type(8, true);
		char *cx = in_regs ? xasprintf("((%s)PT_REGS_RC(ctx))", t.kind == T_PTR ? "void *" : "__s64")
				   : xasprintf("((%s)ut_ctx(ctx)[%u])", t.kind == T_PTR ? "void *" : "__s64", n);
		probe_add_arg(a, "retval", t, cx);
	}
	free(params);
	return 0;
}

void probe_header_ctx_array(struct compiler *c, struct alt_ctx *a, struct strbuf *out)
{
	(void)c;
	sb_printf(out, "SEC(\"%s/%s\")\nint %s(__u64 *ctx)\n{\n", a->def->name, a->target, a->alt->prog_name);
}

void probe_absent(struct compiler *c, struct ut_loc loc, const char *spec)
{
	diag_error(c->d, loc, "%s does not exist on kernel %s", spec, ut_kernel_release(c->k));
}

/* names starting with the same letter (a typo there is not caught) */
void probe_absent_function(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
			   const char *target)
{
	probe_absent(c, loc, spec);
	char glob[8];
	snprintf(glob, sizeof(glob), "%c*", target[0]);
	probe_note_closest(c, def, target, glob, false);
}

int probe_note_closest(struct compiler *c, const struct probe_kind_def *def, const char *target, const char *glob,
		       bool by_name)
{
	/* edit distances over thousands of names cost too much */
	if (strlen(target) > 128 || !target[0])
		return -1;
	char **names = NULL;
	int n = def->list(c->k, glob, &names);
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
		ut_strv_free(names, n);
	}
	return n;
}

void probe_list_params(struct ut_kernel *k, const struct ut_param *params, unsigned n, int32_t ret, FILE *out)
{
	char buf[256];
	for (unsigned i = 0; i < n; i++) {
		const char *type = ut_kernel_type_c(k, params[i].type, buf, sizeof(buf));
		fprintf(out, "    %s%s%s\n", type, type[0] && type[strlen(type) - 1] == '*' ? "" : " ",
			params[i].name[0] ? params[i].name : "?");
	}
	if (ret >= 0)
		fprintf(out, "    %s retval\n", ut_kernel_type_c(k, ret, buf, sizeof(buf)));
}

static void list_function(struct ut_kernel *k, const char *name, bool with_retval, FILE *out)
{
	struct ut_param *params = NULL;
	unsigned n = 0;
	int32_t ret = -1;
	if (ut_kernel_func_params(k, name, &params, &n, &ret) == 0)
		probe_list_params(k, params, n, with_retval ? ret : -1, out);
	free(params);
}

void probe_list_function_args(struct ut_kernel *k, const char *name, FILE *out)
{
	list_function(k, name, false, out);
}

void probe_list_function_args_retval(struct ut_kernel *k, const char *name, FILE *out)
{
	list_function(k, name, true, out);
}
