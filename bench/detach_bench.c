// bench/detach_bench.c: how long closing attached tracepoint programs takes,
// serially and from several threads, for classic (perf-event) tracepoints and
// for raw tracepoints (BPF links).  Not part of `make test`; needs root.
//
// Attaches a two-instruction BPF program to the 17 io_uring tracepoints and
// the 6 io_uring syscall tracepoints (what scripts/io_uring.ut attaches), the
// way libbpf does for SEC("tracepoint/..."): perf_event_open(PERF_TYPE_TRACEPOINT,
// pid -1, cpu 0) + PERF_EVENT_IOC_SET_BPF + PERF_EVENT_IOC_ENABLE ("tracepoint"),
// or + BPF_LINK_CREATE(BPF_PERF_EVENT) as libbpf does on newer kernels
// ("tracepoint_link": close the link fd, then the perf fd); or, for
// raw_tp, BPF_RAW_TRACEPOINT_OPEN (io_uring tracepoints only: syscall
// tracepoints have no raw tracepoint of their own).  Then closes all fds
// and times that, with 1 thread (serial) or N threads (round-robin, as
// runtime/loader.c does).
//
//   cc -O2 -pthread -o build/detach_bench bench/detach_bench.c
//   build/detach_bench [ROUNDS] [held]   prints one TSV line per measurement
//
// With "held", a plain perf event (no BPF) stays open on each of the 23
// tracepoints for the whole run, as when another tracer uses them: the
// tracepoint's perf registration then never drops to zero users on close.
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *tracepoints[] = {
	"io_uring/io_uring_create", "io_uring/io_uring_submit_req", "io_uring/io_uring_req_failed",
	"io_uring/io_uring_file_get", "io_uring/io_uring_defer", "io_uring/io_uring_poll_arm",
	"io_uring/io_uring_task_add", "io_uring/io_uring_queue_async_work", "io_uring/io_uring_link",
	"io_uring/io_uring_fail_link", "io_uring/io_uring_complete", "io_uring/io_uring_cqring_wait",
	"io_uring/io_uring_cqe_overflow", "io_uring/io_uring_register",
	"io_uring/io_uring_task_work_run", "io_uring/io_uring_local_work_run",
	"io_uring/io_uring_short_write",
	"syscalls/sys_enter_io_uring_setup", "syscalls/sys_exit_io_uring_setup",
	"syscalls/sys_enter_io_uring_enter", "syscalls/sys_exit_io_uring_enter",
	"syscalls/sys_enter_io_uring_register", "syscalls/sys_exit_io_uring_register",
};
#define NTP (sizeof(tracepoints) / sizeof(tracepoints[0]))
#define NIO 17 /* the io_uring ones, first */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int load_prog(enum bpf_prog_type type)
{
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (unsigned long)insns;
	a.insn_cnt = 2;
	a.license = (unsigned long)"GPL";
	int fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		perror("BPF_PROG_LOAD");
		exit(1);
	}
	return fd;
}

static int tp_id(const char *tp)
{
	char path[256];
	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", tp);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/id", tp);
		f = fopen(path, "r");
	}
	int id = -1;
	if (!f || fscanf(f, "%d", &id) != 1) {
		fprintf(stderr, "no id for %s\n", tp);
		exit(1);
	}
	fclose(f);
	return id;
}

static int attach_classic(int prog, const char *tp)
{
	struct perf_event_attr pa;
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = tp_id(tp);
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	int fd = syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		fprintf(stderr, "attach %s: %s\n", tp, strerror(errno));
		exit(1);
	}
	return fd;
}

/* As libbpf does on kernels with BPF perf links: BPF_LINK_CREATE on the perf
 * event; the link fd is returned and the perf fd kept in perf_fds[]. */
static int perf_fds[NTP];

static int attach_link(int prog, const char *tp, unsigned slot)
{
	struct perf_event_attr pa;
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_TRACEPOINT;
	pa.size = sizeof(pa);
	pa.config = tp_id(tp);
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	int pfd = syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = prog;
	a.link_create.target_fd = pfd;
	a.link_create.attach_type = BPF_PERF_EVENT;
	int fd = pfd < 0 ? -1 : sys_bpf(BPF_LINK_CREATE, &a);
	if (fd < 0) {
		fprintf(stderr, "perf link %s: %s\n", tp, strerror(errno));
		exit(1);
	}
	perf_fds[slot] = pfd;
	return fd;
}

