/*
 * uring_doctor: injects one io_uring pathology on demand, for the doctor's
 * rules to be tested against (and clean runs that must raise nothing).
 *
 *   uring_doctor MODE [COUNT] [--dir DIR] [--shm-dir DIR] [--hold-ms MS]
 *   uring_doctor --list
 *
 * Each mode prints one line on stdout,
 *   GROUND-TRUTH <TAG> mode=<mode> key=value ...
 * with what a doctor should report (counts, opcode, errno, fds, user_data),
 * diagnostics on stderr, and exits 0 (2 on a setup failure, 77 when the
 * machine cannot make the pathology, e.g. no tmpfs for punt-nowait).
 * COUNT scales the mode (its default is in the mode table below); --hold-ms
 * is how long a mode leaves something waiting (leak, reap-lag, defer-tw,
 * sqpoll-spin, workers).  Files go in a temporary directory under --dir
 * (default /tmp; ext4 here) or --shm-dir (default /dev/shm, tmpfs), removed
 * at exit.  Every mode takes well under 2 s with its defaults.
 *
 * The kernel-side signal of each mode on 6.18 is in tests/workloads/README.md
 * and docs/doctor-research.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define TMPFS_MAGIC 0x01021994
#define PAGE 4096
#define DIRECT_FILE_PAGES 2048   /* clean-read's file: 8 MiB */
#define DIRECT_QD 16             /* clean-read's queue depth and buffers */

struct opts {
	const char *mode;
	long count;
	long hold_ms;
	const char *dir;
	const char *shm_dir;
};

/* The temporary directories and files made, removed at exit. */
static char tmp_dirs[2][PATH_MAX];
static char tmp_files[4][PATH_MAX];

static void die(const char *what, int err)
{
	fprintf(stderr, "uring_doctor: %s: %s\n", what, strerror(err));
	exit(2);
}

static void cleanup(void)
{
	for (int i = 0; i < 4; i++)
		if (tmp_files[i][0])
			unlink(tmp_files[i]);
	for (int i = 0; i < 2; i++)
		if (tmp_dirs[i][0])
			rmdir(tmp_dirs[i]);
}

/* Killed (a test's timeout): the files go all the same (unlink and rmdir
 * are async-signal-safe). */
static void cleanup_on_signal(int sig)
{
	cleanup();
	_exit(128 + sig);
}

/* A temporary directory under parent (slot 0: --dir, 1: --shm-dir). */
static const char *temp_dir(int slot, const char *parent)
{
	if (!tmp_dirs[slot][0]) {
		snprintf(tmp_dirs[slot], PATH_MAX, "%s/uring_doctor.XXXXXX", parent);
		if (!mkdtemp(tmp_dirs[slot])) {
			int err = errno;
			tmp_dirs[slot][0] = 0;
			die(parent, err);
		}
	}
	return tmp_dirs[slot];
}

/* Creates dir/name of size bytes (pattern bytes, written with write(2)
 * before any ring exists, so that its making is no io_uring traffic) and
 * opens it with flags; the path is kept for removal and in *path. */
static int temp_file(const char *dir, const char *name, size_t size, int flags, const char **path)
{
	static int used;
	if (used == 4)
		die("temp_file", EMFILE);
	char *p = tmp_files[used++];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(p, errno);
	static char chunk[64 * 1024];
	memset(chunk, 'd', sizeof(chunk));
	for (size_t done = 0; done < size;) {
		size_t n = size - done < sizeof(chunk) ? size - done : sizeof(chunk);
		ssize_t w = write(fd, chunk, n);
		if (w <= 0)
			die("write", w < 0 ? errno : EIO);
		done += (size_t)w;
	}
	if (fsync(fd) < 0)
		die("fsync", errno);
	close(fd);
	fd = open(p, flags);
	if (fd < 0)
		die(p, errno);
	if (path)
		*path = p;
	return fd;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void ring_init(struct io_uring *ring, unsigned entries, struct io_uring_params *p)
{
	int ret = io_uring_queue_init_params(entries, ring, p);
	if (ret < 0)
		die("io_uring_queue_init_params", -ret);
}

/* An SQE; when the SQ is full, what is queued is submitted first. */
static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			die("io_uring_get_sqe", EBUSY);
	}
	return sqe;
}

/* What came back in the CQEs reaped. */
struct tally {
	long cqes;
	long ok;              /* res >= 0 */
	long errors;          /* res < 0 */
	int last_res;
	int first_error;      /* res of the first error, 0 if none */
};

static void count_cqe(struct tally *t, const struct io_uring_cqe *cqe)
{
	t->cqes++;
	t->last_res = cqe->res;
	if (cqe->res < 0) {
		t->errors++;
		if (!t->first_error)
			t->first_error = cqe->res;
	} else {
		t->ok++;
	}
}

/* Waits for and reaps n CQEs (t may be NULL). */
static void reap(struct io_uring *ring, long n, struct tally *t)
{
	for (long i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(ring, &cqe);
		if (ret < 0)
			die("io_uring_wait_cqe", -ret);
		if (t)
			count_cqe(t, cqe);
		io_uring_cqe_seen(ring, cqe);
	}
}

/* Submits what is queued and reaps n completions. */
static void submit_reap(struct io_uring *ring, long n, struct tally *t)
{
	int ret = io_uring_submit(ring);
	if (ret < 0)
		die("io_uring_submit", -ret);
	reap(ring, n, t);
}

/* Prepares request i of a run in sqe (arg: the mode's). */
typedef void prep_fn(struct io_uring_sqe *sqe, long i, void *arg);

/* count requests in batches of at most batch, each batch submitted with one
 * io_uring_enter that also waits for it, and reaped before the next. */
static void run_batches(struct io_uring *ring, long count, long batch, prep_fn *prep, void *arg, struct tally *t)
{
	for (long done = 0; done < count;) {
		long n = count - done < batch ? count - done : batch;
		for (long i = 0; i < n; i++)
			prep(get_sqe(ring), done + i, arg);
		int ret = io_uring_submit_and_wait(ring, (unsigned)n);
		if (ret != n)
			die("io_uring_submit_and_wait", ret < 0 ? -ret : EIO);
		reap(ring, n, t);
		done += n;
	}
}

