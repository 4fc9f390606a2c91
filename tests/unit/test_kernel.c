/* Kernel look-ups against the running kernel (6.18 on the CI machine):
 * tracefs formats, vmlinux BTF types, members, parameters, enums. */
#include "kernel/kernel.h"
#include "tests/unit/check.h"

#include <stdlib.h>

static const struct ut_tp_field *field(const struct ut_tracepoint *tp, const char *name)
{
	for (unsigned i = 0; tp && i < tp->nfields; i++)
		if (strcmp(tp->fields[i].name, name) == 0)
			return &tp->fields[i];
	return NULL;
}

static void test_tracepoints(struct ut_kernel *k)
{
	const struct ut_tracepoint *tp = ut_kernel_tracepoint(k, "io_uring", "io_uring_submit_req");
	CHECK("submit_req exists", tp != NULL);
	if (!tp)
		return;
	static const char *const want[] = {"ctx", "req", "user_data", "opcode", "flags",
					   "sq_thread", "op_str"};
	bool same = tp->nfields == 7;
	for (unsigned i = 0; same && i < 7; i++)
		same = strcmp(tp->fields[i].name, want[i]) == 0;
	CHECK("submit_req fields in order, common_* left out", same);
	CHECK("submit_req has an id", tp->id > 0);
	CHECK("submit_req is cached", ut_kernel_tracepoint(k, "io_uring", "io_uring_submit_req") == tp);

	const struct ut_tp_field *f = field(tp, "ctx");
	CHECK("ctx is a pointer", f && f->is_pointer && f->size == 8 && f->offset == 8);
	CHECK_STR("ctx c_type", f ? f->c_type : NULL, "void *");
	f = field(tp, "user_data");
	CHECK("user_data is unsigned 8 bytes", f && !f->is_pointer && !f->is_signed && f->size == 8);
	f = field(tp, "op_str");
	CHECK("op_str is a __data_loc string",
	      f && f->is_data_loc && f->is_string && f->size == 4 && f->array_len == 0);
	CHECK_STR("op_str c_type", f ? f->c_type : NULL, "char[]");

	tp = ut_kernel_tracepoint(k, "sched", "sched_switch");
	f = field(tp, "prev_comm");
	CHECK("prev_comm is char[16]", f && f->is_string && !f->is_data_loc && f->array_len == 16 &&
					       f->size == 16 && !f->is_pointer);
	CHECK_STR("prev_comm c_type", f ? f->c_type : NULL, "char[16]");
	f = field(tp, "prev_pid");
	CHECK("prev_pid is signed", f && f->is_signed && f->size == 4 && !f->is_string);

	CHECK("missing tracepoint is NULL", !ut_kernel_tracepoint(k, "io_uring", "no_such_event"));
	CHECK("missing tracepoint explained", strstr(ut_kernel_error(k), "no_such_event") != NULL);
	CHECK("path-like names refused", !ut_kernel_tracepoint(k, "..", "io_uring"));

	char **names = NULL;
	int n = ut_kernel_tracepoints_matching(k, "io_uring:*", &names);
	CHECK("io_uring:* gives 17 events", n == 17);
	CHECK_STR("matches are sorted", n > 0 ? names[0] : NULL, "io_uring:io_uring_complete");
	ut_strv_free(names, n);
	n = ut_kernel_tracepoints_matching(k, "sched:sched_switc?", &names);
	CHECK("? glob", n == 1 && strcmp(names[0], "sched:sched_switch") == 0);
	ut_strv_free(names, n);
	n = ut_kernel_tracepoints_matching(k, "nothing:here*", &names);
	CHECK("no match gives 0", n == 0);
	ut_strv_free(names, n);
}

