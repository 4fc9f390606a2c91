/* The script's maps that live in the reader (split execution: ut_map's
 * user_side): hash tables with the key and value layouts of the BPF maps
 * the compiler would have made, bounded like them, and updated with the
 * same arithmetic (bpf/records.h). */
#ifndef UT_USER_MAPS_H
#define UT_USER_MAPS_H
#include <stdbool.h>
#include <stdint.h>

#include "compiler/aggregations.h"
#include "compiler/program.h"
#include "base/hashmap.h"

/* As many entries as a BPF map of the script holds (compiler/gen.c). */
#define UT_USER_MAP_MAX_ENTRIES 65536

/* Entries are kept one after another (the summary walks them), each its
 * key then its value, both at 8-byte aligned offsets (then, in an lru
 * map, its last use).  index maps a key of up to 16 bytes to its entry; a
 * longer key's 64-bit hash to the first entry with it, entries whose keys
 * hash the same being chained. */
struct ut_user_map {
	uint32_t key_size, value_size;
	uint32_t value_offset, stride;   /* in an entry */
	uint32_t count;
	size_t capacity;                 /* entries allocated */
	unsigned char *entries;
	struct hmap index;
	uint64_t refused;                /* new keys not inserted: the map was full */
	/* The entry found or inserted last, and its index key: the next
	 * access is often to it (the same ring's or thread's count a hit
	 * after another, a value read after its add).  Entries keep their
	 * place until a delete. */
	uint32_t last;
	uint64_t last_a, last_b;
	/* lru @m: a new key past the bound pushes out an old entry
	 * (user_maps.c says which) instead of being refused */
	bool lru;
	uint64_t uses;                   /* the clock of the entries' last uses: one tick a use */
	uint64_t sampler;                /* xorshift64 state: the entries looked at for one to push out */
	uint64_t evicted;                /* entries pushed out */
};

/* lru: whether the map pushes out an entry when full (ut_map's is_lru). */
void ut_user_map_init(struct ut_user_map *m, uint32_t key_size, uint32_t value_size, bool lru);
void ut_user_map_free(struct ut_user_map *m);

/* The value of key, or NULL.  Values stay where they are until the next
 * insert or delete in the map. */
void *ut_user_map_lookup(struct ut_user_map *m, const void *key);
/* The value of key, zeroed when new; NULL when key is new and the map is
 * full (the insert fails, as in a BPF map, and is counted).  An lru map
 * pushes out an old entry instead (and counts it). */
void *ut_user_map_value(struct ut_user_map *m, const void *key);
void ut_user_map_delete(struct ut_user_map *m, const void *key);
void ut_user_map_clear(struct ut_user_map *m);
/* Every entry keeps its key, its value zeros. */
void ut_user_map_zero(struct ut_user_map *m);

static inline const void *ut_user_map_entry_key(const struct ut_user_map *m, uint32_t i)
{
	return m->entries + (size_t)i * m->stride;
}

static inline const void *ut_user_map_entry_value(const struct ut_user_map *m, uint32_t i)
{
	return m->entries + (size_t)i * m->stride + m->value_offset;
}

/* `+=` adds and returns the value after the add, or 0 when the map had
 * no room (bpf/ut.h's ut_shared_add). */
int64_t ut_user_map_add(struct ut_user_map *m, const void *key, int64_t v);
/* The aggregation agg takes v into key's slot, as its kernel helper does
 * (compiler/aggregations.c). */
void ut_user_map_take(struct ut_user_map *m, const void *key, const struct ut_agg_kind *agg, int64_t v);

/* The program's user-side maps: maps[i] is program map i (unused for a
 * BPF map). */
struct ut_user_maps {
	unsigned n;
	struct ut_user_map *maps;
};

void ut_user_maps_init(struct ut_user_maps *um, const struct ut_program *prog);
void ut_user_maps_free(struct ut_user_maps *um);

#endif