static void ground_truth(const char *tag, const struct opts *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ground_truth(const char *tag, const struct opts *o, const char *fmt, ...)
{
	va_list ap;
	printf("GROUND-TRUTH %s mode=%s pid=%d ", tag, o->mode, (int)getpid());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void make_pipe(int fds[2])
{
	if (pipe(fds) < 0)
		die("pipe", errno);
}

/* n pipes (freed with close_pipes). */
static int (*open_pipes(long n))[2]
{
	int (*pipes)[2] = calloc((size_t)n, sizeof(*pipes));
	if (!pipes)
		die("calloc", ENOMEM);
	for (long i = 0; i < n; i++)
		make_pipe(pipes[i]);
	return pipes;
}

static void close_pipes(int (*pipes)[2], long n)
{
	for (long i = 0; i < n; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	free(pipes);
}

static void write_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("write", errno);
}

static char buffer[64 * 1024] __attribute__((aligned(PAGE)));

/* ---- PUNT ------------------------------------------------------------ */

struct file_io {
	int fd;
	unsigned size;        /* bytes a request */
	unsigned span;        /* requests cover span * size bytes of the file, round */
	unsigned sqe_flags;
	uint64_t user_data;   /* request i's is user_data + i */
};

static void prep_file_read(struct io_uring_sqe *sqe, long i, void *arg)
{
	const struct file_io *f = arg;
	io_uring_prep_read(sqe, f->fd, buffer + (i % 16) * f->size, f->size, (uint64_t)(i % f->span) * f->size);
	sqe->flags |= f->sqe_flags;
	sqe->user_data = f->user_data + (uint64_t)i;
}

static void prep_file_write(struct io_uring_sqe *sqe, long i, void *arg)
{
	const struct file_io *f = arg;
	io_uring_prep_write(sqe, f->fd, buffer, f->size, (uint64_t)(i % f->span) * f->size);
	sqe->flags |= f->sqe_flags;
	sqe->user_data = f->user_data + (uint64_t)i;
}

/* The file punt modes' run: count requests of f, batches of 32, on a plain
 * ring; the line names the cause, the opcode and what the mode adds. */
static int file_punt(const struct opts *o, const char *path, struct file_io *f, prep_fn *prep, const char *cause,
		     const char *opcode, const char *extra)
{
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	struct tally t = {0};
	run_batches(&ring, o->count, 32, prep, f, &t);
	ground_truth("PUNT", o, "cause=%s opcode=%s punted=%ld fd=%d path=%s ok=%ld %s user_data=0x%llx+i", cause,
		     opcode, o->count, f->fd, path, t.ok, extra, (unsigned long long)f->user_data);
	io_uring_queue_exit(&ring);
	return 0;
}

/* IOSQE_ASYNC on every read: io_uring queues each to io-wq without trying
 * it inline (queue_async_work flags carry REQ_F_FORCE_ASYNC, bit 4). */
static int mode_punt_async(const struct opts *o)
{
	const char *path;
	int fd = temp_file(temp_dir(0, o->dir), "punt_async", 16 * PAGE, O_RDONLY, &path);
	struct file_io f = {fd, PAGE, 16, IOSQE_ASYNC, 0x9000000};
	return file_punt(o, path, &f, prep_file_read, "forced-async", "READ", "sqe_flags=IOSQE_ASYNC");
}

/* Buffered writes to an ext4 file: the file supports non-blocking IO
 * (REQ_F_SUPPORT_NOWAIT, bit 29, is set), but ext4 has no async buffered
 * writes, so the non-blocking attempt returns -EAGAIN and the write goes to
 * io-wq, on the hashed queue (writes to one inode are serialized). */
static int mode_punt_eagain(const struct opts *o)
{
	const char *path;
	int fd = temp_file(temp_dir(0, o->dir), "punt_eagain", 0, O_WRONLY, &path);
	struct statfs sf;
	if (fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
		fprintf(stderr, "uring_doctor: %s is on tmpfs; punt-eagain needs ext4 (--dir)\n", path);
		return 77;
	}
	struct file_io f = {fd, PAGE, 256, 0, 0x9100000};
	return file_punt(o, path, &f, prep_file_write, "nonblock-eagain", "WRITE", "fs=ext4 queue=hashed");
}

/* Reads of a tmpfs file: tmpfs files are not opened FMODE_NOWAIT on 6.18
 * (REQ_F_SUPPORT_NOWAIT clear), so io_uring does not try them inline. */
static int mode_punt_nowait(const struct opts *o)
{
	struct statfs sf;
	if (statfs(o->shm_dir, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
		fprintf(stderr, "uring_doctor: %s is not tmpfs: no file without nowait support here\n",
			o->shm_dir);
		return 77;
	}
	const char *path;
	int fd = temp_file(temp_dir(1, o->shm_dir), "punt_nowait", 16 * PAGE, O_RDONLY, &path);
	struct file_io f = {fd, PAGE, 16, 0, 0x9000000};
	return file_punt(o, path, &f, prep_file_read, "no-nowait-support", "READ", "fs=tmpfs");
}

/* Reads of empty pipes and receives on empty sockets: the non-blocking
 * attempt returns -EAGAIN and, the file being pollable, io_uring arms a
 * poll (io_uring_poll_arm) instead of using io-wq; the data written next
 * completes them through task work.  The normal path for pipes and sockets:
 * at most worth an info. */
static int mode_punt_poll(const struct opts *o)
{
	enum { PER_ROUND = 8 };
	int pipes[PER_ROUND][2], socks[PER_ROUND][2];
	for (int i = 0; i < PER_ROUND; i++) {
		make_pipe(pipes[i]);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, socks[i]) < 0)
			die("socketpair", errno);
	}
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	long rounds = (o->count + 2 * PER_ROUND - 1) / (2 * PER_ROUND);
	struct tally t = {0};
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < PER_ROUND; i++) {
			struct io_uring_sqe *sqe = get_sqe(&ring);
			io_uring_prep_read(sqe, pipes[i][0], buffer + i * 64, 64, 0);
			sqe->user_data = 0x9200000 + (uint64_t)(r * 2 * PER_ROUND + i);
			sqe = get_sqe(&ring);
			io_uring_prep_recv(sqe, socks[i][0], buffer + PAGE + i * 64, 64, 0);
			sqe->user_data = 0x9200000 + (uint64_t)(r * 2 * PER_ROUND + PER_ROUND + i);
		}
		if (io_uring_submit(&ring) < 0)
			die("io_uring_submit", EIO);
		for (int i = 0; i < PER_ROUND; i++) {
			write_byte(pipes[i][1]);
			write_byte(socks[i][1]);
		}
		reap(&ring, 2 * PER_ROUND, &t);
	}
	ground_truth("PUNT", o, "cause=eagain-poll path=poll opcode=READ polled=%ld opcode2=RECV polled2=%ld "
		     "pipe_fd=%d socket_fd=%d ok=%ld severity=info user_data=0x9200000+i",
		     rounds * PER_ROUND, rounds * PER_ROUND, pipes[0][0], socks[0][0], t.ok);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- BATCH ----------------------------------------------------------- */