static void test_members(struct ut_kernel *k)
{
	char buf[256];
	int32_t kiocb = ut_kernel_struct(k, "io_kiocb");
	CHECK("struct io_kiocb found", kiocb > 0);
	CHECK("missing struct is -1", ut_kernel_struct(k, "no_such_struct_xyz") == -1);

	struct ut_member m;
	CHECK("io_kiocb.ctx found", ut_kernel_member(k, kiocb, "ctx", &m) == 0);
	CHECK_STR("ctx spelled", ut_kernel_type_c(k, m.type, buf, sizeof(buf)), "struct io_ring_ctx *");
	CHECK("ctx is direct", !m.via_anon && m.bitfield_size == 0 && m.offset_bits % 64 == 0);
	struct ut_ktype t;
	CHECK("ctx resolves to a pointer", ut_kernel_type(k, m.type, &t) == 0 && t.kind == UT_KT_PTR &&
						   t.size == 8);
	CHECK("ctx points to struct io_ring_ctx",
	      t.target == ut_kernel_struct(k, "io_ring_ctx") && t.target > 0);
	struct ut_ktype pointee;
	CHECK("pointee is the struct", ut_kernel_type(k, t.target, &pointee) == 0 &&
					       pointee.kind == UT_KT_STRUCT &&
					       strcmp(pointee.name, "io_ring_ctx") == 0);

	CHECK("io_kiocb.file via anonymous union",
	      ut_kernel_member(k, kiocb, "file", &m) == 0 && m.via_anon && m.offset_bits == 0);
	CHECK_STR("file spelled", ut_kernel_type_c(k, m.type, buf, sizeof(buf)), "struct file *");
	CHECK("io_kiocb.flags keeps its typedef",
	      ut_kernel_member(k, kiocb, "flags", &m) == 0 &&
		      strcmp(ut_kernel_type_c(k, m.type, buf, sizeof(buf)), "io_req_flags_t") == 0);
	CHECK("typedef resolves to u64-sized int",
	      ut_kernel_type(k, m.type, &t) == 0 && t.kind == UT_KT_INT && t.size == 8);
	CHECK("missing member is -1", ut_kernel_member(k, kiocb, "reqq", &m) == -1);

	char **names = NULL;
	int n = ut_kernel_member_names(k, kiocb, &names);
	CHECK("member names include anonymous members' names", n > 10);
	CHECK_STR("suggest ctxx", ut_suggest("ctxx", names, (unsigned)n), "ctx");
	ut_strv_free(names, n);

	int32_t skb = ut_kernel_struct(k, "sk_buff");
	CHECK("sk_buff.pfmemalloc is a 1-bit bitfield",
	      ut_kernel_member(k, skb, "pfmemalloc", &m) == 0 && m.bitfield_size == 1);

	int32_t task = ut_kernel_struct(k, "task_struct");
	CHECK("task_struct.comm is char[16]",
	      ut_kernel_member(k, task, "comm", &m) == 0 && ut_kernel_type(k, m.type, &t) == 0 &&
		      t.kind == UT_KT_ARRAY && t.nelems == 16 && t.size == 16);
	struct ut_ktype elem;
	CHECK("comm element is char", ut_kernel_type(k, t.target, &elem) == 0 && elem.is_char);
	CHECK("task_struct.pid is signed 4 bytes",
	      ut_kernel_member(k, task, "pid", &m) == 0 && ut_kernel_type(k, m.type, &t) == 0 &&
		      t.kind == UT_KT_INT && t.is_signed && t.size == 4);
	CHECK_STR("pid spelled pid_t", ut_kernel_type_c(k, m.type, buf, sizeof(buf)), "pid_t");
}

