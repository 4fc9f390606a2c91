/* The language's builtin names and functions: a row each, and for a
 * function the check that types it and the generator that writes its C. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/check.h"
#include "compiler/gen.h"
#include "kernel/kernel.h"

/* comm: read into a temporary */
static char *gen_comm(struct gen *g)
{
	char *t = new_tmp(g);
	emit(g, "char %s[16];", t);
	emit(g, "bpf_get_current_comm(%s, sizeof(%s));", t, t);
	return t;
}

/* `probe`: the probe's index, shown through a table of the probes as
 * written (made when first asked for). */
static void check_probe(struct check *ck, struct node *n)
{
	n->ref = REF_PROBE;
	n->type = t_int(4, false);
	n->type.show = UT_SHOW_TABLE;
	n->type.table = (int16_t)naming_table(ck, "probe", ck->alt->probe_index, ck->alt->probe->spec);
}

void forget_probe_name(struct compiler *c, unsigned probe_index)
{
	int t = table_index(c, "probe");
	if (t < 0)
		return;
	struct ut_table *tab = &c->prog->tables[t];
	for (unsigned i = 0; i < tab->nentries; i++)
		if (tab->entries[i].key == probe_index) {
			free(tab->entries[i].name);
			tab->entries[i] = tab->entries[--tab->nentries];
			return;
		}
}

/* `func`: the function (or event) the alternative probes, the last part
 * of its target ("vfs_read", "readline" of /bin/bash:readline), as its
 * number in the table of them. */
static void check_func(struct check *ck, struct node *n)
{
	const char *target = ck->alt->target, *colon = strrchr(target, ':'), *slash = strrchr(target, '/');
	const char *name = colon ? colon + 1 : slash ? slash + 1 : target;
	struct ut_program *p = ck->c->prog;
	int t = table_index(ck->c, "func");
	int64_t key = t < 0 ? 0 : (int64_t)p->tables[t].nentries;
	for (unsigned i = 0; t >= 0 && i < p->tables[t].nentries; i++)
		if (strcmp(p->tables[t].entries[i].name, name) == 0)
			key = p->tables[t].entries[i].key;
	n->ref = REF_FUNC_NAME;
	n->num = key;
	n->type = t_int(4, false);
	n->type.show = UT_SHOW_TABLE;
	n->type.table = (int16_t)naming_table(ck, "func", key, name);
}

/* info, warn, crit: a finding's severities, constants */
static void check_severity(struct check *ck, struct node *n)
{
	int64_t level = UT_INFO;
	while (level < UT_CRIT && strcmp(ut_severity_names[level], n->str) != 0)
		level++;
	struct node *value = node_new(N_INT, n->loc);
	value->num = level;
	stands_for(ck, n, value);
}

#define U32 {.kind = T_INT, .size = 4}
#define U64 {.kind = T_INT, .size = 8}

const struct builtin builtins[] = {
	/* the hit's one read of the ids (bpf/ut.h, ut_pid_tgid) */
	{"pid", U32, UT_SHOW_KOID, .cexpr = "(ut_pid_tgid(&ut_id) >> 32)", .in_header = true, .header = UT_UH_PID},
	{"tid", U32, UT_SHOW_KOID, .cexpr = "((__u32)ut_pid_tgid(&ut_id))", .in_header = true, .header = UT_UH_TID},
	{"uid", U32, 0, .cexpr = "((__u32)bpf_get_current_uid_gid())"},
	{"gid", U32, 0, .cexpr = "(bpf_get_current_uid_gid() >> 32)"},
	{"cpu", U32, 0, .cexpr = "bpf_get_smp_processor_id()", .in_header = true, .header = UT_UH_CPU},
	/* in a body, the hit's one clock read, the header's time */
	{"nsecs", U64, 0, .cexpr = "bpf_ktime_get_ns()", .clock_cexpr = "ut_now", .in_header = true, .header = UT_UH_TS},
	{"cgroup", U64, 0, .cexpr = "bpf_get_current_cgroup_id()"},
	{"curtask", {.kind = T_PTR, .size = 8}, 0, .cexpr = "((void *)bpf_get_current_task())", .btf_struct = "task_struct"},
	{"comm", {.kind = T_STR, .size = 16}, 0, .gen = gen_comm, .costly = true},
	/* 1 when the current task passes -p/-c/--comm (always without them) */
	{"traced", {.kind = T_INT, .size = 1}, 0, .cexpr = "ut_pass_filter(&ut_id)", .costly = true},
	/* the stack's id in ut_stacks (gen.c's ut_stack); user space shows its frames */
	{"kstack", U64, UT_SHOW_KSTACK, .cexpr = "ut_stack(ctx, 0, UT_STACK_FRAMES)", .each_use = true, .costly = true},
	{"ustack", U64, UT_SHOW_USTACK, .cexpr = "ut_stack(ctx, BPF_F_USER_STACK, UT_STACK_FRAMES)", .each_use = true,
	 .costly = true},
	/* ns since the trace started (ut.h's ut_start_ns, set at load); in a
	 * body from the hit's clock read, as nsecs */
	{"elapsed", U64, 0, .cexpr = "(bpf_ktime_get_ns() - ut_start_ns)", .clock_cexpr = "(ut_now - ut_start_ns)"},
	/* bpftrace's: a random number, new at each use; the kernel's jiffies;
	 * the CPU's NUMA node */
	{"rand", U32, 0, .cexpr = "bpf_get_prandom_u32()", .each_use = true},
	{"jiffies", U64, 0, .cexpr = "bpf_jiffies64()"},
	{"numaid", U32, 0, .cexpr = "bpf_get_numa_node_id()"},
	/* -c's command's pid (0 without -c), set when the program is loaded */
	{"cpid", U32, UT_SHOW_KOID, .cexpr = "(ut_follow_forks ? ut_filter_tgid : 0)"},
	/* 1 when -p, -c or --comm restricts what is traced: set when the
	 * program is loaded, so one compiled program serves any of them */
	{"filtered", {.kind = T_INT, .size = 1}, 0, .cexpr = "(ut_filter_tgid != 0 || ut_filter_comm[0] != 0)"},
	{"probe", .check = check_probe},
	{"func", .check = check_func},
	{"info", .check = check_severity},
	{"warn", .check = check_severity},
	{"crit", .check = check_severity},
	{NULL},
};

