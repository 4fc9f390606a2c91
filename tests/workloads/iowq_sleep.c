/*
 * iowq_sleep: one io_uring request whose io-wq worker sleeps in it, for a
 * time the program decides: the case thread states in the trace are for.
 *
 *   iowq_sleep [--wait-ms MS] [--dir DIR]
 *
 * The request opens a FIFO for reading (IORING_OP_OPENAT with IOSQE_ASYNC,
 * so an io-wq worker runs it, blocking: opening a FIFO waits for a writer,
 * in an interruptible sleep).  The program waits --wait-ms milliseconds
 * (default 50), then opens the FIFO for writing, which wakes the worker;
 * its open completes with the new fd.  The writer's open does not block: it
 * is retried until the reader is there (O_NONBLOCK fails with ENXIO until
 * then), so the worker was waiting when it is woken.  The FIFO is made in a
 * temporary directory under --dir (default /tmp), removed at exit.
 *
 * Output: {"workload":"iowq_sleep","pid","user_data","res","wait_ms","ok"}
 * (res: the request's result, the fd it opened).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define USER_DATA 0xf1f0

static void die(const char *what, int err)
{
	fprintf(stderr, "iowq_sleep: %s: %s\n", what, strerror(err));
	exit(2);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	long wait_ms = 50;
	const char *dir = "/tmp";
	static const struct option opts[] = {
		{"wait-ms", required_argument, 0, 'w'},
		{"dir", required_argument, 0, 'D'},
		{"json", no_argument, 0, 'j'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'w') {
			wait_ms = strtol(optarg, NULL, 10);
		} else if (c == 'D') {
			dir = optarg;
		} else if (c != 'j') {
			fprintf(stderr, "usage: iowq_sleep [--wait-ms MS] [--dir DIR]\n");
			return 2;
		}
	}
	if (wait_ms < 0 || wait_ms > 60000) {
		fprintf(stderr, "iowq_sleep: --wait-ms is 0..60000\n");
		return 2;
	}
	char temp_dir[4096], fifo[4200];
	snprintf(temp_dir, sizeof(temp_dir), "%s/iowq_sleep.XXXXXX", dir);
	if (!mkdtemp(temp_dir))
		die("mkdtemp", errno);
	snprintf(fifo, sizeof(fifo), "%s/fifo", temp_dir);
	if (mkfifo(fifo, 0600) < 0)
		die("mkfifo", errno);

	struct io_uring ring;
	int ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0)
		die("io_uring_queue_init", -ret);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, fifo, O_RDONLY, 0);
	sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = USER_DATA;
	if ((ret = io_uring_submit(&ring)) != 1)
		die("io_uring_submit", ret < 0 ? -ret : EIO);

	sleep_ms(wait_ms);
	int writer;
	while ((writer = open(fifo, O_WRONLY | O_NONBLOCK)) < 0) {
		if (errno != ENXIO)
			die("open fifo for writing", errno);
		sleep_ms(1);
	}
	struct io_uring_cqe *cqe;
	if ((ret = io_uring_wait_cqe(&ring, &cqe)) < 0)
		die("io_uring_wait_cqe", -ret);
	int res = cqe->res;
	int ok = cqe->user_data == USER_DATA && res >= 0;
	io_uring_cqe_seen(&ring, cqe);
	if (res >= 0)
		close(res);
	close(writer);
	io_uring_queue_exit(&ring);
	unlink(fifo);
	rmdir(temp_dir);
	printf("{\"workload\":\"iowq_sleep\",\"pid\":%d,\"user_data\":\"0x%x\",\"res\":%d,\"wait_ms\":%ld,\"ok\":%s}\n",
	       (int)getpid(), USER_DATA, res, wait_ms, ok ? "true" : "false");
	return ok ? 0 : 1;
}
