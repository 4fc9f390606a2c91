/*
 * fileio: a known file IO pattern for the IO-stack tests.
 *
 *   fileio --file PATH [--engine uring|sync] [--reads N] [--writes N]
 *          [--wait-fifo FIFO] [--no-direct] [--bad-fd-read]
 *
 * Pattern mode (default), in this order, one request at a time (queue depth 1):
 *   0. prepare: if PATH is shorter than the read area (reads * 8 KiB), fill it
 *      with pwrite + fsync (reported as "prepare"; not part of the pattern);
 *   1. open PATH O_RDONLY|O_DIRECT; reads of 4 KiB at offsets i * 8 KiB,
 *      i = 0..reads-1 (default 64); close;
 *   2. open PATH O_WRONLY; buffered writes of 4 KiB at offsets
 *      read_area + j * 4 KiB, j = 0..writes-1 (default 16); fsync; close.
 *
 * Wait mode (--wait-fifo FIFO): open PATH O_RDONLY|O_DIRECT, announce the fd on
 * stderr, block until a byte can be read from FIFO (created if missing), then
 * do the reads of step 1 on the already-open fd and close it.  It stands for
 * "a file opened before the trace started".
 *
 * --bad-fd-read: at the end, one more read (pread, or an io_uring read) on
 * the fd just closed, which must fail with EBADF; it is in "ops" with its
 * res (-9) and does not make the run fail.
 *
 * With --engine uring (default) reads, writes and fsync are io_uring requests
 * (IORING_OP_READ/WRITE/FSYNC, user_data = index of the op in "ops"); with
 * --engine sync they are pread/pwrite/fsync.  Opens and closes are always
 * syscalls.  If the filesystem refuses O_DIRECT (EINVAL), the reads fall back
 * to buffered IO and the JSON says "direct":false.
 *
 * Output: one JSON object on stdout listing every operation with fd, offset,
 * size and result, plus pid, tid and the file's device and inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define IO_SIZE 4096
#define READ_STRIDE 8192
#define MAX_OPS 4096

enum op_kind { OP_OPEN, OP_READ, OP_WRITE, OP_FSYNC, OP_CLOSE };
static const char *const op_names[] = {"open", "read", "write", "fsync", "close"};

struct op_record {
	enum op_kind kind;
	int fd;
	long long offset; /* -1 when the op has none */
	int size;
	long long res;    /* syscall return or CQE res; -errno on failure */
	const char *flags; /* open flags, for opens */
};

static struct op_record ops[MAX_OPS];
static int op_count;
static bool use_uring = true;
static struct io_uring ring;
static bool all_ok = true;

static void die(const char *what, int err)
{
	fprintf(stderr, "fileio: %s: %s\n", what, strerror(err));
	exit(2);
}

static struct op_record *add_op(enum op_kind kind, int fd, long long offset, int size)
{
	if (op_count == MAX_OPS)
		die("too many operations", E2BIG);
	struct op_record *op = &ops[op_count++];
	*op = (struct op_record){.kind = kind, .fd = fd, .offset = offset, .size = size};
	return op;
}

/* Runs one io_uring request to completion; returns its CQE res. */
static int uring_run_one(struct io_uring_sqe *sqe)
{
	sqe->user_data = (uint64_t)(op_count - 1);
	int ret = io_uring_submit(&ring);
	if (ret != 1)
		die("io_uring_submit", ret < 0 ? -ret : EIO);
	struct io_uring_cqe *cqe;
	ret = io_uring_wait_cqe(&ring, &cqe);
	if (ret < 0)
		die("io_uring_wait_cqe", -ret);
	int res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

static struct io_uring_sqe *get_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		die("io_uring_get_sqe", EBUSY);
	return sqe;
}

/* Runs one read; returns its res. */
static long long read_once(int fd, void *buffer, long long offset)
{
	struct op_record *op = add_op(OP_READ, fd, offset, IO_SIZE);
	if (use_uring) {
		struct io_uring_sqe *sqe = get_sqe();
		io_uring_prep_read(sqe, fd, buffer, IO_SIZE, (uint64_t)offset);
		op->res = uring_run_one(sqe);
	} else {
		ssize_t n = pread(fd, buffer, IO_SIZE, offset);
		op->res = n < 0 ? -errno : n;
	}
	return op->res;
}

