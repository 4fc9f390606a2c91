/* Allocation that never returns NULL: the tool cannot go on meaningfully
 * without the memory it asked for, so running out is said once, and the
 * process exits (status 2). */
#ifndef UT_BASE_ALLOC_H
#define UT_BASE_ALLOC_H
#include <stddef.h>

#include <stdarg.h>

void *xmalloc(size_t size);     /* not zeroed */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
void *xrealloc_array(void *p, size_t n, size_t size);
/* Pages of their own, zeroed (mmap): given back to the system by munmap,
 * whatever else the heap holds. */
void *xmap(size_t size);
char *xstrdup(const char *s);   /* "" for NULL */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* Grows *array (of elem-sized items) to hold at least need items. */
void grow_array(void **array, size_t *capacity, size_t need, size_t elem);

#endif
