/* Items keyed by two words, linked from the least to the most recently
 * added or touched, so that the oldest can go when there are too many
 * (the engine's open flows, spans and threads; the flight recorder's
 * kept records; the trace writer's string and thread tables).  An item
 * is `elem` bytes that begin with struct lru_link; the rest is the
 * owner's, zeroed when added.  Pointers to items stay valid until the
 * next lru_add (which may move them); an item's index does not change,
 * and the next item added takes the index of the last one removed. */
#ifndef UT_BASE_LRU_H
#define UT_BASE_LRU_H
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

struct lru_link {
	uint64_t a, b;          /* the key */
	uint32_t older, newer;
};

struct lru_set {
	struct hmap index;      /* key -> item position */
	unsigned char *items;
	size_t elem;
	uint32_t allocated, capacity;
	uint32_t free_list;     /* through `newer` */
	uint32_t oldest, newest;
	size_t count;
};

void lru_init(struct lru_set *s, size_t elem);
/* Empties s (lru_init again before reuse is not needed). */
void lru_free(struct lru_set *s);
/* Inline: the trace writer looks its strings and threads up at every
 * record that misses its caches. */
static inline void *lru_find(const struct lru_set *s, uint64_t a, uint64_t b)
{
	uint64_t *pos = hmap_find(&s->index, a, b);
	return pos ? s->items + (size_t)*pos * s->elem : NULL;
}
/* A new item, the newest, its key (a, b), the rest zeroed; the key must
 * not be in s. */
void *lru_add(struct lru_set *s, uint64_t a, uint64_t b);
void lru_remove(struct lru_set *s, void *item);
/* Marks item the most recently used (not one kept). */
void lru_touch(struct lru_set *s, void *item);
/* Keeps item for good: out of the order of use, never the oldest. */
void lru_keep(struct lru_set *s, void *item);
/* The oldest item, or the one after item; NULL past the newest. */
void *lru_oldest(const struct lru_set *s);
void *lru_newer(const struct lru_set *s, const void *item);
void *lru_newest(const struct lru_set *s);
/* An item's index (0, 1, ... as they were first added), and the item at
 * one. */
uint32_t lru_index(const struct lru_set *s, const void *item);
void *lru_at(const struct lru_set *s, uint32_t index);

#endif