/* One nop per io_uring_enter, as fast as it goes. */
static int mode_nobatch(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 8, &p);
	double start = now_ms();
	for (long i = 0; i < o->count; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = (uint64_t)i;
		int ret = io_uring_submit_and_wait(&ring, 1);
		if (ret != 1)
			die("io_uring_submit_and_wait", ret < 0 ? -ret : EIO);
		reap(&ring, 1, NULL);
	}
	double ms = now_ms() - start;
	ground_truth("BATCH", o, "opcode=NOP enters=%ld sqes=%ld sqes_per_enter=1.00 rate_per_s=%.0f", o->count,
		     o->count, ms > 0 ? (double)o->count * 1e3 / ms : 0.0);
	io_uring_queue_exit(&ring);
	return 0;
}

static void prep_nop(struct io_uring_sqe *sqe, long i, void *arg)
{
	(void)arg;
	io_uring_prep_nop(sqe);
	sqe->user_data = (uint64_t)i;
}

/* ---- OVERFLOW -------------------------------------------------------- */

/* A CQ of 8 and count+8 nops submitted without reaping: the first 8 fill
 * the CQ, the other count overflow.  With IORING_FEAT_NODROP (always on
 * since 5.19) none is lost: they wait on the kernel's overflow list (each
 * fires io_uring_cqe_overflow, not io_uring_complete) and are flushed into
 * the CQ as the application reaps; dropped is the kernel's count of CQEs it
 * could not keep (the CQ ring's overflow field), 0 unless allocation failed. */
static int mode_overflow(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE};
	p.cq_entries = 8;
	ring_init(&ring, 8, &p);
	long total = o->count + 8;
	for (long done = 0; done < total;) {
		long batch = total - done < 8 ? total - done : 8;
		for (long i = 0; i < batch; i++) {
			struct io_uring_sqe *sqe = get_sqe(&ring);
			io_uring_prep_nop(sqe);
			sqe->user_data = 0x9400000 + (uint64_t)(done + i);
		}
		int ret = io_uring_submit(&ring);
		if (ret != batch)
			die("io_uring_submit", ret < 0 ? -ret : EIO);
		done += batch;
	}
	unsigned dropped = IO_URING_READ_ONCE(*ring.cq.koverflow);
	bool overflowing = IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_CQ_OVERFLOW;
	struct tally t = {0};
	reap(&ring, total - dropped, &t);
	ground_truth("OVERFLOW", o, "cq_entries=%u opcode=NOP submitted=%ld overflowed=%ld dropped=%u nodrop=%d "
		     "sq_cq_overflow_flag=%d reaped=%ld user_data=0x9400000+i", p.cq_entries, total, o->count,
		     dropped, (p.features & IORING_FEAT_NODROP) ? 1 : 0, overflowing ? 1 : 0, t.cqes);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- ERRORS ---------------------------------------------------------- */

struct bad_reads {
	int bad_fd, file_fd;
	long ebadf;           /* the first ebadf reads are of bad_fd */
};

static void prep_bad_read(struct io_uring_sqe *sqe, long i, void *arg)
{
	const struct bad_reads *b = arg;
	if (i < b->ebadf)
		io_uring_prep_read(sqe, b->bad_fd, buffer, 64, 0);
	else
		io_uring_prep_read(sqe, b->file_fd, buffer, 64, (uint64_t)-2);
	sqe->user_data = 0x9500000 + (uint64_t)i;
}

/* Reads of an fd number that is closed (EBADF when io_uring looks the file
 * up) and reads at offset -2 of a regular file (EINVAL from the file's
 * position check); both complete with res < 0 and fire no req_failed (they
 * fail at issue, not at submission). */
