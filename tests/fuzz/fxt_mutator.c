/* libFuzzer's custom mutator for fuzz_fxt.c: half of the mutations work on
 * whole FXT records, as a damaged or foreign trace differs from a good
 * one: records dropped, repeated, moved or cut off, and a header's or a
 * word's bits changed while the framing holds (byte mutations rarely keep
 * it, and the reader stops where the framing is lost).  The other half
 * are libFuzzer's own byte mutations. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fxt/records.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#define MAX_RECORDS 4096

static uint32_t next(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* Where each whole record starts (its words as its header says); the
 * count, at most MAX_RECORDS. */
static size_t record_starts(const uint8_t *data, size_t size, size_t *starts)
{
	size_t n = 0, at = 0;
	while (n < MAX_RECORDS && at + 8 <= size) {
		uint64_t h;
		memcpy(&h, data + at, 8);
		uint64_t words = (h & 0xf) == FXT_REC_LARGE ? h >> 4 & 0xffffffff : h >> 4 & 0xfff;
		if (!words || words > (size - at) / 8)
			break;
		starts[n++] = at;
		at += words * 8;
	}
	starts[n] = at;
	return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	static size_t starts[MAX_RECORDS + 1];
	uint32_t state = seed | 1;
	size_t n = record_starts(data, size, starts);
	if (n < 2 || next(&state) % 2)
		return LLVMFuzzerMutate(data, size, max_size);
	/* the first record is the magic: leave it, most of the time */
	size_t i = 1 + next(&state) % (n - 1), j = 1 + next(&state) % (n - 1);
	size_t at = starts[i], len = starts[i + 1] - at;
	uint64_t word;
	switch (next(&state) % 6) {
	case 0:   /* drop record i */
		memmove(data + at, data + at + len, size - at - len);
		return size - len;
	case 1:   /* repeat record i before record j */
		if (size + len > max_size)
			return size;
		memmove(data + starts[j] + len, data + starts[j], size - starts[j]);
		memmove(data + starts[j], data + (j <= i ? at + len : at), len);
		return size + len;
	case 2: {   /* move record i before record j: drop it, then insert it */
		uint8_t moved[FXT_MAX_RECORD_WORDS * 8];
		if (len > sizeof(moved))
			return size;
		memcpy(moved, data + at, len);
		memmove(data + at, data + at + len, size - at - len);
		size_t to = starts[j] > at ? starts[j] - len : starts[j];
		memmove(data + to + len, data + to, size - len - to);
		memcpy(data + to, moved, len);
		return size;
	}
	case 3:   /* the trace ends after record i */
		return starts[i + 1];
	case 4:   /* a header's other bits: type, string and thread refs, counts */
		memcpy(&word, data + at, 8);
		word ^= (uint64_t)1 << (next(&state) % 64);
		if ((word & 0xf) != FXT_REC_LARGE)
			word = (word & ~(uint64_t)0xfff0) | (uint64_t)(len / 8) << 4;
		memcpy(data + at, &word, 8);
		return size;
	default:   /* a word of the body */
		if (len < 16)
			return size;
		at += 8 * (1 + next(&state) % (len / 8 - 1));
		memcpy(&word, data + at, 8);
		word ^= (uint64_t)next(&state) << (next(&state) % 32);
		memcpy(data + at, &word, 8);
		return size;
	}
}
