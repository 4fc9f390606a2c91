/* Byte-exact FXT records: every record and argument type is compared with
 * words computed by hand from the Fuchsia trace format specification. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "fxt/records.h"
#include "tests/unit/check.h"

static char path[] = "/tmp/test_fxt_records_XXXXXX";

static uint64_t *load_words(size_t *n)
{
	FILE *f = fopen(path, "rb");
	static uint64_t words[4096];
	*n = f ? fread(words, 8, 4096, f) : 0;
	if (f)
		fclose(f);
	return words;
}

/* The first words of every trace: magic, provider info "uring-trace",
 * initialization with 1e9 ticks per second. */
static const uint64_t preamble[] = {
	0x0016547846040010ull,
	0x00b0000000110030ull, /* metadata, 3 words, provider info, id 1, name length 11 */
	0x72742d676e697275ull, /* "uring-tr" */
	0x0000000000656361ull, /* "ace" */
	0x0000000000000021ull, /* initialization, 2 words */
	0x000000003b9aca00ull,
};

static void check_words(const char *name, const uint64_t *want, size_t nwant)
{
	size_t n;
	uint64_t *got = load_words(&n);
	size_t npre = sizeof(preamble) / 8;
	bool ok = n == npre + nwant && memcmp(got, preamble, sizeof(preamble)) == 0 &&
		  (nwant == 0 || memcmp(got + npre, want, nwant * 8) == 0);
	if (!ok) {
		for (size_t i = 0; i < n || i < npre + nwant; i++) {
			uint64_t w = i < npre ? preamble[i] : i - npre < nwant ? want[i - npre] : 0;
			printf("  word %2zu: got %016llx want %016llx%s\n", i,
			       (unsigned long long)(i < n ? got[i] : 0), (unsigned long long)w,
			       i < n && got[i] == w ? "" : "  <--");
		}
	}
	CHECK(name, ok);
}

static struct fxt_writer *open_writer(void)
{
	char err[256];
	struct fxt_writer *w = fxt_writer_open(path, err, sizeof(err));
	if (!w)
		printf("FAIL open: %s\n", err);
	return w;
}

static void close_writer(struct fxt_writer *w)
{
	char err[256];
	CHECK("writer closes without error", fxt_writer_close(w, err, sizeof(err)) == 0);
}

static void test_preamble(void)
{
	struct fxt_writer *w = open_writer();
	close_writer(w);
	check_words("preamble only", NULL, 0);
}

static void test_string_and_thread_records(void)
{
	struct fxt_writer *w = open_writer();
	CHECK("first string gets index 1", fxt_string_ref(w, "cat") == 1);
	CHECK("second string gets index 2", fxt_string_ref(w, "abcdefghi") == 2);
	CHECK("known string keeps its index", fxt_string_ref(w, "cat") == 1);
	CHECK("empty string is ref 0", fxt_string_ref(w, "") == 0);
	CHECK("first thread gets index 1", fxt_thread_ref(w, 0x1234, 0x5678) == 1);
	CHECK("known thread keeps its index", fxt_thread_ref(w, 0x1234, 0x5678) == 1);
	close_writer(w);
	const uint64_t want[] = {
		0x0000000300010022ull, /* string, 2 words, index 1, length 3 */
		0x0000000000746163ull, /* "cat" */
		0x0000000900020032ull, /* string, 3 words, index 2, length 9 */
		0x6867666564636261ull, /* "abcdefgh" */
		0x0000000000000069ull, /* "i" */
		0x0000000000010033ull, /* thread, 3 words, index 1 */
		0x0000000000001234ull,
		0x0000000000005678ull,
	};
	check_words("string and thread records", want, sizeof(want) / 8);
}

/* Strings are remembered by address as well as by content: a buffer that
 * now holds other text, a prefix or an extension of the old one, or a slot
 * given to another string since, must not be taken for the old string. */
