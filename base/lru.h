/* Items keyed by two words, linked from the least to the most recently
 * added or touched, so that the oldest can go when there are too many
 * (the engine's open flows, spans and threads; the flight recorder's
 * kept records).  An item is `elem` bytes that begin with struct
 * lru_link; the rest is the owner's, zeroed when added.  Pointers to
 * items stay valid until the next lru_add (which may move them). */
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
void *lru_find(const struct lru_set *s, uint64_t a, uint64_t b);
/* A new item, the newest, its key (a, b), the rest zeroed; the key must
 * not be in s. */
void *lru_add(struct lru_set *s, uint64_t a, uint64_t b);
void lru_remove(struct lru_set *s, void *item);
/* Marks item the most recently used. */
void lru_touch(struct lru_set *s, void *item);
/* The oldest item, or the one after item; NULL past the newest. */
void *lru_oldest(const struct lru_set *s);
void *lru_newer(const struct lru_set *s, const void *item);

#endif
