/* The reader's work on records a real run took, replayed on one core:
 * decoding, the user side's statements (split execution), the engine and
 * the FXT writer, as runtime/session.c does them, without the ring buffer
 * and the reorder queues.  Exact under callgrind, where the clock of this
 * machine is not:
 *
 *   build/uring-trace --compile -o /tmp/s.uto scripts/io_uring.ut
 *   UT_CAPTURE_RECORDS=/tmp/s.rec build/uring-trace -o /tmp/s.fxt /tmp/s.uto   (a workload)
 *   build/bench/replay_bench /tmp/s.uto /tmp/s.rec [ROUNDS]
 *
 * REPLAY_FINDINGS=FILE writes the findings made, as the summary shows
 * them (to compare).
 *
 * REPLAY_SPOOL=MB hands the trace's records to a spool of MB MiB and its
 * converter thread (runtime/spool.h), as the tracer does by default, and
 * says the loop's CPU time an event and the converter's apart.
 *
 * Each round replays the records once more, their times moved past the
 * last round's, into one trace (written to a temporary file, deleted). */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "bpf/records.h"
#include "compiler/program_io.h"
#include "engine/engine.h"
#include "fxt/fxt.h"
#include "runtime/decode.h"
#include "runtime/findings.h"
#include "runtime/spool.h"
#include "runtime/user_maps.h"
#include "runtime/user_side.h"

/* This thread's CPU time: the loop's (a spool's converter has its own). */
static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *read_all(const char *path, size_t *len)
{
	void *data;
	if (ut_read_file(path, &data, len) != 0) {
		fprintf(stderr, "replay_bench: cannot read %s\n", path);
		exit(1);
	}
	return data;
}

#define MAX_RECORD (64 * 1024)

/* The record at *at (a native u32 length, then its bytes) and its length
 * in *len, *at moved past it; NULL at the end or at a damaged length. */
