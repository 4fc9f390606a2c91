/* libFuzzer target: reading traces.  The input is a trace file (plain, or
 * gzip when it starts like one) as `uring-trace dump`, `stats` (text and
 * JSON) and `render` take it: whatever the bytes, they must end without a
 * crash, a sanitizer report, a leak or a hang.  Render's options (a window,
 * the busiest part, a width, a thread) are chosen from a hash of the input,
 * so that an input always renders the same way.  The corpus starts from
 * traces the tool wrote (tests/fuzz/corpus/fxt); fxt_mutator.c changes
 * them record by record as well as byte by byte.
 *
 * Build and run: make fuzz-fxt (tests/fuzz/fuzz.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fxt/fxt.h"
#include "tools/tools.h"
#include "tools/render.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;
static char trace_path[256];

static void remove_trace(void)
{
	unlink(trace_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	const char *tmp = getenv("TMPDIR");
	snprintf(trace_path, sizeof(trace_path), "%s/ut-fuzz-fxt-%d.fxt", tmp ? tmp : "/tmp", (int)getpid());
	atexit(remove_trace);
	return 0;
}

/* FNV-1a: the input's own choice of render options. */
static uint64_t hash(const uint8_t *data, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 0x100000001b3ull;
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(trace_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	uint64_t h = hash(data, size);
	fxt_dump(trace_path, devnull);
	fxt_stats(trace_path, devnull, h & 1);
	static const char *const only[] = {"1", "uring", ""};
	struct svg_render_options o = {.input = trace_path, .output = "/dev/null"};
	switch (h >> 1 & 7) {
	case 0:
		o.has_from = o.has_to = true;
		o.from_ms = (double)(h >> 8 & 0xff) / 100;
		o.to_ms = o.from_ms + (double)(h >> 16 & 0xff) / 50;
		break;
	case 1:
		o.busiest_ms = (double)(1 + (h >> 8 & 0xff)) / 1000;
		break;
	case 2:
		o.only = only + (h >> 8) % 3;
		o.nonly = 1;
		break;
	case 3:
		o.width = SVG_MIN_WIDTH + (unsigned)(h >> 8) % (SVG_MAX_WIDTH - SVG_MIN_WIDTH);
		break;
	default:
		break;
	}
	svg_render(&o, devnull);
	return 0;
}