#undef U32
#undef U64

const struct builtin *builtin_named(const char *name)
{
	for (const struct builtin *b = builtins; b->name; b++)
		if (strcmp(b->name, name) == 0)
			return b;
	return NULL;
}

/* ---- functions that choose how user space shows an integer: the
 * display kind of their row (the runtime's rows show it, runtime/decode.c) */

static void check_show(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	if (!is_int(&args[0]->type))
		ERR(ck, args[0], "%s() needs an integer, not %s", n->str, a_type(&args[0]->type));
	n->type = args[0]->type;
	n->type.show = calls[n->sym].show;
}
/* errors are negative */
static void check_errname(struct check *ck, struct node *n, struct node **a, int na)
{
	check_show(ck, n, a, na);
	n->type.is_signed = true;
}

/* the value itself: only its showing changes */
static char *gen_shown(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	return gen_expr(g, args[0]);
}

/* bswap(x): x's bytes in the other order, as wide as x (bpftrace's: a
 * port number or address from network order). */
static void check_bswap(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	if (!is_int(&args[0]->type))
		ERR(ck, args[0], "bswap() needs an integer, not %s", a_type(&args[0]->type));
	n->type = t_int(args[0]->type.kind == T_INT ? args[0]->type.size : 8, false);
}

static char *gen_bswap(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *x = gen_expr(g, args[0]), *r;
	if (n->type.size == 1)
		r = xasprintf("((__u8)(%s))", x);
	else
		r = xasprintf("__builtin_bswap%d((__u%d)(%s))", n->type.size * 8, n->type.size * 8, x);
	free(x);
	return r;
}

/* ntop(addr), ntop(family, addr): an IPv4 address (an integer, in
 * network order as sockets keep it) or an IPv6 one (a kernel struct's
 * 16-byte array, read where it is), or a tracepoint's 4- or 16-byte array
 * (sock:inet_sock_set_state's saddr, saddr_v6), as text as inet_ntop(3)
 * writes it (bpf/ut.h, ut_ntop4 and ut_ntop6).  num: which of these. */
#define NTOP_TEXT_BYTES 48   /* bpf/ut.h's UT_NTOP_BYTES */

/* A kernel struct's byte array of that size (in6_addr's u6_addr8), which
 * ntop() and macaddr() read where it is: zero bytes and all, not as the
 * string other reads make of it. */
static bool kernel_member_array(const struct node *a, int size)
{
	return a->type.kind == T_STR && a->kind == N_FIELD && a->ref == REF_MEMBER && !a->a->type.user &&
	       a->type.size == size;
}

static char *gen_member_address(struct gen *g, struct node *a)
{
	a->ref = REF_MEMBER_ADDR;
	char *r = gen_expr(g, a);
	a->ref = REF_MEMBER;
	return r;
}
enum ntop_source { NTOP_V4_INTEGER, NTOP_V6_MEMBER, NTOP_V4_BYTES, NTOP_V6_BYTES };

