#include "base/lru.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define NONE UINT32_MAX
#define KEPT (UINT32_MAX - 1)   /* older and newer of an item kept for good */

static struct lru_link *at(const struct lru_set *s, uint32_t i)
{
	return (struct lru_link *)(s->items + (size_t)i * s->elem);
}

static uint32_t position(const struct lru_set *s, const void *item)
{
	return (uint32_t)(((const unsigned char *)item - s->items) / s->elem);
}

static void link_newest(struct lru_set *s, uint32_t i)
{
	struct lru_link *l = at(s, i);
	l->older = s->newest;
	l->newer = NONE;
	if (s->newest != NONE)
		at(s, s->newest)->newer = i;
	else
		s->oldest = i;
	s->newest = i;
}

static void unlink_item(struct lru_set *s, uint32_t i)
{
	struct lru_link *l = at(s, i);
	if (l->older == KEPT)
		return;
	if (l->older != NONE)
		at(s, l->older)->newer = l->newer;
	else
		s->oldest = l->newer;
	if (l->newer != NONE)
		at(s, l->newer)->older = l->older;
	else
		s->newest = l->older;
}

void lru_init(struct lru_set *s, size_t elem)
{
	memset(s, 0, sizeof(*s));
	s->elem = elem;
	s->free_list = s->oldest = s->newest = NONE;
}

void lru_free(struct lru_set *s)
{
	hmap_free(&s->index);
	free(s->items);
	lru_init(s, s->elem);
}

void *lru_add(struct lru_set *s, uint64_t a, uint64_t b)
{
	uint32_t i;
	if (s->free_list != NONE) {
		i = s->free_list;
		s->free_list = at(s, i)->newer;
	} else {
		if (s->allocated == s->capacity) {
			s->capacity = s->capacity ? s->capacity * 2 : 64;
			s->items = xrealloc(s->items, (size_t)s->capacity * s->elem);
		}
		i = s->allocated++;
	}
	struct lru_link *l = at(s, i);
	memset(l, 0, s->elem);
	l->a = a;
	l->b = b;
	link_newest(s, i);
	bool created;
	*hmap_insert(&s->index, a, b, &created) = i;
	s->count++;
	return l;
}

void lru_remove(struct lru_set *s, void *item)
{
	uint32_t i = position(s, item);
	struct lru_link *l = item;
	unlink_item(s, i);
	hmap_remove(&s->index, l->a, l->b);
	l->newer = s->free_list;
	s->free_list = i;
	s->count--;
}

void lru_touch(struct lru_set *s, void *item)
{
	uint32_t i = position(s, item);
	if (s->newest == i || ((struct lru_link *)item)->older == KEPT)
		return;
	unlink_item(s, i);
	link_newest(s, i);
}

void lru_keep(struct lru_set *s, void *item)
{
	struct lru_link *l = item;
	unlink_item(s, position(s, item));
	l->older = l->newer = KEPT;
}

void *lru_oldest(const struct lru_set *s)
{
	return s->oldest == NONE ? NULL : at(s, s->oldest);
}

void *lru_newer(const struct lru_set *s, const void *item)
{
	uint32_t next = ((const struct lru_link *)item)->newer;
	return next == NONE ? NULL : at(s, next);
}

void *lru_newest(const struct lru_set *s)
{
	return s->newest == NONE ? NULL : at(s, s->newest);
}

uint32_t lru_index(const struct lru_set *s, const void *item)
{
	return position(s, item);
}

void *lru_at(const struct lru_set *s, uint32_t index)
{
	return at(s, index);
}
