/* tracepoint:CATEGORY:NAME (t:): a classic tracepoint.  The body reads the
 * record's fields as the format file in tracefs describes them, through
 * our copy of the record struct, which CO-RE relocates where the kernel
 * has its BTF counterpart.  Attached as a perf event. */
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel.h"
#include "probes/attach.h"
#include "probes/resolve.h"

/* ---- compiler ---- */

/* The kernel's BTF names a tracepoint's record struct after its event
 * class, which the format file does not tell: find the trace_event_raw_*
 * struct of btf whose members sit where the format says.  Kernels rename
 * classes (block_rq_complete's record is trace_event_raw_block_rq_complete
 * on 5.10, trace_event_raw_block_rq_completion later): the compiler asks
 * the compiling kernel, the loader the running one (prepare_tracepoint). */
static const char *record_struct_name(const struct btf *btf, const struct ut_tracepoint *tp, char *buf, size_t len)
{
	snprintf(buf, len, "trace_event_raw_%s", tp->name);
	if (!btf)
		return NULL;
	if (btf__find_by_name_kind(btf, buf, BTF_KIND_STRUCT) > 0)
		return buf;
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

/* Our copy of a record struct is named RECORD___utP (probe P's first
 * alternative) or RECORD___utP_aA, where the alternative's program is
 * ut_pP_aA (compile.c); the loader finds the copy by it. */
static void record_struct_suffix(unsigned probe, unsigned alt, char *buf, size_t len)
{
	if (alt)
		snprintf(buf, len, "___ut%u_a%u", probe, alt);
	else
		snprintf(buf, len, "___ut%u", probe);
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

static int tracepoint_args(struct compiler *c, struct alt_ctx *a, const struct ut_tracepoint *tp, bool co_re,
			   bool user_pointers);

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
	/* they name files in tracefs, and the section and a struct of the C */
	const char *word = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
	if (cat[strspn(cat, word)] || name[strspn(name, word)]) {
		diag_error(c->d, loc, "'%s' is no tracepoint: categories and names are letters, digits and '_'",
			   a->spec);
		return -1;
	}
	const struct ut_tracepoint *tp = ut_kernel_tracepoint(c->k, cat, name);
	struct ut_tracepoint declared = {0};
	char sname[160];
	const char *raw;
	if (tp) {
		raw = record_struct_name(ut_kernel_btf(c->k), tp, sname, sizeof(sname));
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
	char suffix[32];
	record_struct_suffix(a->probe_index, (unsigned)(a->alt - a->probe->alts), suffix, sizeof(suffix));
	snprintf(a->record_struct, sizeof(a->record_struct), "%s%s", raw ? raw : "ut_tp_record", suffix);
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
			sb_printf(&a->prelude, "\t%s %s;\n", probe_int_c_type(f->size, f->is_signed), member);
		at = f->offset + f->size;
	}
	sb_printf(&a->prelude, "}%s;\n\n", raw ? " __attribute__((preserve_access_index))" : "");
	/* a syscall's pointer arguments are the caller's: user memory (tracefs
	 * does not say so, the kernel's prototypes do: __user) */
	int rc = tracepoint_args(c, a, tp, raw != NULL, strcmp(cat, "syscalls") == 0);
	free_declared(&declared);
	return rc;
}

/* co_re: the record struct has a BTF counterpart, so field existence is
 * asked of the running kernel; otherwise the fields are those of the local
 * format and exist.  user_pointers: pointer fields hold user addresses
 * (str() reads them as ustr() does), of the types the format gives them:
 * their structs' fields and their elements (argv[1]) are read from user
 * memory.  Fields are read through ut_ctx(tp) (bpf/ut.h): each read its
 * own load, which the verifier takes. */
static int tracepoint_args(struct compiler *c, struct alt_ctx *a, const struct ut_tracepoint *tp, bool co_re,
			   bool user_pointers)
{
	for (unsigned i = 0; i < tp->nfields; i++) {
		const struct ut_tp_field *f = &tp->fields[i];
		struct probe_arg *p;
		if (f->is_data_loc) {
			if (!f->is_string)
				continue;   /* dynamic arrays other than strings: not readable yet */
			p = probe_add_arg(a, f->name, (struct type){.kind = T_STR, .size = 128},
				    xasprintf("bpf_probe_read_kernel_str(%%s, sizeof(%%s), (char *)ctx + (ut_ctx(tp)->__data_loc_%s & 0xffff))", f->name));
			if (co_re)
				p->exists_cexpr = xasprintf("bpf_core_field_exists(tp->__data_loc_%s)", f->name);
			continue;
		}
		if (f->is_string) {
			p = probe_add_arg(a, f->name, (struct type){.kind = T_STR, .size = (uint8_t)(f->size > 255 ? 255 : f->size)},
				    xasprintf("bpf_probe_read_kernel_str(%%s, sizeof(%%s), tp->%s)", f->name));
		} else if (f->array_len && (f->size == 4 || f->size == 16) && f->size == f->array_len) {
			/* an address (sock:inet_sock_set_state's saddr, saddr_v6), for ntop() */
			p = probe_add_arg(a, f->name, (struct type){.kind = T_STR, .size = (uint8_t)f->size, .bytes = true},
					  xasprintf("bpf_probe_read_kernel(%%s, sizeof(%%s), ut_ctx(tp)->%s)", f->name));
		} else if (f->array_len) {
			continue;
		} else if (f->is_pointer) {
			int32_t pointee = user_pointers ? ut_kernel_c_pointee(c->k, f->c_type) : 0;
			p = probe_add_arg(a, f->name, (struct type){.kind = T_PTR, .size = 8, .user = user_pointers, .btf = pointee},
					  xasprintf("((void *)ut_ctx(tp)->%s)", f->name));
		} else {
			p = probe_add_arg(a, f->name, probe_int_type((int)f->size, f->is_signed),
				    xasprintf("((%s)ut_ctx(tp)->%s)", f->is_signed ? "__s64" : "__u64", f->name));
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

static void absent_tracepoint(struct compiler *c, const struct probe_kind_def *def, struct ut_loc loc, const char *spec,
			      const char *target)
{
	probe_absent(c, loc, spec);
	char glob[256];
	const char *colon = strchr(target, ':');
	snprintf(glob, sizeof(glob), "%.*s:*", colon ? (int)(colon - target) : 0, target);
	if (probe_note_closest(c, def, target, glob, false) == 0)
		diag_note(c->d, "this kernel has no tracepoint category '%.*s'; list them with: uring-trace -l 'tracepoint:*'",
			  (int)strcspn(target, ":"), target);
}

/* ---- -l ---- */

static void list_tracepoint_args(struct ut_kernel *k, const char *name, FILE *out)
{
	const char *colon = strchr(name, ':');
	char cat[128];
	snprintf(cat, sizeof(cat), "%.*s", colon ? (int)(colon - name) : 0, name);
	const struct ut_tracepoint *tp = colon ? ut_kernel_tracepoint(k, cat, colon + 1) : NULL;
	for (unsigned i = 0; tp && i < tp->nfields; i++)
		fprintf(out, "    %s %s\n", tp->fields[i].c_type, tp->fields[i].name);
}

/* ---- runtime ---- */

/* "cat/name" (or "cat:name") */
static bool split_tracepoint(const char *target, char *cat, size_t clen, char *name, size_t nlen)
{
	return probe_split_last(target, '/', cat, clen, name, nlen) ||
	       probe_split_last(target, ':', cat, clen, name, nlen);
}

static bool tracepoint_exists(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	char cat[256], name[256];
	if (!split_tracepoint(alt->target, cat, sizeof(cat), name, sizeof(name))) {
		snprintf(why, len, "bad tracepoint name");
		return false;
	}
	if (ut_kernel_tracepoint(k, cat, name))
		return true;
	if (strstr(ut_kernel_error(k), "tracefs"))  /* no tracefs at all */
		snprintf(why, len, "%s", ut_kernel_error(k));
	else
		snprintf(why, len, "no such tracepoint");
	return false;
}

static int trial_tracepoint(struct ut_kernel *k, const struct ut_alt *alt, char *why, size_t len)
{
	(void)k;
	return probe_trial_load(alt, BPF_PROG_TYPE_TRACEPOINT, 0, 0, NULL, why, len);
}

/* CO-RE finds our copy of the record struct by its name, the compiling
 * kernel's class name.  Where the running kernel names the record
 * otherwise (another class), the copy takes the running kernel's name
 * before the object loads, so that its fields are still found by name. */
static int prepare_tracepoint(struct ut_kernel *k, struct bpf_object *obj, struct bpf_program *prog,
			      const struct ut_alt *alt)
{
	(void)prog;
	char cat[256], name[256], suffix[32], want[192], here[160];
	unsigned probe, alt_index;
	struct btf *btf = bpf_object__btf(obj);
	const struct btf *kbtf = ut_kernel_btf(k);
	if (!btf || !kbtf || sscanf(alt->prog_name, "ut_p%u_a%u", &probe, &alt_index) != 2 ||
	    !split_tracepoint(alt->target, cat, sizeof(cat), name, sizeof(name)))
		return 0;
	record_struct_suffix(probe, alt_index, suffix, sizeof(suffix));
	size_t slen = strlen(suffix);
	unsigned n = btf__type_cnt(btf);
	for (unsigned id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *tname = btf_is_struct(t) ? btf__name_by_offset(btf, t->name_off) : NULL;
		size_t tlen = tname ? strlen(tname) : 0;
		if (!tname || tlen <= slen || strcmp(tname + tlen - slen, suffix) != 0 ||
		    strncmp(tname, "trace_event_raw_", 16) != 0)
			continue;
		snprintf(want, sizeof(want), "%.*s", (int)(tlen - slen), tname);
		const struct ut_tracepoint *tp = ut_kernel_tracepoint(k, cat, name);
		if (btf__find_by_name_kind(kbtf, want, BTF_KIND_STRUCT) > 0 || !tp ||
		    !record_struct_name(kbtf, tp, here, sizeof(here)))
			return 0;   /* found as it is, or not at all (the verifier says so) */
		snprintf(want, sizeof(want), "%s%s", here, suffix);
		int off = btf__add_str(btf, want);
		if (off < 0)
			return off;
		/* after btf__add_str: it may have moved the types */
		((struct btf_type *)btf__type_by_id(btf, id))->name_off = (unsigned)off;
		return 0;
	}
	return 0;
}

static int attach_tracepoint(struct bpf_program *prog, const struct ut_alt *alt, struct ut_links *links)
{
	char cat[256], name[256];
	if (!split_tracepoint(alt->target, cat, sizeof(cat), name, sizeof(name)))
		return -EINVAL;
	return probe_links_add(links, bpf_program__attach_tracepoint(prog, cat, name));
}

const struct probe_kind_def probe_kind_tracepoint = {
	.name = "tracepoint",
	.short_name = "t",
	.kind = UT_PROBE_TRACEPOINT,
	.wildcards = true,
	.slow_detach = true,
	.info_target = "syscalls/sys_enter_getpid",
	.resolve = resolve_tracepoint,
	.header = header_tracepoint,
	.absent = absent_tracepoint,
	.list = ut_kernel_tracepoints_matching,
	.list_args = list_tracepoint_args,
	.exists = tracepoint_exists,
	.trial = trial_tracepoint,
	.prepare = prepare_tracepoint,
	.attach = attach_tracepoint,
};