static void test_strings_by_address(void)
{
	struct fxt_writer *w = open_writer();
	char buf[16] = "cat";
	CHECK("buffer: cat gets 1", fxt_string_ref(w, buf) == 1);
	CHECK("same text elsewhere: 1", fxt_string_ref(w, "cat") == 1);
	strcpy(buf, "dog");
	CHECK("same buffer, other text: 2", fxt_string_ref(w, buf) == 2);
	strcpy(buf, "do");
	CHECK("same buffer, a prefix: 3", fxt_string_ref(w, buf) == 3);
	strcpy(buf, "dogs");
	CHECK("same buffer, an extension: 4", fxt_string_ref(w, buf) == 4);
	strcpy(buf, "cat");
	CHECK("same buffer, first text again: 1", fxt_string_ref(w, buf) == 1);
	close_writer(w);
	size_t n;
	load_words(&n);
	CHECK("four string records of two words", n == sizeof(preamble) / 8 + 8);

	/* every slot taken by other strings: "cat" (slot 1, least recently
	 * used) is evicted, and its address must not find slot 1 again */
	w = open_writer();
	const char *cat = "cat";
	CHECK("cat gets 1", fxt_string_ref(w, cat) == 1);
	char other[16];
	for (unsigned i = 0; i < FXT_STRING_SLOTS; i++) {
		snprintf(other, sizeof(other), "s%u", i);
		fxt_string_ref(w, other);
	}
	CHECK("slot 1 now holds another string", fxt_string_ref(w, "s32766") == 1);
	uint16_t again = fxt_string_ref(w, cat);
	CHECK("cat interned again in another slot", again != 1 && again != 0);
	close_writer(w);
	uint64_t last[2] = {0, 0};
	FILE *f = fopen(path, "rb");
	if (f && fseek(f, -16, SEEK_END) == 0 && fread(last, 8, 2, f) != 2)
		last[0] = 0;
	if (f)
		fclose(f);
	CHECK("the last record is cat's string record in its new slot",
	      last[0] == (0x0000000300000022ull | (uint64_t)again << 16) && last[1] == 0x746163ull);
}

/* A string declared stable keeps its slot however many others come, and
 * is written once; the same text elsewhere finds that slot. */
static void test_stable_strings(void)
{
	struct fxt_writer *w = open_writer();
	static const char stable[] = "submit";
	fxt_string_stable(w, stable);
	CHECK("stable: gets slot 1", fxt_string_ref(w, stable) == 1);
	char other[16];
	for (unsigned i = 0; i < 2 * FXT_STRING_SLOTS; i++) {
		snprintf(other, sizeof(other), "s%u", i);
		fxt_string_ref(w, other);
	}
	CHECK("stable: keeps slot 1 after 65534 other strings", fxt_string_ref(w, stable) == 1);
	strcpy(other, "submit");
	CHECK("stable: its text in a buffer finds slot 1", fxt_string_ref(w, other) == 1);
	snprintf(other, sizeof(other), "s%u", 0u);
	uint16_t evicted_again = fxt_string_ref(w, other);
	CHECK("stable: other strings still take turns in the other slots", evicted_again > 1);
	close_writer(w);
	FILE *f = fopen(path, "rb");
	uint64_t word;
	unsigned records_of_slot_1 = 0;
	while (f && fread(&word, 8, 1, f) == 1) {
		unsigned words = (unsigned)(word >> 4 & 0xfff);
		if ((word & 0xf) == 2 && (word >> 16 & 0x7fff) == 1)
			records_of_slot_1++;
		if (words > 1 && fseek(f, (long)(words - 1) * 8, SEEK_CUR) != 0)
			break;
	}
	if (f)
		fclose(f);
	CHECK("stable: one string record for slot 1 in the whole trace", records_of_slot_1 == 1);
}

/* Interns thread 1 = (0x1234, 0x5678), strings 1 "cat", 2 "name", 3 "a",
 * 4 "v", 5 "process" so events below write no table records. */
static struct fxt_writer *open_with_tables(void)
{
	struct fxt_writer *w = open_writer();
	fxt_thread_ref(w, 0x1234, 0x5678);
	fxt_string_ref(w, "cat");
	fxt_string_ref(w, "name");
	fxt_string_ref(w, "a");
	fxt_string_ref(w, "v");
	fxt_string_ref(w, "process");
	return w;
}

static const uint64_t tables[] = {
	0x0000000000010033ull, 0x0000000000001234ull, 0x0000000000005678ull,
	0x0000000300010022ull, 0x0000000000746163ull, /* 1 "cat" */
	0x0000000400020022ull, 0x00000000656d616eull, /* 2 "name" */
	0x0000000100030022ull, 0x0000000000000061ull, /* 3 "a" */
	0x0000000100040022ull, 0x0000000000000076ull, /* 4 "v" */
	0x0000000700050022ull, 0x00737365636f7270ull, /* 5 "process" */
};

static void check_after_tables(const char *name, const uint64_t *want, size_t nwant)
{
	uint64_t all[64];
	memcpy(all, tables, sizeof(tables));
	memcpy(all + sizeof(tables) / 8, want, nwant * 8);
	check_words(name, all, sizeof(tables) / 8 + nwant);
}

