/*
 * uring_paths: io_uring requests whose kernel path is known in advance.
 *
 * Every path runs on each of two rings (ring 0: 64 SQ entries, default flags;
 * ring 1: 32 SQ entries, IORING_SETUP_CQSIZE with 128 CQ entries), one path
 * after the other, in batches of at most 8 requests (chains), each batch fully
 * reaped before the next.  Everything is done by the main thread.
 *
 *   user_data = ring << 48 | path id << 32 | index within the path
 *
 * Path ids: 1 nop, 2 poll (pipe read), 3 async (IOSQE_ASYNC file write),
 * 4 link (chains of 3 nops), 5 invalid (opcode 250), 6 faillink (read on an
 * O_WRONLY fd linked to a nop), 7 multishot (multishot POLL_ADD), 8 poll_remove.
 *
 * Tracepoints, verified with bpftrace on 6.18.44 (method in README.md): per
 * request, or per chain for link and faillink, on ONE ring; "-" means never.
 * io_uring_create fires once per ring.  user_data is set on every event
 * that has the field.
 *
 *   path (requests)      submit_req poll_arm task_add queue_async file_get link req_failed fail_link complete
 *   nop                       1        -        -         -         -      -      -          -        1
 *   poll (pipe read)          1        1        1         -         1      -      -          -        1
 *   async (IOSQE_ASYNC)       1        -        -         1        1 W     -      -          -       1 W
 *   link (3 nops)             3        -        -         -         -      2      -          -        3
 *   invalid (opcode 250)      -        -        -         -         -      -      1          -        1
 *   faillink (read+nop)       2        -        -         -         1      1      -          1        2
 *   multishot (POLL_ADD)      1        -        3         -         1      -      -          -        4
 *   poll_remove               1        -        -         -         -      -      -          -        1
 *
 *   W: fires on the io-wq worker thread iou-wrk-<pid> (same tgid); all other
 *   events fire on the main thread (task_add inside our own write() to the
 *   pipe).  The multishot POLL_ADD arms its poll without io_uring_poll_arm
 *   (that event is only for the internal poll of a read/write that would
 *   block); its 4 CQEs are 3 wakeups (res POLLIN, IORING_CQE_F_MORE) and the
 *   final -ECANCELED posted when poll_remove (res 0) cancels it.
 *   Defaults on one ring: submit_req 26, complete 30, file_get 10, task_add 7,
 *   link 5, poll_arm 4, queue_async_work 4, req_failed 1, fail_link 1, create 1.
 *
 * Each ring ends with one io_uring_enter that submits nothing, after every
 * CQE was reaped, so a tracer watching the CQ head sees each CQE reaped.
 *
 * Timing-dependent (not part of the contract): cqring_wait (only when a wait
 * really sleeps: 1-4 per ring with the defaults), task_work_run (batched).
 * Never here: defer, cqe_overflow, short_write, local_work_run, register.
 *
 * Output: one JSON object on stdout (see README.md); exit status 0 when every
 * request was reaped and every result was the expected one.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum path_id {
	PATH_NOP = 1,
	PATH_POLL,
	PATH_ASYNC,
	PATH_LINK,
	PATH_INVALID,
	PATH_FAILLINK,
	PATH_MULTISHOT,
	PATH_POLL_REMOVE,
	PATH_COUNT
};

static const char *const path_names[PATH_COUNT] = {
	[PATH_NOP] = "nop",
	[PATH_POLL] = "poll",
	[PATH_ASYNC] = "async",
	[PATH_LINK] = "link",
	[PATH_INVALID] = "invalid",
	[PATH_FAILLINK] = "faillink",
	[PATH_MULTISHOT] = "multishot",
	[PATH_POLL_REMOVE] = "poll_remove",
};

#define RING_COUNT 2
#define BATCH 8              /* requests (or chains) per batch */
#define LINK_LENGTH 3        /* nops per link chain */
#define MAX_PER_PATH 1000    /* option limit, keeps result arrays small */
#define MAX_RESULTS (MAX_PER_PATH * LINK_LENGTH)
#define MULTISHOT_WRITES 3
#define INVALID_OPCODE 250
#define WRITE_SIZE 4096

struct path_record {
	int submitted;   /* SQEs submitted for this path */
	int completions; /* CQEs reaped */
	int res[MAX_RESULTS];          /* in completion order */
	unsigned cqe_flags[MAX_RESULTS];
	int index[MAX_RESULTS];        /* index from the CQE's user_data */
};

