/* A small open-addressing hash map (linear probing, backward-shift
 * deletion) from a 128-bit key (two words) to one 64-bit value. */
#ifndef UT_ENGINE_HASHMAP_H
#define UT_ENGINE_HASHMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t a, b, value;
	bool used;
};

/* Zero-initialised is an empty map. */
struct hmap {
	struct hmap_slot *slots;
	size_t capacity; /* a power of two, or 0 */
	size_t count;
};

/* Inline, with hmap_find: every look-up of the reader's maps and of the
 * engine's names and tracks goes through them. */
static inline uint64_t hmap_hash(uint64_t a, uint64_t b)
{
	/* splitmix64-style finaliser over both words */
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* FNV-1a over len bytes, for keys that are strings. */
uint64_t hmap_hash_bytes(const void *data, size_t len);

/* Returns the value slot, or NULL.  Valid until the next insert/remove. */
static inline uint64_t *hmap_find(const struct hmap *m, uint64_t a, uint64_t b)
{
	if (!m->capacity)
		return NULL;
	size_t mask = m->capacity - 1;
	for (size_t i = (size_t)hmap_hash(a, b) & mask;; i = (i + 1) & mask) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			return NULL;
		if (s->a == a && s->b == b)
			return &s->value;
	}
}
/* Returns the value slot of key, adding it (value 0) if missing; *created
 * tells which.  Valid until the next insert/remove. */
uint64_t *hmap_insert(struct hmap *m, uint64_t a, uint64_t b, bool *created);
bool hmap_remove(struct hmap *m, uint64_t a, uint64_t b);
/* Removes the entry whose value hmap_find returned (no second search). */
void hmap_remove_found(struct hmap *m, uint64_t *value);
void hmap_clear(struct hmap *m);
void hmap_free(struct hmap *m);

#endif
