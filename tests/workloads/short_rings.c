/*
 * short_rings: many rings of one request each, as liburing's own tests
 * make them: set up a ring, submit one nop and wait for it, reap its
 * completion in user space (no system call: the kernel sees the CQ head
 * move only later, if at all) or leave it unreaped, close the ring.
 * --requests N: N nops one after another on each ring (the kernel sees
 * each reaped at the next one's system call); --exit-open: the rings are
 * never closed (the process exits with them, as a killed one does: no
 * close() is seen).
 *
 *   short_rings [--rings N] [--requests N] [--unreaped] [--exit-open]
 *
 * Output: {"workload":"short_rings","pid","rings","reaped","ok"}
 */
#include <getopt.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long rings = 1000, requests = 1;
	bool reap = true, close_rings = true;
	static const struct option opts[] = {
		{"rings", required_argument, 0, 'r'},
		{"requests", required_argument, 0, 'n'},
		{"unreaped", no_argument, 0, 'u'},
		{"exit-open", no_argument, 0, 'x'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'r') {
			rings = strtol(optarg, NULL, 10);
		} else if (c == 'n') {
			requests = strtol(optarg, NULL, 10);
		} else if (c == 'u') {
			reap = false;
		} else if (c == 'x') {
			close_rings = false;
		} else {
			fprintf(stderr, "usage: short_rings [--rings N] [--requests N] [--unreaped] [--exit-open]\n");
			return 2;
		}
	}
	bool ok = rings > 0 && requests > 0;
	for (long i = 0; i < rings && ok; i++) {
		struct io_uring ring;
		int ret = io_uring_queue_init(4, &ring, 0);
		if (ret < 0) {
			fprintf(stderr, "short_rings: io_uring_queue_init: %s\n", strerror(-ret));
			return 2;
		}
		for (long r = 0; r < requests && ok; r++) {
			io_uring_prep_nop(io_uring_get_sqe(&ring));
			struct io_uring_cqe *cqe;
			ok = io_uring_submit_and_wait(&ring, 1) == 1 && io_uring_peek_cqe(&ring, &cqe) == 0;
			if (ok && reap)
				io_uring_cqe_seen(&ring, cqe);
		}
		if (close_rings)
			io_uring_queue_exit(&ring);
	}
	printf("{\"workload\":\"short_rings\",\"pid\":%d,\"rings\":%ld,\"reaped\":%s,\"ok\":%s}\n", (int)getpid(),
	       rings, reap ? "true" : "false", ok ? "true" : "false");
	return ok ? 0 : 1;
}