static void check_ntop(struct check *ck, struct node *n, struct node **args, int nargs)
{
	struct node *addr = args[nargs - 1];
	n->type = t_str(NTOP_TEXT_BYTES);
	int64_t family = -1;
	if (nargs == 2) {
		check_expr(ck, args[0]);
		if (!const_int(ck->c, args[0], &family, 0) || (family != 2 && family != 10)) {
			ERR(ck, args[0], "ntop()'s family is AF_INET or AF_INET6 (#include <sys/socket.h>), a constant");
			return;
		}
	}
	check_expr(ck, addr);
	const struct type *t = &addr->type;
	bool v4 = family != 10, v6 = family != 2;
	if (is_int(t) && v4)
		n->num = NTOP_V4_INTEGER;
	else if (t->kind == T_STR && t->bytes && t->size == 4 && v4)
		n->num = NTOP_V4_BYTES;
	else if (t->kind == T_STR && t->bytes && t->size == 16 && v6)
		n->num = NTOP_V6_BYTES;
	else if (kernel_member_array(addr, 16) && v6)
		n->num = NTOP_V6_MEMBER;
	else
		ERR(ck, addr, "ntop() takes an IPv4 address as an integer (skc_daddr), an IPv6 one as a kernel struct's "
		    "16-byte array (skc_v6_daddr.in6_u.u6_addr8), or a tracepoint's address array (args.saddr), not %s",
		    a_type(t));
}

static char *gen_ntop(struct gen *g, struct node *n, struct node **args, int nargs)
{
	struct node *addr = args[nargs - 1];
	char *text = new_tmp(g);
	emit(g, "char %s[%d] = {};", text, NTOP_TEXT_BYTES);
	char *a = n->num == NTOP_V6_MEMBER ? gen_member_address(g, addr) : gen_expr(g, addr);
	if (n->num == NTOP_V4_INTEGER) {
		emit(g, "ut_ntop4(%s, (__u32)(%s));", text, a);
	} else if (n->num == NTOP_V4_BYTES) {
		char *v = new_tmp(g);
		emit(g, "__u32 %s;", v);
		emit(g, "__builtin_memcpy(&%s, %s, 4);", v, a);
		emit(g, "ut_ntop4(%s, %s);", text, v);
		free(v);
	} else {
		emit(g, "ut_ntop6(%s, %s);", text, a);
	}
	free(a);
	return text;
}

/* buf(p, n): n bytes at p (at most BUF_MAX_BYTES), printed with %r as
 * bpftrace prints them: a string field whose first byte is the count
 * (bpf/ut.h, ut_buf).  Kernel memory, or the process's for a user pointer
 * and for an integer in a uprobe or usdt probe. */
#define BUF_MAX_BYTES 64

static void check_buf(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	check_expr(ck, args[1]);
	if (args[0]->type.kind != T_PTR && !is_int(&args[0]->type))
		ERR(ck, args[0], "buf() reads at a pointer or an address, not %s", a_type(&args[0]->type));
	if (!is_int(&args[1]->type))
		ERR(ck, args[1], "buf()'s length is an integer, not %s", a_type(&args[1]->type));
	int64_t len;
	int bytes = BUF_MAX_BYTES;
	if (const_int(ck->c, args[1], &len, 0) && len >= 0 && len < BUF_MAX_BYTES)
		bytes = (int)len;
	n->type = t_str(bytes + 1);
	n->type.bytes = true;
	n->type.show = UT_SHOW_BUF;
}

static char *gen_buf(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *p = gen_expr(g, args[0]), *len = gen_expr(g, args[1]), *t = new_tmp(g);
	bool user = gen_user_address(g, &args[0]->type);
	emit(g, "char %s[%d] = {};", t, n->type.size);
	emit(g, "ut_buf(%s, sizeof(%s), (const void *)(%s), (__u64)(%s), %d);", t, t, p, len, user);
	free(p);
	free(len);
	return t;
}

/* macaddr(a): a MAC address as text (bpftrace's): a kernel struct's
 * 6-byte array (read where it is), or a pointer to the bytes (the
 * process's memory for a user pointer). */
static void check_macaddr(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	struct node *a = args[0];
	check_expr(ck, a);
	n->type = t_str(18);
	if (!kernel_member_array(a, 6) && a->type.kind != T_PTR)
		ERR(ck, a, "macaddr() takes a kernel struct's 6-byte array or a pointer to the bytes, not %s",
		    a_type(&a->type));
}

static char *gen_macaddr(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	struct node *a = args[0];
	bool array = a->type.kind == T_STR;   /* else a pointer (check_macaddr) */
	char *p = array ? gen_member_address(g, a) : gen_expr(g, a), *t = new_tmp(g);
	emit(g, "char %s[18] = {};", t);
	emit(g, "ut_macaddr(%s, (const void *)(%s), %d);", t, p, !array && gen_user_address(g, &a->type));
	free(p);
	return t;
}

/* sizeof(type or value), offsetof(struct X, member): bpftrace's.  A
 * struct's size and a member's offset are the running kernel's, relocated
 * when the program is loaded (CO-RE); other sizes are known here (num). */
static int32_t named_struct(struct check *ck, const struct node *t)
{
	int32_t id = strncmp(t->str, "struct ", 7) == 0 ? ut_kernel_struct(ck->c->k, t->str + 7) : -1;
	if (id <= 0)
		ERR(ck, t, "no %s in the kernel's BTF", t->str);
	return id;
}

