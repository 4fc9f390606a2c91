/*
 * nop_firehose: as many io_uring nops as one thread can push, in batches of 32
 * (one io_uring_enter per batch), for --seconds S or --count N requests.
 * Each nop fires io_uring_submit_req and io_uring_complete once (6.18).
 *
 *   nop_firehose [--seconds S | --count N] [--cpu N] [--batch B] [--rate R] [--sqpoll] [--json]
 *
 * --rate R: at most R nops a second (a steady load, whatever the machine
 * can do); batches wait for their time.
 * --sqpoll: the ring has an SQPOLL thread, which takes the submissions (and
 * spins between them, running empty task work).
 *
 * Each request's user_data is unique across processes: the pid in the top
 * bits, the request's number below.
 *
 * Output: {"workload":"nop_firehose","pid","tid","cpu","batch","submitted",
 * "completed","seconds","ops_per_sec","cpu_seconds","ok"} on stdout;
 * cpu_seconds is the thread's own CPU time meanwhile (what a request costs
 * it, whatever share of a busy CPU it got).  --count wins over --seconds;
 * the default is 3 seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what, int err)
{
	fprintf(stderr, "nop_firehose: %s: %s\n", what, strerror(err));
	exit(2);
}

static double clock_seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: nop_firehose [--seconds S | --count N] [--cpu N] [--batch B] [--rate R] [--sqpoll] [--json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = 3.0;
	long long count = 0; /* 0: run for `seconds` */
	int cpu = -1, batch = 32;
	double rate = 0; /* nops a second; 0: as many as it can */
	unsigned setup_flags = 0;
	static const struct option long_options[] = {
		{"seconds", required_argument, 0, 's'},
		{"count", required_argument, 0, 'n'},
		{"cpu", required_argument, 0, 'c'},
		{"batch", required_argument, 0, 'b'},
		{"rate", required_argument, 0, 'r'},
		{"sqpoll", no_argument, 0, 'q'},
		{"json", no_argument, 0, 'j'},
		{0, 0, 0, 0},
	};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || seconds <= 0)
				usage();
			break;
		case 'n':
			count = strtoll(optarg, &end, 10);
			if (*end || count <= 0)
				usage();
			break;
		case 'c':
			cpu = (int)strtol(optarg, &end, 10);
			if (*end || cpu < 0)
				usage();
			break;
		case 'b':
			batch = (int)strtol(optarg, &end, 10);
			if (*end || batch < 1 || batch > 256)
				usage();
			break;
		case 'r':
			rate = strtod(optarg, &end);
			if (*end || rate <= 0)
				usage();
			break;
		case 'q':
			setup_flags |= IORING_SETUP_SQPOLL;
			break;
		case 'j': break; /* JSON is the only output format */
		default: usage();
		}
	}
	if (optind != argc)
		usage();

	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof set, &set) < 0)
			die("sched_setaffinity", errno);
	}

	struct io_uring ring;
	const uint64_t user_data_base = (uint64_t)getpid() << 40;
	int ret = io_uring_queue_init((unsigned)batch, &ring, setup_flags);
	if (ret < 0)
		die("io_uring_queue_init", -ret);

	long long submitted = 0, completed = 0;
	double start = clock_seconds(CLOCK_MONOTONIC), elapsed = 0;
	double cpu_start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		int n = batch;
		if (count && count - submitted < n)
			n = (int)(count - submitted);
		for (int i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			/* an SQPOLL thread may not have taken the last batch yet */
			if (!sqe && (setup_flags & IORING_SETUP_SQPOLL) && io_uring_sqring_wait(&ring) >= 0)
				sqe = io_uring_get_sqe(&ring);
			if (!sqe)
				die("io_uring_get_sqe", EBUSY);
			io_uring_prep_nop(sqe);
			sqe->user_data = user_data_base + (uint64_t)(submitted + i);
		}
		/* Nops complete inline, so the wait rarely sleeps. */
		ret = io_uring_submit_and_wait(&ring, (unsigned)n);
		if (ret < 0)
			die("io_uring_submit_and_wait", -ret);
		submitted += ret;
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res != 0)
				die("nop failed", -cqe->res);
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		completed += seen;
		if (rate) {
			double due = start + (double)submitted / rate, now = clock_seconds(CLOCK_MONOTONIC);
			if (due > now) {
				double wait = due - now;
				struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
				nanosleep(&ts, NULL);
			}
		}
		if (count ? submitted >= count : ((submitted / batch) % 64 == 0 &&
						  clock_seconds(CLOCK_MONOTONIC) - start >= seconds))
			break;
	}
	/* Reap whatever a short wait may have left behind. */
	while (completed < submitted) {
		struct io_uring_cqe *cqe;
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret < 0)
			die("io_uring_wait_cqe", -ret);
		io_uring_cqe_seen(&ring, cqe);
		completed++;
	}
	elapsed = clock_seconds(CLOCK_MONOTONIC) - start;
	double cpu_seconds = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
	io_uring_queue_exit(&ring);

	bool ok = completed == submitted;
	printf("{\"workload\":\"nop_firehose\",\"pid\":%d,\"tid\":%ld,\"cpu\":%d,\"batch\":%d,"
	       "\"submitted\":%lld,\"completed\":%lld,\"seconds\":%.6f,\"ops_per_sec\":%.0f,"
	       "\"cpu_seconds\":%.6f,\"ok\":%s}\n",
	       (int)getpid(), (long)syscall(SYS_gettid), cpu, batch, submitted, completed, elapsed,
	       elapsed > 0 ? (double)completed / elapsed : 0.0, cpu_seconds, ok ? "true" : "false");
	return ok ? 0 : 1;
}
