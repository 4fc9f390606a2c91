/* Growable strings, and text escaped for C: what generates text and C
 * (the compiler, probe kinds) builds with. */
#ifndef UT_BASE_STRBUF_H
#define UT_BASE_STRBUF_H
#include <stddef.h>

/* Zero-initialised is empty; s is NULL until something is added. */
struct strbuf {
	char *s;
	size_t len, cap;
};
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_puts(struct strbuf *b, const char *s);
void sb_free(struct strbuf *b);
/* s as a C string literal body, escaped: no script text reaches C unescaped. */
void sb_c_string(struct strbuf *b, const char *s);
/* s inside a C block comment, escaped the same way: it cannot end the
 * comment (a script path holding star-slash and a newline) nor the line. */
void sb_c_comment(struct strbuf *b, const char *s);

#endif