static int mode_errors(const struct opts *o)
{
	const char *path;
	int file = temp_file(temp_dir(0, o->dir), "errors", PAGE, O_RDONLY, &path);
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	/* after the ring, whose fd could otherwise take the number */
	int bad = dup(file);
	if (bad < 0)
		die("dup", errno);
	close(bad);   /* bad is now a number no file has */
	long einval = o->count / 4;
	struct bad_reads b = {bad, file, o->count};
	struct tally t = {0};
	run_batches(&ring, o->count + einval, 32, prep_bad_read, &b, &t);
	ground_truth("ERRORS", o, "opcode=READ READ.EBADF=%ld READ.EINVAL=%ld errors=%ld completions=%ld bad_fd=%d "
		     "einval_fd=%d user_data=0x9500000+i", o->count, einval, t.errors, t.cqes, bad, file);
	if (t.errors != o->count + einval)
		fprintf(stderr, "uring_doctor: errors: %ld of %ld failed\n", t.errors, o->count + einval);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- LEAK ------------------------------------------------------------ */

/* count reads of a pipe nobody writes, held --hold-ms, then the ring is
 * closed (leak) or the process exits with it open (leak-exit).  Either way
 * the kernel cancels them when the ring goes (-ECANCELED, in the ring's exit
 * work, on a kworker); a tracer that stops before sees them in flight. */
static int leak(const struct opts *o, bool close_ring)
{
	int fds[2];
	make_pipe(fds);
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	for (long i = 0; i < o->count; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_read(sqe, fds[0], buffer + (i % 64) * 256, 256, 0);
		sqe->user_data = 0x1eaf0000 + (uint64_t)i;
	}
	if (io_uring_submit(&ring) < 0)
		die("io_uring_submit", EIO);
	sleep_ms(o->hold_ms);
	ground_truth("LEAK", o, "leaked=%ld opcode=READ fd=%d user_data=0x1eaf0000+i age_ms>=%ld ring_fd=%d "
		     "ends=%s", o->count, fds[0], o->hold_ms, ring.ring_fd,
		     close_ring ? "ring-closed" : "process-exit");
	if (close_ring)
		io_uring_queue_exit(&ring);
	return 0;
}

static int mode_leak(const struct opts *o) { return leak(o, true); }
static int mode_leak_exit(const struct opts *o) { return leak(o, false); }

/* ---- SQPOLL ---------------------------------------------------------- */

/* An SQPOLL ring whose thread idles 1 ms before sleeping (a jiffy at least:
 * 4 ms with HZ=250), fed a nop every 20 ms: the thread is asleep at every
 * submission, which then needs
 * io_uring_enter(IORING_ENTER_SQ_WAKEUP) (liburing does it when the SQ
 * flags say IORING_SQ_NEED_WAKEUP; counted here the same way). */
static int mode_sqpoll_idle(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL};
	p.sq_thread_idle = 1;
	ring_init(&ring, 8, &p);
	long wakeups = 0;
	for (long i = 0; i < o->count; i++) {
		sleep_ms(20);
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 0x9700000 + (uint64_t)i;
		if (IO_URING_READ_ONCE(*ring.sq.kflags) & IORING_SQ_NEED_WAKEUP)
			wakeups++;
		submit_reap(&ring, 1, NULL);
	}
	ground_truth("SQPOLL", o, "state=asleep sq_thread_idle_ms=1 submits=%ld wakeups=%ld gap_ms=20", o->count,
		     wakeups);
	io_uring_queue_exit(&ring);
	return 0;
}

/* An SQPOLL ring with a 1 s idle time that gets a few nops, then nothing
 * for --hold-ms: its thread spins on an empty SQ all that time. */
static int mode_sqpoll_spin(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SQPOLL};
	p.sq_thread_idle = 1000;
	ring_init(&ring, 8, &p);
	for (long i = 0; i < o->count; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_nop(sqe);
		sqe->user_data = 0x9800000 + (uint64_t)i;
	}
	submit_reap(&ring, o->count, NULL);
	sleep_ms(o->hold_ms);
	ground_truth("SQPOLL", o, "state=spinning sq_thread_idle_ms=1000 submits=%ld idle_ms=%ld", o->count,
		     o->hold_ms);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- WORKERS and IOWQ-WAIT ------------------------------------------- */

/* count splices, each out of its own empty pipe into /dev/null: a splice
 * blocks in its io-wq worker until data comes (the kernel forces splices
 * to io-wq, and io-wq cannot poll them), on the unbound pool (neither end is
 * a regular file).  Request i's user_data is ud_base + i; the pipes are
 * returned, for feeding and close_pipes. */
static int (*submit_blocking_splices(struct io_uring *ring, long count, uint64_t ud_base))[2]
{
	int (*pipes)[2] = open_pipes(count);
	static int devnull = -1;
	if (devnull < 0 && (devnull = open("/dev/null", O_WRONLY)) < 0)
		die("/dev/null", errno);
	for (long i = 0; i < count; i++) {
		struct io_uring_sqe *sqe = get_sqe(ring);
		io_uring_prep_splice(sqe, pipes[i][0], -1, devnull, -1, 1, 0);
		sqe->user_data = ud_base + (uint64_t)i;
	}
	if (io_uring_submit(ring) < 0)
		die("io_uring_submit", EIO);
	return pipes;
}

/* count splices in flight at once: count io-wq workers, each blocked. */
static int mode_workers(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 256, &p);
	int (*pipes)[2] = submit_blocking_splices(&ring, o->count, 0x9900000);
	sleep_ms(o->hold_ms);   /* every worker started and blocked */
	for (long i = 0; i < o->count; i++)
		write_byte(pipes[i][1]);
	struct tally t = {0};
	reap(&ring, o->count, &t);
	ground_truth("WORKERS", o, "workers=%ld opcode=SPLICE concurrent=%ld pool=unbound max_workers=unlimited "
		     "cpus=%ld ok=%ld user_data=0x9900000+i", o->count, o->count, sysconf(_SC_NPROCESSORS_ONLN),
		     t.ok);
	io_uring_queue_exit(&ring);
	close_pipes(pipes, o->count);
	return 0;
}

struct feeder {
	int (*pipes)[2];
	long count;
	long first_ms;
	long step_ms;
};

/* Writes pipe i at first_ms + i * step_ms from its start. */
static void *feed_pipes(void *arg)
{
	struct feeder *f = arg;
	double start = now_ms();
	for (long i = 0; i < f->count; i++) {
		double wait = start + (double)f->first_ms + (double)i * (double)f->step_ms - now_ms();
		if (wait > 0)
			sleep_ms((long)wait);
		write_byte(f->pipes[i][1]);
	}
	return NULL;
}

/* count blocking splices on a ring whose io-wq may run one unbound worker:
 * they queue.  Pipe i gets its byte at (i + 1) * 5 ms, so request i runs
 * about 5 ms (from when i - 1 finished) after waiting about i * 5 ms for
 * the worker: all but the first two wait longer than they run. */
static int mode_iowq_wait(const struct opts *o)
{
	enum { STEP_MS = 5 };
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	unsigned max_workers[2] = {1, 1};   /* bounded, unbounded */
	int ret = io_uring_register_iowq_max_workers(&ring, max_workers);
	if (ret < 0)
		die("io_uring_register_iowq_max_workers", -ret);
	int (*pipes)[2] = submit_blocking_splices(&ring, o->count, 0x9a00000);
	struct feeder f = {pipes, o->count, STEP_MS, STEP_MS};
	pthread_t thread;
	if ((ret = pthread_create(&thread, NULL, feed_pipes, &f)) != 0)
		die("pthread_create", ret);
	struct tally t = {0};
	reap(&ring, o->count, &t);
	pthread_join(thread, NULL);
	ground_truth("IOWQ-WAIT", o, "requests=%ld opcode=SPLICE max_workers=1 pool=unbound run_ms~=%d "
		     "wait_ms~=i*%d waited_longer_than_ran=%ld ok=%ld user_data=0x9a00000+i", o->count, STEP_MS,
		     STEP_MS, o->count > 2 ? o->count - 2 : 0, t.ok);
	io_uring_queue_exit(&ring);
	close_pipes(pipes, o->count);
	return 0;
}