struct ring_record {
	struct io_uring ring;
	int ring_fd;
	unsigned sq_entries, cq_entries, flags;
	struct path_record paths[PATH_COUNT];
	int unexpected_cqes; /* CQEs whose user_data names no known path */
};

struct options {
	int nops, polls, asyncs, links, invalids, faillinks, multishot;
	int rings;
	int delay_ms;
	const char *dir;
};

static struct ring_record rings[RING_COUNT];
static char temp_dir[4096];
static char temp_file[4200];

static void die(const char *what, int err)
{
	fprintf(stderr, "uring_paths: %s: %s\n", what, strerror(err));
	exit(2);
}

static uint64_t make_user_data(int ring_index, enum path_id path, int index)
{
	return (uint64_t)ring_index << 48 | (uint64_t)path << 32 | (uint32_t)index;
}

static struct io_uring_sqe *get_sqe(struct ring_record *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		die("no free SQE (batch larger than the ring)", EBUSY);
	return sqe;
}

/* Records one CQE in the path its user_data names. */
static void record_cqe(struct ring_record *r, const struct io_uring_cqe *cqe)
{
	unsigned path = (unsigned)(cqe->user_data >> 32 & 0xffff);
	if (path == 0 || path >= PATH_COUNT) {
		r->unexpected_cqes++;
		return;
	}
	struct path_record *p = &r->paths[path];
	if (p->completions < MAX_RESULTS) {
		p->res[p->completions] = cqe->res;
		p->cqe_flags[p->completions] = cqe->flags;
		p->index[p->completions] = (int)(uint32_t)cqe->user_data;
	}
	p->completions++;
}

/* Waits for and reaps exactly `count` CQEs. */
static void reap(struct ring_record *r, int count)
{
	for (int i = 0; i < count; i++) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(&r->ring, &cqe);
		if (ret < 0)
			die("io_uring_wait_cqe", -ret);
		record_cqe(r, cqe);
		io_uring_cqe_seen(&r->ring, cqe);
	}
}

static void submit_exactly(struct ring_record *r, int count)
{
	int ret = io_uring_submit(&r->ring);
	if (ret < 0)
		die("io_uring_submit", -ret);
	if (ret != count) {
		fprintf(stderr, "uring_paths: submitted %d of %d SQEs\n", ret, count);
		exit(2);
	}
}

static int batch_size(int remaining)
{
	return remaining < BATCH ? remaining : BATCH;
}

/* Nops complete inline during io_uring_enter. */
static void run_nops(int ring_index, int count)
{
	struct ring_record *r = &rings[ring_index];
	for (int done = 0; done < count;) {
		int n = batch_size(count - done);
		for (int i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = get_sqe(r);
			io_uring_prep_nop(sqe);
			sqe->user_data = make_user_data(ring_index, PATH_NOP, done + i);
		}
		submit_exactly(r, n);
		r->paths[PATH_NOP].submitted += n;
		reap(r, n);
		done += n;
	}
}

/*
 * A read on an empty pipe cannot complete inline: io_uring arms a poll on the
 * pipe; our write() wakes it (task_add) and task work completes the read.
 */
static void run_polls(int ring_index, int count)
{
	struct ring_record *r = &rings[ring_index];
	int pipes[BATCH][2];
	char buffers[BATCH][8];
	for (int done = 0; done < count;) {
		int n = batch_size(count - done);
		for (int i = 0; i < n; i++) {
			if (pipe(pipes[i]) < 0)
				die("pipe", errno);
			struct io_uring_sqe *sqe = get_sqe(r);
			io_uring_prep_read(sqe, pipes[i][0], buffers[i], sizeof buffers[i], 0);
			sqe->user_data = make_user_data(ring_index, PATH_POLL, done + i);
		}
		submit_exactly(r, n);
		r->paths[PATH_POLL].submitted += n;
		for (int i = 0; i < n; i++)
			if (write(pipes[i][1], "x", 1) != 1)
				die("write to pipe", errno);
		reap(r, n);
		for (int i = 0; i < n; i++) {
			close(pipes[i][0]);
			close(pipes[i][1]);
		}
		done += n;
	}
}