static void do_read(int fd, void *buffer, long long offset)
{
	all_ok &= read_once(fd, buffer, offset) == IO_SIZE;
}

static void do_write(int fd, const void *buffer, long long offset)
{
	struct op_record *op = add_op(OP_WRITE, fd, offset, IO_SIZE);
	if (use_uring) {
		struct io_uring_sqe *sqe = get_sqe();
		io_uring_prep_write(sqe, fd, buffer, IO_SIZE, (uint64_t)offset);
		op->res = uring_run_one(sqe);
	} else {
		ssize_t n = pwrite(fd, buffer, IO_SIZE, offset);
		op->res = n < 0 ? -errno : n;
	}
	all_ok &= op->res == IO_SIZE;
}

static void do_fsync(int fd)
{
	struct op_record *op = add_op(OP_FSYNC, fd, -1, 0);
	if (use_uring) {
		struct io_uring_sqe *sqe = get_sqe();
		io_uring_prep_fsync(sqe, fd, 0);
		op->res = uring_run_one(sqe);
	} else {
		op->res = fsync(fd) < 0 ? -errno : 0;
	}
	all_ok &= op->res == 0;
}

static int do_open(const char *path, int flags, const char *flag_text)
{
	int fd = open(path, flags, 0644);
	struct op_record *op = add_op(OP_OPEN, fd, -1, 0);
	op->res = fd < 0 ? -errno : fd;
	op->flags = flag_text;
	return fd;
}

static void do_close(int fd)
{
	struct op_record *op = add_op(OP_CLOSE, fd, -1, 0);
	op->res = close(fd) < 0 ? -errno : 0;
	all_ok &= op->res == 0;
}

/* Opens for the reads: O_DIRECT unless the filesystem refuses it. */
static int open_for_reads(const char *path, bool want_direct, bool *direct)
{
	*direct = want_direct;
	if (want_direct) {
		int fd = do_open(path, O_RDONLY | O_DIRECT, "O_RDONLY|O_DIRECT");
		if (fd >= 0 || errno != EINVAL)
			return fd;
		*direct = false;
	}
	return do_open(path, O_RDONLY, "O_RDONLY");
}

static void read_pattern(int fd, char *buffer, int reads)
{
	for (int i = 0; i < reads; i++)
		do_read(fd, buffer, (long long)i * READ_STRIDE);
}

/* Makes sure the read area exists on the file; returns bytes written. */
static long long prepare_file(const char *path, long long read_area)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		die(path, errno);
	struct stat st;
	if (fstat(fd, &st) < 0)
		die("fstat", errno);
	long long written = 0;
	if (st.st_size < read_area) {
		static char block[IO_SIZE];
		for (long long off = 0; off < read_area; off += IO_SIZE) {
			/* Each block names its offset, so a reader can check what it got. */
			memset(block, 0, sizeof block);
			snprintf(block, sizeof block, "fileio block at %lld\n", off);
			if (pwrite(fd, block, IO_SIZE, off) != IO_SIZE)
				die("prepare pwrite", errno);
			written += IO_SIZE;
		}
		if (fsync(fd) < 0)
			die("prepare fsync", errno);
	}
	close(fd);
	return written;
}

static void wait_for_fifo(const char *fifo, const char *path, int fd)
{
	if (mkfifo(fifo, 0600) < 0 && errno != EEXIST)
		die("mkfifo", errno);
	fprintf(stderr, "fileio: opened %s as fd %d; waiting for a byte on %s\n", path, fd, fifo);
	int fifo_fd = open(fifo, O_RDONLY); /* blocks until a writer opens it */
	if (fifo_fd < 0)
		die("open fifo", errno);
	char byte;
	ssize_t n;
	do
		n = read(fifo_fd, &byte, 1);
	while (n < 0 && errno == EINTR);
	close(fifo_fd);
}