/* ---- CONFIG and DEFER-TW --------------------------------------------- */

/* Pipe reads that are armed (poll) and completed by the write that follows:
 * each completion is task work (io_uring_task_add, then task_work_run in
 * the submitter).  Returns the reads done. */
static long pipe_read_rounds(struct io_uring *ring, long count, int pipes[][2], int per_round, uint64_t ud_base,
			     long hold_ms, bool get_events)
{
	long done = 0;
	while (done < count) {
		int batch = count - done < per_round ? (int)(count - done) : per_round;
		for (int i = 0; i < batch; i++) {
			struct io_uring_sqe *sqe = get_sqe(ring);
			io_uring_prep_read(sqe, pipes[i][0], buffer + i * 64, 64, 0);
			sqe->user_data = ud_base + (uint64_t)(done + i);
		}
		if (io_uring_submit(ring) < 0)
			die("io_uring_submit", EIO);
		for (int i = 0; i < batch; i++)
			write_byte(pipes[i][1]);
		if (hold_ms)
			sleep_ms(hold_ms);
		if (get_events)
			io_uring_get_events(ring);
		reap(ring, batch, NULL);
		done += batch;
	}
	return done;
}

/* A ring used by this one thread only, set up without SINGLE_ISSUER,
 * DEFER_TASKRUN or COOP_TASKRUN, whose completions are all task work. */
static int mode_config_tw(const struct opts *o)
{
	enum { PER_ROUND = 16 };
	int (*pipes)[2] = open_pipes(PER_ROUND);
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 64, &p);
	long done = pipe_read_rounds(&ring, o->count, pipes, PER_ROUND, 0x9b00000, 0, false);
	ground_truth("CONFIG", o, "issue=task-work-without-defer ring_flags=0x%x threads=1 opcode=READ "
		     "task_work_requests=%ld missing=SINGLE_ISSUER,DEFER_TASKRUN,COOP_TASKRUN ring_fd=%d",
		     p.flags, done, ring.ring_fd);
	io_uring_queue_exit(&ring);
	return 0;
}

/* A DEFER_TASKRUN ring whose pipe reads get their data at once, but whose
 * application waits --hold-ms before entering the kernel to get events:
 * the completions wait that long as local task work (task_add at the
 * write, local_work_run and complete only at the enter). */
static int mode_defer_tw(const struct opts *o)
{
	int pipes[64][2];
	long n = o->count < 64 ? o->count : 64;
	for (long i = 0; i < n; i++)
		make_pipe(pipes[i]);
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 64, &p);
	long done = pipe_read_rounds(&ring, n, pipes, (int)n, 0x9c00000, o->hold_ms, true);
	ground_truth("DEFER-TW", o, "requests=%ld opcode=READ ring_flags=0x%x delay_ms>=%ld "
		     "user_data=0x9c00000+i", done, p.flags, o->hold_ms);
	io_uring_queue_exit(&ring);
	return 0;
}

/* count 512-byte reads of a page-cached file through its plain fd: io_uring
 * looks the file up (io_uring_file_get, an fget/fput pair) for each. */
static int mode_unregistered_files(const struct opts *o)
{
	const char *path;
	int fd = temp_file(temp_dir(0, o->dir), "unregistered", 16 * PAGE, O_RDONLY, &path);
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 64, &p);
	struct file_io f = {fd, 512, 128, 0, 0x9d00000};
	run_batches(&ring, o->count, 32, prep_file_read, &f, NULL);
	ground_truth("CONFIG", o, "issue=unregistered-files opcode=READ file_lookups=%ld fd=%d path=%s "
		     "registered_files=0", o->count, fd, path);
	io_uring_queue_exit(&ring);
	return 0;
}

/* A CQ of 16 with count (default 64) pipe reads in flight at once; the
 * pipes are then written 8 at a time and reaped in between, so nothing
 * overflows: the CQ is too small for the depth used, no harm done yet. */
static int mode_small_cq(const struct opts *o)
{
	int (*pipes)[2] = open_pipes(o->count);
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	p.cq_entries = 16;
	ring_init(&ring, 8, &p);
	for (long i = 0; i < o->count; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_read(sqe, pipes[i][0], buffer + (i % 256) * 64, 64, 0);
		sqe->user_data = 0x9e00000 + (uint64_t)i;
	}
	if (io_uring_submit(&ring) < 0)
		die("io_uring_submit", EIO);
	for (long done = 0; done < o->count;) {
		long batch = o->count - done < 8 ? o->count - done : 8;
		for (long i = 0; i < batch; i++)
			write_byte(pipes[done + i][1]);
		reap(&ring, batch, NULL);
		done += batch;
	}
	unsigned dropped = IO_URING_READ_ONCE(*ring.cq.koverflow);
	ground_truth("CONFIG", o, "issue=cq-smaller-than-in-flight cq_entries=%u sq_entries=%u max_in_flight=%ld "
		     "overflows=0 dropped=%u opcode=READ", p.cq_entries, p.sq_entries, o->count, dropped);
	io_uring_queue_exit(&ring);
	close_pipes(pipes, o->count);
	return 0;
}

/* ---- SHORT-WRITE ----------------------------------------------------- */

/* Writes that complete with fewer bytes than asked, two ways:
 * - 8 KiB writes to a regular file at 4 KiB below RLIMIT_FSIZE: the kernel
 *   writes 4 KiB, fires io_uring_short_write and retries the rest on io-wq,
 *   where it fails (EFBIG, SIGXFSZ ignored): the CQE says 4096;
 * - 8 KiB writes to a pipe with one free page: 4096 written, no
 *   tracepoint (a pipe is not a regular file), only the CQE's res. */