/* IOSQE_ASYNC sends the write straight to an io-wq worker. */
static void run_asyncs(int ring_index, int count)
{
	struct ring_record *r = &rings[ring_index];
	static char data[WRITE_SIZE];
	memset(data, 'a' + ring_index, sizeof data);
	int fd = open(temp_file, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		die("open temp file", errno);
	for (int done = 0; done < count;) {
		int n = batch_size(count - done);
		for (int i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = get_sqe(r);
			io_uring_prep_write(sqe, fd, data, sizeof data,
					    (uint64_t)(done + i) * WRITE_SIZE);
			sqe->flags |= IOSQE_ASYNC;
			sqe->user_data = make_user_data(ring_index, PATH_ASYNC, done + i);
		}
		submit_exactly(r, n);
		r->paths[PATH_ASYNC].submitted += n;
		reap(r, n);
		done += n;
	}
	close(fd);
}

/* Chains of LINK_LENGTH nops: every link after the head fires io_uring_link. */
static void run_links(int ring_index, int chains)
{
	struct ring_record *r = &rings[ring_index];
	for (int done = 0; done < chains;) {
		int n = batch_size(chains - done);
		for (int c = 0; c < n; c++) {
			for (int k = 0; k < LINK_LENGTH; k++) {
				struct io_uring_sqe *sqe = get_sqe(r);
				io_uring_prep_nop(sqe);
				if (k < LINK_LENGTH - 1)
					sqe->flags |= IOSQE_IO_LINK;
				sqe->user_data = make_user_data(ring_index, PATH_LINK,
								(done + c) * LINK_LENGTH + k);
			}
		}
		submit_exactly(r, n * LINK_LENGTH);
		r->paths[PATH_LINK].submitted += n * LINK_LENGTH;
		reap(r, n * LINK_LENGTH);
		done += n;
	}
}

/*
 * An unknown opcode fails in io_init_req: req_failed, then a -EINVAL CQE.
 * Without IORING_SETUP_SUBMIT_ALL the kernel stops submitting at the failed
 * SQE (it counts as consumed), so each one goes in its own io_uring_enter.
 */
static void run_invalids(int ring_index, int count)
{
	struct ring_record *r = &rings[ring_index];
	for (int i = 0; i < count; i++) {
		struct io_uring_sqe *sqe = get_sqe(r);
		io_uring_prep_nop(sqe);
		sqe->opcode = INVALID_OPCODE;
		sqe->user_data = make_user_data(ring_index, PATH_INVALID, i);
		submit_exactly(r, 1);
		r->paths[PATH_INVALID].submitted++;
		reap(r, 1);
	}
}

/*
 * Head: a read on a file opened O_WRONLY.  The fd is valid, so submission
 * succeeds; the read fails at issue with -EBADF, which fails the link and
 * cancels the linked nop (-ECANCELED).
 */
static void run_faillinks(int ring_index, int chains)
{
	struct ring_record *r = &rings[ring_index];
	static char buffer[64];
	int fd = open(temp_file, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		die("open temp file", errno);
	for (int done = 0; done < chains;) {
		int n = batch_size(chains - done);
		for (int c = 0; c < n; c++) {
			struct io_uring_sqe *head = get_sqe(r);
			io_uring_prep_read(head, fd, buffer, sizeof buffer, 0);
			head->flags |= IOSQE_IO_LINK;
			head->user_data = make_user_data(ring_index, PATH_FAILLINK, (done + c) * 2);
			struct io_uring_sqe *next = get_sqe(r);
			io_uring_prep_nop(next);
			next->user_data = make_user_data(ring_index, PATH_FAILLINK, (done + c) * 2 + 1);
		}
		submit_exactly(r, n * 2);
		r->paths[PATH_FAILLINK].submitted += n * 2;
		reap(r, n * 2);
		done += n;
	}
	close(fd);
}

/*
 * One multishot POLL_ADD on a pipe: each write posts a CQE with
 * IORING_CQE_F_MORE (we drain the pipe in between so each write is a fresh
 * wakeup), then POLL_REMOVE ends it (-ECANCELED for the poll, 0 for remove).
 */
static void run_multishot(int ring_index)
{
	struct ring_record *r = &rings[ring_index];
	int fds[2];
	char byte;
	if (pipe(fds) < 0)
		die("pipe", errno);
	uint64_t poll_data = make_user_data(ring_index, PATH_MULTISHOT, 0);
	struct io_uring_sqe *sqe = get_sqe(r);
	io_uring_prep_poll_multishot(sqe, fds[0], POLLIN);
	sqe->user_data = poll_data;
	submit_exactly(r, 1);
	r->paths[PATH_MULTISHOT].submitted++;
	for (int i = 0; i < MULTISHOT_WRITES; i++) {
		if (write(fds[1], "x", 1) != 1)
			die("write to pipe", errno);
		reap(r, 1);
		if (read(fds[0], &byte, 1) != 1)
			die("read from pipe", errno);
	}
	sqe = get_sqe(r);
	io_uring_prep_poll_remove(sqe, poll_data);
	sqe->user_data = make_user_data(ring_index, PATH_POLL_REMOVE, 0);
	submit_exactly(r, 1);
	r->paths[PATH_POLL_REMOVE].submitted++;
	reap(r, 2);
	close(fds[0]);
	close(fds[1]);
}

static void setup_ring(int ring_index)
{
	struct ring_record *r = &rings[ring_index];
	struct io_uring_params params;
	memset(&params, 0, sizeof params);
	unsigned entries = 64;
	if (ring_index == 1) {
		/* A second shape so a tracer can tell the rings apart. */
		entries = 32;
		params.flags = IORING_SETUP_CQSIZE;
		params.cq_entries = 128;
	}
	int ret = io_uring_queue_init_params(entries, &r->ring, &params);
	if (ret < 0)
		die("io_uring_queue_init_params", -ret);
	r->ring_fd = r->ring.ring_fd;
	r->sq_entries = params.sq_entries;
	r->cq_entries = params.cq_entries;
	r->flags = params.flags;
}

static void print_int_array(const char *name, const int *values, int count)
{
	printf("\"%s\":[", name);
	for (int i = 0; i < count && i < MAX_RESULTS; i++)
		printf("%s%d", i ? "," : "", values[i]);
	printf("]");
}

static void print_json(const struct options *opt, bool ok)
{
	printf("{\"workload\":\"uring_paths\",\"pid\":%d,\"tid\":%ld,\"ok\":%s,",
	       (int)getpid(), (long)syscall(SYS_gettid), ok ? "true" : "false");
	printf("\"user_data\":\"ring<<48|path_id<<32|index\",\"temp_file\":\"%s\",", temp_file);
	printf("\"link_length\":%d,\"multishot_writes\":%d,\"invalid_opcode\":%d,",
	       LINK_LENGTH, MULTISHOT_WRITES, INVALID_OPCODE);
	printf("\"rings\":[");
	for (int ri = 0; ri < opt->rings; ri++) {
		const struct ring_record *r = &rings[ri];
		printf("%s{\"index\":%d,\"ring_fd\":%d,\"sq_entries\":%u,\"cq_entries\":%u,"
		       "\"flags\":%u,\"unexpected_cqes\":%d,\"paths\":{",
		       ri ? "," : "", ri, r->ring_fd, r->sq_entries, r->cq_entries, r->flags,
		       r->unexpected_cqes);
		for (int p = 1; p < PATH_COUNT; p++) {
			const struct path_record *pr = &r->paths[p];
			printf("%s\"%s\":{\"id\":%d,\"submitted\":%d,\"completions\":%d,",
			       p > 1 ? "," : "", path_names[p], p, pr->submitted, pr->completions);
			print_int_array("res", pr->res, pr->completions);
			printf(",");
			print_int_array("cqe_flags", (const int *)pr->cqe_flags, pr->completions);
			printf(",");
			print_int_array("index", pr->index, pr->completions);
			printf("}");
		}
		printf("}}");
	}
	printf("]}\n");
}

/* The results every path must produce. */
static bool results_as_expected(const struct options *opt)
{
	bool ok = true;
	for (int ri = 0; ri < opt->rings; ri++) {
		const struct ring_record *r = &rings[ri];
		ok &= r->unexpected_cqes == 0;
		for (int p = 1; p < PATH_COUNT; p++) {
			const struct path_record *pr = &r->paths[p];
			int expected_completions = pr->submitted;
			if (p == PATH_MULTISHOT && pr->submitted)
				expected_completions = MULTISHOT_WRITES + 1;
			ok &= pr->completions == expected_completions;
			for (int i = 0; i < pr->completions && i < MAX_RESULTS; i++) {
				int res = pr->res[i];
				switch (p) {
				case PATH_NOP: case PATH_LINK: case PATH_POLL_REMOVE:
					ok &= res == 0; break;
				case PATH_POLL: ok &= res == 1; break;
				case PATH_ASYNC: ok &= res == WRITE_SIZE; break;
				case PATH_INVALID: ok &= res == -EINVAL; break;
				case PATH_FAILLINK: /* even index: the read head */
					ok &= res == (pr->index[i] % 2 ? -ECANCELED : -EBADF);
					break;
				case PATH_MULTISHOT:
					ok &= i < MULTISHOT_WRITES ? (res & POLLIN) != 0 : res == -ECANCELED;
					break;
				}
			}
		}
	}
	return ok;
}

static int parse_number(const char *name, const char *text, long max)
{
	char *end;
	long value = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || value < 0 || value > max) {
		fprintf(stderr, "uring_paths: --%s wants 0..%ld\n", name, max);
		exit(2);
	}
	return (int)value;
}

static int parse_count(const char *name, const char *text)
{
	return parse_number(name, text, MAX_PER_PATH);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: uring_paths [--nops N] [--polls N] [--async N] [--links N]\n"
		"                   [--invalid N] [--faillinks N] [--multishot 0|1]\n"
		"                   [--rings 1|2] [--delay-ms MS] [--dir DIR] [--json]\n"
		"defaults: 8 nops, 4 polls, 4 async, 2 links (chains of 3), 1 invalid,\n"
		"1 faillink, 1 multishot, 2 rings. JSON is always printed on stdout.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct options opt = {
		.nops = 8, .polls = 4, .asyncs = 4, .links = 2, .invalids = 1,
		.faillinks = 1, .multishot = 1, .rings = 2, .delay_ms = 0, .dir = "/tmp",
	};
	static const struct option long_options[] = {
		{"nops", required_argument, 0, 'n'},
		{"polls", required_argument, 0, 'p'},
		{"async", required_argument, 0, 'a'},
		{"links", required_argument, 0, 'l'},
		{"invalid", required_argument, 0, 'i'},
		{"faillinks", required_argument, 0, 'f'},
		{"multishot", required_argument, 0, 'm'},
		{"rings", required_argument, 0, 'r'},
		{"delay-ms", required_argument, 0, 'd'},
		{"dir", required_argument, 0, 'D'},
		{"json", no_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case 'n': opt.nops = parse_count("nops", optarg); break;
		case 'p': opt.polls = parse_count("polls", optarg); break;
		case 'a': opt.asyncs = parse_count("async", optarg); break;
		case 'l': opt.links = parse_count("links", optarg); break;
		case 'i': opt.invalids = parse_count("invalid", optarg); break;
		case 'f': opt.faillinks = parse_count("faillinks", optarg); break;
		case 'm': opt.multishot = parse_count("multishot", optarg) ? 1 : 0; break;
		case 'r':
			opt.rings = parse_count("rings", optarg);
			if (opt.rings < 1 || opt.rings > RING_COUNT)
				usage();
			break;
		case 'd': opt.delay_ms = parse_number("delay-ms", optarg, 3600 * 1000); break;
		case 'D': opt.dir = optarg; break;
		case 'j': break; /* JSON is the only output format */
		default: usage();
		}
	}
	if (optind != argc)
		usage();

	if (opt.delay_ms > 0) {
		struct timespec delay = {opt.delay_ms / 1000, (long)(opt.delay_ms % 1000) * 1000000};
		nanosleep(&delay, NULL);
	}

	snprintf(temp_dir, sizeof temp_dir, "%s/uring_paths.XXXXXX", opt.dir);
	if (!mkdtemp(temp_dir))
		die("mkdtemp", errno);
	snprintf(temp_file, sizeof temp_file, "%s/data", temp_dir);

	for (int ri = 0; ri < opt.rings; ri++)
		setup_ring(ri);
	for (int ri = 0; ri < opt.rings; ri++) {
		run_nops(ri, opt.nops);
		run_polls(ri, opt.polls);
		run_asyncs(ri, opt.asyncs);
		run_links(ri, opt.links);
		run_invalids(ri, opt.invalids);
		run_faillinks(ri, opt.faillinks);
		if (opt.multishot)
			run_multishot(ri);
	}
	/* One last io_uring_enter per ring, with nothing to submit: a tracer
	 * sees there that every CQE was reaped (it looks at the CQ head when
	 * the application enters the kernel). */
	for (int ri = 0; ri < opt.rings; ri++)
		if (syscall(__NR_io_uring_enter, rings[ri].ring_fd, 0, 0, 0, NULL, 0) < 0)
			die("io_uring_enter", errno);
	for (int ri = 0; ri < opt.rings; ri++)
		io_uring_queue_exit(&rings[ri].ring);
	unlink(temp_file);
	rmdir(temp_dir);

	bool ok = results_as_expected(&opt);
	print_json(&opt, ok);
	return ok ? 0 : 1;
}