static void test_every_argument_type(void)
{
	struct fxt_writer *w = open_with_tables();
	struct ut_arg args[] = {
		{ .name = "a", .kind = UT_ARG_INT, .i = -5 },
		{ .name = "a", .kind = UT_ARG_INT, .i = -(1ll << 40) },
		{ .name = "a", .kind = UT_ARG_UINT, .u = 7 },
		{ .name = "a", .kind = UT_ARG_UINT, .u = 1ull << 33 },
		{ .name = "a", .kind = UT_ARG_DOUBLE, .d = 1.5 },
		{ .name = "a", .kind = UT_ARG_STR, .s = "v" },
		{ .name = "a", .kind = UT_ARG_PTR, .u = 0xdeadbeef },
		{ .name = "a", .kind = UT_ARG_KOID, .u = 42 },
		{ .name = "a", .kind = UT_ARG_BOOL, .b = true },
	};
	fxt_write_event(w, FXT_EV_DURATION_BEGIN, 0x10, 0x1234, 0x5678, "cat", "name", args, 9, 0);
	close_writer(w);
	const uint64_t want[] = {
		/* event, 16 words, duration begin, 9 args, thread 1, cat 1, name 2 */
		0x0002000101920104ull,
		0x0000000000000010ull,
		0xfffffffb00030011ull, /* int32 -5, 1 word, name 3 */
		0x0000000000030023ull, 0xffffff0000000000ull, /* int64 -2^40 */
		0x0000000700030012ull, /* uint32 7 */
		0x0000000000030024ull, 0x0000000200000000ull, /* uint64 2^33 */
		0x0000000000030025ull, 0x3ff8000000000000ull, /* double 1.5 */
		0x0000000400030016ull, /* string, value ref 4 */
		0x0000000000030027ull, 0x00000000deadbeefull, /* pointer */
		0x0000000000030028ull, 0x000000000000002aull, /* koid 42 */
		0x0000000100030019ull, /* bool true */
	};
	check_after_tables("every argument type", want, sizeof(want) / 8);
}

static void test_every_event_type(void)
{
	struct fxt_writer *w = open_with_tables();
	struct ut_arg one = { .name = "a", .kind = UT_ARG_UINT, .u = 3 };
	fxt_write_event(w, FXT_EV_INSTANT, 1, 0x1234, 0x5678, "cat", "name", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_COUNTER, 2, 0x1234, 0x5678, "cat", "name", &one, 1, 9);
	fxt_write_event(w, FXT_EV_DURATION_END, 3, 0x1234, 0x5678, "cat", "name", NULL, 0, 0);
	fxt_write_event(w, FXT_EV_DURATION_COMPLETE, 4, 0x1234, 0x5678, "cat", "name", NULL, 0, 5);
	fxt_write_event(w, FXT_EV_FLOW_BEGIN, 6, 0x1234, 0x5678, "cat", "name", NULL, 0, 77);
	fxt_write_event(w, FXT_EV_FLOW_STEP, 7, 0x1234, 0x5678, "cat", "name", NULL, 0, 77);
	fxt_write_event(w, FXT_EV_FLOW_END, 8, 0x1234, 0x5678, "cat", "name", NULL, 0, 77);
	close_writer(w);
	const uint64_t want[] = {
		0x0002000101000024ull, 0x1ull,                /* instant */
		0x0002000101110044ull, 0x2ull,                /* counter, 1 arg */
		0x0000000300030012ull, 0x9ull,                /* uint32 3; counter id 9 */
		0x0002000101030024ull, 0x3ull,                /* duration end */
		0x0002000101040034ull, 0x4ull, 0x5ull,        /* complete, end time 5 */
		0x0002000101080034ull, 0x6ull, 0x4dull,       /* flow begin, id 77 */
		0x0002000101090034ull, 0x7ull, 0x4dull,       /* flow step */
		0x00020001010a0034ull, 0x8ull, 0x4dull,       /* flow end */
	};
	check_after_tables("every event type", want, sizeof(want) / 8);
}

static void test_kernel_objects(void)
{
	struct fxt_writer *w = open_with_tables();
	struct ut_arg process = { .name = "process", .kind = UT_ARG_KOID, .u = 0x1234 };
	fxt_write_kernel_object(w, FXT_OBJ_PROCESS, 0x1234, "cat", NULL, 0);
	fxt_write_kernel_object(w, FXT_OBJ_THREAD, 0x5678, "name", &process, 1);
	close_writer(w);
	const uint64_t want[] = {
		0x0000000001010027ull, 0x1234ull,  /* kobj, 2 words, process, name 1 */
		0x0000010002020047ull, 0x5678ull,  /* kobj, 4 words, thread, name 2, 1 arg */
		0x0000000000050028ull, 0x1234ull,  /* koid arg "process" (ref 5) */
	};
	check_after_tables("kernel-object records", want, sizeof(want) / 8);
}