static int mode_short_write(const struct opts *o)
{
	enum { LIMIT = 64 * 1024, ASK = 2 * PAGE };
	const char *path;
	int fd = temp_file(temp_dir(0, o->dir), "short_write", 0, O_WRONLY, &path);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {LIMIT, LIMIT};
	if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
		die("setrlimit", errno);
	int fds[2];
	make_pipe(fds);
	int pipe_pages = fcntl(fds[1], F_GETPIPE_SZ) / PAGE;
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 8, &p);
	struct tally file_t = {0}, pipe_t = {0};
	for (long i = 0; i < o->count; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_write(sqe, fd, buffer, ASK, LIMIT - PAGE);
		sqe->user_data = 0x9f00000 + (uint64_t)i;
		submit_reap(&ring, 1, &file_t);
	}
	for (long i = 0; i < o->count; i++) {
		/* fill all but one page, write two, drain */
		for (int pg = 0; pg < pipe_pages - 1; pg++)
			if (write(fds[1], buffer, PAGE) != PAGE)
				die("write", errno);
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_write(sqe, fds[1], buffer, ASK, 0);
		sqe->user_data = 0x9f10000 + (uint64_t)i;
		submit_reap(&ring, 1, &pipe_t);
		for (int pg = 0; pg < pipe_pages; pg++)
			if (read(fds[0], buffer + PAGE * 4, PAGE) != PAGE)
				die("read", errno);
	}
	ground_truth("SHORT-WRITE", o, "opcode=WRITE file_writes=%ld file_wanted=%d file_got=%d file_fd=%d "
		     "fsize_limit=%d pipe_writes=%ld pipe_wanted=%d pipe_got=%d pipe_fd=%d "
		     "user_data=0x9f00000+i,0x9f10000+i", o->count, ASK, file_t.last_res, fd, LIMIT, o->count, ASK,
		     pipe_t.last_res, fds[1]);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- REAP-LAG -------------------------------------------------------- */

/* 4 rounds of count/4 nops that complete inline; their CQEs are left
 * unreaped --hold-ms each round, then reaped, and the next round's submit
 * (an io_uring_enter) is where the kernel first sees the CQ head moved. */
static int mode_reap_lag(const struct opts *o)
{
	enum { ROUNDS = 4 };
	long per = o->count / ROUNDS > 0 ? o->count / ROUNDS : 1;
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 64, &p);
	for (int r = 0; r < ROUNDS; r++) {
		for (long i = 0; i < per; i++) {
			struct io_uring_sqe *sqe = get_sqe(&ring);
			io_uring_prep_nop(sqe);
			sqe->user_data = 0xa000000 + (uint64_t)(r * per + i);
		}
		if (io_uring_submit(&ring) < 0)
			die("io_uring_submit", EIO);
		sleep_ms(o->hold_ms);
		reap(&ring, per, NULL);
	}
	io_uring_get_events(&ring);   /* the kernel sees the last round reaped */
	ground_truth("REAP-LAG", o, "cqes=%ld rounds=%d lag_ms>=%ld opcode=NOP user_data=0xa000000+i",
		     per * ROUNDS, ROUNDS, o->hold_ms);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- SLOW ------------------------------------------------------------ */

/* count nops in batches of 8 (each done in microseconds) and, among them,
 * three pipe reads that get their data 30, 40 and 50 ms after submission. */
static int mode_slow(const struct opts *o)
{
	enum { SLOW = 3 };
	int (*pipes)[2] = open_pipes(SLOW);
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 64, &p);
	for (int i = 0; i < SLOW; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_read(sqe, pipes[i][0], buffer + i * 64, 64, 0);
		sqe->user_data = 0x5100 + (uint64_t)i;
	}
	if (io_uring_submit(&ring) < 0)
		die("io_uring_submit", EIO);
	double start = now_ms();
	long fast = 0;
	int written = 0;
	struct tally slow_t = {0};
	while (fast < o->count || slow_t.cqes < SLOW) {
		if (written < SLOW && now_ms() - start >= 30 + 10 * written)
			write_byte(pipes[written++][1]);
		long batch = 0;
		if (fast < o->count) {
			batch = o->count - fast < 8 ? o->count - fast : 8;
			for (long i = 0; i < batch; i++) {
				struct io_uring_sqe *sqe = get_sqe(&ring);
				io_uring_prep_nop(sqe);
				sqe->user_data = 0xa100000 + (uint64_t)(fast + i);
			}
			fast += batch;
			/* spread the fast ones over the slow ones' time */
			sleep_ms(1);
		} else {
			sleep_ms(1);
		}
		io_uring_submit_and_get_events(&ring);
		struct io_uring_cqe *cqe;
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->user_data >= 0x5100 && cqe->user_data < 0x5100 + SLOW)
				count_cqe(&slow_t, cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	ground_truth("SLOW", o, "slow=%d opcode=READ user_data=0x5100,0x5101,0x5102 slow_ms>=30,40,50 "
		     "pipe_fds=%d,%d,%d fast=%ld fast_opcode=NOP tid=%d", SLOW, pipes[0][0], pipes[1][0],
		     pipes[2][0], fast, (int)getpid());
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- HAZARD ---------------------------------------------------------- */

/* Two pairs of reads in flight at once whose buffers overlap, each read
 * parked on an empty pipe until both of its pair are submitted:
 * - READ 0xa0 into buf[0, 4096) and READ 0xa1 into buf[2048, 6144);
 * - READ_FIXED 0xa2 into registered buffer 0 at [0, 4096) and READ_FIXED
 *   0xa3 into it at [1024, 5120).
 * Both of each pair succeed; the later one overwrites the overlap. */
static int mode_hazard(const struct opts *o)
{
	static char fixed[8192] __attribute__((aligned(PAGE)));
	int (*pipes)[2] = open_pipes(4);
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 8, &p);
	struct iovec iov = {fixed, sizeof(fixed)};
	int ret = io_uring_register_buffers(&ring, &iov, 1);
	if (ret < 0)
		die("io_uring_register_buffers", -ret);
	struct io_uring_sqe *sqe = get_sqe(&ring);
	io_uring_prep_read(sqe, pipes[0][0], buffer, PAGE, 0);
	sqe->user_data = 0xa0;
	sqe = get_sqe(&ring);
	io_uring_prep_read(sqe, pipes[1][0], buffer + 2048, PAGE, 0);
	sqe->user_data = 0xa1;
	sqe = get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, pipes[2][0], fixed, PAGE, 0, 0);
	sqe->user_data = 0xa2;
	sqe = get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, pipes[3][0], fixed + 1024, PAGE, 0, 0);
	sqe->user_data = 0xa3;
	if (io_uring_submit(&ring) != 4)
		die("io_uring_submit", EIO);
	sleep_ms(o->hold_ms);
	static char data[PAGE];
	for (int i = 0; i < 4; i++) {
		memset(data, 'A' + i, sizeof(data));
		if (write(pipes[i][1], data, sizeof(data)) != (ssize_t)sizeof(data))
			die("write", errno);
	}
	struct tally t = {0};
	reap(&ring, 4, &t);
	ground_truth("HAZARD", o, "pairs=2 a=0xa0 b=0xa1 opcode=READ a_addr=%p b_addr=%p overlap_addr=%p "
		     "overlap_len=2048 fixed_a=0xa2 fixed_b=0xa3 fixed_opcode=READ_FIXED buf_index=0 "
		     "fixed_overlap_addr=%p fixed_overlap_len=3072 ok=%ld", (void *)buffer, (void *)(buffer + 2048),
		     (void *)(buffer + 2048), (void *)(fixed + 1024), t.ok);
	io_uring_queue_exit(&ring);
	return 0;
}

