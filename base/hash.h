/* FNV-1a, 64 bits: cache keys (not security; a collision costs a wrong
 * cache hit, which a 64-bit hash of a handful of entries makes negligible). */
#ifndef UT_HASH_H
#define UT_HASH_H
#include <stddef.h>
#include <stdint.h>

#define UT_HASH_INIT 0xcbf29ce484222325ull

static inline uint64_t ut_hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