static void check_sizeof(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	struct node *a = args[0];
	n->type = t_int(8, false);
	n->num = 0;
	if (a->kind != N_TYPE) {
		check_expr(ck, a);
		n->num = a->type.kind == T_INT ? a->type.size : a->type.kind == T_PTR ? 8 : a->type.kind == T_STR ? a->type.size : 0;
		if (!n->num && a->type.kind != T_NONE)
			ERR(ck, a, "sizeof() takes a type, an integer, a pointer or a string, not %s", a_type(&a->type));
	} else if (strchr(a->str, '*') || strcmp(a->str, "ptr") == 0) {
		n->num = 8;
	} else if (strncmp(a->str, "struct ", 7) == 0) {
		named_struct(ck, a);
	} else {
		n->num = scalar_type_bytes(a->str);
	}
}

static char *gen_sizeof(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)g;
	(void)nargs;
	if (!n->num)
		return xasprintf("((__u64)bpf_core_type_size(%s))", args[0]->str);
	return xasprintf("%lldULL", (long long)n->num);
}

static void check_offsetof(struct check *ck, struct node *n, struct node **args, int nargs)
{
	n->type = t_int(8, false);
	if (nargs != 2 || args[0]->kind != N_TYPE || args[1]->kind != N_TYPE) {
		ERR(ck, n, "offsetof() takes a struct and a member: offsetof(struct task_struct, pid)");
		return;
	}
	int32_t id = named_struct(ck, args[0]);
	struct ut_member m;
	if (id > 0 && ut_kernel_member(ck->c->k, id, args[1]->str, &m) < 0)
		ERR(ck, args[1], "no member '%s' in %s", args[1]->str, args[0]->str);
	else if (id > 0 && m.bitfield_size)
		ERR(ck, args[1], "'%s' is a bitfield: it has no byte offset", args[1]->str);
}

static char *gen_offsetof(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)g;
	(void)n;
	(void)nargs;
	return xasprintf("((__u64)bpf_core_field_offset(%s, %s))", args[0]->str, args[1]->str);
}

/* reg("ip"): a register where the probe fired (bpftrace's), from the
 * probe's context: kprobes, uprobes, usdt and perf events.  x86-64's
 * names, as struct pt_regs spells them. */
static const char *const x86_64_registers[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di",
	"orig_ax", "ip", "cs", "flags", "sp", "ss", NULL,
};

static void check_reg(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	n->type = t_int(8, false);
	const char *name = const_string(ck->c, args[0]);
	unsigned i = 0;
	while (name && x86_64_registers[i] && strcmp(x86_64_registers[i], name) != 0)
		i++;
#if !defined(__x86_64__)
	name = NULL;   /* other architectures' registers are not named here yet */
#endif
	if (!name || !x86_64_registers[i])
		ERR(ck, args[0], "reg() takes an x86-64 register's name as struct pt_regs spells it: \"ip\", \"sp\", "
		    "\"ax\", \"di\", \"r8\" ...");
	else if (!ck->alt->def->regs_context)
		ERR(ck, n, "reg() reads the registers of kprobes, uprobes, usdt and perf-event probes, not of %s",
		    ck->alt->def->name);
}

static char *gen_reg(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	return xasprintf("((__u64)((struct pt_regs *)ctx)->%s)", const_string(g->c, args[0]));
}

/* kaddr("avenrun"): the kernel symbol's address (bpftrace's), which libbpf
 * finds in /proc/kallsyms when it loads the program (an extern __ksym):
 * right after a reboot too, for a compiled script. */
static void check_kaddr(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	n->type = t_int(8, false);
	const char *name = const_string(ck->c, args[0]);
	if (!name) {
		ERR(ck, args[0], "kaddr() takes a kernel symbol's name as a string: kaddr(\"avenrun\")");
		return;
	}
	bool identifier = (name[0] == '_' || isalpha((unsigned char)name[0])) && strlen(name) < 128;
	for (const char *p = name; identifier && *p; p++)
		identifier = *p == '_' || isalnum((unsigned char)*p);
	if (!identifier)
		ERR(ck, args[0], "kaddr() takes a C identifier, not \"%s\"", name);
	else if (!ut_kernel_has_symbol(name))
		ERR(ck, args[0], "no kernel symbol '%s' in /proc/kallsyms (variables are there only on kernels built with "
		    "CONFIG_KALLSYMS_ALL)", name);
}

static char *gen_kaddr(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	const char *name = const_string(g->c, args[0]);
	sb_printf(&g->alt->prelude, "extern const void %s __ksym;\n", name);
	return xasprintf("((__u64)&%s)", name);
}

/* strftime("%H:%M:%S", ns): ns (a time of nsecs' clock) shown as the
 * wall-clock time then, by the format (with %f for microseconds). */
