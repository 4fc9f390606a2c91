#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* Eight bytes a step (the writer hashes every name and category of every
 * record it interns; byte-wise FNV-1a took a fifth of the engine's time),
 * each word mixed by a multiply, the whole finalised with the length. */
uint64_t hmap_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	if (i < len) { /* the last bytes, without a variable-length memcpy call */
		uint64_t w = 0;
		for (unsigned shift = 0; i < len; i++, shift += 8)
			w |= (uint64_t)p[i] << shift;
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	}
	return hmap_hash(h, len);
}

static size_t home_of(const struct hmap *m, uint64_t a, uint64_t b)
{
	return (size_t)hmap_hash(a, b) & (m->capacity - 1);
}

static void grow(struct hmap *m)
{
	struct hmap_slot *old = m->slots;
	size_t old_capacity = m->capacity;
	m->capacity = old_capacity ? old_capacity * 2 : 64;
	m->slots = xcalloc(m->capacity, sizeof(*m->slots));
	m->count = 0;
	for (size_t i = 0; i < old_capacity; i++) {
		if (old[i].used) {
			bool created;
			*hmap_insert(m, old[i].a, old[i].b, &created) = old[i].value;
		}
	}
	free(old);
}

uint64_t *hmap_insert(struct hmap *m, uint64_t a, uint64_t b, bool *created)
{
	/* keep the load under 3/4 so probe runs stay short */
	if ((m->count + 1) * 4 > m->capacity * 3)
		grow(m);
	size_t mask = m->capacity - 1;
	for (size_t i = home_of(m, a, b);; i = (i + 1) & mask) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used) {
			s->used = true;
			s->a = a;
			s->b = b;
			s->value = 0;
			m->count++;
			*created = true;
			return &s->value;
		}
		if (s->a == a && s->b == b) {
			*created = false;
			return &s->value;
		}
	}
}

bool hmap_remove(struct hmap *m, uint64_t a, uint64_t b)
{
	uint64_t *value = hmap_find(m, a, b);
	if (!value)
		return false;
	hmap_remove_found(m, value);
	return true;
}

void hmap_remove_found(struct hmap *m, uint64_t *value)
{
	size_t mask = m->capacity - 1;
	size_t hole = (size_t)((struct hmap_slot *)((char *)value - offsetof(struct hmap_slot, value)) - m->slots);
	/* backward-shift: pull later members of the probe run into the hole
	 * when the hole lies between their home and their slot */
	for (size_t i = (hole + 1) & mask;; i = (i + 1) & mask) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			break;
		size_t home = home_of(m, s->a, s->b);
		bool hole_in_run = (i > hole) ? (home <= hole || home > i) : (home <= hole && home > i);
		if (hole_in_run) {
			m->slots[hole] = *s;
			hole = i;
		}
	}
	m->slots[hole].used = false;
	m->count--;
}

void hmap_clear(struct hmap *m)
{
	if (m->capacity)
		memset(m->slots, 0, m->capacity * sizeof(*m->slots));
	m->count = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