/* The engine's records for a flow point (an instant, then the flow record
 * Perfetto binds to it) and for counters (a value equal to its series'
 * last one is not written). */
static void test_engine_flow_points_and_counters(void)
{
	struct fxt_writer *w = open_writer();
	struct ut_engine *e = ut_engine_new(w, NULL);
	const struct ut_track thread = { .kind = UT_TRACK_THREAD, .pid = 1, .tid = 2 };
	struct ut_arg a3 = { .name = "a", .kind = UT_ARG_UINT, .u = 3 };
	struct ut_arg a4 = { .name = "a", .kind = UT_ARG_UINT, .u = 4 };
	ut_engine_process_name(e, 1, "p");
	ut_engine_thread_name(e, 1, 2, "t");
	ut_flow(e, 0x10, 1, 2, UT_FLOW_BEGIN, "req", 7, "cat", "name", &a3, 1);
	ut_flow(e, 0x20, 1, 2, UT_FLOW_END, "req", 7, "cat", "name", NULL, 0);
	ut_counter(e, 0x30, &thread, "name", &a3, 1);
	ut_counter(e, 0x40, &thread, "name", &a3, 1); /* unchanged: not written */
	ut_counter(e, 0x50, &thread, "name", &a4, 1);
	ut_engine_finish(e, 0x60);
	CHECK("engine counts the unchanged counter value", ut_engine_stats(e)->counters_unchanged == 1);
	ut_engine_free(e);
	close_writer(w);
	const uint64_t want[] = {
		0x0000000100010022ull, 0x0000000000000070ull, /* string 1 "p" */
		0x0000000001010027ull, 0x1ull,                /* kobj process 1 named "p" */
		0x0000000100020022ull, 0x0000000000000074ull, /* string 2 "t" */
		0x0000000700030022ull, 0x00737365636f7270ull, /* string 3 "process" */
		0x0000010002020047ull, 0x2ull,                /* kobj thread 2 named "t", 1 arg */
		0x0000000000030028ull, 0x1ull,                /* process: koid 1 */
		0x0000000000010033ull, 0x1ull, 0x2ull,        /* thread 1 = (1, 2) */
		0x0000000300040022ull, 0x0000000000746163ull, /* string 4 "cat" */
		0x0000000400050022ull, 0x00000000656d616eull, /* string 5 "name" */
		0x0000000100060022ull, 0x0000000000000061ull, /* string 6 "a" */
		/* instant, 3 words, 1 arg, thread 1, cat 4, name 5; uint32 a = 3 */
		0x0005000401100034ull, 0x10ull, 0x0000000300060012ull,
		0x0005000401080034ull, 0x10ull, 0x1ull,       /* flow begin, id 1 */
		0x0005000401000024ull, 0x20ull,               /* instant, no args */
		0x00050004010a0034ull, 0x20ull, 0x1ull,       /* flow end, id 1 */
		/* counter, 4 words, 1 arg, empty category; counter id = tid 2 */
		0x0005000001110044ull, 0x30ull, 0x0000000300060012ull, 0x2ull,
		0x0005000001110044ull, 0x50ull, 0x0000000400060012ull, 0x2ull,
	};
	check_words("engine: flow points as instant + flow record, unchanged counters skipped", want,
		    sizeof(want) / 8);
}

static void test_limits(void)
{
	struct fxt_writer *w = open_writer();
	/* a 5000-byte string is cut to FXT_MAX_STRING_LEN */
	char *long_string = malloc(5001);
	memset(long_string, 'x', 5000);
	long_string[5000] = 0;
	fxt_string_ref(w, long_string);
	/* 20 args: only 15 are written */
	struct ut_arg args[20];
	for (int i = 0; i < 20; i++)
		args[i] = (struct ut_arg){ .name = "", .kind = UT_ARG_BOOL, .b = false };
	fxt_write_event(w, FXT_EV_INSTANT, 1, 1, 1, "", "", args, 20, 0);
	close_writer(w);
	size_t n;
	uint64_t *got = load_words(&n);
	CHECK("long string record: header says 4096 bytes in 513 words",
	      n > 6 && got[6] == (0x0000100000012002ull | 513ull << 4));
	size_t ev = 6 + 513 + 3;
	CHECK("event with 20 args keeps 15 (17 words)",
	      n == ev + 17 && got[ev] == 0x0000000001f00114ull);
	free(long_string);
}

int main(void)
{
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	close(fd);
	test_preamble();
	test_string_and_thread_records();
	test_strings_by_address();
	test_stable_strings();
	test_every_argument_type();
	test_every_event_type();
	test_kernel_objects();
	test_engine_flow_points_and_counters();
	test_limits();
	unlink(path);
	CHECK_DONE();
}
