/* Growable strings; text escaped for C strings and comments. */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static void sb_grow(struct strbuf *b, size_t more)
{
	if (b->len + more + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap * 2 : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	sb_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sb_puts(struct strbuf *b, const char *s)
{
	size_t n = strlen(s);
	sb_grow(b, n);
	memcpy(b->s + b->len, s, n + 1);
	b->len += n;
}

void sb_free(struct strbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* A byte of script text in C: printable ASCII as it is (but '?': no
 * trigraphs), the rest escaped, so it ends no line. */
static void sb_c_byte(struct strbuf *b, unsigned char ch)
{
	if (ch == '\n')
		sb_puts(b, "\\n");
	else if (ch < 0x20 || ch >= 0x7f || ch == '?')
		sb_printf(b, "\\%03o", ch);   /* octal: no hex run-on */
	else
		sb_printf(b, "%c", ch);
}

void sb_c_string(struct strbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_printf(b, "\\%c", *p);
		else
			sb_c_byte(b, *p);
	}
}

void sb_c_comment(struct strbuf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '/' && ((p > (const unsigned char *)s && p[-1] == '*') || p[1] == '*'))
			sb_printf(b, "\\%03o", *p);   /* neither ends the comment nor opens one */
		else
			sb_c_byte(b, *p);
	}
}