static void check_strftime(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[1]);
	n->type = t_int(8, false);
	n->type.show = UT_SHOW_TIME;
	n->type.time_format = intern(ck->c, "%H:%M:%S");
	const char *fmt = const_string(ck->c, args[0]);
	if (!fmt)
		ERR(ck, args[0], "strftime()'s format is a string or a string constant: strftime(\"%%H:%%M:%%S\", nsecs)");
	else if (strlen(fmt) > 200)
		ERR(ck, args[0], "strftime()'s format is at most 200 characters");
	else
		n->type.time_format = intern(ck->c, fmt);
	if (!is_int(&args[1]->type))
		ERR(ck, args[1], "strftime() takes a time in nanoseconds (nsecs), not %s", a_type(&args[1]->type));
}

static char *gen_strftime(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	return gen_expr(g, args[1]);
}

/* diskdev("vda"): the disk's device number, which the runtime looks up when
 * the script is loaded (on the machine that runs it) and sets in the
 * read-only variable ut_disk_<index>; its index in num.  "" is 0: no
 * disk (num -1). */
static void check_diskdev(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	struct compiler *c = ck->c;
	struct node *arg = args[0];
	const char *name = const_string(c, arg);
	n->type = t_int(4, false);
	n->type.show = UT_SHOW_DISK;
	n->num = -1;
	if (!name) {
		ERR(ck, arg, "diskdev() takes a disk name as a string or a string constant: diskdev(\"vda\")");
		return;
	}
	if (!name[0])
		return;
	struct ut_program *p = c->prog;
	unsigned i = 0;
	while (i < p->ndisks && strcmp(p->disks[i].name, name) != 0)
		i++;
	if (i == p->ndisks) {
		p->disks = xrealloc_array(p->disks, p->ndisks + 1, sizeof(*p->disks));
		p->disks[p->ndisks++] = (struct ut_disk_ref){.name = xstrdup(name), .loc = arg->loc};
	}
	n->num = i;
}

static char *gen_diskdev(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)g;
	(void)args;
	(void)nargs;
	return n->num < 0 ? xstrdup("0U") : xasprintf("((__u32)ut_disk_%u)", (unsigned)n->num);
}

/* ---- text ---- */

/* fmt(): a record's value only (check.c, check_value); the text is made in
 * user space.  Anywhere else it is an error its users report. */
static void check_fmt(struct check *ck, struct node *n, struct node **args, int nargs)
{
	for (int i = 1; i < nargs; i++)
		check_expr(ck, args[i]);
	check_format(ck, args[0], args + 1, nargs - 1);
	n->type = (struct type){.kind = T_SHOW};
}

static void check_str(struct check *ck, struct node *n, struct node **args, int nargs)
{
	check_expr(ck, args[0]);
	if (args[0]->kind == N_LOCAL && args[0]->ref == REF_CONST && args[0]->resolved->kind == N_INT) {
		/* str($1): the parameter as given, "" when it was not */
		long i = args[0]->str[1] == '#' ? 0 : strtol(args[0]->str + 1, NULL, 10);
		const struct ut_compile_opts *o = ck->c->opts;
		struct node *text = node_new(N_STR, args[0]->loc);
		text->str = xstrdup(i >= 1 && (unsigned long)i <= o->npositional ? o->positional[i - 1] : "");
		node_free(args[0]->resolved);
		args[0]->resolved = text;
		check_expr(ck, text);
		args[0]->type = text->type;
	}
	int size = args[0]->type.kind == T_STR ? args[0]->type.size : 64;   /* a string stays whole */
	if (nargs > 1) {
		if (args[1]->kind != N_INT || args[1]->num < 1 || args[1]->num > 255)
			ERR(ck, args[1], "str()'s length must be a number from 1 to 255");
		else
			size = (int)args[1]->num;
	}
	if (args[0]->type.kind != T_PTR && args[0]->type.kind != T_STR && !is_int(&args[0]->type))
		ERR(ck, args[0], "str() needs a pointer, not %s", a_type(&args[0]->type));
	n->type = t_str(size);
}

static char *gen_str(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *p = gen_expr(g, args[0]);
	if (args[0]->type.kind == T_STR && args[0]->type.size <= n->type.size)
		return p;
	if (args[0]->type.kind == T_STR) {   /* its first bytes */
		char *t = new_tmp(g);
		emit(g, "char %s[%d] = {};", t, n->type.size);
		emit(g, "__builtin_memcpy(%s, %s, %d);", t, p, n->type.size - 1);
		free(p);
		return t;
	}
	/* an integer in a uprobe or usdt probe is a user address there */
	bool user = strcmp(n->str, "ustr") == 0 || gen_user_address(g, &args[0]->type);
	char *t = new_tmp(g);
	emit(g, "char %s[%d] = {};", t, n->type.size);
	emit(g, "bpf_probe_read_%s_str(%s, sizeof(%s), (const void *)(%s));", user ? "user" : "kernel", t, t, p);
	free(p);
	return t;
}

/* path(file or path): the full path, built in BPF (ut.h's ut_path) into a
 * per-CPU buffer of its own (its slot in num), so it takes no stack. */
#define PATH_SLOTS_MAX 8

