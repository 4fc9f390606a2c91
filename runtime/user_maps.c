#include "runtime/user_maps.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* The end of a chain of entries whose keys hash the same. */
#define NO_ENTRY UINT32_MAX

static uint32_t align8(uint32_t n) { return (n + 7) & ~7u; }

/* An lru map pushes out, when full, the least recently used of
 * LRU_SAMPLES entries taken at random, as Redis does: each entry keeps
 * its last use (a tick of the map's clock of uses), a store at each use.
 * An exact order (a list of the entries by use) would write two more
 * entries' links at each use, in other cache lines.  The entry pushed out
 * is older than 5 in 6 of the map's, on average; one used recently goes
 * only when the samples hold nothing older, which is unlikely while most
 * entries are old (the orphans that fill a bookkeeping map). */
#define LRU_SAMPLES 5

void ut_user_map_init(struct ut_user_map *m, uint32_t key_size, uint32_t value_size, bool lru)
{
	memset(m, 0, sizeof(*m));
	m->key_size = key_size;
	m->value_size = value_size;
	m->value_offset = align8(key_size);
	/* the chain's next entry in the last 8 bytes, an lru map's last use
	 * in the 8 before */
	m->stride = m->value_offset + align8(value_size) + (lru ? 16 : 8);
	m->last = NO_ENTRY;
	m->lru = lru;
	m->sampler = 0x9e3779b97f4a7c15ull;   /* any but 0: the same samples each run */
}

void ut_user_map_free(struct ut_user_map *m)
{
	free(m->entries);
	hmap_free(&m->index);
	memset(m, 0, sizeof(*m));
}

static unsigned char *entry(const struct ut_user_map *m, uint32_t i)
{
	return m->entries + (size_t)i * m->stride;
}

static uint32_t *next_of(const struct ut_user_map *m, uint32_t i)
{
	return (uint32_t *)(entry(m, i) + m->stride - 8);
}

static uint64_t *last_use_of(const struct ut_user_map *m, uint32_t i)
{
	return (uint64_t *)(entry(m, i) + m->stride - 16);
}

/* Keys of up to 16 bytes (most: an integer or two) are the index's key
 * itself; longer ones are found by their hash. */
static bool exact(const struct ut_user_map *m)
{
	return m->key_size <= 16;
}

struct index_key {
	uint64_t a, b;
};

/* Inline, with find: the hits' map operations go through them (the
 * compiler had made them calls of their own). */
static inline __attribute__((always_inline)) struct index_key index_key(const struct ut_user_map *m,
									  const void *key)
{
	struct index_key k = {0, 0};
	if (m->key_size == 8)   /* most keys: copies of a known size, inlined */
		memcpy(&k.a, key, 8);
	else if (m->key_size == 16)
		memcpy(&k, key, 16);
	else if (!exact(m))
		k.a = hmap_hash_bytes(key, m->key_size);
	else
		memcpy(&k, key, m->key_size);
	return k;
}

/* The entry holding key in the chain that starts at *head; NO_ENTRY. */
static uint32_t find_in_chain(const struct ut_user_map *m, const uint64_t *head, const void *key)
{
	for (uint32_t i = head ? (uint32_t)*head : NO_ENTRY; i != NO_ENTRY; i = *next_of(m, i))
		if (exact(m) || memcmp(entry(m, i), key, m->key_size) == 0)
			return i;
	return NO_ENTRY;
}

static uint64_t *index_find(const struct ut_user_map *m, struct index_key k)
{
	return hmap_find(&m->index, k.a, k.b);
}

/* Entry i was found or inserted: the next access may be to it, and in an
 * lru map it is now the most recently used. */
static void remember(struct ut_user_map *m, uint32_t i, struct index_key k)
{
	m->last = i;
	m->last_a = k.a;
	m->last_b = k.b;
	if (m->lru)
		*last_use_of(m, i) = ++m->uses;
}

/* The entry of key (its index key k), or NO_ENTRY: the last one without
 * a look-up when it is the same; a key of up to 16 bytes has no chain. */
static inline __attribute__((always_inline)) uint32_t find(const struct ut_user_map *m, const void *key,
							  struct index_key k)
{
	if (m->last != NO_ENTRY && m->last_a == k.a && m->last_b == k.b &&
	    (exact(m) || memcmp(entry(m, m->last), key, m->key_size) == 0))
		return m->last;
	const uint64_t *head = index_find(m, k);
	if (exact(m))
		return head ? (uint32_t)*head : NO_ENTRY;
	return find_in_chain(m, head, key);
}

void *ut_user_map_lookup(struct ut_user_map *m, const void *key)
{
	struct index_key k = index_key(m, key);
	uint32_t i = find(m, key, k);
	if (i == NO_ENTRY)
		return NULL;
	remember(m, i, k);   /* a write of what was read: one look-up */
	return entry(m, i) + m->value_offset;
}