static int attach_raw(int prog, const char *tp)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (unsigned long)(strchr(tp, '/') + 1);
	a.raw_tracepoint.prog_fd = prog;
	int fd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	if (fd < 0) {
		fprintf(stderr, "raw_tp %s: %s\n", tp, strerror(errno));
		exit(1);
	}
	return fd;
}

static int link_fds[NTP];

struct closer {
	pthread_t thread;
	int *fds;
	unsigned first, count, stride;
};

static void *close_fds(void *arg)
{
	struct closer *c = arg;
	for (unsigned i = c->first; i < c->count; i += c->stride) {
		close(c->fds[i]);
		if (c->fds == link_fds) /* the link, then its perf event (libbpf's order) */
			close(perf_fds[i]);
	}
	return NULL;
}

/* Close n fds from nthreads threads; returns ms. */
static double close_all(int *fds, unsigned n, unsigned nthreads)
{
	struct closer c[64];
	double t0 = now_ms();
	if (nthreads <= 1) {
		struct closer one = {.fds = fds, .first = 0, .count = n, .stride = 1};
		close_fds(&one);
		return now_ms() - t0;
	}
	for (unsigned t = 0; t < nthreads; t++) {
		c[t] = (struct closer){.fds = fds, .first = t, .count = n, .stride = nthreads};
		pthread_create(&c[t].thread, NULL, close_fds, &c[t]);
	}
	for (unsigned t = 0; t < nthreads; t++)
		pthread_join(c[t].thread, NULL);
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	bool held = argc > 2 && strcmp(argv[2], "held") == 0;
	static int holders[NTP];
	for (unsigned i = 0; held && i < NTP; i++) {
		struct perf_event_attr pa;
		memset(&pa, 0, sizeof(pa));
		pa.type = PERF_TYPE_TRACEPOINT;
		pa.size = sizeof(pa);
		pa.config = tp_id(tracepoints[i]);
		pa.sample_period = 1;
		holders[i] = syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (holders[i] < 0) {
			perror("perf_event_open (holder)");
			return 1;
		}
	}
	int tp_prog = load_prog(BPF_PROG_TYPE_TRACEPOINT);
	int raw_prog = load_prog(BPF_PROG_TYPE_RAW_TRACEPOINT);
	unsigned threads[] = {1, 4, 16};
	int fds[NTP];
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kind\tlinks\tthreads\tround\tattach_ms\tclose_ms\theld\n");
	for (int r = 1; r <= rounds; r++) {
		for (unsigned k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
			/* classic tracepoints: all 23, and one alone */
			for (unsigned n = 1; n <= NTP; n += NTP - 1) {
				if (n == 1 && threads[k] > 1)
					continue;
				double t0 = now_ms();
				for (unsigned i = 0; i < n; i++)
					fds[i] = attach_classic(tp_prog, tracepoints[NTP - 1 - i]);
				double att = now_ms() - t0;
				double cl = close_all(fds, n, threads[k]);
				printf("tracepoint\t%u\t%u\t%d\t%.1f\t%.1f\t%d\n", n, threads[k], r, att, cl, held);
				fflush(stdout);
			}
			/* the same through BPF perf links (libbpf's way) */
			double t1 = now_ms();
			for (unsigned i = 0; i < NTP; i++)
				link_fds[i] = attach_link(tp_prog, tracepoints[NTP - 1 - i], i);
			double att1 = now_ms() - t1;
			double cl1 = close_all(link_fds, NTP, threads[k]);
			printf("tracepoint_link\t%u\t%u\t%d\t%.1f\t%.1f\t%d\n", (unsigned)NTP, threads[k], r,
			       att1, cl1, held);
			fflush(stdout);
			/* raw tracepoints (BPF links): the 17 io_uring ones */
			double t0 = now_ms();
			for (unsigned i = 0; i < NIO; i++)
				fds[i] = attach_raw(raw_prog, tracepoints[i]);
			double att = now_ms() - t0;
			double cl = close_all(fds, NIO, threads[k]);
			printf("raw_tp\t%u\t%u\t%d\t%.1f\t%.1f\t%d\n", NIO, threads[k], r, att, cl, held);
			fflush(stdout);
		}
	}
	return 0;
}