/* "file" or "path" for a pointer to one of them, else NULL. */
static const char *path_pointee(struct compiler *c, const struct type *t, struct ut_ktype *kt)
{
	if (t->kind == T_PTR && !t->user && t->btf > 0 && ut_kernel_type(c->k, t->btf, kt) == 0 &&
	    kt->kind == UT_KT_STRUCT && (strcmp(kt->name, "file") == 0 || strcmp(kt->name, "path") == 0))
		return kt->name;
	return NULL;
}

static void check_path(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	const struct type *t = &args[0]->type;
	n->type = t_str(255);
	struct ut_ktype kt;
	if (!path_pointee(ck->c, t, &kt)) {
		char buf[160] = "";
		if (t->kind == T_PTR && t->btf > 0 && ut_kernel_type_c(ck->c->k, t->btf, buf, sizeof(buf))[0])
			strncat(buf, " *", sizeof(buf) - strlen(buf) - 1);
		if (t->kind != T_NONE)
			ERR(ck, args[0], "path() takes a struct file * or a struct path *, not %s; cast a pointer first, e.g. path((struct file *)p)",
			    t->kind == T_PTR && t->user ? "a user-space pointer" : buf[0] ? buf : a_type(t));
		return;
	}
	if (ck->alt->path_calls == PATH_SLOTS_MAX) {
		ERR(ck, n, "at most %d path() calls in one probe; keep a path in a map (@path[tid] = path(f)) and read it back",
		    PATH_SLOTS_MAX);
		return;
	}
	n->num = ck->alt->path_calls++;
}

static char *gen_path(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *p = gen_expr(g, args[0]);
	struct ut_ktype kt;
	const char *pointee = path_pointee(g->c, &args[0]->type, &kt);
	char *tmp = new_tmp(g);
	if (strcmp(pointee, "file") == 0)
		emit(g, "struct ut_path_buf *%s = ut_path(%u, (void *)&((struct file *)(%s))->f_path);", tmp,
		     (unsigned)n->num, p);
	else
		emit(g, "struct ut_path_buf *%s = ut_path(%u, (void *)(%s));", tmp, (unsigned)n->num, p);
	free(p);
	char *r = xasprintf("(%s->s)", tmp);
	free(tmp);
	return r;
}

/* ---- strings ---- */

/* The string argument args[i] of n, checked; false (reported) when it is
 * not one. */
static bool string_arg(struct check *ck, struct node *n, struct node *arg)
{
	check_expr(ck, arg);
	if (arg->type.kind == T_STR || arg->type.kind == T_NONE)
		return true;
	ERR(ck, arg, "%s() compares strings, not %s; str(p) reads one", n->str, a_type(&arg->type));
	return false;
}

/* strncmp(a, b, n): 0 when the strings have the same first n bytes (up
 * to their end), else 1, as bpftrace's. */
static void check_strncmp(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	string_arg(ck, n, args[0]);
	string_arg(ck, n, args[1]);
	n->type = t_int(8, false);
	int64_t len;
	if (!const_int(ck->c, args[2], &len, 0) || len < 0)
		ERR(ck, args[2], "strncmp()'s length is a constant integer of at least 0");
	else
		n->num = len;
}

static char *gen_strncmp(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	char *a = gen_expr(g, args[0]), *b = gen_expr(g, args[1]);
	int64_t len = n->num;
	len = len < args[0]->type.size ? len : args[0]->type.size;
	len = len < args[1]->type.size ? len : args[1]->type.size;
	char *r = xasprintf("(!ut_streq(%s, %s, %d))", a, b, (int)len);
	free(a);
	free(b);
	return r;
}

/* strcontains(haystack, needle): 1 when needle is in haystack.  The
 * verifier walks the sizes multiplied. */
#define STRCONTAINS_MAX_STEPS 16384

static void check_strcontains(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	n->type = t_int(8, false);
	if (string_arg(ck, n, args[0]) && string_arg(ck, n, args[1]) &&
	    args[0]->type.size * args[1]->type.size > STRCONTAINS_MAX_STEPS)
		ERR(ck, n, "strcontains() of a %d-byte string in a %d-byte one takes too many steps for the BPF verifier "
		    "(at most %d, the sizes multiplied): read shorter strings, e.g. str(p, 64)", args[1]->type.size,
		    args[0]->type.size, STRCONTAINS_MAX_STEPS);
}

static char *gen_strcontains(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	char *h = gen_expr(g, args[0]), *needle = gen_expr(g, args[1]);
	char *r = xasprintf("ut_strcontains(%s, %d, %s, %d)", h, args[0]->type.size, needle, args[1]->type.size);
	free(h);
	free(needle);
	return r;
}

/* ---- stacks and symbols ---- */

/* kstack(N), ustack(N): the stack's first N frames (1 to 127); bpftrace's
 * kstack(bpftrace[, N]) is the same. */
