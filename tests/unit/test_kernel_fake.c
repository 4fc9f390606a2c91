/* Kernel look-ups against a fake tracefs tree (UT_TRACEFS) and a small
 * synthetic BTF file (UT_BTF) written by this test: format parsing edge
 * cases, broken inputs, anonymous members, bitfields, spellings. */
#include "kernel/kernel.h"
#include "tests/unit/check.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void write_file(const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* Create the parent directories. */
	for (char *slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

#define COMMON                                                                    \
	"format:\n"                                                                   \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"        \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"        \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static void make_tree(void)
{
	write_file("events/enable", "0\n");
	write_file("events/header_page", "x\n");
	write_file("events/cat1/enable", "0\n");
	write_file("events/cat1/ev_basic/id", "42\n");
	write_file("events/cat1/ev_basic/format",
		   "name: ev_basic\nID: 42\n" COMMON
		   "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
		   "\tfield:unsigned long b;\toffset:16;\tsize:8;\tsigned:0;\n"
		   "\tfield:const char * p;\toffset:24;\tsize:8;\tsigned:0;\n"
		   "\tfield:char name[8];\toffset:32;\tsize:8;\tsigned:0;\n"
		   "\tfield:__data_loc char[] s;\toffset:40;\tsize:4;\tsigned:0;\n"
		   "\tfield:__data_loc u64[] vals;\toffset:44;\tsize:4;\tsigned:0;\n"
		   "\tfield:u8 bytes[4];\toffset:48;\tsize:4;\tsigned:0;\n"
		   "\tfield:char comm[TASK_COMM_LEN];\toffset:52;\tsize:16;\tsigned:0;\n"
		   "\tfield:u32 buf[];\toffset:68;\tsize:0;\tsigned:0;\n"
		   "\nprint fmt: \"a=%d\", REC->a\n");
	write_file("events/cat1/ev_noid/format",
		   "name: ev_noid\nID: 7\n" COMMON "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n");
	write_file("events/cat1/ev_noid_noline/format",
		   "name: ev_noid_noline\n" COMMON "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n");
	write_file("events/cat2/ev_bad/format",
		   "name: ev_bad\nID: 9\n" COMMON "\tfield:int x;\toffset:8;\tsigned:1;\n");
	write_file("events/cat2/ev_bad_number/format",
		   COMMON "\tfield:int x;\toffset:8x;\tsize:4;\tsigned:1;\n");
	write_file("events/cat2/ev_no_name/format", "\tfield:;offset:0;size:4;\n");
	write_file("events/cat2/ev_only_type/format", "\tfield:int;offset:0;size:4;\n");
	write_file("events/cat2/ev_empty/format", "");
	write_file("events/cat2/ev_bad_id/format", COMMON);
	write_file("events/cat2/ev_bad_id/id", "not a number\n");
	write_file("events/cat2/ev_no_format/id", "5\n");
}

static const struct ut_tp_field *field(const struct ut_tracepoint *tp, const char *name)
{
	for (unsigned i = 0; tp && i < tp->nfields; i++)
		if (strcmp(tp->fields[i].name, name) == 0)
			return &tp->fields[i];
	return NULL;
}

static void test_formats(struct ut_kernel *k)
{
	const struct ut_tracepoint *tp = ut_kernel_tracepoint(k, "cat1", "ev_basic");
	CHECK("ev_basic parsed", tp != NULL);
	CHECK("ev_basic id from id file", tp && tp->id == 42);
	CHECK("ev_basic has 9 fields", tp && tp->nfields == 9);
	const struct ut_tp_field *f = field(tp, "a");
	CHECK("a: signed int", f && f->is_signed && f->offset == 8 && f->size == 4 && !f->is_pointer &&
				       !f->is_string && f->array_len == 0);
	CHECK_STR("a c_type", f ? f->c_type : NULL, "int");
	f = field(tp, "b");
	CHECK("b: unsigned long", f && !f->is_signed && f->size == 8);
	CHECK_STR("b c_type", f ? f->c_type : NULL, "unsigned long");
	f = field(tp, "p");
	CHECK("p: pointer, not a string", f && f->is_pointer && !f->is_string);
	CHECK_STR("p c_type", f ? f->c_type : NULL, "const char *");
	f = field(tp, "name");
	CHECK("name: char[8] string", f && f->is_string && f->array_len == 8 && !f->is_data_loc &&
					      !f->is_pointer);
	CHECK_STR("name c_type", f ? f->c_type : NULL, "char[8]");
	f = field(tp, "s");
	CHECK("s: __data_loc string", f && f->is_string && f->is_data_loc && f->size == 4);
	CHECK_STR("s c_type", f ? f->c_type : NULL, "char[]");
	f = field(tp, "vals");
	CHECK("vals: __data_loc, not a string", f && f->is_data_loc && !f->is_string);
	CHECK_STR("vals c_type", f ? f->c_type : NULL, "u64[]");
	f = field(tp, "bytes");
	CHECK("bytes: u8[4], not a string", f && !f->is_string && f->array_len == 4);
	f = field(tp, "comm");
	CHECK("comm: symbolic length taken from size", f && f->is_string && f->array_len == 16);
	f = field(tp, "buf");
	CHECK("buf: flexible array", f && f->array_len == 0 && f->size == 0 && f->offset == 68);
	CHECK("no common_ fields", !field(tp, "common_pid"));

	tp = ut_kernel_tracepoint(k, "cat1", "ev_noid");
	CHECK("missing id file: id from the format", tp && tp->id == 7 && tp->nfields == 1);
	tp = ut_kernel_tracepoint(k, "cat1", "ev_noid_noline");
	CHECK("no id anywhere: id 0", tp && tp->id == 0 && tp->nfields == 1);
	tp = ut_kernel_tracepoint(k, "cat2", "ev_bad_id");
	CHECK("unparsable id file: id 0", tp && tp->id == 0 && tp->nfields == 0);
	tp = ut_kernel_tracepoint(k, "cat2", "ev_empty");
	CHECK("empty format: no fields", tp && tp->nfields == 0);

	CHECK("missing size is malformed", !ut_kernel_tracepoint(k, "cat2", "ev_bad"));
	CHECK("malformed explained", strstr(ut_kernel_error(k), "malformed") != NULL);
	CHECK("bad number is malformed", !ut_kernel_tracepoint(k, "cat2", "ev_bad_number"));
	CHECK("field without name is malformed", !ut_kernel_tracepoint(k, "cat2", "ev_no_name"));
	CHECK("field without type is malformed", !ut_kernel_tracepoint(k, "cat2", "ev_only_type"));
	CHECK("no format file", !ut_kernel_tracepoint(k, "cat2", "ev_no_format"));
	CHECK("missing event", !ut_kernel_tracepoint(k, "cat9", "nothing"));
	CHECK("slash in name refused", !ut_kernel_tracepoint(k, "cat1/ev_basic", "."));

	char **names = NULL;
	int n = ut_kernel_tracepoints_matching(k, "cat1:*", &names);
	CHECK("cat1:* gives 3, files ignored", n == 3);
	CHECK("sorted", n == 3 && strcmp(names[0], "cat1:ev_basic") == 0 &&
				strcmp(names[2], "cat1:ev_noid_noline") == 0);
	ut_strv_free(names, n);
	n = ut_kernel_tracepoints_matching(k, "*:ev_b[a]*", &names);
	CHECK("bracket glob across categories", n == 4 && strcmp(names[0], "cat1:ev_basic") == 0 &&
							 strcmp(names[1], "cat2:ev_bad") == 0);
	ut_strv_free(names, n);
}

static void test_bad_tracefs(void)
{
	setenv("UT_TRACEFS", "/nonexistent/tracefs", 1);
	struct ut_kernel *k = ut_kernel_open();
	CHECK("bad UT_TRACEFS gives NULL", !ut_kernel_tracepoint(k, "a", "b"));
	CHECK("bad UT_TRACEFS explained", strstr(ut_kernel_error(k), "UT_TRACEFS") != NULL);
	char **names = NULL;
	CHECK("bad UT_TRACEFS: matching is -1", ut_kernel_tracepoints_matching(k, "*", &names) == -1);
	ut_kernel_close(k);
}

/* A small BTF with the shapes the checker meets in vmlinux.  Fields attach
 * to the last added struct, so referenced types are added first. */
static bool write_btf(const char *path)
{
	struct btf *b = btf__new_empty();
	int u32 = btf__add_int(b, "unsigned int", 4, 0);                 /* 1 */
	int chr = btf__add_int(b, "char", 1, BTF_INT_SIGNED);            /* 2 */
	int u64t = btf__add_typedef(b, "u64", btf__add_int(b, "long long unsigned int", 8, 0));
	int inner = btf__add_struct(b, "inner", 8);                      /* 5 */
	btf__add_field(b, "x", u32, 0, 0);
	btf__add_field(b, "y", u32, 32, 0);
	int inner_ptr = btf__add_ptr(b, inner);
	int anon_union = btf__add_union(b, NULL, 8);                     /* 7 */
	btf__add_field(b, "file", inner_ptr, 0, 0);
	btf__add_field(b, "cookie", u64t, 0, 0);
	int anon_struct = btf__add_struct(b, NULL, 16);
	btf__add_field(b, "lo", u32, 0, 3);
	btf__add_field(b, "hi", u32, 3, 5);
	btf__add_field(b, NULL, anon_union, 64, 0);
	int proto = btf__add_func_proto(b, u32);
	btf__add_func_param(b, "a", u32);
	int proto_ptr = btf__add_ptr(b, proto);
	int anon_ptr = btf__add_ptr(b, anon_union);
	int name_array = btf__add_array(b, u32, chr, 8);
	int cname_ptr = btf__add_ptr(b, btf__add_const(b, chr));
	int inner_ptr_ptr = btf__add_ptr(b, inner_ptr);
	int outer = btf__add_struct(b, "outer", 64);
	btf__add_field(b, "first", u64t, 0, 0);
	btf__add_field(b, NULL, anon_struct, 64, 0);
	btf__add_field(b, "cb", proto_ptr, 192, 0);
	btf__add_field(b, "anon_ptr", anon_ptr, 256, 0);
	btf__add_field(b, "name", name_array, 320, 0);
	btf__add_field(b, "cname", cname_ptr, 384, 0);
	btf__add_field(b, "pp", inner_ptr_ptr, 448, 0);
	int outer_ptr = btf__add_ptr(b, outer);
	int e = btf__add_enum(b, "color", 4);
	btf__add_enum_value(b, "RED", 0);
	btf__add_enum_value(b, "BLUE", 7);
	btf__add_enum(b, "dup", 4);
	btf__add_enum_value(b, "BLUE", 9);   /* later duplicate: the first wins */
	int e64 = btf__add_enum64(b, "big", 8, true);
	btf__add_enum64_value(b, "BIG_NEG", (uint64_t)-5);
	btf__add_enum64_value(b, "BIG_POS", 1ULL << 40);
	int anon_enum = btf__add_enum(b, NULL, 4);
	btf__add_enum_value(b, "ANON_VAL", 3);
	/* A tp_btf: btf_trace_ev (unnamed params) and __traceiter_ev (named). */
	int vptr = btf__add_ptr(b, 0);
	int tp_proto = btf__add_func_proto(b, 0);
	btf__add_func_param(b, NULL, vptr);
	btf__add_func_param(b, NULL, outer_ptr);
	btf__add_func_param(b, NULL, e);
	int tp_proto_ptr = btf__add_ptr(b, tp_proto);
	btf__add_typedef(b, "btf_trace_ev", tp_proto_ptr);
	int iter_proto = btf__add_func_proto(b, u32);
	btf__add_func_param(b, "__data", vptr);
	btf__add_func_param(b, "o", outer_ptr);
	btf__add_func_param(b, "c", e);
	btf__add_func(b, "__traceiter_ev", BTF_FUNC_GLOBAL, iter_proto);
	/* btf_trace_lonely has no __traceiter_: params stay unnamed. */
	btf__add_typedef(b, "btf_trace_lonely", tp_proto_ptr);
	int fn_proto = btf__add_func_proto(b, u64t);
	btf__add_func_param(b, "o", outer_ptr);
	btf__add_func_param(b, "v", e64);
	btf__add_func_param(b, "x", anon_enum);
	btf__add_func_param(b, NULL, 0);   /* varargs */
	btf__add_func(b, "do_thing", BTF_FUNC_GLOBAL, fn_proto);
	btf__add_func(b, "do_other", BTF_FUNC_STATIC, fn_proto);

	uint32_t size;
	const void *raw = btf__raw_data(b, &size);
	FILE *f = fopen(path, "w");
	bool ok = raw && f && fwrite(raw, 1, size, f) == size;
	if (f)
		ok = fclose(f) == 0 && ok;
	btf__free(b);
	return ok;
}

static void test_btf(struct ut_kernel *k)
{
	char buf[128];
	struct ut_member m;
	int32_t outer = ut_kernel_struct(k, "outer");
	CHECK("struct outer", outer > 0);
	CHECK("first", ut_kernel_member(k, outer, "first", &m) == 0 && m.offset_bits == 0 &&
			       !m.via_anon);
	CHECK_STR("first keeps typedef", ut_kernel_type_c(k, m.type, buf, sizeof(buf)), "u64");
	CHECK("lo: bitfield in anonymous struct",
	      ut_kernel_member(k, outer, "lo", &m) == 0 && m.via_anon && m.offset_bits == 64 &&
		      m.bitfield_size == 3);
	CHECK("hi: bit offset accumulates",
	      ut_kernel_member(k, outer, "hi", &m) == 0 && m.offset_bits == 67 && m.bitfield_size == 5);
	CHECK("cookie: two anonymous levels down",
	      ut_kernel_member(k, outer, "cookie", &m) == 0 && m.via_anon && m.offset_bits == 128);
	CHECK_STR("file spelled", ut_kernel_member(k, outer, "file", &m) == 0
					  ? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "struct inner *");
	CHECK_STR("function pointer is void *", ut_kernel_member(k, outer, "cb", &m) == 0
							? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "void *");
	CHECK_STR("pointer to anonymous union is void *",
		  ut_kernel_member(k, outer, "anon_ptr", &m) == 0
			  ? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "void *");
	CHECK_STR("array spelled", ut_kernel_member(k, outer, "name", &m) == 0
					   ? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "char[8]");
	CHECK_STR("const dropped", ut_kernel_member(k, outer, "cname", &m) == 0
					   ? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "char *");
	CHECK_STR("pointer to pointer", ut_kernel_member(k, outer, "pp", &m) == 0
						? ut_kernel_type_c(k, m.type, buf, sizeof(buf)) : NULL,
		  "struct inner **");
	struct ut_ktype t;
	CHECK("cname points to char (const skipped)",
	      ut_kernel_member(k, outer, "cname", &m) == 0 && ut_kernel_type(k, m.type, &t) == 0 &&
		      t.kind == UT_KT_PTR && ut_kernel_type(k, t.target, &t) == 0 && t.is_char &&
		      t.is_signed);
	CHECK("anonymous union member has no spelling",
	      strcmp(ut_kernel_type_c(k, 7, buf, sizeof(buf)), "") == 0);
	CHECK("missing member", ut_kernel_member(k, outer, "nope", &m) == -1);
	CHECK("member of a non-struct", ut_kernel_member(k, 1, "x", &m) == -1);
	CHECK("bad type id", ut_kernel_type(k, 100000, &t) == -1 && ut_kernel_type(k, -3, &t) == -1);
	CHECK_STR("bad id spelled empty", ut_kernel_type_c(k, 100000, buf, sizeof(buf)), "");
	CHECK("void", ut_kernel_type(k, 0, &t) == 0 && t.kind == UT_KT_VOID);

	char **names = NULL;
	int n = ut_kernel_member_names(k, outer, &names);
	CHECK("member names through anonymous members", n == 10);
	CHECK_STR("suggest from members", ut_suggest("cookee", names, (unsigned)n), "cookie");
	CHECK("distance 2 is too far for 5 letters", ut_suggest("cooky", names, (unsigned)n) == NULL);
	ut_strv_free(names, n);

	int64_t v = 0;
	CHECK("BLUE: the first enum wins", ut_kernel_enum_value(k, "BLUE", &v) == 0 && v == 7);
	CHECK("signed enum64", ut_kernel_enum_value(k, "BIG_NEG", &v) == 0 && v == -5);
	CHECK("large enum64", ut_kernel_enum_value(k, "BIG_POS", &v) == 0 && v == 1LL << 40);
	CHECK("anonymous enum value", ut_kernel_enum_value(k, "ANON_VAL", &v) == 0 && v == 3);

	struct ut_param *p = NULL;
	unsigned np = 0;
	CHECK("tp_btf ev", ut_kernel_tp_btf_params(k, "ev", &p, &np) == 0 && np == 2);
	CHECK("tp_btf ev names from __traceiter_ev",
	      np == 2 && strcmp(p[0].name, "o") == 0 && strcmp(p[1].name, "c") == 0);
	CHECK_STR("tp_btf ev enum", np == 2 ? ut_kernel_type_c(k, p[1].type, buf, sizeof(buf)) : NULL,
		  "enum color");
	free(p);
	CHECK("tp_btf lonely unnamed", ut_kernel_tp_btf_params(k, "lonely", &p, &np) == 0 &&
					       np == 2 && p[0].name[0] == '\0');
	free(p);
	int32_t ret = 0;
	CHECK("do_thing params, varargs left out",
	      ut_kernel_func_params(k, "do_thing", &p, &np, &ret) == 0 && np == 3);
	CHECK_STR("do_thing returns u64", ut_kernel_type_c(k, ret, buf, sizeof(buf)), "u64");
	CHECK_STR("enum64 spelled", np == 3 ? ut_kernel_type_c(k, p[1].type, buf, sizeof(buf)) : NULL,
		  "enum big");
	CHECK_STR("anonymous enum spelled as int",
		  np == 3 ? ut_kernel_type_c(k, p[2].type, buf, sizeof(buf)) : NULL, "unsigned int");
	free(p);
	n = ut_kernel_functions_matching(k, "do_*", &names);
	CHECK("do_* sorted", n == 2 && strcmp(names[0], "do_other") == 0);
	ut_strv_free(names, n);
}

static void test_bad_btf(const char *path, const char *want_error)
{
	setenv("UT_BTF", path, 1);
	struct ut_kernel *k = ut_kernel_open();
	char buf[64], **names = NULL;
	struct ut_param *p = NULL;
	unsigned n = 0;
	int32_t ret;
	int64_t v;
	struct ut_ktype t;
	CHECK("bad BTF: struct -1", ut_kernel_struct(k, "outer") == -1);
	CHECK("bad BTF explained", strstr(ut_kernel_error(k), want_error) != NULL);
	CHECK("bad BTF: btf NULL", ut_kernel_btf(k) == NULL);
	CHECK("bad BTF: type -1", ut_kernel_type(k, 1, &t) == -1 && ut_kernel_type(k, 0, &t) == -1);
	CHECK_STR("bad BTF: spelling empty", ut_kernel_type_c(k, 1, buf, sizeof(buf)), "");
	CHECK("bad BTF: params -1", ut_kernel_tp_btf_params(k, "ev", &p, &n) == -1 &&
					    ut_kernel_func_params(k, "f", &p, &n, &ret) == -1);
	CHECK("bad BTF: enum -1", ut_kernel_enum_value(k, "RED", &v) == -1);
	CHECK("bad BTF: functions -1", ut_kernel_functions_matching(k, "*", &names) == -1);
	CHECK("bad BTF: member names 0", ut_kernel_member_names(k, 1, &names) == 0);
	ut_strv_free(names, 0);
	ut_kernel_close(k);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/ut-kernel-fake-XXXXXX");
	if (!mkdtemp(root)) {
		CHECK("mkdtemp", false);
		CHECK_DONE();
	}
	make_tree();
	char btf_path[128], garbage_path[128];
	snprintf(btf_path, sizeof(btf_path), "%s/vmlinux.btf", root);
	snprintf(garbage_path, sizeof(garbage_path), "%s/garbage.btf", root);
	CHECK("BTF written", write_btf(btf_path));
	write_file("garbage.btf", "this is not BTF");

	setenv("UT_TRACEFS", root, 1);
	setenv("UT_BTF", btf_path, 1);
	struct ut_kernel *k = ut_kernel_open();
	test_formats(k);
	test_btf(k);
	ut_kernel_close(k);

	test_bad_tracefs();
	test_bad_btf(garbage_path, "cannot parse BTF");
	test_bad_btf("/nonexistent.btf", "cannot read BTF file /nonexistent.btf");

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("could not remove %s\n", root);
	CHECK_DONE();
}