static void print_json(const char *path, const char *mode, bool direct, long long prepared,
		       const struct stat *st)
{
	printf("{\"workload\":\"fileio\",\"pid\":%d,\"tid\":%ld,\"ok\":%s,\"mode\":\"%s\","
	       "\"engine\":\"%s\",\"path\":\"%s\",\"direct\":%s,\"dev_major\":%u,"
	       "\"dev_minor\":%u,\"inode\":%llu,\"io_size\":%d,\"read_stride\":%d,"
	       "\"prepare\":{\"bytes_written\":%lld},\"ops\":[",
	       (int)getpid(), (long)syscall(SYS_gettid), all_ok ? "true" : "false", mode,
	       use_uring ? "uring" : "sync", path, direct ? "true" : "false",
	       major(st->st_dev), minor(st->st_dev), (unsigned long long)st->st_ino,
	       IO_SIZE, READ_STRIDE, prepared);
	for (int i = 0; i < op_count; i++) {
		const struct op_record *op = &ops[i];
		printf("%s{\"op\":\"%s\",\"fd\":%d", i ? "," : "", op_names[op->kind], op->fd);
		if (op->offset >= 0)
			printf(",\"offset\":%lld,\"size\":%d", op->offset, op->size);
		if (op->flags)
			printf(",\"flags\":\"%s\"", op->flags);
		printf(",\"res\":%lld}", op->res);
	}
	printf("]}\n");
}

static int parse_count(const char *name, const char *text)
{
	char *end;
	long value = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || value < 0 || value > 1000) {
		fprintf(stderr, "fileio: --%s wants 0..1000\n", name);
		exit(2);
	}
	return (int)value;
}

static void usage(void)
{
	fprintf(stderr, "usage: fileio --file PATH [--engine uring|sync] [--reads N] [--writes N]\n"
			"              [--wait-fifo FIFO] [--no-direct] [--bad-fd-read] [--json]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *path = NULL, *fifo = NULL;
	int reads = 64, writes = 16;
	bool want_direct = true, bad_fd_read = false;
	static const struct option long_options[] = {
		{"file", required_argument, 0, 'f'},
		{"engine", required_argument, 0, 'e'},
		{"reads", required_argument, 0, 'r'},
		{"writes", required_argument, 0, 'w'},
		{"wait-fifo", required_argument, 0, 'W'},
		{"no-direct", no_argument, 0, 'n'},
		{"bad-fd-read", no_argument, 0, 'b'},
		{"json", no_argument, 0, 'j'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case 'f': path = optarg; break;
		case 'e':
			if (strcmp(optarg, "uring") == 0)
				use_uring = true;
			else if (strcmp(optarg, "sync") == 0)
				use_uring = false;
			else
				usage();
			break;
		case 'r': reads = parse_count("reads", optarg); break;
		case 'w': writes = parse_count("writes", optarg); break;
		case 'W': fifo = optarg; break;
		case 'n': want_direct = false; break;
		case 'b': bad_fd_read = true; break;
		case 'j': break; /* JSON is the only output format */
		default: usage();
		}
	}
	if (!path || optind != argc)
		usage();

	long long read_area = (long long)reads * READ_STRIDE;
	long long prepared = prepare_file(path, read_area);
	struct stat st;
	if (stat(path, &st) < 0)
		die("stat", errno);
	if (use_uring) {
		int ret = io_uring_queue_init(8, &ring, 0);
		if (ret < 0)
			die("io_uring_queue_init", -ret);
	}
	/* O_DIRECT needs an aligned buffer. */
	char *buffer = aligned_alloc(IO_SIZE, IO_SIZE);
	if (!buffer)
		die("aligned_alloc", ENOMEM);
	memset(buffer, 'w', IO_SIZE);

	bool direct;
	int fd = open_for_reads(path, want_direct, &direct);
	if (fd < 0)
		die("open for reads", errno);
	if (fifo)
		wait_for_fifo(fifo, path, fd);
	read_pattern(fd, buffer, reads);
	do_close(fd);

	if (!fifo) {
		fd = do_open(path, O_WRONLY, "O_WRONLY");
		if (fd < 0)
			die("open for writes", errno);
		memset(buffer, 'w', IO_SIZE);
		for (int j = 0; j < writes; j++)
			do_write(fd, buffer, read_area + (long long)j * IO_SIZE);
		do_fsync(fd);
		do_close(fd);
	}
	if (bad_fd_read)
		all_ok &= read_once(fd, buffer, 0) == -EBADF;   /* fd is closed */

	if (use_uring)
		io_uring_queue_exit(&ring);
	free(buffer);
	print_json(path, fifo ? "wait" : "pattern", direct, prepared, &st);
	return all_ok ? 0 : 1;
}