static void check_stack(struct check *ck, struct node *n, struct node **args, int nargs)
{
	n->type = t_int(8, false);
	n->type.show = n->str[0] == 'k' ? UT_SHOW_KSTACK : UT_SHOW_USTACK;
	ck->c->uses_stacks = true;
	n->num = STACK_FRAMES_MAX;
	struct node *limit = args[nargs - 1];
	if (args[0]->kind == N_IDENT && strcmp(args[0]->str, "bpftrace") == 0) {
		if (nargs == 1)
			return;
	} else if (nargs == 2) {
		ERR(ck, args[0], "%s()'s stack mode is bpftrace (perf and raw are not supported): %s(bpftrace, 8)", n->str,
		    n->str);
		return;
	}
	int64_t frames;
	if (!const_int(ck->c, limit, &frames, 0) || frames < 1 || frames > STACK_FRAMES_MAX)
		ERR(ck, limit, "%s() takes its number of frames, a constant from 1 to %d: %s(8)", n->str, STACK_FRAMES_MAX,
		    n->str);
	else
		n->num = frames;
}

static char *gen_stack(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)g;
	(void)args;
	(void)nargs;
	return xasprintf("ut_stack(ctx, %s, %d)", n->str[0] == 'k' ? "0" : "BPF_F_USER_STACK", (int)n->num);
}

/* ksym(addr): the kernel function holding an address (an integer or a
 * pointer). */
static void check_ksym(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	if (args[0]->type.kind != T_PTR && !is_int(&args[0]->type))
		ERR(ck, args[0], "%s() takes an address, not %s", n->str, a_type(&args[0]->type));
	n->type = t_int(8, false);
	n->type.show = calls[n->sym].show;
}

/* usym(addr): a user address of the current process, kept with it as a
 * one-frame stack (gen.c's ut_usym) so user space can name it from the
 * process's mappings. */
static void check_usym(struct check *ck, struct node *n, struct node **args, int nargs)
{
	check_ksym(ck, n, args, nargs);
	ck->c->uses_stacks = true;
}

static char *gen_usym(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	char *a = gen_expr(g, args[0]);
	char *r = xasprintf("ut_usym((__u64)(%s))", a);
	free(a);
	return r;
}

/* uptr(p), kptr(p): p as a pointer to user or kernel memory (bpftrace's),
 * which str(), p[i] and fields then read there. */
static void check_pointer_space(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	check_expr(ck, args[0]);
	if (args[0]->type.kind != T_PTR && !is_int(&args[0]->type)) {
		ERR(ck, args[0], "%s() takes a pointer or an address, not %s", n->str, a_type(&args[0]->type));
		return;
	}
	n->type = args[0]->type.kind == T_PTR ? args[0]->type : t_ptr(0);
	n->type.user = n->str[0] == 'u';
	n->type.direct = false;
}

static char *gen_pointer_space(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	char *p = gen_expr(g, args[0]);
	char *r = xasprintf("((void *)(%s))", p);
	free(p);
	return r;
}

/* ---- maps read whole by the reader ---- */

/* percentile(@m[k], P), percentile(@m[k], P, D): the value at P percent
 * (P/D) of the histogram @m[k]'s values (hist(), lhist()), from its
 * buckets as the summary's percentiles (compiler/aggregations.c); the
 * reader computes it, from the map where either side keeps it.  num: the
 * percentile in parts per million. */
static void check_percentile(struct check *ck, struct node *n, struct node **args, int nargs)
{
	n->type = t_int(8, true);
	struct node *ref = args[0];
	struct compiler *c = ck->c;
	unsigned m = 0;
	while (ref->kind == N_MAP_REF && m < c->nmaps && strcmp(c->maps[m].name, ref->str) != 0)
		m++;
	if (ref->kind != N_MAP_REF) {
		ERR(ck, ref, "percentile() takes a histogram's entry and a percent: percentile(@latency_us[$op], 99)");
		return;
	}
	if (m == c->nmaps || c->maps[m].kind != MAP_AGG || !ut_aggs[c->maps[m].agg].bucket) {
		ERR(ck, ref, "percentile() of %s, which no probe before it assigns a hist() or lhist()", ref->str);
		return;
	}
	if (!map_get(ck, ref))
		return;
	check_map_key(ck, ref->sym, ref);
	int64_t part, whole = 100;
	if (!const_int(c, args[1], &part, 0) || (nargs == 3 && !const_int(c, args[2], &whole, 0)) || whole <= 0 ||
	    part < 0 || part > whole || whole > UT_PERCENTILE_WHOLE) {
		ERR(ck, args[1], "percentile()'s percent is a constant from 0 to 100, or a part of a whole: "
		    "percentile(@m[k], 99), percentile(@m[k], 999, 1000) for p99.9");
		return;
	}
	n->num = (part * UT_PERCENTILE_WHOLE + whole / 2) / whole;
}

/* ---- probe arguments ---- */

static void check_exists(struct check *ck, struct node *n, struct node **args, int nargs)
{
	(void)nargs;
	if (check_enum_exists(ck, n, args[0]))
		return;
	n->type = t_int(1, false);
	check_exists_arg(ck, args[0]);
}

