/* Naming stack frames (runtime/stacks.c) and reading ELF functions
 * (kernel/elfsyms.c), on this test's own process and the running kernel;
 * no BPF (tests/e2e/test_stacks.sh traces a workload). */
#include "kernel/elfsyms.h"
#include "runtime/stacks.h"
#include "tests/unit/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((noinline)) int ut_test_stack_target(int x);
__attribute__((noinline)) int ut_test_stack_target(int x)
{
	return x * 3 + 1;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_elf(void)
{
	struct ut_elf_syms s;
	char err[128] = "";
	CHECK("elf: reads this program", ut_elf_syms_read("/proc/self/exe", &s, err, sizeof(err)) == 0);
	const struct ut_elf_sym *f = ut_elf_sym_named(&s, "ut_test_stack_target");
	CHECK("elf: finds a function by name", f && f->size > 0);
	CHECK("elf: no such function", !ut_elf_sym_named(&s, "ut_test_stack_targe") && !ut_elf_sym_named(&s, "no_such_thing"));
	CHECK("elf: the function at its address, and inside it",
	      f && ut_elf_sym_at(&s, f->addr) == f && ut_elf_sym_at(&s, f->addr + f->size - 1) == f);
	CHECK("elf: nothing below the first function", s.n && !ut_elf_sym_at(&s, s.v[0].addr - 1));
	CHECK("elf: loadable segments", s.nsegs >= 2);
	ut_elf_syms_free(&s);

	CHECK("elf: a text file is refused", ut_elf_syms_read("/etc/passwd", &s, err, sizeof(err)) < 0);
	CHECK_STR("elf: why", err, "not an ELF file");
	CHECK("elf: a directory is refused", ut_elf_syms_read("/tmp", &s, err, sizeof(err)) < 0);
	CHECK_STR("elf: why (directory)", err, "not a regular file");
	char fifo[64];
	snprintf(fifo, sizeof(fifo), "/tmp/ut-test-fifo.%d", (int)getpid());
	if (mkfifo(fifo, 0600) == 0) {
		/* opened without blocking, then refused */
		CHECK("elf: a FIFO is refused without waiting", ut_elf_syms_read(fifo, &s, err, sizeof(err)) < 0);
		unlink(fifo);
	}
	CHECK("elf: a missing file", ut_elf_syms_read("/no/such/file", &s, err, sizeof(err)) < 0);
	CHECK_STR("elf: why (missing)", err, "No such file or directory");
}

static void test_user_frames(void)
{
	char buf[512];
	uintptr_t fn = (uintptr_t)&ut_test_stack_target;
	ut_user_frame(getpid(), fn, buf, sizeof(buf));
	CHECK_STR("user frame: a function of this program", buf, "ut_test_stack_target+0x0");
	ut_user_frame(getpid(), fn + 3, buf, sizeof(buf));
	CHECK_STR("user frame: with its offset", buf, "ut_test_stack_target+0x3");
	ut_user_frame(getpid(), (uintptr_t)&getppid, buf, sizeof(buf));
	CHECK("user frame: a function of libc", strstr(buf, "getppid+0x0") != NULL);
	ut_user_frame(getpid(), 0x10, buf, sizeof(buf));
	CHECK_STR("user frame: unmapped, the address", buf, "0x10");
	/* a process that does not exist (pid_max is at most 2^22) */
	ut_user_frame(0x7ffffff0, fn, buf, sizeof(buf));
	char want[32];
	snprintf(want, sizeof(want), "0x%lx", (unsigned long)fn);
	CHECK_STR("user frame: no such process, the address", buf, want);
	(void)ut_test_stack_target(1);
}

static void test_kernel_frames(void)
{
	/* a function's address from kallsyms (zero without CAP_SYSLOG) */
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr = 0;
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		char type, name[256];
		unsigned long long a;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && strcmp(name, "do_syscall_64") == 0) {
			addr = a;
			break;
		}
	}
	if (f)
		fclose(f);
	char buf[512];
	if (!addr) {
		printf("SKIP kernel frames: no address of do_syscall_64 in /proc/kallsyms (needs root)\n");
		ut_kernel_frame(0xffffffff81000000ULL, buf, sizeof(buf));
		CHECK_STR("kernel frame: without symbols, the address", buf, "0xffffffff81000000");
		return;
	}
	ut_kernel_frame(addr, buf, sizeof(buf));
	CHECK_STR("kernel frame: a function", buf, "do_syscall_64+0x0");
	ut_kernel_frame(addr + 0x1f, buf, sizeof(buf));
	CHECK_STR("kernel frame: with its offset", buf, "do_syscall_64+0x1f");
	ut_kernel_frame(0x1000, buf, sizeof(buf));
	CHECK_STR("kernel frame: below every symbol, the address", buf, "0x1000");
	CHECK("stack 0 is no stack", ut_stack_text(0)[0] == 0);
	CHECK("stacks unknown before a session are said to be lost", starts(ut_stack_text(42), "[stack not kept"));
}

int main(void)
{
	test_elf();
	test_user_frames();
	test_kernel_frames();
	ut_stacks_close();
	CHECK_DONE();
}