static void test_params(struct ut_kernel *k)
{
	char buf[256];
	struct ut_param *p = NULL;
	unsigned n = 0;
	CHECK("tp_btf io_uring_complete", ut_kernel_tp_btf_params(k, "io_uring_complete", &p, &n) == 0);
	CHECK("io_uring_complete has 3 params", n == 3);
	if (n == 3) {
		CHECK_STR("param 0 name", p[0].name, "ctx");
		CHECK_STR("param 0 type", ut_kernel_type_c(k, p[0].type, buf, sizeof(buf)),
			  "struct io_ring_ctx *");
		CHECK_STR("param 1 name", p[1].name, "req");
		CHECK_STR("param 2 name", p[2].name, "cqe");
		CHECK_STR("param 2 type", ut_kernel_type_c(k, p[2].type, buf, sizeof(buf)),
			  "struct io_uring_cqe *");
	}
	free(p);

	CHECK("tp_btf block_rq_complete", ut_kernel_tp_btf_params(k, "block_rq_complete", &p, &n) == 0);
	CHECK("block_rq_complete has 3 params", n == 3);
	if (n == 3) {
		CHECK_STR("rq", p[0].name, "rq");
		CHECK_STR("rq type", ut_kernel_type_c(k, p[0].type, buf, sizeof(buf)), "struct request *");
		CHECK_STR("error type", ut_kernel_type_c(k, p[1].type, buf, sizeof(buf)), "blk_status_t");
		CHECK_STR("nr_bytes", p[2].name, "nr_bytes");
		CHECK_STR("nr_bytes type", ut_kernel_type_c(k, p[2].type, buf, sizeof(buf)),
			  "unsigned int");
	}
	free(p);
	CHECK("missing tp_btf is -1", ut_kernel_tp_btf_params(k, "no_such_tp", &p, &n) == -1);

	int32_t ret = -1;
	CHECK("vfs_read params", ut_kernel_func_params(k, "vfs_read", &p, &n, &ret) == 0 && n == 4);
	if (n == 4) {
		CHECK_STR("vfs_read file", p[0].name, "file");
		CHECK_STR("vfs_read file type", ut_kernel_type_c(k, p[0].type, buf, sizeof(buf)),
			  "struct file *");
		CHECK_STR("vfs_read buf type", ut_kernel_type_c(k, p[1].type, buf, sizeof(buf)), "char *");
		CHECK_STR("vfs_read count type", ut_kernel_type_c(k, p[2].type, buf, sizeof(buf)),
			  "size_t");
		CHECK_STR("vfs_read pos type", ut_kernel_type_c(k, p[3].type, buf, sizeof(buf)),
			  "loff_t *");
	}
	CHECK_STR("vfs_read returns ssize_t", ut_kernel_type_c(k, ret, buf, sizeof(buf)), "ssize_t");
	free(p);
	CHECK("missing function is -1", ut_kernel_func_params(k, "no_such_fn_xyz", &p, &n, &ret) == -1);

	char **names = NULL;
	int count = ut_kernel_functions_matching(k, "vfs_rea?", &names);
	CHECK("vfs_rea? matches vfs_read", count >= 1 && strcmp(names[0], "vfs_read") == 0);
	ut_strv_free(names, count);
	count = ut_kernel_functions_matching(k, "io_uring_*", &names);
	CHECK("io_uring_* functions", count > 5);
	ut_strv_free(names, count);
}

static void test_enums_and_suggest(struct ut_kernel *k)
{
	int64_t v = -1;
	CHECK("IORING_OP_NOP is 0", ut_kernel_enum_value(k, "IORING_OP_NOP", &v) == 0 && v == 0);
	CHECK("IORING_OP_READV is 1", ut_kernel_enum_value(k, "IORING_OP_READV", &v) == 0 && v == 1);
	CHECK("missing enumerator is -1", ut_kernel_enum_value(k, "NO_SUCH_ENUMERATOR_X", &v) == -1);

	char *cands[] = {"ctx", "req", "user_data"};
	CHECK_STR("reqq -> req", ut_suggest("reqq", cands, 3), "req");
	CHECK_STR("usr_data -> user_data", ut_suggest("usr_data", cands, 3), "user_data");
	CHECK("far name gives NULL", ut_suggest("zzzzzz", cands, 3) == NULL);
	char *ties[] = {"aa", "bb"};
	CHECK_STR("ties go to the first", ut_suggest("ab", ties, 2), "aa");
	CHECK("no candidates", ut_suggest("x", NULL, 0) == NULL);
}

int main(void)
{
	struct ut_kernel *k = ut_kernel_open();
	CHECK("open", k != NULL);
	if (!k)
		CHECK_DONE();
	CHECK("release known", ut_kernel_release(k)[0] != '\0');
	test_tracepoints(k);
	test_members(k);
	test_params(k);
	test_enums_and_suggest(k);
	ut_kernel_close(k);
	CHECK_DONE();
}