static char *gen_exists(struct gen *g, struct node *n, struct node **args, int nargs)
{
	(void)n;
	(void)nargs;
	const struct node *f = args[0];
	if (f->ref == REF_ARG)
		return xstrdup(g->alt->args[f->sym].exists_cexpr ? g->alt->args[f->sym].exists_cexpr : "1");
	return xstrdup(f->ref == REF_COMPUTED ? "1" : "0");
}

extern const struct statement_def statement_printf, statement_cat, statement_exit, statement_snapshot,
	statement_delete, statement_clear, statement_zero, statement_print, statement_time, statement_join,
	statement_finding;

const struct call_def calls[] = {
	{"hex", 1, 1, check_show, gen_shown, UT_SHOW_HEX, .shows_argument = true},
	{"errname", 1, 1, check_errname, gen_shown, UT_SHOW_ERRNO, .shows_argument = true},
	{"fmt", 1, CALL_MAX_ARGS, check_fmt, .format = true},
	{"str", 1, 2, check_str, .gen = gen_str},
	{"ustr", 1, 2, check_str, .gen = gen_str},
	{"path", 1, 1, check_path, gen_path, .map_memory = true},
	{"exists", 1, 1, check_exists, gen_exists, .cheap = true},
	{"diskname", 1, 1, check_show, gen_shown, UT_SHOW_DISK, .shows_argument = true},
	{"diskdev", 1, 1, check_diskdev, gen_diskdev, .cheap = true},
	{"strftime", 2, 2, check_strftime, .gen = gen_strftime},
	{"bswap", 1, 1, check_bswap, .gen = gen_bswap},
	{"ntop", 1, 2, check_ntop, .gen = gen_ntop},
	{"kaddr", 1, 1, check_kaddr, .gen = gen_kaddr},
	{"reg", 1, 1, check_reg, .gen = gen_reg},
	{"buf", 2, 2, check_buf, .gen = gen_buf},
	{"macaddr", 1, 1, check_macaddr, .gen = gen_macaddr},
	{"sizeof", 1, 1, check_sizeof, gen_sizeof, .unevaluated = true},
	{"offsetof", 2, 2, check_offsetof, .gen = gen_offsetof},
	{"strncmp", 3, 3, check_strncmp, .gen = gen_strncmp},
	{"strcontains", 2, 2, check_strcontains, .gen = gen_strcontains},
	{"kstack", 1, 2, check_stack, .gen = gen_stack},
	{"ustack", 1, 2, check_stack, .gen = gen_stack},
	{"ksym", 1, 1, check_ksym, gen_shown, UT_SHOW_KSYM, .shows_argument = true},
	{"usym", 1, 1, check_usym, gen_usym, .show = UT_SHOW_USYM},
	{"uptr", 1, 1, check_pointer_space, .gen = gen_pointer_space},
	{"kptr", 1, 1, check_pointer_space, .gen = gen_pointer_space},
	{"percentile", 2, 3, check_percentile, .reader_op = UT_UX_PERCENTILE},
	/* statements (statements.c) */
	{"printf", 1, CALL_MAX_ARGS, .statement = &statement_printf},
	{"cat", 1, CALL_MAX_ARGS, .statement = &statement_cat},
	{"exit", 0, 0, .statement = &statement_exit},
	{"snapshot", 0, 0, .statement = &statement_snapshot},
	{"delete", 1, 1, .statement = &statement_delete},
	{"clear", 1, 1, .statement = &statement_clear},
	{"zero", 1, 1, .statement = &statement_zero},
	{"print", 1, 3, .statement = &statement_print},
	{"time", 0, 1, .statement = &statement_time},
	{"join", 1, 2, .statement = &statement_join},
	/* finding "TAG"[key] SEVERITY "message", ...: a statement of its own (parser.y) */
	{"finding", 0, CALL_MAX_ARGS, .statement = &statement_finding},
	{NULL},
};

const char *const_string(struct compiler *c, const struct node *n)
{
	const struct node *k = n->kind == N_IDENT ? find_decl(c->consts, c->nconsts, n->str) : NULL;
	return n->kind == N_STR ? n->str : k && k->a->kind == N_STR ? k->a->str : NULL;
}

const struct call_def *call_named(const char *name)
{
	for (const struct call_def *d = calls; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

struct node *through_functions(struct node *n)
{
	while (n->kind == N_CALL && n->ref == REF_MACRO)
		n = n->resolved;
	return n;
}

const struct call_def *call_of(struct node *n)
{
	n = through_functions(n);
	return n->kind == N_CALL && n->ref == REF_FUNCTION ? &calls[n->sym] : NULL;
}

enum value_form value_form(struct node *n)
{
	n = through_functions(n);
	if (n->kind == N_STR)
		return VALUE_TEXT;
	return call_of(n) && call_of(n)->format ? VALUE_FORMAT : VALUE_FIELD;
}