static const unsigned char *next_record(const unsigned char *records, size_t size, size_t *at, uint32_t *len)
{
	if (*at + 4 > size)
		return NULL;
	memcpy(len, records + *at, 4);
	if (*len < sizeof(struct ut_rec_hdr) || *len > MAX_RECORD || *at + 4 + *len > size)
		return NULL;
	const unsigned char *rec = records + *at + 4;
	*at += 4 + *len;
	return rec;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: replay_bench PROGRAM.uto RECORDS [ROUNDS]\n");
		return 2;
	}
	size_t image_len, records_len;
	void *image = read_all(argv[1], &image_len);
	unsigned char *records = read_all(argv[2], &records_len);
	unsigned rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	struct ut_program_objects objs;
	char err[256];
	struct ut_program *prog = ut_program_load(image, image_len, &objs, err, sizeof(err));
	if (!prog) {
		fprintf(stderr, "replay_bench: %s: %s\n", argv[1], err);
		return 1;
	}
	/* the records' time span: each round comes after the last */
	uint64_t first = UINT64_MAX, last = 0, count = 0;
	size_t at = 0;
	uint32_t len;
	for (const unsigned char *r; (r = next_record(records, records_len, &at, &len)); count++) {
		struct ut_rec_hdr h;   /* records follow 4-byte lengths: not aligned */
		memcpy(&h, r, sizeof(h));
		if (h.ts < first)
			first = h.ts;
		if (h.ts > last)
			last = h.ts;
	}
	/* the trace goes to REPLAY_TRACE when set (to compare), else is dropped */
	char path[PATH_MAX] = "/tmp/replay_bench_XXXXXX";
	const char *keep = getenv("REPLAY_TRACE");
	int fd = keep ? open(keep, O_WRONLY | O_CREAT | O_TRUNC, 0644) : mkstemp(path);
	if (keep)
		snprintf(path, sizeof(path), "%s", keep);
	if (fd < 0 || !count) {
		fprintf(stderr, "replay_bench: %s\n", count ? "no temporary file" : "no records");
		return 1;
	}
	close(fd);
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	struct ut_engine *e = w ? ut_engine_new(w, NULL) : NULL;
	if (!e) {
		fprintf(stderr, "replay_bench: %s\n", err);
		return 1;
	}
	FILE *devnull = fopen("/dev/null", "w");
	struct ut_user_maps maps;
	ut_user_maps_init(&maps, prog);
	/* findings kept as the tracer keeps them: the first of each goes to
	 * the trace, the others are counted */
	struct ut_decoder d = {.prog = prog, .engine = e, .print_out = devnull, .findings = ut_findings_new(),
			       .user_side = ut_user_side_new(prog, &maps, 10000)};
	/* the compiled user side, as the tracer runs it, unless UT_INTERPRET=1 */
	if (objs.user_len && !ut_user_side_interpret_asked() &&
	    !ut_user_side_compiled(d.user_side, objs.user, objs.user_len, err, sizeof(err)))
		fprintf(stderr, "replay_bench: interpreting: %s\n", err);
	ut_decode_declare_names(prog, e);
	const char *spool_mb = getenv("REPLAY_SPOOL");
	if (spool_mb && !(d.spool = ut_spool_new(prog, e, w, (size_t)atoi(spool_mb) << 20, err, sizeof(err)))) {
		fprintf(stderr, "replay_bench: %s\n", err);
		return 1;
	}
	uint64_t *rec = malloc(MAX_RECORD);   /* a record's copy, aligned as the ring's */
	double started = cpu_seconds();
	for (unsigned r = 0; r < rounds; r++) {
		uint64_t shift = (uint64_t)r * (last - first + 1000);
		at = 0;
		for (const unsigned char *r; (r = next_record(records, records_len, &at, &len));) {
			memcpy(rec, r, len);
			((struct ut_rec_hdr *)rec)->ts += shift;
			ut_decode_record(&d, rec, len);
		}
	}
	double took = cpu_seconds() - started;
	/* a trace event: a record of the trace, the kernel's or one the user
	 * side emitted (the hit records that carry the user side's values
	 * are not events) */
	printf("%" PRIu64 " records x %u rounds: %.0f ns a record, %" PRIu64 " trace events: %.1f ns an event (%" PRIu64
	       " malformed)\n", count, rounds, took * 1e9 / (double)(count * rounds), d.records,
	       d.records ? took * 1e9 / (double)d.records : 0.0, d.malformed);
	if (d.spool) {
		struct ut_spool_stats st;
		ut_spool_finish(d.spool);
		ut_spool_stats(d.spool, &st);
		uint64_t converted = st.records - st.loop_records - st.stop_records;
		printf("the converter: %.1f ns an event (%" PRIu64 " events); the spool held at most %.0f MiB, was full %"
		       PRIu64 " times (the loop converted %" PRIu64 " events then, %.1f ns an event of the above), %" PRIu64
		       " left at the end\n", converted ? (double)st.converter_ns / (double)converted : 0.0, converted,
		       (double)st.peak_bytes / (1 << 20), st.full_times, st.loop_records,
		       d.records ? (double)st.loop_ns / (double)d.records : 0.0, st.stop_records);
		ut_spool_free(d.spool);
	}
	const char *findings = getenv("REPLAY_FINDINGS");
	FILE *findings_out = findings ? fopen(findings, "w") : NULL;
	if (findings_out) {
		ut_findings_print(d.findings, findings_out);
		fclose(findings_out);
	}
	ut_engine_finish(e, last + (uint64_t)rounds * (last - first + 1000));
	ut_engine_free(e);
	fxt_writer_close(w, err, sizeof(err));
	if (!keep)
		unlink(path);
	ut_user_side_free(d.user_side);
	ut_findings_free(d.findings);
	ut_user_maps_free(&maps);
	ut_program_free(prog);
	fclose(devnull);
	free(rec);
	free(records);
	free(image);
	return 0;
}
