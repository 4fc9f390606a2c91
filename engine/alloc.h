/* Allocation that never returns NULL: running out of memory while tracing
 * is not something the engine can recover from meaningfully. */
#ifndef UT_ENGINE_ALLOC_H
#define UT_ENGINE_ALLOC_H
#include <stdio.h>
#include <stdlib.h>

static inline void *ut_xalloc_check(void *p)
{
	if (!p) {
		fputs("uring-trace: out of memory\n", stderr);
		abort();
	}
	return p;
}

static inline void *ut_xcalloc(size_t n, size_t size)
{
	return ut_xalloc_check(calloc(n ? n : 1, size ? size : 1));
}

static inline void *ut_xrealloc(void *p, size_t size)
{
	return ut_xalloc_check(realloc(p, size ? size : 1));
}

/* Grows *array (of elem-sized items) to hold at least need items. */
static inline void ut_grow_array(void **array, size_t *capacity, size_t need, size_t elem)
{
	if (need <= *capacity)
		return;
	size_t cap = *capacity ? *capacity : 16;
	while (cap < need)
		cap *= 2;
	*array = ut_xrealloc(*array, cap * elem);
	*capacity = cap;
}

#endif
