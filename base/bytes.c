#include "base/bytes.h"

#include <string.h>

const void *byte_take(struct byte_reader *r, size_t n)
{
	if (r->bad || n > r->left) {
		r->bad = true;
		return NULL;
	}
	const void *at = r->p;
	r->p += n;
	r->left -= n;
	return at;
}

bool byte_read(struct byte_reader *r, void *out, size_t n)
{
	const void *at = byte_take(r, n);
	if (at)
		memcpy(out, at, n);
	else
		memset(out, 0, n);
	return at != NULL;
}

uint32_t byte_u32(struct byte_reader *r)
{
	uint32_t v;
	byte_read(r, &v, sizeof(v));
	return v;
}

uint64_t byte_u64(struct byte_reader *r)
{
	uint64_t v;
	byte_read(r, &v, sizeof(v));
	return v;
}