/* The link that points at entry i: its chain's head in the index, or the
 * next field of the entry before it. */
static void relink(struct ut_user_map *m, uint32_t from, uint32_t to)
{
	uint64_t *head = index_find(m, index_key(m, entry(m, from)));
	if (*head == from) {
		*head = to;
		return;
	}
	uint32_t i = (uint32_t)*head;
	while (*next_of(m, i) != from)
		i = *next_of(m, i);
	*next_of(m, i) = to;
}

/* Takes entry i, in the chain that starts at *head, out of the map. */
static void remove_entry(struct ut_user_map *m, uint64_t *head, uint32_t i)
{
	m->last = NO_ENTRY;   /* the last entry moves into the hole */
	uint32_t after = *next_of(m, i);
	if (*head == i && after == NO_ENTRY)
		hmap_remove_found(&m->index, head);
	else
		relink(m, i, after);
	/* the last entry fills the hole: entries stay one after another */
	uint32_t last = --m->count;
	if (i != last) {
		relink(m, last, i);
		memcpy(entry(m, i), entry(m, last), m->stride);
	}
}

/* The least recently used of LRU_SAMPLES entries taken at random. */
static uint32_t least_recent_sampled(struct ut_user_map *m)
{
	uint32_t oldest = 0;
	uint64_t oldest_use = UINT64_MAX;
	for (unsigned s = 0; s < LRU_SAMPLES; s++) {
		m->sampler ^= m->sampler << 13;
		m->sampler ^= m->sampler >> 7;
		m->sampler ^= m->sampler << 17;
		/* the high 32 bits scaled to [0, count) */
		uint32_t i = (uint32_t)(((m->sampler >> 32) * m->count) >> 32);
		if (*last_use_of(m, i) < oldest_use) {
			oldest = i;
			oldest_use = *last_use_of(m, i);
		}
	}
	return oldest;
}

void *ut_user_map_value(struct ut_user_map *m, const void *key)
{
	struct index_key k = index_key(m, key);
	uint32_t i = find(m, key, k);
	if (i != NO_ENTRY) {
		remember(m, i, k);
		return entry(m, i) + m->value_offset;
	}
	if (m->count >= UT_USER_MAP_MAX_ENTRIES) {
		if (!m->lru) {
			m->refused++;
			return NULL;
		}
		uint32_t old = least_recent_sampled(m);
		remove_entry(m, index_find(m, index_key(m, entry(m, old))), old);
		m->evicted++;
	}
	grow_array((void **)&m->entries, &m->capacity, m->count + 1, m->stride);
	i = m->count++;
	unsigned char *e = entry(m, i);
	memset(e, 0, m->stride);
	memcpy(e, key, m->key_size);
	bool created;
	uint64_t *head = hmap_insert(&m->index, k.a, k.b, &created);
	*next_of(m, i) = created ? NO_ENTRY : (uint32_t)*head;
	*head = i;
	remember(m, i, k);
	return e + m->value_offset;
}

void ut_user_map_delete(struct ut_user_map *m, const void *key)
{
	uint64_t *head = index_find(m, index_key(m, key));
	uint32_t i = find_in_chain(m, head, key);
	if (i != NO_ENTRY)
		remove_entry(m, head, i);
}

void ut_user_map_clear(struct ut_user_map *m)
{
	hmap_clear(&m->index);
	m->count = 0;
	m->last = NO_ENTRY;
}

void ut_user_map_zero(struct ut_user_map *m)
{
	for (uint32_t i = 0; i < m->count; i++)
		memset(m->entries + (size_t)i * m->stride + m->value_offset, 0, m->value_size);
}

int64_t ut_user_map_add(struct ut_user_map *m, const void *key, int64_t v)
{
	int64_t *p = ut_user_map_value(m, key);
	if (!p)
		return 0;
	*p = (int64_t)((uint64_t)*p + (uint64_t)v);
	return *p;
}

void ut_user_map_take(struct ut_user_map *m, const void *key, const struct ut_agg_kind *agg, int64_t v)
{
	void *slot = ut_user_map_value(m, key);
	if (slot)
		agg->take(slot, v);
}

void ut_user_maps_init(struct ut_user_maps *um, const struct ut_program *prog)
{
	um->n = prog->nmaps;
	um->maps = xcalloc(prog->nmaps, sizeof(*um->maps));
	for (unsigned i = 0; i < prog->nmaps; i++)
		if (prog->maps[i].user_side)
			ut_user_map_init(&um->maps[i], prog->maps[i].key_size, prog->maps[i].value_size,
					 prog->maps[i].is_lru);
}

void ut_user_maps_free(struct ut_user_maps *um)
{
	for (unsigned i = 0; i < um->n; i++)
		ut_user_map_free(&um->maps[i]);
	free(um->maps);
	memset(um, 0, sizeof(*um));
}
