/* JSON text: one way to write a string. */
#ifndef UT_BASE_JSON_H
#define UT_BASE_JSON_H
#include <stdio.h>

/* s as a JSON string with its quotes; control bytes and DEL escaped,
 * other bytes as they are (UTF-8 passes through). */
void ut_json_string(FILE *out, const char *s);

#endif
