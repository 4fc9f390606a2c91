#include "base/alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* p, or the exit when it is NULL. */
static void *xalloc_check(void *p)
{
	if (!p) {
		fputs("uring-trace: out of memory\n", stderr);
		exit(2);
	}
	return p;
}

void *xmalloc(size_t size)
{
	return xalloc_check(malloc(size ? size : 1));
}

void *xmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return xalloc_check(p == MAP_FAILED ? NULL : p);
}

void *xcalloc(size_t n, size_t size)
{
	return xalloc_check(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t size)
{
	return xalloc_check(realloc(p, size ? size : 1));
}

void *xrealloc_array(void *p, size_t n, size_t size)
{
	return xrealloc(p, (n ? n : 1) * size);
}

char *xstrdup(const char *s)
{
	return xalloc_check(strdup(s ? s : ""));
}

char *xstrndup(const char *s, size_t n)
{
	return xalloc_check(strndup(s, n));
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	return xalloc_check(vasprintf(&s, fmt, ap) < 0 ? NULL : s);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void grow_array(void **array, size_t *capacity, size_t need, size_t elem)
{
	if (need <= *capacity)
		return;
	size_t cap = *capacity ? *capacity : 16;
	while (cap < need)
		cap *= 2;
	*array = xrealloc(*array, cap * elem);
	*capacity = cap;
}
