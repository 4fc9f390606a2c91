/* Reading back bytes this program wrote (compiled scripts, cached
 * programs): each read is checked against what is left, and one that
 * runs past the end marks the reader bad; later reads get nothing. */
#ifndef UT_BASE_BYTES_H
#define UT_BASE_BYTES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct byte_reader {
	const unsigned char *p;
	size_t left;
	bool bad;
};

/* The next n bytes where they are; NULL when fewer are left. */
const void *byte_take(struct byte_reader *r, size_t n);
/* The next n bytes copied to out; zeros there and false when fewer are left. */
bool byte_read(struct byte_reader *r, void *out, size_t n);
uint32_t byte_u32(struct byte_reader *r);
uint64_t byte_u64(struct byte_reader *r);

#endif