/* A read into an mmap'd page, parked on an empty pipe, and the page
 * unmapped while it waits: when the data comes the copy faults (-EFAULT). */
static int mode_hazard_uaf(const struct opts *o)
{
	int fds[2];
	make_pipe(fds);
	char *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		die("mmap", errno);
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 8, &p);
	struct io_uring_sqe *sqe = get_sqe(&ring);
	io_uring_prep_read(sqe, fds[0], page, PAGE, 0);
	sqe->user_data = 0x0af;
	if (io_uring_submit(&ring) != 1)
		die("io_uring_submit", EIO);
	sleep_ms(o->hold_ms);
	if (munmap(page, PAGE) < 0)
		die("munmap", errno);
	if (write(fds[1], "late data", 9) != 9)
		die("write", errno);
	struct tally t = {0};
	reap(&ring, 1, &t);
	ground_truth("HAZARD-UAF", o, "user_data=0xaf opcode=READ fd=%d munmap_addr=%p munmap_len=%d read_len=%d "
		     "res=%d", fds[0], (void *)page, PAGE, PAGE, t.last_res);
	io_uring_queue_exit(&ring);
	return 0;
}

/* Four registered buffers with a READ_FIXED in flight on each (parked on
 * empty pipes); buffer 0 is then replaced (IORING_REGISTER_BUFFERS_UPDATE)
 * and all are unregistered while the reads still use them.  On 6.18 both
 * succeed at once (the reads hold references to the old buffers); kernels
 * that wait for the buffers' users instead are not left waiting for good:
 * a thread feeds the pipes at 2 * --hold-ms. */
static int mode_hazard_bufreg(const struct opts *o)
{
	enum { BUFS = 4 };
	static char bufs[BUFS][PAGE] __attribute__((aligned(PAGE)));
	static char other[PAGE] __attribute__((aligned(PAGE)));
	int pipes[BUFS][2];
	struct iovec iov[BUFS];
	struct feeder f = {pipes, BUFS, 2 * o->hold_ms, 0};
	pthread_t thread;
	for (int i = 0; i < BUFS; i++) {
		make_pipe(pipes[i]);
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = PAGE;
	}
	struct io_uring ring;
	struct io_uring_params p = {0};
	ring_init(&ring, 8, &p);
	int ret = io_uring_register_buffers(&ring, iov, BUFS);
	if (ret < 0)
		die("io_uring_register_buffers", -ret);
	for (int i = 0; i < BUFS; i++) {
		struct io_uring_sqe *sqe = get_sqe(&ring);
		io_uring_prep_read_fixed(sqe, pipes[i][0], bufs[i], PAGE, 0, i);
		sqe->user_data = 0xb0 + (uint64_t)i;
	}
	if (io_uring_submit(&ring) != BUFS)
		die("io_uring_submit", EIO);
	if ((ret = pthread_create(&thread, NULL, feed_pipes, &f)) != 0)
		die("pthread_create", ret);
	sleep_ms(o->hold_ms);
	struct iovec replacement = {other, PAGE};
	int update_ret = io_uring_register_buffers_update_tag(&ring, 0, &replacement, NULL, 1);
	int unregister_ret = io_uring_unregister_buffers(&ring);
	struct tally t = {0};
	reap(&ring, BUFS, &t);
	pthread_join(thread, NULL);
	ground_truth("HAZARD-BUFREG", o, "in_flight=%d opcode=READ_FIXED buf_index=0..3 user_data=0xb0..0xb3 "
		     "updated_index=0 update_ret=%d unregistered=%d unregister_ret=%d ok=%ld", BUFS, update_ret, BUFS,
		     unregister_ret, t.ok);
	io_uring_queue_exit(&ring);
	return 0;
}

/* ---- clean ----------------------------------------------------------- */

/* The nop firehose done right: batches of 32, each reaped before the next,
 * on a SINGLE_ISSUER | DEFER_TASKRUN ring with a CQ twice the batch. */
static int mode_clean_nop(const struct opts *o)
{
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 32, &p);
	run_batches(&ring, o->count, 32, prep_nop, NULL, NULL);
	ground_truth("NONE", o, "opcode=NOP requests=%ld batch=32 ring_flags=0x%x", o->count, p.flags);
	io_uring_queue_exit(&ring);
	return 0;
}

/* Random 4 KiB reads of clean-read's file through registered file 0 into
 * registered buffer i % DIRECT_QD (arg: the random seed). */
static void prep_direct_read(struct io_uring_sqe *sqe, long i, void *arg)
{
	uint64_t page = (uint64_t)(rand_r(arg) % DIRECT_FILE_PAGES);
	io_uring_prep_read_fixed(sqe, 0, buffer + (i % DIRECT_QD) * PAGE, PAGE, page * PAGE, (int)(i % DIRECT_QD));
	sqe->flags |= IOSQE_FIXED_FILE;
	sqe->user_data = (uint64_t)i;
}

