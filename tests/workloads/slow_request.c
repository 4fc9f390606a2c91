/*
 * slow_request: seconds of fast io_uring requests, then one slow one, then
 * fast ones again: the case a flight recorder with a latency trigger is for.
 *
 *   slow_request [--before S] [--slow-ms MS] [--after S] [--rate R]
 *
 * Fast requests are nops, one at a time, for --before seconds (default 2)
 * and --after seconds (default 0.5), at most R a second (--rate; default
 * as many as it can).  The slow one reads a pipe that gets
 * its byte --slow-ms milliseconds later (default 50); its user_data is
 * 0x5105.  All on one ring, created at the start.
 *
 * Output: {"workload":"slow_request","pid","fast","slow_user_data","slow_us","ok"}
 */
#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOW_USER_DATA 0x5105

static void die(const char *what, int err)
{
	fprintf(stderr, "slow_request: %s: %s\n", what, strerror(err));
	exit(2);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct io_uring_cqe *wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe(ring, &cqe);
	if (ret < 0)
		die("io_uring_wait_cqe", -ret);
	return cqe;
}

/* Nops one at a time for the given seconds, at most rate a second (0: no
 * bound); returns how many. */
static long fast_requests(struct io_uring *ring, double seconds, double rate)
{
	long n = 0;
	double start = now();
	for (double end = start + seconds; now() < end; n++) {
		double early = rate ? start + (double)n / rate - now() : 0;
		if (early > 0)
			usleep((useconds_t)(early * 1e6));
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = (uint64_t)n + 1;
		io_uring_submit(ring);
		io_uring_cqe_seen(ring, wait_one(ring));
	}
	return n;
}

static double seconds_arg(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (*end || v < 0) {
		fprintf(stderr, "slow_request: not a number of seconds: %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	double before = 2, after = 0.5, rate = 0;
	long slow_ms = 50;
	static const struct option opts[] = {
		{"before", required_argument, 0, 'b'},
		{"slow-ms", required_argument, 0, 's'},
		{"after", required_argument, 0, 'a'},
		{"rate", required_argument, 0, 'r'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'b': before = seconds_arg(optarg); break;
		case 'a': after = seconds_arg(optarg); break;
		case 's': slow_ms = (long)seconds_arg(optarg); break;
		case 'r': rate = seconds_arg(optarg); break;
		default:
			fprintf(stderr, "usage: slow_request [--before S] [--slow-ms MS] [--after S] [--rate R]\n");
			return 2;
		}
	}
	struct io_uring ring;
	int ret = io_uring_queue_init(8, &ring, 0);
	if (ret < 0)
		die("io_uring_queue_init", -ret);
	int fds[2];
	if (pipe(fds) != 0)
		die("pipe", errno);

	long fast = fast_requests(&ring, before, rate);
	char byte;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fds[0], &byte, 1, 0);
	sqe->user_data = SLOW_USER_DATA;
	double submitted = now();
	io_uring_submit(&ring);
	usleep((useconds_t)slow_ms * 1000);
	if (write(fds[1], "x", 1) != 1)
		die("write", errno);
	struct io_uring_cqe *cqe = wait_one(&ring);
	double slow_s = now() - submitted;
	bool ok = cqe->user_data == SLOW_USER_DATA && cqe->res == 1;
	io_uring_cqe_seen(&ring, cqe);
	fast += fast_requests(&ring, after, rate);

	io_uring_queue_exit(&ring);
	printf("{\"workload\":\"slow_request\",\"pid\":%d,\"fast\":%ld,\"slow_user_data\":%d,\"slow_us\":%.0f,"
	       "\"ok\":%s}\n", (int)getpid(), fast, SLOW_USER_DATA, slow_s * 1e6, ok ? "true" : "false");
	return ok ? 0 : 1;
}
