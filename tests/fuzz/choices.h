/* Fuzz input read as a stream of choices, for the generators of
 * fuzz_grammar.c and fuzz_decode.c: each choice takes a byte (two when it
 * is among many).  Past the end of the input every choice is 0, which the
 * generators make the shortest way to finish, so any input is complete.
 *
 * Two choices never stand in one expression (two arguments, two operands,
 * two fields of an initializer) but in statements of their own, or as a
 * ternary's condition and then a branch: C leaves the order open, and the
 * fuzzer (clang) and the replay (the build's compiler) must make the same
 * script or stream of the same input. */
#ifndef UT_FUZZ_CHOICES_H
#define UT_FUZZ_CHOICES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct choices {
	const uint8_t *data;
	size_t size, pos;
};

static inline bool choices_left(const struct choices *c)
{
	return c->pos < c->size;
}

/* A choice among n: 0 .. n - 1. */
static inline unsigned pick(struct choices *c, unsigned n)
{
	if (n <= 1 || c->pos >= c->size)
		return 0;
	unsigned v = c->data[c->pos++];
	if (n > 256 && c->pos < c->size)
		v = v << 8 | c->data[c->pos++];
	return v % n;
}

/* 1 in n; never past the end of the input. */
static inline bool rarely(struct choices *c, unsigned n)
{
	return pick(c, n) == n - 1;
}

/* The next 8 bytes as they are (zeros past the end). */
static inline uint64_t pick_u64(struct choices *c)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 8 && c->pos < c->size; i++)
		v |= (uint64_t)c->data[c->pos++] << (8 * i);
	return v;
}

#endif