/* O_DIRECT random 4 KiB reads of an 8 MiB file, queue depth 16 submitted
 * in batches of 16, through a registered file and registered buffers, on a
 * SINGLE_ISSUER | DEFER_TASKRUN ring. */
static int mode_clean_read(const struct opts *o)
{
	const char *path;
	int fd = temp_file(temp_dir(0, o->dir), "clean_read", (size_t)DIRECT_FILE_PAGES * PAGE, O_RDONLY | O_DIRECT, &path);
	struct io_uring ring;
	struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
	ring_init(&ring, 32, &p);
	int ret = io_uring_register_files(&ring, &fd, 1);
	if (ret < 0)
		die("io_uring_register_files", -ret);
	struct iovec iov[DIRECT_QD];
	for (int i = 0; i < DIRECT_QD; i++) {
		iov[i].iov_base = buffer + i * PAGE;
		iov[i].iov_len = PAGE;
	}
	if ((ret = io_uring_register_buffers(&ring, iov, DIRECT_QD)) < 0)
		die("io_uring_register_buffers", -ret);
	unsigned seed = 36;
	struct tally t = {0};
	run_batches(&ring, o->count, DIRECT_QD, prep_direct_read, &seed, &t);
	ground_truth("NONE", o, "opcode=READ_FIXED reads=%ld qd=%d batch=%d registered_files=1 registered_buffers=%d "
		     "direct=1 ok=%ld path=%s ring_flags=0x%x", o->count, DIRECT_QD, DIRECT_QD, DIRECT_QD, t.ok, path, p.flags);
	if (t.ok != o->count)
		fprintf(stderr, "uring_doctor: clean-read: %ld errors, first %d\n", t.errors, t.first_error);
	io_uring_queue_exit(&ring);
	return 0;
}

struct mode {
	const char *name;
	int (*run)(const struct opts *);
	long count;      /* default COUNT */
	long hold_ms;    /* default --hold-ms */
	const char *what;
};

static const struct mode modes[] = {
	{"punt-async", mode_punt_async, 1000, 0, "reads forced to io-wq with IOSQE_ASYNC"},
	{"punt-eagain", mode_punt_eagain, 1000, 0, "ext4 buffered writes: -EAGAIN, then io-wq"},
	{"punt-nowait", mode_punt_nowait, 1000, 0, "tmpfs reads: no nowait support, io-wq"},
	{"punt-poll", mode_punt_poll, 256, 0, "pipe reads and socket recvs with no data: poll"},
	{"nobatch", mode_nobatch, 5000, 0, "one nop per io_uring_enter"},
	{"overflow", mode_overflow, 1000, 0, "CQ of 8, count+8 nops, no reaping"},
	{"errors", mode_errors, 1000, 0, "reads of a closed fd (EBADF) and at offset -2 (EINVAL)"},
	{"leak", mode_leak, 16, 300, "pipe reads never completed, ring closed"},
	{"leak-exit", mode_leak_exit, 16, 300, "pipe reads never completed, process exits"},
	{"sqpoll-idle", mode_sqpoll_idle, 40, 0, "SQPOLL thread asleep at each submission"},
	{"sqpoll-spin", mode_sqpoll_spin, 8, 500, "SQPOLL thread spinning on nothing"},
	{"workers", mode_workers, 32, 100, "blocking splices fanning out to io-wq workers"},
	{"iowq-wait", mode_iowq_wait, 16, 0, "blocking splices queued for one io-wq worker"},
	{"config-tw", mode_config_tw, 2000, 0, "one-thread ring without SINGLE_ISSUER/DEFER_TASKRUN"},
	{"defer-tw", mode_defer_tw, 16, 200, "DEFER_TASKRUN completions waiting for the app"},
	{"unregistered-files", mode_unregistered_files, 4000, 0, "reads through a plain fd"},
	{"small-cq", mode_small_cq, 64, 0, "CQ of 16 with 64 requests in flight"},
	{"short-write", mode_short_write, 8, 0, "writes completing short (RLIMIT_FSIZE, pipe)"},
	{"reap-lag", mode_reap_lag, 32, 100, "CQEs left unreaped"},
	{"slow", mode_slow, 2000, 0, "three requests far slower than the rest"},
	{"hazard", mode_hazard, 0, 50, "in-flight reads with overlapping buffers"},
	{"hazard-uaf", mode_hazard_uaf, 0, 50, "munmap of a buffer an in-flight read writes"},
	{"hazard-bufreg", mode_hazard_bufreg, 0, 50, "registered buffers replaced while in use"},
	{"clean-nop", mode_clean_nop, 200000, 0, "nops in batches of 32 (raises nothing)"},
	{"clean-read", mode_clean_read, 4000, 0, "O_DIRECT fixed-file reads, QD 16 (raises nothing)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: uring_doctor MODE [COUNT] [--dir DIR] [--shm-dir DIR] [--hold-ms MS]\n");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(f, "  %-19s %s (COUNT %ld)\n", modes[i].name, modes[i].what, modes[i].count);
}

static long number_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < 0 || v > 10000000) {
		fprintf(stderr, "uring_doctor: not a count: %s\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = {.dir = "/tmp", .shm_dir = "/dev/shm", .count = -1, .hold_ms = -1};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			o.dir = argv[++i];
		} else if (!strcmp(argv[i], "--shm-dir") && i + 1 < argc) {
			o.shm_dir = argv[++i];
		} else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc) {
			o.hold_ms = number_arg(argv[++i]);
		} else if (!o.mode) {
			o.mode = argv[i];
		} else if (o.count < 0) {
			o.count = number_arg(argv[i]);
		} else {
			usage(stderr);
			return 2;
		}
	}
	const struct mode *m = NULL;
	for (size_t i = 0; o.mode && i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(modes[i].name, o.mode))
			m = &modes[i];
	if (!m) {
		usage(stderr);
		return 2;
	}
	if (o.count < 0)
		o.count = m->count;
	if (o.hold_ms < 0)
		o.hold_ms = m->hold_ms;
	atexit(cleanup);
	signal(SIGTERM, cleanup_on_signal);
	signal(SIGINT, cleanup_on_signal);
	memset(buffer, 'b', sizeof(buffer));
	return m->run(&o);
}
